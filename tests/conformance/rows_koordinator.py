"""Koordinator's network-topology gang tables, checked by where pods land.

`pkg/scheduler/plugins/coscheduling/core` (koordinator-sh/koordinator commit a7a1b76b):

* `network_topology_workflow_test.go` `TestPodGroupManager_NetworkTopology`: a gang of the
  `scheduling.sigs.k8s.io` PodGroup `gangA` (here `gang-a`: a stored name is lowercase) with a `network-topology-spec`, over the fake
  ClusterNetworkTopology (spine > block > node, two nodes of 16 CPU per block); upstream's fact
  is the planned node of every pod (`wantPlannedPodToNode`). The cases that fail and preempt
  ("schedule failure, preempt success/failure") are preemption's table, not placement's.
* `network_topology_solver_test.go` `TestDistributeOfferSlot_WithPodCountMultiple`: how a
  gang's pods are shared out over one spine's nodes (offer slots 5, 7, 6, 4). Only the case
  whose whole desired count fits ("no slot multiple constraint") is a gang placement; the
  others ask for more pods than the multiples allow and check the partial share, which a
  gang never takes; its fact is pods per node (`Counts`). The comparator and helper tests of
  that file decide no placement.
"""

from __future__ import annotations

import json

from conformance.harness import Counts, Lands, Obj, Row
from conformance.objects import HOSTNAME, node, pod

WORKFLOW = "pkg/scheduler/plugins/coscheduling/core/network_topology_workflow_test.go:TestPodGroupManager_NetworkTopology"
SOLVER = (
    "pkg/scheduler/plugins/coscheduling/core/network_topology_solver_test.go:"
    "TestDistributeOfferSlot_WithPodCountMultiple"
)
SPINE = "network.topology.nvidia.com/spine"
BLOCK = "network.topology.nvidia.com/block"
POD_GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io"
SPEC_ANNOTATION = "gang.scheduling.koordinator.sh/network-topology-spec"

CNT: Obj = {
    "apiVersion": "scheduling.koordinator.sh/v1alpha1",
    "kind": "ClusterNetworkTopology",
    "metadata": {"name": "default"},
    "spec": {
        "networkTopologySpec": [
            {"labelKey": [SPINE], "topologyLayer": "SpineLayer"},
            {"labelKey": [BLOCK], "parentTopologyLayer": "SpineLayer", "topologyLayer": "BlockLayer"},
            {"parentTopologyLayer": "BlockLayer", "topologyLayer": "NodeTopologyLayer"},
        ]
    },
}

# The fake topology's nodes, in upstream's order: s1 = b1 (node-8, node-1) + b2 (node-7, node-2),
# s2 = b3 (node-6, node-3) + b4 (node-5, node-4).
_PLACES = [
    ("node-8", "s1", "b1"),
    ("node-1", "s1", "b1"),
    ("node-7", "s1", "b2"),
    ("node-2", "s1", "b2"),
    ("node-6", "s2", "b3"),
    ("node-3", "s2", "b3"),
    ("node-5", "s2", "b4"),
    ("node-4", "s2", "b4"),
]
FAKE_NODES = [
    node(name, {SPINE: spine, BLOCK: block}, allocatable={"cpu": "16", "pods": "110"}, hostname=False)
    for name, spine, block in _PLACES
]


def _gang(strategy: str, count: int, min_member: int) -> list[Obj]:
    """PodGroup gang-a gathering at BlockLayer then SpineLayer with `strategy`."""
    rules = [{"layer": layer, "strategy": strategy} for layer in ("BlockLayer", "SpineLayer")]
    return [
        {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {
                "name": "gang-a",
                "namespace": "default",
                "annotations": {SPEC_ANNOTATION: json.dumps({"gatherStrategy": rules})},
            },
            "spec": {"minMember": min_member},
        }
    ]


def _pending(count: int, cpu: str) -> list[Obj]:
    return [
        pod(f"pending-pod-{i}", labels={POD_GROUP_LABEL: "gang-a"}, requests={"cpu": cpu}, priority=1000)
        for i in range(1, count + 1)
    ]


def _workflow(case: str, strategy: str, count: int, cpu: str, planned: dict[str, str]) -> Row:
    return Row(
        "Coscheduling",
        WORKFLOW,
        case,
        [*FAKE_NODES, CNT, *_gang(strategy, 1, count)],
        _pending(count, cpu),
        Lands(planned),
        repo="koordinator-sh/koordinator",
    )


WORKFLOW_ROWS = [
    _workflow(
        "scheduled, prefer gather",
        "PreferGather",
        4,
        "16",
        {
            "pending-pod-1": "node-1",
            "pending-pod-2": "node-8",
            "pending-pod-3": "node-2",
            "pending-pod-4": "node-7",
        },
    ),
    _workflow(
        "scheduled, must gather",
        "MustGather",
        2,
        "16",
        {"pending-pod-1": "node-1", "pending-pod-2": "node-8"},
    ),
    _workflow(
        "scheduled, all pods to one node",
        "PreferGather",
        2,
        "8",
        {"pending-pod-1": "node-1", "pending-pod-2": "node-1"},
    ),
]

# The solver's spine s1: b1 = n1 (5 slots), n2 (7); b2 = n3 (6), n4 (4); one-CPU pods.
_SOLVER_NODES = [
    node(name, {SPINE: "s1", BLOCK: block}, allocatable={"cpu": cpu, "pods": "110"})
    for name, block, cpu in (("n1", "b1", "5"), ("n2", "b1", "7"), ("n3", "b2", "6"), ("n4", "b2", "4"))
]


def _solver_row() -> Row:
    rules = [{"layer": "SpineLayer", "strategy": "MustGather"}]
    group: Obj = {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {
            "name": "gang-a",
            "namespace": "default",
            "annotations": {SPEC_ANNOTATION: json.dumps({"gatherStrategy": rules})},
        },
        "spec": {"minMember": 15},
    }
    pods = [pod(f"p{i:02d}", labels={POD_GROUP_LABEL: "gang-a"}, requests={"cpu": "1"}) for i in range(15)]
    return Row(
        "Coscheduling",
        SOLVER,
        "no slot multiple constraint",
        [*_SOLVER_NODES, CNT, group],
        pods,
        Counts((HOSTNAME,), {"n1": 5, "n2": 7, "n3": 3}),
        repo="koordinator-sh/koordinator",
    )


ROWS = [*WORKFLOW_ROWS, _solver_row()]
