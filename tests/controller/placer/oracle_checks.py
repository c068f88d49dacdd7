"""One engine verdict checked against the brute-force oracle (shared by the oracle tests).

`compare` asserts: feasibility agrees (and, for exact shapes, the engine settles on the lowest
feasible tier); placements respect capacity, filters and the hard constraint; no gang is placed
partially; when the gang does not fit, the engine's preemption plan exists exactly when one
does, is valid, and is as cheap as the cheapest. It counts what it saw in `stats`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from oracle import (
    OracleCase,
    allowed,
    cheapest_preemption,
    cost,
    free_after,
    lowest_place,
    places,
    valid_victims,
)

from controller.placer.engine import Verdict
from controller.placer.framework import Code


def check_assignment(oc: OracleCase, removed: frozenset[str], assignment: dict[str, str]) -> None:
    """Every pod placed on an allowed node with room, all inside one allowed place (hard)."""
    pods = {p.key: p for p in oc.gang}
    assert set(assignment) == set(pods), "partial gang"
    nodes = {n.name: n for n in oc.nodes}
    free = free_after(oc, removed)
    asked: dict[str, set[str]] = {}
    for key, node in assignment.items():
        assert allowed(pods[key], nodes[node]), f"{key} on {node} breaks its filters"
        for r, v in pods[key].req.items():
            free[node][r] = free[node].get(r, 0) - v
            asked.setdefault(node, set()).add(r)
    for node, resources in asked.items():
        # As kube's NodeResourcesFit: only what the pods ask for must fit (a node may be short
        # of something else while a preemptor's victims terminate).
        short = {r: free[node][r] for r in resources if free[node][r] < 0}
        assert not short, f"{node} overcommitted: {short}"
    used = frozenset(assignment.values())
    if oc.mode == "hard" and oc.tier is not None:
        assert any(used <= ns for _, ns in places(oc)), f"hard constraint broken: {sorted(used)}"


@dataclass(frozen=True)
class Compared:
    """What the verdict turned out to be: "placed", "preempted" (with its victims) or "none"."""

    outcome: str
    victims: frozenset[str] = frozenset()


def compare(
    oc: OracleCase, verdict: Verdict, stats: Counter[str], *, exact: bool, never: bool, exact_shapes: bool
) -> Compared:
    """Check one verdict (see the module docstring); `exact`: the engine's selection is exact
    for this demand; `never`: preemptionPolicy Never; `exact_shapes`: plans must exist exactly
    when the oracle finds one."""
    lowest = lowest_place(oc)
    if verdict.code is Code.SUCCESS:
        assert verdict.placement is not None
        check_assignment(oc, frozenset(), dict(verdict.placement.pods))
        assert lowest is not None, "engine placed a gang the oracle cannot place"
        if exact:
            assert verdict.placement.chosen_tier == lowest, (verdict.placement, lowest)
        stats["placed"] += 1
        return Compared("placed")
    assert verdict.plan is None or verdict.code is Code.WAITING_FOR_VICTIMS
    if exact:
        assert lowest is None, (
            f"oracle places it at tier {lowest}; engine said {verdict.code}: {verdict.message}"
        )
    elif lowest is not None:
        stats["mixed:missed placement"] += 1
        return Compared("none")
    stats["not placed"] += 1
    if never:
        assert verdict.plan is None, "preemptionPolicy Never preempted"
        stats["never"] += 1
        return Compared("none")
    best = cheapest_preemption(oc)
    plan = verdict.plan
    if best is None:
        if exact_shapes or exact:
            assert plan is None, f"engine evicts {[v.pod for v in plan.victims]} but no victim set helps"
        stats["no plan"] += 1
        return Compared("none")
    if exact:
        assert plan is not None, (
            f"oracle preempts {sorted(best[1])} at cost {best[0]}; engine: {verdict.message}"
        )
    if plan is None:
        stats["mixed:missed plan"] += 1
        return Compared("none")
    victims = frozenset(v.pod for v in plan.victims)
    assert valid_victims(oc, victims), f"invalid victim set {sorted(victims)}"
    assert cost(oc, victims) == plan.cost, (cost(oc, victims), plan.cost)
    assert all(v.condition["reason"] == "PreemptionByScheduler" for v in plan.victims)
    check_assignment(oc, victims, dict(plan.nominated))
    if exact:
        assert plan.optimal, "search budget ran out on a tiny cluster"
        assert plan.cost == best[0], f"engine cost {plan.cost} > oracle {best[0]} ({sorted(best[1])})"
    stats["preempted"] += 1
    stats[f"victims:{len(victims)}"] += 1
    return Compared("preempted", victims)
