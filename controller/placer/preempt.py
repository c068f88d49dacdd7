"""Job-level preemption: free room for a whole gang by evicting lower-priority pods, or nothing.

Rules (the seed's job-level preemption, with a topology):
* Only a gang that cannot be placed now, whose policy is not `Never`, preempts; a soft or
  unconstrained gang only when it cannot be placed anywhere (never just to gather better).
* Victims are bound, not yet terminating pods of strictly lower priority.
* A victim in a gang takes its whole gang along, unless the gang keeps at least minMember
  pods: a set S is valid iff for each gang G, |S n G| <= bound(G) - minMember(G) or G c S
  (and then every member of G is of lower priority).
* Plans are evaluated per candidate domain under the gang's own constraint: hard at tier T,
  the domains of the widest tier <= T (single nodes at T = 0, plus nodes outside every such
  domain); soft or none, the whole cluster. The gang must fit inside the domain after the
  evictions, so a plan never trades the constraint for room.
* Within a domain the victim set minimises, in order: PodDisruptionBudget violations
  (sum over budgets of max(0, victims it covers - disruptions it allows)), the highest victim
  priority, the number of victim pods. Across domains the same, then binpack: the fewest slots
  left over if every eligible pod in the domain were gone (the domain closest to the gang's
  size), then left over after the plan, then name.

How (`plan_preemption`: `_candidates`, then `_choose`, then `_plan`), in two regimes:
* A vectorised pre-check drops every place where the gang would not fit even with every
  eligible pod gone.
* Eligible pods count only on nodes some member may use (room elsewhere frees nothing for the
  gang; a whole victim gang still takes its members there along).
* Places with at most `EXACT_UNITS` eligible pods (any shape): the exact search of
  `search.py`, in two passes: every place's greedy incumbent (places in order of a lower bound,
  skipped once they cannot beat the best plan), then branch and bound in each place that still
  may, cheapest incumbent first. Both pay the attempt's step budget (`attempt_budget`): a search
  it cuts short keeps the best incumbent of every place it reached. The oracle tests check on
  thousands of small clusters that the plan is the cheapest there is.
* Bigger places, for a gang of one shape: the vectorised heuristic of `fast.py` over all places
  at once (lone pods only; the search's greedy when those do not suffice). Its plans are valid
  and, on small clusters where the oracle can tell, the cheapest in about nine cases out of ten;
  `PreemptionPlan.optimal` is False for them, as for any search that ran out of budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import repeat
from operator import is_

import numpy as np

from controller.placer.attempt_budget import AttemptBudget, place_steps, unbounded
from controller.placer.budgets import Budget
from controller.placer.demand import GangDemand
from controller.placer.fast import fast_plan
from controller.placer.offer import evaluate
from controller.placer.search import (
    NO_VICTIM,
    SEARCH_BUDGET,
    Cost,
    Found,
    Limits,
    Problem,
    Search,
    apply_units,
    build_problem,
    pods_of,
    violations,
)
from controller.placer.select import Placement, Where, place_in, select
from controller.placer.snapshot import I64, Bool, ClusterIndex, PodArrays, Snapshot
from controller.placer.tiers import hard_limit_tier
from translations.gangs import gang_name
from translations.topology import NaturalKey, natural_key

EXACT_UNITS = 32
"""Eligible pods in one candidate place above which a gang of one shape is planned by the
vectorised heuristic (`fast.py`) instead of the exact search."""

PlanKey = tuple[Cost, int, int, NaturalKey]
"""Cost, then leftover slots with every eligible pod gone, after the plan, then name."""

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_REASON = "PreemptionByScheduler"


@dataclass(frozen=True)
class Victim:
    pod: str
    node: str
    priority: int
    gang: str
    condition: Mapping[str, str]
    """The `DisruptionTarget` pod condition to set before deleting it (time left to the caller)."""


@dataclass(frozen=True)
class PreemptionPlan:
    """Evict `victims`, then the gang goes to `nominated` (pod key -> node) inside `domain`."""

    gang: str
    domain: str
    tier: int
    victims: tuple[Victim, ...]
    nominated: tuple[tuple[str, str], ...]
    cost: Cost
    optimal: bool
    """False when the search budget ran out: the plan is valid, maybe not the cheapest."""
    domains_searched: int = 0


# --- planning -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidates:
    """What a plan may be made of: the pods that may go, and the places that may hold the gang."""

    eligible: Bool
    """Bound pods of lower priority than the gang, not yet terminating."""
    reach: Bool
    """Eligible pods on a node some member may use: only their room helps the gang."""
    places: list[tuple[Where, int]]
    """Places a plan may target, each with the gang's leftover slots there were every eligible
    pod gone; fewest leftover first."""
    pod_budgets: dict[int, tuple[int, ...]]
    """Eligible pod -> the budgets that cover it (indexes into `allowed`)."""
    allowed: list[int]
    """Disruptions each budget still allows."""


@dataclass(frozen=True)
class _Choice:
    """The victims chosen, the place the gang then goes to, and how sure the choice is."""

    where: Where
    victims: list[int]
    """Indexes into the snapshot's pod arrays."""
    optimal: bool
    searched: int
    """Places searched (every place for the heuristic, which weighs them all at once)."""


def plan_preemption(
    demand: GangDemand,
    snap: Snapshot,
    free: I64,
    budgets: Sequence[Budget],
    *,
    scheduler: str,
    attempt_budget: AttemptBudget | None = None,
) -> PreemptionPlan | None:
    """The cheapest plan that lets the whole gang fit, or None when no eviction set does: what
    may go and where (`_candidates`), which victims (`_choose`), then the plan (`_plan`)."""
    found = _candidates(demand, snap, free, budgets)
    if found is None:
        return None
    chosen = _choose(demand, snap, free, found, attempt_budget if attempt_budget is not None else unbounded())
    if chosen is None:
        return None
    return _plan(demand, snap, free, found, chosen, scheduler)


def _candidates(
    demand: GangDemand, snap: Snapshot, free: I64, budgets: Sequence[Budget]
) -> Candidates | None:
    """The pods a plan may evict and the places it may target; None when no place could hold
    the gang even with every eligible pod gone."""
    arrays = snap.arrays()
    eligible = (arrays.priority < demand.priority) & ~arrays.terminating
    if not demand.classes:
        return None
    # Room freed on a node no member may use helps no one: such pods are never worth evicting
    # alone, and counting them would let unrelated pods elsewhere decide how a place is searched.
    usable = np.logical_or.reduce([c.mask for c in demand.classes])
    reach = eligible & usable[arrays.node]
    if not reach.any():
        return None
    # With every eligible pod gone, which candidate places could hold the gang at all?
    optimistic = free.copy()
    np.add.at(optimistic, arrays.node[reach], arrays.req[reach])
    places = _candidate_places(demand, snap.index, optimistic)
    if not places:
        return None
    return Candidates(
        eligible=eligible,
        reach=reach,
        places=places,
        pod_budgets=_pod_budgets(snap, arrays, eligible, budgets),
        allowed=[b.allowed for b in budgets],
    )


def _choose(
    demand: GangDemand, snap: Snapshot, free: I64, found: Candidates, budget: AttemptBudget
) -> _Choice | None:
    """The victims: the vectorised heuristic when some place is too big to search and the gang
    has one shape; the exact search otherwise, and its greedy alone when the heuristic finds
    nothing in a place that big."""
    nodes = SEARCH_BUDGET
    big = _most_units(found.places, snap.arrays(), found.reach, snap.index) > EXACT_UNITS
    if demand.kind == "uniform" and demand.exact and big:
        fast = _heuristic(demand, snap, free, found)
        if fast is not None:
            return fast
        nodes = 0  # too big to search: the exact machinery's greedy alone
    return _search_places(demand, snap, free, found, Limits(nodes=nodes, budget=budget))


def _heuristic(demand: GangDemand, snap: Snapshot, free: I64, found: Candidates) -> _Choice | None:
    """`fast.fast_plan` over every place at once, on lone pods no budget covers."""
    arrays = snap.arrays()
    budgeted = np.zeros(len(arrays.keys), dtype=np.bool_)
    budgeted[list(found.pod_budgets)] = True
    lone = found.reach & (arrays.gang_size == 1) & ~budgeted
    fast = fast_plan(demand, snap.index, arrays, free, lone, found.places)
    if fast is None:
        return None
    return _Choice(fast.where, list(fast.victims), optimal=False, searched=len(found.places))


def _plan(
    demand: GangDemand, snap: Snapshot, free: I64, found: Candidates, chosen: _Choice, scheduler: str
) -> PreemptionPlan | None:
    """The plan for the chosen victims: where the gang's pods go once they are gone."""
    index, arrays = snap.index, snap.arrays()
    after = free.copy()
    if chosen.victims:
        idx = np.asarray(chosen.victims, dtype=np.int64)
        np.add.at(after, arrays.node[idx], arrays.req[idx])
    placement = _nominate(chosen.where, demand, after, index)
    if placement is None:  # the search checked this very fit; only a `mixed` gang can get here
        return None
    return PreemptionPlan(
        gang=demand.key,
        domain=chosen.where.label(index),
        tier=chosen.where.tier(index),
        victims=_victims(demand, snap, chosen.victims, scheduler),
        nominated=tuple(
            (demand.pods[pos].key, index.node_names[node]) for pos, node in placement.assignments
        ),
        cost=victim_cost(chosen.victims, arrays, found.pod_budgets, found.allowed),
        optimal=chosen.optimal,
        domains_searched=chosen.searched,
    )


def _victims(
    demand: GangDemand, snap: Snapshot, victims: Sequence[int], scheduler: str
) -> tuple[Victim, ...]:
    """The victims in name order, each with the `DisruptionTarget` condition kube-scheduler
    sets before it deletes a victim."""
    index, arrays = snap.index, snap.arrays()
    message = (
        f"{scheduler}: preempting to accommodate higher priority pods, "
        f"preemptor: {gang_name(demand.key)}, triggerpod: {demand.pods[0].key}"
    )
    condition = {"type": DISRUPTION_TARGET, "status": "True", "reason": PREEMPTION_REASON, "message": message}
    return tuple(
        Victim(
            pod=arrays.keys[i],
            node=index.node_names[int(arrays.node[i])],
            priority=int(arrays.priority[i]),
            gang=snap.pods[arrays.keys[i]].gang,
            condition=condition,
        )
        for i in sorted(victims, key=lambda i: natural_key(arrays.keys[i]))
    )


def victim_cost(
    victims: Sequence[int],
    arrays: PodArrays,
    pod_budgets: Mapping[int, tuple[int, ...]],
    allowed: Sequence[int],
) -> Cost:
    """(budget violations, highest priority, count) of a victim set."""
    hits = Counter(b for i in victims for b in pod_budgets.get(i, ()))
    top = max((int(arrays.priority[i]) for i in victims), default=NO_VICTIM)
    return (violations(hits, allowed), top, len(victims))


def _most_units(
    places: Sequence[tuple[Where, int]], arrays: PodArrays, reach: Bool, index: ClusterIndex
) -> int:
    """The most pods of `reach` any one candidate place holds."""
    place_of = np.full(index.n_nodes, -1, dtype=np.int64)
    for i, (where, _) in enumerate(places):
        lo, hi = where.range(index)
        place_of[lo:hi] = i
    at = place_of[arrays.node[reach]]
    at = at[at >= 0]
    return int(np.bincount(at, minlength=len(places)).max()) if len(at) else 0


@dataclass
class _Place:
    """One candidate place on its way through the search: its problem, its plan so far."""

    where: Where
    opt_leftover: int
    prob: Problem
    found: Found
    key: PlanKey | None = None


def _search_places(
    demand: GangDemand, snap: Snapshot, free: I64, found: Candidates, limits: Limits
) -> _Choice | None:
    """Every place's greedy incumbent first, then the exact search in each place that may
    still beat the best plan, cheapest incumbent first: a search the attempt's budget cuts
    short keeps the best incumbent of them all, not the first place's."""
    arrays = snap.arrays()
    places: list[_Place] = []
    best: _Place | None = None
    cut = False
    place_price = place_steps(snap.index.n_nodes)
    for where, opt_leftover in found.places:
        if not limits.budget.pay(place_price):
            cut = True  # the best plan so far (not proven the cheapest), or none
            break
        prob = build_problem(where, snap, arrays, found.eligible, found.pod_budgets, found.reach)
        if not prob.units or not _may_beat(prob, opt_leftover, best):
            continue
        greedy = Search(prob, demand, free, snap, found.allowed, replace(limits, nodes=0)).run()
        place = _Place(where, opt_leftover, prob, greedy)
        places.append(place)
        best = _better_place(demand, snap, free, place, best)
    for place in sorted(places, key=_incumbent_order):
        if limits.nodes <= 0 or not _may_beat(place.prob, place.opt_leftover, best):
            continue
        if not limits.budget.pay(place_price):
            cut = True
            break
        bound = best.key[0] if best is not None and best.key is not None else None
        search = Search(place.prob, demand, free, snap, found.allowed, replace(limits, bound=bound))
        place.found = search.run(incumbent=place.found)
        best = _better_place(demand, snap, free, place, best)
    if best is None or best.found.chosen is None:
        return None
    # Proven only when nothing was left undone: no place skipped, no search cut short.
    optimal = not (cut or limits.budget.exhausted) and limits.nodes > 0 and not best.found.exhausted
    return _Choice(best.where, pods_of(best.prob, best.found.chosen), optimal, len(places))


def _may_beat(prob: Problem, opt_leftover: int, best: _Place | None) -> bool:
    """Could a plan in this place beat `best` (its cheapest conceivable plan: one victim of the
    lowest priority it holds, no budget broken)?"""
    if best is None or best.key is None:
        return True
    lowest = min(u.priority for u in prob.units)
    return ((0, lowest, 1), opt_leftover) <= (best.key[0], best.key[1])


def _incumbent_order(place: _Place) -> tuple[int, PlanKey | tuple[()]]:
    """Places with an incumbent first, cheapest first; then the others in their own order."""
    return (0, place.key) if place.key is not None else (1, ())


def _better_place(
    demand: GangDemand, snap: Snapshot, free: I64, place: _Place, best: _Place | None
) -> _Place | None:
    """`place` keyed by its plan so far, and the better of it and `best`."""
    got = place.found
    if got.chosen is None or got.cost is None:
        place.key = None
        return best
    index = snap.index
    after = free.copy()
    apply_units(after, place.prob, got.chosen, snap.arrays(), +1)
    place.key = (
        got.cost,
        place.opt_leftover,
        _leftover(place.where, demand, after, index),
        natural_key(place.where.label(index)),
    )
    if best is None or best.key is None or place.key < best.key or best is place:
        return place
    return best


def _candidate_places(demand: GangDemand, index: ClusterIndex, optimistic: I64) -> list[tuple[Where, int]]:
    """Places a plan may target, each with the gang's leftover slots there if every eligible pod
    were gone; only those where the gang would then fit; fewest leftover first."""
    c = demand.constraint
    offers = evaluate(optimistic, demand, index)
    tier = hard_limit_tier(c, index)
    if tier is None or tier > index.max_tier:  # no hard limit, or one above every tier
        return [(Where("cluster", -1), offers.total_offer - demand.n)] if offers.total_fit else []
    out: list[tuple[Where, int]] = []
    covered = np.zeros(index.n_nodes, dtype=np.bool_)
    if tier:
        doms = index.tier_domains[tier]
        for d in doms:
            covered[int(index.dom_start[d]) : int(index.dom_end[d])] = True
            if offers.dom_fit[d]:
                out.append((Where("domain", int(d)), int(offers.dom_offer[d]) - demand.n))
    leftover = offers.raw_slots - demand.n if demand.kind == "uniform" else offers.node_offer - demand.n
    for v in np.flatnonzero(~covered & offers.node_fit):
        out.append((Where("node", int(v)), int(leftover[v])))
    if len(demand.anchors):
        amin, amax = int(demand.anchors[0]), int(demand.anchors[-1])
        out = [(w, lf) for w, lf in out if w.range(index)[0] <= amin < amax + 1 <= w.range(index)[1]]
    out.sort(key=lambda wl: (wl[1], natural_key(wl[0].label(index))))
    return out


def _pod_budgets(
    snap: Snapshot, arrays: PodArrays, eligible: Bool, budgets: Sequence[Budget]
) -> dict[int, tuple[int, ...]]:
    out: dict[int, tuple[int, ...]] = {}
    if not budgets:
        return out
    # Coverage kept by the caller (pod -> budget keys, empty for none) is read, not recomputed:
    # only pods it records as covered, or does not know (None), are looked at one by one.
    known = snap.budget_hits if snap.budget_hits is not None else {}
    names = list(map(known.get, arrays.keys))
    n = len(names)
    look = np.fromiter(map(bool, names), dtype=np.bool_, count=n)  # covered by some budget
    if names.count(None):
        look |= np.fromiter(map(is_, names, repeat(None)), dtype=np.bool_, count=n)
    pos = {b.key: j for j, b in enumerate(budgets)}
    mapped: dict[tuple[str, ...], tuple[int, ...]] = {}
    for i in np.flatnonzero(eligible & look).tolist():
        got = names[i]
        if got is None:
            pod = snap.pods[arrays.keys[i]]
            hits = tuple(j for j, b in enumerate(budgets) if b.covers(pod.namespace, pod.labels))
        else:
            known_hits = mapped.get(got)
            if known_hits is None:
                known_hits = mapped[got] = tuple(sorted(pos[k] for k in got if k in pos))
            hits = known_hits
        if hits:
            out[i] = hits
    return out


def _leftover(where: Where, demand: GangDemand, free: I64, index: ClusterIndex) -> int:
    offers = evaluate(free, demand, index)
    if where.kind == "cluster":
        return offers.total_offer - demand.n
    if where.kind == "domain":
        return int(offers.dom_offer[where.idx]) - demand.n
    return int(offers.node_offer[where.idx]) - demand.n


def _nominate(where: Where, demand: GangDemand, free: I64, index: ClusterIndex) -> Placement | None:
    """Where the gang goes once the victims are gone: inside the plan's domain (the normal
    selection when the plan spans the cluster, so a soft gang still gathers)."""
    if where.kind == "cluster":
        return select(demand, free, index)
    return place_in(where, demand, free, index)
