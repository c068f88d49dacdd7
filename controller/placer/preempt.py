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
  priority, the number of victim pods. Across domains (`kube_rank`), kube-scheduler's
  `pickOneNodeForPreemption` (pkg/scheduler/framework/preemption): the fewest budget
  violations, the lowest highest victim priority, the smallest sum of victim priorities (each
  shifted by 2^31, as kube adds MaxInt32 + 1, so fewer victims weigh less even when their
  priorities are negative), the fewest victims, the latest start of the earliest-started
  highest-priority victim (kube spares the pod that has run longer); then binpack: the fewest
  slots left over if every eligible pod in the domain were gone (the domain closest to the
  gang's size), then left over after the plan, then name (kube's "first node"). A lone pod
  with no hard constraint is planned node by node; the comparison stops after
  `MIN_CANDIDATES_ABSOLUTE` candidates, as kube's dry run stops.
* When the gang's filters read bound pods (it has inter-pod terms, spread or host ports, or a
  lower-priority pod in reach has terms), room is not only capacity: a pod that holds the
  port, whose anti-affinity excludes the gang, or whose count breaks a spread is a victim as
  well. Then (`_plan_refiltered`, kube's SelectVictimsOnNode for a place): every eligible pod
  of the place is removed from the snapshot, the attempt's PreFilter and Filter run again
  (`framework.Refilter`), and only if the gang then fits there, each candidate is added back
  in kube's order (budget-violating ones first, then the more important first: higher
  priority, then earlier start) and stays if the gang still fits, else it is a victim. A
  victim gang of several pods goes whole on this path. A candidate without terms, put back for
  a gang whose filters count no pods, changes room alone and is checked by room. The dry run
  stops at a plan no place can beat on kube's first four keys, tries at most
  `REPRIEVE_PLACES` places of at most `REPRIEVE_UNITS` units, runs the filters at most
  `REFILTER_RUNS` times, and pays `refilter_steps` of the attempt's step budget for each run
  of the filters, priced by the nodes and the bound pods with terms it reads (once it is
  spent, the candidates not yet put back stay victims). When no place could be tried (too
  big, or no budget left for one), the search by room over the filters' best case is checked
  by one more run of the filters, and failing that every eligible unit of its place
  (`_whole_place`): a valid plan, not the cheapest.

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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from operator import attrgetter
from typing import Protocol

import numpy as np

from controller.placer.attempt_budget import PLACE_STEPS, AttemptBudget, place_steps, unbounded
from controller.placer.budgets import Budget
from controller.placer.columns import NOT_COVERED, NOT_KNOWN
from controller.placer.demand import GangDemand
from controller.placer.fast import fast_plan
from controller.placer.offer import evaluate
from controller.placer.records import BoundPod
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
from controller.placer.terms import PodTerms
from controller.placer.tiers import hard_limit_tier
from translations.gangs import GangPod, gang_name
from translations.topology import NaturalKey, natural_key

EXACT_UNITS = 32
"""Eligible pods in one candidate place above which a gang of one shape is planned by the
vectorised heuristic (`fast.py`) instead of the exact search."""

Rank = tuple[int, int, int, int, float]
"""kube's order of candidates (`kube_rank`): budget violations, highest victim priority, sum of
shifted priorities, victims, minus the earliest start among the highest-priority victims."""
PlanKey = tuple[Rank, int, int, NaturalKey]
"""kube's rank, then leftover slots with every eligible pod gone, after the plan, then name."""
PRIORITY_SHIFT = 2**31
"""What kube adds to each victim's priority before summing (math.MaxInt32 + 1)."""
REPRIEVE_UNITS = 64
"""Eviction units in one place above which the refiltered path does not try that place (each
unit costs one run of the filters)."""
REPRIEVE_PLACES = 64
"""Places the refiltered path tries, fewest leftover slots first."""
REFILTER_RUNS = 512
"""Runs of the filters one refiltered plan may make in all; a place it cannot afford is not
tried (the plan is then marked not optimal)."""
REFILTER_NODES_PER_STEP = 32
"""A run of PreFilter and Filter on the refiltered path reads every node: it costs the
attempt's budget `PLACE_STEPS` plus a step per this many nodes (`refilter_steps`)."""
REFILTER_TERMS_PER_STEP = 10
"""... and a step per this many bound pods with inter-pod terms, which InterPodAffinity reads
one by one on every run (about 4 us of CPU each here, where a step is 30 to 55 us)."""
MIN_CANDIDATES_ABSOLUTE = 100
"""kube's DefaultPreemptionArgs.minCandidateNodesAbsolute default: the dry run stops once it has
this many candidates. (kube takes the larger of it and 10% of the nodes; topobridge stops at
100 on clusters past 1,000 nodes too, so a lone pod's preemption stays within the attempt's
budget: each candidate here is an exact search, not one node's filters.)"""


def refilter_steps(n_nodes: int, n_with_terms: int = 0) -> int:
    """Attempt-budget steps one run of PreFilter and Filter costs on the refiltered path, on a
    cluster of `n_nodes` nodes with `n_with_terms` bound pods carrying inter-pod terms."""
    return PLACE_STEPS + n_nodes // REFILTER_NODES_PER_STEP + n_with_terms // REFILTER_TERMS_PER_STEP


def candidates_wanted(n_nodes: int) -> int:
    """How many candidate places the dry run collects before it picks one."""
    return min(n_nodes, MIN_CANDIDATES_ABSOLUTE)


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

    def describe(self, listed: int = 3) -> str:
        """Which pods the plan takes and why those, in one clause (what the gang's condition
        says while they terminate); the first `listed` victims by name, then how many more."""
        broken, top, _ = self.cost
        shown = ", ".join(f"{v.pod} (priority {v.priority}) on {v.node}" for v in self.victims[:listed])
        more = f" and {len(self.victims) - listed} more" if len(self.victims) > listed else ""
        budgets = (
            "no PodDisruptionBudget broken"
            if not broken
            else f"{broken} disruption(s) beyond what PodDisruptionBudgets allow"
        )
        return (
            f"preempting {len(self.victims)} lower-priority pod(s) in {self.domain}: {shown}{more}; "
            f"the cheapest set that lets the whole gang fit there ({budgets}, highest victim "
            f"priority {top}, fewest pods)"
        )


@dataclass(frozen=True)
class BestCase:
    """What the filters answer with every pod a gang may evict gone (`Refilter.without_lower`),
    and the room then free for it (its reservations counted as on that state)."""

    demand: GangDemand
    free: I64


class Refilter(Protocol):
    """PreFilter and Filter (with MemberRules and Score) of the attempt's profile, run again for
    `pods` of the attempt's gang on `snap` as it stands now; None when a PreFilter plugin
    refuses. What preemption asks after removing candidate victims (kube's
    `RunFilterPluginsWithNominatedPods` on a NodeInfo the PreFilter extensions changed); the
    runner (`engine`) builds it from the attempt's profile."""

    def __call__(self, snap: Snapshot, pods: Sequence[GangPod]) -> GangDemand | None: ...

    def without_lower(self, snap: Snapshot, pods: Sequence[GangPod], priority: int) -> BestCase | None:
        """The filters run again for `pods` with every pod a gang of `priority` may evict gone
        (`may_go`), on `snap` as the attempt found it; None when no pod may go or a
        PreFilter plugin refuses. The same question always has the same answer within one
        attempt: the runner keeps it (an attempt slot of the cycle state), so the Filter step's
        "may eviction help" and PostFilter's "would the gang fit" make one run between them."""
        ...


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
    pod_budgets: Mapping[int, tuple[int, ...]]
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
    room: PreemptionRoom,
    budgets: Sequence[Budget],
    *,
    scheduler: str,
    attempt_budget: AttemptBudget | None = None,
    refilter: Refilter | None = None,
    best_case: GangDemand | None = None,
) -> PreemptionPlan | None:
    """The cheapest plan that lets the whole gang fit, or None when no eviction set does: what
    may go and where (`_candidates`), which victims (`_choose`), then the plan (`_plan`); with
    the filters run again on the state with victims removed when they read bound pods
    (`_plan_refiltered`; `best_case`: the demand they gave with every lower priority gone, when
    the caller has it). `room`: the free room, and the room with every lower priority gone
    when a step before has asked for it."""
    budget = attempt_budget if attempt_budget is not None else unbounded()
    if refilter is not None and reads_bound_pods(demand, snap):
        best_case = best_case or revived(demand, snap, refilter)
        if best_case is None:
            return None
        plan = _plan_refiltered(
            demand,
            best_case,
            snap,
            budgets,
            refilter=refilter,
            attempt_budget=budget,
            scheduler=scheduler,
        )
        if plan is not None:
            return plan
        # Places too big to reprieve pod by pod, or no budget left to: the search by room over
        # the filters' best case, kept only if the filters, run again without its victims,
        # still let the gang in; else every eligible unit of that place, checked the same way.
        by_room = _plan_by_room(best_case, snap, room, budgets, scheduler, budget)
        if by_room is None:
            return None
        checked = _verified(*by_room, demand, snap, refilter)
        if checked is not None:
            return checked
        return _whole_place(
            by_room[1], demand, snap, budgets, refilter, scheduler=scheduler, checked=by_room[0]
        )
    got = _plan_by_room(demand, snap, room, budgets, scheduler, budget)
    return got[0] if got is not None else None


def _plan_by_room(
    demand: GangDemand,
    snap: Snapshot,
    room: PreemptionRoom,
    budgets: Sequence[Budget],
    scheduler: str,
    attempt_budget: AttemptBudget,
) -> tuple[PreemptionPlan, Where] | None:
    """What may go and where (`_candidates`), which victims (`_choose`), then the plan (`_plan`)
    and its place."""
    free = room.free
    found = _candidates(demand, snap, room, budgets)
    if found is None:
        return None
    chosen = _choose(demand, snap, free, found, attempt_budget)
    if chosen is None:
        return None
    chosen = _kube_tiebreak(demand, snap, free, found, chosen)
    plan = _plan(demand, snap, free, found, chosen, scheduler)
    return (plan, chosen.where) if plan is not None else None


def _verified(
    plan: PreemptionPlan, where: Where, demand: GangDemand, snap: Snapshot, refilter: Refilter
) -> PreemptionPlan | None:
    """The plan, with the gang's nodes as the filters place it once its victims are gone; None
    when they do not let the gang into the plan's place then. When the victims are every pod
    the gang may evict, that state is the one `revived` asked about: its answer is read, not
    worked out again."""
    index = snap.index
    if _every_eligible(plan, snap, demand.priority):
        best = refilter.without_lower(snap, demand.pods, demand.priority)
        if best is None or not all(c.mask.any() for c in best.demand.classes):
            return None
        placed = _nominate(where, best.demand, best.free, index)
    else:
        with snap.trial():
            snap.evict_many([v.pod for v in plan.victims])
            now = refilter(snap, demand.pods)
            if now is None or not all(c.mask.any() for c in now.classes):
                return None
            placed = _nominate(where, now, snap.free(demand.key, demand.priority), index)
    if placed is None:
        return None
    nominated = tuple((demand.pods[pos].key, index.node_names[node]) for pos, node in placed.assignments)
    return replace(plan, nominated=nominated, optimal=False)


def _every_eligible(plan: PreemptionPlan, snap: Snapshot, priority: int) -> bool:
    """Are the plan's victims every pod a gang of `priority` may evict?"""
    arrays = snap.arrays()
    eligible = eligible_victims(snap, arrays, priority)
    if len(plan.victims) != int(eligible.sum()):
        return False
    return {v.pod for v in plan.victims} == {arrays.keys[i] for i in np.flatnonzero(eligible).tolist()}


def _whole_place(
    where: Where,
    demand: GangDemand,
    snap: Snapshot,
    budgets: Sequence[Budget],
    refilter: Refilter,
    *,
    scheduler: str,
    checked: PreemptionPlan,
) -> PreemptionPlan | None:
    """Every eligible unit of `where` a victim (kube's SelectVictimsOnNode before its reprieve),
    kept if the filters, run again without them, let the gang in there; the plan a dry run
    the budget cut short falls back to (not optimal). None, with no run, when those victims are
    the ones of `checked`, a plan the filters already turned down."""
    arrays = snap.arrays()
    eligible = eligible_victims(snap, arrays, demand.priority)
    victims = sorted({i for u in _units_in(where, snap, arrays, eligible) for i in u})
    if not victims or {arrays.keys[i] for i in victims} == {v.pod for v in checked.victims}:
        return None
    pod_budgets = _pod_budgets(snap, arrays, eligible, budgets)
    plan = PreemptionPlan(
        gang=demand.key,
        domain=where.label(snap.index),
        tier=where.tier(snap.index),
        victims=_victims(demand, snap, victims, scheduler),
        nominated=(),
        cost=victim_cost(victims, arrays, pod_budgets, [b.allowed for b in budgets]),
        optimal=False,
        domains_searched=1,
    )
    return _verified(plan, where, demand, snap, refilter)


def _candidates(
    demand: GangDemand, snap: Snapshot, room: PreemptionRoom, budgets: Sequence[Budget]
) -> Candidates | None:
    """The pods a plan may evict and the places it may target; None when no place could hold
    the gang even with every eligible pod gone (the room then: `room`'s)."""
    arrays = snap.arrays()
    eligible = eligible_victims(snap, arrays, demand.priority)
    if not demand.classes:
        return None
    # Room freed on a node no member may use helps no one: such pods are never worth evicting
    # alone, and counting them would let unrelated pods elsewhere decide how a place is searched.
    usable = np.logical_or.reduce([c.mask for c in demand.classes])
    reach = eligible & usable[arrays.node]
    if not reach.any():
        return None
    # With every eligible pod gone, which candidate places could hold the gang at all? (The
    # offers read no node outside the classes' masks: the pods there, in the room too, count
    # for nothing.)
    optimistic = room.freed(demand.priority)
    places = _candidate_places(demand, snap.index, optimistic)
    if demand.n == 1 and [w.kind for w, _ in places] == ["cluster"]:
        places = _node_places(demand, snap.index, optimistic)  # a lone pod goes on one node
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


def _kube_tiebreak(
    demand: GangDemand, snap: Snapshot, free: I64, found: Candidates, chosen: _Choice
) -> _Choice:
    """Among plans the exact search proved equally cheap, kube's: in the chosen place every unit gone,
    then each put back in kube's order (`_reprieve_order`) while the gang still fits by room
    (kube's SelectVictimsOnNode). Taken when it costs what the search's plan costs and ranks
    no worse, so a lone pod goes before a group of equal priority, a smaller group before a
    larger one, the later-started before the earlier."""
    if not chosen.victims or not chosen.optimal:
        return chosen  # the heuristic's places, or a search cut short: no tie to break
    index, arrays = snap.index, snap.arrays()
    usable = np.logical_or.reduce([c.mask for c in demand.classes])
    # A unit with no member on a node the gang may use frees no room it can take: it stays,
    # and never counts against the cap (pods elsewhere never change the gang's plan).
    units = _units_in(chosen.where, snap, arrays, found.eligible, seeds=usable[arrays.node])
    if len(units) > REPRIEVE_UNITS:
        return chosen
    work = free.copy()
    for u in units:
        np.add.at(work, arrays.node[list(u)], arrays.req[list(u)])
    victims: list[int] = []
    for u in _reprieve_order(units, snap, arrays, found.pod_budgets, found.allowed):
        np.subtract.at(work, arrays.node[list(u)], arrays.req[list(u)])
        if _nominate(chosen.where, demand, work, index) is None:
            np.add.at(work, arrays.node[list(u)], arrays.req[list(u)])
            victims.extend(u)
    if _nominate(chosen.where, demand, work, index) is None:
        return chosen
    cost = partial(victim_cost, arrays=arrays, pod_budgets=found.pod_budgets, allowed=found.allowed)
    rank = partial(kube_rank, snap=snap, arrays=arrays, pod_budgets=found.pod_budgets, allowed=found.allowed)
    if cost(victims) != cost(chosen.victims) or rank(victims) > rank(chosen.victims):
        return chosen
    return replace(chosen, victims=sorted(victims))


def _heuristic(demand: GangDemand, snap: Snapshot, free: I64, found: Candidates) -> _Choice | None:
    """`fast.fast_plan` over every place at once, on lone pods no budget covers."""
    arrays = snap.arrays()
    covered = found.pod_budgets
    if isinstance(covered, _Covered):
        budgeted = covered.mask()
    else:
        budgeted = np.zeros(len(arrays.keys), dtype=np.bool_)
        budgeted[list(covered)] = True
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


def reads_bound_pods(demand: GangDemand, snap: Snapshot) -> bool:
    """Do the gang's filters depend on which lower-priority pods stay bound? They do when a
    member has inter-pod terms, spread or host ports, or a lower-priority bound pod's required
    anti-affinity selects a member (kube's InterPodAffinity filter reads existing pods' terms
    that way alone). Another pod's ports, spread or affinity never keep out a gang with none of
    its own: such a pod, wherever it runs, must not change how the gang's victims are chosen."""
    if any(PodTerms.of(demand.pods[c.pods[0]].pod) is not None for c in demand.classes):
        return True
    terms = [
        p.terms.anti_affinity
        for p in snap.with_terms.values()
        if p.terms is not None and p.terms.anti_affinity and may_go(p, demand.priority)
    ]
    if not terms:
        return False  # no member's labels to read (a big gang's are thousands)
    members = [
        (ns, dict(labels))
        for ns, labels in {
            (m.pod.namespace, frozenset((m.pod.metadata.labels or {}).items())) for m in demand.pods
        }
    ]
    ns_labels = snap.namespace_labels
    # Lazily, and each distinct term once: the first that selects a member answers.
    seen: set[int] = set()
    for anti_affinity in terms:
        for t in anti_affinity:
            if id(t) in seen:
                continue
            seen.add(id(t))
            if any(t.covers(ns, labels, ns_labels) for ns, labels in members):
                return True
    return False


def eligible_victims(snap: Snapshot, arrays: PodArrays, priority: int) -> Bool:
    """The bound pods a gang of `priority` may evict: of strictly lower priority, not yet
    terminating, and not protected (`volcano.sh/preemptable: "false"`)."""
    out: Bool = (arrays.priority < priority) & ~arrays.terminating
    if snap.protected:
        pos = arrays.position
        out[[pos[k] for k in snap.protected if k in pos]] = False
    return out


def with_freed(free: I64, arrays: PodArrays, gone: Bool) -> I64:
    """`free` plus, per node, what the pods of `gone` hold. When most pods go and the arrays
    carry what all of them hold (`PodArrays.held`, kept with the columns), that less what the
    others hold: the scatter runs over the fewer pods (a gang that outranks most of the
    cluster, the usual preemptor, leaves a handful)."""
    out = free.copy()
    held = arrays.held_on(len(free)) if 2 * int(np.count_nonzero(gone)) > len(gone) else None
    if held is None:
        _scatter(out, arrays, np.flatnonzero(gone), 1)
    else:
        out += held
        _scatter(out, arrays, np.flatnonzero(~gone), -1)
    return out


def _scatter(out: I64, arrays: PodArrays, pods: I64, sign: int) -> None:
    """The requests of `pods` added to (`sign` 1) or taken from (-1) their nodes' rows of `out`:
    one scatter over the flattened matrix (integer, so exact; several times faster than
    `np.add.at` over rows)."""
    n_res = out.shape[1]
    flat = (arrays.node[pods, None] * n_res + np.arange(n_res)).ravel()
    np.add.at(out.reshape(-1), flat, arrays.req[pods].ravel() if sign > 0 else -arrays.req[pods].ravel())


class PreemptionRoom:
    """The room a preemption weighs: `free` as it is, and with every pod a gang of a priority
    may evict gone (`with_freed` over `eligible_victims`), summed on the first question and
    then shared by every step of one preemption that asks: DefaultPreemption's "would the gang
    fit" for each place and member count, the order of a label's values, the planner's
    candidate places. Per node, so a dry run that takes pods out and puts them back leaves it
    standing."""

    def __init__(self, snap: Snapshot, free: I64) -> None:
        self.snap, self.free = snap, free
        self._room: dict[int, I64 | None] = {}

    def freed(self, priority: int) -> I64:
        """The room with every pod a gang of `priority` may evict gone (`free` itself when no
        pod may go)."""
        got = self._asked(priority)
        return got if got is not None else self.free

    def may_free(self, priority: int) -> bool:
        """May any pod go for a gang of `priority`?"""
        return self._asked(priority) is not None

    def _asked(self, priority: int) -> I64 | None:
        if priority not in self._room:
            arrays = self.snap.arrays()
            eligible = eligible_victims(self.snap, arrays, priority)
            self._room[priority] = with_freed(self.free, arrays, eligible) if eligible.any() else None
        return self._room[priority]


def may_go(pod: BoundPod, priority: int) -> bool:
    """`eligible_victims` for one pod."""
    return pod.priority < priority and not pod.terminating and pod.preemptable


def may_go_each(pods: Sequence[BoundPod], priority: int) -> Bool:
    """`may_go` for each of `pods`, read in passes over them (no Python call per pod)."""
    n = len(pods)
    prio = np.fromiter(map(_priority_of, pods), dtype=np.int64, count=n)
    terminating = np.fromiter(map(_terminating_of, pods), dtype=np.bool_, count=n)
    preemptable = np.fromiter(map(_preemptable_of, pods), dtype=np.bool_, count=n)
    out: Bool = (prio < priority) & ~terminating & preemptable
    return out


_priority_of, _terminating_of = attrgetter("priority"), attrgetter("terminating")
_preemptable_of, _started_of = attrgetter("preemptable"), attrgetter("started")


def revived(demand: GangDemand, snap: Snapshot, refilter: Refilter) -> GangDemand | None:
    """The demand with every lower-priority, not yet terminating pod gone, when every class
    then has a node and the gang fits (else None): no eviction can help a gang this does not
    help. The filters' run is the attempt's one (`Refilter.without_lower`)."""
    got = refilter.without_lower(snap, demand.pods, demand.priority)
    if got is None:
        return None
    best = got.demand
    if not all(c.mask.any() for c in best.classes):
        return None
    if select(best, got.free, snap.index) is None:
        return None
    return best


def kube_rank(
    victims: Sequence[int],
    snap: Snapshot,
    arrays: PodArrays,
    pod_budgets: Mapping[int, tuple[int, ...]],
    allowed: Sequence[int],
) -> Rank:
    """kube-scheduler's pickOneNodeForPreemption order of a victim set (indexes into `arrays`,
    the snapshot's pod arrays `pod_budgets` was built on; smaller is better)."""
    hits = Counter(b for i in victims for b in pod_budgets.get(i, ()))
    prios = [int(arrays.priority[i]) for i in victims]
    top = max(prios, default=NO_VICTIM)
    starts = [_started(snap.pods[arrays.keys[i]]) for i in victims if int(arrays.priority[i]) == top]
    earliest = min(starts, default=float("inf"))
    shifted = sum(p + PRIORITY_SHIFT for p in prios)
    return (violations(hits, allowed), top, shifted, len(prios), -earliest)


def plan_rank(plan: PreemptionPlan, snap: Snapshot, budgets: Sequence[Budget]) -> Rank:
    """kube's rank of a plan's victims (`kube_rank`), for plans made for different candidate
    domains of one gang (the values of a bare-label key) on the same snapshot."""
    arrays = snap.arrays()
    victims = [arrays.position[v.pod] for v in plan.victims]
    known = snap.budget_hits if snap.budget_hits is not None else {}
    pod_budgets = _budgets_of(snap, arrays, victims, [known.get(v.pod) for v in plan.victims], budgets)
    return kube_rank(victims, snap, arrays, pod_budgets, [b.allowed for b in budgets])


def _floor(snap: Snapshot, arrays: PodArrays, pods: Bool) -> Rank | None:
    """The best rank any plan could have: one victim of the lowest priority among `pods`, no
    budget broken, the latest start among those pods (None when there are none)."""
    if not pods.any():
        return None
    least = int(arrays.priority[pods].min())
    lowest = np.flatnonzero(pods & (arrays.priority == least)).tolist()
    # In passes, not a loop body per pod: on a big cluster every lower pod may be of one priority.
    starts = list(map(_started_of, map(snap.pods.__getitem__, map(arrays.keys.__getitem__, lowest))))
    latest = float("inf") if None in starts else max(starts)  # None: not started (`_started`)
    return (0, least, least + PRIORITY_SHIFT, 1, -latest)


def _started(pod: BoundPod) -> float:
    # kube counts a pod with no start time as started now: later than any recorded start.
    return pod.started if pod.started is not None else float("inf")


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
    """Every place's greedy incumbent first (until kube's dry run would have enough
    candidates, or one that no place can beat), then the exact search in each place that may
    still beat the best plan, cheapest incumbent first: a search the attempt's budget cuts
    short keeps the best incumbent of them all, not the first place's."""
    arrays = snap.arrays()
    places: list[_Place] = []
    best = _Best(floor=_floor(snap, arrays, found.reach))
    cut = False
    place_price = place_steps(snap.index.n_nodes)
    wanted = candidates_wanted(snap.index.n_nodes)
    for where, opt_leftover in found.places:
        if best.plans >= wanted or best.unbeatable:
            break  # kube compares this many candidates, not every node; or none can do better
        if not limits.budget.pay(place_price):
            cut = True  # the best plan so far (not proven the cheapest), or none
            break
        prob = build_problem(where, snap, arrays, found.eligible, found.pod_budgets, found.reach)
        if not prob.units or not best.may_beat(prob):
            continue
        greedy = Search(prob, demand, free, snap, found.allowed, replace(limits, nodes=0)).run()
        place = _Place(where, opt_leftover, prob, greedy)
        places.append(place)
        best.weigh(place, demand, snap, free, found)
    for place in sorted(places, key=_incumbent_order):
        if limits.nodes <= 0 or not best.may_beat(place.prob):
            continue
        if best.unbeatable and place is not best.place:
            continue  # none can beat the best: only its own search is left, to prove it
        if not limits.budget.pay(place_price):
            cut = True
            break
        search = Search(place.prob, demand, free, snap, found.allowed, replace(limits, bound=best.cost))
        place.found = search.run(incumbent=place.found)
        best.weigh(place, demand, snap, free, found)
    top = best.place
    if top is None or top.found.chosen is None:
        return None
    # Proven only when nothing was left undone: no place skipped, no search cut short.
    optimal = not (cut or limits.budget.exhausted) and limits.nodes > 0 and not top.found.exhausted
    return _Choice(top.where, pods_of(top.prob, top.found.chosen), optimal, len(places))


@dataclass
class _Best:
    """The best plan of the places weighed so far, by kube's order (`_place_key`), and the
    cheapest cost any of them reached (the search's bound: no plan above it can win)."""

    floor: Rank | None
    """The best rank any plan could have (`_floor`): a place reaching it ends the search."""
    place: _Place | None = None
    cost: Cost | None = None
    plans: int = 0
    """Places with a plan (kube's dry run stops at `candidates_wanted` of them)."""

    @property
    def unbeatable(self) -> bool:
        return self.place is not None and self.place.key is not None and self.place.key[0] == self.floor

    def may_beat(self, prob: Problem) -> bool:
        """Could a plan in `prob`'s place tie the best on kube's first keys (its cheapest
        conceivable plan: one victim of the lowest priority it holds, no budget broken)?"""
        return self.cost is None or (0, min(u.priority for u in prob.units), 1) <= self.cost

    def weigh(self, place: _Place, demand: GangDemand, snap: Snapshot, free: I64, found: Candidates) -> None:
        """Key `place` by its plan so far and keep it if it is the best."""
        got = place.found
        had = place.key is not None
        if got.chosen is None or got.cost is None:
            place.key = None
            return
        place.key = _place_key(
            place.prob, got.chosen, place.opt_leftover, demand, snap, free=free, found=found
        )
        self.plans += not had
        self.cost = got.cost if self.cost is None else min(self.cost, got.cost)
        if self.place is None or self.place.key is None or place.key < self.place.key or self.place is place:
            self.place = place


def _incumbent_order(place: _Place) -> tuple[int, PlanKey | tuple[()]]:
    """Places with an incumbent first, cheapest first; then the others in their own order."""
    return (0, place.key) if place.key is not None else (1, ())


def _place_key(
    prob: Problem,
    chosen: Sequence[int],
    opt_leftover: int,
    demand: GangDemand,
    snap: Snapshot,
    *,
    free: I64,
    found: Candidates,
) -> PlanKey:
    """kube's rank of the place's victims, then binpack (slots left over with every eligible
    pod gone, then after the plan, which a lone pod's candidate node skips: kube's next key is
    the node's order), then name."""
    index, arrays = snap.index, snap.arrays()
    after_plan = 0
    if not (prob.where.kind == "node" and demand.n == 1):
        after = free.copy()
        apply_units(after, prob, chosen, arrays, +1)
        after_plan = _leftover(prob.where, demand, after, index)
    return (
        kube_rank(pods_of(prob, chosen), snap, arrays, found.pod_budgets, found.allowed),
        opt_leftover,
        after_plan,
        natural_key(prob.where.label(index)),
    )


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


def _node_places(demand: GangDemand, index: ClusterIndex, optimistic: I64) -> list[tuple[Where, int]]:
    """Every node that could hold the demand with every eligible pod gone, fewest leftover
    slots first, then name (kube's dry run asks each node)."""
    offers = evaluate(optimistic, demand, index)
    leftover = offers.raw_slots - demand.n if demand.kind == "uniform" else offers.node_offer - demand.n
    out = [(Where("node", int(v)), int(leftover[v])) for v in np.flatnonzero(offers.node_fit)]
    out.sort(key=lambda wl: (wl[1], natural_key(wl[0].label(index))))
    return out


def _pod_budgets(
    snap: Snapshot, arrays: PodArrays, eligible: Bool, budgets: Sequence[Budget]
) -> Mapping[int, tuple[int, ...]]:
    """Pod index -> indexes of the budgets covering it, for the pods of `eligible` some budget
    covers."""
    if not budgets:
        return {}
    # Coverage kept by the caller is read off the arrays (`cover`, patched with them), not
    # recomputed: only pods it does not know are looked at one by one.
    pods = np.flatnonzero(eligible & (arrays.cover != NOT_COVERED))
    codes = arrays.cover[pods]
    unknown = codes == NOT_KNOWN
    afresh = _budgets_of(snap, arrays, pods[unknown].tolist(), [None] * int(unknown.sum()), budgets)
    return _Covered(arrays.cover, eligible, _code_budgets(arrays, codes[~unknown], budgets), afresh)


class _Covered(Mapping[int, tuple[int, ...]]):
    """`_pod_budgets`' answer, read off the pods' coverage codes when asked rather than a dict
    over every covered pod: a pod of `eligible` whose code names a budget, or one matched
    afresh (`afresh`, the pods whose coverage the caller does not know)."""

    def __init__(
        self,
        cover: I64,
        eligible: Bool,
        by_code: Mapping[int, tuple[int, ...]],
        afresh: Mapping[int, tuple[int, ...]],
    ) -> None:
        self._cover, self._eligible, self._by_code, self._afresh = cover, eligible, by_code, afresh

    def get(self, i: int, default: tuple[int, ...] | None = None) -> tuple[int, ...] | None:  # type: ignore[override]
        got = self._afresh.get(i)
        if got is None and self._eligible[i]:
            got = self._by_code.get(int(self._cover[i]))
        return got if got is not None else default

    def __getitem__(self, i: int) -> tuple[int, ...]:
        got = self.get(i)
        if got is None:
            raise KeyError(i)
        return got

    def mask(self) -> Bool:
        """The pods some budget covers."""
        hit = np.zeros(max(self._by_code, default=-1) + 1, dtype=np.bool_)
        hit[list(self._by_code)] = True
        out: Bool = self._eligible & (self._cover < len(hit))
        out[out] = hit[self._cover[out]]
        out[list(self._afresh)] = True
        return out

    def __iter__(self) -> Iterator[int]:
        return iter(np.flatnonzero(self.mask()).tolist())

    def __len__(self) -> int:
        return int(self.mask().sum())


def _code_budgets(arrays: PodArrays, codes: I64, budgets: Sequence[Budget]) -> dict[int, tuple[int, ...]]:
    """Each distinct coverage code among `codes` -> indexes of its budgets (mapped once, not
    per pod); codes of no budget in `budgets` are left out."""
    pos = {b.key: j for j, b in enumerate(budgets)}
    out: dict[int, tuple[int, ...]] = {}
    for c in np.flatnonzero(np.bincount(codes)).tolist():
        hits = tuple(sorted(pos[k] for k in arrays.cover_table[c] or () if k in pos))
        if hits:
            out[c] = hits
    return out


def _budgets_of(
    snap: Snapshot,
    arrays: PodArrays,
    pods: Sequence[int],
    names: Sequence[tuple[str, ...] | None],
    budgets: Sequence[Budget],
) -> dict[int, tuple[int, ...]]:
    """`_pod_budgets` for the pods at these indexes, given the keys of the budgets each
    covers as the caller keeps them (`names[k]` for `pods[k]`; None: matched afresh)."""
    out: dict[int, tuple[int, ...]] = {}
    pos = {b.key: j for j, b in enumerate(budgets)}
    mapped: dict[tuple[str, ...], tuple[int, ...]] = {}
    for i, got in zip(pods, names, strict=True):
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


# --- the filters run again on the state with victims removed ------------------------------------


@dataclass(frozen=True)
class _Trial:
    """One place's victims after kube's reprieve, and where the gang then goes."""

    key: PlanKey
    where: Where
    victims: list[int]
    placement: Placement


def _plan_refiltered(
    demand: GangDemand,
    best_case: GangDemand,
    snap: Snapshot,
    budgets: Sequence[Budget],
    *,
    refilter: Refilter,
    attempt_budget: AttemptBudget,
    scheduler: str,
) -> PreemptionPlan | None:
    """kube's dry run over the places the gang's constraint allows: in each, SelectVictimsOnNode
    (`_reprieve`), then the best by kube's order (`kube_rank`), then binpack and name."""
    arrays = snap.arrays()
    eligible = eligible_victims(snap, arrays, demand.priority)
    pod_budgets = _pod_budgets(snap, arrays, eligible, budgets)
    allowed = [b.allowed for b in budgets]
    if (
        attempt_budget.spent + 2 * refilter_steps(snap.index.n_nodes, len(snap.with_terms))
        > attempt_budget.steps
    ):
        return None  # not one place affordable: the search by room takes the budget left
    # Room with every eligible pod gone, summed rather than evicted (as `_candidates` does).
    optimistic = snap.free(demand.key, demand.priority)
    np.add.at(optimistic, arrays.node[eligible], arrays.req[eligible])
    places = _candidate_places(best_case, snap.index, optimistic)
    if demand.n == 1 and [w.kind for w, _ in places] == ["cluster"]:
        places = _node_places(best_case, snap.index, optimistic)  # a lone pod goes on one node
    trials: list[_Trial] = []
    cut = False
    floor = _floor(snap, arrays, eligible)
    ask = _Asking(demand, snap, arrays, eligible, pod_budgets, allowed, refilter, attempt_budget)
    for where, opt_leftover in places[:REPRIEVE_PLACES]:
        # A place the budget cannot pay for is not tried, and the budget is left as it is:
        # the search by room that follows (`plan_preemption`) still has what is left.
        if ask.runs[0] >= REFILTER_RUNS or attempt_budget.spent + 2 * ask.price > attempt_budget.steps:
            cut = True
            break
        if not attempt_budget.pay(2 * ask.price):
            cut = True
            break
        got = _reprieve(where, ask)
        if got is not None:
            victims, placement = got
            rank = kube_rank(victims, snap, arrays, pod_budgets, allowed)
            key: PlanKey = (rank, opt_leftover, 0, natural_key(where.label(snap.index)))
            trials.append(_Trial(key, where, victims, placement))
            if rank == floor:
                break  # the best rank any place could have: none can do better
    if not trials:
        return None
    best = min(trials, key=lambda t: t.key)
    index = snap.index
    # The trials took pods out and put them back: the snapshot's arrays may be in another order.
    now = snap.arrays().position
    victims = [now[arrays.keys[i]] for i in best.victims]
    return PreemptionPlan(
        gang=demand.key,
        domain=best.where.label(index),
        tier=best.where.tier(index),
        victims=_victims(demand, snap, victims, scheduler),
        nominated=tuple(
            (demand.pods[pos].key, index.node_names[node]) for pos, node in best.placement.assignments
        ),
        cost=victim_cost(best.victims, arrays, pod_budgets, allowed),
        optimal=not cut and len(places) <= REPRIEVE_PLACES,
        domains_searched=len(trials),
    )


@dataclass(frozen=True)
class _Asking:
    """What every place's reprieve reads: the gang, the snapshot and its pod arrays, the pods
    that may go, the budgets covering them, and the filters to run again."""

    demand: GangDemand
    snap: Snapshot
    arrays: PodArrays
    eligible: Bool
    pod_budgets: Mapping[int, tuple[int, ...]]
    allowed: Sequence[int]
    refilter: Refilter
    budget: AttemptBudget
    runs: list[int] = field(default_factory=lambda: [0])
    """Runs of the filters made so far (one counter for the whole plan)."""

    last: list[GangDemand | None] = field(default_factory=lambda: [None])
    """The filters' answer on the state the reprieve keeps (their last run that fit)."""

    @property
    def price(self) -> int:
        """Steps one run of the filters costs (`refilter_steps`)."""
        return refilter_steps(self.snap.index.n_nodes, len(self.snap.with_terms))

    def fits(self, where: Where) -> Placement | None:
        """Run the filters on the snapshot as it stands, then place the gang inside `where`."""
        self.runs[0] += 1
        now = self.refilter(self.snap, self.demand.pods)
        if now is None or not all(c.mask.any() for c in now.classes):
            return None
        placed = _nominate(where, now, self.snap.free(self.demand.key, self.demand.priority), self.snap.index)
        if placed is not None:
            # The caller keeps this state; on a failure it undoes the change, and the filters'
            # answer is the one before it.
            self.last[0] = now
        return placed

    def fits_by_room(self, where: Where) -> Placement | None:
        """The filters' last answer still holds (what changed reads no filter): room alone."""
        last = self.last[0]
        if last is None or not all(c.mask.any() for c in last.classes):
            return None
        return _nominate(where, last, self.snap.free(self.demand.key, self.demand.priority), self.snap.index)

    def reads(self, unit: tuple[int, ...]) -> bool:
        """Could putting `unit` back change a filter's answer, not only the room? When one of
        its pods has terms, or the gang has pod (anti-)affinity or spread (which count pods)."""
        if self.counts_pods:
            return True
        return any(self.snap.pods[self.arrays.keys[i]].terms is not None for i in unit)

    @property
    def counts_pods(self) -> bool:
        return any(
            t is not None and bool(t.affinity or t.anti_affinity or t.spread)
            for t in (PodTerms.of(self.demand.pods[c.pods[0]].pod) for c in self.demand.classes)
        )


def _reprieve(where: Where, ask: _Asking) -> tuple[list[int], Placement] | None:
    """kube's SelectVictimsOnNode for one place: every eligible unit of the place gone, the
    filters run again; if the gang fits, each unit is added back in kube's order and stays
    while the gang still fits. The victims and the placement, or None when the gang does not
    fit even with them all gone (or the place has too many units to try)."""
    snap, arrays = ask.snap, ask.arrays
    units = _units_in(where, snap, arrays, ask.eligible)
    if not units or len(units) > REPRIEVE_UNITS or ask.runs[0] + len(units) + 2 > REFILTER_RUNS:
        return None
    records = {arrays.keys[i]: snap.pods[arrays.keys[i]] for u in units for i in u}
    order = _reprieve_order(units, snap, arrays, ask.pod_budgets, ask.allowed)
    reads = [ask.reads(u) for u in order]
    with snap.trial():
        snap.evict_many([arrays.keys[i] for u in units for i in u])
        if ask.fits(where) is None:
            return None
        victims: list[int] = []
        for k, u in enumerate(order):
            if reads[k] and not ask.budget.pay(ask.price):
                # The budget is spent: the units not yet tried stay victims (the gang fit without them).
                victims.extend(i for rest in order[k:] for i in rest)
                break
            snap.bind(*(records[arrays.keys[i]] for i in u))
            back = ask.fits(where) if reads[k] else ask.fits_by_room(where)
            if back is None:
                for i in u:
                    snap.evict(arrays.keys[i])
                victims.extend(u)
        placement = ask.fits(where)
    if placement is None:  # the last check above passed on this very state
        return None
    return sorted(victims), placement


def _units_in(
    where: Where, snap: Snapshot, arrays: PodArrays, eligible: Bool, seeds: Bool | None = None
) -> list[tuple[int, ...]]:
    """What goes together from the place: a lone pod; a member of a gang that may lose any of
    its members (minimum 0: a Kubernetes PodGroup with `disruptionMode: single`) alone; else
    a whole gang of eligible members (with its members elsewhere); a gang with a member of
    higher priority cannot go. `seeds`: only the units with a member among these pods."""
    lo, hi = where.range(snap.index)
    start = eligible if seeds is None else eligible & seeds
    inside = np.flatnonzero(start & (arrays.node >= lo) & (arrays.node < hi)).tolist()
    pos = arrays.position
    seen: set[str] = set()
    out: list[tuple[int, ...]] = []
    for i in inside:
        gang = snap.pods[arrays.keys[i]].gang
        if snap.gang_min.get(gang, 1) == 0:
            out.append((i,))
            continue
        if gang in seen:
            continue
        seen.add(gang)
        members = [pos[k] for k in snap.gang_pods(gang) if not snap.pods[k].terminating]
        if len(members) <= 1:
            out.append((i,))
        elif all(bool(eligible[m]) for m in members):
            out.append(tuple(sorted(members)))
    return out


def _reprieve_order(
    units: Sequence[tuple[int, ...]],
    snap: Snapshot,
    arrays: PodArrays,
    pod_budgets: Mapping[int, tuple[int, ...]],
    allowed: Sequence[int],
) -> list[tuple[int, ...]]:
    """kube's order (`MoreImportantVictim`, pkg/scheduler/framework/preemption/util.go): the
    more important first: higher priority; at equal priority a group taken whole before a lone
    pod, the larger group first; then the earlier start, then name. Those the budgets cannot
    spare (counted in that order, as kube's FilterVictimsWithPDBViolation counts them) before
    the others."""

    def importance(u: tuple[int, ...]) -> tuple[int, int, float, NaturalKey]:
        prio = max(int(arrays.priority[i]) for i in u)
        start = min(_started(snap.pods[arrays.keys[i]]) for i in u)
        return (-prio, -len(u), start, natural_key(arrays.keys[u[0]]))

    left = list(allowed)
    violating: list[tuple[int, ...]] = []
    sparing: list[tuple[int, ...]] = []
    for u in sorted(units, key=importance):
        breaks = False
        for i in u:
            for b in pod_budgets.get(i, ()):
                left[b] -= 1
                breaks = breaks or left[b] < 0
        (violating if breaks else sparing).append(u)
    return [*violating, *sparing]
