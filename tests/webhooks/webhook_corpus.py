# ruff: noqa: RUF001  (exact messages are data; the odd characters are the point)
"""The admission corpus: objects of every validated kind with the exact verdict expected.

Each Case names the cluster view it is judged against:
* `none`    no view of the cluster (the CLI without --cluster-state): cluster checks skipped;
* `empty`   a cluster with no HyperNode, no ClusterNetworkTopology, no pods;
* `cluster` the small cluster of CLUSTER_OBJECTS below.
`errors` and `warnings` are the exact texts, in order.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from translations.errors import render_value

A = "gang.scheduling.koordinator.sh/"
ANN = "metadata.annotations"
SPEC = f"{ANN}[{A}network-topology-spec]"
INDEX = f"{ANN}[{A}network-topology-index]"
GROUPS = f"{ANN}[{A}groups]"
DNS = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
FORBID_BOTH = "Forbidden: must not specify 'highestTierAllowed' and 'highestTierName' simultaneously"
MODES = 'supported values: "hard", "soft"'
STRATEGIES = 'supported values: "MustGather", "PreferGather"'
LAYERS = '(layers: "BlockLayer", "NodeTopologyLayer", "SpineLayer")'
SG = "spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize"


@dataclass(frozen=True)
class Case:
    id: str
    obj: Any
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    state: str = "none"


# --- the cluster view --------------------------------------------------------------------


def _hypernode(
    name: str, tier: int, members: list[dict[str, Any]], tier_name: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"tier": tier, "members": members}
    if tier_name:
        spec["tierName"] = tier_name
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": spec,
    }


def _exact(kind: str, name: str) -> dict[str, Any]:
    return {"type": kind, "selector": {"exactMatch": {"name": name}}}


def _regex(kind: str, pattern: str) -> dict[str, Any]:
    return {"type": kind, "selector": {"regexMatch": {"pattern": pattern}}}


CLUSTER_OBJECTS: list[dict[str, Any]] = [
    _hypernode("spine-0", 2, [_exact("HyperNode", "block-0"), _exact("HyperNode", "block-1")], "spine"),
    _hypernode("block-0", 1, [_regex("Node", "^node-[0-3]$")], "block"),
    _hypernode("block-1", 1, [_regex("Node", "^node-[4-7]$")], "block"),
    _hypernode("block-2", 1, [_exact("Node", "node-8")], "block"),
    {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "ClusterNetworkTopology",
        "metadata": {"name": "default"},
        "spec": {
            "networkTopologySpec": [
                {"topologyLayer": "SpineLayer", "labelKey": ["network.topology.nvidia.com/spine"]},
                {
                    "topologyLayer": "BlockLayer",
                    "parentTopologyLayer": "SpineLayer",
                    "labelKey": ["network.topology.nvidia.com/block"],
                },
                {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
            ]
        },
    },
    *[
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"worker-{i}",
                "namespace": "default",
                "labels": {"pod-group.scheduling.sigs.k8s.io": "train"},
                "annotations": {f"{A}network-topology-index": str(i)},
            },
            "spec": {"containers": [{"name": "w"}]},
        }
        for i in range(2)
    ],
    *[
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"gpu-node-{i}"},
            "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": str(gpus)}},
        }
        for i, gpus in enumerate((8, 4))
    ],
    {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {
            "name": "infer-a",
            "namespace": "default",
            "annotations": {
                f"{A}groups": '["default/infer-a", "default/infer-b"]',
                f"{A}network-topology-spec": '{"gatherStrategy": [{"layer": "SpineLayer", "strategy": "MustGather"}]}',
            },
        },
        "spec": {"minMember": 2},
    },
]


# --- builders ------------------------------------------------------------------------------

_UNSET: Any = object()


def lws(
    nt: Any = _UNSET, *, size: Any = 4, replicas: Any = _UNSET, sub_group_policy: Any = _UNSET, **tpl: Any
) -> dict[str, Any]:
    template: dict[str, Any] = {
        "size": size,
        "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "x"}]}},
    }
    if sub_group_policy is not _UNSET:
        template["subGroupPolicy"] = sub_group_policy
    template.update(tpl)
    spec: dict[str, Any] = {"leaderWorkerTemplate": template}
    if replicas is not _UNSET:
        spec["replicas"] = replicas
    if nt is not _UNSET:
        spec["networkTopology"] = nt
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": spec,
    }


def vpg(spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": spec,
        **extra,
    }


def hn(name: str, tier: Any, members: Any, tier_name: Any = None) -> dict[str, Any]:
    return _hypernode(name, tier, members, tier_name)


def cnt(layers: Any, name: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "ClusterNetworkTopology",
        "metadata": {"name": name},
        "spec": {"networkTopologySpec": layers},
    }


SEED_LAYERS = copy.deepcopy(CLUSTER_OBJECTS[4]["spec"]["networkTopologySpec"])


def pod(annotations: Any, *, labels: Any = _UNSET, name: str = "worker-2") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "annotations": annotations}
    meta["labels"] = {"pod-group.scheduling.sigs.k8s.io": "train"} if labels is _UNSET else labels
    if meta["labels"] is None:
        del meta["labels"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"schedulerName": "koord-scheduler", "containers": [{"name": "w", "image": "busybox"}]},
    }


def spec_pod(raw: str, **kw: Any) -> dict[str, Any]:
    return pod({f"{A}network-topology-spec": raw}, **kw)


def gather(*items: dict[str, Any]) -> str:
    import json

    return json.dumps({"gatherStrategy": list(items)})


def spg(annotations: Any, spec: Any = _UNSET, name: str = "train") -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations},
    }
    obj["spec"] = {"minMember": 4} if spec is _UNSET else spec
    return obj


def xpg(annotations: Any, spec: Any = _UNSET) -> dict[str, Any]:
    obj = spg(annotations, spec)
    obj["apiVersion"] = "scheduling.x-k8s.io/v1alpha1"
    return obj


# --- LeaderWorkerSet -----------------------------------------------------------------------

NT = "spec.networkTopology"
LWS_CASES = [
    Case("lws-valid-no-topology", lws()),
    Case("lws-valid-hard-tier-2", lws({"mode": "hard", "highestTierAllowed": 2}), state="cluster"),
    Case("lws-valid-soft-tier-1", lws({"mode": "soft", "highestTierAllowed": 1}), state="cluster"),
    Case("lws-valid-tier-name", lws({"mode": "hard", "highestTierName": "block"}), state="cluster"),
    Case("lws-valid-empty-topology", lws({})),
    Case("lws-valid-mode-null", lws({"mode": None, "highestTierAllowed": 1})),
    Case("lws-valid-unknown-field-kept", lws({"mode": "hard", "tier": 2})),
    # The API server knows fields by their JSON names only; a Python name is one more unknown
    # field (pruned there), never read as a second spelling and never checked.
    Case("lws-valid-python-field-name-unknown", lws({"mode": "hard", "highest_tier_allowed": "two"})),
    Case("lws-mode-typo", lws({"mode": "hrad"}), [f'{NT}.mode: Unsupported value: "hrad": {MODES}']),
    Case("lws-mode-capitalised", lws({"mode": "Hard"}), [f'{NT}.mode: Unsupported value: "Hard": {MODES}']),
    Case("lws-mode-empty-string", lws({"mode": ""}), [f'{NT}.mode: Unsupported value: "": {MODES}']),
    Case("lws-mode-number", lws({"mode": 1}), [f"{NT}.mode: Unsupported value: 1: {MODES}"]),
    Case(
        "lws-mode-fullwidth-unicode",
        lws({"mode": "ｈａｒｄ"}),
        [f'{NT}.mode: Unsupported value: "ｈａｒｄ": {MODES}'],
    ),
    Case("lws-mode-list", lws({"mode": ["hard"]}), [f'{NT}.mode: Unsupported value: ["hard"]: {MODES}']),
    Case(
        "lws-tier-negative",
        lws({"highestTierAllowed": -1}),
        [f"{NT}.highestTierAllowed: Invalid value: -1: must be greater than or equal to 0"],
    ),
    Case(
        "lws-tier-very-negative",
        lws({"highestTierAllowed": -(2**70)}),
        [
            f"{NT}.highestTierAllowed: Invalid value: -1180591620717411303424: must be greater than or equal to 0"
        ],
    ),
    Case(
        "lws-tier-string",
        lws({"highestTierAllowed": "2"}),
        [f'{NT}.highestTierAllowed: Invalid value: "2": must be of type integer'],
    ),
    Case(
        "lws-tier-float",
        lws({"highestTierAllowed": 1.5}),
        [f"{NT}.highestTierAllowed: Invalid value: 1.5: must be of type integer"],
    ),
    Case(
        "lws-tier-integral-float",
        lws({"highestTierAllowed": 2.0}),
        [f"{NT}.highestTierAllowed: Invalid value: 2: must be of type integer"],
    ),
    Case(
        "lws-tier-bool",
        lws({"highestTierAllowed": True}),
        [f"{NT}.highestTierAllowed: Invalid value: true: must be of type integer"],
    ),
    Case("lws-tier-null", lws({"highestTierAllowed": None})),
    Case(
        "lws-tier-beyond-int64",
        lws({"highestTierAllowed": 2**63}),
        [
            f"{NT}.highestTierAllowed: Invalid value: 9223372036854775808: must be less than or equal to 9223372036854775807"
        ],
    ),
    Case(
        "lws-tier-huge-but-int64",
        lws({"highestTierAllowed": 2**62}),
        state="cluster",
        warnings=[
            f"{NT}.highestTierAllowed: 4611686018427387904 is above the highest HyperNode tier in the cluster (2)"
        ],
    ),
    Case(
        "lws-tier-zero",
        lws({"mode": "hard", "highestTierAllowed": 0}),
        warnings=[f"{NT}.highestTierAllowed: 0 confines every pod of the gang to a single node"],
    ),
    Case(
        "lws-tier-zero-soft-with-cluster",
        lws({"mode": "soft", "highestTierAllowed": 0}),
        state="cluster",
        warnings=[f"{NT}.highestTierAllowed: 0 confines every pod of the gang to a single node"],
    ),
    Case(
        "lws-tier-above-cluster",
        lws({"mode": "hard", "highestTierAllowed": 3}),
        state="cluster",
        warnings=[f"{NT}.highestTierAllowed: 3 is above the highest HyperNode tier in the cluster (2)"],
    ),
    Case(
        "lws-tier-no-hypernodes",
        lws({"highestTierAllowed": 1}),
        state="empty",
        warnings=[f"{NT}.highestTierAllowed: no HyperNode exists yet, so no tier-1 domain can hold the gang"],
    ),
    Case("lws-tier-unknown-cluster-no-warning", lws({"highestTierAllowed": 7})),
    Case(
        "lws-tier-and-name",
        lws({"highestTierAllowed": 1, "highestTierName": "block"}),
        [f"{NT}: {FORBID_BOTH}"],
    ),
    Case(
        "lws-tier-zero-and-name",
        lws({"highestTierAllowed": 0, "highestTierName": "block"}),
        [f"{NT}: {FORBID_BOTH}"],
        state="cluster",
    ),
    Case(
        "lws-tier-name-unknown",
        lws({"highestTierName": "blok"}),
        state="cluster",
        warnings=[f'{NT}.highestTierName: "blok" matches no HyperNode tierName (known: "block", "spine")'],
    ),
    Case(
        "lws-tier-name-no-hypernodes",
        lws({"highestTierName": "block"}),
        state="empty",
        warnings=[
            f'{NT}.highestTierName: "block" matches no HyperNode tierName (no HyperNode has a tierName)'
        ],
    ),
    Case(
        "lws-tier-name-unicode",
        lws({"highestTierName": "ブロック"}),
        state="cluster",
        warnings=[
            f'{NT}.highestTierName: "ブロック" matches no HyperNode tierName (known: "block", "spine")'
        ],
    ),
    Case(
        "lws-tier-name-control-chars",
        lws({"highestTierName": "blo\nck\x00"}),
        state="cluster",
        warnings=[
            f'{NT}.highestTierName: "blo\\nck\\x00" matches no HyperNode tierName (known: "block", "spine")'
        ],
    ),
    Case(
        "lws-tier-name-too-long",
        lws({"highestTierName": "b" * 300}),
        [f"{NT}.highestTierName: Too long: may not be more than 253 characters"],
    ),
    Case(
        "lws-tier-name-number",
        lws({"highestTierName": 5}),
        [f"{NT}.highestTierName: Invalid value: 5: must be of type string"],
    ),
    Case("lws-topology-string", lws("hard"), [f'{NT}: Invalid value: "hard": must be of type object']),
    Case("lws-topology-list", lws([]), [f"{NT}: Invalid value: []: must be of type object"]),
    Case(
        "lws-size-zero",
        lws(size=0),
        ["spec.leaderWorkerTemplate.size: Invalid value: 0: must be greater than or equal to 1"],
    ),
    Case(
        "lws-size-negative",
        lws(size=-3),
        ["spec.leaderWorkerTemplate.size: Invalid value: -3: must be greater than or equal to 1"],
    ),
    Case(
        "lws-size-string",
        lws(size="4"),
        ['spec.leaderWorkerTemplate.size: Invalid value: "4": must be of type integer'],
    ),
    Case(
        "lws-size-beyond-int32",
        lws(size=2**31),
        [
            "spec.leaderWorkerTemplate.size: Invalid value: 2147483648: must be less than or equal to 2147483647"
        ],
    ),
    Case("lws-size-null-defaults-to-1", lws(size=None)),
    Case(
        "lws-replicas-negative",
        lws(replicas=-1),
        ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
    ),
    Case(
        "lws-replicas-beyond-int32",
        lws(replicas=2**31),
        ["spec.replicas: Invalid value: 2147483648: must be less than or equal to 2147483647"],
    ),
    Case(
        "lws-replicas-times-size-overflow",
        lws(replicas=1_000_000, size=4000),
        [
            "spec.replicas: Invalid value: 1000000: the product of replicas and size must not exceed 2147483647"
        ],
    ),
    Case("lws-subgroup-valid", lws(sub_group_policy={"subGroupSize": 2})),
    Case("lws-subgroup-divides-size-minus-1", lws(size=5, sub_group_policy={"subGroupSize": 2})),
    Case(
        "lws-subgroup-divides-neither",
        lws(size=8, sub_group_policy={"subGroupSize": 3}),
        [f"{SG}: Invalid value: 3: size (8) or size-1 (7) must be divisible by subGroupSize"],
    ),
    Case(
        "lws-subgroup-larger-than-size",
        lws(size=4, sub_group_policy={"subGroupSize": 5}),
        [f"{SG}: Invalid value: 5: must not be larger than size (4)"],
    ),
    Case(
        "lws-subgroup-zero",
        lws(sub_group_policy={"subGroupSize": 0}),
        [f"{SG}: Invalid value: 0: must be greater than or equal to 1"],
    ),
    Case(
        "lws-subgroup-size-missing",
        lws(sub_group_policy={}),
        [f"{SG}: Required value: must be set when subGroupPolicy is given"],
    ),
    Case(
        "lws-subgroup-leader-excluded-valid",
        lws(size=5, sub_group_policy={"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"}),
    ),
    Case(
        "lws-subgroup-leader-excluded-invalid",
        lws(size=4, sub_group_policy={"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"}),
        [f"{SG}: Invalid value: 2: size-1 (3) must be divisible by subGroupSize with LeaderExcluded"],
    ),
    Case(
        "lws-subgroup-type-typo",
        lws(sub_group_policy={"subGroupSize": 2, "subGroupPolicyType": "LeaderOnly"}),
        [
            'spec.leaderWorkerTemplate.subGroupPolicy.subGroupPolicyType: Unsupported value: "LeaderOnly": '
            'supported values: "LeaderWorker", "LeaderExcluded"'
        ],
    ),
    Case(
        "lws-restart-policy-typo",
        lws(restartPolicy="Always"),
        [
            'spec.leaderWorkerTemplate.restartPolicy: Unsupported value: "Always": supported values: "Default", '
            '"RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"'
        ],
    ),
    Case(
        "lws-template-missing",
        {**lws(), "spec": {"replicas": 1}},
        ["spec.leaderWorkerTemplate: Required value"],
    ),
    Case(
        "lws-worker-template-missing",
        lws(workerTemplate=None),
        ["spec.leaderWorkerTemplate.workerTemplate: Invalid value: null: must be of type object"],
    ),
    Case(
        "lws-spec-missing",
        {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": {"name": "x"}},
        ["spec: Required value"],
    ),
    Case(
        "lws-not-an-object",
        "LeaderWorkerSet",
        ['<root>: Invalid value: "LeaderWorkerSet": must be of type object'],
    ),
    Case(
        "lws-metadata-name-number",
        {**lws(), "metadata": {"name": 5}},
        ["metadata.name: Invalid value: 5: must be of type string"],
    ),
    Case(
        "lws-several-problems",
        lws({"mode": "hrad"}, size="x"),
        [
            'spec.leaderWorkerTemplate.size: Invalid value: "x": must be of type integer',
            f'{NT}.mode: Unsupported value: "hrad": {MODES}',
        ],
    ),
    Case(
        "lws-container-quantity-wrong-type",
        lws(
            workerTemplate={"spec": {"containers": [{"name": "w", "resources": {"requests": {"cpu": [1]}}}]}}
        ),
        [
            "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.requests[cpu]: "
            "Invalid value: [1]: must be of type integer, number or string"
        ],
    ),
]

VA = "volcano.sh/network-topology-"
SA = "topobridge.io/subgroup-network-topology-"


def annotated(obj: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["annotations"] = annotations
    return out


LWS_ANNOTATION_CASES = [
    Case("lws-annotations-valid", annotated(lws(), {f"{VA}mode": "soft", f"{VA}highest-tier": "2"})),
    Case(
        "lws-annotation-mode-typo",
        annotated(lws(), {f"{VA}mode": "hrad"}),
        [f'{ANN}[{VA}mode]: Unsupported value: "hrad": {MODES}'],
    ),
    Case(
        "lws-annotation-tier-word",
        annotated(lws(), {f"{VA}highest-tier": "two"}),
        [f'{ANN}[{VA}highest-tier]: Invalid value: "two": must be a non-negative decimal integer'],
    ),
    Case(
        "lws-annotation-subgroup-mode-typo",
        annotated(lws(sub_group_policy={"subGroupSize": 2}), {f"{SA}mode": "sofft"}),
        [f'{ANN}[{SA}mode]: Unsupported value: "sofft": {MODES}'],
    ),
    Case(
        "lws-annotation-subgroup-without-subgroups",
        annotated(lws(), {f"{SA}highest-tier": "1"}),
        [
            f'{ANN}[{SA}highest-tier]: Invalid value: "1": a subgroup topology needs '
            "spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize"
        ],
    ),
    Case(
        "lws-annotation-subgroup-wider-than-group",
        annotated(
            lws({"highestTierAllowed": 1}, size=5, sub_group_policy={"subGroupSize": 2}),
            {f"{SA}highest-tier": "2"},
        ),
        [
            f'{ANN}[{SA}highest-tier]: Invalid value: "2": a subgroup may not span a wider tier than its group (1)'
        ],
    ),
    Case(
        "lws-annotation-queue-invalid",
        annotated(lws(), {"scheduling.volcano.sh/queue-name": "Not_A_Queue"}),
        [f'{ANN}[scheduling.volcano.sh/queue-name]: Invalid value: "Not_A_Queue": {DNS}'],
    ),
    Case(
        "lws-annotation-and-structural-problems-at-once",
        annotated(lws(size="x"), {f"{VA}mode": "hrad", f"{SA}mode": "sofft"}),
        [
            'spec.leaderWorkerTemplate.size: Invalid value: "x": must be of type integer',
            f'{ANN}[{VA}mode]: Unsupported value: "hrad": {MODES}',
            f'{ANN}[{SA}mode]: Unsupported value: "sofft": {MODES}',
        ],
    ),
    Case(
        "lws-several-semantic-problems-at-once",
        annotated(
            lws(
                {"highestTierAllowed": 1, "highestTierName": "block"},
                size=8,
                sub_group_policy={"subGroupSize": 3},
            ),
            {f"{VA}highest-tier": "two"},
        ),
        [
            f"{SG}: Invalid value: 3: size (8) or size-1 (7) must be divisible by subGroupSize",
            f"{NT}: {FORBID_BOTH}",
            f'{ANN}[{VA}highest-tier]: Invalid value: "two": must be a non-negative decimal integer',
        ],
    ),
    Case(
        "lws-template-quantity-malformed",
        lws(
            workerTemplate={
                "spec": {"containers": [{"name": "w", "resources": {"requests": {"cpu": "lots"}}}]}
            }
        ),
        [
            "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.requests[cpu]: "
            'Invalid value: "lots": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        ],
    ),
]

# --- Volcano PodGroup ----------------------------------------------------------------------

SUB = "spec.subGroupPolicy"
VPG_CASES = [
    Case("vpg-valid-empty-spec", vpg({})),
    Case(
        "vpg-valid-full",
        vpg(
            {
                "minMember": 4,
                "queue": "default",
                "minResources": {"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": 8},
                "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
                "subGroupPolicy": [
                    {
                        "name": "sg",
                        "subGroupSize": 2,
                        "matchLabelKeys": ["rank-group"],
                        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                    }
                ],
            }
        ),
        state="cluster",
    ),
    Case("vpg-valid-number-quantities", vpg({"minResources": {"cpu": 2, "memory": 1.5e9}})),
    Case(
        "vpg-valid-python-field-name-unknown", vpg({"min_member": "two", "networkTopology": {"mode": "soft"}})
    ),
    Case(
        "vpg-mode-typo",
        vpg({"networkTopology": {"mode": "sfot"}}),
        [f'{NT}.mode: Unsupported value: "sfot": {MODES}'],
    ),
    Case(
        "vpg-tier-negative",
        vpg({"networkTopology": {"highestTierAllowed": -2}}),
        [f"{NT}.highestTierAllowed: Invalid value: -2: must be greater than or equal to 0"],
    ),
    Case(
        "vpg-tier-and-name",
        vpg({"networkTopology": {"highestTierAllowed": 2, "highestTierName": "spine"}}),
        [f"{NT}: {FORBID_BOTH}"],
    ),
    Case(
        "vpg-subgroup-tier-and-name",
        vpg(
            {
                "subGroupPolicy": [
                    {"name": "a", "networkTopology": {"highestTierAllowed": 1, "highestTierName": "block"}}
                ]
            }
        ),
        [f"{SUB}[0].networkTopology: {FORBID_BOTH}"],
    ),
    Case(
        "vpg-subgroup-wider-than-job",
        vpg(
            {
                "networkTopology": {"highestTierAllowed": 1},
                "subGroupPolicy": [{"networkTopology": {"highestTierAllowed": 2}}],
            }
        ),
        [
            f"{SUB}[0].networkTopology.highestTierAllowed: Invalid value: 2: must be less than or equal to the job's tier "
            "(spec.networkTopology: 1)"
        ],
    ),
    Case(
        # Volcano's allocate places it (TestAllocateWithPartitionPolicyNetworkTopology): a soft
        # job's tier caps nothing.
        "vpg-soft-job-hard-subgroup-wider",
        vpg(
            {
                "networkTopology": {"mode": "soft", "highestTierAllowed": 0},
                "subGroupPolicy": [
                    {"name": "task1", "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
                ],
            }
        ),
        warnings=[f"{NT}.highestTierAllowed: 0 confines every pod of the gang to a single node"],
    ),
    Case(
        "vpg-subgroup-as-wide-as-job",
        vpg(
            {
                "networkTopology": {"highestTierAllowed": 2},
                "subGroupPolicy": [{"networkTopology": {"highestTierAllowed": 2}}],
            }
        ),
    ),
    Case(
        "vpg-subgroup-tier-name-wider-than-job",
        vpg(
            {
                "networkTopology": {"highestTierAllowed": 1},
                "subGroupPolicy": [{"networkTopology": {"highestTierName": "spine"}}],
            }
        ),
        state="cluster",
        errors=[
            f'{SUB}[0].networkTopology.highestTierName: Invalid value: "spine": names tier 2, above the job\'s tier '
            "(spec.networkTopology: 1)"
        ],
    ),
    Case(
        "vpg-subgroup-tier-name-unresolvable-offline",
        vpg(
            {
                "networkTopology": {"highestTierAllowed": 1},
                "subGroupPolicy": [{"networkTopology": {"highestTierName": "spine"}}],
            }
        ),
    ),
    Case(
        "vpg-job-tier-name-subgroup-tier",
        vpg(
            {
                "networkTopology": {"highestTierName": "block"},
                "subGroupPolicy": [{"networkTopology": {"highestTierAllowed": 2}}],
            }
        ),
        state="cluster",
        errors=[
            f"{SUB}[0].networkTopology.highestTierAllowed: Invalid value: 2: must be less than or equal to the "
            "job's tier (spec.networkTopology: 1)"
        ],
    ),
    Case(
        "vpg-min-member-negative",
        vpg({"minMember": -1}),
        ["spec.minMember: Invalid value: -1: must be greater than or equal to 0"],
    ),
    Case(
        "vpg-min-member-beyond-int32",
        vpg({"minMember": 2**31}),
        ["spec.minMember: Invalid value: 2147483648: must be less than or equal to 2147483647"],
    ),
    Case(
        "vpg-min-member-string",
        vpg({"minMember": "4"}),
        ['spec.minMember: Invalid value: "4": must be of type integer'],
    ),
    Case(
        "vpg-min-resources-not-a-quantity",
        vpg({"minResources": {"cpu": "eight"}}),
        [
            'spec.minResources[cpu]: Invalid value: "eight": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        ],
    ),
    Case(
        "vpg-min-resources-negative",
        vpg({"minResources": {"memory": "-1Gi"}}),
        ['spec.minResources[memory]: Invalid value: "-1Gi": must be greater than or equal to 0'],
    ),
    Case(
        "vpg-min-resources-empty-string",
        vpg({"minResources": {"cpu": ""}}),
        [
            'spec.minResources[cpu]: Invalid value: "": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        ],
    ),
    Case(
        "vpg-min-resources-list",
        vpg({"minResources": {"cpu": [1]}}),
        ["spec.minResources[cpu]: Invalid value: [1]: must be of type integer, number or string"],
    ),
    Case(
        "vpg-min-resources-out-of-range",
        vpg({"minResources": {"cpu": "1e999999999"}}),
        ['spec.minResources[cpu]: Invalid value: "1e999999999": out of range'],
    ),
    Case(
        "vpg-min-resources-several",
        vpg({"minResources": {"cpu": "x", "memory": "-5"}}),
        [
            'spec.minResources[cpu]: Invalid value: "x": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            'spec.minResources[memory]: Invalid value: "-5": must be greater than or equal to 0',
        ],
    ),
    Case(
        "vpg-subgroup-size-zero",
        vpg({"subGroupPolicy": [{"subGroupSize": 0}]}),
        [f"{SUB}[0].subGroupSize: Invalid value: 0: must be greater than or equal to 1"],
    ),
    Case(
        "vpg-subgroup-min-subgroups-negative",
        vpg({"subGroupPolicy": [{"minSubGroups": -1}]}),
        [f"{SUB}[0].minSubGroups: Invalid value: -1: must be greater than or equal to 0"],
    ),
    Case(
        "vpg-subgroup-duplicate-names",
        vpg({"subGroupPolicy": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}),
        [f'{SUB}[2].name: Duplicate value: "a"'],
    ),
    Case("vpg-queue-invalid", vpg({"queue": "Team_A"}), [f'spec.queue: Invalid value: "Team_A": {DNS}']),
    Case(
        "vpg-queue-too-long",
        vpg({"queue": "q" * 254}),
        ["spec.queue: Too long: may not be more than 253 characters"],
    ),
    Case(
        "vpg-min-task-member-negative",
        vpg({"minTaskMember": {"worker": -1}}),
        ["spec.minTaskMember[worker]: Invalid value: -1: must be greater than or equal to 0"],
    ),
    Case(
        "vpg-min-task-member-string",
        vpg({"minTaskMember": {"worker": "1"}}),
        ['spec.minTaskMember[worker]: Invalid value: "1": must be of type integer'],
    ),
    Case(
        "vpg-tier-above-cluster",
        vpg({"networkTopology": {"highestTierAllowed": 4}}),
        state="cluster",
        warnings=[f"{NT}.highestTierAllowed: 4 is above the highest HyperNode tier in the cluster (2)"],
    ),
    Case(
        "vpg-tier-zero",
        vpg({"networkTopology": {"highestTierAllowed": 0}}),
        warnings=[f"{NT}.highestTierAllowed: 0 confines every pod of the gang to a single node"],
    ),
    Case(
        "vpg-subgroup-tier-zero",
        vpg({"subGroupPolicy": [{"networkTopology": {"highestTierAllowed": 0}}]}),
        warnings=[
            f"{SUB}[0].networkTopology.highestTierAllowed: 0 confines every pod of the gang to a single node"
        ],
    ),
    Case(
        "vpg-tier-name-unknown",
        vpg({"networkTopology": {"highestTierName": "rack"}}),
        state="cluster",
        warnings=[f'{NT}.highestTierName: "rack" matches no HyperNode tierName (known: "block", "spine")'],
    ),
    Case(
        "vpg-subgroup-policy-not-list",
        vpg({"subGroupPolicy": {}}),
        [f"{SUB}: Invalid value: {{}}: must be of type array"],
    ),
    Case(
        "vpg-subgroup-selector-wrong-type",
        vpg({"subGroupPolicy": [{"labelSelector": {"matchLabels": "x"}}]}),
        [f'{SUB}[0].labelSelector.matchLabels: Invalid value: "x": must be of type object'],
    ),
    Case(
        "vpg-status-phase-unknown",
        vpg({}, status={"phase": "Exploded"}),
        [
            'status.phase: Unsupported value: "Exploded": supported values: "Pending", "Running", "Unknown", '
            '"Inqueue", "Completed"'
        ],
    ),
    Case("vpg-spec-null", vpg(None), ["spec: Invalid value: null: must be of type object"]),  # type: ignore[arg-type]
]

# --- HyperNode -----------------------------------------------------------------------------

M0 = "spec.members[0].selector"
HN_CASES = [
    Case(
        "hn-regex-repeats-an-exact-member",
        hn("s0", 1, [_exact("Node", "node-0"), _regex("Node", "^node-0$")]),
        [
            'spec.members[1].selector.regexMatch.pattern: Invalid value: "^node-0$": selects Node "node-0", which '
            "spec.members[0] already selects: a member is listed once"
        ],
    ),
    Case(
        "hn-valid-regex-beside-other-exact", hn("s0", 1, [_exact("Node", "gpu-a"), _regex("Node", "^node-")])
    ),
    Case(
        "hn-valid-exact-nodes",
        hn("block-9", 1, [_exact("Node", "node-9"), _exact("Node", "node-10")], "block"),
        state="cluster",
    ),
    Case("hn-valid-regex", hn("block-9", 1, [_regex("Node", "^node-[0-9]+$")])),
    Case("hn-valid-posix-class", hn("block-9", 1, [_regex("Node", "[[:alpha:]]+-[0-9]")])),
    Case(
        "hn-valid-label-match",
        hn(
            "block-9",
            1,
            [
                {
                    "type": "Node",
                    "selector": {
                        "labelMatch": {
                            "matchLabels": {"network.topology.nvidia.com/block": "b9"},
                            "matchExpressions": [{"key": "gpu", "operator": "Exists"}],
                        }
                    },
                }
            ],
        ),
    ),
    Case(
        "hn-valid-spine-adopts-orphan",
        hn("spine-1", 2, [_exact("HyperNode", "block-2")], "spine"),
        state="cluster",
    ),
    Case("hn-valid-reapply-unchanged", CLUSTER_OBJECTS[0], state="cluster"),
    Case(
        "hn-selector-empty",
        hn("b", 1, [{"type": "Node", "selector": {}}]),
        [f"{M0}: Required value: exactly one of exactMatch, regexMatch or labelMatch"],
    ),
    Case(
        "hn-selector-missing",
        hn("b", 1, [{"type": "Node"}]),
        [f"{M0}: Required value: exactly one of exactMatch, regexMatch or labelMatch"],
    ),
    Case(
        "hn-selector-null",
        hn("b", 1, [{"type": "Node", "selector": None}]),
        [f"{M0}: Invalid value: null: must be of type object"],
    ),
    Case(
        "hn-selector-exact-and-regex",
        hn(
            "b",
            1,
            [{"type": "Node", "selector": {"exactMatch": {"name": "n"}, "regexMatch": {"pattern": "n"}}}],
        ),
        [
            f"{M0}: Forbidden: only one of exactMatch, regexMatch or labelMatch may be given, not exactMatch and regexMatch"
        ],
    ),
    Case(
        "hn-selector-all-three",
        hn(
            "b",
            1,
            [
                {
                    "type": "Node",
                    "selector": {
                        "exactMatch": {"name": "n"},
                        "regexMatch": {"pattern": "n"},
                        "labelMatch": {"matchLabels": {"a": "b"}},
                    },
                }
            ],
        ),
        [
            f"{M0}: Forbidden: only one of exactMatch, regexMatch or labelMatch may be given, not exactMatch and "
            "regexMatch and labelMatch"
        ],
    ),
    Case(
        "hn-regex-unclosed-class",
        hn("b", 1, [_regex("Node", "node-[")]),
        [
            f'{M0}.regexMatch.pattern: Invalid value: "node-[": must be a valid regular expression: missing ]: ['
        ],
    ),
    Case(
        "hn-regex-lookahead",
        hn("b", 1, [_regex("Node", "node-(?=1)")]),
        [
            f'{M0}.regexMatch.pattern: Invalid value: "node-(?=1)": must be a valid regular expression: '
            "invalid perl operator: (?="
        ],
    ),
    Case(
        "hn-regex-backreference",
        hn("b", 1, [_regex("Node", "(a)\\1")]),
        [
            f'{M0}.regexMatch.pattern: Invalid value: "(a)\\\\1": must be a valid regular expression: '
            "invalid escape sequence: \\1"
        ],
    ),
    Case("hn-regex-empty", hn("b", 1, [_regex("Node", "")]), [f"{M0}.regexMatch.pattern: Required value"]),
    Case(
        "hn-regex-not-string",
        hn("b", 1, [_regex("Node", 5)]),  # type: ignore[arg-type]
        [f"{M0}.regexMatch.pattern: Invalid value: 5: must be of type string"],
    ),
    Case(
        "hn-label-match-on-hypernode",
        hn("b", 2, [{"type": "HyperNode", "selector": {"labelMatch": {"matchLabels": {"a": "b"}}}}]),
        [f"{M0}.labelMatch: Forbidden: selects Nodes only; this member's type is HyperNode"],
    ),
    Case(
        "hn-label-operator-typo",
        hn(
            "b",
            1,
            [
                {
                    "type": "Node",
                    "selector": {
                        "labelMatch": {
                            "matchExpressions": [{"key": "a", "operator": "Equals", "values": ["b"]}]
                        }
                    },
                }
            ],
        ),
        [
            f'{M0}.labelMatch.matchExpressions[0].operator: Unsupported value: "Equals": supported values: "In", "NotIn", '
            '"Exists", "DoesNotExist"'
        ],
    ),
    Case(
        "hn-label-in-without-values",
        hn(
            "b",
            1,
            [
                {
                    "type": "Node",
                    "selector": {"labelMatch": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
                }
            ],
        ),
        [
            f"{M0}.labelMatch.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
            "'NotIn'"
        ],
    ),
    Case(
        "hn-label-exists-with-values",
        hn(
            "b",
            1,
            [
                {
                    "type": "Node",
                    "selector": {
                        "labelMatch": {
                            "matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]
                        }
                    },
                }
            ],
        ),
        [
            f"{M0}.labelMatch.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or "
            "'DoesNotExist'"
        ],
    ),
    Case(
        "hn-label-empty-selector",
        hn("b", 1, [{"type": "Node", "selector": {"labelMatch": {}}}]),
        warnings=[f"{M0}.labelMatch: an empty selector makes every node in the cluster a member"],
    ),
    Case(
        "hn-exact-name-uppercase",
        hn("b", 1, [_exact("Node", "Node-1")]),
        [f'{M0}.exactMatch.name: Invalid value: "Node-1": {DNS}'],
    ),
    Case(
        "hn-exact-name-empty",
        hn("b", 1, [_exact("Node", "")]),
        [f'{M0}.exactMatch.name: Invalid value: "": {DNS}'],
    ),
    Case(
        "hn-exact-name-unicode",
        hn("b", 1, [_exact("Node", "nöde-1")]),
        [f'{M0}.exactMatch.name: Invalid value: "nöde-1": {DNS}'],
    ),
    Case(
        "hn-exact-name-too-long",
        hn("b", 1, [_exact("Node", "n" * 254)]),
        [f"{M0}.exactMatch.name: Too long: may not be more than 253 characters"],
    ),
    Case(
        "hn-exact-name-missing",
        hn("b", 1, [{"type": "Node", "selector": {"exactMatch": {}}}]),
        [f"{M0}.exactMatch.name: Required value"],
    ),
    Case(
        "hn-tier-negative",
        hn("b", -1, [_exact("Node", "n")]),
        ["spec.tier: Invalid value: -1: must be greater than or equal to 0"],
    ),
    Case(
        "hn-tier-missing",
        {**hn("b", 1, [_exact("Node", "n")]), "spec": {"members": [_exact("Node", "n")]}},
        ["spec.tier: Required value"],
    ),
    Case(
        "hn-tier-string",
        hn("b", "1", [_exact("Node", "n")]),
        ['spec.tier: Invalid value: "1": must be of type integer'],
    ),
    Case(
        "hn-tier-beyond-int64",
        hn("b", 2**64, [_exact("Node", "n")]),
        ["spec.tier: Invalid value: 18446744073709551616: must be less than or equal to 9223372036854775807"],
    ),
    Case(
        "hn-tier-name-number",
        hn("b", 1, [_exact("Node", "n")], 7),
        ["spec.tierName: Invalid value: 7: must be of type string"],
    ),
    Case("hn-members-empty", hn("b", 1, []), ["spec.members: Required value: must have at least 1 item"]),
    Case("hn-members-missing", {**hn("b", 1, []), "spec": {"tier": 1}}, ["spec.members: Required value"]),
    Case(
        "hn-members-not-list",
        hn("b", 1, {"type": "Node"}),
        ['spec.members: Invalid value: {"type":"Node"}: must be of type array'],
    ),
    Case(
        "hn-member-type-typo",
        hn("b", 1, [{"type": "Nodes", "selector": {"exactMatch": {"name": "n"}}}]),
        ['spec.members[0].type: Unsupported value: "Nodes": supported values: "Node", "HyperNode"'],
    ),
    Case(
        "hn-member-type-missing",
        hn("b", 1, [{"selector": {"exactMatch": {"name": "n"}}}]),
        ["spec.members[0].type: Required value"],
    ),
    Case(
        "hn-own-member",
        hn("spine-9", 2, [_exact("HyperNode", "spine-9")]),
        [f'{M0}.exactMatch.name: Invalid value: "spine-9": a HyperNode cannot be its own member'],
    ),
    Case(
        "hn-tier-0-holds-hypernodes",
        hn("b", 0, [_exact("HyperNode", "x")]),
        [
            'spec.members[0].type: Invalid value: "HyperNode": a tier-0 HyperNode cannot hold HyperNodes: members sit '
            "at a lower tier"
        ],
    ),
    Case(
        "hn-duplicate-member",
        hn("b", 1, [_exact("Node", "n-1"), _exact("Node", "n-2"), _exact("Node", "n-1")]),
        ['spec.members[2].selector.exactMatch.name: Duplicate value: "n-1"'],
    ),
    Case(
        "hn-same-name-node-and-hypernode-members",
        hn("s", 2, [_exact("Node", "x-1"), _exact("HyperNode", "x-1")]),
    ),
    Case(
        "hn-second-parent",
        hn("spine-1", 2, [_exact("HyperNode", "block-0")]),
        state="cluster",
        errors=[
            f'{M0}.exactMatch.name: Invalid value: "block-0": HyperNode "block-0" already has parent "spine-0"; '
            "a HyperNode has at most one parent"
        ],
    ),
    Case(
        "hn-second-parent-by-regex",
        hn("spine-1", 2, [_regex("HyperNode", "^block-[01]$")]),
        state="cluster",
        errors=[
            f'{M0}.regexMatch.pattern: Invalid value: "^block-[01]$": HyperNode "block-0" already has parent '
            '"spine-0"; a HyperNode has at most one parent',
            f'{M0}.regexMatch.pattern: Invalid value: "^block-[01]$": HyperNode "block-1" already has parent '
            '"spine-0"; a HyperNode has at most one parent',
        ],
    ),
    Case(
        "hn-cycle",
        hn("block-0", 1, [_exact("HyperNode", "spine-0")], "block"),
        state="cluster",
        errors=[
            f'{M0}.exactMatch.name: Invalid value: "spine-0": would form a cycle: spine-0 -> block-0 -> spine-0'
        ],
    ),
    Case(
        "hn-member-not-lower",
        hn("agg-0", 1, [_exact("HyperNode", "block-2")]),
        state="cluster",
        errors=[
            f'{M0}.exactMatch.name: Invalid value: "block-2": member HyperNode "block-2" has tier 1; members '
            "must sit below tier 1"
        ],
    ),
    Case(
        "hn-parent-not-higher",
        hn("block-0", 2, [_regex("Node", "^node-[0-3]$")], "block"),
        state="cluster",
        errors=['spec.tier: Invalid value: 2: must be lower than the tier of parent HyperNode "spine-0" (2)'],
    ),
    Case(
        "hn-member-unknown",
        hn("spine-1", 2, [_exact("HyperNode", "block-7")]),
        state="cluster",
        warnings=[f'{M0}.exactMatch.name: HyperNode "block-7" does not exist (yet)'],
    ),
    Case("hn-not-an-object", ["HyperNode"], ['<root>: Invalid value: ["HyperNode"]: must be of type object']),
]

# --- ClusterNetworkTopology ----------------------------------------------------------------

L = "spec.networkTopologySpec"
CNT_CASES = [
    Case("cnt-valid-seed-example", cnt(SEED_LAYERS)),
    Case(
        "cnt-valid-cluster-layer-parent",
        cnt(
            [
                {
                    "topologyLayer": "SpineLayer",
                    "parentTopologyLayer": "ClusterTopologyLayer",
                    "labelKey": ["s"],
                },
                {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "SpineLayer"},
            ]
        ),
    ),
    Case("cnt-valid-node-layer-only", cnt([{"topologyLayer": "NodeTopologyLayer"}])),
    Case("cnt-valid-generated-name", {**cnt(SEED_LAYERS), "metadata": {"generateName": "x-"}}),
    Case(
        "cnt-name-not-default",
        cnt(SEED_LAYERS, name="prod"),
        ['metadata.name: Unsupported value: "prod": supported values: "default"'],
    ),
    Case(
        "cnt-duplicate-layer",
        cnt([*SEED_LAYERS, {"topologyLayer": "BlockLayer", "labelKey": ["b2"]}]),
        [f'{L}[3].topologyLayer: Duplicate value: "BlockLayer"'],
    ),
    Case(
        "cnt-missing-node-layer",
        cnt(SEED_LAYERS[:2]),
        [f'{L}: Required value: a layer named "NodeTopologyLayer"'],
    ),
    Case(
        "cnt-cycle",
        cnt(
            [
                {"topologyLayer": "SpineLayer", "parentTopologyLayer": "BlockLayer", "labelKey": ["s"]},
                {"topologyLayer": "BlockLayer", "parentTopologyLayer": "SpineLayer", "labelKey": ["b"]},
                {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
            ]
        ),
        [
            f'{L}[0].parentTopologyLayer: Invalid value: "BlockLayer": layers form a cycle: BlockLayer -> SpineLayer -> '
            "BlockLayer"
        ],
    ),
    Case(
        "cnt-node-layer-own-parent",
        cnt([{"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "NodeTopologyLayer"}]),
        [
            f'{L}[0].parentTopologyLayer: Invalid value: "NodeTopologyLayer": layers form a cycle: NodeTopologyLayer -> '
            "NodeTopologyLayer"
        ],
    ),
    Case(
        "cnt-orphan-layer",
        cnt([*SEED_LAYERS, {"topologyLayer": "RackLayer", "labelKey": ["r"]}]),
        [
            f'{L}[3].topologyLayer: Invalid value: "RackLayer": not on the parentTopologyLayer chain up from '
            "NodeTopologyLayer"
        ],
    ),
    Case(
        "cnt-unknown-parent",
        cnt([{"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "RackLayer"}]),
        [f'{L}[0].parentTopologyLayer: Not found: "RackLayer": no layer has this topologyLayer'],
    ),
    Case(
        "cnt-missing-label-key",
        cnt(
            [
                {"topologyLayer": "BlockLayer"},
                {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
            ]
        ),
        [f"{L}[0].labelKey: Required value: every layer above NodeTopologyLayer needs a node label key"],
    ),
    Case(
        "cnt-empty-label-key-list",
        cnt(
            [
                {"topologyLayer": "BlockLayer", "labelKey": []},
                {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
            ]
        ),
        [f"{L}[0].labelKey: Required value: every layer above NodeTopologyLayer needs a node label key"],
    ),
    Case(
        "cnt-empty-label-key-string",
        cnt(
            [
                {"topologyLayer": "BlockLayer", "labelKey": [""]},
                {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
            ]
        ),
        [f"{L}[0].labelKey[0]: Required value"],
    ),
    Case(
        "cnt-declares-cluster-layer",
        cnt(
            [
                {"topologyLayer": "ClusterTopologyLayer", "labelKey": ["c"]},
                {"topologyLayer": "NodeTopologyLayer"},
            ]
        ),
        [
            f'{L}[0].topologyLayer: Invalid value: "ClusterTopologyLayer": is the implicit root of the tree and cannot '
            "be declared"
        ],
    ),
    Case(
        "cnt-empty-layer-name",
        cnt([{"topologyLayer": "", "labelKey": ["x"]}, {"topologyLayer": "NodeTopologyLayer"}]),
        [f"{L}[0].topologyLayer: Required value"],
    ),
    Case(
        "cnt-layer-name-missing",
        cnt([{"labelKey": ["x"]}, {"topologyLayer": "NodeTopologyLayer"}]),
        [f"{L}[0].topologyLayer: Required value"],
    ),
    Case(
        "cnt-spec-missing", {**cnt([]), "spec": None}, ["spec: Invalid value: null: must be of type object"]
    ),
    Case(
        "cnt-layers-not-list",
        cnt("NodeTopologyLayer"),
        [f'{L}: Invalid value: "NodeTopologyLayer": must be of type array'],
    ),
    Case(
        "cnt-label-key-not-list",
        cnt([{"topologyLayer": "NodeTopologyLayer", "labelKey": "kubernetes.io/hostname"}]),
        [f'{L}[0].labelKey: Invalid value: "kubernetes.io/hostname": must be of type array'],
    ),
]

# --- Koordinator: Pods ----------------------------------------------------------------------

MUST_BLOCK = {"layer": "BlockLayer", "strategy": "MustGather"}
POD_CASES = [
    Case("pod-plain-no-gang", pod(None, labels=None), state="cluster"),
    Case("pod-only-other-annotations", pod({"prometheus.io/scrape": "true"})),
    Case("pod-index-valid", pod({f"{A}network-topology-index": "2"}), state="cluster"),
    Case(
        "pod-index-shared-in-gang",
        pod({f"{A}network-topology-index": "0"}),
        state="cluster",
        warnings=[f"{INDEX}: index 0 is already held by pod default/worker-0 of gang default/train"],
    ),
    Case(
        "pod-index-own-pod-reapplied",
        pod({f"{A}network-topology-index": "0"}, name="worker-0"),
        state="cluster",
    ),
    Case(
        "pod-index-other-gang",
        pod({f"{A}network-topology-index": "0"}, labels={"pod-group.scheduling.sigs.k8s.io": "eval"}),
        state="cluster",
    ),
    Case(
        "pod-index-negative",
        pod({f"{A}network-topology-index": "-1"}),
        [f'{INDEX}: Invalid value: "-1": must be a non-negative decimal integer (at most 2147483647)'],
    ),
    Case(
        "pod-index-word",
        pod({f"{A}network-topology-index": "one"}),
        [f'{INDEX}: Invalid value: "one": must be a non-negative decimal integer (at most 2147483647)'],
    ),
    Case(
        "pod-index-leading-zero",
        pod({f"{A}network-topology-index": "01"}),
        [f'{INDEX}: Invalid value: "01": must be a non-negative decimal integer (at most 2147483647)'],
    ),
    Case(
        "pod-index-beyond-int32",
        pod({f"{A}network-topology-index": "2147483648"}),
        [
            f'{INDEX}: Invalid value: "2147483648": must be a non-negative decimal integer (at most 2147483647)'
        ],
    ),
    Case("pod-index-int32-max", pod({f"{A}network-topology-index": "2147483647"})),
    Case(
        "pod-index-empty",
        pod({f"{A}network-topology-index": ""}),
        [f'{INDEX}: Invalid value: "": must be a non-negative decimal integer (at most 2147483647)'],
    ),
    Case(
        "pod-index-space",
        pod({f"{A}network-topology-index": " 1"}),
        [f'{INDEX}: Invalid value: " 1": must be a non-negative decimal integer (at most 2147483647)'],
    ),
    Case(
        "pod-index-arabic-indic-digit",
        pod({f"{A}network-topology-index": "١"}),
        [f'{INDEX}: Invalid value: "١": must be a non-negative decimal integer (at most 2147483647)'],
    ),
    Case(
        "pod-index-not-a-string",
        pod({f"{A}network-topology-index": 3}),
        [f"{INDEX}: Invalid value: 3: must be of type string"],
    ),
    Case(
        "pod-annotations-not-object", pod("gang"), [f'{ANN}: Invalid value: "gang": must be of type object']
    ),
    Case("pod-spec-valid", spec_pod(gather(MUST_BLOCK)), state="cluster"),
    Case(
        "pod-spec-valid-multiline",
        spec_pod(
            '{\n  "gatherStrategy": [\n    {"layer": "SpineLayer", '
            '"strategy": "PreferGather", "podCountMultiple": 8}\n  ]\n}\n'
        ),
        state="cluster",
    ),
    Case(
        "pod-spec-unknown-layer",
        spec_pod(gather({"layer": "RackLayer", "strategy": "MustGather"})),
        state="cluster",
        errors=[
            f'{SPEC}.gatherStrategy[0].layer: Not found: "RackLayer": no such layer in ClusterNetworkTopology '
            f'"default" {LAYERS}'
        ],
    ),
    Case(
        "pod-spec-unicode-layer",
        spec_pod(gather({"layer": "ブロック", "strategy": "MustGather"})),
        state="cluster",
        errors=[
            f'{SPEC}.gatherStrategy[0].layer: Not found: "ブロック": no such layer in ClusterNetworkTopology '
            f'"default" {LAYERS}'
        ],
    ),
    Case(
        "pod-spec-cluster-layer",
        spec_pod(gather({"layer": "ClusterTopologyLayer", "strategy": "PreferGather"})),
        state="cluster",
    ),
    Case(
        "pod-spec-no-cluster-network-topology",
        spec_pod(gather(MUST_BLOCK)),
        state="empty",
        warnings=[
            f'{SPEC}: no ClusterNetworkTopology "default" exists yet; Koordinator ignores the gather strategy '
            "until one does"
        ],
    ),
    Case(
        "pod-spec-offline-no-layer-check", spec_pod(gather({"layer": "RackLayer", "strategy": "MustGather"}))
    ),
    Case(
        "pod-spec-not-json",
        spec_pod("{gatherStrategy:"),
        [
            f'{SPEC}: Invalid value: "{{gatherStrategy:": not valid JSON: Expecting property name enclosed in double '
            "quotes (at offset 1)"
        ],
    ),
    Case(
        "pod-spec-empty-string",
        spec_pod(""),
        [f'{SPEC}: Invalid value: "": not valid JSON: Expecting value (at offset 0)'],
    ),
    Case(
        "pod-spec-trailing-garbage",
        spec_pod(gather(MUST_BLOCK) + "}"),
        [
            f'{SPEC}: Invalid value: "{{\\"gatherStrategy\\": [{{\\"layer\\": \\"BlockLayer\\", \\"strategy\\": '
            '\\"MustGather\\"}]}}": not valid JSON: Extra data (at offset 71)'
        ],
    ),
    Case("pod-spec-array", spec_pod("[]"), [f"{SPEC}: Invalid value: []: must be of type object"]),
    Case("pod-spec-null", spec_pod("null"), [f"{SPEC}: Invalid value: null: must be of type object"]),
    Case("pod-spec-empty-object", spec_pod("{}"), [f"{SPEC}.gatherStrategy: Required value"]),
    Case(
        "pod-spec-gather-object",
        spec_pod('{"gatherStrategy": {}}'),
        [f"{SPEC}.gatherStrategy: Invalid value: {{}}: must be of type array"],
    ),
    Case("pod-spec-gather-empty-list", spec_pod('{"gatherStrategy": []}')),
    Case(
        "pod-spec-strategy-typo",
        spec_pod(gather({"layer": "BlockLayer", "strategy": "MustGathr"})),
        [f'{SPEC}.gatherStrategy[0].strategy: Unsupported value: "MustGathr": {STRATEGIES}'],
    ),
    Case(
        "pod-spec-strategy-lowercase",
        spec_pod(gather({"layer": "BlockLayer", "strategy": "mustgather"})),
        [f'{SPEC}.gatherStrategy[0].strategy: Unsupported value: "mustgather": {STRATEGIES}'],
    ),
    Case(
        "pod-spec-strategy-missing",
        spec_pod(gather({"layer": "BlockLayer"})),
        [f"{SPEC}.gatherStrategy[0].strategy: Required value"],
    ),
    Case(
        "pod-spec-layer-empty",
        spec_pod(gather({"layer": "", "strategy": "MustGather"})),
        [f"{SPEC}.gatherStrategy[0].layer: Required value"],
    ),
    Case(
        "pod-spec-layer-number",
        spec_pod(gather({"layer": 5, "strategy": "MustGather"})),
        [f"{SPEC}.gatherStrategy[0].layer: Invalid value: 5: must be of type string"],
    ),
    Case(
        "pod-spec-item-not-object",
        spec_pod('{"gatherStrategy": ["BlockLayer"]}'),
        [f'{SPEC}.gatherStrategy[0]: Invalid value: "BlockLayer": must be of type object'],
    ),
    Case(
        "pod-spec-pod-count-zero",
        spec_pod(gather({**MUST_BLOCK, "podCountMultiple": 0})),
        [f"{SPEC}.gatherStrategy[0].podCountMultiple: Invalid value: 0: must be greater than or equal to 1"],
    ),
    Case(
        "pod-spec-pod-count-negative",
        spec_pod(gather({**MUST_BLOCK, "podCountMultiple": -8})),
        [f"{SPEC}.gatherStrategy[0].podCountMultiple: Invalid value: -8: must be greater than or equal to 1"],
    ),
    Case(
        "pod-spec-pod-count-fraction",
        spec_pod(gather({**MUST_BLOCK, "podCountMultiple": 2.5})),
        [f"{SPEC}.gatherStrategy[0].podCountMultiple: Invalid value: 2.5: must be of type integer"],
    ),
    Case(
        "pod-spec-pod-count-integral-float",
        spec_pod(gather({**MUST_BLOCK, "podCountMultiple": 8.0})),
        [f"{SPEC}.gatherStrategy[0].podCountMultiple: Invalid value: 8: must be of type integer"],
    ),
    Case(
        "pod-spec-pod-count-string",
        spec_pod(gather({**MUST_BLOCK, "podCountMultiple": "8"})),
        [f'{SPEC}.gatherStrategy[0].podCountMultiple: Invalid value: "8": must be of type integer'],
    ),
    Case(
        "pod-spec-pod-count-beyond-int32",
        spec_pod(gather({**MUST_BLOCK, "podCountMultiple": 2**31})),
        [
            f"{SPEC}.gatherStrategy[0].podCountMultiple: Invalid value: 2147483648: must be less than or equal to "
            "2147483647"
        ],
    ),
    Case(
        "pod-spec-pod-count-huge-exponent",
        spec_pod('{"gatherStrategy": [{"layer": "B", "strategy": "MustGather", "podCountMultiple": 1e400}]}'),
        [f"{SPEC}.gatherStrategy[0].podCountMultiple: Invalid value: +Inf: must be of type integer"],
    ),
    Case(
        "pod-spec-duplicate-layers",
        spec_pod(
            gather(
                MUST_BLOCK,
                {"layer": "SpineLayer", "strategy": "PreferGather"},
                {"layer": "BlockLayer", "strategy": "PreferGather"},
            )
        ),
        [f'{SPEC}.gatherStrategy[2].layer: Duplicate value: "BlockLayer"'],
    ),
    Case(
        "pod-spec-nan",
        spec_pod('{"gatherStrategy": NaN}'),
        [f'{SPEC}: Invalid value: "{{\\"gatherStrategy\\": NaN}}": not valid JSON: NaN is not a JSON value'],
    ),
    Case(
        "pod-spec-several-problems",
        spec_pod(
            gather({"layer": "", "strategy": "Must", "podCountMultiple": 0}, {"strategy": "MustGather"})
        ),
        [
            f"{SPEC}.gatherStrategy[0].layer: Required value",
            f"{SPEC}.gatherStrategy[0].podCountMultiple: Invalid value: 0: must be greater than or equal to 1",
            f'{SPEC}.gatherStrategy[0].strategy: Unsupported value: "Must": {STRATEGIES}',
            f"{SPEC}.gatherStrategy[1].layer: Required value",
        ],
    ),
    Case(
        "pod-gang-annotations-without-gang",
        pod({f"{A}network-topology-index": "3"}, labels=None),
        state="cluster",
        warnings=[
            f"{ANN}: the gang annotations have no effect: the pod names no gang ({A}name annotation or "
            "pod-group.scheduling.sigs.k8s.io label)"
        ],
    ),
    Case(
        "pod-gang-by-annotation",
        pod(
            {
                f"{A}name": "train",
                f"{A}min-available": "2",
                f"{A}total-number": "4",
                f"{A}mode": "Strict",
                f"{A}waiting-time": "10m",
            },
            labels=None,
        ),
        state="cluster",
    ),
    Case(
        "pod-gang-by-x-k8s-label",
        pod({f"{A}network-topology-index": "7"}, labels={"scheduling.x-k8s.io/pod-group": "train"}),
        state="cluster",
    ),
    Case(
        "pod-gang-name-uppercase",
        pod({f"{A}name": "Train"}, labels=None),
        [f'{ANN}[{A}name]: Invalid value: "Train": {DNS}'],
    ),
    Case(
        "pod-gang-name-empty",
        pod({f"{A}name": ""}, labels=None),
        [f"{ANN}[{A}name]: Required value"],
        warnings=[
            f"{ANN}: the gang annotations have no effect: the pod names no gang ({A}name annotation or "
            "pod-group.scheduling.sigs.k8s.io label)"
        ],
    ),
    Case(
        "pod-min-available-above-total",
        pod({f"{A}min-available": "5", f"{A}total-number": "4"}),
        [
            f'{ANN}[{A}total-number]: Invalid value: "4": must be greater than or equal to {A}min-available (5)'
        ],
    ),
    Case(
        "pod-min-available-word",
        pod({f"{A}min-available": "all"}),
        [
            f'{ANN}[{A}min-available]: Invalid value: "all": must be a non-negative decimal integer (at most 2147483647)'
        ],
    ),
    Case(
        "pod-total-number-huge",
        pod({f"{A}total-number": "9" * 40}),
        [
            f'{ANN}[{A}total-number]: Invalid value: "{"9" * 40}": must be a non-negative decimal integer (at most '
            "2147483647)"
        ],
    ),
    Case(
        "pod-mode-lowercase",
        pod({f"{A}mode": "strict"}),
        [f'{ANN}[{A}mode]: Unsupported value: "strict": supported values: "Strict", "NonStrict"'],
    ),
    Case(
        "pod-waiting-time-words",
        pod({f"{A}waiting-time": "5 minutes"}),
        [f'{ANN}[{A}waiting-time]: Invalid value: "5 minutes": must be a duration such as "300s" or "1h30m"'],
    ),
    Case(
        "pod-waiting-time-negative",
        pod({f"{A}waiting-time": "-5m"}),
        [f'{ANN}[{A}waiting-time]: Invalid value: "-5m": must be a duration such as "300s" or "1h30m"'],
    ),
    Case(
        "pod-waiting-time-no-unit",
        pod({f"{A}waiting-time": "300"}),
        [f'{ANN}[{A}waiting-time]: Invalid value: "300": must be a duration such as "300s" or "1h30m"'],
    ),
    Case("pod-waiting-time-compound", pod({f"{A}waiting-time": "1h30m15.5s"})),
    Case("pod-waiting-time-micro-sign", pod({f"{A}waiting-time": "1500µs"})),
    Case(
        "pod-waiting-time-overflow",
        pod({f"{A}waiting-time": "9999999999h"}),
        [f'{ANN}[{A}waiting-time]: Invalid value: "9999999999h": must be at most 2562047h47m16.854775807s'],
    ),
    Case(
        "pod-match-policy-typo",
        pod({f"{A}match-policy": "once"}),
        [
            f'{ANN}[{A}match-policy]: Unsupported value: "once": supported values: "once-satisfied", "only-waiting", '
            '"waiting-and-running"'
        ],
    ),
    Case("pod-groups-include-self", pod({f"{A}groups": '["default/train", "default/eval"]'})),
    Case(
        "pod-groups-missing-self",
        pod({f"{A}groups": '["default/eval"]'}),
        [f'{GROUPS}: Invalid value: "[\\"default/eval\\"]": must include this gang "default/train"'],
    ),
    Case(
        "pod-groups-empty-array",
        pod({f"{A}groups": "[]"}),
        [f'{GROUPS}: Invalid value: "[]": must include this gang "default/train"'],
    ),
    Case(
        "pod-groups-not-json",
        pod({f"{A}groups": "default/train"}),
        [f'{GROUPS}: Invalid value: "default/train": not valid JSON: Expecting value (at offset 0)'],
    ),
    Case(
        "pod-groups-object",
        pod({f"{A}groups": '{"a": "b"}'}),
        [
            f'{GROUPS}: Invalid value: "{{\\"a\\": \\"b\\"}}": must be a JSON array of "namespace/name" strings'
        ],
    ),
    Case(
        "pod-groups-bad-items",
        pod({f"{A}groups": '["default/train", "train", 7, "Default/X"]'}),
        [
            f'{GROUPS}[1]: Invalid value: "train": must be "namespace/name"',
            f'{GROUPS}[2]: Invalid value: 7: must be "namespace/name"',
            f'{GROUPS}[3]: Invalid value: "Default/X": must be "namespace/name"',
        ],
    ),
    Case(
        "pod-groups-duplicate",
        pod({f"{A}groups": '["default/train", "default/train"]'}),
        [f'{GROUPS}[1]: Duplicate value: "default/train"'],
    ),
    Case(
        "pod-several-annotations-wrong",
        pod({f"{A}network-topology-index": "x", f"{A}mode": "Loose"}),
        [
            f'{ANN}[{A}mode]: Unsupported value: "Loose": supported values: "Strict", "NonStrict"',
            f'{INDEX}: Invalid value: "x": must be a non-negative decimal integer (at most 2147483647)',
        ],
    ),
    Case(
        "pod-huge-annotation-value-truncated",
        spec_pod("x" * 200_000),
        [f'{SPEC}: Invalid value: "{"x" * 117}...": not valid JSON: Expecting value (at offset 0)'],
    ),
]

# --- Koordinator: PodGroups -----------------------------------------------------------------

SEED_SPEC = gather(
    {"layer": "BlockLayer", "strategy": "PreferGather"}, {"layer": "SpineLayer", "strategy": "PreferGather"}
)
PODGROUP_CASES = [
    Case(
        "sigs-pg-valid-seed-example",
        spg({f"{A}network-topology-spec": SEED_SPEC}, {"minMember": 4, "scheduleTimeoutSeconds": 300}),
        state="cluster",
    ),
    Case(
        "sigs-pg-valid-gang-group",
        spg(
            {
                f"{A}groups": '["default/train", "default/eval"]',
                f"{A}network-topology-spec": gather({"layer": "SpineLayer", "strategy": "MustGather"}),
            }
        ),
        state="cluster",
    ),
    Case(
        "sigs-pg-gang-group-spec-differs",
        spg(
            {
                f"{A}groups": '["default/infer-a", "default/infer-b"]',
                f"{A}network-topology-spec": gather({"layer": "BlockLayer", "strategy": "MustGather"}),
            },
            name="infer-b",
        ),
        state="cluster",
        errors=[
            f'{SPEC}: Invalid value: "{{\\"gatherStrategy\\":[{{\\"layer\\":\\"BlockLayer\\",\\"strategy\\":'
            f'\\"MustGather\\"}}]}}": differs from {{"gatherStrategy":[{{"layer":"SpineLayer","strategy":"MustGather"}}]}} '
            "on GangGroup member default/infer-a; every member of a GangGroup must carry the same network-topology-spec"
        ],
    ),
    Case(
        "pod-gang-group-spec-differs",
        pod(
            {
                f"{A}name": "infer-b",
                f"{A}min-available": "2",
                f"{A}groups": '["default/infer-a", "default/infer-b"]',
            },
            labels=None,
        ),
        state="cluster",
        errors=[
            f'{SPEC}: Invalid value: "none": differs from '
            '{"gatherStrategy":[{"layer":"SpineLayer","strategy":"MustGather"}]} on GangGroup member default/infer-a; '
            "every member of a GangGroup must carry the same network-topology-spec"
        ],
    ),
    Case(
        "sigs-pg-gang-group-same-spec",
        spg(
            {
                f"{A}groups": '["default/infer-a", "default/infer-b"]',
                f"{A}network-topology-spec": gather({"layer": "SpineLayer", "strategy": "MustGather"}),
            },
            name="infer-b",
        ),
        state="cluster",
    ),
    Case(
        "sigs-pg-groups-missing-self",
        spg({f"{A}groups": '["default/llm-master"]'}),
        [f'{GROUPS}: Invalid value: "[\\"default/llm-master\\"]": must include this gang "default/train"'],
    ),
    Case(
        "sigs-pg-unknown-layer",
        spg({f"{A}network-topology-spec": gather({"layer": "Rack", "strategy": "MustGather"})}),
        state="cluster",
        errors=[
            f'{SPEC}.gatherStrategy[0].layer: Not found: "Rack": no such layer in ClusterNetworkTopology "default" '
            f"{LAYERS}"
        ],
    ),
    Case(
        "sigs-pg-min-member-negative",
        spg(None, {"minMember": -1}),
        ["spec.minMember: Invalid value: -1: must be greater than or equal to 0"],
    ),
    Case(
        "sigs-pg-min-member-string",
        spg(None, {"minMember": "4"}),
        ['spec.minMember: Invalid value: "4": must be of type integer'],
    ),
    Case(
        "sigs-pg-timeout-negative",
        spg(None, {"scheduleTimeoutSeconds": -30}),
        ["spec.scheduleTimeoutSeconds: Invalid value: -30: must be greater than or equal to 0"],
    ),
    Case(
        "sigs-pg-timeout-beyond-int32",
        spg(None, {"scheduleTimeoutSeconds": 2**40}),
        [
            "spec.scheduleTimeoutSeconds: Invalid value: 1099511627776: must be less than or equal to 2147483647"
        ],
    ),
    Case(
        "sigs-pg-spec-bad-json",
        spg({f"{A}network-topology-spec": "{'gatherStrategy': []}"}),
        [
            f"{SPEC}: Invalid value: \"{{'gatherStrategy': []}}\": not valid JSON: Expecting property name enclosed in "
            "double quotes (at offset 1)"
        ],
    ),
    Case(
        "sigs-pg-index-on-group-checked",
        spg({f"{A}network-topology-index": "-2"}),
        [f'{INDEX}: Invalid value: "-2": must be a non-negative decimal integer (at most 2147483647)'],
    ),
    Case(
        "x-pg-valid",
        xpg({f"{A}network-topology-spec": gather(MUST_BLOCK)}, {"minMember": 2}),
        state="cluster",
    ),
    Case(
        "x-pg-min-member-zero",
        xpg(None, {"minMember": 0}),
        ["spec.minMember: Invalid value: 0: must be greater than or equal to 1"],
    ),
    Case(
        "x-pg-spec-strategy-typo",
        xpg({f"{A}network-topology-spec": gather({"layer": "BlockLayer", "strategy": "Prefer"})}),
        [f'{SPEC}.gatherStrategy[0].strategy: Unsupported value: "Prefer": {STRATEGIES}'],
    ),
    Case(
        "x-pg-no-cluster-network-topology",
        xpg({f"{A}network-topology-spec": gather(MUST_BLOCK)}),
        state="empty",
        warnings=[
            f'{SPEC}: no ClusterNetworkTopology "default" exists yet; Koordinator ignores the gather strategy '
            "until one does"
        ],
    ),
    Case(
        "x-pg-groups-not-array",
        xpg({f"{A}groups": '"default/train"'}),
        [f'{GROUPS}: Invalid value: "\\"default/train\\"": must be a JSON array of "namespace/name" strings'],
    ),
]

G = "gpu.topology/"
GJ = f"metadata.annotations[{G}"
GT = f"spec.template.metadata.annotations[{G}"
NODE_LOCAL = (
    "is honoured inside the node by the kubelet's Topology Manager and the GPU device plugin, "
    "not by topobridge's placement"
)


def job(
    annotations: Any = None, *, template: Any = None, parallelism: int = 2, gpus: int = 4
) -> dict[str, Any]:
    tmpl: dict[str, Any] = {
        "spec": {
            "containers": [{"name": "trainer", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
            "restartPolicy": "Never",
        }
    }
    if template is not None:
        tmpl["metadata"] = {"annotations": template}
    meta: dict[str, Any] = {"name": "distributed-training", "namespace": "ml"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {"parallelism": parallelism, "completions": parallelism, "template": tmpl},
    }


SEED_JOB = {
    f"{G}policy": "nvlink",
    f"{G}multi-node-policy": "pack",
    f"{G}max-nodes": "2",
    f"{G}min-gpus-per-node": "4",
}

GPU_CASES = [
    Case("gpu-job-valid-seed", job(SEED_JOB), state="cluster"),
    Case("gpu-job-valid-no-annotations", job()),
    Case(
        "gpu-job-valid-template-only",
        job(template={f"{G}multi-node-policy": "spread", f"{G}max-nodes": "2"}),
        state="cluster",
    ),
    Case(
        "gpu-job-min-bandwidth-warns",
        job({**SEED_JOB, f"{G}min-bandwidth": "100"}),
        warnings=[f"{GJ}min-bandwidth]: {NODE_LOCAL}"],
    ),
    Case(
        "gpu-job-single-numa-warns",
        job({f"{G}policy": "single-numa"}),
        warnings=[f"{GJ}policy]: {NODE_LOCAL}"],
    ),
    Case(
        "gpu-job-unknown-key-warns",
        job({f"{G}max-node": "2"}),
        warnings=[
            f"{GJ}max-node]: not a gpu.topology/ annotation topobridge knows (known: "
            '"gpu.topology/policy", "gpu.topology/min-bandwidth", "gpu.topology/require-nvlink", '
            '"gpu.topology/multi-node-policy", "gpu.topology/max-nodes", "gpu.topology/min-gpus-per-node")'
        ],
    ),
    Case(
        "gpu-job-every-problem-at-once",
        job(
            {
                f"{G}policy": "nvlnk",
                f"{G}require-nvlink": "yes",
                f"{G}multi-node-policy": "packed",
                f"{G}max-nodes": "0",
                f"{G}min-gpus-per-node": "-4",
                f"{G}min-bandwidth": "1.5",
            }
        ),
        [
            f'{GJ}policy]: Unsupported value: "nvlnk": supported values: "nvlink", "single-numa", '
            '"best-effort", "spread"',
            f'{GJ}min-bandwidth]: Invalid value: "1.5": must be a decimal integer from 1 to 2147483647',
            f'{GJ}require-nvlink]: Unsupported value: "yes": supported values: "true", "false"',
            f'{GJ}multi-node-policy]: Unsupported value: "packed": supported values: "pack", "spread", '
            '"best-fit"',
            f'{GJ}max-nodes]: Invalid value: "0": must be a decimal integer from 1 to 2147483647',
            f'{GJ}min-gpus-per-node]: Invalid value: "-4": must be a decimal integer from 1 to 2147483647',
        ],
    ),
    Case(
        "gpu-job-template-disagrees",
        job({f"{G}max-nodes": "2"}, template={f"{G}max-nodes": "3"}),
        [f'{GT}max-nodes]: Invalid value: "3": must equal {GJ}max-nodes] ("2") where both are given'],
    ),
    Case(
        "gpu-job-min-gpus-above-total",
        job({f"{G}min-gpus-per-node": "16"}),
        [
            f'{GJ}min-gpus-per-node]: Invalid value: "16": must be at most the job\'s 8 GPUs in all '
            "(parallelism 2 x 4 nvidia.com/gpu)"
        ],
    ),
    Case(
        "gpu-job-spread-too-few-nodes",
        job({f"{G}multi-node-policy": "spread", f"{G}max-nodes": "1"}),
        [
            f'{GJ}max-nodes]: Invalid value: "1": multi-node-policy "spread" puts one pod per node, '
            "so it needs at least parallelism (2) nodes"
        ],
    ),
    Case(
        "gpu-job-min-gpus-above-every-node",
        job({f"{G}min-gpus-per-node": "12"}, parallelism=4),
        [
            f'{GJ}min-gpus-per-node]: Invalid value: "12": no node has that many GPUs '
            "(the largest has 8 nvidia.com/gpu)"
        ],
        state="cluster",
    ),
    Case(
        "gpu-job-max-nodes-too-few",
        job({f"{G}max-nodes": "2"}, parallelism=5),
        [
            f'{GJ}max-nodes]: Invalid value: "2": 2 node(s) of at most 8 GPUs cannot hold the job\'s '
            "20 GPUs (parallelism 5 x 4 nvidia.com/gpu)"
        ],
        state="cluster",
    ),
    Case("gpu-job-max-nodes-unchecked-without-cluster", job({f"{G}max-nodes": "2"}, parallelism=5)),
    Case(
        "gpu-pod-bad-value",
        pod({f"{G}max-nodes": "two"}),
        [f'{GJ}max-nodes]: Invalid value: "two": must be a decimal integer from 1 to 2147483647'],
    ),
    Case("gpu-pod-valid", pod({f"{G}require-nvlink": "true"}), state="cluster"),
]

# --- Volcano Job (batch.volcano.sh/v1alpha1, v1.14+) --------------------------------------------
# Modelled on volcano's PR #4675 example (task-level network topology), issue #4867 (minPartitions
# x partitionSize) and issue #5401 (minPartitions omitted).


def _task(name: str = "worker", replicas: Any = 6, **extra: Any) -> dict[str, Any]:
    template = {
        "spec": {"containers": [{"name": name, "image": "ubuntu", "resources": {"requests": {"cpu": "2"}}}]}
    }
    return {"name": name, "replicas": replicas, "template": template, **extra}


def vcjob(*tasks: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "network-topology-job", "namespace": "default"},
        "spec": {"schedulerName": "volcano", **spec, "tasks": list(tasks) if tasks else [_task()]},
    }


def partition(total: Any = 2, size: Any = 3, **extra: Any) -> dict[str, Any]:
    return {"totalPartitions": total, "partitionSize": size, **extra}


HARD1 = {"mode": "hard", "highestTierAllowed": 1}
HARD2 = {"mode": "hard", "highestTierAllowed": 2}
T0 = "spec.tasks[0]"
PP = f"{T0}.partitionPolicy"
K = "kueue.x-k8s.io/"
VCJOB_CASES = [
    Case(
        "vcjob-valid-pr4675-example",
        vcjob(
            _task(partitionPolicy=partition(minPartitions=2, networkTopology=HARD1)),
            minAvailable=6,
            networkTopology=HARD2,
        ),
        state="cluster",
    ),
    Case("vcjob-valid-no-topology", vcjob(_task("ps", 1), _task("worker", 3, minAvailable=2))),
    Case(
        "vcjob-valid-min-partitions-0-any-min-available",
        vcjob(_task(replicas=4, minAvailable=1, partitionPolicy=partition(2, 2))),
    ),
    Case(
        "vcjob-valid-tier-name",
        vcjob(networkTopology={"mode": "soft", "highestTierName": "spine"}),
        state="cluster",
    ),
    Case(
        "vcjob-mode-typo",
        vcjob(networkTopology={"mode": "hrad", "highestTierAllowed": 1}),
        [f'{NT}.mode: Unsupported value: "hrad": {MODES}'],
    ),
    Case(
        "vcjob-partition-mode-typo",
        vcjob(_task(partitionPolicy=partition(networkTopology={"mode": "hrad"}))),
        [f'{PP}.networkTopology.mode: Unsupported value: "hrad": {MODES}'],
    ),
    Case(
        "vcjob-tier-negative",
        vcjob(networkTopology={"highestTierAllowed": -1}),
        [f"{NT}.highestTierAllowed: Invalid value: -1: must be greater than or equal to 0"],
    ),
    Case(
        "vcjob-tier-and-name",
        vcjob(networkTopology={"highestTierAllowed": 1, "highestTierName": "block"}),
        [f"{NT}: {FORBID_BOTH}"],
    ),
    Case(
        "vcjob-partition-tier-and-name",
        vcjob(
            _task(
                partitionPolicy=partition(
                    networkTopology={"highestTierAllowed": 1, "highestTierName": "block"}
                )
            )
        ),
        [f"{PP}.networkTopology: {FORBID_BOTH}"],
    ),
    Case(
        "vcjob-total-partitions-zero",
        vcjob(_task(partitionPolicy=partition(0, 3))),
        [f"{PP}.totalPartitions: Invalid value: 0: must be greater than or equal to 1"],
    ),
    Case(
        "vcjob-partition-size-missing",
        vcjob(_task(partitionPolicy={"totalPartitions": 2})),
        [f"{PP}.partitionSize: Required value"],
    ),
    Case(
        "vcjob-replicas-not-partitions-product",
        vcjob(_task(replicas=5, partitionPolicy=partition(2, 3))),
        [
            f"{T0}.replicas: Invalid value: 5: must equal partitionPolicy.totalPartitions x partitionSize (2 x 3 = 6)"
        ],
    ),
    Case(
        "vcjob-issue4867-min-available-not-min-partitions",
        vcjob(
            _task(replicas=12, minAvailable=12, partitionPolicy=partition(4, 3, minPartitions=2)),
            networkTopology=HARD1,
        ),
        [
            f"{T0}.minAvailable: Invalid value: 12: must equal partitionPolicy.minPartitions x partitionSize (2 x 3 = 6)"
        ],
    ),
    Case(
        "vcjob-min-partitions-above-total-warns",
        vcjob(_task(partitionPolicy=partition(2, 3, minPartitions=3))),
        warnings=[f"{PP}.minPartitions: 3 is above totalPartitions (2): the job can never start"],
    ),
    Case(
        "vcjob-soft-job-hard-partition-wider",
        vcjob(
            _task(partitionPolicy=partition(networkTopology=HARD2)),
            networkTopology={"mode": "soft", "highestTierAllowed": 1},
        ),
    ),
    Case(
        "vcjob-partition-wider-than-job",
        vcjob(_task(partitionPolicy=partition(networkTopology=HARD2)), networkTopology=HARD1),
        [
            f"{PP}.networkTopology.highestTierAllowed: Invalid value: 2: must be less than or equal to the job's "
            "tier (spec.networkTopology: 1)"
        ],
    ),
    Case("vcjob-valid-one-task", vcjob()),
    Case(
        "vcjob-empty-tasks",
        {**vcjob(), "spec": {"tasks": []}},
        ["spec.tasks: Required value: a Job needs at least one task"],
    ),
    Case(
        "vcjob-duplicate-task-name",
        vcjob(_task("worker", 1), _task("worker", 1)),
        ['spec.tasks[1].name: Duplicate value: "worker"'],
    ),
    Case(
        "vcjob-task-name-not-a-label",
        vcjob(_task("Task-1", 1)),
        [
            'spec.tasks[0].name: Invalid value: "Task-1": a lowercase RFC 1123 label must consist of lower case '
            "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
            "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ],
    ),
    Case(
        "vcjob-task-min-available-above-replicas",
        vcjob(_task(replicas=2, minAvailable=3)),
        [f"{T0}.minAvailable: Invalid value: 3: must be less than or equal to replicas (2)"],
    ),
    Case(
        "vcjob-job-min-available-above-replicas",
        vcjob(_task(replicas=1), minAvailable=2),
        ["spec.minAvailable: Invalid value: 2: must be less than or equal to the replicas of all tasks (1)"],
    ),
    Case(
        "vcjob-template-quantity-does-not-parse",
        vcjob(
            {
                **_task(),
                "template": {
                    "spec": {"containers": [{"name": "w", "resources": {"requests": {"cpu": "2x"}}}]}
                },
            }
        ),
        [
            f'{T0}.template.spec.containers[0].resources.requests[cpu]: Invalid value: "2x": quantities must match '
            "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        ],
    ),
    Case(
        "vcjob-replicas-negative",
        vcjob(_task(replicas=-1)),
        [f"{T0}.replicas: Invalid value: -1: must be greater than or equal to 0"],
    ),
    Case(
        "vcjob-tier-above-cluster-warns",
        vcjob(networkTopology={"mode": "hard", "highestTierAllowed": 5}),
        warnings=[f"{NT}.highestTierAllowed: 5 is above the highest HyperNode tier in the cluster (2)"],
        state="cluster",
    ),
    Case(
        "vcjob-kueue-annotation-on-task-warns",
        vcjob(
            {
                **_task(),
                "template": {"metadata": {"annotations": {f"{K}podset-required-topology": "cloud.com/rack"}}},
            }
        ),
        warnings=[
            f"{T0}.template.metadata.annotations[{K}podset-required-topology]: has no effect: Kueue manages no "
            "Volcano Job (partitionPolicy.networkTopology and spec.networkTopology say this in Volcano)"
        ],
    ),
]

# --- Kueue TAS annotations (kueue.x-k8s.io/podset-*) ----------------------------------------------
# Modelled on Kueue's TAS sample Jobs (site/static/examples/tas/) and LWS sample.

TA = "spec.template.metadata.annotations"
RACK, BLOCK = "cloud.provider.com/topology-rack", "cloud.provider.com/topology-block"
ONE_OF = (
    'Invalid value: must not contain more than one topology annotation: ["kueue.x-k8s.io/podset-required-topology", '
    '"kueue.x-k8s.io/podset-preferred-topology", "kueue.x-k8s.io/podset-unconstrained-topology"]'
)


def tas_job(annotations: dict[str, str], parallelism: int = 4, *, on_job: bool = False) -> dict[str, Any]:
    obj = job(parallelism=parallelism, gpus=0)
    obj["metadata"]["name"] = "tas-sample"
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.k8s.io/e2e-test-images/agnhost:2.53"
    obj["spec"]["template"]["metadata"] = {"annotations": {} if on_job else annotations}
    if on_job:
        obj["metadata"]["annotations"] = annotations
    return obj


def tas_lws(leader: dict[str, str], workers: dict[str, str], size: int = 4) -> dict[str, Any]:
    obj = lws(size=size)
    tpl = obj["spec"]["leaderWorkerTemplate"]
    tpl["leaderTemplate"] = {
        "metadata": {"annotations": leader},
        "spec": {"containers": [{"name": "l", "image": "x"}]},
    }
    tpl["workerTemplate"]["metadata"] = {"annotations": workers}
    return obj


def layers(*pairs: tuple[str, int]) -> str:
    import json

    return json.dumps([{"topology": t, "size": n} for t, n in pairs])


FOUR_LAYERS = layers(("a", 64), ("b", 16), ("c", 4), ("d", 1))
KUEUE_CASES = [
    Case("kueue-job-valid-required-rack", tas_job({f"{K}podset-required-topology": RACK}, 3)),
    Case("kueue-job-valid-preferred-block", tas_job({f"{K}podset-preferred-topology": BLOCK})),
    Case("kueue-job-valid-unconstrained", tas_job({f"{K}podset-unconstrained-topology": "true"})),
    Case(
        "kueue-job-valid-slices",
        tas_job(
            {
                f"{K}podset-required-topology": BLOCK,
                f"{K}podset-slice-required-topology": RACK,
                f"{K}podset-slice-size": "2",
            }
        ),
    ),
    Case(
        "kueue-job-valid-three-layers",
        tas_job(
            {
                f"{K}podset-required-topology": "cloud.com/block",
                f"{K}podset-slice-required-topology-constraints": layers(
                    ("cloud.com/rack", 16), ("cloud.com/sub-rack", 4), ("kubernetes.io/hostname", 2)
                ),
            },
            32,
        ),
    ),
    Case(
        "kueue-lws-valid-group-name",
        tas_lws(
            {f"{K}podset-preferred-topology": RACK, f"{K}podset-group-name": "llm"},
            {f"{K}podset-preferred-topology": RACK, f"{K}podset-group-name": "llm"},
        ),
    ),
    Case("kueue-pod-valid-required", pod({f"{K}podset-required-topology": RACK}, labels=None)),
    Case(
        "kueue-job-required-and-preferred",
        tas_job({f"{K}podset-required-topology": RACK, f"{K}podset-preferred-topology": BLOCK}),
        [f"{TA}: {ONE_OF}"],
    ),
    Case(
        "kueue-pod-required-and-unconstrained",
        pod({f"{K}podset-required-topology": RACK, f"{K}podset-unconstrained-topology": "true"}, labels=None),
        [f"metadata.annotations: {ONE_OF}"],
    ),
    Case(
        "kueue-job-slice-without-size",
        tas_job({f"{K}podset-required-topology": BLOCK, f"{K}podset-slice-required-topology": RACK}),
        [
            f"{TA}[{K}podset-slice-size]: Required value: must be set when "
            f"'{K}podset-slice-required-topology' is specified"
        ],
    ),
    Case(
        "kueue-job-size-without-slice",
        tas_job({f"{K}podset-required-topology": BLOCK, f"{K}podset-slice-size": "2"}),
        [
            f"{TA}[{K}podset-slice-size]: Forbidden: may not be set when "
            f"'{K}podset-slice-required-topology' is not specified"
        ],
    ),
    *[
        Case(
            f"kueue-job-slice-size-{case}",
            tas_job({f"{K}podset-slice-required-topology": RACK, f"{K}podset-slice-size": raw}),
            [f'{TA}[{K}podset-slice-size]: Invalid value: "{raw}": {why}'],
        )
        for case, raw, why in (
            ("not-a-number", "two", "must be a numeric value"),
            ("zero", "0", "must be greater than or equal to 1"),
            ("above-pod-count", "5", "must not be greater than pod set count 4"),
        )
    ],
    Case(
        "kueue-job-level-not-a-label-key",
        tas_job({f"{K}podset-required-topology": "Cloud.com/rack"}),
        [f'{TA}[{K}podset-required-topology]: Invalid value: "Cloud.com/rack": prefix part {DNS}'],
    ),
    Case(
        "kueue-job-unconstrained-not-a-boolean",
        tas_job({f"{K}podset-unconstrained-topology": "yes"}),
        [f'{TA}[{K}podset-unconstrained-topology]: Invalid value: "yes": must be a boolean value'],
    ),
    Case(
        "kueue-job-layers-do-not-divide",
        tas_job(
            {
                f"{K}podset-required-topology": "cloud.com/block",
                f"{K}podset-slice-required-topology-constraints": layers(
                    ("cloud.com/rack", 16), ("kubernetes.io/hostname", 5)
                ),
            },
            32,
        ),
        [
            f"{TA}[{K}podset-slice-required-topology-constraints][1].size: Invalid value: 5: must evenly divide "
            "the parent layer size 16"
        ],
    ),
    Case(
        "kueue-job-four-layers",
        tas_job({f"{K}podset-slice-required-topology-constraints": FOUR_LAYERS}, 64),
        [
            f"{TA}[{K}podset-slice-required-topology-constraints]: Invalid value: {render_value(FOUR_LAYERS)}: "
            "must list 1 to 3 layers, outermost first"
        ],
    ),
    Case(
        "kueue-job-layers-duplicate-level",
        tas_job(
            {
                f"{K}podset-slice-required-topology-constraints": layers(
                    ("cloud.com/rack", 16), ("cloud.com/rack", 4)
                )
            },
            16,
        ),
        [
            f'{TA}[{K}podset-slice-required-topology-constraints][1].topology: Duplicate value: "cloud.com/rack (also at index 0)"'
        ],
    ),
    Case(
        "kueue-job-outermost-layer-above-pod-count",
        tas_job(
            {
                f"{K}podset-slice-required-topology-constraints": layers(
                    ("cloud.com/rack", 16), ("kubernetes.io/hostname", 4)
                )
            },
            10,
        ),
        [
            f"{TA}[{K}podset-slice-required-topology-constraints]: Invalid value: 16: must not be greater than pod set count 10"
        ],
    ),
    Case(
        "kueue-job-group-name-a-number",
        tas_job({f"{K}podset-required-topology": RACK, f"{K}podset-group-name": "7"}),
        [f'{TA}[{K}podset-group-name]: Invalid value: "7": must not be a number'],
    ),
    Case(
        "kueue-lws-slice-above-workers",
        tas_lws({}, {f"{K}podset-slice-required-topology": RACK, f"{K}podset-slice-size": "4"}),
        [
            f'spec.leaderWorkerTemplate.workerTemplate.metadata.annotations[{K}podset-slice-size]: Invalid value: "4": '
            "must not be greater than pod set count 3"
        ],
    ),
    Case(
        "kueue-job-annotation-on-the-job-warns",
        tas_job({f"{K}podset-required-topology": RACK}, on_job=True),
        warnings=[
            f"metadata.annotations[{K}podset-required-topology]: has no effect on the Job's own metadata: Kueue "
            "reads it on the pod template (spec.template.metadata.annotations)"
        ],
    ),
]

# --- the dialect fixtures (tests/dialect_fixtures): each file's `# error:` / `# warning:` header
# lines are its exact verdict; `# corpus: no` marks what no webhook judges.

FIXTURES = Path(__file__).resolve().parent.parent / "dialect_fixtures"


def fixture_header(text: str, key: str) -> list[str]:
    prefix = f"# {key}: "
    return [line[len(prefix) :] for line in text.splitlines() if line.startswith(prefix)]


def _fixture_cases() -> list[Case]:
    out = []
    for path in sorted(FIXTURES.glob("*/*.yaml")):
        text = path.read_text(encoding="utf-8")
        if fixture_header(text, "corpus"):
            continue
        errors, warnings = fixture_header(text, "error"), fixture_header(text, "warning")
        out.append(Case(f"fixture-{path.parent.name}-{path.stem}", yaml.safe_load(text), errors, warnings))
    return out


FIXTURE_CASES = _fixture_cases()

CASES: list[Case] = [
    *LWS_CASES,
    *LWS_ANNOTATION_CASES,
    *VPG_CASES,
    *HN_CASES,
    *CNT_CASES,
    *POD_CASES,
    *PODGROUP_CASES,
    *GPU_CASES,
    *VCJOB_CASES,
    *KUEUE_CASES,
    *FIXTURE_CASES,
]
