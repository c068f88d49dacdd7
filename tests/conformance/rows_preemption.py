"""DefaultPreemption: kube-scheduler's preemption tables, read at kubernetes commit 008b3652.

* `TestDryRunPreemption` (`Victims`): per node, the victims of SelectVictimsOnNode. The dry
  run asks every node; here each node is asked alone (`adapter.victims_per_node`). Rows that
  test the candidate-count arguments (`MinCandidateNodesPercentage`), the fake Filter plugins,
  or only `NumPDBViolations` for an equal victim set are left out.
* `TestSelectBestCandidate` (`Lands`): the node the preemptor ends on is the candidate
  pickOneNodeForPreemption picks. Start times are whole seconds after the epoch (upstream uses
  nanoseconds; only their order matters).
* `TestPostFilter` (`Lands`): the preemptor lands (or stays pending) and who is evicted. Rows
  driven by extenders, the error-injecting test plugin, the given node statuses or feature
  gates of the alpha PodGroup API are left out.
* Integration `TestPreemption`, `TestNonPreemption`, `TestPDBInPreemption`
  (`test/integration/scheduler/preemption/preemption_test.go`): the existing pods are bound in
  the objects as the scheduler had bound them; the token-filter rows are left out. Priorities
  there are low 100, medium 200, high 300; PodDisruptionBudgets are counted by topobridge the
  way the disruption controller counts them.

Upstream's nodes report `pods: 32` unless a row says otherwise (its node wrapper's default).
"""

from __future__ import annotations

from typing import Any

from conformance.harness import EVICTED, Lands, Obj, Row, Victims
from conformance.objects import node, pod, pod_affinity, req, selector, spread, term

_UNIT = "pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go"
DRY_RUN = f"{_UNIT}:TestDryRunPreemption"
SELECT = f"{_UNIT}:TestSelectBestCandidate"
POST_FILTER = f"{_UNIT}:TestPostFilter"
_INTEGRATION = "test/integration/scheduler/preemption/preemption_test.go"
PREEMPTION = f"{_INTEGRATION}:TestPreemption"
NON_PREEMPTION = f"{_INTEGRATION}:TestNonPreemption"
PDB = f"{_INTEGRATION}:TestPDBInPreemption"
PLUGIN = "DefaultPreemption"

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
BIG_NODE = {**VERY_LARGE, "pods": "32"}


def _p(
    name: str,
    priority: int,
    requests: dict[str, str] | None = None,
    *,
    on: str | None = None,
    started: int | None = None,
    **kw: Any,
) -> Obj:
    """A pod at `priority`, bound to `on` when given, started `started` seconds after the epoch."""
    out = pod(name, node_name=on, requests=requests, priority=priority, **kw)
    if started is not None:
        out["status"] = {"startTime": f"1970-01-01T00:00:{started:02d}Z"}
    return out


def _nodes(*names: str, allocatable: dict[str, str] | None = None) -> list[Obj]:
    return [node(n, allocatable=allocatable or BIG_NODE) for n in names]


def _pdb(name: str, labels: dict[str, str], *, allowed: int | None = None, min_available: Any = None) -> Obj:
    spec: Obj = {"selector": {"matchLabels": labels}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    out: Obj = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    if allowed is not None:
        out["status"] = {"disruptionsAllowed": allowed}
    return out


def _dry(case: str, nodes: list[Obj], bound: list[Obj], incoming: Obj, victims: dict[str, set[str]]) -> Row:
    want = Victims({n: frozenset(v) for n, v in victims.items()})
    return Row(PLUGIN, DRY_RUN, case, [*nodes, *bound], [incoming], want)


def _spread_node(name: str, zone: str) -> Obj:
    return node(name, {"hostname": name, "zone": zone}, allocatable=BIG_NODE, hostname=False)


_FOO = selector(req("foo", "Exists"))

DRY_RUN_ROWS = [
    _dry(
        "a pod that fits on both nodes when lower priority pods are preempted",
        _nodes("node1", "node2"),
        [_p("p1", MID, LARGE, on="node1"), _p("p2", MID, LARGE, on="node2")],
        _p("p", HIGH, LARGE),
        {"node1": {"p1"}, "node2": {"p2"}},
    ),
    _dry(
        "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
        _nodes("node1", "node2"),
        [_p("p1", MID, LARGE, on="node1"), _p("p2", MID, LARGE, on="node2")],
        _p("p", LOW, LARGE),
        {},
    ),
    _dry(
        "medium priority pod is preempted, but lower priority one stays as it is small",
        _nodes("node1", "node2"),
        [
            _p("p1.1", LOW, SMALL, on="node1"),
            _p("p1.2", MID, LARGE, on="node1"),
            _p("p2", MID, LARGE, on="node2"),
        ],
        _p("p", HIGH, LARGE),
        {"node1": {"p1.2"}, "node2": {"p2"}},
    ),
    _dry(
        "mixed priority pods are preempted",
        _nodes("node1", "node2"),
        [
            _p("p1.1", MID, SMALL, on="node1"),
            _p("p1.2", LOW, SMALL, on="node1"),
            _p("p1.3", MID, MEDIUM, on="node1"),
            _p("p1.4", HIGH, SMALL, on="node1"),
            _p("p2", HIGH, LARGE, on="node2"),
        ],
        _p("p", HIGH, LARGE),
        {"node1": {"p1.2", "p1.3"}},
    ),
    _dry(
        "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        _nodes("node1", "node2"),
        [
            _p("p1.1", LOW, SMALL, on="node1", started=5),
            _p("p1.2", LOW, SMALL, on="node1", started=4),
            _p("p1.3", MID, MEDIUM, on="node1", started=3),
            _p("p1.4", HIGH, SMALL, on="node1", started=2),
            _p("p2", HIGH, LARGE, on="node2", started=1),
        ],
        _p("p", HIGH, LARGE),
        {"node1": {"p1.1", "p1.3"}},
    ),
    _dry(
        "pod with anti-affinity is preempted",
        [node(n, {"hostname": n}, allocatable=BIG_NODE, hostname=False) for n in ("node1", "node2")],
        [
            _p(
                "p1.1",
                LOW,
                SMALL,
                on="node1",
                labels={"foo": ""},
                affinity=pod_affinity(anti=[term("hostname", _FOO)]),
            ),
            _p("p1.2", MID, SMALL, on="node1"),
            _p("p1.3", HIGH, SMALL, on="node1"),
            _p("p2", HIGH, SMALL, on="node2"),
        ],
        _p("p", HIGH, SMALL, labels={"foo": ""}),
        {"node1": {"p1.1"}},
    ),
    _dry(
        "preemption to resolve pod topology spread filter failure",
        [_spread_node("node-a", "zone1"), _spread_node("node-b", "zone1"), _spread_node("node-x", "zone2")],
        [
            _p("pod-a1", MID, on="node-a", labels={"foo": ""}),
            _p("pod-a2", LOW, on="node-a", labels={"foo": ""}),
            _p("pod-b1", LOW, on="node-b", labels={"foo": ""}),
            _p("pod-x1", HIGH, on="node-x", labels={"foo": ""}),
            _p("pod-x2", HIGH, on="node-x", labels={"foo": ""}),
        ],
        _p(
            "p",
            HIGH,
            labels={"foo": ""},
            topologySpreadConstraints=[spread(1, "zone", _FOO), spread(1, "hostname", _FOO)],
        ),
        {"node-a": {"pod-a2"}, "node-b": {"pod-b1"}},
    ),
    _dry(
        "preemption with violation of same pdb",
        [*_nodes("node1"), _pdb("pdb", {"app": "foo"}, allowed=1)],
        [
            _p("p1.1", MID, MEDIUM, on="node1", labels={"app": "foo"}),
            _p("p1.2", MID, MEDIUM, on="node1", labels={"app": "foo"}),
        ],
        _p("p", HIGH, VERY_LARGE),
        {"node1": {"p1.1", "p1.2"}},
    ),
]


def _best(
    case: str,
    nodes: tuple[str, ...],
    bound: list[tuple[str, str, int, dict[str, str], int]],
    priority: int,
    best: set[str],
) -> Row:
    """`bound`: (name, node, priority, request, start second) per pod."""
    pods = [_p(name, prio, res, on=where, started=t) for name, where, prio, res, t in bound]
    return Row(
        PLUGIN,
        SELECT,
        case,
        [*_nodes(*nodes), *pods],
        [_p("p", priority, VERY_LARGE)],
        Lands({"p": frozenset(best) if len(best) > 1 else next(iter(best))}),
    )


N3 = ("node1", "node2", "node3")
SELECT_ROWS = [
    _best(
        "a pod that fits on both nodes when lower priority pods are preempted",
        ("node1", "node2"),
        [("p1", "node1", MID, LARGE, 0), ("p2", "node2", MID, LARGE, 0)],
        HIGH,
        {"node1", "node2"},
    ),
    _best(
        "node with min highest priority pod is picked",
        N3,
        [
            ("p1.1", "node1", MID, MEDIUM, 0),
            ("p1.2", "node1", MID, LARGE, 0),
            ("p2.1", "node2", MID, MEDIUM, 0),
            ("p2.2", "node2", LOW, MEDIUM, 0),
            ("p3.1", "node3", LOW, MEDIUM, 0),
            ("p3.2", "node3", LOW, MEDIUM, 0),
        ],
        HIGH,
        {"node3"},
    ),
    _best(
        "when highest priorities are the same, minimum sum of priorities is picked",
        N3,
        [
            ("p1.1", "node1", MID, MEDIUM, 0),
            ("p1.2", "node1", MID, LARGE, 0),
            ("p2.1", "node2", MID, LARGE, 0),
            ("p2.2", "node2", LOW, MEDIUM, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", MID, MEDIUM, 0),
        ],
        HIGH,
        {"node2"},
    ),
    _best(
        "when highest priority and sum are the same, minimum number of pods is picked",
        N3,
        [
            ("p1.1", "node1", MID, SMALL, 0),
            ("p1.2", "node1", NEG, SMALL, 0),
            ("p1.3", "node1", MID, SMALL, 0),
            ("p1.4", "node1", NEG, SMALL, 0),
            ("p2.1", "node2", MID, LARGE, 0),
            ("p2.2", "node2", NEG, MEDIUM, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", NEG, SMALL, 0),
            ("p3.3", "node3", LOW, SMALL, 0),
        ],
        HIGH,
        {"node2"},
    ),
    _best(
        "sum of adjusted priorities is considered",
        N3,
        [
            ("p1.1", "node1", MID, SMALL, 0),
            ("p1.2", "node1", NEG, SMALL, 0),
            ("p1.3", "node1", NEG, SMALL, 0),
            ("p2.1", "node2", MID, LARGE, 0),
            ("p2.2", "node2", NEG, MEDIUM, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", NEG, SMALL, 0),
            ("p3.3", "node3", LOW, SMALL, 0),
        ],
        HIGH,
        {"node2"},
    ),
    _best(
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        ("node1", "node2", "node3", "node4"),
        [
            ("p1.1", "node1", MID, SMALL, 0),
            ("p1.2", "node1", LOW, SMALL, 0),
            ("p1.3", "node1", LOW, SMALL, 0),
            ("p2.1", "node2", HIGH, LARGE, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", LOW, SMALL, 0),
            ("p3.3", "node3", LOW, SMALL, 0),
            ("p3.4", "node3", LOW, MEDIUM, 0),
            ("p4.1", "node4", MID, MEDIUM, 0),
            ("p4.2", "node4", MID, SMALL, 0),
            ("p4.3", "node4", MID, SMALL, 0),
            ("p4.4", "node4", NEG, SMALL, 0),
        ],
        VERY_HIGH,
        {"node1"},
    ),
    _best(
        "same priority, same number of victims, different start time for each node's pod",
        N3,
        [
            ("p1.1", "node1", MID, MEDIUM, 2),
            ("p1.2", "node1", MID, MEDIUM, 2),
            ("p2.1", "node2", MID, MEDIUM, 3),
            ("p2.2", "node2", MID, MEDIUM, 3),
            ("p3.1", "node3", MID, MEDIUM, 1),
            ("p3.2", "node3", MID, MEDIUM, 1),
        ],
        HIGH,
        {"node2"},
    ),
    _best(
        "same priority, same number of victims, different start time for all pods",
        N3,
        [
            ("p1.1", "node1", MID, MEDIUM, 4),
            ("p1.2", "node1", MID, MEDIUM, 2),
            ("p2.1", "node2", MID, MEDIUM, 5),
            ("p2.2", "node2", MID, MEDIUM, 1),
            ("p3.1", "node3", MID, MEDIUM, 3),
            ("p3.2", "node3", MID, MEDIUM, 6),
        ],
        HIGH,
        {"node3"},
    ),
    _best(
        "different priority, same number of victims, different start time for all pods",
        N3,
        [
            ("p1.1", "node1", LOW, MEDIUM, 4),
            ("p1.2", "node1", MID, MEDIUM, 2),
            ("p2.1", "node2", MID, MEDIUM, 6),
            ("p2.2", "node2", LOW, MEDIUM, 1),
            ("p3.1", "node3", LOW, MEDIUM, 3),
            ("p3.2", "node3", MID, MEDIUM, 5),
        ],
        HIGH,
        {"node2"},
    ),
]

ONE_POD = {"pods": "1"}
SMALL_NODE = {"cpu": "200m", "memory": "400", "pods": "32"}


def _post(case: str, objects: list[Obj], incoming: Obj, places: dict[str, Any]) -> Row:
    return Row(PLUGIN, POST_FILTER, case, objects, [incoming], Lands(places))


POST_FILTER_ROWS = [
    _post(
        "pod with higher priority can be made schedulable",
        [node("node1", allocatable=ONE_POD), _p("p1", LOW, on="node1")],
        _p("p", HIGH),
        {"p": "node1", "p1": EVICTED},
    ),
    _post(
        "pod with tied priority is still unschedulable",
        [node("node1", allocatable=ONE_POD), _p("p1", LOW, on="node1")],
        _p("p", LOW),
        {"p": None, "p1": "node1"},
    ),
    _post(
        "pod can be made schedulable on one node",
        [
            node("node1", allocatable=ONE_POD),
            node("node2", allocatable=ONE_POD),
            _p("p1", HIGH, on="node1"),
            _p("p2", LOW, on="node2"),
        ],
        _p("p", MID),
        {"p": "node2", "p1": "node1", "p2": EVICTED},
    ),
    _post(
        "pod can be made schedulable on minHighestPriority node",
        [
            node("node1", allocatable=ONE_POD),
            node("node2", allocatable=ONE_POD),
            _p("p1", HIGH, on="node1", labels={"pdb": "non-violating"}),
            _p("p2", LOW, on="node1", labels={"pdb": "violating"}),
            _p("p3", MID, on="node2", labels={"pdb": "violating"}),
            _pdb("violating-pdb", {"pdb": "violating"}, min_available="100%"),
            _pdb("non-violating-pdb", {"pdb": "non-violating"}, min_available="0", allowed=2**31 - 1),
        ],
        _p("p", VERY_HIGH),
        {"p": "node2", "p1": "node1", "p2": "node1", "p3": EVICTED},
    ),
    _post(
        "no candidate nodes found, no enough resource after removing low priority pods",
        [
            node("node1", allocatable=SMALL_NODE),
            node("node2", allocatable=SMALL_NODE),
            _p("p1", LOW, on="node1"),
            _p("p2", LOW, on="node2"),
        ],
        _p("p", HIGH, LARGE),
        {"p": None, "p1": "node1", "p2": "node2"},
    ),
    _post(
        "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
        [
            node("node1", allocatable=ONE_POD),
            node("node2", allocatable=SMALL_NODE),
            node("node3", allocatable=ONE_POD),
            _p("p1", HIGH, on="node1"),
            _p("p2", LOW, on="node2"),
            _p("p3", HIGH, on="node3"),
        ],
        _p("p", HIGH, LARGE),
        {"p": None, "p1": "node1", "p2": "node2", "p3": "node3"},
    ),
]

I_LOW, I_MEDIUM, I_HIGH = 100, 200, 300
I_NODE = {"pods": "32", "cpu": "500m", "memory": "500"}
I_POD = {"cpu": "100m", "memory": "100"}


def _anti(value: str) -> Obj:
    return pod_affinity(anti=[term("node", selector(req("pod", "In", value)))])


def _integration(upstream: str, case: str, objects: list[Obj], incoming: Obj, places: dict[str, Any]) -> Row:
    return Row(PLUGIN, upstream, case, objects, [incoming], Lands(places))


_VICTIM = {"cpu": "400m", "memory": "200"}
_PREEMPTOR = {"cpu": "300m", "memory": "200"}
_I_NODE1 = node("node1", {"node": "node1"}, allocatable=I_NODE)

INTEGRATION_ROWS = [
    _integration(
        PREEMPTION,
        "basic pod preemption",
        [_I_NODE1, _p("victim-pod", I_LOW, _VICTIM, on="node1")],
        _p("preemptor-pod", I_HIGH, _PREEMPTOR),
        {"victim-pod": EVICTED, "preemptor-pod": "node1"},
    ),
    _integration(
        PREEMPTION,
        "preemption is performed to satisfy anti-affinity",
        [
            _I_NODE1,
            _p("pod-0", I_MEDIUM, I_POD, on="node1", labels={"pod": "p0"}),
            _p("pod-1", I_LOW, I_POD, on="node1", labels={"pod": "p1"}, affinity=_anti("preemptor")),
        ],
        _p("preemptor-pod", I_HIGH, I_POD, labels={"pod": "preemptor"}, affinity=_anti("p0")),
        {"pod-0": EVICTED, "pod-1": EVICTED, "preemptor-pod": "node1"},
    ),
    _integration(
        PREEMPTION,
        "preemption is not performed when anti-affinity is not satisfied",
        [
            _I_NODE1,
            _p("pod-0", I_MEDIUM, I_POD, on="node1", labels={"pod": "p0"}),
            _p("pod-1", I_HIGH, I_POD, on="node1", labels={"pod": "p1"}, affinity=_anti("preemptor")),
        ],
        _p("preemptor-pod", I_HIGH, I_POD, labels={"pod": "preemptor"}, affinity=_anti("p0")),
        {"pod-0": "node1", "pod-1": "node1", "preemptor-pod": None},
    ),
    _integration(
        NON_PREEMPTION,
        "pod preemption will happen",
        [node("node1", allocatable=I_NODE), _p("victim-pod", I_LOW, _VICTIM, on="node1")],
        _p("preemptor-pod", I_HIGH, _PREEMPTOR),
        {"victim-pod": EVICTED, "preemptor-pod": "node1"},
    ),
    _integration(
        NON_PREEMPTION,
        "pod preemption will not happen",
        [node("node1", allocatable=I_NODE), _p("victim-pod", I_LOW, _VICTIM, on="node1")],
        _p("preemptor-pod", I_HIGH, _PREEMPTOR, preemptionPolicy="Never"),
        {"victim-pod": "node1", "preemptor-pod": None},
    ),
    _integration(
        PDB,
        "A non-PDB violating pod is preempted despite its higher priority",
        [
            node("node-1", allocatable=I_NODE),
            _pdb("pdb-1", {"foo": "bar"}, min_available=2),
            _p("low-pod1", I_LOW, I_POD, on="node-1", labels={"foo": "bar"}),
            _p("low-pod2", I_LOW, I_POD, on="node-1", labels={"foo": "bar"}),
            _p("mid-pod3", I_MEDIUM, I_POD, on="node-1"),
        ],
        _p("preemptor-pod", I_HIGH, _PREEMPTOR),
        {"low-pod1": "node-1", "low-pod2": "node-1", "mid-pod3": EVICTED, "preemptor-pod": "node-1"},
    ),
    _integration(
        PDB,
        "A node without any PDB violating pods is preferred for preemption",
        [
            node("node-1", allocatable=I_NODE),
            node("node-2", allocatable=I_NODE),
            _pdb("pdb-1", {"foo": "bar"}, min_available=2),
            _p("low-pod1", I_LOW, I_POD, on="node-1", labels={"foo": "bar"}),
            _p("mid-pod2", I_MEDIUM, I_POD, on="node-2"),
        ],
        _p("preemptor-pod", I_HIGH, {"cpu": "500m", "memory": "200"}),
        {"low-pod1": "node-1", "mid-pod2": EVICTED, "preemptor-pod": "node-2"},
    ),
    _integration(
        PDB,
        "A node with fewer PDB violating pods is preferred for preemption",
        [
            *(node(f"node-{i}", allocatable=I_NODE) for i in (1, 2, 3)),
            _pdb("pdb-1", {"foo1": "bar"}, min_available=2),
            _pdb("pdb-2", {"foo2": "bar"}, min_available=2),
            _p("low-pod1", I_LOW, I_POD, on="node-1", labels={"foo1": "bar"}),
            _p("mid-pod1", I_MEDIUM, I_POD, on="node-1"),
            _p("low-pod2", I_LOW, I_POD, on="node-2", labels={"foo2": "bar"}),
            _p("mid-pod2", I_MEDIUM, I_POD, on="node-2", labels={"foo2": "bar"}),
            _p("low-pod4", I_LOW, I_POD, on="node-3", labels={"foo2": "bar"}),
            _p("low-pod5", I_LOW, I_POD, on="node-3", labels={"foo2": "bar"}),
            _p("low-pod6", I_LOW, I_POD, on="node-3", labels={"foo2": "bar"}),
        ],
        _p("preemptor-pod", I_HIGH, {"cpu": "500m", "memory": "400"}),
        {
            "low-pod1": "node-1",
            "mid-pod1": "node-1",
            "low-pod2": "node-2",
            "mid-pod2": "node-2",
            "low-pod4": EVICTED,
            "low-pod5": EVICTED,
            "low-pod6": EVICTED,
            "preemptor-pod": "node-3",
        },
    ),
]

ROWS = [*DRY_RUN_ROWS, *SELECT_ROWS, *POST_FILTER_ROWS, *INTEGRATION_ROWS]
