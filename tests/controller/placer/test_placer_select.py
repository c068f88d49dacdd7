"""Selection, descent and rank layout: binpacking, fewest domains, the index deciding the
mapping, leader != worker shapes, filters, minMember, subgroups, reservations."""

from __future__ import annotations

from collections import Counter

import pytest
from placer_objects import (
    attempt,
    cnt,
    hypernode,
    koord_gang,
    members,
    node,
    pod,
    priority_class,
    run,
    spine_block_nodes,
    volcano_gang,
)

from controller.placer.framework import Code, Step

SEED = {
    "spine-0": {"block-0": ["node-0", "node-1", "node-2"], "block-1": ["node-3", "node-4"]},
    "spine-1": {"block-2": ["node-5", "node-6"], "block-3": ["node-7", "node-8"]},
    "spine-2": {"block-4": ["node-9", "node-10", "node-11"]},
}
BLOCK_OF = {n: b for s in SEED.values() for b, ns in s.items() for n in ns}
SPINE_OF = {n: s for s, bs in SEED.items() for ns in bs.values() for n in ns}


def seed_cluster(**kw: object) -> list[dict[str, object]]:
    return [*spine_block_nodes(SEED, **kw), cnt()]


def test_the_index_decides_which_pod_goes_where_not_the_name() -> None:
    """Names sort a..d, ranks run d..a: rank 0 (pod d) takes the first node of the layout."""
    objs = [*seed_cluster(), koord_gang("job", 4, gather=[("SpineLayer", "MustGather")])]
    for name, rank in zip("abcd", [3, 2, 1, 0], strict=True):
        objs.append(pod(name, labels={"pod-group.scheduling.sigs.k8s.io": "job"}, index=rank))
    bound = run(objs).bound
    assert bound == {
        "default/d": "node-5",
        "default/c": "node-6",
        "default/b": "node-7",
        "default/a": "node-8",
    }


def test_consecutive_ranks_share_nodes_then_blocks() -> None:
    """Eight half-node pods: two per node, ranks 0-3 in block-2, ranks 4-7 in block-3."""
    objs = [*seed_cluster(), koord_gang("job", 8, gather=[("SpineLayer", "MustGather")])]
    objs += members("job", 8, cpu="4", memory="16Gi")
    bound = run(objs).bound
    nodes = [bound[f"default/job-{i}"] for i in range(8)]
    assert nodes == ["node-5", "node-5", "node-6", "node-6", "node-7", "node-7", "node-8", "node-8"]


def test_ranks_form_one_interval_per_domain_when_spread() -> None:
    """A soft gang too big for any spine spreads over the fewest spines, ranks in runs. Of the
    two-spine sets, the tightest wins (spine-1 + spine-2 hold exactly 7), not the largest spine
    first: past its tier a soft gang is placed like the next tier up, as Volcano does."""
    objs = [
        *seed_cluster(),
        koord_gang("job", 7, gather=[("SpineLayer", "PreferGather")]),
        *members("job", 7),
    ]
    result = run(objs)
    bound = result.bound
    spines = [SPINE_OF[bound[f"default/job-{i}"]] for i in range(7)]
    assert Counter(spines) == {"spine-1": 4, "spine-2": 3}  # fewest spines, then binpack
    assert result.gangs["koordinator:default/job"] == ("cluster", 3)
    for level in (spines, [BLOCK_OF[bound[f"default/job-{i}"]] for i in range(7)]):
        seen: list[str] = []
        for d in level:
            if not seen or seen[-1] != d:
                assert d not in seen, f"ranks of {d} are not consecutive: {level}"
                seen.append(d)


def test_smallest_fitting_domain_binpacks_and_keeps_bigger_free_domains() -> None:
    """Three blocks fit a 2-pod gang exactly; block-0's spine is already partly used, so the
    choice leaves the fully free spine-1 intact."""
    layout = {
        "spine-0": {"block-0": ["n0", "n1"], "block-1": ["n2", "n3"]},
        "spine-1": {"block-2": ["n4", "n5"], "block-3": ["n6", "n7"]},
    }
    objs = [*spine_block_nodes(layout), cnt()]
    objs += [pod("busy", node_name="n2", scheduler="default-scheduler")]
    objs += [koord_gang("job", 2, gather=[("BlockLayer", "MustGather")]), *members("job", 2)]
    result = run(objs)
    assert sorted(result.bound.values()) == ["n0", "n1"]
    assert result.gangs["koordinator:default/job"] == ("BlockLayer/block-0", 1)


def test_a_gang_that_fits_on_one_node_goes_to_the_fullest_such_node() -> None:
    objs = [
        *seed_cluster(),
        pod("half", cpu="4", memory="16Gi", node_name="node-10", scheduler="default-scheduler"),
    ]
    objs += [koord_gang("job", 2, gather=[("BlockLayer", "MustGather")])]
    objs += members("job", 2, cpu="2", memory="8Gi")
    result = run(objs)
    assert set(result.bound.values()) == {"node-10"}
    assert result.gangs["koordinator:default/job"] == ("node-10", 0)


def test_hard_tier_zero_means_one_node() -> None:
    objs = [*seed_cluster(), volcano_gang("job", 3, mode="hard", tier=0)]
    objs += members("job", 3, dialect="volcano", cpu="3", memory="4Gi")
    verdict = attempt(objs, "default/job")
    assert verdict.code is Code.UNRESOLVABLE  # 9 CPU on an 8-CPU node: never
    objs = [*seed_cluster(), volcano_gang("job", 2, mode="hard", tier=0)]
    objs += members("job", 2, dialect="volcano", cpu="3", memory="4Gi")
    result = run(objs)
    assert len(set(result.bound.values())) == 1


def test_leader_and_workers_of_different_shapes_gather_in_one_block() -> None:
    """An LWS-like group: a 1-CPU leader and three 8-CPU workers, on 9-CPU nodes, in one block."""
    objs = [*seed_cluster(cpu="9"), volcano_gang("grp", 4, mode="hard", tier=1)]
    objs.append(
        pod(
            "grp-0",
            cpu="1",
            memory="1Gi",
            scheduler="volcano",
            annotations={"scheduling.k8s.io/group-name": "grp"},
            labels={"leaderworkerset.sigs.k8s.io/worker-index": "0"},
        )
    )
    for i in range(1, 4):
        objs.append(
            pod(
                f"grp-{i}",
                memory="16Gi",
                scheduler="volcano",
                annotations={"scheduling.k8s.io/group-name": "grp"},
                labels={"leaderworkerset.sigs.k8s.io/worker-index": str(i)},
            )
        )
    result = run(objs)
    bound = result.bound
    assert len(bound) == 4
    assert len({BLOCK_OF[n] for n in bound.values()}) == 1
    assert bound["default/grp-0"] == bound["default/grp-1"], "the leader sits with the first worker"
    assert len({bound[f"default/grp-{i}"] for i in range(1, 4)}) == 3


def test_leader_with_its_own_node_selector() -> None:
    """Only block-4's nodes carry the label the leader asks for, so the gang goes there."""
    nodes = seed_cluster()
    for o in nodes:
        if o["kind"] == "Node" and o["metadata"]["name"] in ("node-10",):
            o["metadata"]["labels"]["role"] = "leader"
    objs = [*nodes, volcano_gang("grp", 3, mode="hard", tier=1)]
    objs.append(
        pod(
            "grp-0",
            cpu="1",
            memory="1Gi",
            scheduler="volcano",
            node_selector={"role": "leader"},
            annotations={"scheduling.k8s.io/group-name": "grp"},
        )
    )
    objs += [
        pod(
            f"grp-{i}",
            cpu="4",
            memory="8Gi",
            scheduler="volcano",
            annotations={"scheduling.k8s.io/group-name": "grp"},
        )
        for i in (1, 2)
    ]
    bound = run(objs).bound
    assert bound["default/grp-0"] == "node-10"
    assert {BLOCK_OF[n] for n in bound.values()} == {"block-4"}


@pytest.mark.parametrize(
    ("node_kw", "pod_kw", "placed"),
    [
        ({"taints": [{"key": "gpu", "value": "only", "effect": "NoSchedule"}]}, {}, False),
        (
            {"taints": [{"key": "gpu", "value": "only", "effect": "NoSchedule"}]},
            {"tolerations": [{"key": "gpu", "operator": "Equal", "value": "only", "effect": "NoSchedule"}]},
            True,
        ),
        (
            {"taints": [{"key": "gpu", "value": "only", "effect": "NoExecute"}]},
            {"tolerations": [{"operator": "Exists"}]},
            True,
        ),
        ({"taints": [{"key": "soft", "value": "x", "effect": "PreferNoSchedule"}]}, {}, True),
        ({"unschedulable": True}, {}, False),
        (
            {"unschedulable": True},
            {"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]},
            True,
        ),
        ({"labels": {"zone": "a"}}, {"node_selector": {"zone": "a"}}, True),
        ({"labels": {"zone": "b"}}, {"node_selector": {"zone": "a"}}, False),
        (
            {},
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}
                            ]
                        }
                    }
                }
            },
            True,
        ),
        (
            {},
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "NotIn", "values": ["n"]}
                                    ]
                                }
                            ]
                        }
                    }
                }
            },
            False,
        ),
        (
            {"labels": {"gen": "5"}},
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["4"]}]}
                            ]
                        }
                    }
                }
            },
            True,
        ),
        (
            {"labels": {"gen": "3"}},
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["4"]}]},
                                {"matchExpressions": [{"key": "gen", "operator": "Exists"}]},
                            ]
                        }
                    }
                }
            },
            True,
        ),
        ({"gpu": "8"}, {"gpu": "4"}, True),
        ({}, {"gpu": "1"}, False),
    ],
    ids=[
        "untolerated-taint",
        "tolerated-taint",
        "exists-tolerates-all",
        "prefer-no-schedule-ignored",
        "unschedulable",
        "unschedulable-tolerated",
        "selector-match",
        "selector-mismatch",
        "match-fields-name",
        "match-fields-notin",
        "affinity-gt",
        "affinity-terms-ored",
        "gpu-fits",
        "no-gpu",
    ],
)
def test_filters(node_kw: dict[str, object], pod_kw: dict[str, object], placed: bool) -> None:
    objs = [node("n", **node_kw), pod("p", cpu="1", memory="1Gi", scheduler="topobridge", **pod_kw)]  # type: ignore[arg-type]
    result = run(objs)
    assert (result.bound == {"default/p": "n"}) is placed
    if not placed:
        assert result.unschedulable["pod:default/p"].startswith("0/1 nodes are available:")


def test_filter_exclusions_are_counted_in_the_message() -> None:
    objs = [
        node("a", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
        node("b", unschedulable=True),
        node("c", labels={"zone": "b"}),
        pod("p", cpu="1", memory="1Gi", scheduler="topobridge", node_selector={"zone": "a"}),
    ]
    verdict = attempt(objs, "default/p")
    assert verdict.code is Code.UNRESOLVABLE and verdict.step is Step.FILTER
    # kube's Filter order (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity): node a is
    # counted under its taint, the first plugin it fails, though its labels do not match either.
    assert verdict.exclusions == {
        "node(s) were unschedulable": 1,
        "node(s) had untolerated taint(s)": 1,
        "node(s) didn't match Pod's node affinity/selector": 1,
    }
    assert "1 node(s) didn't match Pod's node affinity/selector" in verdict.message


def test_min_member_below_size_places_the_longest_rank_prefix() -> None:
    objs = [node("a", cpu="3"), volcano_gang("job", 2)]
    objs += members("job", 4, dialect="volcano", cpu="1", memory="1Gi")
    result = run(objs)
    assert sorted(result.bound) == ["default/job-0", "default/job-1", "default/job-2"]
    assert "volcano:default/job" in result.unschedulable


def test_too_few_members_is_unresolvable() -> None:
    objs = [node("a"), volcano_gang("job", 3), *members("job", 2, dialect="volcano", cpu="1", memory="1Gi")]
    verdict = attempt(objs, "default/job")
    assert verdict.code is Code.UNRESOLVABLE
    assert verdict.message == "gang default/job has 2 pod(s), fewer than its minMember 3"


def test_missing_podgroup_is_unresolvable_and_named() -> None:
    objs = [node("a"), *members("job", 2, dialect="volcano", cpu="1", memory="1Gi")]
    verdict = attempt(objs, "default/job")
    assert verdict.code is Code.UNRESOLVABLE
    assert "PodGroup default/job (scheduling.volcano.sh) not found" in verdict.message


def test_hypernode_tree_names_domains_by_hypernode_and_resolves_tier_names() -> None:
    objs = [node(f"n{i}") for i in range(4)]
    objs += [
        hypernode("rack-a", 1, [("Node", "n0"), ("Node", "n1")], "rack"),
        hypernode("rack-b", 1, [("Node", "n2"), ("Node", "n3")], "rack"),
        hypernode("zone", 2, [("HyperNode", "rack-a"), ("HyperNode", "rack-b")], "zone"),
    ]
    objs += [pod("x", node_name="n0", scheduler="default-scheduler")]
    objs += [volcano_gang("job", 2, mode="hard", tier_name="rack"), *members("job", 2, dialect="volcano")]
    result = run(objs)
    assert sorted(result.bound.values()) == ["n2", "n3"]
    assert result.gangs["volcano:default/job"] == ("rack-b", 1)


def test_bound_members_pin_a_hard_gang_to_their_domain() -> None:
    """Two members already run on node-9 and node-10; the other two (half-node pods) could share
    any free node, but a hard gang must stay in one domain with its running members: block-4."""
    objs = [*seed_cluster(), koord_gang("job", 4, gather=[("SpineLayer", "MustGather")])]
    objs += [
        pod(
            f"job-{i}", labels={"pod-group.scheduling.sigs.k8s.io": "job"}, index=i, node_name=f"node-{9 + i}"
        )
        for i in range(2)
    ]
    objs += [
        pod(f"job-{i}", cpu="4", memory="16Gi", labels={"pod-group.scheduling.sigs.k8s.io": "job"}, index=i)
        for i in (2, 3)
    ]
    result = run(objs)
    assert result.bound == {"default/job-2": "node-11", "default/job-3": "node-11"}
    assert result.gangs["koordinator:default/job"] == ("BlockLayer/block-4", 1)


def test_pod_count_multiple_puts_an_even_count_in_every_block() -> None:
    """podCountMultiple 2 at BlockLayer: pairs of consecutive ranks share a block."""
    layout = {"spine-0": {"block-0": ["n0", "n1", "n2"], "block-1": ["n3", "n4", "n5"]}}
    objs = [*spine_block_nodes(layout), cnt()]
    objs += [
        koord_gang(
            "job",
            4,
            gather=[("BlockLayer", "PreferGather"), ("SpineLayer", "MustGather")],
            pod_count_multiple={"BlockLayer": 2},
        )
    ]
    objs += [
        pod("busy", node_name="n0", scheduler="default-scheduler"),
        pod("busy2", node_name="n3", scheduler="default-scheduler"),
    ]
    objs += members("job", 4)
    bound = run(objs).bound
    assert len(bound) == 4
    per_block = Counter("block-0" if n in ("n0", "n1", "n2") else "block-1" for n in bound.values())
    assert all(c % 2 == 0 for c in per_block.values()), per_block
    assert bound["default/job-0"] in ("n1", "n2") and bound["default/job-1"] in ("n1", "n2")


def test_nominated_nodes_are_held_against_lower_priority_gangs() -> None:
    """node-a is nominated to a high-priority pod whose victim is still terminating: a
    lower-priority pod does not take the room the victim frees... nor the room left beside it."""
    objs = [node("a", cpu="4"), node("b", cpu="4"), priority_class("high", 100), priority_class("low", 1)]
    objs.append(pod("victim", cpu="2", memory="1Gi", node_name="a", scheduler="default-scheduler"))
    objs[-1]["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    hp = pod("hp", cpu="4", memory="1Gi", scheduler="topobridge", priority_class="high")
    hp["status"] = {"nominatedNodeName": "a"}
    lp = pod("lp", cpu="2", memory="1Gi", scheduler="topobridge", priority_class="low")
    verdict = attempt([*objs, hp, lp], "default/lp")
    assert verdict.code is Code.SUCCESS
    assert verdict.placement is not None and dict(verdict.placement.pods) == {"default/lp": "b"}
    hp_wait = attempt([*objs, hp, lp], "default/hp")
    assert (
        hp_wait.code is Code.WAITING_FOR_VICTIMS
        and "terminating pod on the nominated node" in hp_wait.message
    )


def test_served_scheduler_names_decide_what_is_placed() -> None:
    objs = [
        node("a"),
        pod("mine", cpu="1", memory="1Gi", scheduler="custom"),
        pod("theirs", cpu="1", memory="1Gi", scheduler="default-scheduler"),
    ]
    assert run(objs).bound == {}
    assert run(objs, schedulers=["custom"]).bound == {"default/mine": "a"}


def test_priority_classes_resolve_priority_and_global_default() -> None:
    """A pod without a class gets the globalDefault's value: here high enough to preempt."""
    objs = [node("a", cpu="2"), priority_class("base", 10, global_default=True), priority_class("low", 1)]
    objs += [
        pod("old", cpu="2", memory="1Gi", node_name="a", scheduler="default-scheduler", priority_class="low")
    ]
    objs += [pod("new", cpu="2", memory="1Gi", scheduler="topobridge")]
    result = run(objs)
    assert result.evicted == ["default/old"] and result.bound == {"default/new": "a"}
