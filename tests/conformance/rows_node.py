"""NodeUnschedulable, NodeName and TaintToleration Filter tables.

Upstream runs each plugin's Filter against one node; here the node is the whole cluster and the
incoming pod is that test's pod. Upstream's nodes often have no name: they are called `node`.
The TaintToleration rows include the numeric `Gt`/`Lt` toleration cases (alpha gate
TaintTolerationComparisonOperators), with the gate as each case sets it (`Row.gates` for the
cases that turn it off).
"""

from __future__ import annotations

from dataclasses import replace

from conformance.harness import Feasible, Obj, Row
from conformance.objects import node, pod, taint, toleration

UNSCHED = "node(s) were unschedulable"
NODE_NAME = "node(s) didn't match the requested node name"
TAINTED = "node(s) had untolerated taint(s)"

UNSCHED_TEST = (
    "pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go:TestNodeUnschedulable"
)
NAME_TEST = "pkg/scheduler/framework/plugins/nodename/node_name_test.go:TestNodeName"
TAINT_FILE = "pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go"
TAINT_TEST = f"{TAINT_FILE}:TestTaintTolerationFilter"
TAINT_GATE_TEST = f"{TAINT_FILE}:TestTaintTolerationFilterWithFeatureGate"
COMPARISON_GATE = "TaintTolerationComparisonOperators"


def _one(plugin: str, upstream: str, case: str, the_node: Obj, the_pod: Obj, verdict: bool | str) -> Row:
    name = the_node["metadata"]["name"]
    return Row(plugin, upstream, case, [the_node], [the_pod], Feasible({name: verdict}))


def _unsched(case: str, unschedulable: bool, tolerations: list[Obj] | None, verdict: bool | str) -> Row:
    spec = {"tolerations": tolerations} if tolerations else {}
    return _one(
        "NodeUnschedulable",
        UNSCHED_TEST,
        case,
        node("node", unschedulable=unschedulable),
        pod("p", **spec),
        verdict,
    )


NODE_UNSCHEDULABLE = [
    _unsched(
        "Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", True, None, UNSCHED
    ),
    _unsched("Schedule pod to normal node", False, None, True),
    _unsched(
        "Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        True,
        [toleration("node.kubernetes.io/unschedulable", effect="NoSchedule")],
        True,
    ),
]

NODE_NAME_ROWS = [
    _one("NodeName", NAME_TEST, "no host specified", node("node"), pod("p"), True),
    _one("NodeName", NAME_TEST, "host matches", node("foo"), pod("p", node_name="foo"), True),
    _one("NodeName", NAME_TEST, "host doesn't match", node("foo"), pod("p", node_name="bar"), NODE_NAME),
]


def _taint(
    case: str,
    tols: list[Obj],
    taints: list[Obj],
    verdict: bool | str,
    upstream: str = TAINT_TEST,
    *,
    gate: bool = True,
) -> Row:
    spec = {"tolerations": tols} if tols else {}
    row = _one("TaintToleration", upstream, case, node("node-a", taints=taints), pod("pod1", **spec), verdict)
    return row if gate else replace(row, gates={COMPARISON_GATE: False})


_DEDICATED_1 = taint("dedicated", "user1")
_SLA = "node.kubernetes.io/sla"
_LEVEL = "node.example.com/priority-level"

TAINT_TOLERATION = [
    _taint(
        "A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        [],
        [_DEDICATED_1],
        TAINTED,
    ),
    _taint(
        "A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        [toleration("dedicated", "user1", "NoSchedule")],
        [_DEDICATED_1],
        True,
    ),
    _taint(
        "A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        [toleration("dedicated", "user2", "NoSchedule", "Equal")],
        [_DEDICATED_1],
        TAINTED,
    ),
    _taint(
        "A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node",
        [toleration("foo", effect="NoSchedule", operator="Exists")],
        [taint("foo", "bar")],
        True,
    ),
    _taint(
        "A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled onto the node",
        [
            toleration("dedicated", "user2", "NoSchedule", "Equal"),
            toleration("foo", effect="NoSchedule", operator="Exists"),
        ],
        [taint("dedicated", "user2"), taint("foo", "bar")],
        True,
    ),
    _taint(
        "A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, "
        "can't be scheduled onto the node",
        [toleration("foo", "bar", "PreferNoSchedule", "Equal")],
        [taint("foo", "bar")],
        TAINTED,
    ),
    _taint(
        "The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, "
        "and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
        [toleration("foo", "bar", operator="Equal")],
        [taint("foo", "bar")],
        True,
    ),
    _taint(
        "The pod has a toleration that key and value don't match the taint on the node, "
        "but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
        [toleration("dedicated", "user2", "NoSchedule", "Equal")],
        [taint("dedicated", "user1", "PreferNoSchedule")],
        True,
    ),
    _taint(
        "The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
        [],
        [taint("dedicated", "user1", "PreferNoSchedule")],
        True,
    ),
    _taint(
        "Pod with Gt toleration cannot be scheduled on node when taint value is lower than threshold",
        [toleration(_LEVEL, "950", "NoSchedule", "Gt")],
        [taint(_LEVEL, "800")],
        TAINTED,
    ),
    _taint(
        "Pod with Gt toleration can be scheduled on node when taint value is higher than threshold",
        [toleration(_SLA, "750", "NoSchedule", "Gt")],
        [taint(_SLA, "950")],
        True,
    ),
    _taint(
        "Pod with Lt toleration cannot be scheduled on node when taint value is higher than threshold",
        [toleration(_LEVEL, "800", "NoSchedule", "Lt")],
        [taint(_LEVEL, "950")],
        TAINTED,
    ),
    _taint(
        "Pod with Lt toleration can be scheduled on node when taint value is lower than threshold",
        [toleration(_SLA, "950", "NoSchedule", "Lt")],
        [taint(_SLA, "800")],
        True,
    ),
    _taint(
        "Pod with Gt toleration cannot be scheduled on node with non-numeric taint value",
        [toleration(_SLA, "950", "NoSchedule", "Gt")],
        [taint(_SLA, "high")],
        TAINTED,
    ),
    # The comparison gate as each case sets it (on: numeric operators tolerate; off, kube's
    # default while alpha: only Equal/Exists do). topobridge runs with it on; the gate-off
    # cases run the profile built with it off (`Row.gates`).
    _taint(
        "Pod with Gt toleration can be scheduled when feature gate is enabled and taint value is higher",
        [toleration(_SLA, "750", "NoSchedule", "Gt")],
        [taint(_SLA, "950")],
        True,
        TAINT_GATE_TEST,
    ),
    _taint(
        "Pod with Lt toleration can be scheduled when feature gate is enabled and taint value is lower",
        [toleration(_SLA, "950", "NoSchedule", "Lt")],
        [taint(_SLA, "800")],
        True,
        TAINT_GATE_TEST,
    ),
    _taint(
        "Pod with Gt toleration cannot be scheduled when feature gate is disabled",
        [toleration(_SLA, "750", "NoSchedule", "Gt")],
        [taint(_SLA, "950")],
        TAINTED,
        TAINT_GATE_TEST,
        gate=False,
    ),
    _taint(
        "Pod with Lt toleration cannot be scheduled when feature gate is disabled",
        [toleration(_SLA, "950", "NoSchedule", "Lt")],
        [taint(_SLA, "800")],
        TAINTED,
        TAINT_GATE_TEST,
        gate=False,
    ),
    _taint(
        "Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate is disabled",
        [
            toleration("dedicated", "user1", "NoSchedule", "Equal"),
            toleration(_SLA, "750", "NoSchedule", "Gt"),
        ],
        [_DEDICATED_1, taint(_SLA, "950")],
        TAINTED,
        TAINT_GATE_TEST,
        gate=False,
    ),
    _taint(
        "Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal is honored",
        [
            toleration("dedicated", "user1", "NoSchedule", "Equal"),
            toleration(_SLA, "750", "NoSchedule", "Gt"),
        ],
        [_DEDICATED_1],
        True,
        TAINT_GATE_TEST,
        gate=False,
    ),
]

ROWS = [*NODE_UNSCHEDULABLE, *NODE_NAME_ROWS, *TAINT_TOLERATION]
