"""InterPodAffinity Filter: `TestRequiredAffinitySingleNode` and `TestRequiredAffinityMultipleNodes`,
read at kubernetes commit 072825f9 (these tables hold the incoming-pod anti-affinity and the
existing-pod symmetry cases too).

Upstream's unnamed pods get names here; namespace "" is `default`. The Namespaces the single-node
table's informers hold (`subteam1.team1`, `subteam2.team1` labelled team=team1, `subteam1.team2`,
`subteam2.team2` labelled team=team2) are objects of every row of that table. One incoming pod
("Test incoming pod's anti-affinity: even if labelSelector matches, we still check if
topologyKey matches") carries `spec.nodeName` in upstream only because its builder is shared;
the plugin ignores it, and here it is left out so the pod is one to place.
"""

from __future__ import annotations

import re
from typing import Any

from conformance.harness import Feasible, Obj, Row
from conformance.objects import namespace, node, pod, req, selector, term
from controller.placer.plugins import inter_pod_affinity as interpod

FILE = "pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go"
SINGLE = f"{FILE}:TestRequiredAffinitySingleNode"
MULTIPLE = f"{FILE}:TestRequiredAffinityMultipleNodes"

AFF = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
INVALID = f"{interpod.INVALID}; pod default/p"
"""PreFilter refuses the pod (upstream: an error parsing its terms), naming it."""

SECURITYSCAN = {"service": "securityscan"}
S1 = {"security": "S1"}


def affinity(required: list[Obj] | None = None, anti: list[Obj] | None = None) -> Obj:
    out: Obj = {}
    if required:
        out["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": required}
    if anti:
        out["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    return out


def t_in(key: str, topology: str, *values: str, **extra: Any) -> Obj:
    return term(topology, selector(req(key, "In", *values)), **extra)


def t_not_in(key: str, topology: str, *values: str) -> Obj:
    return term(topology, selector(req(key, "NotIn", *values)))


def t_exists(key: str, topology: str) -> Obj:
    return term(topology, selector(req(key, "Exists")))


def incoming(
    labels: dict[str, str] | None = None,
    required: list[Obj] | None = None,
    anti: list[Obj] | None = None,
    ns: str = "default",
) -> Obj:
    aff = affinity(required, anti)
    return pod("p", namespace=ns, labels=labels, **({"affinity": aff} if aff else {}))


def existing(
    name: str,
    at: str,
    labels: dict[str, str] | None = None,
    anti: list[Obj] | None = None,
    ns: str = "default",
) -> Obj:
    aff = affinity(None, anti)
    return pod(name, namespace=ns, node_name=at, labels=labels, **({"affinity": aff} if aff else {}))


NAMESPACES = [
    namespace("subteam1-team1", {"team": "team1"}),
    namespace("subteam2-team1", {"team": "team1"}),
    namespace("subteam1-team2", {"team": "team2"}),
    namespace("subteam2-team2", {"team": "team2"}),
]
NODE1 = node("node1", {"region": "r1", "zone": "z11"}, hostname=False)
SCAN_POD = existing("pod", "node1", SECURITYSCAN)


def _single(case: str, the_pod: Obj, pods: list[Obj], verdict: bool | str) -> Row:
    return Row(
        "InterPodAffinity", SINGLE, case, [*NAMESPACES, NODE1, *pods], [the_pod], Feasible({"node1": verdict})
    )


_REGION_SCAN = t_in("service", "region", "securityscan", "value2")
_NODE_ANTIVIRUS = t_in("service", "node", "antivirusscan", "value2")
_ZONE_SCAN = t_in("service", "zone", "securityscan", "value2")
_TEAM1 = {"namespaceSelector": selector(req("team", "In", "team1"))}

SINGLE_ROWS = [
    _single(
        "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        pod("p"),
        [],
        True,
    ),
    _single(
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
        incoming(S1, [_REGION_SCAN]),
        [SCAN_POD],
        True,
    ),
    _single(
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
        incoming(S1, [t_not_in("service", "region", "securityscan3", "value3")]),
        [SCAN_POD],
        True,
    ),
    _single(
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        incoming(S1, [t_in("service", "", "securityscan", "value2", namespaces=["DiffNameSpace"])]),
        [existing("pod", "node1", SECURITYSCAN, ns="ns")],
        AFF,
    ),
    _single(
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        incoming(SECURITYSCAN, [t_in("service", "", "antivirusscan", "value2")]),
        [SCAN_POD],
        AFF,
    ),
    _single(
        "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
        incoming(
            S1,
            [
                term("region", selector(req("service", "Exists"), req("wrongkey", "DoesNotExist"))),
                term(
                    "region",
                    selector(req("service", "In", "securityscan"), req("service", "NotIn", "WrongValue")),
                ),
            ],
        ),
        [SCAN_POD],
        True,
    ),
    _single(
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
        incoming(
            S1,
            [
                term("region", selector(req("service", "Exists"), req("wrongkey", "DoesNotExist"))),
                term(
                    "region",
                    selector(req("service", "In", "securityscan2"), req("service", "NotIn", "WrongValue")),
                ),
            ],
        ),
        [SCAN_POD],
        AFF,
    ),
    _single(
        "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        incoming(S1, [_REGION_SCAN], [_NODE_ANTIVIRUS]),
        [SCAN_POD],
        True,
    ),
    _single(
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        incoming(S1, [_REGION_SCAN], [_NODE_ANTIVIRUS]),
        [existing("pod", "node1", SECURITYSCAN, [_NODE_ANTIVIRUS])],
        True,
    ),
    _single(
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        incoming(S1, [_REGION_SCAN], [_ZONE_SCAN]),
        [SCAN_POD],
        ANTI,
    ),
    _single(
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        incoming(SECURITYSCAN, [_REGION_SCAN], [_NODE_ANTIVIRUS]),
        [existing("pod", "node1", SECURITYSCAN, [_ZONE_SCAN])],
        EXISTING,
    ),
    _single(
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        incoming(SECURITYSCAN, [t_not_in("service", "region", "securityscan", "value2")]),
        [existing("pod", "node2", SECURITYSCAN)],
        AFF,
    ),
    _single(
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        incoming(SECURITYSCAN),
        [existing("pod", "node1", SECURITYSCAN, [_ZONE_SCAN])],
        EXISTING,
    ),
    _single(
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
        incoming(SECURITYSCAN),
        [existing("pod", "node1", SECURITYSCAN, [t_not_in("service", "zone", "securityscan", "value2")])],
        True,
    ),
    _single(
        "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
        incoming(SECURITYSCAN, anti=[t_exists("service", "region"), t_exists("security", "region")]),
        [existing("pod", "node1", S1, [t_exists("security", "zone")])],
        ANTI,
    ),
    _single(
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        incoming(SECURITYSCAN, anti=[t_exists("service", "zone"), t_exists("security", "zone")]),
        [existing("pod", "node1", S1, [t_exists("security", "zone")])],
        ANTI,
    ),
    _single(
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        incoming(S1, anti=[t_exists("security", "zone")]),
        [existing("pod", "node1", SECURITYSCAN, [t_exists("service", "zone"), t_exists("security", "zone")])],
        EXISTING,
    ),
    _single(
        "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
        incoming({"abc": "", "xyz": ""}, anti=[t_exists("abc", "zone"), t_exists("def", "zone")]),
        [
            existing(
                "pod", "node1", {"def": "", "xyz": ""}, [t_exists("abc", "zone"), t_exists("def", "zone")]
            )
        ],
        ANTI,
    ),
    _single(
        "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
        incoming({"def": "", "xyz": ""}, anti=[t_exists("abc", "zone"), t_exists("def", "zone")]),
        [
            existing(
                "pod", "node1", {"abc": "", "xyz": ""}, [t_exists("abc", "zone"), t_exists("def", "zone")]
            )
        ],
        ANTI,
    ),
    _single(
        "PodAffinity fails PreFilter with an invalid affinity label syntax",
        incoming(
            SECURITYSCAN,
            [
                t_in("service", "region", "{{.bad-value.}}"),
                t_in("service", "node", "antivirusscan", "value2"),
            ],
        ),
        [],
        INVALID,
    ),
    _single(
        "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
        incoming(
            SECURITYSCAN, [t_in("service", "region", "foo"), t_in("service", "node", "{{.bad-value.}}")]
        ),
        [],
        INVALID,
    ),
    _single(
        "affinity with NamespaceSelector",
        incoming(S1, [t_in("service", "region", "securityscan", "value2", **_TEAM1)]),
        [existing("pod", "node1", SECURITYSCAN, ns="subteam1-team1")],
        True,
    ),
    _single(
        "affinity with non-matching NamespaceSelector",
        incoming(S1, [t_in("service", "region", "securityscan", "value2", **_TEAM1)]),
        [existing("pod", "node1", SECURITYSCAN, ns="subteam1-team2")],
        AFF,
    ),
    _single(
        "anti-affinity with matching NamespaceSelector",
        incoming(S1, anti=[t_in("service", "zone", "securityscan", "value2", **_TEAM1)], ns="subteam1-team1"),
        [existing("pod", "node1", SECURITYSCAN, ns="subteam2-team1")],
        ANTI,
    ),
    _single(
        "anti-affinity with matching all NamespaceSelector",
        incoming(
            S1,
            anti=[t_in("service", "zone", "securityscan", "value2", namespaceSelector={})],
            ns="subteam1-team1",
        ),
        [existing("pod", "node1", SECURITYSCAN, ns="subteam2-team1")],
        ANTI,
    ),
    _single(
        "anti-affinity with non-matching NamespaceSelector",
        incoming(S1, anti=[t_in("service", "zone", "securityscan", "value2", **_TEAM1)], ns="subteam1-team1"),
        [existing("pod", "node1", SECURITYSCAN, ns="subteam1-team2")],
        True,
    ),
]


def _nodes(**labels: dict[str, str]) -> list[Obj]:
    """Upstream's `nodeA` is a name the API server refuses: it becomes `node-a`."""
    return [
        node(re.sub(r"([A-Z])", r"-\1", name).lower(), lab, hostname=False) for name, lab in labels.items()
    ]


def _multi(case: str, the_pod: Obj, pods: list[Obj], nodes: list[Obj], verdicts: list[bool | str]) -> Row:
    names = [n["metadata"]["name"] for n in nodes]
    objects = [namespace("ns1"), *nodes, *pods]
    return Row(
        "InterPodAffinity",
        MULTIPLE,
        case,
        objects,
        [the_pod],
        Feasible(dict(zip(names, verdicts, strict=True))),
    )


CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def _rz(region: str, zone: str, host: str) -> dict[str, str]:
    return {"region": region, "zone": zone, "hostname": host}


AB_SAME_ZONE = _nodes(nodeA=_rz("r1", "z1", "node-a"), nodeB=_rz("r1", "z1", "node-b"))
AB_TWO_ZONES = _nodes(nodeA=_rz("r1", "z1", "node-a"), nodeB=_rz("r1", "z2", "node-b"))
FOO_BAR = {"foo": "", "bar": ""}
_COLLECTION = {"foo": "bar", "service": "securityscan"}
_COLLECTION_TERMS = [t_in("foo", "zone", "bar"), t_in("service", "zone", "securityscan")]

MULTIPLE_ROWS = [
    _multi(
        "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
        incoming(None, [t_in("foo", "region", "bar")]),
        [existing("p1", "node1", {"foo": "bar"})],
        _nodes(node1=CHINA, node2=CHINA_AZ1, node3=INDIA),
        [True, True, AFF],
    ),
    _multi(
        "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection "
        "should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
        incoming(_COLLECTION, _COLLECTION_TERMS),
        [existing("p1", "node-a", {"foo": "bar"})],
        _nodes(nodeA={"zone": "az1", "hostname": "h1"}, nodeB={"zone": "az2", "hostname": "h2"}),
        [True, True],
    ),
    _multi(
        "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
        incoming(_COLLECTION, _COLLECTION_TERMS),
        [existing("p1", "node-a", {"foo": "bar"})],
        _nodes(nodeA={"zoneLabel": "az1", "hostname": "h1"}, nodeB={"zoneLabel": "az2", "hostname": "h2"}),
        [AFF, AFF],
    ),
    _multi(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        incoming(anti=[t_in("foo", "region", "abc")]),
        [existing("e1", "node-a", {"foo": "abc"})],
        _nodes(nodeA={"region": "r1", "hostname": "node-a"}, nodeB={"region": "r1", "hostname": "node-b"}),
        [ANTI, ANTI],
    ),
    _multi(
        "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
        incoming(anti=[t_in("foo", "region", "abc"), t_in("service", "zone", "securityscan")]),
        [existing("e1", "node-a", {"foo": "abc", "service": "securityscan"})],
        AB_TWO_ZONES,
        [ANTI, ANTI],
    ),
    _multi(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
        incoming(anti=[t_in("foo", "region", "abc")]),
        [existing("e1", "node-a", {"foo": "abc"})],
        _nodes(nodeA=CHINA, nodeB=CHINA_AZ1, nodeC=INDIA),
        [ANTI, ANTI, True],
    ),
    _multi(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
        incoming({"foo": "123"}, anti=[t_in("foo", "region", "bar")], ns="ns1"),
        [
            existing("e1", "node-a", {"foo": "bar"}, ns="ns1"),
            existing("e2", "node-c", None, [t_in("foo", "region", "123")], ns="ns2"),
        ],
        _nodes(nodeA=CHINA, nodeB=CHINA_AZ1, nodeC=INDIA),
        [ANTI, ANTI, True],
    ),
    _multi(
        "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
        incoming({"foo": ""}),
        [existing("e1", "node-a", None, [t_exists("foo", "invalid-node-label")])],
        AB_SAME_ZONE,
        [True, True],
    ),
    _multi(
        "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
        incoming(anti=[t_exists("foo", "invalid-node-label")]),
        [existing("e1", "node-a", {"foo": ""})],
        AB_SAME_ZONE,
        [True, True],
    ),
    _multi(
        "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
        incoming(FOO_BAR),
        [
            existing("e1", "node-a", None, [t_exists("foo", "zone")]),
            existing("e2", "node-a", None, [t_exists("bar", "region")]),
        ],
        AB_TWO_ZONES,
        [EXISTING, EXISTING],
    ),
    _multi(
        "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
        incoming(anti=[t_exists("foo", "zone"), t_exists("bar", "region")]),
        [existing("e1", "node-a", {"foo": ""}), existing("e2", "node-b", {"bar": ""})],
        AB_TWO_ZONES,
        [ANTI, ANTI],
    ),
    _multi(
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
        incoming(FOO_BAR),
        [existing("e1", "node-a", None, [t_exists("foo", "invalid-node-label"), t_exists("bar", "zone")])],
        AB_TWO_ZONES,
        [EXISTING, True],
    ),
    _multi(
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
        incoming(anti=[t_exists("foo", "invalid-node-label"), t_exists("bar", "zone")]),
        [existing("pod-a", "node-a", FOO_BAR)],
        AB_TWO_ZONES,
        [ANTI, True],
    ),
    _multi(
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
        incoming(FOO_BAR),
        [existing("e1", "node-a", None, [t_exists("foo", "region"), t_exists("bar", "zone")])],
        AB_TWO_ZONES,
        [EXISTING, EXISTING],
    ),
    _multi(
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
        incoming(anti=[t_exists("foo", "region"), t_exists("bar", "zone")]),
        [existing("e1", "node-a", FOO_BAR)],
        AB_TWO_ZONES,
        [ANTI, ANTI],
    ),
    _multi(
        "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
        incoming(FOO_BAR),
        [
            existing("e1", "node-a", None, [t_exists("foo", "zone"), t_exists("labelA", "zone")]),
            existing("e2", "node-b", None, [t_exists("bar", "zone"), t_exists("labelB", "zone")]),
        ],
        _nodes(
            nodeA=_rz("r1", "z1", "node-a"), nodeB=_rz("r1", "z2", "node-b"), nodeC=_rz("r1", "z3", "node-c")
        ),
        [EXISTING, EXISTING, True],
    ),
    _multi(
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
        incoming(None, [t_exists("foo", "region"), t_exists("bar", "zone")]),
        [existing("pod1", "node-a", FOO_BAR)],
        AB_SAME_ZONE,
        [True, True],
    ),
    _multi(
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
        incoming(None, [t_exists("foo", "region"), t_exists("bar", "zone")]),
        [existing("pod1", "node-a", {"foo": ""}), existing("pod2", "node-b", {"bar": ""})],
        AB_TWO_ZONES,
        [AFF, AFF],
    ),
]

ROWS = [*SINGLE_ROWS, *MULTIPLE_ROWS]
