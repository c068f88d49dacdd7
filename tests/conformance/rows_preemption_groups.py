"""Gang preemption: kube-scheduler's workload-aware preemption integration table and Volcano's
topology-aware preempt table, as `Lands` rows (who is evicted, where the preemptors land).

* `test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go:
  TestPodGroupPreemption` (kubernetes, the scheduling.k8s.io/v1beta1 PodGroup version): a
  PodGroup with `minCount` is written as a Volcano PodGroup with that minMember (topobridge
  reads the same gang rule from either); a `BasicPolicy` group (no gang) as plain pods. The
  initial pods are bound as the scheduler bound them. Left out: rows driven by a preset score
  plugin, rows whose fact is "one pod of the group, whichever", and the disruption-mode rows
  whose groups are basic.
* `pkg/scheduler/actions/preempt/preempt_test.go:TestTopologyAwarePreempt` (volcano-sh/volcano):
  its PodGroups and pods as built there (job priority from the PodGroup's priorityClassName,
  `volcano.sh/preemptable` as the pod label the table sets); queue `q1` is left out (topobridge
  has no queues), and with it the queue-capacity rows.
"""

from __future__ import annotations

from typing import Any

from conformance.harness import EVICTED, Lands, Obj, Row
from conformance.objects import member, node, pod, pod_affinity, podgroup, priority_class, selector, term

PG = "test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go:TestPodGroupPreemption"
VOLCANO = "pkg/scheduler/actions/preempt/preempt_test.go:TestTopologyAwarePreempt"
PLUGIN = "DefaultPreemption"

CPU1 = {"cpu": "1"}


def _node(name: str, cpu: str, *, pods: str = "32", memory: str = "4Gi") -> Obj:
    return node(name, allocatable={"cpu": cpu, "memory": memory, "pods": pods})


def _low(name: str, on: str, priority: int = 10, cpu: str = "1", **kw: Any) -> Obj:
    return pod(name, node_name=on, requests={"cpu": cpu}, priority=priority, **kw)


def _high(name: str, group: str | None, priority: int = 100, cpu: str = "1") -> Obj:
    if group is None:
        return pod(name, requests={"cpu": cpu}, priority=priority)
    return member(name, group, requests={"cpu": cpu}, priority=priority)


def _pg(case: str, objects: list[Obj], incoming: list[Obj], places: dict[str, Any]) -> Row:
    return Row(PLUGIN, PG, case, objects, incoming, Lands(places), repo="kubernetes/kubernetes")


PG_ROWS = [
    _pg(
        "Full PodGroup Preemption",
        [_node("node1", "3"), podgroup("pg1", 3), *(_low(f"low-{i}", "node1") for i in (1, 2, 3))],
        [_high(f"high-{i}", "pg1") for i in (1, 2, 3)],
        {**{f"high-{i}": "node1" for i in (1, 2, 3)}, **{f"low-{i}": EVICTED for i in (1, 2, 3)}},
    ),
    _pg(
        "Full PodGroup Preemption for basic policy",
        [_node("node1", "3"), *(_low(f"low-{i}", "node1") for i in (1, 2, 3))],
        [_high(f"high-{i}", None) for i in (1, 2, 3)],
        {**{f"high-{i}": "node1" for i in (1, 2, 3)}, **{f"low-{i}": EVICTED for i in (1, 2, 3)}},
    ),
    _pg(
        "Partial Preemption with basic policy",
        [_node("node1", "2"), _node("node2", "2"), _low("low-1", "node1"), _low("very-low-1", "node2", 5)],
        [_high(f"high-{i}", None) for i in (1, 2, 3)],
        {
            "high-1": frozenset({"node1", "node2"}),
            "high-2": frozenset({"node1", "node2"}),
            "high-3": frozenset({"node1", "node2"}),
            "low-1": "node1",
            "very-low-1": EVICTED,
        },
    ),
    _pg(
        "PDB Violation Handling (Reprieve)",
        [
            _node("node1", "3"),
            podgroup("pg1", 2),
            _low("low-1", "node1", labels={"app": "foo"}),
            _low("low-2", "node1", labels={"app": "foo"}),
            _low("low-3", "node1"),
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "foo-pdb", "namespace": "default"},
                "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "foo"}}},
            },
        ],
        [_high("high-1", "pg1", cpu="500m"), _high("high-2", "pg1", cpu="500m")],
        {"high-1": "node1", "high-2": "node1", "low-1": "node1", "low-2": "node1", "low-3": EVICTED},
    ),
    _pg(
        "Multi-node Preemption",
        [
            _node("node1", "2"),
            _node("node2", "2"),
            podgroup("pg1", 4),
            _low("low-1", "node1"),
            _low("low-2", "node1"),
            _low("low-3", "node2"),
            _low("low-4", "node2"),
        ],
        [_high(f"high-{i}", "pg1") for i in (1, 2, 3, 4)],
        {
            **{f"high-{i}": frozenset({"node1", "node2"}) for i in (1, 2, 3, 4)},
            **{f"low-{i}": EVICTED for i in (1, 2, 3, 4)},
        },
    ),
    _pg(
        "Insufficient Resources (No Preemption)",
        [
            _node("node1", "3"),
            podgroup("pg1", 3),
            _low("mid-1", "node1", 500),
            _low("low-1", "node1"),
            _low("low-2", "node1"),
        ],
        [_high(f"high-{i}", "pg1") for i in (1, 2, 3)],
        {
            "mid-1": "node1",
            "low-1": "node1",
            "low-2": "node1",
            "high-1": None,
            "high-2": None,
            "high-3": None,
        },
    ),
    _pg(
        "Priority-based Victim Selection",
        [
            _node("node1", "3"),
            podgroup("pg1", 2),
            _low("mid-1", "node1", 50),
            _low("low-1", "node1"),
            _low("low-2", "node1"),
        ],
        [_high("high-1", "pg1"), _high("high-2", "pg1")],
        {"high-1": "node1", "high-2": "node1", "mid-1": "node1", "low-1": EVICTED, "low-2": EVICTED},
    ),
    _pg(
        "Preempt the whole PodGroup even if preempting a single Pod would suffice",
        [
            _node("node1", "3"),
            podgroup("pg1", 1),
            podgroup("pg2", 3),
            *(member(f"low-{i}", "pg2", node_name="node1", requests=CPU1, priority=10) for i in (1, 2, 3)),
        ],
        [_high("high-1", "pg1")],
        {"high-1": "node1", **{f"low-{i}": EVICTED for i in (1, 2, 3)}},
    ),
    _pg(
        "Gang scheduling: schedule as many pods as possible without preempting higher priority pods, but still more than minCount",
        [
            *(_node(f"node{i}", "1") for i in (1, 2, 3, 4)),
            podgroup("preemptor-pg", 1),
            _low("p1", "node1"),
            _low("p2", "node2"),
            _low("p3", "node3", 200),
            _low("p4", "node4", 200),
        ],
        [_high(name, "preemptor-pg") for name in ("p-a", "p-b", "p-c")],
        {
            "p1": EVICTED,
            "p2": EVICTED,
            "p3": "node3",
            "p4": "node4",
            "p-a": frozenset({"node1", "node2"}),
            "p-b": frozenset({"node1", "node2"}),
            "p-c": None,
        },
    ),
]

PREEMPTABLE = "volcano.sh/preemptable"
HIGH_CLASS, LOW_CLASS = "high-priority", "low-priority"


def _vpg(name: str, min_member: int, klass: str) -> Obj:
    out = podgroup(name, min_member, namespace="c1")
    out["spec"]["priorityClassName"] = klass
    return out


def _vpod(name: str, group: str, on: str | None, cpu: str = "1", mem: str = "1G", **kw: Any) -> Obj:
    requests = {"cpu": cpu, "memory": mem} if cpu != "0" else None
    return member(name, group, namespace="c1", node_name=on, requests=requests, **kw)


def _vnode(cpu: str, mem: str, pods: str, labels: dict[str, str] | None = None) -> Obj:
    return node("n1", labels, allocatable={"cpu": cpu, "memory": mem, "pods": pods})


_CLASSES = [priority_class(HIGH_CLASS, 100000), priority_class(LOW_CLASS, 10)]


def _volcano(case: str, objects: list[Obj], incoming: list[Obj], places: dict[str, Any]) -> Row:
    return Row(
        PLUGIN, VOLCANO, case, [*_CLASSES, *objects], incoming, Lands(places), repo="volcano-sh/volcano"
    )


def _anti(labels: dict[str, str]) -> Obj:
    return pod_affinity(anti=[term("kubernetes.io/hostname", selector(**labels))])


VOLCANO_ROWS = [
    _volcano(
        "do not preempt if there are enough idle resources",
        [
            _vnode("10", "10G", "10"),
            podgroup("pg1", 3, namespace="c1"),
            _vpod("preemptee1", "pg1", "n1"),
            _vpod("preemptee2", "pg1", "n1"),
        ],
        [_vpod("preemptor1", "pg1", None)],
        {"c1/preemptee1": "n1", "c1/preemptee2": "n1"},
    ),
    _volcano(
        "preempt one task of different job to fit both jobs on one node",
        [
            _vnode("2", "2G", "10"),
            _vpg("pg1", 1, LOW_CLASS),
            _vpg("pg2", 1, HIGH_CLASS),
            _vpod("preemptee1", "pg1", "n1", labels={PREEMPTABLE: "true"}),
            _vpod("preemptee2", "pg1", "n1", labels={PREEMPTABLE: "false"}),
        ],
        [_vpod("preemptor1", "pg2", None), _vpod("preemptor2", "pg2", None)],
        {"c1/preemptee1": EVICTED, "c1/preemptee2": "n1"},
    ),
    _volcano(
        "preempt enough tasks to fit large task of different job",
        [
            _vnode("6", "6G", "10"),
            _vpg("pg1", 1, LOW_CLASS),
            _vpg("pg2", 1, HIGH_CLASS),
            _vpod("preemptee1", "pg1", "n1", labels={PREEMPTABLE: "true"}),
            _vpod("preemptee2", "pg1", "n1", labels={PREEMPTABLE: "true"}),
            _vpod("preemptee3", "pg1", "n1", labels={PREEMPTABLE: "false"}),
        ],
        [_vpod("preemptor1", "pg2", None, cpu="5", mem="5G")],
        {"c1/preemptee1": EVICTED, "c1/preemptee2": EVICTED, "c1/preemptee3": "n1"},
    ),
    _volcano(
        "can not preempt resources when task preemption policy is never",
        [
            _vnode("1", "1Gi", "1"),
            _vpg("pg1", 0, LOW_CLASS),
            _vpg("pg2", 1, HIGH_CLASS),
            _vpod("preemptee1", "pg1", "n1", labels={PREEMPTABLE: "true"}),
        ],
        [_vpod("preemptor1", "pg2", None, preemptionPolicy="Never")],
        {"c1/preemptee1": "n1", "c1/preemptor1": None},
    ),
    _volcano(
        "preempt low-priority pod when high-priority pod has PodAntiAffinity conflict",
        [
            _vnode("2", "2Gi", "2", {"kubernetes.io/hostname": "n1"}),
            _vpg("pg1", 0, LOW_CLASS),
            _vpg("pg2", 0, LOW_CLASS),
            _vpg("pg3", 1, HIGH_CLASS),
            _vpod("preemptee1", "pg2", "n1", labels={PREEMPTABLE: "true"}),
            _vpod(
                "preemptee2",
                "pg1",
                "n1",
                labels={PREEMPTABLE: "true", "test": "test"},
                affinity=_anti({PREEMPTABLE: "true", "test": "test"}),
            ),
        ],
        [_vpod("preemptor1", "pg3", None, labels={"test": "test"}, affinity=_anti({"test": "test"}))],
        {"c1/preemptee1": "n1", "c1/preemptee2": EVICTED, "c1/preemptor1": "n1"},
    ),
]

ROWS = [*PG_ROWS, *VOLCANO_ROWS]
