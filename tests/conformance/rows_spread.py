"""PodTopologySpread Filter: `TestSingleConstraint` and `TestMultipleConstraints`, read at
kubernetes commit 01c2588b.

Upstream runs this one plugin, so a node that NodeAffinity or TaintToleration would reject still
passes there (upstream's own comments say "in real case, it's false"). The suite checks the whole
Filter, so such a node expects the verdict kube-scheduler gives it: the earlier plugin's reason.
Unit nodes carry only upstream's labels (keys `zone` and `node`); the taint is upstream's
`node.kubernetes.io/unschedulable:NoSchedule` taint on a schedulable node. The PreFilter tables
(`TestPreFilterState`, `TestPreFilterStateAddPod`, ...) state internal counts, not per-node
verdicts, and are not taken. Upstream names two cases of `TestSingleConstraint` "NodeAffinityPolicy
ignored with labelSelectors"; the second (with node affinity) is `#2`.
"""

from __future__ import annotations

from typing import Any

from conformance.harness import Feasible, Obj, Row
from conformance.objects import node, node_affinity, pod, req, selector, spread, taint

FILE = "pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go"
SINGLE = f"{FILE}:TestSingleConstraint"
MULTIPLE = f"{FILE}:TestMultipleConstraints"

SPREAD = "node(s) didn't match pod topology spread constraints"
NO_KEY = f"{SPREAD} (missing required label)"
"""Upstream's ErrReasonNodeLabelNotMatch: the node lacks the constraint's topology key."""
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
TAINTED = "node(s) had untolerated taint(s)"
OK = True

FOO = selector(req("foo", "Exists"))
BAR = selector(req("bar", "Exists"))
UNSCHEDULABLE_TAINT = [taint("node.kubernetes.io/unschedulable")]


def n(name: str, *, tainted: bool = False, **labels: str) -> Obj:
    return labelled(name, labels, tainted=tainted)


def labelled(name: str, labels: dict[str, str], *, tainted: bool = False) -> Obj:
    return node(name, labels, hostname=False, taints=UNSCHEDULABLE_TAINT if tainted else None)


def p(name: str, at: str, *keys: str, ns: str = "default", **meta: Any) -> Obj:
    return pod(name, namespace=ns, node_name=at, labels=dict.fromkeys(keys, ""), **meta)


def terminating(obj: Obj) -> Obj:
    """The pod with a deletionTimestamp (being deleted)."""
    obj["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return obj


def incoming(*keys: str, constraints: list[Obj], **spec: Any) -> Obj:
    return pod("p", labels=dict.fromkeys(keys, ""), topologySpreadConstraints=constraints, **spec)


def zone(max_skew: int = 1, sel: Obj | None = FOO, **extra: Any) -> Obj:
    return spread(max_skew, "zone", sel, **extra)


def by_node(max_skew: int = 1, sel: Obj | None = FOO, **extra: Any) -> Obj:
    return spread(max_skew, "node", sel, **extra)


def abxy(**extra_labels: dict[str, str]) -> list[Obj]:
    """node-a, node-b in zone1 and node-x, node-y in zone2, labelled `node=<name>`."""
    out = []
    for name, z in (("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2")):
        out.append(labelled(name, {"zone": z, "node": name, **extra_labels.get(name.replace("-", "_"), {})}))
    return out


def row(
    upstream: str,
    case: str,
    the_pod: Obj,
    nodes: list[Obj],
    pods: list[Obj],
    verdicts: dict[str, bool | str],
    nth: int = 1,
) -> Row:
    return Row("PodTopologySpread", upstream, case, [*nodes, *pods], [the_pod], Feasible(verdicts), nth=nth)


def single(
    case: str, the_pod: Obj, nodes: list[Obj], pods: list[Obj], verdicts: dict[str, bool | str], nth: int = 1
) -> Row:
    return row(SINGLE, case, the_pod, nodes, pods, verdicts, nth)


def multiple(
    case: str, the_pod: Obj, nodes: list[Obj], pods: list[Obj], verdicts: dict[str, bool | str]
) -> Row:
    return row(MULTIPLE, case, the_pod, nodes, pods, verdicts)


def abxy_verdicts(a: bool | str, b: bool | str, x: bool | str, y: bool | str) -> dict[str, bool | str]:
    return {"node-a": a, "node-b": b, "node-x": x, "node-y": y}


SPREAD_2103 = [
    p("p-a1", "node-a", "foo"),
    p("p-a2", "node-a", "foo"),
    p("p-b1", "node-b", "foo"),
    p("p-y1", "node-y", "foo"),
    p("p-y2", "node-y", "foo"),
    p("p-y3", "node-y", "foo"),
]
FOO_NODES = {"node_a": {"foo": ""}, "node_b": {"foo": ""}, "node_x": {"foo": ""}}
ONLY_NODE_LABEL = [
    labelled(name, {"node": name, **({"foo": ""} if name != "node-y" else {})})
    for name in ("node-a", "node-b", "node-x", "node-y")
]
ONLY_NODE_LABEL_TAINTED_Y = [n(name, node=name, foo="") for name in ("node-a", "node-b", "node-x")] + [
    n("node-y", node="node-y", tainted=True)
]
ONE_ONE_ZERO_ONE = [p("p-b1", "node-a", "foo"), p("p-b2", "node-b", "foo"), p("p-y1", "node-y", "foo")]
ABC = [n(name, node=name) for name in ("node-a", "node-b", "node-c")]
TWO_TWO_ONE = [
    p("p-a1", "node-a", "foo"),
    p("p-a2", "node-a", "foo"),
    p("p-b1", "node-b", "foo"),
    p("p-b2", "node-b", "foo"),
    p("p-c1", "node-c", "foo"),
]
ZONE_2_1 = [p("p-b1", "node-a", "foo"), p("p-b2", "node-b", "foo"), p("p-y1", "node-y", "foo")]

SINGLE_ROWS = [
    single(
        "no existing pods", incoming("foo", constraints=[zone()]), abxy(), [], abxy_verdicts(OK, OK, OK, OK)
    ),
    single(
        "no existing pods, incoming pod doesn't match itself",
        incoming("foo", constraints=[zone(sel=BAR)]),
        abxy(),
        [],
        abxy_verdicts(OK, OK, OK, OK),
    ),
    single(
        "existing pods in a different namespace do not count",
        incoming("foo", constraints=[zone()]),
        abxy(),
        [
            p("p-a1", "node-a", "foo", ns="ns1"),
            p("p-b1", "node-a", "foo", ns="ns2"),
            p("p-x1", "node-x", "foo"),
            p("p-y1", "node-y", "foo"),
        ],
        abxy_verdicts(OK, OK, SPREAD, SPREAD),
    ),
    single(
        "existing pods do not match null selector",
        incoming("foo", constraints=[zone(sel=None)]),
        abxy(),
        [p("p-x1", "node-x", "foo"), p("p-y1", "node-y", "foo")],
        abxy_verdicts(OK, OK, OK, OK),
    ),
    single(
        "pods spread across zones as 3/3, all nodes fit",
        incoming("foo", constraints=[zone()]),
        abxy(),
        SPREAD_2103,
        abxy_verdicts(OK, OK, OK, OK),
    ),
    single(
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        incoming("foo", constraints=[zone()]),
        [
            n("node-a", zone="zone1", node="node-a"),
            n("node-b", zon="zone1", node="node-b"),
            n("node-x", zone="zone2", node="node-x"),
            n("node-y", zone="zone2", node="node-y"),
        ],
        [
            p("p-a1", "node-a", "foo"),
            p("p-b1", "node-b", "foo"),
            p("p-x1", "node-x", "foo"),
            p("p-y1", "node-y", "foo"),
        ],
        abxy_verdicts(OK, NO_KEY, SPREAD, SPREAD),
    ),
    single(
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        incoming("foo", constraints=[spread(1, "rack", FOO)]),
        [n("node-a", zone="zone1", node="node-a"), n("node-x", zone="zone2", node="node-x")],
        [],
        {"node-a": NO_KEY, "node-x": NO_KEY},
    ),
    single(
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        incoming("foo", constraints=[by_node()]),
        abxy(),
        SPREAD_2103,
        abxy_verdicts(SPREAD, SPREAD, OK, SPREAD),
    ),
    single(
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        incoming("foo", constraints=[by_node(2)]),
        abxy(),
        SPREAD_2103,
        abxy_verdicts(SPREAD, OK, OK, SPREAD),
    ),
    single(
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        incoming("bar", constraints=[by_node()]),
        abxy(),
        SPREAD_2103,
        abxy_verdicts(SPREAD, OK, OK, SPREAD),
    ),
    single(
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        incoming(
            "foo",
            constraints=[by_node()],
            affinity=node_affinity({"matchExpressions": [req("node", "In", "node-a", "node-y")]}),
        ),
        abxy(),
        SPREAD_2103,
        abxy_verdicts(OK, NODE_AFFINITY, NODE_AFFINITY, SPREAD),
    ),
    single(
        "terminating Pods should be excluded",
        incoming("foo", constraints=[by_node()]),
        [n("node-a", node="node-a"), n("node-b", node="node-b")],
        [
            terminating(p("p-a", "node-a", "foo")),
            p("p-b", "node-b", "foo"),
        ],
        {"node-a": OK, "node-b": SPREAD},
    ),
    single(
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        incoming(
            "foo",
            constraints=[zone()],
            affinity=node_affinity({"matchExpressions": [req("node", "NotIn", "node-b")]}),
        ),
        abxy(),
        [p("p-b1", "node-b", "foo"), p("p-b2", "node-b", "foo"), p("p-y1", "node-y", "foo")],
        abxy_verdicts(OK, NODE_AFFINITY, SPREAD, SPREAD),
    ),
    single(
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
        incoming("foo", constraints=[by_node(2, minDomains=4)]),
        ABC,
        TWO_TWO_ONE,
        {"node-a": SPREAD, "node-b": SPREAD, "node-c": OK},
    ),
    single(
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
        incoming("foo", constraints=[by_node(2, minDomains=2)]),
        ABC,
        TWO_TWO_ONE,
        {"node-a": OK, "node-b": OK, "node-c": OK},
    ),
    single(
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
        incoming("foo", constraints=[zone(2, minDomains=3)]),
        abxy(),
        ZONE_2_1,
        abxy_verdicts(SPREAD, SPREAD, OK, OK),
    ),
    single(
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
        incoming("foo", constraints=[zone(2, minDomains=1)]),
        abxy(),
        ZONE_2_1,
        abxy_verdicts(OK, OK, OK, OK),
    ),
    single(
        "NodeAffinityPolicy honored with labelSelectors",
        incoming("foo", constraints=[by_node()], nodeSelector={"foo": ""}),
        ONLY_NODE_LABEL,
        ONE_ONE_ZERO_ONE,
        abxy_verdicts(SPREAD, SPREAD, OK, NODE_AFFINITY),
    ),
    single(
        "NodeAffinityPolicy ignored with labelSelectors",
        incoming("foo", constraints=[by_node(nodeAffinityPolicy="Ignore")], nodeSelector={"foo": ""}),
        ONLY_NODE_LABEL,
        ONE_ONE_ZERO_ONE,
        abxy_verdicts(SPREAD, SPREAD, OK, NODE_AFFINITY),
    ),
    single(
        "NodeAffinityPolicy honored with nodeAffinity",
        incoming(
            "foo",
            constraints=[by_node()],
            affinity=node_affinity({"matchExpressions": [req("foo", "In", "")]}),
        ),
        ONLY_NODE_LABEL,
        ONE_ONE_ZERO_ONE,
        abxy_verdicts(SPREAD, SPREAD, OK, NODE_AFFINITY),
    ),
    single(
        "NodeAffinityPolicy ignored with labelSelectors",
        incoming(
            "foo",
            constraints=[by_node(nodeAffinityPolicy="Ignore")],
            affinity=node_affinity({"matchExpressions": [req("foo", "In", "")]}),
        ),
        ONLY_NODE_LABEL,
        ONE_ONE_ZERO_ONE,
        abxy_verdicts(SPREAD, SPREAD, OK, NODE_AFFINITY),
        nth=2,
    ),
    single(
        "NodeTaintsPolicy honored",
        incoming("foo", constraints=[by_node(nodeTaintsPolicy="Honor")]),
        ONLY_NODE_LABEL_TAINTED_Y,
        ONE_ONE_ZERO_ONE,
        abxy_verdicts(SPREAD, SPREAD, OK, TAINTED),
    ),
    single(
        "NodeTaintsPolicy ignored",
        incoming("foo", constraints=[by_node()]),
        ONLY_NODE_LABEL_TAINTED_Y,
        ONE_ONE_ZERO_ONE,
        abxy_verdicts(SPREAD, SPREAD, OK, TAINTED),
    ),
]

MULTIPLE_ROWS = [
    multiple(
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        incoming("foo", constraints=[zone(), by_node()]),
        abxy(),
        SPREAD_2103,
        abxy_verdicts(SPREAD, SPREAD, OK, SPREAD),
    ),
    multiple(
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        incoming("foo", constraints=[zone(), by_node()]),
        abxy(),
        [*SPREAD_2103, p("p-y4", "node-y", "foo")],
        abxy_verdicts(SPREAD, SPREAD, SPREAD, SPREAD),
    ),
    multiple(
        "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        incoming("foo", "bar", constraints=[zone(), by_node(sel=BAR)]),
        abxy(),
        [p("p-a1", "node-a", "foo"), p("p-y1", "node-y", "bar")],
        abxy_verdicts(SPREAD, SPREAD, OK, SPREAD),
    ),
    multiple(
        "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        incoming("foo", "bar", constraints=[zone(), by_node(sel=BAR)]),
        abxy(),
        [p("p-a1", "node-a", "foo"), p("p-x1", "node-x", "bar"), p("p-y1", "node-y", "bar")],
        abxy_verdicts(SPREAD, SPREAD, SPREAD, SPREAD),
    ),
    multiple(
        "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        incoming("foo", "bar", constraints=[zone(), by_node(sel=BAR)]),
        abxy(),
        [
            p("p-a1", "node-a", "foo"),
            p("p-a2", "node-a", "foo", "bar"),
            p("p-y1", "node-y", "foo"),
            p("p-y2", "node-y", "foo", "bar"),
            p("p-y3", "node-y", "foo"),
        ],
        abxy_verdicts(SPREAD, OK, SPREAD, SPREAD),
    ),
    multiple(
        "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        incoming("bar", constraints=[zone(), by_node(sel=BAR)]),
        abxy(),
        [p("p-a1", "node-a", "foo"), p("p-x1", "node-x", "bar"), p("p-y1", "node-y", "bar")],
        abxy_verdicts(OK, OK, SPREAD, SPREAD),
    ),
    multiple(
        "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        incoming("foo", constraints=[zone(), by_node()]),
        [
            n("node-a", zone="zone1", node="node-a"),
            n("node-b", zone="zone1", node="node-b"),
            n("node-x", zone="zone2"),
            n("node-y", zone="zone2", node="node-y"),
        ],
        [p("p-a1", "node-a", "foo"), p("p-y3", "node-y", "foo")],
        abxy_verdicts(SPREAD, OK, NO_KEY, SPREAD),
    ),
    multiple(
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        incoming("foo", constraints=[zone(), by_node(nodeAffinityPolicy="Ignore")], nodeSelector={"foo": ""}),
        abxy(**FOO_NODES),
        [p("p-a1", "node-a", "foo"), p("p-b1", "node-b", "foo"), p("p-y1", "node-y", "foo")],
        abxy_verdicts(SPREAD, SPREAD, OK, NODE_AFFINITY),
    ),
    multiple(
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        incoming("foo", constraints=[zone(nodeTaintsPolicy="Honor"), by_node()]),
        [*abxy(**FOO_NODES)[:3], n("node-y", tainted=True, zone="zone2", node="node-y")],
        [p("p-a1", "node-a", "foo"), p("p-b1", "node-b", "foo"), p("p-y1", "node-y", "foo")],
        abxy_verdicts(SPREAD, SPREAD, OK, TAINTED),
    ),
    multiple(
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        incoming("foo", constraints=[zone(), by_node()], nodeSelector={"foo": ""}),
        [
            n("node-a", zone="zone1", node="node-a", foo=""),
            n("node-b", zone="zone1", node="node-b"),
            n("node-x", zone="zone2", node="node-x", foo=""),
            n("node-y", tainted=True, zone="zone2", node="node-y", foo=""),
        ],
        [p("p-a1", "node-a", "foo"), p("p-b1", "node-b", "foo"), p("p-y1", "node-y", "foo")],
        abxy_verdicts(SPREAD, NODE_AFFINITY, OK, TAINTED),
    ),
    multiple(
        "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        incoming(
            "foo",
            constraints=[zone(nodeTaintsPolicy="Honor"), by_node(nodeAffinityPolicy="Ignore")],
            nodeSelector={"foo": ""},
        ),
        [
            n("node-a", zone="zone1", node="node-a", foo=""),
            n("node-b", zone="zone1", node="node-b"),
            n("node-x", zone="zone2", node="node-x", foo=""),
            n("node-y", tainted=True, zone="zone2", node="node-y", foo=""),
        ],
        [p("p-a1", "node-a", "foo"), p("p-b1", "node-b", "foo"), p("p-y1", "node-y", "foo")],
        abxy_verdicts(SPREAD, NODE_AFFINITY, OK, TAINTED),
    ),
    multiple(
        "two Constraints on zone, spreads = [3/3, 2/1]",
        incoming("foo", "bar", constraints=[zone(sel=BAR), zone()]),
        abxy(),
        [
            p("p-a1", "node-a", "foo", "bar"),
            p("p-a2", "node-a", "foo"),
            p("p-b1", "node-b", "foo", "bar"),
            p("p-y1", "node-y", "foo"),
            p("p-y2", "node-y", "foo", "bar"),
            p("p-y3", "node-y", "foo"),
        ],
        abxy_verdicts(SPREAD, SPREAD, OK, OK),
    ),
    multiple(
        "two Constraints on zone, spreads = [3/4, 2/1]",
        incoming("foo", "bar", constraints=[zone(sel=BAR), zone()]),
        abxy(),
        [
            p("p-a1", "node-a", "foo", "bar"),
            p("p-a2", "node-a", "foo"),
            p("p-b1", "node-b", "foo", "bar"),
            p("p-y1", "node-y", "foo"),
            p("p-y2", "node-y", "foo", "bar"),
            p("p-y3", "node-y", "foo"),
            p("p-y4", "node-y", "foo"),
        ],
        abxy_verdicts(SPREAD, SPREAD, SPREAD, SPREAD),
    ),
]

ROWS = [*SINGLE_ROWS, *MULTIPLE_ROWS]
