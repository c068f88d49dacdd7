"""Gang preemption: kube-scheduler's workload-aware preemption integration table and Volcano's
topology-aware preempt table, as `Lands` rows (who is evicted, where the preemptors land).

* `test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go:
  TestPodGroupPreemption` (kubernetes, the scheduling.k8s.io/v1beta1 PodGroup version): a
  PodGroup with `minCount` is written as a Volcano PodGroup with that minMember (topobridge
  reads the same gang rule from either); a `BasicPolicy` group (no gang) as plain pods. The
  initial pods are bound as the scheduler bound them. The rows that need Kubernetes' own
  PodGroup (`disruptionMode`, `preemptionPolicy`, `basic` groups, a topology key) use it
  (`KUBE_PG_ROWS`). Left out: rows driven by a preset score plugin or a mock Reserve plugin,
  the pod-level-resources row, and rows whose fact is "one pod of the group, whichever".
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


# --- the same table's rows on Kubernetes' own PodGroups (scheduling.k8s.io/v1beta1) -------------


def _kpg(
    name: str,
    min_count: int | None,
    priority: int,
    *,
    disruption: str | None = None,
    policy: str | None = None,
    key: str | None = None,
) -> Obj:
    """A kube PodGroup: `gang.minCount` (None: `basic`), its priority, `disruptionMode`
    (`all`/`single`), `preemptionPolicy` and a topology key."""
    spec: Obj = {
        "schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}},
        "priority": priority,
    }
    if disruption is not None:
        spec["disruptionMode"] = {disruption: {}}
    if policy is not None:
        spec["preemptionPolicy"] = policy
    if key is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _kpod(
    name: str, group: str | None, priority: int, on: str | None = None, cpu: str = "1", **kw: Any
) -> Obj:
    """A pod of kube PodGroup `group` (None: none) asking `cpu`, bound to `on` when given."""
    if group is not None:
        kw["schedulingGroup"] = {"podGroupName": group}
    return pod(name, node_name=on, requests={"cpu": cpu}, priority=priority, **kw)


def _nodes(cpu: str, *names: str, **labels: dict[str, str]) -> list[Obj]:
    return [node(n, labels.get(n), allocatable={"cpu": cpu, "memory": "4Gi", "pods": "32"}) for n in names]


ONE_TO_FOUR = ("node1", "node2", "node3", "node4")
ANY_OF_2 = frozenset({"node1", "node2"})
HOST = "kubernetes.io/hostname"


def _reprieve_group(preemptor_min: int | None) -> list[Obj]:
    """Three 1-CPU nodes: an `all` group of two at priority 50, a lone pod at 10."""
    return [
        *_nodes("1", "node1", "node2", "node3"),
        _kpg("victim-pg", 1, 50, disruption="all"),
        _kpg("preemptor-pg", preemptor_min, 100),
        _kpod("v1", "victim-pg", 50, "node1"),
        _kpod("v2", "victim-pg", 50, "node2"),
        _kpod("v3", None, 10, "node3"),
    ]


def _group_victim_not_full(preemptor_min: int | None) -> list[Obj]:
    """Four 1-CPU nodes: an `all` group at 50 on node1-2, one at 200 on node3-4."""
    return [
        *_nodes("1", *ONE_TO_FOUR),
        _kpg("victim-pg", 2, 50, disruption="all"),
        _kpg("victim-pg2", 2, 200, disruption="all"),
        _kpg("preemptor-pg", preemptor_min, 100, disruption="all"),
        _kpod("v1", "victim-pg", 50, "node1"),
        _kpod("v2", "victim-pg", 50, "node2"),
        _kpod("v3", "victim-pg2", 200, "node3"),
        _kpod("v4", "victim-pg2", 200, "node4"),
    ]


def _three(group: str, prefix: str = "p-", names: tuple[str, ...] = ("a", "b", "c"), **kw: Any) -> list[Obj]:
    return [_kpod(f"{prefix}{n}", group, 100, **kw) for n in names]


def _spread_pod(name: str) -> Obj:
    spread = {
        "maxSkew": 2,
        "topologyKey": HOST,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "foo"}},
        "minDomains": 10,
    }
    return _kpod(
        name,
        "preemptor-pg",
        100,
        labels={"app": "foo"},
        nodeSelector={HOST: "node1"},
        topologySpreadConstraints=[spread],
    )


def _anti_app() -> Obj:
    term = {
        "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
        "topologyKey": HOST,
    }
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _port(obj: Obj) -> Obj:
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    return obj


def _policy_rows() -> list[Row]:
    base = [*_nodes("3", "node1"), *(_kpod(f"low-{i}", None, 10, "node1") for i in (1, 2, 3))]
    kept = {**{f"low-{i}": "node1" for i in (1, 2, 3)}, **{f"high-{i}": None for i in (1, 2, 3)}}
    taken = {**{f"low-{i}": EVICTED for i in (1, 2, 3)}, **{f"high-{i}": "node1" for i in (1, 2, 3)}}
    highs = [_kpod(f"high-{i}", "pg1", 100) for i in (1, 2, 3)]
    never = [_kpod(f"high-{i}", "pg1", 100, preemptionPolicy="Never") for i in (1, 2, 3)]
    suffix = "preemption policy performs preemption, with PodGroupPreemptionPolicy enabled"
    return [
        _pg(
            "PodGroup with PreemptNever preemption policy does not perform preemption, "
            "with PodGroupPreemptionPolicy enabled",
            [*base, _kpg("pg1", 3, 100, policy="Never")],
            never,
            kept,
        ),
        _pg(
            f"PodGroup with PreemptLowerPriority {suffix}",
            [*base, _kpg("pg1", 3, 100, policy="PreemptLowerPriority")],
            highs,
            taken,
        ),
        _pg(f"PodGroup with default {suffix}", [*base, _kpg("pg1", 3, 100)], highs, taken),
        _pg(
            "PodGroup with PreemptNever preemption policy in all pods does not perform preemption, "
            "with PodGroupPreemptionPolicy disabled",
            [*base, _kpg("pg1", 3, 100)],
            never,
            kept,
        ),
    ]


def _filter_rows() -> list[Row]:
    two = _nodes("2", "node1", "node2")
    wide = _nodes("16", "node1", "node2")
    pg = _kpg("preemptor-pg", 2, 100)
    initial = _kpod("initial-pod", None, 10, "node1", "250m", labels={"app": "initial"})
    both = {"preemptor-1": ANY_OF_2, "preemptor-2": ANY_OF_2, "initial-pod": EVICTED}
    return [
        _pg(
            "Gang scheduling: preemption with node resources",
            [*two, pg, _kpod("initial-pod", None, 10, "node1", "2", labels={"app": "initial"})],
            [_kpod(f"preemptor-{i}", "preemptor-pg", 100, cpu="2") for i in (1, 2)],
            both,
        ),
        _pg(
            "Gang scheduling: preemption with node resources, prioritizes reprieval of higher priority pods",
            [*two, pg, _kpod("initial-pod-1", None, 5, "node1"), _kpod("initial-pod-2", None, 10, "node1")],
            [_kpod(f"preemptor-{i}", "preemptor-pg", 100, nodeSelector={HOST: f"node{i}"}) for i in (1, 2)],
            {
                "preemptor-1": "node1",
                "preemptor-2": "node2",
                "initial-pod-1": EVICTED,
                "initial-pod-2": "node1",
            },
        ),
        _pg(
            "Gang scheduling: preemption with pod anti-affinity constraints",
            [*two, pg, initial],
            [_kpod(f"preemptor-{i}", "preemptor-pg", 100, cpu="1500m", affinity=_anti_app()) for i in (1, 2)],
            both,
        ),
        _pg(
            "Gang scheduling: preemption with pod node port",
            [*two, pg, _port(_kpod("initial-pod", None, 10, "node1", "250m"))],
            [_port(_kpod(f"preemptor-{i}", "preemptor-pg", 100, cpu="1500m")) for i in (1, 2)],
            both,
        ),
        _pg(
            "Gang scheduling: preemption with pod topology spread constraints",
            [*wide, pg, _kpod("initial-pod", None, 10, "node1", labels={"app": "foo"})],
            [_spread_pod("preemptor-1"), _spread_pod("preemptor-2")],
            {"preemptor-1": "node1", "preemptor-2": "node1", "initial-pod": EVICTED},
        ),
        _pg(
            "Gang scheduling: preemption with pod topology spread constraints, single reprieve",
            [
                *wide,
                pg,
                _kpod("initial-pod", None, 10, "node1", labels={"app": "foo"}),
                _kpod("initial-pod-2", None, 5, "node2", labels={"app": "foo"}),
            ],
            [_spread_pod("preemptor-1"), _spread_pod("preemptor-2")],
            {
                "preemptor-1": "node1",
                "preemptor-2": "node1",
                "initial-pod": EVICTED,
                "initial-pod-2": "node2",
            },
        ),
    ]


def _topology_rows() -> list[Row]:
    zones = {"node1": {"topology-key": "zone1"}, "node2": {"topology-key": "zone1"}}
    zones |= {"node3": {"topology-key": "zone2"}, "node4": {"topology-key": "zone2"}}
    pg = _kpg("pg1", 2, 100, key="topology-key")
    highs = [_kpod(f"high-{i}", "pg1", 100) for i in (1, 2)]
    won = {"high-1": ANY_OF_2, "high-2": ANY_OF_2, "low-1": EVICTED, "low-2": EVICTED}
    return [
        _pg(
            "Topology-Aware Preemption: single topology domain",
            [
                *_nodes("1", "node1", "node2", **zones),
                pg,
                _kpod("low-1", None, 10, "node1"),
                _kpod("low-2", None, 10, "node2"),
            ],
            highs,
            won,
        ),
        _pg(
            "Topology-Aware Preemption: two topologies, only one eligible",
            [
                *_nodes("1", *ONE_TO_FOUR, **zones),
                pg,
                _kpod("low-1", None, 10, "node1"),
                _kpod("low-2", None, 10, "node2"),
                _kpod("high-priority-initial-1", None, 200, "node3"),
                _kpod("high-priority-initial-2", None, 200, "node4"),
            ],
            highs,
            {**won, "high-priority-initial-1": "node3", "high-priority-initial-2": "node4"},
        ),
        _pg(
            "Topology-Aware Preemption: insufficient capacity across all topologies, no preemption performed",
            [
                *_nodes("1", *ONE_TO_FOUR, **zones),
                pg,
                _kpod("low-1", None, 10, "node1"),
                _kpod("high-priority-initial-1", None, 200, "node2"),
                _kpod("low-2", None, 10, "node3"),
                _kpod("high-priority-initial-2", None, 200, "node4"),
            ],
            highs,
            {"high-1": None, "high-2": None, "low-1": "node1", "low-2": "node3"},
        ),
    ]


KUBE_PG_ROWS = [
    _pg(
        "Preempt the whole basic PodGroup with a PodGroup disruption mode",
        [
            *_nodes("3", "node1"),
            _kpg("pg1", 1, 100),
            _kpg("pg2", None, 10, disruption="all"),
            *(_kpod(f"low-{i}", "pg2", 10, "node1") for i in (1, 2, 3)),
        ],
        [_kpod("high-1", "pg1", 100)],
        {"high-1": "node1", **{f"low-{i}": EVICTED for i in (1, 2, 3)}},
    ),
    _pg(
        "Gang scheduling: do not reprieve victim pod group of lower priority",
        _reprieve_group(3),
        _three("preemptor-pg"),
        {
            "v1": EVICTED,
            "v2": EVICTED,
            "v3": EVICTED,
            **{f"p-{n}": frozenset({"node1", "node2", "node3"}) for n in "abc"},
        },
    ),
    _pg(
        "Basic scheduling: do not reprieve victim pod group of lower priority",
        _reprieve_group(None),
        _three("preemptor-pg"),
        {
            "v1": EVICTED,
            "v2": EVICTED,
            "v3": EVICTED,
            **{f"p-{n}": frozenset({"node1", "node2", "node3"}) for n in "abc"},
        },
    ),
    _pg(
        "Gang scheduling: preempt a pod group victim but do not schedule full pod group",
        _group_victim_not_full(1),
        _three("preemptor-pg"),
        {
            "v1": EVICTED,
            "v2": EVICTED,
            "v3": "node3",
            "v4": "node4",
            "p-a": ANY_OF_2,
            "p-b": ANY_OF_2,
            "p-c": None,
        },
    ),
    _pg(
        "Basic scheduling: preempt a pod group victim but do not schedule full pod group",
        _group_victim_not_full(None),
        _three("preemptor-pg"),
        {
            "v1": EVICTED,
            "v2": EVICTED,
            "v3": "node3",
            "v4": "node4",
            "p-a": ANY_OF_2,
            "p-b": ANY_OF_2,
            "p-c": None,
        },
    ),
    _pg(
        "Basic scheduling: schedule as many pods as possible without preempting higher priority pods",
        [
            *_nodes("1", *ONE_TO_FOUR),
            _kpg("preemptor-pg", None, 100),
            _kpod("p1", None, 10, "node1"),
            _kpod("p2", None, 10, "node2"),
            _kpod("p3", None, 200, "node3"),
            _kpod("p4", None, 200, "node4"),
        ],
        _three("preemptor-pg"),
        {
            "p1": EVICTED,
            "p2": EVICTED,
            "p3": "node3",
            "p4": "node4",
            "p-a": ANY_OF_2,
            "p-b": ANY_OF_2,
            "p-c": None,
        },
    ),
    *_policy_rows(),
    *_filter_rows(),
    *(
        _pg(
            f"Binding first before preemption for {kind} policy",
            [
                *_nodes("4", "node1"),
                _kpg("pg1", minimum, 100),
                _kpod("pg-pod-1", "pg1", 100, "node1"),
                _kpod("pg-pod-2", "pg1", 100, "node1"),
                _kpod("low-1", None, 10, "node1"),
            ],
            [_kpod("high-1", "pg1", 100), _kpod("high-2", "pg1", 100)],
            {
                "pg-pod-1": "node1",
                "pg-pod-2": "node1",
                "high-1": "node1",
                "high-2": "node1",
                "low-1": EVICTED,
            },
        )
        for kind, minimum in (("gang", 2), ("basic", None))
    ),
    *_topology_rows(),
    _pg(
        "Victim-aware scoring: reuse capacity freed across nodes by DisruptionModeAll PodGroup victim",
        [
            *_nodes("2", "node1", "node2", "node3"),
            _kpg("pg-preemptor", 2, 100),
            _kpg("pg-victim", 2, 10, disruption="all"),
            _kpod("v-pg1-1", "pg-victim", 10, "node1", "2"),
            _kpod("v-pg1-2", "pg-victim", 10, "node2", "2"),
            _kpod("v-high", None, 20, "node3", "2"),
        ],
        [_kpod(f"p{i}", "pg-preemptor", 100, cpu="2") for i in (1, 2)],
        {"p1": ANY_OF_2, "p2": ANY_OF_2, "v-high": "node3", "v-pg1-1": EVICTED, "v-pg1-2": EVICTED},
    ),
    _pg(
        "Victim-aware scoring: reuse leftover capacity from large victim on same node",
        [
            *_nodes("4", "node1", "node2"),
            _kpg("pg-preemptor", 2, 100),
            _kpg("pg-victim", 2, 10, disruption="all"),
            _kpod("v-large", None, 10, "node1", "4"),
            _kpod("v-med-1", "pg-victim", 10, "node2", "2"),
            _kpod("v-med-2", "pg-victim", 10, "node2", "2"),
        ],
        [_kpod(f"p{i}", "pg-preemptor", 100, cpu="2") for i in (1, 2)],
        {"p1": "node1", "p2": "node1", "v-large": EVICTED, "v-med-1": "node2", "v-med-2": "node2"},
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

ROWS = [*PG_ROWS, *KUBE_PG_ROWS, *VOLCANO_ROWS]
