"""NodeAffinity: `TestNodeAffinity` (PreFilter + Filter on one node), read at kubernetes commit
022462cc.

Each case's node is the whole cluster (named as upstream names it, `node` when unnamed, with
only upstream's labels). Where a case also states a PreFilterResult (the node names a
`matchFields` term allows), the Filter verdict on the case's node says the same thing.
Not taken: the three `AddedAffinity` cases ("Matches added affinity and Pod's node affinity",
"Matches added affinity but not Pod's node affinity", "Doesn't match added affinity"), which
configure the scheduler profile's plugin args rather than the pod or the cluster.
"""

from __future__ import annotations

from typing import Any

from conformance.harness import Feasible, Obj, Row
from conformance.objects import node, node_affinity, pod, req

UPSTREAM = "pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go:TestNodeAffinity"
NOT_MATCHED = "node(s) didn't match Pod's node affinity/selector"
NAME = "metadata.name"


def _row(
    case: str, labels: dict[str, str] | None, verdict: bool | str, *, node_name: str = "node", **spec: Any
) -> Row:
    the_node = node(node_name, labels, hostname=False)
    return Row("NodeAffinity", UPSTREAM, case, [the_node], [pod("p", **spec)], Feasible({node_name: verdict}))


def _exprs(*reqs: Obj) -> Obj:
    return {"matchExpressions": list(reqs)}


def _fields(*reqs: Obj) -> Obj:
    return {"matchFields": list(reqs)}


_GPU_NOT_AMD = _exprs(req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER"))

ROWS = [
    _row("missing labels", None, NOT_MATCHED, nodeSelector={"foo": "bar"}),
    _row("same labels", {"foo": "bar"}, True, nodeSelector={"foo": "bar"}),
    _row("node labels are superset", {"foo": "bar", "baz": "blah"}, True, nodeSelector={"foo": "bar"}),
    _row("node labels are subset", {"foo": "bar"}, NOT_MATCHED, nodeSelector={"foo": "bar", "baz": "blah"}),
    _row(
        "Pod with matchExpressions using In operator that matches the existing node",
        {"foo": "bar"},
        True,
        affinity=node_affinity(_exprs(req("foo", "In", "bar", "value2"))),
    ),
    _row(
        "Pod with matchExpressions using Gt operator that matches the existing node",
        {"kernel-version": "0206"},
        True,
        affinity=node_affinity(_exprs(req("kernel-version", "Gt", "0204"))),
    ),
    _row(
        "Pod with matchExpressions using NotIn operator that matches the existing node",
        {"mem-type": "DDR3"},
        True,
        affinity=node_affinity(_exprs(req("mem-type", "NotIn", "DDR", "DDR2"))),
    ),
    _row(
        "Pod with matchExpressions using Exists operator that matches the existing node",
        {"GPU": "NVIDIA-GRID-K1"},
        True,
        affinity=node_affinity(_exprs(req("GPU", "Exists"))),
    ),
    _row(
        "Pod with affinity that don't match node's labels won't schedule onto the node",
        {"foo": "bar"},
        NOT_MATCHED,
        affinity=node_affinity(_exprs(req("foo", "In", "value1", "value2"))),
    ),
    _row(
        "Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
        {"foo": "bar"},
        NOT_MATCHED,
        affinity=node_affinity({"matchExpressions": []}),
    ),
    _row("Pod with no Affinity will schedule onto a node", {"foo": "bar"}, True),
    _row(
        "Pod with Affinity but nil NodeSelector will schedule onto a node",
        {"foo": "bar"},
        True,
        affinity={"nodeAffinity": {}},
    ),
    _row(
        "Pod with multiple matchExpressions ANDed that matches the existing node",
        {"GPU": "NVIDIA-GRID-K1"},
        True,
        affinity=node_affinity(_GPU_NOT_AMD),
    ),
    _row(
        "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
        {"GPU": "NVIDIA-GRID-K1"},
        NOT_MATCHED,
        affinity=node_affinity(_exprs(req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER"))),
    ),
    _row(
        "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
        {"foo": "bar"},
        True,
        affinity=node_affinity(
            _exprs(req("foo", "In", "bar", "value2")), _exprs(req("diffkey", "In", "wrong", "value2"))
        ),
    ),
    _row(
        "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) "
        "both are satisfied, will schedule onto the node",
        {"foo": "bar"},
        True,
        nodeSelector={"foo": "bar"},
        affinity=node_affinity(_exprs(req("foo", "Exists"))),
    ),
    _row(
        "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) "
        "is not satisfied, won't schedule onto the node",
        {"foo": "barrrrrr"},
        NOT_MATCHED,
        nodeSelector={"foo": "bar"},
        affinity=node_affinity(_exprs(req("foo", "Exists"))),
    ),
    _row(
        "Pod with an invalid value in Affinity term won't be scheduled onto the node",
        {"foo": "bar"},
        NOT_MATCHED,
        affinity=node_affinity(_exprs(req("foo", "NotIn", "invalid value: ___@#$%^"))),
    ),
    _row(
        "Pod with matchFields using In operator that matches the existing node",
        None,
        True,
        node_name="node1",
        affinity=node_affinity(_fields(req(NAME, "In", "node1"))),
    ),
    _row(
        "Pod with matchFields using In operator that does not match the existing node",
        None,
        NOT_MATCHED,
        node_name="node2",
        affinity=node_affinity(_fields(req(NAME, "In", "node1"))),
    ),
    _row(
        "Pod with two terms: matchFields does not match, but matchExpressions matches",
        {"foo": "bar"},
        True,
        node_name="node2",
        affinity=node_affinity(
            _fields(req(NAME, "In", "node1"), req(NAME, "In", "node2")), _exprs(req("foo", "In", "bar"))
        ),
    ),
    _row(
        "Pod with one term: matchFields does not match, but matchExpressions matches",
        {"foo": "bar"},
        NOT_MATCHED,
        node_name="node2",
        affinity=node_affinity({**_fields(req(NAME, "In", "node1")), **_exprs(req("foo", "In", "bar"))}),
    ),
    _row(
        "Pod with one term: both matchFields and matchExpressions match",
        {"foo": "bar"},
        True,
        node_name="node1",
        affinity=node_affinity({**_fields(req(NAME, "In", "node1")), **_exprs(req("foo", "In", "bar"))}),
    ),
    _row(
        "Pod with two terms: both matchFields and matchExpressions do not match",
        {"foo": "bar"},
        NOT_MATCHED,
        node_name="node2",
        affinity=node_affinity(
            _fields(req(NAME, "In", "node1")), _exprs(req("foo", "In", "not-match-to-bar"))
        ),
    ),
    _row(
        "Pod with two terms of node.Name affinity",
        None,
        True,
        node_name="node2",
        affinity=node_affinity(_fields(req(NAME, "In", "node1")), _fields(req(NAME, "In", "node2"))),
    ),
    _row(
        "Pod with two conflicting mach field requirements",
        {"foo": "bar"},
        NOT_MATCHED,
        node_name="node2",
        affinity=node_affinity(_fields(req(NAME, "In", "node1"), req(NAME, "In", "node2"))),
    ),
    _row(
        "Matches node selector correctly even if PreFilter is not called",
        {"foo": "bar", "baz": "blah"},
        True,
        nodeSelector={"foo": "bar"},
    ),
    _row(
        "Matches node affinity correctly even if PreFilter is not called",
        {"GPU": "NVIDIA-GRID-K1"},
        True,
        affinity=node_affinity(_GPU_NOT_AMD),
    ),
]
