"""kube-scheduler's own PodGroup scheduling cases, as rows: `kubernetes/kubernetes`
`test/integration/scheduler/podgroup/podgroup_test.go`, TestPodGroupScheduling, each row named
`kube:TestPodGroupScheduling/<case>` (the step it checks after `@`).

The fixture is kube's: one node of 4 CPUs, pods asking 1 CPU (the blockers 1 or 2), gang pods
at priority 100, PodGroups `pg1`/`pg2` with `gang.minCount: 3` (`mid-pg`: 2, priority 50) or
`basic`. Kube's steps create objects one after another and wait; a row here gives the objects
present at the step and the outcome kube waits for there (scheduled, unschedulable, removed),
which `simulate` reaches by running the cycle to quiescence. The pods name `topobridge` as
their scheduler (kube's name none: the default scheduler) and ask 1Ki of memory beside the CPU.

Kube orders the two competing gangs by their pods' arrival ("..., reversed order" lets pg2 win);
`simulate` has no arrival order, so both rows hold kube's invariant: one whole gang, no deadlock.

Not ported: "tas gang with constraint does not use pod by pod preemption" and "... does not
use workload preemption": kube 1.37's topology-aware path does not preempt yet; topobridge's
does (the placement with victims is checked as any other), so that outcome does not carry over.
The topology-aware rows choose their rack by kube's placement scoring
(`controller.placer.plugins.topology_placement`): "... with pre-existing pods in cluster" picks
rack-2 (5/6 allocated) over rack-1 (3/4) and rack-3 (4/6).
"""

from __future__ import annotations

from typing import Any

import pytest
from placer_objects import Obj, node, pod, run

CASE = "kube:TestPodGroupScheduling"


def pod_group(name: str, *, min_count: int | None = 3, priority: int | None = 100) -> Obj:
    spec: Obj = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def member(name: str, group: str, *, priority: int = 100) -> Obj:
    obj = pod(name, cpu="1", memory="1Ki", scheduler="topobridge", priority=priority)
    obj["spec"]["schedulingGroup"] = {"podGroupName": group}
    return obj


def blocker(name: str, cpu: str, priority: int) -> Obj:
    return pod(name, cpu=cpu, memory="1Ki", node_name="node", scheduler="other", priority=priority)


NODE = node("node", cpu="4", labels={"topology.kubernetes.io/zone": "zone1"})
P = [member(f"p{i}", "pg1") for i in range(1, 5)]
OTHER = [member(f"other-p{i}", "pg2") for i in range(1, 4)]
BLOCKER, SMALL_BLOCKER, LOW_BLOCKER = (
    blocker("blocker", "2", 100),
    blocker("small-blocker", "1", 100),
    blocker("low-priority-blocker", "2", 10),
)
LOW = [blocker(f"low-p{i}", "1", 10) for i in range(1, 5)]
VERY_LOW = [blocker(f"very-low-p{i}", "1", 5) for i in (1, 2)]
MID = [member(f"mid-p{i}", "mid-pg", priority=50) for i in (1, 2)]


def names(objs: list[Obj]) -> set[str]:
    return {f"default/{o['metadata']['name']}" for o in objs}


ROWS = [
    pytest.param(
        [pod_group("pg1"), *P[:3]],
        names(P[:3]),
        set(),
        id=f"{CASE}/gang schedules when pod group and resources are available@all scheduled",
    ),
    pytest.param(
        [pod_group("pg1"), *P[:2]],
        set(),
        set(),
        id=f"{CASE}/gang waits for quorum to start, then schedules@no quorum",
    ),
    pytest.param(
        [pod_group("pg1"), *P[:3]],
        names(P[:3]),
        set(),
        id=f"{CASE}/gang waits for quorum to start, then schedules@the last pod unblocks",
    ),
    pytest.param(
        [BLOCKER, *P[:3]],
        set(),
        set(),
        id=f"{CASE}/gang waits for pod group, then for resources, then schedules@no PodGroup object",
    ),
    pytest.param(
        [BLOCKER, pod_group("pg1"), *P[:3]],
        set(),
        set(),
        id=f"{CASE}/gang waits for pod group, then for resources, then schedules@blocked by resources",
    ),
    pytest.param(
        [pod_group("pg1"), *P[:3]],
        names(P[:3]),
        set(),
        id=f"{CASE}/gang waits for pod group, then for resources, then schedules@blocker deleted",
    ),
    pytest.param(
        [SMALL_BLOCKER, pod_group("pg1"), *P],
        3,
        set(),
        id=f"{CASE}/minCount is scheduled, but one pod from a gang remain unschedulable@minCount scheduled",
    ),
    pytest.param(
        [pod_group("pg1"), *P],
        names(P),
        set(),
        id=f"{CASE}/minCount is scheduled, but one pod from a gang remain unschedulable@blocker deleted",
    ),
    pytest.param(
        [pod_group("pg1"), pod_group("pg2"), *P[:3], *OTHER],
        "one gang",
        set(),
        id=f"{CASE}/two gangs competing for the same resources shouldn't deadlock@one whole gang",
    ),
    pytest.param(
        [pod_group("pg1"), pod_group("pg2"), *OTHER[::-1], *P[2::-1]],
        "one gang",
        set(),
        id=f"{CASE}/two gangs competing for the same resources shouldn't deadlock, reversed order@one whole gang",
    ),
    pytest.param(
        [LOW_BLOCKER, pod_group("pg1"), *P],
        names(P),
        names([LOW_BLOCKER]),
        id=f"{CASE}/gang schedules with preemption@victim removed",
    ),
    pytest.param(
        [pod_group("pg1", min_count=None, priority=None), P[0]],
        names(P[:1]),
        set(),
        id=f"{CASE}/basic group schedules when pod group and resources are available, without gang enforcement@one pod",
    ),
    pytest.param(
        [pod_group("pg1", min_count=None, priority=None), *P[:3]],
        names(P[:3]),
        set(),
        id=f"{CASE}/basic group schedules when pod group and resources are available, without gang enforcement@more pods",
    ),
    pytest.param(
        [BLOCKER, *P[:3]],
        set(),
        set(),
        id=f"{CASE}/basic group waits for pod group, part of it waits for resources, then schedules@no PodGroup object",
    ),
    pytest.param(
        [BLOCKER, pod_group("pg1", min_count=None, priority=None), *P[:3]],
        2,
        set(),
        id=f"{CASE}/basic group waits for pod group, part of it waits for resources, then schedules@two of three",
    ),
    pytest.param(
        [LOW_BLOCKER, pod_group("pg1", min_count=None, priority=None), *P],
        names(P),
        names([LOW_BLOCKER]),
        id=f"{CASE}/basic group schedules with preemption@victim removed",
    ),
    pytest.param(
        [LOW_BLOCKER, pod_group("pg1", min_count=None, priority=None), *P],
        names(P),
        names([LOW_BLOCKER]),
        id=f"{CASE}/basic group schedules with workload-aware preemption@victim removed",
    ),
    pytest.param(
        [*LOW, pod_group("pg1"), *P],
        names(P),
        names(LOW),
        id=f"{CASE}/gang schedules with workload-aware preemption@victims removed",
    ),
    pytest.param(
        [*VERY_LOW, *LOW[:2], pod_group("mid-pg", min_count=2, priority=50), *MID],
        names(MID),
        names(VERY_LOW),
        id=f"{CASE}/gang schedules with partial workload-aware preemption@very low removed, low kept",
    ),
]


@pytest.mark.parametrize(("objects", "scheduled", "removed"), ROWS)
def test_kube_pod_group_scheduling_cases(objects: list[Obj], scheduled: Any, removed: set[str]) -> None:
    result = run([NODE, *objects], schedulers=("topobridge",))
    bound = set(result.bound)
    if isinstance(scheduled, int):
        assert len(bound) == scheduled, bound
    elif scheduled == "one gang":
        assert bound in (names(P[:3]), names(OTHER)), bound
    else:
        assert bound == scheduled
    assert set(result.evicted) == removed


def test_counts() -> None:
    assert (len(ROWS), len(TAS_ROWS)) == (19, 8)


# --- test/integration/scheduler/podgroup/topology_aware_scheduling/tas_test.go ------------------
# TestTopologyAwareSchedulingWithGangPolicy: nodes of 2 CPUs labelled `rack` and `zone`, pods of
# 1 CPU (large: 2). topobridge's tree gets the two labels as levels from a ClusterNetworkTopology
# (kube reads any label; topobridge's key must be a level of its tree).
TAS = "kube:TestTopologyAwareSchedulingWithGangPolicy"
RACK_CNT: Obj = {
    "apiVersion": "scheduling.koordinator.sh/v1alpha1",
    "kind": "ClusterNetworkTopology",
    "metadata": {"name": "default"},
    "spec": {
        "networkTopologySpec": [
            {"topologyLayer": "ZoneLayer", "labelKey": ["zone"]},
            {"topologyLayer": "RackLayer", "parentTopologyLayer": "ZoneLayer", "labelKey": ["rack"]},
            {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "RackLayer"},
        ]
    },
}


def nodes(spec: dict[str, tuple[str, str]]) -> list[Obj]:
    return [node(n, cpu="2", labels={"rack": r, "zone": z}) for n, (r, z) in spec.items()]


def keyed(name: str, min_count: int) -> Obj:
    pg = pod_group(name, min_count=min_count, priority=None)
    pg["spec"]["schedulingConstraints"] = {"topology": [{"key": "rack"}]}
    return pg


def tas_pod(name: str, group: str, cpu: str = "1") -> Obj:
    obj = pod(name, cpu=cpu, memory="1Ki", scheduler="topobridge", priority=100)
    obj["spec"]["schedulingGroup"] = {"podGroupName": group}
    return obj


def existing(name: str, node_name: str, cpu: str) -> Obj:
    return pod(name, cpu=cpu, memory="1Ki", node_name=node_name, scheduler="other", priority=100)


SIX = {
    "node1-rack1": ("rack-1", "zone-1"),
    "node2-rack1": ("rack-1", "zone-1"),
    "node3-rack1": ("rack-1", "zone-1"),
    "node4-rack2": ("rack-2", "zone-1"),
    "node5-rack2": ("rack-2", "zone-1"),
    "node6-zone2": ("rack-3", "zone-2"),
}
THREE = [tas_pod(f"p{i}", "pg1") for i in (1, 2, 3)]
LARGE = [tas_pod(f"p{i}", "pg1", cpu="2") for i in (1, 2, 3)]
TAS_ROWS = [
    pytest.param(
        [*nodes(SIX), existing("existing1", "node4-rack2", "2"), keyed("pg1", 3), *THREE],
        {"node1-rack1", "node2-rack1", "node3-rack1"},
        id=f"{TAS}/gang schedules on a single rack, when only one feasible rack is available",
    ),
    pytest.param(
        [
            *nodes(
                {
                    "node1-rack1": ("rack-1", "zone-1"),
                    "node2-rack1": ("rack-1", "zone-1"),
                    "node3-rack2": ("rack-2", "zone-1"),
                    "node4-zone2": ("rack-3", "zone-2"),
                }
            ),
            keyed("pg1", 3),
            *LARGE,
        ],
        set(),
        id=f"{TAS}/gang remains pending when no feasible resources are found",
    ),
    pytest.param(
        [
            *nodes({f"node{i}-rack1": ("rack-1", "zone-1") for i in (1, 2, 3)}),
            existing("existing1", "node1-rack1", "2"),
            existing("existing2", "node3-rack1", "2"),
            keyed("pg1", 3),
            *THREE,
        ],
        set(),
        id=f"{TAS}/gang remains pending when resources are consumed by existing pods@unschedulable",
    ),
    pytest.param(
        [
            *nodes({f"node{i}-rack1": ("rack-1", "zone-1") for i in (1, 2, 3)}),
            existing("existing2", "node3-rack1", "2"),
            keyed("pg1", 3),
            *THREE,
        ],
        {"node1-rack1", "node2-rack1"},
        id=f"{TAS}/gang remains pending when resources are consumed by existing pods@existing1 deleted",
    ),
    pytest.param(
        [
            *nodes(
                {
                    "node1-rack1": ("rack-1", "zone-1"),
                    "node2-rack1": ("rack-1", "zone-1"),
                    "node3-rack2": ("rack-2", "zone-2"),
                    "node4-rack2": ("rack-2", "zone-2"),
                    "node5-rack2": ("rack-2", "zone-2"),
                    "node6-rack3": ("rack-3", "zone-2"),
                }
            ),
            keyed("pg1", 3),
            *THREE,
        ],
        {"node1-rack1", "node2-rack1"},
        id=f"{TAS}/gang schedules on a single rack, choosing placement with the highest score in default placement "
        "scoring algorithm",
    ),
    pytest.param(
        [
            *nodes(
                {
                    "node1-rack1": ("rack-1", "zone-1"),
                    "node2-rack1": ("rack-1", "zone-1"),
                    "node3-rack2": ("rack-2", "zone-2"),
                    "node4-rack2": ("rack-2", "zone-2"),
                    "node5-rack2": ("rack-2", "zone-2"),
                    "node6-rack3": ("rack-3", "zone-2"),
                    "node7-rack3": ("rack-3", "zone-2"),
                    "node8-rack3": ("rack-3", "zone-2"),
                    "node9-rack4": ("rack-4", "zone-2"),
                }
            ),
            existing("existing1", "node3-rack2", "2"),
            existing("existing2", "node8-rack3", "1"),
            keyed("pg1", 3),
            *THREE,
        ],
        {"node3-rack2", "node4-rack2", "node5-rack2"},
        id=f"{TAS}/gang schedules on a single rack, choosing placement with highest allocation percentage "
        "(default placement scoring algorithm) with pre-existing pods in cluster",
    ),
    pytest.param(
        [
            *nodes(
                {
                    "node1-rack1": ("rack-1", "zone-1"),
                    "node2-rack1": ("rack-1", "zone-1"),
                    "node3-rack1": ("rack-1", "zone-1"),
                    "node4-rack2": ("rack-2", "zone-1"),
                }
            ),
            keyed("pg1", 2),
            tas_pod("p1", "pg1", cpu="2"),
            tas_pod("p2", "pg1"),
            keyed("pg2", 3),
            *(tas_pod(f"p{i}", "pg2") for i in (3, 4, 5)),
        ],
        {"node1-rack1", "node2-rack1", "node3-rack1"},
        id=f"{TAS}/two gangs schedule consecutively, both on the same rack",
    ),
    pytest.param(
        [
            *nodes(
                {
                    "node1-rack1": ("rack-1", "zone-1"),
                    "node2-rack1": ("rack-1", "zone-1"),
                    "node3-rack1": ("rack-1", "zone-1"),
                    "node4-rack2": ("rack-2", "zone-1"),
                    "node5-rack2": ("rack-2", "zone-1"),
                }
            ),
            keyed("pg1", 3),
            *LARGE,
            keyed("pg2", 2),
            tas_pod("p4", "pg2"),
            tas_pod("p5", "pg2"),
        ],
        {"node1-rack1", "node2-rack1", "node3-rack1", "node4-rack2", "node5-rack2"},
        id=f"{TAS}/two gangs schedule consecutively, each on a separate rack",
    ),
]


@pytest.mark.parametrize(("objects", "on"), TAS_ROWS)
def test_kube_topology_aware_gang_cases(objects: list[Obj], on: set[str]) -> None:
    """`on`: the nodes kube's `verifyAssignments` allows the gang pods (empty: none bound)."""
    result = run([RACK_CNT, *objects], schedulers=("topobridge",))
    pending = {
        f"default/{o['metadata']['name']}"
        for o in objects
        if o["kind"] == "Pod" and "schedulingGroup" in o["spec"]
    }
    assert set(result.bound) == (pending if on else set())
    assert set(result.bound.values()) <= on
    if on:
        racks = {
            o["metadata"]["name"]: o["metadata"]["labels"]["rack"] for o in objects if o["kind"] == "Node"
        }
        for group in ("pg1", "pg2"):
            mine = {n for p, n in result.bound.items() if _group_of(objects, p) == group}
            assert len({racks[n] for n in mine}) <= 1, (group, mine)


def _group_of(objects: list[Obj], pod_key: str) -> str | None:
    name = pod_key.split("/", 1)[1]
    for o in objects:
        if o["kind"] == "Pod" and o["metadata"]["name"] == name:
            return str(o["spec"].get("schedulingGroup", {}).get("podGroupName"))
    return None
