"""The worked examples the translation tests start from, written out as plain objects.

* The 12-node spine/block cluster of Koordinator's network-topology guide: spine-0 holds
  block-0 (node-0..2) and block-1 (node-3, node-4); spine-1 holds block-2 (node-5, node-6) and
  block-3 (node-7, node-8); spine-2 holds block-4 (node-9..11). 8 CPU / 32 GiB each.
* The 2-node cluster of the job-level preemption guide: cn-beijing.1 and cn-beijing.2, 4 CPU /
  16 GiB, no topology labels.
* The guide's PodGroups and pods.
"""

from __future__ import annotations

import json
from typing import Any

from translations import koordinator as koord
from translations.core import Node, Pod

JsonDict = dict[str, Any]

SPINE_KEY = "network.topology.nvidia.com/spine"
BLOCK_KEY = "network.topology.nvidia.com/block"

SEED_LAYOUT: dict[str, tuple[str, str]] = {
    **{f"node-{i}": ("spine-0", "block-0") for i in (0, 1, 2)},
    **{f"node-{i}": ("spine-0", "block-1") for i in (3, 4)},
    **{f"node-{i}": ("spine-1", "block-2") for i in (5, 6)},
    **{f"node-{i}": ("spine-1", "block-3") for i in (7, 8)},
    **{f"node-{i}": ("spine-2", "block-4") for i in (9, 10, 11)},
}


def node(
    name: str, labels: dict[str, str] | None = None, *, cpu: str = "8", memory: str = "32Gi"
) -> JsonDict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
    }


def seed_nodes() -> list[JsonDict]:
    return [node(n, {SPINE_KEY: s, BLOCK_KEY: b}) for n, (s, b) in SEED_LAYOUT.items()]


def seed_cnt() -> JsonDict:
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "ClusterNetworkTopology",
        "metadata": {"name": "default"},
        "spec": {
            "networkTopologySpec": [
                {"labelKey": [SPINE_KEY], "topologyLayer": "SpineLayer"},
                {"labelKey": [BLOCK_KEY], "parentTopologyLayer": "SpineLayer", "topologyLayer": "BlockLayer"},
                {"parentTopologyLayer": "BlockLayer", "topologyLayer": "NodeTopologyLayer"},
            ]
        },
    }


def preemption_nodes() -> list[JsonDict]:
    return [node("cn-beijing.1", cpu="4", memory="16Gi"), node("cn-beijing.2", cpu="4", memory="16Gi")]


def parse_nodes(raw: list[JsonDict]) -> list[Node]:
    return [Node.parse(n) for n in raw]


def cnt(raw: JsonDict | None = None) -> koord.ClusterNetworkTopology:
    return koord.ClusterNetworkTopology.parse(raw or seed_cnt())


def gather(*rules: tuple[str, str] | tuple[str, str, int]) -> str:
    items = []
    for rule in rules:
        item: JsonDict = {"layer": rule[0], "strategy": rule[1]}
        if len(rule) == 3:
            item["podCountMultiple"] = rule[2]
        items.append(item)
    return json.dumps({"gatherStrategy": items}, indent=2)


def sigs_pod_group(
    name: str, min_member: int, annotations: dict[str, str] | None = None, **spec: Any
) -> JsonDict:
    meta: JsonDict = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": {"minMember": min_member, **spec},
    }


def seed_pod_groups() -> list[JsonDict]:
    """Example 1 (PreferGather block + spine), Example 2 (MustGather spine), and the
    job-level preemption guide's plain gang."""
    return [
        sigs_pod_group(
            "topology-demo-job",
            4,
            {
                koord.NETWORK_TOPOLOGY_SPEC: gather(
                    ("BlockLayer", "PreferGather"), ("SpineLayer", "PreferGather")
                )
            },
            scheduleTimeoutSeconds=300,
        ),
        sigs_pod_group(
            "high-priority-training",
            4,
            {koord.NETWORK_TOPOLOGY_SPEC: gather(("SpineLayer", "MustGather"))},
            scheduleTimeoutSeconds=300,
        ),
        sigs_pod_group("hp-training-job", 2, scheduleTimeoutSeconds=300),
    ]


def member_pod(
    name: str,
    group: str,
    *,
    index: int | None = None,
    priority_class: str | None = None,
    cpu: str = "8",
    memory: str = "32Gi",
    label_key: str = koord.SIGS_POD_GROUP_LABEL,
) -> JsonDict:
    annotations = {koord.NETWORK_TOPOLOGY_INDEX: str(index)} if index is not None else {}
    spec: JsonDict = {
        "schedulerName": "koord-scheduler",
        "containers": [
            {
                "name": "curlimage",
                "image": "busybox",
                "resources": {
                    "requests": {"cpu": cpu, "memory": memory},
                    "limits": {"cpu": cpu, "memory": memory},
                },
            }
        ],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
        spec["preemptionPolicy"] = "PreemptLowerPriority"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {label_key: group},
            "annotations": annotations,
        },
        "spec": spec,
    }


def seed_member_pods() -> list[JsonDict]:
    return [
        *(member_pod(f"training-pod-{i}", "topology-demo-job", index=i) for i in range(4)),
        *(
            member_pod(
                f"hp-training-pod-{i}", "high-priority-training", index=i, priority_class="high-priority"
            )
            for i in range(4)
        ),
        *(
            member_pod(
                f"hp-worker-{i}", "hp-training-job", priority_class="high-priority", cpu="3", memory="40Mi"
            )
            for i in (1, 2)
        ),
    ]


def parse_pods(raw: list[JsonDict]) -> list[Pod]:
    return [Pod.parse(p) for p in raw]
