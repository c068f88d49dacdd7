"""Volcano's allocate tables for gangs over a HyperNode tree: rows checked by what binds.

`pkg/scheduler/actions/allocate/allocate_test.go` (volcano-sh/volcano commit ed72c7c8), run
there with the predicates, gang and network-topology-aware plugins:

* `TestAllocateWithNetWorkTopologies`: a PodGroup's `networkTopology` (hard/soft, by tier or by
  `highestTierName`), fresh and partly running ("rescheduled") jobs.
* `TestAllocateWithPartitionPolicyNetworkTopology`: the same with `subGroupPolicy` (subgroups
  by `matchLabelKeys`, `subGroupSize`, `minSubGroups`, each with its own networkTopology).
* `TestNodeLevelScoreWithNetWorkTopologies`: which HyperNode and nodes a hard job takes when
  other jobs already run (node-level binpack). `TestHyperNodeBinpackWithNetWorkTopologies`:
  how many of a hard job's pods bind in each tier-1 HyperNode (`Spread`).

Upstream's fact is the bind count after one allocate session (`ExpectBindsNum`; with
`MinimalBindCheck` only the count is checked, so only `ExpectBindMap`s it checks are kept).
Queue `q1` is left out (topobridge has no queues). A HyperNode tree given only as tier sets and
leaf node sets is rebuilt as the tree those sets describe. The `job-allocated-hypernode`
annotation of rescheduled jobs is kept as upstream sets it. The table's last case (1000 pods in
100 subgroups on 1000 nodes, built in a loop) is a performance test: it is not ported.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.harness import Binds, Obj, Row, Spread
from conformance.objects import hypernode, member, node

FILE = "pkg/scheduler/actions/allocate/allocate_test.go"
NETWORK = f"{FILE}:TestAllocateWithNetWorkTopologies"
NODE_LEVEL_SCORE = f"{FILE}:TestNodeLevelScoreWithNetWorkTopologies"
HYPERNODE_BINPACK = f"{FILE}:TestHyperNodeBinpackWithNetWorkTopologies"
PARTITION = f"{FILE}:TestAllocateWithPartitionPolicyNetworkTopology"
NAMESPACE = "c1"
ALLOCATED_HYPERNODE = "volcano.sh/job-allocated-hypernode"


def _node(
    name: str, size: tuple[str, str, str] = ("2", "4Gi", "10"), labels: dict[str, str] | None = None
) -> Obj:
    cpu, memory, pods = size
    return node(name, labels, allocatable={"cpu": cpu, "memory": memory, "pods": pods})


def _pod(
    name: str,
    *,
    group: str = "pg1",
    at: str | None = None,
    labels: dict[str, str] | None = None,
    selector: dict[str, str] | None = None,
    size: tuple[str, str] = ("2", "4G"),
) -> Obj:
    """A member of PodGroup `group`: pending, or Running on `at`."""
    extra: Obj = {"nodeSelector": selector} if selector else {}
    out = member(
        name,
        group,
        namespace=NAMESPACE,
        node_name=at,
        requests={"cpu": size[0], "memory": size[1]},
        labels=labels,
        **extra,
    )
    if at is not None:
        out["status"] = {"phase": "Running"}
    return out


def _topology(mode: str, tier: int | None, tier_name: str | None) -> Obj:
    out: Obj = {"mode": mode}
    if tier_name is not None:
        out["highestTierName"] = tier_name
    elif tier is not None:
        out["highestTierAllowed"] = tier
    return out


def _policy(
    name: str,
    keys: str | tuple[str, ...],
    mode: str,
    tier: int,
    *,
    size: int = 1,
    min_sub_groups: int = 0,
) -> Obj:
    """A subGroupPolicy entry as upstream's builder makes it (no networkTopology without a mode)."""
    out: Obj = {
        "name": name,
        "matchLabelKeys": [keys] if isinstance(keys, str) else list(keys),
        "subGroupSize": size,
        "minSubGroups": min_sub_groups,
    }
    if mode:
        out["networkTopology"] = _topology(mode, tier, None)
    return out


def _pg(
    min_member: int,
    *,
    mode: str = "",
    tier: int | None = None,
    tier_name: str | None = None,
    policies: Sequence[Obj] = (),
    allocated: str = "",
    name: str = "pg1",
) -> Obj:
    spec: Obj = {"minMember": min_member, "queue": "default"}
    meta: Obj = {"name": name, "namespace": NAMESPACE}
    if mode:
        spec["networkTopology"] = _topology(mode, tier, tier_name)
        meta["annotations"] = {ALLOCATED_HYPERNODE: allocated}
    if policies:
        spec["subGroupPolicy"] = list(policies)
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": spec}


def _row(
    upstream: str,
    case: str,
    pg: Obj,
    pods: list[Obj],
    nodes: list[Obj],
    tree: list[Obj],
    expect: Binds,
    nth: int,
) -> Row:
    return Row(
        "NetworkTopology",
        upstream,
        case,
        [*nodes, *tree, pg],
        pods,
        expect,
        repo="volcano-sh/volcano",
        nth=nth,
    )


def _network(
    case: str, pg: Obj, pods: list[Obj], nodes: list[Obj], tree: list[Obj], expect: Binds, nth: int = 1
) -> Row:
    return _row(NETWORK, case, pg, pods, nodes, tree, expect, nth)


def _partition(
    case: str, pg: Obj, pods: list[Obj], nodes: list[Obj], tree: list[Obj], expect: Binds, nth: int = 1
) -> Row:
    return _row(PARTITION, case, pg, pods, nodes, tree, expect, nth)


NETWORK_ROWS = [
    _network(
        "soft network topology constrain, can allocate job when resources are enough",
        _pg(3, mode="soft", tier=0),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 0, ["s0-n1", "s0-n2"]),
            hypernode("s1", 0, ["s1-n3", "s1-n4"]),
            hypernode("s2", 1, hypernodes=["s0", "s1"]),
        ],
        Binds(3),
    ),
    _network(
        "soft network topology constrain, can allocate job when minavailable < replicas",
        _pg(1, mode="soft", tier=0),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _network(
        "soft network topology constrain, two available hyperNodes, can allocate job to nodes with affinity",
        _pg(1, mode="soft", tier=0),
        [_pod("p1", labels={"volcano.sh/task-spec": "master"}, selector={"nodeRole": "master"})],
        [_node("s0-n1"), _node("s1-n2", labels={"nodeRole": "master"})],
        [hypernode("s0", 0, ["s0-n1"]), hypernode("s1", 0, ["s1-n2"])],
        Binds(1, {"c1/p1": "s1-n2"}),
    ),
    _network(
        "soft network topology constrain and tasks in job rescheduled, can allocate job when resources are enough",
        _pg(2, mode="soft", tier=0, allocated="s0"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _network(
        "soft network topology constrain and tasks in job rescheduled, can allocate job when resources are enough and minavailable = replicas",
        _pg(3, mode="soft", tier=0, allocated="s0"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _network(
        "soft network topology constrain and tasks in job rescheduled, can allocate job when cross highestTierAllowed tier and hyperNodesInfo has three tier",
        _pg(2, mode="soft", tier=0, allocated="s3"),
        [
            _pod("p1", at="s3-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s3-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s3-n1"),
            _node("s3-n2"),
            _node("s4-n1"),
            _node("s4-n2"),
            _node("s5-n1"),
            _node("s5-n2"),
            _node("s6-n1"),
            _node("s6-n2"),
        ],
        [
            hypernode("s0", 3, hypernodes=["s1", "s2"]),
            hypernode("s1", 2, hypernodes=["s3", "s4"]),
            hypernode("s2", 2, hypernodes=["s5", "s6"]),
            hypernode("s3", 1, ["s3-n1", "s3-n2"]),
            hypernode("s4", 1, ["s4-n1", "s4-n2"]),
            hypernode("s5", 1, ["s5-n1", "s5-n2"]),
            hypernode("s6", 1, ["s6-n1", "s6-n2"]),
        ],
        Binds(1),
    ),
    _network(
        "hard network topology constrain, can not allocate job when cross highestTierAllowed tier",
        _pg(3, mode="hard", tier=1),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(0),
    ),
    _network(
        "hard network topology constrain, can allocate job when highestTierAllowed not reached",
        _pg(3, mode="hard", tier=2),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(3),
    ),
    _network(
        "hard network topology constrain, can allocate job when multi hyperNodes are available",
        _pg(2, mode="hard", tier=1),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _network(
        "hard network topology constrain, can allocate job when minavailable < replicas",
        _pg(1, mode="hard", tier=1),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _network(
        "hard network topology constrain, two available hyperNodes, can allocate job to nodes with affinity",
        _pg(1, mode="hard", tier=1),
        [_pod("p1", labels={"volcano.sh/task-spec": "master"}, selector={"nodeRole": "master"})],
        [_node("s0-n1"), _node("s1-n2", labels={"nodeRole": "master"})],
        [hypernode("s0", 0, ["s0-n1"]), hypernode("s1", 0, ["s1-n2"])],
        Binds(1, {"c1/p1": "s1-n2"}),
    ),
    _network(
        "hard network topology constrain and tasks in job rescheduled, can allocate job when highestTierAllowed not reached",
        _pg(2, mode="hard", tier=2, allocated="s0"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _network(
        "hard network topology constrain and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and minavailable = replicas",
        _pg(3, mode="hard", tier=2, allocated="s0"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _network(
        "hard network topology constrain and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and hyperNodesInfo has three tier",
        _pg(2, mode="hard", tier=2, allocated="s3"),
        [
            _pod("p1", at="s3-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s3-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s3-n1"),
            _node("s3-n2"),
            _node("s4-n1"),
            _node("s4-n2"),
            _node("s5-n1"),
            _node("s5-n2"),
            _node("s6-n1"),
            _node("s6-n2"),
        ],
        [
            hypernode("s0", 3, hypernodes=["s1", "s2"]),
            hypernode("s1", 2, hypernodes=["s3", "s4"]),
            hypernode("s2", 2, hypernodes=["s5", "s6"]),
            hypernode("s3", 1, ["s3-n1", "s3-n2"]),
            hypernode("s4", 1, ["s4-n1", "s4-n2"]),
            hypernode("s5", 1, ["s5-n1", "s5-n2"]),
            hypernode("s6", 1, ["s6-n1", "s6-n2"]),
        ],
        Binds(1),
    ),
    _network(
        "hard network topology constrain and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier",
        _pg(2, mode="hard", tier=1, allocated="s0"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(0),
    ),
    _network(
        "hard network topology constrain and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier and hyperNodesInfo has three tier",
        _pg(2, mode="hard", tier=1, allocated="s3"),
        [
            _pod("p1", at="s3-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s3-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s3-n1"),
            _node("s3-n2"),
            _node("s4-n1"),
            _node("s4-n2"),
            _node("s5-n1"),
            _node("s5-n2"),
            _node("s6-n1"),
            _node("s6-n2"),
        ],
        [
            hypernode("s0", 3, hypernodes=["s1", "s2"]),
            hypernode("s1", 2, hypernodes=["s3", "s4"]),
            hypernode("s2", 2, hypernodes=["s5", "s6"]),
            hypernode("s3", 1, ["s3-n1", "s3-n2"]),
            hypernode("s4", 1, ["s4-n1", "s4-n2"]),
            hypernode("s5", 1, ["s5-n1", "s5-n2"]),
            hypernode("s6", 1, ["s6-n1", "s6-n2"]),
        ],
        Binds(0),
    ),
    _network(
        "hard network topology constrain and tasks in job rescheduled, can allocate job when LCAHyperNode is empty",
        _pg(2, mode="hard", tier=2, allocated="s0"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [hypernode("s0", 1, ["s0-n1", "s0-n2"]), hypernode("s1", 1, ["s1-n3", "s1-n4"])],
        Binds(1),
    ),
    _network(
        "hard network topology constrain, can not allocate job when cross highestTierName tier",
        _pg(3, mode="hard", tier_name="volcano.sh/task-spec"),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"], tier_name="volcano.sh/task-spec"),
            hypernode("s1", 1, ["s1-n3", "s1-n4"], tier_name="volcano.sh/task-spec"),
            hypernode("s2", 2, hypernodes=["s0", "s1"], tier_name="volcano.sh/job-spec"),
        ],
        Binds(0),
    ),
    _network(
        "hard network topology constrain, can allocate job when the tier corresponding to highestTierName not reached",
        _pg(3, mode="hard", tier_name="volcano.sh/job-spec"),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"], tier_name="volcano.sh/task-spec"),
            hypernode("s1", 1, ["s1-n3", "s1-n4"], tier_name="volcano.sh/task-spec"),
            hypernode("s2", 2, hypernodes=["s0", "s1"], tier_name="volcano.sh/job-spec"),
        ],
        Binds(3),
    ),
    _network(
        "hard network topology constrain, can allocate job when multi hyperNodes are available",
        _pg(2, mode="hard", tier_name="volcano.sh/task-spec"),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"], tier_name="volcano.sh/task-spec"),
            hypernode("s1", 1, ["s1-n3", "s1-n4"], tier_name="volcano.sh/task-spec"),
            hypernode("s2", 2, hypernodes=["s0", "s1"], tier_name="volcano.sh/job-spec"),
        ],
        Binds(2),
        nth=2,
    ),
    _network(
        "hard network topology constrain and task in job rescheduled, can allocate job when the tier corresponding to highestTierName not reached",
        _pg(2, mode="hard", tier_name="volcano.sh/job-spec", allocated="s0"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"], tier_name="volcano.sh/task-spec"),
            hypernode("s1", 1, ["s1-n3", "s1-n4"], tier_name="volcano.sh/task-spec"),
            hypernode("s2", 2, hypernodes=["s0", "s1"], tier_name="volcano.sh/job-spec"),
        ],
        Binds(1),
    ),
    _network(
        "hard network topology constrain and task in job rescheduled, can allocate job when the tier corresponding to highestTierName not reached and minavailable = replicas",
        _pg(3, mode="hard", tier_name="volcano.sh/job-spec", allocated="s0"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"], tier_name="volcano.sh/task-spec"),
            hypernode("s1", 1, ["s1-n3", "s1-n4"], tier_name="volcano.sh/task-spec"),
            hypernode("s2", 2, hypernodes=["s0", "s1"], tier_name="volcano.sh/job-spec"),
        ],
        Binds(1),
    ),
    _network(
        "hard network topology constrain and task in job rescheduled, can allocate job when the tier corresponding to highestTierName not reached and hyperNodesInfo has three tier",
        _pg(2, mode="hard", tier_name="volcano.sh/job-spec", allocated="s3"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s3-n1"),
            _node("s3-n2"),
            _node("s4-n1"),
            _node("s4-n2"),
            _node("s5-n1"),
            _node("s5-n2"),
            _node("s6-n1"),
            _node("s6-n2"),
        ],
        [
            hypernode("s0", 3, hypernodes=["s1", "s2"], tier_name="volcano.sh/hypernode-spec"),
            hypernode("s1", 2, hypernodes=["s3", "s4"], tier_name="volcano.sh/job-spec"),
            hypernode("s2", 2, hypernodes=["s5", "s6"], tier_name="volcano.sh/job-spec"),
            hypernode("s3", 1, ["s3-n1", "s3-n2"], tier_name="volcano.sh/task-spec"),
            hypernode("s4", 1, ["s4-n1", "s4-n2"], tier_name="volcano.sh/task-spec"),
            hypernode("s5", 1, ["s5-n1", "s5-n2"], tier_name="volcano.sh/task-spec"),
            hypernode("s6", 1, ["s6-n1", "s6-n2"], tier_name="volcano.sh/task-spec"),
        ],
        Binds(1),
    ),
    _network(
        "hard network topology constrain and tasks in job rescheduled, can not allocate job when cross the tier corresponding to highestTierName",
        _pg(2, mode="hard", tier_name="volcano.sh/task-spec", allocated="s0"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"], tier_name="volcano.sh/task-spec"),
            hypernode("s1", 1, ["s1-n3", "s1-n4"], tier_name="volcano.sh/task-spec"),
            hypernode("s2", 2, hypernodes=["s0", "s1"], tier_name="volcano.sh/job-spec"),
        ],
        Binds(0),
    ),
    _network(
        "hard network topology with highestTierName constrain and tasks in job rescheduled, can allocate job when here is no corresponding highestTierAllowed for highestTierName",
        _pg(2, mode="hard", tier_name="volcano.sh/hypercluster", allocated="s0"),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"], tier_name="volcano.sh/task-spec"),
            hypernode("s1", 1, ["s1-n3", "s1-n4"], tier_name="volcano.sh/task-spec"),
        ],
        Binds(1),
    ),
]

PARTITION_ROWS = [
    _partition(
        "podgroup hard network topology constrain and subGroup soft network topology constrain, can allocate job when resources are enough",
        _pg(3, mode="hard", tier=2, policies=[_policy("task1", "volcano.sh/task-spec", "soft", 0)]),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 0, ["s0-n1", "s0-n2"]),
            hypernode("s1", 0, ["s1-n3", "s1-n4"]),
            hypernode("s2", 1, hypernodes=["s0", "s1"]),
        ],
        Binds(3),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup soft network topology constrain, can allocate job when minavailable < replicas",
        _pg(1, mode="hard", tier=1, policies=[_policy("task1", "volcano.sh/task-spec", "soft", 0)]),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup soft network topology constrain, two available hyperNodes, can allocate job to nodes with affinity",
        _pg(1, mode="hard", tier=1, policies=[_policy("task1", "volcano.sh/task-spec", "soft", 0)]),
        [_pod("p1", labels={"volcano.sh/task-spec": "master"}, selector={"nodeRole": "master"})],
        [_node("s0-n1"), _node("s1-n2", labels={"nodeRole": "master"})],
        [hypernode("s0", 0, ["s0-n1"]), hypernode("s1", 0, ["s1-n2"])],
        Binds(1, {"c1/p1": "s1-n2"}),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup soft network topology constrain and tasks in job rescheduled, can allocate job when resources are enough",
        _pg(
            2,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "soft", 0)],
            allocated="s2",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup soft network topology constrain and tasks in job rescheduled, can allocate job when resources are enough and minavailable = replicas",
        _pg(
            3,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "soft", 0)],
            allocated="s2",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup soft network topology constrain and tasks in job rescheduled, can allocate job when cross highestTierAllowed tier and hyperNodesInfo has three tier",
        _pg(
            2,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "soft", 0)],
            allocated="s1",
        ),
        [
            _pod("p1", at="s3-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s3-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s3-n1"),
            _node("s3-n2"),
            _node("s4-n1"),
            _node("s4-n2"),
            _node("s5-n1"),
            _node("s5-n2"),
            _node("s6-n1"),
            _node("s6-n2"),
        ],
        [
            hypernode("s0", 3, hypernodes=["s1", "s2"]),
            hypernode("s1", 2, hypernodes=["s3", "s4"]),
            hypernode("s2", 2, hypernodes=["s5", "s6"]),
            hypernode("s3", 1, ["s3-n1", "s3-n2"]),
            hypernode("s4", 1, ["s4-n1", "s4-n2"]),
            hypernode("s5", 1, ["s5-n1", "s5-n2"]),
            hypernode("s6", 1, ["s6-n1", "s6-n2"]),
        ],
        Binds(1),
    ),
    _partition(
        "podgroup soft network topology constrain and subGroup hard network topology constrain, can allocate job when resources are enough",
        _pg(
            3,
            mode="soft",
            tier=0,
            policies=[
                _policy("task1", "volcano.sh/task-spec", "hard", 1, size=2),
                _policy("task2", "volcano.sh/task-instance", "hard", 1),
            ],
        ),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "master"}),
            _pod("p3", labels={"volcano.sh/task-instance": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(3),
    ),
    _partition(
        "podgroup soft network topology constrain and subGroup hard network topology constrain, can allocate job when minavailable < replicas",
        _pg(1, mode="soft", tier=0, policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1)]),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _partition(
        "podgroup soft network topology constrain and subGroup hard network topology constrain, can not allocate job when cross highestTierAllowed tier",
        _pg(3, mode="soft", tier=0, policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1)]),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p4", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(0),
    ),
    _partition(
        "podgroup soft network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can allocate job when resources are enough",
        _pg(
            2,
            mode="soft",
            tier=0,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1)],
            allocated="s2",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s1-n3", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _partition(
        "podgroup soft network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier and hyperNodesInfo has three tier",
        _pg(
            2,
            mode="soft",
            tier=0,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 2)],
            allocated="s1",
        ),
        [
            _pod("p1", at="s3-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s3-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", at="s4-n1", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p4", at="s4-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p5", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s3-n1"),
            _node("s3-n2"),
            _node("s4-n1"),
            _node("s4-n2"),
            _node("s5-n1"),
            _node("s5-n2"),
            _node("s6-n1"),
            _node("s6-n2"),
        ],
        [
            hypernode("s0", 3, hypernodes=["s1", "s2"]),
            hypernode("s1", 2, hypernodes=["s3", "s4"]),
            hypernode("s2", 2, hypernodes=["s5", "s6"]),
            hypernode("s3", 1, ["s3-n1", "s3-n2"]),
            hypernode("s4", 1, ["s4-n1", "s4-n2"]),
            hypernode("s5", 1, ["s5-n1", "s5-n2"]),
            hypernode("s6", 1, ["s6-n1", "s6-n2"]),
        ],
        Binds(0),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job when highestTierAllowed not reached",
        _pg(3, mode="hard", tier=2, policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1)]),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(3),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job according to the network topology constrain of subGroup policy",
        _pg(
            3,
            mode="hard",
            tier=2,
            policies=[
                _policy("task1", "volcano.sh/task-spec", "hard", 1),
                _policy("task2", "volcano.sh/task-instance", "hard", 1, size=2),
            ],
        ),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-instance": "worker"}),
            _pod("p3", labels={"volcano.sh/task-instance": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(3),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job when multi hyperNodes are available",
        _pg(2, mode="hard", tier=2, policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1)]),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job when minavailable < replicas",
        _pg(1, mode="hard", tier=2, policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1)]),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, two available hyperNodes, can allocate job to nodes with affinity",
        _pg(2, mode="hard", tier=2, policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1)]),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s1-n3", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and minavailable = replicas",
        _pg(
            3,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 2)],
            allocated="s0",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and hyperNodesInfo has three tier",
        _pg(
            2,
            mode="hard",
            tier=3,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 2)],
            allocated="s3",
        ),
        [
            _pod("p1", at="s3-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s3-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s3-n1"),
            _node("s3-n2"),
            _node("s4-n1"),
            _node("s4-n2"),
            _node("s5-n1"),
            _node("s5-n2"),
            _node("s6-n1"),
            _node("s6-n2"),
        ],
        [
            hypernode("s0", 3, hypernodes=["s1", "s2"]),
            hypernode("s1", 2, hypernodes=["s3", "s4"]),
            hypernode("s2", 2, hypernodes=["s5", "s6"]),
            hypernode("s3", 1, ["s3-n1", "s3-n2"]),
            hypernode("s4", 1, ["s4-n1", "s4-n2"]),
            hypernode("s5", 1, ["s5-n1", "s5-n2"]),
            hypernode("s6", 1, ["s6-n1", "s6-n2"]),
        ],
        Binds(1),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier",
        _pg(
            2,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1)],
            allocated="s0",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(0),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can not allocate job when cross highestTierAllowed tier and hyperNodesInfo has three tier",
        _pg(
            2,
            mode="hard",
            tier=3,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 2)],
            allocated="s3",
        ),
        [
            _pod("p1", at="s3-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s3-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", at="s4-n1", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p4", at="s4-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p5", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s3-n1"),
            _node("s3-n2"),
            _node("s4-n1"),
            _node("s4-n2"),
            _node("s5-n1"),
            _node("s5-n2"),
            _node("s6-n1"),
            _node("s6-n2"),
        ],
        [
            hypernode("s0", 3, hypernodes=["s1", "s2"]),
            hypernode("s1", 2, hypernodes=["s3", "s4"]),
            hypernode("s2", 2, hypernodes=["s5", "s6"]),
            hypernode("s3", 1, ["s3-n1", "s3-n2"]),
            hypernode("s4", 1, ["s4-n1", "s4-n2"]),
            hypernode("s5", 1, ["s5-n1", "s5-n2"]),
            hypernode("s6", 1, ["s6-n1", "s6-n2"]),
        ],
        Binds(0),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain and tasks in job rescheduled, can allocate job when LCAHyperNode is empty",
        _pg(
            2,
            mode="hard",
            tier=3,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 2)],
            allocated="s0",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [hypernode("s0", 1, ["s0-n1", "s0-n2"]), hypernode("s1", 1, ["s1-n3", "s1-n4"])],
        Binds(1),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job according to the network topology constrain of subGroup policy with minSubGroups",
        _pg(
            5,
            mode="hard",
            tier=2,
            policies=[
                _policy("task1", "volcano.sh/task-spec", "hard", 1, min_sub_groups=1),
                _policy("task2", "volcano.sh/task-instance", "hard", 1, size=2, min_sub_groups=2),
            ],
        ),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}, size=("2", "4Gi")),
            _pod("p2", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p3", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p4", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
            _pod("p5", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4"), _node("s2-n5")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 1, ["s2-n5"]),
            hypernode("s3", 2, hypernodes=["s0", "s1", "s2"]),
        ],
        Binds(5),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job according to the network topology constrain of subGroup policy with minSubGroups and minavailable = replicas",
        _pg(
            3,
            mode="hard",
            tier=2,
            policies=[
                _policy("task1", "volcano.sh/task-spec", "hard", 1, min_sub_groups=1),
                _policy("task2", "volcano.sh/task-instance", "hard", 1, size=2, min_sub_groups=1),
            ],
        ),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}, size=("2", "4Gi")),
            _pod("p2", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p3", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p4", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
            _pod("p5", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(3),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain, can allocate job according to the network topology constrain of subGroup policy with minSubGroups and hypernode resources meet minSubGroups",
        _pg(
            3,
            mode="hard",
            tier=2,
            policies=[
                _policy("task1", "volcano.sh/task-spec", "hard", 1, min_sub_groups=2),
                _policy("task2", "volcano.sh/task-instance", "hard", 1, size=2, min_sub_groups=1),
            ],
        ),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}, size=("2", "4Gi")),
            _pod("p2", labels={"volcano.sh/task-spec": "master2"}, size=("2", "4Gi")),
            _pod("p3", labels={"volcano.sh/task-spec": "master3"}, size=("2", "4Gi")),
            _pod("p4", labels={"volcano.sh/task-spec": "master4"}, size=("2", "4Gi")),
            _pod("p5", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p6", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p7", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
            _pod("p8", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(4),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain, can not allocate job when minMember is not satisfied",
        _pg(
            5,
            mode="hard",
            tier=2,
            policies=[
                _policy("task1", "volcano.sh/task-spec", "hard", 1, min_sub_groups=1),
                _policy("task2", "volcano.sh/task-instance", "hard", 1, size=2, min_sub_groups=1),
            ],
        ),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}, size=("2", "4Gi")),
            _pod("p2", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p3", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p4", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
            _pod("p5", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(0),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain, can not allocate job when minSubGroups is not satisfied",
        _pg(
            3,
            mode="hard",
            tier=2,
            policies=[
                _policy("task1", "volcano.sh/task-spec", "hard", 1, min_sub_groups=1),
                _policy("task2", "volcano.sh/task-instance", "hard", 1, size=2, min_sub_groups=2),
            ],
        ),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}, size=("2", "4Gi")),
            _pod("p2", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p3", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p4", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
            _pod("p5", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(0),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain with minSubGroups and tasks in job rescheduled, two available hyperNodes, can allocate job to nodes with affinity",
        _pg(
            2,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1, size=2, min_sub_groups=1)],
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s1-n3", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain with minSubGroups and tasks in job rescheduled, can not allocate job when hypernode resources are insufficient.",
        _pg(
            2,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1, size=2, min_sub_groups=1)],
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s1-n3", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", at="s1-n4", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p4", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(0),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain with minSubGroups and tasks in job rescheduled, can allocate job when highestTierAllowed not reached and minAvailable = replicas",
        _pg(
            4,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 2, size=2, min_sub_groups=2)],
            allocated="s0",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p4", labels={"volcano.sh/task-spec": "master"}),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _partition(
        "podgroup hard network topology constrain and subGroup hard network topology constrain with minSubGroups and tasks in job rescheduled, can allocate job when subGroup is rescheduled",
        _pg(
            3,
            mode="hard",
            tier=2,
            policies=[
                _policy("task1", "volcano.sh/task-spec", "hard", 1, min_sub_groups=2),
                _policy("task2", "volcano.sh/task-instance", "hard", 1, size=2, min_sub_groups=1),
            ],
        ),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}, size=("2", "4Gi")),
            _pod("p2", labels={"volcano.sh/task-spec": "master2"}, size=("2", "4Gi")),
            _pod("p3", at="s0-n1", labels={"volcano.sh/task-spec": "master3"}, size=("2", "4Gi")),
            _pod("p4", at="s0-n2", labels={"volcano.sh/task-spec": "master4"}, size=("2", "4Gi")),
            _pod("p5", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p6", labels={"volcano.sh/task-instance": "worker"}, size=("2", "4Gi")),
            _pod("p7", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
            _pod("p8", labels={"volcano.sh/task-instance": "worker2"}, size=("2", "4Gi")),
        ],
        [_node("s0-n1"), _node("s0-n2"), _node("s1-n3"), _node("s1-n4")],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _partition(
        "rescheduling scenario: SubJob with multiple pending tasks, GetMinResources returns sum of all pending tasks resources",
        _pg(
            4,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1, size=4)],
            allocated="s0",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p4", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s0-n1", size=("4", "8Gi", "10")),
            _node("s0-n2", size=("4", "8Gi", "10")),
            _node("s1-n3", size=("4", "8Gi", "10")),
            _node("s1-n4", size=("4", "8Gi", "10")),
        ],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _partition(
        "rescheduling scenario: SubJob with single pending task",
        _pg(
            3,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1, size=3)],
            allocated="s0",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s0-n1", size=("4", "8Gi", "10")),
            _node("s0-n2", size=("4", "8Gi", "10")),
            _node("s1-n3", size=("4", "8Gi", "10")),
        ],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(1),
    ),
    _partition(
        "rescheduling scenario: multiple SubJobs with different pending task counts",
        _pg(
            6,
            mode="hard",
            tier=2,
            policies=[
                _policy("task1", "volcano.sh/task-spec", "hard", 1, size=3),
                _policy("task2", "volcano.sh/task-instance", "hard", 1, size=3),
            ],
            allocated="s2",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "master"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "master"}),
            _pod("p3", labels={"volcano.sh/task-spec": "master"}),
            _pod("p4", at="s1-n3", labels={"volcano.sh/task-instance": "worker"}),
            _pod("p5", labels={"volcano.sh/task-instance": "worker"}),
            _pod("p6", labels={"volcano.sh/task-instance": "worker"}),
        ],
        [
            _node("s0-n1", size=("4", "8Gi", "10")),
            _node("s0-n2", size=("4", "8Gi", "10")),
            _node("s1-n3", size=("4", "8Gi", "10")),
            _node("s1-n4", size=("4", "8Gi", "10")),
        ],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(3),
    ),
    _partition(
        "rescheduling scenario: pending tasks with different resource requirements",
        _pg(
            3,
            mode="hard",
            tier=1,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1, size=3)],
            allocated="s0",
        ),
        [
            _pod("p1-running", at="s0-n1", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p2-pending-small", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3-pending-large", labels={"volcano.sh/task-spec": "worker"}, size=("4", "8G")),
        ],
        [_node("s0-n1", size=("10", "20Gi", "10")), _node("s0-n2", size=("10", "20Gi", "10"))],
        [hypernode("s0", 1, ["s0-n1", "s0-n2"])],
        Binds(2),
    ),
    _partition(
        "rescheduling scenario: insufficient resources for pending tasks allocation",
        _pg(
            3,
            mode="hard",
            tier=1,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 1, size=3)],
            allocated="s0",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "worker"}, size=("4", "4G")),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}, size=("4", "4G")),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}, size=("4", "4G")),
        ],
        [_node("s0-n1", size=("4", "8Gi", "10")), _node("s0-n2", size=("4", "8Gi", "10"))],
        [hypernode("s0", 1, ["s0-n1", "s0-n2"])],
        Binds(0),
    ),
    _partition(
        "rescheduling scenario: SubJob rescheduling within tier-2 HyperNode constraint",
        _pg(
            4,
            mode="hard",
            tier=2,
            policies=[_policy("task1", "volcano.sh/task-spec", "hard", 2, size=4)],
            allocated="s2",
        ),
        [
            _pod("p1", at="s0-n1", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p3", labels={"volcano.sh/task-spec": "worker"}),
            _pod("p4", labels={"volcano.sh/task-spec": "worker"}),
        ],
        [
            _node("s0-n1", size=("4", "8Gi", "10")),
            _node("s0-n2", size=("4", "8Gi", "10")),
            _node("s1-n3", size=("4", "8Gi", "10")),
            _node("s1-n4", size=("4", "8Gi", "10")),
        ],
        [
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
        ],
        Binds(2),
    ),
    _partition(
        "no network topology at job or subgroup level but has SubJobPolicy, can allocate job successfully",
        _pg(2, policies=[_policy("worker", "volcano.sh/task-spec", "", 0, min_sub_groups=2)]),
        [
            _pod("p1", labels={"volcano.sh/task-spec": "worker-0"}),
            _pod("p2", labels={"volcano.sh/task-spec": "worker-1"}),
        ],
        [_node("n1"), _node("n2")],
        [],
        Binds(2),
    ),
]

# Volcano runs it with its binpack plugin scoring nodes: topobridge binpacks by leftover slots.
SCORE_ROWS = [
    Row(
        "NetworkTopology",
        NODE_LEVEL_SCORE,
        "hard network topology constrain, allocate job to highest score hypeNode with node level binpack",
        [
            _node("s0-n1", size=("4", "8Gi", "10")),
            _node("s0-n2", size=("8", "16Gi", "10")),
            _node("s1-n3", size=("4", "8Gi", "10")),
            _node("s1-n4", size=("8", "16Gi", "10")),
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 2, hypernodes=["s0", "s1"]),
            _pg(2, mode="hard", tier=1),
            _pg(2, name="pg2"),
            _pod("p3", group="pg2", at="s0-n1", labels={"volcano.sh/task-spec": "master"}, size=("2", "4Gi")),
            _pod("p4", group="pg2", at="s0-n2", labels={"volcano.sh/task-spec": "worker"}, size=("4", "8Gi")),
        ],
        [
            _pod("p1", labels={"volcano.sh/task-spec": "master"}, size=("2", "4Gi")),
            _pod("p2", labels={"volcano.sh/task-spec": "worker"}, size=("4", "8Gi")),
        ],
        Binds(2, {"c1/p1": "s0-n1", "c1/p2": "s0-n2"}),
        repo="volcano-sh/volcano",
    ),
]

# Each node carries its tier-1 HyperNode's name in a label of ours, only so the row can count
# binds per HyperNode as upstream's check does.
_IN_HYPERNODE = "example.com/hypernode"


def _binpack_node(name: str) -> Obj:
    return node(
        name, {_IN_HYPERNODE: name.split("-")[0]}, allocatable={"cpu": "4", "memory": "8Gi", "pods": "10"}
    )


BINPACK_ROWS = [
    Row(
        "NetworkTopology",
        HYPERNODE_BINPACK,
        "hard network topology constrain, allocate task to node under LCAHyperNode",
        [
            *(_binpack_node(n) for n in ("s0-n1", "s0-n2", "s1-n3", "s1-n4", "s2-n5", "s2-n6")),
            hypernode("s0", 1, ["s0-n1", "s0-n2"]),
            hypernode("s1", 1, ["s1-n3", "s1-n4"]),
            hypernode("s2", 1, ["s2-n5", "s2-n6"]),
            hypernode("s3", 2, hypernodes=["s0", "s1", "s2"]),
            _pg(4, mode="hard", tier=2),
        ],
        [
            _pod(p, labels={"volcano.sh/task-spec": role}, size=("4", "8Gi"))
            for p, role in (("p1", "master"), ("p2", "worker"), ("p3", "worker"), ("p4", "worker"))
        ],
        Spread((_IN_HYPERNODE,), (2, 2)),
        repo="volcano-sh/volcano",
    ),
]

ROWS = [*NETWORK_ROWS, *PARTITION_ROWS, *SCORE_ROWS, *BINPACK_ROWS]
