"""InterPodAffinity and PodTopologySpread Score tables: `TestPreferredAffinity` (read at kubernetes
commit 030880a5) and `TestPodTopologySpreadScore` (read at 008b3652).

Each row states upstream's normalized scores (`Scores`) for the case's pod over the nodes the
case scores; nodes upstream keeps in the snapshot but out of scoring (its `failedNodes`, as if
Filter had removed them) are `Scores.failed`. Unit nodes carry only upstream's labels. Upstream's
unnamed pods get names here (`e1`, `e2`, ... for the existing ones), and its empty namespace is
`default`; its namespaces `subteamN.teamM` are `subteamN-teamM` (a namespace name has no dot).

Not taken from `TestPreferredAffinity`:
* "invalid Affinity fails PreScore", "invalid AntiAffinity fails PreScore": upstream expects an
  error status, not scores (the Filter rows cover the refusal of an unparsable selector);
* "Ignore preferred terms of existing pods": sets the plugin arg
  `IgnorePreferredTermsOfExistingPods`;
* "No nodes to score": a cluster without nodes, no scores to compare.
"all nodes are same priority as Affinity is nil" expects upstream's Skip, which scores every node
alike: all 0 here.

Not taken from `TestPodTopologySpreadScore`:
* "system defaulting, nodes don't have zone, pods match service": the constraints come from the
  plugin's system defaults and a Service, not from the pod;
* "matchLabelKeys ignored when feature gate disabled": runs with the MatchLabelKeys gate off.
Upstream runs the rest with its node-inclusion-policy switch as each case sets it; the cases
that leave it off have no node selector, affinity or taint, so the switch plays no part.
"""

from __future__ import annotations

from typing import Any

from conformance.harness import Obj, Row, Scores
from conformance.objects import namespace, node, pod, pod_affinity, req, selector, spread, taint, term

AFFINITY_TEST = "pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go:TestPreferredAffinity"
SPREAD_TEST = "pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go:TestPodTopologySpreadScore"
TOP = 100
"""kube's MaxNodeScore."""

# --- InterPodAffinity ----------------------------------------------------------------------------

CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {**CHINA, **AZ1}
S1 = {"security": "S1"}
S2 = {"security": "S2"}

NAMESPACES = [
    namespace("subteam1-team1", {"team": "team1"}),
    namespace("subteam2-team1", {"team": "team1"}),
    namespace("subteam1-team2", {"team": "team2"}),
    namespace("subteam2-team2", {"team": "team2"}),
]
"""The namespaces upstream's table runs every case with."""

IS_S1 = selector(req("security", "In", "S1"))
IS_S2 = selector(req("security", "In", "S2"))
HAS_SECURITY = selector(req("security", "Exists"), req("wrongkey", "DoesNotExist"))
BY_NAMESPACE = {"namespaces": ["subteam2-team2"], "namespaceSelector": selector(req("team", "In", "team1"))}

STAY_S1_REGION = pod_affinity(preferred=[(5, term("region", IS_S1))])
STAY_S2_REGION = pod_affinity(preferred=[(6, term("region", IS_S2))])
TWO_PREFERENCES = pod_affinity(
    preferred=[
        (8, term("region", selector(req("security", "NotIn", "S1"), req("security", "In", "S2")))),
        (2, term("region", HAS_SECURITY)),
    ]
)
HARD = pod_affinity(
    required=[
        term("region", selector(req("security", "In", "S1", "value2"))),
        term("region", HAS_SECURITY),
    ]
)
AWAY_S1_AZ = pod_affinity(preferred_anti=[(5, term("az", IS_S1))])
AWAY_S2_AZ = pod_affinity(preferred_anti=[(5, term("az", IS_S2))])
STAY_S1_AWAY_S2 = pod_affinity(
    preferred=[(8, term("region", IS_S1))], preferred_anti=[(5, term("az", IS_S2))]
)
NS_AFFINITY = pod_affinity(preferred=[(5, term("region", IS_S1, **BY_NAMESPACE))])
NS_ANTI = pod_affinity(preferred_anti=[(5, term("region", IS_S1, **BY_NAMESPACE))])

Bound = tuple[Any, ...]
"""An existing pod: (node, labels, affinity), and its namespace when not `default`."""


def _existing(i: int, spec: Bound) -> Obj:
    at, labels, affinity, *rest = spec
    extra: dict[str, Any] = {"affinity": affinity} if affinity is not None else {}
    return pod(f"e{i}", namespace=rest[0] if rest else "default", node_name=at, labels=labels, **extra)


def _affinity(
    case: str,
    incoming: tuple[dict[str, str] | None, Obj | None],
    existing: list[Bound],
    nodes: dict[str, dict[str, str]],
    scores: list[int],
    *,
    ns: str = "default",
    nth: int = 1,
) -> Row:
    labels, affinity = incoming
    spec: dict[str, Any] = {"affinity": affinity} if affinity is not None else {}
    return Row(
        "InterPodAffinity/score",
        AFFINITY_TEST,
        case,
        [
            *NAMESPACES,
            *(node(name, lab, hostname=False) for name, lab in nodes.items()),
            *(_existing(i, e) for i, e in enumerate(existing, 1)),
        ],
        [pod("pod", namespace=ns, labels=labels, **spec)],
        Scores(dict(zip(nodes, scores, strict=True))),
        nth=nth,
    )


THREE = {"node1": CHINA, "node2": INDIA, "node3": AZ1}
TWO = {"node1": CHINA, "node2": INDIA}
NS1 = "subteam1-team1"

AFFINITY_ROWS = [
    _affinity("all nodes are same priority as Affinity is nil", (S1, None), [], THREE, [0, 0, 0]),
    _affinity(
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
        "which doesn't match either pods in nodes or in topology key",
        (S1, STAY_S1_REGION),
        [("node1", S1, None), ("node2", S2, None), ("node3", S1, None)],
        THREE,
        [TOP, 0, 0],
    ),
    _affinity(
        "All the nodes that have the same topology key & label value with one of them has an existing pod "
        "that match the affinity rules, have the same score",
        (None, STAY_S1_REGION),
        [("node1", S1, None)],
        {"node1": CHINA, "node2": CHINA_AZ1, "node3": INDIA},
        [TOP, TOP, 0],
    ),
    _affinity(
        "Affinity: nodes in one region has more matching pods comparing to other region, so the region "
        "which has more matches will get high score",
        (S1, STAY_S2_REGION),
        [(at, S2, None) for at in ("node1", "node1", "node2", "node3", "node4", "node5")],
        {"node1": CHINA, "node2": INDIA, "node3": CHINA, "node4": CHINA, "node5": INDIA},
        [TOP, 0, TOP, TOP, 0],
    ),
    _affinity(
        "Affinity: different Label operators and values for pod affinity scheduling preference, "
        "including some match failures ",
        (S1, TWO_PREFERENCES),
        [("node1", S1, None), ("node2", S2, None), ("node3", S1, None)],
        THREE,
        [20, TOP, 0],
    ),
    _affinity(
        "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod "
        "affinity symmetry",
        (S2, None),
        [("node1", S1, STAY_S1_REGION), ("node2", S2, STAY_S2_REGION)],
        THREE,
        [0, TOP, 0],
    ),
    _affinity(
        "Affinity symmetry with namespace selector",
        (S1, None),
        [("node1", S1, NS_AFFINITY), ("node2", S2, STAY_S2_REGION)],
        THREE,
        [TOP, 0, 0],
        ns=NS1,
    ),
    _affinity(
        "AntiAffinity symmetry with namespace selector",
        (S1, None),
        [("node1", S1, NS_ANTI), ("node2", S2, STAY_S2_REGION)],
        THREE,
        [0, TOP, TOP],
        ns=NS1,
    ),
    _affinity(
        "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity "
        "symmetry",
        (S1, None),
        [("node1", S1, HARD), ("node2", S2, HARD)],
        THREE,
        [TOP, TOP, 0],
    ),
    _affinity(
        "Anti Affinity: pod that does not match existing pods in node will get high score ",
        (S1, AWAY_S1_AZ),
        [("node1", S1, None), ("node2", S2, None)],
        {"node1": AZ1, "node2": CHINA},
        [0, TOP],
    ),
    _affinity(
        "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher "
        "score comparing to others ",
        (S1, AWAY_S1_AZ),
        [("node1", S1, None), ("node2", S1, None)],
        {"node1": AZ1, "node2": CHINA},
        [0, TOP],
    ),
    _affinity(
        "Anti Affinity: one node has more matching pods comparing to other node, so the node which has "
        "more unmatches will get high score",
        (S1, AWAY_S1_AZ),
        [("node1", S1, None), ("node1", S1, None), ("node2", S2, None)],
        {"node1": AZ1, "node2": INDIA},
        [0, TOP],
    ),
    _affinity(
        "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        (S2, None),
        [("node1", S1, AWAY_S2_AZ), ("node2", S2, AWAY_S1_AZ)],
        {"node1": AZ1, "node2": AZ2},
        [0, TOP],
    ),
    _affinity(
        "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in "
        "both pod affinity & anti affinity",
        (S1, STAY_S1_AWAY_S2),
        [("node1", S1, None), ("node2", S1, None)],
        {"node1": CHINA, "node2": AZ1},
        [TOP, 0],
    ),
    _affinity(
        "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and "
        "existing pods have the same labels",
        (S1, STAY_S1_AWAY_S2),
        [(at, S1, None) for at in ("node1", "node1", "node2", "node3", "node3", "node4", "node5")],
        {"node1": CHINA_AZ1, "node2": INDIA, "node3": CHINA, "node4": CHINA, "node5": INDIA},
        [TOP, 0, TOP, TOP, 0],
    ),
    _affinity(
        "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuring"
        "Execution in both pod affinity & anti affinity & symmetry",
        (S1, STAY_S1_AWAY_S2),
        [
            ("node1", S1, None),
            ("node2", S2, None),
            ("node3", None, STAY_S1_AWAY_S2),
            ("node4", None, AWAY_S1_AZ),
        ],
        {"node1": CHINA, "node2": AZ1, "node3": INDIA, "node4": AZ2},
        [TOP, 0, TOP, 0],
    ),
    _affinity(
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        (S1, None),
        [("node1", S1, None), ("node2", None, STAY_S1_AWAY_S2)],
        {"node1": CHINA, "node2": CHINA},
        [0, 0],
    ),
    _affinity(
        "Affinity with pods matching NamespaceSelector",
        (S1, NS_AFFINITY),
        [
            ("node1", S1, None, NS1),
            ("node1", S1, None, NS1),
            ("node1", S1, None, "subteam1-team2"),
            ("node2", S1, None, "subteam2-team1"),
        ],
        TWO,
        [TOP, 0],
        ns=NS1,
    ),
    _affinity(
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        (S1, NS_AFFINITY),
        [
            ("node1", S1, None, NS1),
            ("node1", S1, None, NS1),
            ("node1", S1, None, "subteam2-team2"),
            ("node2", S1, None, "subteam2-team1"),
        ],
        TWO,
        [TOP, 0],
        ns=NS1,
    ),
    _affinity(
        "Affinity with pods matching NamespaceSelector",
        (S1, NS_ANTI),
        [
            ("node1", S1, None, NS1),
            ("node1", S1, None, NS1),
            ("node1", S1, None, "subteam1-team2"),
            ("node2", S1, None, "subteam2-team1"),
        ],
        TWO,
        [0, TOP],
        ns=NS1,
        nth=2,
    ),
    _affinity(
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        (S1, NS_ANTI),
        [
            ("node1", S1, None, NS1),
            ("node1", S1, None, NS1),
            ("node1", S1, None, "subteam2-team2"),
            ("node2", S1, None, "subteam2-team1"),
        ],
        TWO,
        [0, TOP],
        ns=NS1,
        nth=2,
    ),
    _affinity(
        "Do not ignore preferred terms of existing pods",
        (S2, None),
        [("node1", S1, STAY_S1_AWAY_S2), ("node2", S2, STAY_S2_REGION)],
        TWO,
        [0, TOP],
    ),
]

# --- PodTopologySpread ---------------------------------------------------------------------------

HOST = "kubernetes.io/hostname"
FOO = selector(req("foo", "Exists"))
BAR = selector(req("bar", "Exists"))
UNSCHEDULABLE_TAINT = [taint("node.kubernetes.io/unschedulable")]


def _soft(max_skew: int, key: str, sel: Obj | None, **extra: Any) -> Obj:
    return spread(max_skew, key, sel, hard=False, **extra)


def _n(name: str, labels: dict[str, str], *, host: bool = True) -> Obj:
    """A node with exactly these labels, and the hostname label when `host`."""
    return node(name, labels, hostname=host)


def _on(at: str, count: int, *keys: str, ns: str = "default", first: int = 1) -> list[Obj]:
    """`count` pods on node `at` labelled with `keys` (each ""), named p-<node letter><i>."""
    tag = at.removeprefix("node-")
    return [
        pod(f"p-{tag}{i}", namespace=ns, node_name=at, labels=dict.fromkeys(keys, ""))
        for i in range(first, first + count)
    ]


def _spread(
    case: str,
    incoming: Obj,
    nodes: list[Obj],
    existing: list[Obj],
    scores: dict[str, int],
    failed: tuple[str, ...] = (),
) -> Row:
    return Row(
        "PodTopologySpread/score",
        SPREAD_TEST,
        case,
        [*nodes, *existing],
        [incoming],
        Scores(scores, frozenset(failed)),
    )


def _pod(*keys: str, constraints: list[Obj], **spec: Any) -> Obj:
    return pod("p", labels=dict.fromkeys(keys, ""), topologySpreadConstraints=constraints, **spec)


ON_HOST = _pod("foo", constraints=[_soft(1, HOST, FOO)])
ZONE_AND_HOST = _pod("foo", "bar", constraints=[_soft(1, "zone", FOO), _soft(1, HOST, BAR)])


def _hosts(*names: str) -> list[Obj]:
    return [_n(f"node-{x}", {}) for x in names]


def _zoned(spec: str, *, host: bool = True) -> list[Obj]:
    """Nodes from "a:1 b:1 x:2": node-a in zone1, ..."""
    out = []
    for part in spec.split():
        name, z = part.split(":")
        out.append(_n(f"node-{name}", {"zone": f"zone{z}"}, host=host))
    return out


def _by_node(*keys_per_pod: tuple[str, str]) -> list[Obj]:
    """Pods from (node, "foo,bar") pairs, numbered per node."""
    seen: dict[str, int] = {}
    out = []
    for at, keys in keys_per_pod:
        seen[at] = seen.get(at, 0) + 1
        out += _on(at, 1, *[k for k in keys.split(",") if k], first=seen[at])
    return out


SPREAD_2103 = _on("node-a", 2, "foo") + _on("node-b", 1, "foo") + _on("node-d", 3, "foo")
SPREAD_4321 = (
    _on("node-a", 4, "foo") + _on("node-b", 3, "foo") + _on("node-c", 2, "foo") + _on("node-d", 1, "foo")
)
SPREAD_4213 = (
    _on("node-a", 4, "foo") + _on("node-b", 2, "foo") + _on("node-x", 1, "foo") + _on("node-y", 3, "foo")
)
SPREAD_2111 = _on("node-a", 2, "foo") + _on("node-b", 1, "foo") + _on("node-c", 1, "foo")
MIXED = _by_node(("node-a", "foo"), ("node-b", "foo,bar"), ("node-y", "foo"), ("node-y", "bar"))
MIXED_ON_C = _by_node(("node-a", "foo"), ("node-b", "foo,bar"), ("node-c", "foo"), ("node-c", "bar"))
FOUR = {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": TOP}


def _by_node_key(*names: str, foo: str = "", tainted: str = "") -> list[Obj]:
    """Nodes labelled `node=<name>` (upstream's key `node`), and `foo=""` on the `foo` ones."""
    return [
        node(
            f"node-{x}",
            {"node": f"node-{x}", **({"foo": ""} if x in foo else {})},
            hostname=False,
            taints=UNSCHEDULABLE_TAINT if x == tainted else None,
        )
        for x in names
    ]


def _terminating(obj: Obj) -> Obj:
    """The pod with a deletionTimestamp (being deleted)."""
    obj["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return obj


IGNORE = {"nodeAffinityPolicy": "Ignore"}
ON_FOO_NODES = {"nodeSelector": {"foo": ""}}
FOO_AFFINITY = {
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [req("foo", "In", "")]}]
            }
        }
    }
}

SPREAD_ROWS = [
    _spread(
        "one constraint on node, no existing pods",
        ON_HOST,
        _hosts("a", "b"),
        [],
        {"node-a": TOP, "node-b": TOP},
    ),
    _spread(
        "one constraint on node, only one node is candidate",
        ON_HOST,
        _hosts("a", "b"),
        _on("node-a", 2, "foo") + _on("node-b", 1, "foo"),
        {"node-a": TOP},
        failed=("node-b",),
    ),
    _spread(
        "one constraint on node, all nodes have the same number of matching pods",
        ON_HOST,
        _hosts("a", "b"),
        _on("node-a", 1, "foo") + _on("node-b", 1, "foo"),
        {"node-a": TOP, "node-b": TOP},
    ),
    _spread(
        "one constraint on node, all 4 nodes are candidates",
        ON_HOST,
        _hosts("a", "b", "c", "d"),
        SPREAD_2103,
        {"node-a": 20, "node-b": 60, "node-c": TOP, "node-d": 0},
    ),
    _spread(
        "one constraint on node, null selector",
        _pod("foo", constraints=[_soft(1, HOST, None)]),
        _hosts("a", "b", "c", "d"),
        SPREAD_2103,
        {"node-a": TOP, "node-b": TOP, "node-c": TOP, "node-d": TOP},
    ),
    _spread(
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        _pod("foo", constraints=[_soft(2, HOST, FOO)]),
        _hosts("a", "b", "c", "d"),
        SPREAD_2103,
        {"node-a": 33, "node-b": 66, "node-c": TOP, "node-d": 16},
    ),
    _spread(
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        _pod("foo", constraints=[_soft(3, HOST, FOO)]),
        _hosts("a", "b", "c", "d"),
        SPREAD_4321,
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": TOP},
    ),
    _spread(
        "one constraint on node, 3 out of 4 nodes are candidates",
        ON_HOST,
        _hosts("a", "b", "x", "y"),
        SPREAD_4213,
        {"node-a": 33, "node-b": 83, "node-x": TOP},
        failed=("node-y",),
    ),
    _spread(
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        ON_HOST,
        [*_hosts("a"), _n("node-b", {"n": "node-b"}, host=False), *_hosts("x", "y")],
        SPREAD_4213,
        {"node-a": 16, "node-b": 0, "node-x": TOP},
        failed=("node-y",),
    ),
    _spread(
        "one constraint on zone, 3 out of 4 nodes are candidates",
        _pod("foo", constraints=[_soft(1, "zone", FOO)]),
        _zoned("a:1 b:1 x:2 y:2"),
        SPREAD_4213,
        {"node-a": 75, "node-b": 75, "node-x": TOP},
        failed=("node-y",),
    ),
    _spread(
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        _pod("foo", constraints=[_soft(1, "zone", FOO), _soft(1, HOST, FOO)]),
        _zoned("a:1 b:1 x:2 y:2"),
        _on("node-a", 2, "foo") + _on("node-b", 1, "foo") + _on("node-x", 2, "foo") + _on("node-y", 4, "foo"),
        {"node-a": TOP, "node-x": 63},
        failed=("node-b", "node-y"),
    ),
    _spread(
        "two Constraints on zone, 2 out of 4 nodes are candidates",
        _pod("foo", "bar", constraints=[_soft(1, "zone", FOO), _soft(1, "zone", BAR)]),
        _zoned("a:1 b:1 x:2 y:2", host=False),
        _by_node(
            ("node-a", "foo,bar"),
            ("node-a", "foo"),
            ("node-b", "foo,bar"),
            ("node-y", "foo"),
            ("node-y", "foo,bar"),
            ("node-y", "foo"),
        ),
        {"node-a": 85, "node-x": TOP},
        failed=("node-b", "node-y"),
    ),
    _spread(
        "two Constraints on zone and node, with different labelSelectors",
        ZONE_AND_HOST,
        _zoned("a:1 b:1 x:2 y:2"),
        MIXED,
        {"node-a": 60, "node-b": 20, "node-x": TOP, "node-y": 60},
    ),
    _spread(
        "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        ZONE_AND_HOST,
        _zoned("a:1 b:1 x:2 y:2"),
        _by_node(("node-b", "bar"), ("node-x", "foo"), ("node-y", "foo,bar")),
        {"node-a": TOP, "node-b": 60, "node-x": 40, "node-y": 0},
    ),
    _spread(
        "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        ZONE_AND_HOST,
        _zoned("a:1 b:1 x:2 y:2"),
        MIXED,
        {"node-a": 50, "node-b": 25, "node-x": TOP},
        failed=("node-y",),
    ),
    _spread(
        "existing pods in a different namespace do not count",
        ON_HOST,
        _hosts("a", "b"),
        _on("node-a", 1, "foo", ns="ns1") + _on("node-a", 1, "foo", first=2) + _on("node-b", 2, "foo"),
        {"node-a": TOP, "node-b": 33},
    ),
    _spread(
        "terminating Pods should be excluded",
        ON_HOST,
        _hosts("a", "b"),
        [
            *(_terminating(p) for p in _on("node-a", 1, "foo")),
            *_on("node-b", 1, "foo"),
        ],
        {"node-a": TOP, "node-b": 0},
    ),
    _spread(
        "minDomains has no effect when ScheduleAnyway",
        _pod("foo", constraints=[_soft(2, "node", FOO, minDomains=10)]),
        [node(f"node-{x}", {"node": f"node-{x}"}, hostname=False) for x in "abc"],
        _on("node-a", 2, "foo") + _on("node-b", 2, "foo") + _on("node-c", 1, "foo"),
        {"node-a": 75, "node-b": 75, "node-c": TOP},
    ),
    _spread(
        "NodeAffinityPolicy honoed with labelSelectors",
        _pod("foo", constraints=[_soft(1, "node", FOO)], **ON_FOO_NODES),
        _by_node_key("a", "b", "c", foo="ab"),
        SPREAD_2111,
        {"node-a": 0, "node-b": 33, "node-c": TOP},
    ),
    _spread(
        "NodeAffinityPolicy ignored with labelSelectors",
        _pod("foo", constraints=[_soft(1, "node", FOO, **IGNORE)], **ON_FOO_NODES),
        _by_node_key("a", "b", "c", foo="ab"),
        SPREAD_2111,
        {"node-a": 66, "node-b": TOP, "node-c": TOP},
    ),
    _spread(
        "NodeAffinityPolicy honoed with nodeAffinity",
        _pod("foo", constraints=[_soft(1, "node", FOO)], **FOO_AFFINITY),
        _by_node_key("a", "b", "c", foo="ab"),
        SPREAD_2111,
        {"node-a": 0, "node-b": 33, "node-c": TOP},
    ),
    _spread(
        "NodeAffinityPolicy ignored with nodeAffinity",
        _pod("foo", constraints=[_soft(1, "node", FOO, **IGNORE)], **FOO_AFFINITY),
        _by_node_key("a", "b", "c", foo="ab"),
        SPREAD_2111,
        {"node-a": 66, "node-b": TOP, "node-c": TOP},
    ),
    _spread(
        "NodeTaintsPolicy honored",
        _pod("foo", constraints=[_soft(1, "node", FOO, nodeTaintsPolicy="Honor")]),
        _by_node_key("a", "b", "c", tainted="c"),
        SPREAD_2111,
        {"node-a": 0, "node-b": 33, "node-c": TOP},
    ),
    _spread(
        "NodeTaintsPolicy ignored",
        _pod("foo", constraints=[_soft(1, "node", FOO)]),
        _by_node_key("a", "b", "c", tainted="c"),
        SPREAD_2111,
        {"node-a": 66, "node-b": TOP, "node-c": TOP},
    ),
    _spread(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        _pod(
            "foo",
            "bar",
            constraints=[
                _soft(1, "zone", {}, matchLabelKeys=["foo"]),
                _soft(1, HOST, {}, matchLabelKeys=["bar"]),
            ],
        ),
        _zoned("a:1 b:1 c:2 d:2"),
        MIXED_ON_C,
        FOUR,
    ),
    _spread(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        _pod(
            "foo",
            "bar",
            "baz",
            constraints=[_soft(1, "zone", FOO), _soft(1, HOST, BAR, matchLabelKeys=["baz"])],
        ),
        _zoned("a:1 b:1 c:2 d:2"),
        _by_node(
            ("node-a", "foo"),
            ("node-b", "foo,bar,baz"),
            ("node-c", "foo"),
            ("node-c", "bar"),
            ("node-c", "bar,baz"),
        ),
        FOUR,
    ),
]

ROWS = [*AFFINITY_ROWS, *SPREAD_ROWS]
