"""Kueue's topology-aware scheduling table, checked by how many pods end in each domain.

`pkg/cache/scheduler/tas_cache_test.go` `TestFindTopologyAssignments` (kubernetes-sigs/kueue
commit ff69552e): one pod set of `count` pods with a topology request over a `Topology` of node
label levels; upstream's fact is the assignment (pods per domain at the lowest level) or that
none exists. Here the pod set is an Indexed Job whose template carries Kueue's TAS
annotations (as a user writes it; the pods rank by completion index), the Topology is a Kueue
`Topology` object, and the row checks where topobridge's cycle puts the pods (`Counts`).
Resources are upstream's requests (CPU in millicores).

Ported are the single-pod-set cases under Kueue's default profile (BestFit, and the
`TASMultiLayerTopology` slices), the `TASProfileMixed` cases whose request is required or
unconstrained on one host, and the node cases that are plain Kubernetes facts: a
ResourceFlavor's `nodeLabels` (written as the pods' nodeSelector, which Kueue injects), taints
and tolerations, `spec.unschedulable`, allocatable `pods`, and other workloads' pods (bound
ones count whatever their phase until they end; unbound ones do not). Not ported, each for a
reason the row could not state: node replacement and elastic scale up/down (they start from a
Workload's previous assignment, which topobridge does not keep); `TASBalancedPlacement` and
`TASRespectNodeAffinityPreferred` (alternative algorithms behind feature gates, the flat
topology cases among them); usage only Kueue's bookkeeping knows (other flavors' usage, prior
own usage); several pod sets in one workload (topobridge places one gang per Job); node
readiness (a NotReady node without its taint); grouped pod sets with slices (Kueue's webhook
refuses `podset-group-name` beside a slice annotation, `tas_validation.go`, so no pod carries
them); and the affinity cases whose expectation is built in code.

A leader and workers pod set sharing a `podset-group-name` (`GROUP_ROWS`) are the pods of one
LeaderWorkerSet group, whose templates carry the same request; their two assignments are
checked added up.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from conformance.harness import Counts, Obj, Row
from conformance.objects import node, pod, taint, toleration
from translations import kueue, lws

UPSTREAM = "pkg/cache/scheduler/tas_cache_test.go:TestFindTopologyAssignments"
DC = "cloud.com/datacenter"
AIZONE = "cloud.com/aizone"
BLOCK = "cloud.com/topology-block"
RACK = "cloud.com/topology-rack"
SUBBLOCK = "cloud.com/topology-subblock"
HOST = "kubernetes.io/hostname"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def _node(name: str, labels: dict[str, str], allocatable: dict[str, str]) -> Obj:
    """A node with upstream's labels (its hostname label is upstream's, not its name)."""
    return node(name, labels, allocatable=allocatable, hostname=False)


def _topology(levels: Sequence[str]) -> Obj:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Topology",
        "metadata": {"name": "default"},
        "spec": {"levels": [{"nodeLabel": level} for level in levels]},
    }


def _annotations(
    *,
    required: str | None = None,
    preferred: str | None = None,
    unconstrained: bool = False,
    slice_topology: str | None = None,
    slice_size: int | None = None,
    slices: Sequence[tuple[str, int]] = (),
) -> dict[str, str]:
    out: dict[str, str] = {}
    if required is not None:
        out[kueue.REQUIRED_TOPOLOGY] = required
    if preferred is not None:
        out[kueue.PREFERRED_TOPOLOGY] = preferred
    if unconstrained:
        out[kueue.UNCONSTRAINED_TOPOLOGY] = "true"
    if slice_topology is not None:
        out[kueue.SLICE_REQUIRED_TOPOLOGY] = slice_topology
    if slice_size is not None:
        out[kueue.SLICE_SIZE] = str(slice_size)
    if slices:
        out[kueue.SLICE_CONSTRAINTS] = json.dumps([{"topology": t, "size": n} for t, n in slices])
    return out


_POD_FIELDS = ("node_selector", "tolerations")
"""Request keys that go into the pods' spec (a ResourceFlavor's nodeLabels become the pods'
nodeSelector when Kueue admits them; the pod set's tolerations), not into annotations."""


def _job(count: int, requests: Mapping[str, str], request: Mapping[str, object]) -> tuple[Obj, list[Obj]]:
    """The pod set as an Indexed Job of `count` pods carrying the TAS annotations."""
    selector = request.get("node_selector")
    tolerations = request.get("tolerations")
    annotations = _annotations(**{k: v for k, v in request.items() if k not in _POD_FIELDS})  # type: ignore[arg-type]
    uid = "uid-train"
    job: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "default", "uid": uid},
        "spec": {
            "parallelism": count,
            "completions": count,
            "completionMode": "Indexed",
            "template": {"metadata": {"annotations": annotations}, "spec": {"containers": []}},
        },
    }
    extra: Obj = {"nodeSelector": dict(selector)} if isinstance(selector, Mapping) else {}
    if isinstance(tolerations, list):
        extra["tolerations"] = tolerations
    pods = [
        pod(
            f"train-{i}",
            labels={"job-name": "train", "controller-uid": uid},
            annotations={**annotations, COMPLETION_INDEX: str(i)},
            requests=dict(requests),
            **extra,
        )
        for i in range(count)
    ]
    return job, pods


def _gb200_nodes() -> list[Obj]:
    """Upstream's GB200 NVL36 cluster: 1 dc, 2 aizones of 2 blocks of 2 racks, 18 nodes of 2
    GPUs per rack (built in a loop there too)."""
    racks = [("aizone0", "block0", "r0"), ("aizone0", "block0", "r1"), ("aizone0", "block1", "r2")]
    racks += [("aizone0", "block1", "r3"), ("aizone1", "block2", "r4"), ("aizone1", "block2", "r5")]
    racks += [("aizone1", "block3", "r6"), ("aizone1", "block3", "r7")]
    return [
        _node(
            f"{block}-{rack}-{az}-n{i}",
            {DC: "dc0", AIZONE: az, BLOCK: block, RACK: rack},
            {"nvidia.com/gpu": "2", "pods": "110"},
        )
        for az, block, rack in racks
        for i in range(18)
    ]


def _tas(
    case: str,
    nodes: list[Obj],
    levels: tuple[str, ...],
    count: int,
    requests: dict[str, str],
    request: dict[str, object],
    want_levels: tuple[str, ...],
    counts: dict[str, int],
    others: Sequence[Obj] = (),
) -> Row:
    """`others`: pods of other workloads in the cluster (upstream's non-TAS pods)."""
    job, pods = _job(count, requests, request)
    return Row(
        "KueueTAS",
        UPSTREAM,
        case,
        [*nodes, _topology(levels), job, *others],
        pods,
        Counts(want_levels, counts),
        repo="kubernetes-sigs/kueue",
    )


_NODES_0 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "2", "pods": "10"}),
    _node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, {"cpu": "2", "pods": "20"}),
    _node("b1-r3-x1", {BLOCK: "b1", RACK: "r3", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r3-x6", {BLOCK: "b1", RACK: "r3", HOST: "x6"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r3-x2", {BLOCK: "b1", RACK: "r3", HOST: "x2"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r3-x4", {BLOCK: "b1", RACK: "r3", HOST: "x4"}, {"cpu": "1", "pods": "10"}),
]
_NODES_1 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "2", "pods": "10"}),
    _node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
]
_NODES_2 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "4", "memory": "1Gi", "pods": "10"}),
    _node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b2-r1-x6", {BLOCK: "b2", RACK: "r1", HOST: "x6"}, {"cpu": "2", "memory": "1Gi", "pods": "10"}),
    _node("b2-r1-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
]
_NODES_3 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, {"cpu": "2", "memory": "4Gi", "pods": "40"}),
]
_NODES_4 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b2-r1-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b2-r1-x4", {BLOCK: "b2", RACK: "r1", HOST: "x4"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b2-r2-x7", {BLOCK: "b2", RACK: "r2", HOST: "x7"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
    _node("b2-r2-x8", {BLOCK: "b2", RACK: "r2", HOST: "x8"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
]
_NODES_5 = [
    _node("b1", {BLOCK: "b1"}, {"cpu": "2", "pods": "20"}),
    _node("b2", {BLOCK: "b2"}, {"cpu": "1", "pods": "10"}),
    _node("b3", {BLOCK: "b3"}, {"cpu": "4", "pods": "40"}),
]
_NODES_6 = [
    _node("b1-r1-x3", {HOST: "x3", "zone": "zone-a"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
]
_NODES_7 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
]
_NODES_8 = [
    _node("dual-shortage", {HOST: "dual-shortage"}, {"cpu": "500m", "pods": "10"}),
]
_NODES_9 = [
    _node("x3", {HOST: "x3", "zone": "zone-a"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
]
_NODES_10 = [
    _node(
        "x3",
        {"custom-label-1": "value-1", HOST: "x3", "zone": "zone-a"},
        {"cpu": "1", "memory": "1Gi", "pods": "10"},
    ),
]
_NODES_11 = [
    _node(
        "b1-r1-x3",
        {"custom-label-1": "value-1", HOST: "x3", "zone": "zone-a"},
        {"cpu": "1", "memory": "1Gi", "pods": "10"},
    ),
    _node(
        "b1-r1-x5",
        {"custom-label-1": "value-2", HOST: "x5", "zone": "zone-a"},
        {"cpu": "1", "memory": "1Gi", "pods": "10"},
    ),
]
_NODES_12 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "3", "pods": "10"}),
    _node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, {"cpu": "3", "pods": "10"}),
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "3", "pods": "10"}),
]
_NODES_13 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "6", "pods": "10"}),
    _node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, {"cpu": "5", "pods": "10"}),
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "4", "pods": "10"}),
    _node("b1-r1-x6", {BLOCK: "b1", RACK: "r1", HOST: "x6"}, {"cpu": "2", "pods": "10"}),
]
_NODES_14 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "3", "pods": "10"}),
    _node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, {"cpu": "2", "pods": "10"}),
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "2", "pods": "10"}),
]
_NODES_15 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r2-x2", {BLOCK: "b1", RACK: "r2", HOST: "x2"}, {"cpu": "1", "pods": "10"}),
    _node("b2-r1-x4", {BLOCK: "b2", RACK: "r1", HOST: "x4"}, {"cpu": "1", "pods": "10"}),
    _node("b2-r1-x7", {BLOCK: "b2", RACK: "r1", HOST: "x7"}, {"cpu": "1", "pods": "10"}),
]
_NODES_16 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "4", "pods": "10"}),
    _node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, {"cpu": "3", "pods": "10"}),
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "2", "pods": "10"}),
]
_NODES_17 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "3", "pods": "10"}),
    _node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, {"cpu": "3", "pods": "10"}),
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "3", "pods": "10"}),
    _node("b2-r1-x6", {BLOCK: "b2", RACK: "r1", HOST: "x6"}, {"cpu": "6", "pods": "10"}),
]
_NODES_18 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "2", "pods": "10"}),
    _node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, {"cpu": "2", "pods": "10"}),
    _node("b1-r3-x1", {BLOCK: "b1", RACK: "r3", HOST: "x1"}, {"cpu": "2", "pods": "10"}),
]
_NODES_19 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "3", "pods": "10"}),
    _node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r3-x1", {BLOCK: "b1", RACK: "r3", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r4-x6", {BLOCK: "b1", RACK: "r4", HOST: "x6"}, {"cpu": "1", "pods": "10"}),
]
_NODES_20 = [
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "2", "pods": "10"}),
    _node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, {"cpu": "2", "pods": "10"}),
    _node("b1-r3-x1", {BLOCK: "b1", RACK: "r3", HOST: "x1"}, {"cpu": "2", "pods": "10"}),
    _node("b2-r4-x6", {BLOCK: "b2", RACK: "r4", HOST: "x6"}, {"cpu": "3", "pods": "10"}),
    _node("b2-r5-x2", {BLOCK: "b2", RACK: "r5", HOST: "x2"}, {"cpu": "3", "pods": "10"}),
]
_NODES_21 = [
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
    _node("b1-r1-x2", {BLOCK: "b1", RACK: "r1", HOST: "x2"}, {"cpu": "4", "pods": "10"}),
    _node("b1-r2-x3", {BLOCK: "b1", RACK: "r2", HOST: "x3"}, {"cpu": "3", "pods": "10"}),
    _node("b1-r2-x4", {BLOCK: "b1", RACK: "r2", HOST: "x4"}, {"cpu": "4", "pods": "10"}),
]
_NODES_22 = [
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "7", "pods": "10"}),
    _node("b1-r1-x2", {BLOCK: "b1", RACK: "r1", HOST: "x2"}, {"cpu": "4", "pods": "10"}),
    _node("b1-r2-x3", {BLOCK: "b1", RACK: "r2", HOST: "x3"}, {"cpu": "7", "pods": "10"}),
    _node("b1-r2-x4", {BLOCK: "b1", RACK: "r2", HOST: "x4"}, {"cpu": "3", "pods": "10"}),
]
_NODES_23 = [
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "4", "pods": "10"}),
    _node("b1-r2-x2", {BLOCK: "b1", RACK: "r2", HOST: "x2"}, {"cpu": "4", "pods": "10"}),
    _node("b1-r3-x3", {BLOCK: "b1", RACK: "r3", HOST: "x3"}, {"cpu": "4", "pods": "10"}),
]
_NODES_24 = [
    _node("x2", {BLOCK: "b1", RACK: "r1", HOST: "x2"}, {"cpu": "1", "pods": "10"}),
    _node("x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
]
_NODES_25 = [
    _node("x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "1", "pods": "10"}),
    _node("x2", {BLOCK: "b1", RACK: "r1", HOST: "x2"}, {"cpu": "1", "pods": "10"}),
]


def _other(name: str, cpu: str, *, on: str | None = None, phase: str | None = None) -> Obj:
    """A pod of another workload (upstream's non-TAS pod in `test-ns`), bound to `on` or not."""
    out = pod(name, namespace="test-ns", node_name=on, requests={"cpu": cpu}, scheduler="default-scheduler")
    if phase is not None:
        out["status"] = {"phase": phase}
    return out


_SMALL = {"cpu": "1", "memory": "1Gi", "pods": "10"}
_ZONE_A_X3 = [_node("b1-r1-x3", {"zone": "zone-a", HOST: "x3"}, _SMALL)]
_X3 = [_node("x3", {HOST: "x3"}, _SMALL)]
_GPU_TAINT = taint("example.com/gpu", "present")
_NODES_26 = [
    _node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, {"cpu": "3", "pods": "10"}),
    _node("b1-r1-x2", {BLOCK: "b1", RACK: "r1", HOST: "x2"}, {"cpu": "3", "pods": "10"}),
    _node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, {"cpu": "0", "pods": "10"}),
]
_NODES_27 = [
    _node(
        f"dc1-{block}-{rack}-{host}",
        {DC: "dc1", BLOCK: block, RACK: rack, HOST: host},
        {"cpu": cpu, "pods": "10"},
    )
    for block, rack, host, cpu in (
        ("b1", "r1", "x1", "4"),
        ("b1", "r1", "x2", "4"),
        ("b1", "r2", "x3", "4"),
        ("b1", "r2", "x4", "4"),
        ("b2", "r3", "x5", "4"),
        ("b2", "r3", "x6", "4"),
        ("b2", "r4", "x7", "1"),
        ("b2", "r4", "x8", "1"),
    )
]


ROWS = [
    _tas(
        "multi-layer topology: mimic a real-world GB200 cluster, with NVL36 arch (2GPUs/node); dc required; "
        "aizone slices of 48; rack slices of 16; TASMultiLayerTopology",
        _gb200_nodes(),
        (DC, AIZONE, BLOCK, RACK),
        96,
        {"nvidia.com/gpu": "2"},
        dict(required=DC, slices=[(AIZONE, 48), (RACK, 16)]),
        (DC, AIZONE, BLOCK, RACK),
        {
            "dc0/aizone0/block0/r0": 16,
            "dc0/aizone0/block0/r1": 16,
            "dc0/aizone0/block1/r2": 16,
            "dc0/aizone1/block2/r4": 16,
            "dc0/aizone1/block2/r5": 16,
            "dc0/aizone1/block3/r6": 16,
        },
    ),
    _tas(
        "minimize the number of used racks before optimizing the number of nodes; BestFit",
        _NODES_0,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        4,
        {"cpu": "1000m"},
        dict(required=BLOCK),
        (HOST,),
        {"x1": 1, "x2": 1, "x4": 1, "x6": 1},
    ),
    _tas(
        "choose the node that can accommodate all Pods",
        _NODES_1,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        2,
        {"cpu": "1000m"},
        dict(required=BLOCK),
        (HOST,),
        {"x3": 2},
    ),
    _tas(
        "no annotation; implied default to unconstrained; 6 pods fit into hosts scattered across the whole datacenter even they could fit into single rack; BestFit",
        _NODES_2,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        6,
        {"cpu": "1000m"},
        dict(),
        (HOST,),
        {"x1": 1, "x3": 1, "x5": 1, "x2": 1, "x6": 2},
    ),
    _tas(
        "unconstrained; 6 pods fit into hosts scattered across the whole datacenter even they could fit into single rack; BestFit",
        _NODES_2,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        6,
        {"cpu": "1000m"},
        dict(unconstrained=True),
        (HOST,),
        {"x1": 1, "x3": 1, "x5": 1, "x2": 1, "x6": 2},
    ),
    _tas(
        "unconstrained; a single pod fits into each host; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        1,
        {"cpu": "1000m"},
        dict(unconstrained=True),
        (HOST,),
        {"x3": 1},
    ),
    _tas(
        "block required; 4 pods fit into one host each; BestFit",
        _NODES_4,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        4,
        {"cpu": "1000m"},
        dict(required=BLOCK),
        (HOST,),
        {"x3": 1, "x5": 1, "x1": 1, "x6": 1},
    ),
    _tas(
        "host required; single Pod fits in the host; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        1,
        {"cpu": "1000m"},
        dict(required=HOST),
        (HOST,),
        {"x3": 1},
    ),
    _tas(
        "rack required; single Pod fits in a rack; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        1,
        {"cpu": "1000m"},
        dict(required=RACK),
        (
            BLOCK,
            RACK,
        ),
        {"b1/r1": 1},
    ),
    _tas(
        "rack required; multiple Pods fit in a rack; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        3,
        {"cpu": "1000m"},
        dict(required=RACK),
        (
            BLOCK,
            RACK,
        ),
        {"b1/r2": 3},
    ),
    _tas(
        "block preferred; Pods fit in 2 blocks; BestFit",
        _NODES_5,
        (BLOCK,),
        5,
        {"cpu": "1000m"},
        dict(preferred=BLOCK),
        (BLOCK,),
        {"b2": 1, "b3": 4},
    ),
    _tas(
        "rack required; multiple Pods fit in some racks; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        2,
        {"cpu": "1000m"},
        dict(required=RACK),
        (
            BLOCK,
            RACK,
        ),
        {"b2/r2": 2},
    ),
    _tas(
        "rack required; too many pods to fit in any rack; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        4,
        {"cpu": "1000m"},
        dict(required=RACK),
        (HOST,),
        {},
    ),
    _tas(
        "block required; single Pod fits in a block and a single rack; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        1,
        {"cpu": "1000m"},
        dict(required=BLOCK),
        (
            BLOCK,
            RACK,
        ),
        {"b2/r1": 1},
    ),
    _tas(
        "block required; single Pod fits in a block spread across two racks; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        4,
        {"cpu": "1000m"},
        dict(required=BLOCK),
        (
            BLOCK,
            RACK,
        ),
        {"b1/r1": 1, "b1/r2": 3},
    ),
    _tas(
        "block required; Pods fit in a block spread across two racks; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        4,
        {"cpu": "1000m"},
        dict(required=BLOCK),
        (
            BLOCK,
            RACK,
        ),
        {"b1/r1": 1, "b1/r2": 3},
    ),
    _tas(
        "block required; single Pod which cannot be split; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        1,
        {"cpu": "4000m"},
        dict(required=BLOCK),
        (HOST,),
        {},
    ),
    _tas(
        "block required; too many Pods to fit requested; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        5,
        {"cpu": "1000m"},
        dict(required=BLOCK),
        (HOST,),
        {},
    ),
    _tas(
        "rack required; single Pod requiring memory; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        4,
        {"memory": "1024"},
        dict(required=RACK),
        (
            BLOCK,
            RACK,
        ),
        {"b1/r1": 4},
    ),
    _tas(
        "rack preferred; but only block can accommodate the workload; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        4,
        {"cpu": "1000m"},
        dict(preferred=RACK),
        (
            BLOCK,
            RACK,
        ),
        {"b1/r1": 1, "b1/r2": 3},
    ),
    _tas(
        "rack preferred; but only multiple blocks can accommodate the workload; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        6,
        {"cpu": "1000m"},
        dict(preferred=RACK),
        (
            BLOCK,
            RACK,
        ),
        {"b1/r1": 1, "b1/r2": 3, "b2/r2": 2},
    ),
    _tas(
        "block preferred; but only multiple blocks can accommodate the workload; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        6,
        {"cpu": "1000m"},
        dict(preferred=BLOCK),
        (
            BLOCK,
            RACK,
        ),
        {"b1/r1": 1, "b1/r2": 3, "b2/r2": 2},
    ),
    _tas(
        "block preferred; but the workload cannot be accommodate in entire topology; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
        ),
        10,
        {"cpu": "1000m"},
        dict(preferred=BLOCK),
        (HOST,),
        {},
    ),
    _tas(
        "only nodes with matching labels are considered; matching node is found; BestFit",
        _NODES_6,
        (HOST,),
        1,
        {"cpu": "1000m"},
        dict(required=HOST, node_selector={"zone": "zone-a"}),
        (HOST,),
        {"x3": 1},
    ),
    _tas(
        "only nodes with matching levels are considered; no host label on node; BestFit",
        _NODES_7,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        1,
        {"cpu": "1000m"},
        dict(required=RACK),
        (HOST,),
        {},
    ),
    _tas(
        "resource exclusion picks most restrictive resource",
        _NODES_8,
        (HOST,),
        1,
        {"cpu": "1000m"},
        dict(required=HOST),
        (HOST,),
        {},
    ),
    _tas(
        "skip node which doesn't match node selector, missing label; BestFit",
        _NODES_9,
        (HOST,),
        1,
        {"cpu": "300m"},
        dict(required=HOST, node_selector={"zone": "zone-a", "custom-label-1": "custom-value-1"}),
        (HOST,),
        {},
    ),
    _tas(
        "skip node which doesn't match node selector, label exists, value doesn't match; BestFit",
        _NODES_10,
        (HOST,),
        1,
        {"cpu": "300m"},
        dict(required=HOST, node_selector={"zone": "zone-a", "custom-label-1": "value-2"}),
        (HOST,),
        {},
    ),
    _tas(
        "allow to schedule on node which matches node; BestFit",
        _NODES_11,
        (HOST,),
        1,
        {"cpu": "1000m"},
        dict(required=HOST, node_selector={"zone": "zone-a", "custom-label-1": "value-2"}),
        (HOST,),
        {"x5": 1},
    ),
    _tas(
        "block required for podset; host required for slices; BestFit",
        _NODES_12,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        6,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology=HOST, slice_size=2),
        (HOST,),
        {"x1": 2, "x3": 2, "x5": 2},
    ),
    _tas(
        "block required for podset; host required for slices; prioritize more free slice capacity first and then tight fit; BestFit",
        _NODES_13,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        12,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology=HOST, slice_size=2),
        (HOST,),
        {"x1": 4, "x3": 6, "x6": 2},
    ),
    _tas(
        "block required for podset; host required for slices; select domains with tight fit; BestFit",
        _NODES_14,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        4,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology=HOST, slice_size=2),
        (HOST,),
        {"x1": 2, "x5": 2},
    ),
    _tas(
        "block required for podset; rack required for slices; BestFit",
        _NODES_15,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        4,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology=RACK, slice_size=2),
        (HOST,),
        {"x3": 1, "x5": 1, "x1": 1, "x2": 1},
    ),
    _tas(
        "block preferred for podset; rack required for slices; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        4,
        {"cpu": "1000m"},
        dict(preferred=BLOCK, slice_topology=RACK, slice_size=2),
        (HOST,),
        {"x1": 1, "x5": 1, "x4": 2},
    ),
    _tas(
        "block required for podset; host required for slices; optimize last domain; BestFit",
        _NODES_16,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        6,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology=HOST, slice_size=2),
        (HOST,),
        {"x1": 2, "x3": 4},
    ),
    _tas(
        "block preferred for podset; host required for slices; 2 blocks with unbalanced subdomains; BestFit",
        _NODES_17,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        12,
        {"cpu": "1000m"},
        dict(preferred=BLOCK, slice_topology=HOST, slice_size=3),
        (HOST,),
        {"x1": 3, "x3": 3, "x6": 6},
    ),
    _tas(
        "block required for podset; rack required for slices; podset fits in a block, but slices do not fit in racks",
        _NODES_18,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        6,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology=RACK, slice_size=3),
        (HOST,),
        {},
    ),
    _tas(
        "block required for podset; rack required for slices; only 1 out of 2 slices fit the topology",
        _NODES_19,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        6,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology=RACK, slice_size=3),
        (HOST,),
        {},
    ),
    _tas(
        "block required for podset; rack required for slices; podset fits in both blocks, but slices fit in only one block",
        _NODES_20,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        6,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology=RACK, slice_size=3),
        (HOST,),
        {"x6": 3, "x2": 3},
    ),
    _tas(
        "slice required topology level cannot be above the main required topology level",
        _NODES_3,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        1,
        {"cpu": "1000m"},
        dict(required=HOST, slice_topology=BLOCK, slice_size=1),
        (HOST,),
        {},
    ),
    _tas(
        "slice size is required when slice topology is requested",
        _NODES_3,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        1,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology=HOST),
        (HOST,),
        {},
    ),
    _tas(
        "cannot request not existing slice topology",
        _NODES_3,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        1,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology="not-existing-topology-level", slice_size=1),
        (HOST,),
        {},
    ),
    _tas(
        "no topology for podset; host required for slices; BestFit",
        _NODES_12,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        6,
        {"cpu": "1000m"},
        dict(slice_topology=HOST, slice_size=2),
        (HOST,),
        {"x1": 2, "x3": 2, "x5": 2},
    ),
    _tas(
        "no topology for podset; host required for slices; multiple blocks; BestFit",
        _NODES_2,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        6,
        {"cpu": "1000m"},
        dict(slice_topology=HOST, slice_size=2),
        (HOST,),
        {"x3": 4, "x6": 2},
    ),
    _tas(
        "no topology for podset; rack required for slices; multiple blocks; BestFit",
        _NODES_3,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        4,
        {"cpu": "1000m"},
        dict(slice_topology=RACK, slice_size=2),
        (HOST,),
        {"x1": 1, "x5": 1, "x4": 2},
    ),
    _tas(
        "multi-layer topology: block required; rack slices of 4; host slices of 2; TASMultiLayerTopology",
        _NODES_21,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        8,
        {"cpu": "1000m"},
        dict(required=BLOCK, slices=[(RACK, 4), (HOST, 2)]),
        (HOST,),
        {"x2": 4, "x3": 2, "x4": 2},
    ),
    _tas(
        "multi-layer topology: no feature gate; additional layers ignored",
        _NODES_21,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        8,
        {"cpu": "1000m"},
        dict(required=BLOCK, slice_topology=RACK, slice_size=4),
        (HOST,),
        {"x1": 1, "x2": 3, "x3": 3, "x4": 1},
    ),
    _tas(
        "multi-layer topology: small host kills rack slices despite enough total capacity",
        _NODES_22,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        16,
        {"cpu": "1000m"},
        dict(required=BLOCK, slices=[(RACK, 8), (HOST, 4)]),
        (HOST,),
        {},
    ),
    _tas(
        "multi-layer topology: enough hostname slices but not enough rack slices",
        _NODES_23,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        12,
        {"cpu": "1000m"},
        dict(required=BLOCK, slices=[(RACK, 6), (HOST, 2)]),
        (HOST,),
        {},
    ),
    _tas(
        "stable tie break on identical nodes: TASBalancedPlacement disabled",
        _NODES_24,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        1,
        {"cpu": "1000m"},
        dict(required=HOST),
        (HOST,),
        {"x1": 1},
    ),
    _tas(
        "stable tie break on identical nodes: reversed order, TASBalancedPlacement disabled",
        _NODES_25,
        (
            BLOCK,
            RACK,
            HOST,
        ),
        1,
        {"cpu": "1000m"},
        dict(required=HOST),
        (HOST,),
        {"x1": 1},
    ),
    _tas(
        "only nodes with matching labels are considered; no matching node; BestFit",
        _ZONE_A_X3,
        (HOST,),
        1,
        {"cpu": "1000m"},
        dict(required=HOST, node_selector={"zone": "zone-b"}),
        (HOST,),
        {},
    ),
    _tas(
        "host required; single Pod fits in the host; BestFit; TASProfileMixed",
        _NODES_3,
        (BLOCK, RACK, HOST),
        1,
        {"cpu": "1000m"},
        dict(required=HOST),
        (HOST,),
        {"x3": 1},
    ),
    _tas(
        "host preferred; single Pod fits in the host; BestFit; TASProfileMixed",
        _NODES_3,
        (BLOCK, RACK, HOST),
        1,
        {"cpu": "1000m"},
        dict(required=HOST),  # upstream's request is required, whatever the case's name says
        (HOST,),
        {"x3": 1},
    ),
    _tas(
        "unconstrained; a single pod fits into each host; LeastFreeCapacity; TASProfileMixed",
        _NODES_3,
        (BLOCK, RACK, HOST),
        1,
        {"cpu": "1000m"},
        dict(unconstrained=True),
        (HOST,),
        {"x3": 1},
    ),
    _tas(
        "no assignment as node is unschedulable; BestFit",
        [
            node(
                "b1-r1-x3",
                {"zone": "zone-a", HOST: "x3"},
                allocatable=_SMALL,
                hostname=False,
                unschedulable=True,
            )
        ],
        (HOST,),
        1,
        {"cpu": "1000m"},
        dict(required=HOST, node_selector={"zone": "zone-a"}),
        (HOST,),
        {},
    ),
    _tas(
        "skip node which has untolerated taint; BestFit",
        [node("x3", {"zone": "zone-a", HOST: "x3"}, allocatable=_SMALL, hostname=False, taints=[_GPU_TAINT])],
        (HOST,),
        1,
        {"cpu": "1000m"},
        dict(required=HOST, node_selector={"zone": "zone-a"}),
        (HOST,),
        {},
    ),
    _tas(
        "allow to schedule on node with tolerated taint; BestFit",
        [
            node(
                "b1-r1-x3",
                {"zone": "zone-a", HOST: "x3"},
                allocatable=_SMALL,
                hostname=False,
                taints=[_GPU_TAINT],
            )
        ],
        (HOST,),
        1,
        {"cpu": "1000m"},
        dict(
            required=HOST,
            node_selector={"zone": "zone-a"},
            tolerations=[toleration("example.com/gpu", "present", operator="Equal")],
        ),
        (HOST,),
        {"x3": 1},
    ),
    _tas(
        "no assignment as node does not have enough allocatable pods (.status.allocatable['pods']); BestFit",
        [_node("b1-r1-x3", {"zone": "zone-a", HOST: "x3"}, {"cpu": "1000m", "pods": "1"})],
        (HOST,),
        1,
        {"cpu": "300m"},
        dict(required=HOST, node_selector={"zone": "zone-a"}),
        (HOST,),
        {},
        others=[_other("test-running", "300m", on="b1-r1-x3", phase="Running")],
    ),
    _tas(
        "don't consider unscheduled Pods when computing capacity; BestFit",
        _X3,
        (HOST,),
        1,
        {"cpu": "600m"},
        dict(required=HOST),
        (HOST,),
        {"x3": 1},
        others=[_other("test-unscheduled", "600m")],
    ),
    _tas(
        "don't consider terminal pods when computing the capacity; BestFit",
        _X3,
        (HOST,),
        1,
        {"cpu": "600m"},
        dict(required=HOST),
        (HOST,),
        {"x3": 1},
        others=[
            _other("test-failed", "600m", on="x3", phase="Failed"),
            _other("test-succeeded", "600m", on="x3", phase="Succeeded"),
        ],
    ),
    _tas(
        "include usage from pending scheduled non-TAS pods, blocked assignment; BestFit",
        _X3,
        (HOST,),
        1,
        {"cpu": "600m"},
        dict(required=HOST),
        (HOST,),
        {},
        others=[_other("test-pending", "600m", on="x3", phase="Pending")],
    ),
    _tas(
        "include usage from running non-TAS pods, blocked assignment; BestFit",
        _X3,
        (HOST,),
        1,
        {"cpu": "600m"},
        dict(required=HOST),
        (HOST,),
        {},
        others=[_other("test-running", "600m", on="x3", phase="Running")],
    ),
    _tas(
        "node allocatable capacity completely used by non-TAS pod; empty remainingCapacity",
        [_node("x3", {HOST: "x3"}, {"cpu": "1", "pods": "1"})],
        (HOST,),
        1,
        {"cpu": "100m"},
        dict(required=HOST),
        (HOST,),
        {},
        others=[_other("running1", "1", on="x3", phase="Running")],
    ),
    _tas(
        "include usage from running non-TAS pods, found free capacity on another node; BestFit",
        [*_X3, _node("x5", {HOST: "x5"}, _SMALL)],
        (HOST,),
        1,
        {"cpu": "600m"},
        dict(required=HOST),
        (HOST,),
        {"x5": 1},
        others=[_other("test-pod", "600m", on="x3")],
    ),
    _tas(
        "multi-layer topology: host slice rounding makes rack slice impossible",
        _NODES_26,
        (BLOCK, RACK, HOST),
        6,
        {"cpu": "1000m"},
        dict(required=BLOCK, slices=[(RACK, 6), (HOST, 2)]),
        (HOST,),
        {},
    ),
    _tas(
        "multi-layer topology: 3-layer negative case with small hosts cascading up",
        _NODES_27,
        (DC, BLOCK, RACK, HOST),
        24,
        {"cpu": "1000m"},
        dict(required=DC, slices=[(BLOCK, 12), (RACK, 6), (HOST, 3)]),
        (HOST,),
        {},
    ),
]


def _group(
    case: str,
    nodes: list[Obj],
    levels: tuple[str, ...],
    request: dict[str, object],
    leader: dict[str, str],
    workers: tuple[int, dict[str, str]],
    want_levels: tuple[str, ...],
    counts: dict[str, int],
    others: Sequence[Obj] = (),
) -> Row:
    """Upstream's leader and workers pod sets sharing a `podset-group-name`, as the pods of one
    LeaderWorkerSet group (Kueue's LWS integration): the leader (worker index 0) and `workers`
    (count, requests), every template carrying the same TAS request. `counts` adds up the
    leader's and the workers' assignments."""
    count, worker_requests = workers
    annotations = {
        **_annotations(**request),  # type: ignore[arg-type]
        kueue.GROUP_NAME: "same-group",
        lws.SIZE_ANNOTATION: str(count + 1),
    }
    pods = [
        pod(
            f"serve-0-{i}" if i else "serve-0",
            labels={lws.NAME_LABEL: "serve", lws.GROUP_INDEX_LABEL: "0", lws.WORKER_INDEX_LABEL: str(i)},
            annotations=annotations,
            requests=dict(worker_requests if i else leader),
        )
        for i in range(count + 1)
    ]
    return Row(
        "KueueTAS",
        UPSTREAM,
        case,
        [*nodes, _topology(levels), *others],
        pods,
        Counts(want_levels, counts),
        repo="kubernetes-sigs/kueue",
    )


def _plain(
    name: str, labels: dict[str, str], cpu: str, gpu: str | None = None, memory: str | None = None
) -> Obj:
    """A node of the grouped pod-set cases (`example.com/gpu` and memory where upstream sets them)."""
    alloc = {"cpu": cpu, "pods": "10"}
    if gpu is not None:
        alloc[GPU] = gpu
    if memory is not None:
        alloc["memory"] = memory
    return _node(name, labels, alloc)


GPU = "example.com/gpu"
_SIZES = {"small-used": "2800m", "small-free": "2800m", "large-free": "6"}
_SMALL_LARGE = [
    _plain(name, {BLOCK: "b1", RACK: name.split("-")[0], HOST: name}, cpu) for name, cpu in _SIZES.items()
]
_FILLER = [_other("filler", "2500m", on="small-used", phase="Running")]
_BLOCKS_GPU = [
    _plain("b1", {BLOCK: "b1"}, "2", "2", "2Gi"),
    _plain("b2", {BLOCK: "b2"}, "5", "4"),
    _plain("b3", {BLOCK: "b3"}, "2", "2"),
]
_RACK_HOSTS = [_plain(h, {RACK: "r1", HOST: h}, cpu) for h, cpu in (("h1", "2"), ("h2", "4"), ("h3", "3"))]
_SIX_HOSTS = [
    _plain(f"{b}-{r}-{x}", {BLOCK: b, RACK: r, HOST: x}, cpu, "1")
    for b, r, x, cpu in (
        ("b1", "r1", "x3", "2"),
        ("b1", "r1", "x5", "2"),
        ("b1", "r1", "x1", "2"),
        ("b2", "r4", "x6", "1"),
        ("b2", "r5", "x2", "2"),
        ("b2", "r6", "x4", "2"),
    )
]
_EIGHT_HOSTS = [
    _plain(f"{b}-{r}-{x}", {BLOCK: b, RACK: r, HOST: x}, "1", "1")
    for b, r, x in (
        ("b1", "r1", "x3"),
        ("b1", "r1", "x5"),
        ("b1", "r2", "x1"),
        ("b1", "r2", "x6"),
        ("b2", "r3", "x2"),
        ("b2", "r3", "x4"),
        ("b2", "r4", "x7"),
        ("b2", "r4", "x8"),
    )
]
_CPU1 = {"cpu": "1000m"}
_CPU1_GPU1 = {"cpu": "1000m", GPU: "1"}

GROUP_ROWS = [
    _group(
        "find topology assignment for two podsets with the same group",
        _BLOCKS_GPU,
        (BLOCK,),
        dict(required=BLOCK),
        _CPU1,
        (4, _CPU1_GPU1),
        (BLOCK,),
        {"b2": 5},
    ),
    _group(
        "find topology assignment for grouped podsets preserves worker capacity when placing leader",
        _RACK_HOSTS,
        (RACK, HOST),
        dict(required=RACK),
        _CPU1,
        (4, {"cpu": "2000m"}),
        (HOST,),
        {"h1": 1, "h2": 2, "h3": 2},
    ),
    _group(
        "find topology assignment for preferred grouped podsets preserves capacity across domains",
        [_plain("h1", {HOST: "h1"}, "8"), _plain("h2", {HOST: "h2"}, "3")],
        (HOST,),
        dict(preferred=HOST),
        _CPU1,
        (5, {"cpu": "2000m"}),
        (HOST,),
        {"h1": 4, "h2": 2},
    ),
    _group(
        "find topology assignment for two podsets with the same group with domains that can tightly fit leader and workers",
        [
            _plain("b1", {BLOCK: "b1"}, "2", "2"),
            _plain("b2", {BLOCK: "b2"}, "8", "8"),
            _plain("b3", {BLOCK: "b3"}, "2", "2"),
        ],
        (BLOCK,),
        dict(required=BLOCK),
        _CPU1,
        (4, {"cpu": "1000m", GPU: "2"}),
        (BLOCK,),
        {"b2": 5},
    ),
    _group(
        "find topology assignment for grouped podsets skips domain where only workers fit without leader",
        _SMALL_LARGE,
        (BLOCK, RACK, HOST),
        dict(required=RACK),
        {"cpu": "2500m"},
        (1, {"cpu": "2500m"}),
        (HOST,),
        {"large-free": 2},
        others=_FILLER,
    ),
    _group(
        "find topology assignment for grouped podsets skips domain where mixed-size workers only fit without leader",
        _SMALL_LARGE,
        (BLOCK, RACK, HOST),
        dict(required=RACK),
        {"cpu": "2500m"},
        (2, {"cpu": "500m"}),
        (HOST,),
        {"large-free": 3},
        others=_FILLER,
    ),
    _group(
        "find topology assignment for grouped podsets keeps tight domain when leader and workers fit together",
        _SMALL_LARGE,
        (BLOCK, RACK, HOST),
        dict(required=RACK),
        _CPU1,
        (1, _CPU1),
        (HOST,),
        {"small-free": 2},
        others=_FILLER,
    ),
    _group(
        "find topology assignment for two podsets with the same group - no fit",
        [_plain("b1", {BLOCK: "b1"}, "1", "0"), _plain("b2", {BLOCK: "b2"}, "4", "4")],
        (BLOCK,),
        dict(required=BLOCK),
        _CPU1,
        (4, _CPU1_GPU1),
        (BLOCK,),
        {},
    ),
    _group(
        "find topology assignment for two podsets with the same group - optimizes domain for both leader and workers",
        [_plain("b1", {BLOCK: "b1"}, "11", "8"), _plain("b2", {BLOCK: "b2"}, "4", "4")],
        (BLOCK,),
        dict(required=BLOCK),
        _CPU1,
        (4, _CPU1_GPU1),
        (BLOCK,),
        {"b1": 5},
    ),
    _group(
        "find topology assignment for two podsets with the same group - leader does not fit anywhere",
        [_plain("b1", {BLOCK: "b1"}, "4", "4"), _plain("b2", {BLOCK: "b2"}, "4", "4")],
        (BLOCK,),
        dict(required=BLOCK),
        {"cpu": "10000m"},
        (4, _CPU1_GPU1),
        (BLOCK,),
        {},
    ),
    _group(
        "find topology assignment for two podsets with the same group - multiple hosts",
        _SIX_HOSTS,
        (BLOCK, RACK, HOST),
        dict(required=BLOCK),
        {"cpu": "2000m"},
        (2, _CPU1_GPU1),
        (HOST,),
        {"x1": 1, "x3": 1, "x5": 1},
    ),
    _group(
        "find topology assignment for two podsets with the same group requesting same resources and nodes in the same rack",
        _EIGHT_HOSTS,
        (BLOCK, RACK, HOST),
        dict(required=BLOCK),
        _CPU1_GPU1,
        (2, _CPU1_GPU1),
        (HOST,),
        {"x3": 1, "x5": 1, "x1": 1},
    ),
]

ROWS += GROUP_ROWS
