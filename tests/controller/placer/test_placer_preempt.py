"""Job-level preemption: whole victim gangs, budgets, soft gangs, all-or-nothing."""

from __future__ import annotations

from typing import Any

import pytest
from placer_objects import (
    attempt,
    cnt,
    koord_gang,
    members,
    node,
    pdb,
    pod,
    priority_class,
    run,
    spine_block_nodes,
    volcano_gang,
)

from controller.placer.budgets import budgets_from
from controller.placer.framework import Code
from controller.placer.scenario import cluster_state, load_scenario, prepare

CLASSES = [priority_class("high", 1000), priority_class("mid", 500), priority_class("low", 100)]


def running(name: str, node_name: str, cls: str = "low", **kw: object) -> dict[str, object]:
    return pod(name, node_name=node_name, priority_class=cls, scheduler="default-scheduler", **kw)  # type: ignore[arg-type]


def running_gang(name: str, nodes: list[str], min_member: int, cls: str = "low") -> list[dict[str, object]]:
    out: list[dict[str, object]] = [volcano_gang(name, min_member)]
    for i, n in enumerate(nodes):
        out.append(running(f"{name}-{i}", n, cls, annotations={"scheduling.k8s.io/group-name": name}))
    return out


def test_a_victim_gang_goes_whole_when_it_would_fall_below_min_member() -> None:
    objs = [node("a"), node("b"), node("c"), *CLASSES]
    objs += running_gang("old", ["a", "b", "c"], 3)
    objs += [pod("new", priority_class="high", scheduler="topobridge")]
    result = run(objs)
    assert result.evicted == ["default/old-0", "default/old-1", "default/old-2"]
    assert result.bound == {"default/new": "a"}


def test_a_victim_gang_with_slack_loses_only_one_member() -> None:
    objs = [node("a"), node("b"), node("c"), *CLASSES]
    objs += running_gang("old", ["a", "b", "c"], 2)
    objs += [pod("new", priority_class="high", scheduler="topobridge")]
    result = run(objs)
    assert len(result.evicted) == 1
    assert result.bound == {"default/new": result.initial_pods[result.evicted[0]]}


def test_a_lone_pod_is_preferred_over_a_whole_gang_of_the_same_priority() -> None:
    objs = [node("a"), node("b"), node("c"), *CLASSES]
    objs += running_gang("old", ["a", "b"], 2)
    objs += [running("solo", "c")]
    objs += [pod("new", priority_class="high", scheduler="topobridge")]
    assert run(objs).evicted == ["default/solo"]


def test_a_gang_with_a_member_at_or_above_the_preemptor_is_untouchable() -> None:
    objs = [node("a"), node("b"), *CLASSES, volcano_gang("old", 2)]
    objs += [running("old-0", "a", "low", annotations={"scheduling.k8s.io/group-name": "old"})]
    objs += [running("old-1", "b", "high", annotations={"scheduling.k8s.io/group-name": "old"})]
    objs += [pod("new", priority_class="high", scheduler="topobridge")]
    result = run(objs)
    assert result.evicted == [] and "pod:default/new" in result.unschedulable


def test_budgets_come_before_priority() -> None:
    """Evicting the low pod would break its budget; the mid pod has none, so it goes."""
    objs = [node("a"), node("b"), *CLASSES, pdb("keep-web", {"app": "web"}, allowed=0)]
    objs += [running("web", "a", "low", labels={"app": "web"}), running("batch", "b", "mid")]
    objs += [pod("new", priority_class="high", scheduler="topobridge")]
    verdict = attempt(objs, "default/new")
    assert verdict.plan is not None
    assert [v.pod for v in verdict.plan.victims] == ["default/batch"]
    assert verdict.plan.cost == (0, 500, 1)


def test_a_budget_violation_is_accepted_when_nothing_else_frees_room() -> None:
    objs = [node("a"), *CLASSES, pdb("keep-web", {"app": "web"}, allowed=0)]
    objs += [running("web", "a", "low", labels={"app": "web"})]
    objs += [pod("new", priority_class="high", scheduler="topobridge")]
    verdict = attempt(objs, "default/new")
    assert verdict.plan is not None and verdict.plan.cost == (1, 100, 1)


def test_lowest_priority_victims_first_then_fewest() -> None:
    """Two mid pods or one... the order is highest-victim priority first: two low pods beat one mid."""
    objs = [node("a", cpu="2"), node("b", cpu="2"), *CLASSES]
    objs += [
        running("l1", "a", "low", cpu="1"),
        running("l2", "a", "low", cpu="1"),
        running("m", "b", "mid", cpu="2"),
    ]
    objs += [pod("new", cpu="2", priority_class="high", scheduler="topobridge")]
    verdict = attempt(objs, "default/new")
    assert verdict.plan is not None
    assert sorted(v.pod for v in verdict.plan.victims) == ["default/l1", "default/l2"]
    assert verdict.plan.cost == (0, 100, 2)


def test_no_eviction_unless_the_whole_gang_then_fits() -> None:
    """Three whole-node pods; only two nodes hold lower-priority pods: evicting them helps
    nobody, so nothing is evicted."""
    objs = [node("a"), node("b"), node("c"), *CLASSES]
    objs += [running("l1", "a"), running("l2", "b"), running("h", "c", "high")]
    objs += [volcano_gang("job", 3), *members("job", 3, dialect="volcano", priority_class="high")]
    result = run(objs)
    assert result.evicted == []
    verdict = attempt(objs, "default/job")
    assert verdict.code is Code.UNRESOLVABLE


def test_a_soft_gang_does_not_preempt_to_gather_better() -> None:
    """It fits spread over two spines; gathering in one would need an eviction: no eviction."""
    layout = {"s0": {"b0": ["n0", "n1"]}, "s1": {"b1": ["n2", "n3"]}}
    objs = [*spine_block_nodes(layout), cnt(), *CLASSES, running("l", "n0")]
    objs += [
        koord_gang("job", 3, gather=[("SpineLayer", "PreferGather")]),
        *members("job", 3, priority_class="high"),
    ]
    result = run(objs)
    assert result.evicted == []
    assert len(result.bound) == 3 and result.gangs["koordinator:default/job"] == ("cluster", 3)


def test_a_soft_gang_that_cannot_be_placed_at_all_preempts() -> None:
    layout = {"s0": {"b0": ["n0", "n1"]}, "s1": {"b1": ["n2", "n3"]}}
    objs = [*spine_block_nodes(layout), cnt(), *CLASSES, running("l", "n0"), running("l2", "n2")]
    objs += [
        koord_gang("job", 3, gather=[("SpineLayer", "PreferGather")]),
        *members("job", 3, priority_class="high"),
    ]
    result = run(objs)
    assert len(result.evicted) == 1 and len(result.bound) == 3


def test_a_hard_gang_is_nominated_only_inside_the_plan_domain() -> None:
    layout = {"s0": {"b0": ["n0", "n1"]}, "s1": {"b1": ["n2", "n3", "n4"]}}
    objs = [*spine_block_nodes(layout), cnt(), *CLASSES]
    objs += [running("x", "n0"), running("y", "n2"), running("z", "n3")]
    objs += [
        koord_gang("job", 2, gather=[("SpineLayer", "MustGather")]),
        *members("job", 2, priority_class="high"),
    ]
    verdict = attempt(objs, "default/job")
    assert verdict.plan is not None
    assert verdict.plan.domain == "SpineLayer/s0"
    assert {n for _, n in verdict.plan.nominated} == {"n0", "n1"}


@pytest.mark.parametrize(
    ("spec", "healthy_pods", "allowed"),
    [
        ({"minAvailable": 2}, 3, 1),
        ({"minAvailable": "50%"}, 3, 1),
        ({"maxUnavailable": 2}, 3, 2),
        ({"maxUnavailable": "34%"}, 3, 2),
        ({"minAvailable": 5}, 3, 0),
    ],
    ids=["min-int", "min-percent-rounds-up", "max-int", "max-percent-rounds-up", "never-negative"],
)
def test_budgets_without_status_are_computed(
    spec: dict[str, object], healthy_pods: int, allowed: int
) -> None:
    objs = [node("a"), *[running(f"w{i}", "a", cpu="1", labels={"app": "web"}) for i in range(healthy_pods)]]
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }
    sc = load_scenario([*objs, budget])
    prep = prepare(sc)
    assert [b.allowed for b in budgets_from(sc.pdbs, prep.snapshot)] == [allowed]


@pytest.mark.parametrize(
    ("limit", "allowed"),
    [
        ({"min_available": 2}, 1),
        ({"min_available": "60%"}, 0),
        ({"max_unavailable": 1}, 0),
        ({"max_unavailable": "50%"}, 1),
    ],
    ids=["min-int", "min-percent-of-all-covered", "max-int-spent", "max-percent-partly-spent"],
)
def test_a_terminating_covered_pod_is_a_disruption_already_under_way(
    limit: dict[str, Any], allowed: int
) -> None:
    """As the disruption controller counts: percentages and maxUnavailable are of every covered
    pod (terminating ones included), and a terminating pod is not healthy, so it uses up part of
    the budget (four covered pods, one terminating)."""
    objs = [node("a"), *[running(f"w{i}", "a", cpu="1", labels={"app": "web"}) for i in range(4)]]
    objs[1]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    sc = load_scenario([*objs, pdb("b", {"app": "web"}, **limit)])
    assert [b.allowed for b in budgets_from(sc.pdbs, prepare(sc).snapshot)] == [allowed]
    assert [b.allowed for b in cluster_state(sc).view().budgets] == [allowed]


def test_pods_on_nodes_the_gang_cannot_use_do_not_change_its_plan() -> None:
    """Two plans tie (two low pods, 3 CPU, freed either way); the exact search picks one. Forty
    lone pods on nodes the gang's selector rules out are no victims at all, so they must not
    tip the plan over to the heuristic for big places (it picked the other plan)."""
    mine = {"pool": "mine"}
    objs: list[dict[str, Any]] = [*CLASSES, node("a", labels=mine), node("b", cpu="4", labels=mine)]
    objs += [node("c", labels=mine)]
    layout = {"a": ["1", "2", "1", "500m"], "b": ["2", "1", "1"], "c": ["2", "2", "2", "500m"]}
    # Named in turn across the nodes, as pods are spread: p0 on a, p1 on b, p2 on c, p3 on a...
    for k in range(4):
        for j, (host, cpus) in enumerate(layout.items()):
            if k < len(cpus):
                objs.append(running(f"p{3 * k + j}", host, cpu=cpus[k], memory="1Gi"))
    objs += [koord_gang("gang", 3)]
    objs += members(
        "gang", 3, cpu="2", memory="1Gi", priority_class="mid", scheduler="topobridge", node_selector=mine
    )
    alone = run(objs)
    assert alone.evicted and set(alone.bound) == {"default/gang-0", "default/gang-1", "default/gang-2"}
    others = [node(f"o{i}") for i in range(10)]
    others += [running(f"o{i}-{k}", f"o{i}", cpu="1", memory="1Gi") for i in range(10) for k in range(4)]
    crowded = run(objs + others)
    assert (crowded.evicted, crowded.bound) == (alone.evicted, alone.bound)


def test_a_big_place_spares_a_budget_when_a_higher_priority_gang_breaks_none() -> None:
    """Over 32 eligible pods in the place, so the exact search is skipped and its greedy decides.
    Evicting gang `a` (priority 100, its budget allows no disruption) or gang `b` (priority 500,
    no budget) each make room. Budgets come before priority: `b` goes, `a` stays. The greedy
    took the lowest threshold that fit and evicted `a`: the chaos run's pdb-needlessly-violated."""
    objs: list[Any] = [node("n0", cpu="8", memory="64Gi"), node("n1", cpu="8", memory="64Gi"), *CLASSES]
    objs.append(priority_class("least", 10))
    for gang, n, cls in (("a", "n0", "low"), ("b", "n1", "mid")):
        objs.append(volcano_gang(gang, 2))
        for i in range(2):
            objs.append(
                pod(
                    f"{gang}-{i}",
                    cpu="3500m",
                    memory="1Gi",
                    node_name=n,
                    priority_class=cls,
                    scheduler="default-scheduler",
                    labels={"app": gang},
                    annotations={"scheduling.k8s.io/group-name": gang},
                )
            )
    objs += [
        pod(
            f"tiny-{i}",
            cpu="10m",
            memory="10Mi",
            node_name=f"n{i % 2}",
            priority_class="least",
            scheduler="default-scheduler",
        )
        for i in range(40)
    ]
    objs.append(pdb("a-budget", {"app": "a"}, min_available=2))
    objs += [volcano_gang("new", 2, priority_class="high")]
    objs += [
        pod(
            f"new-{i}",
            cpu="3500m",
            memory="1Gi",
            priority_class="high",
            scheduler="topobridge",
            annotations={"scheduling.k8s.io/group-name": "new"},
        )
        for i in range(2)
    ]
    result = run(objs)
    assert sorted(result.evicted) == ["default/b-0", "default/b-1"]
    assert sorted(result.bound) == ["default/new-0", "default/new-1"]
