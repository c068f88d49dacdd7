"""NodeAffinity and TaintToleration Score tables: `TestNodeAffinityPriority` (read at kubernetes
commit 022462cc) and `TestTaintTolerationScore` (read at 04c0d74f).

Upstream scores every node of a case and runs the plugin's NormalizeScore over them; each row
states those normalized scores (`Scores`) for the case's pod, on a cluster of exactly the case's
nodes, with only upstream's labels (no `kubernetes.io/hostname`) and taints. Upstream's
`nodeA`..`nodeC` are `node-a`..`node-c` here (a Node's name is lowercase).
Not taken from `TestNodeAffinityPriority`: "added affinity" and "added affinity and pod has
default affinity", which configure the profile's plugin args (`AddedAffinity`) rather than the
pod or the cluster. The numeric `Gt`/`Lt` toleration cases are ported with the gate on, as
upstream sets it.
"""

from __future__ import annotations

from conformance.harness import Obj, Row, Scores
from conformance.objects import node, pod, req, taint, toleration

AFFINITY_TEST = "pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go:TestNodeAffinityPriority"
TAINT_TEST = (
    "pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go:TestTaintTolerationScore"
)
TOP = 100
"""kube's MaxNodeScore."""

# --- NodeAffinity ---------------------------------------------------------------------------------

FOO = {"foo": "bar"}
KEY = {"key": "value"}
AZ = {"az": "az1"}
OTHER = {"abc": "az11", "def": "az22"}
ALL_THREE = {**FOO, **KEY, **AZ}


def _preferred(*terms: tuple[int, list[Obj]]) -> Obj:
    """Preferred node affinity: (weight, matchExpressions) per term."""
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": {"matchExpressions": exprs}} for w, exprs in terms
            ]
        }
    }


ONE_TERM = _preferred((2, [req("foo", "In", "bar")]))
THREE_TERMS = _preferred(
    (2, [req("foo", "In", "bar")]),
    (4, [req("key", "In", "value")]),
    (5, [req("foo", "In", "bar"), req("key", "In", "value"), req("az", "In", "az1")]),
)


def _affinity(case: str, nodes: dict[str, dict[str, str]], scores: list[int], affinity: Obj | None) -> Row:
    spec = {"affinity": affinity} if affinity is not None else {}
    return Row(
        "NodeAffinity/score",
        AFFINITY_TEST,
        case,
        [node(name, labels, hostname=False) for name, labels in nodes.items()],
        [pod("p", **spec)],
        Scores(dict(zip(nodes, scores, strict=True))),
    )


AFFINITY_ROWS = [
    _affinity(
        "all nodes are same priority as NodeAffinity is nil",
        {"node1": FOO, "node2": KEY, "node3": AZ},
        [0, 0, 0],
        None,
    ),
    _affinity(
        "no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
        {"node1": OTHER, "node2": KEY, "node3": AZ},
        [0, 0, 0],
        ONE_TERM,
    ),
    _affinity(
        "only node1 matches the preferred scheduling requirements of pod",
        {"node1": FOO, "node2": KEY, "node3": AZ},
        [TOP, 0, 0],
        ONE_TERM,
    ),
    _affinity(
        "all nodes matches the preferred scheduling requirements of pod but with different priorities ",
        {"node1": FOO, "node5": ALL_THREE, "node2": KEY},
        [18, TOP, 36],
        THREE_TERMS,
    ),
    _affinity(
        "calculate the priorities correctly even if PreScore is not called",
        {"node1": FOO, "node5": ALL_THREE, "node2": KEY},
        [18, TOP, 36],
        THREE_TERMS,
    ),
]

# --- TaintToleration ------------------------------------------------------------------------------

PREFER = "PreferNoSchedule"
SLA = "node.kubernetes.io/sla"


def _soft(key: str, value: str) -> Obj:
    return taint(key, value, PREFER)


def _taints(case: str, tolerations: list[Obj], nodes: dict[str, list[Obj]], scores: list[int]) -> Row:
    spec = {"tolerations": tolerations} if tolerations else {}
    return Row(
        "TaintToleration/score",
        TAINT_TEST,
        case,
        [node(name, taints=taints, hostname=False) for name, taints in nodes.items()],
        [pod("pod1", **spec)],
        Scores(dict(zip(nodes, scores, strict=True))),
    )


ARM = ("cpu-type", "arm64")
SSD = ("disk-type", "ssd")

TAINT_ROWS = [
    _taints(
        "node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
        [toleration("foo", "bar", PREFER, "Equal")],
        {"node-a": [_soft("foo", "bar")], "node-b": [_soft("foo", "blah")]},
        [TOP, 0],
    ),
    _taints(
        "the nodes that all of their taints are tolerated by the pod, get the same score, "
        "no matter how many tolerable taints a node has",
        [toleration(*ARM, PREFER, "Equal"), toleration(*SSD, PREFER, "Equal")],
        {"node-a": [], "node-b": [_soft(*ARM)], "node-c": [_soft(*ARM), _soft(*SSD)]},
        [TOP, TOP, TOP],
    ),
    _taints(
        "the more intolerable taints a node has, the lower score it gets.",
        [toleration("foo", "bar", PREFER, "Equal")],
        {"node-a": [], "node-b": [_soft(*ARM)], "node-c": [_soft(*ARM), _soft(*SSD)]},
        [TOP, 50, 0],
    ),
    _taints(
        "only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations "
        "priority function",
        [toleration(*ARM, "NoSchedule", "Equal"), toleration(*SSD, "NoSchedule", "Equal")],
        {"node-a": [], "node-b": [taint(*ARM, "NoSchedule")], "node-c": [_soft(*ARM), _soft(*SSD)]},
        [TOP, TOP, 0],
    ),
    _taints(
        "Default behaviour No taints and tolerations, lands on node with no taints",
        [],
        {"node-a": [], "node-b": [_soft(*ARM)]},
        [TOP, 0],
    ),
    _taints(
        "Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint",
        [toleration(SLA, "950", PREFER, "Gt")],
        {"node-a": [_soft(SLA, "800")], "node-b": [_soft(SLA, "999")]},
        [0, TOP],
    ),
    _taints(
        "Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint",
        [toleration(SLA, "800", PREFER, "Lt")],
        {"node-a": [_soft(SLA, "950")], "node-b": [_soft(SLA, "700")]},
        [0, TOP],
    ),
    _taints(
        "Score ignores parse errors from numeric PreferNoSchedule taint value",
        [toleration(SLA, "950", PREFER, "Gt")],
        {"node-a": [], "node-b": [_soft(SLA, "high")]},
        [TOP, 0],
    ),
]

ROWS = [*AFFINITY_ROWS, *TAINT_ROWS]
