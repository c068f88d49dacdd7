"""DefaultPreemption: when nothing fits, evict lower-priority pods to make room (kube-scheduler's
PostFilter plugin of the same name, at the level of whole jobs, as Koordinator's and Volcano's
gang preemption do; the planner is `controller.placer.preempt`).

* A gang whose policy is `Never` evicts nothing (`Unschedulable`).
* A gang that would not fit even with every lower-priority, not yet terminating pod gone
  cannot be helped (`Unresolvable`); that is decided with the filters run again on that state
  when they read bound pods (a pod's anti-affinity, ports or spread count may be what keeps
  the gang out). An elastic gang (minMember below its pending members) that cannot have room
  for all of them gets room for the most it can, at least minMember; the rest wait.
* Otherwise the cheapest plan (budgets broken, then the highest victim priority, then the
  number of victims) inside one place the gang's constraint allows (for a key at a bare node
  label, a plan per value of the label, each made on that value's nodes alone, and the one
  for the most members, then of kube's best rank, kept); the gang then waits for its
  victims (`WaitingForVictims`), holding its nominated nodes. No plan, or none found within the
  attempt's step budget (`attempt_budget`), is `Unschedulable`.
* A gang nominated by an earlier preemption whose victims still terminate on its nominated
  nodes waits for them (`victims_terminating`, kube's `PodEligibleToPreemptOthers`), asked
  before the gang is tried at all; without this plugin in the profile nothing waits.
* When the wall-clock guard, not the steps, stopped the search, the verdict says so (its plan,
  or its lack of one, then depends on the machine's load).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from controller.placer.attempt_budget import AttemptBudget
from controller.placer.budgets import Budget
from controller.placer.demand import GangDemand, sub_demand, within
from controller.placer.framework import I64, Code, PostFilterResult, Status
from controller.placer.offer import evaluate
from controller.placer.preempt import (
    BestCase,
    PreemptionPlan,
    PreemptionRoom,
    Rank,
    Refilter,
    candidates_wanted,
    plan_preemption,
    plan_rank,
    reads_bound_pods,
    revived,
)
from controller.placer.select import select
from controller.placer.snapshot import Snapshot
from controller.placer.tiers import PlacementGenerateError, label_domains
from translations.gangs import Gang, GangPod

NOT_ELIGIBLE_TERMINATING = "not eligible due to terminating pod on the nominated node."
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NO_VICTIMS = "no set of lower-priority pods whose eviction lets the whole gang fit."
NO_VICTIMS_IN_TIME = "no set of lower-priority pods found within the attempt's budget; tried again later."


class DefaultPreemption:
    name: ClassVar[str] = "DefaultPreemption"

    def victims_terminating(self, gang: Gang, snap: Snapshot) -> Status | None:
        """kube's `PodEligibleToPreemptOthers`: a gang whose nominated nodes still hold a
        lower-priority pod that is terminating waits for it (its own earlier victims) rather
        than being placed elsewhere or evicting again; None when no such pod is left."""
        nominated = {n.node for n in snap.nominations.values() if n.gang == gang.key}
        if not nominated:
            return None
        arrays = snap.arrays()  # kept in step with the pods: no walk over every bound pod
        nodes = np.fromiter(nominated, dtype=np.int64, count=len(nominated))
        lower = arrays.terminating & (arrays.priority < gang.priority)
        if not np.isin(arrays.node[lower], nodes).any():  # the few terminating pods' nodes
            return None
        return Status(Code.WAITING_FOR_VICTIMS, (NOT_ELIGIBLE_TERMINATING,), self.name)

    def post_filter(
        self,
        gang: Gang,
        demand: GangDemand,
        snap: Snapshot,
        free: I64,
        budgets: Sequence[Budget],
        attempt_budget: AttemptBudget,
        *,
        refilter: Refilter | None = None,
    ) -> PostFilterResult:
        if gang.preemption_policy == "Never":
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (NOT_ELIGIBLE_NEVER,), self.name))
        planned: list[tuple[int, PreemptionPlan]] = []
        helpable = False
        room = PreemptionRoom(snap, free)  # the room every step below asks about, summed once
        for place, narrowed, narrowed_refilter in _places(gang, demand, snap, room, refilter):
            if len(planned) >= candidates_wanted(snap.index.n_nodes):
                break  # kube's dry run stops once it has this many candidates
            most = _most_members(gang, narrowed, snap, room, narrowed_refilter)
            if most is None:
                continue
            helpable = True
            wanted, best_case = most
            plan = plan_preemption(
                wanted,
                snap,
                room,
                budgets,
                scheduler=gang.scheduler_name or "topobridge",
                attempt_budget=attempt_budget,
                refilter=narrowed_refilter,
                best_case=best_case,
            )
            if plan is not None:
                planned.append((wanted.n, replace(plan, domain=place) if place else plan))
        if not helpable:
            return PostFilterResult(Status(Code.UNRESOLVABLE, (NO_VICTIMS,), self.name))
        guard = (f"{attempt_budget.why()}.",) if attempt_budget.guarded else ()
        if not planned:
            why = NO_VICTIMS_IN_TIME if attempt_budget.exhausted else NO_VICTIMS
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (why, *guard), self.name))
        # Most members first, then kube's rank of the victims, then the places' order.
        # (One plan needs no rank: kube's rank reads every victim's budgets and start time.)
        _, plan = planned[0] if len(planned) == 1 else min(planned, key=lambda e: _order(e, snap, budgets))
        return PostFilterResult(
            Status(Code.WAITING_FOR_VICTIMS, (NOT_ELIGIBLE_TERMINATING, *guard), self.name), plan
        )


def _order(entry: tuple[int, PreemptionPlan], snap: Snapshot, budgets: Sequence[Budget]) -> tuple[int, Rank]:
    return (-entry[0], plan_rank(entry[1], snap, budgets))


def _places(
    gang: Gang, demand: GangDemand, snap: Snapshot, room: PreemptionRoom, refilter: Refilter | None
) -> list[tuple[str, GangDemand, Refilter | None]]:
    """Where a plan may be made, each with the demand and the filters kept there: the gang's
    own demand (its constraint bounds the places preemption weighs); for a key at a bare node
    label, each value's nodes (`tiers.label_domains`, named `key=value`), none when the bound
    members pin no one value. Values are taken as `_by_room_without_lower` orders them."""
    c = demand.constraint
    if c is None or c.label_key is None:
        return [("", demand, refilter)]
    try:
        domains = label_domains(demand, snap.index)
    except PlacementGenerateError:
        return []
    return [
        (f"{c.label_key}={value}", within(demand, nodes), _kept(refilter, nodes))
        for value, nodes in _by_room_without_lower(gang, demand, snap, room, domains)
    ]


def _by_room_without_lower(
    gang: Gang, demand: GangDemand, snap: Snapshot, room: PreemptionRoom, domains: list[tuple[str, I64]]
) -> list[tuple[str, I64]]:
    """The values worth a plan, best first, when their room can be told by capacity (a uniform
    gang whose filters read no bound pod): by the slots each value's nodes offer with every
    lower-priority pod gone, those that hold the whole gang first, fewest left over first (the
    tightest, as places are weighed), then those that hold at least minMember, most first; a
    value that holds fewer is left out. Otherwise every value, in natural order."""
    if demand.kind != "uniform" or reads_bound_pods(demand, snap):
        return domains
    slots = evaluate(room.freed(demand.priority), demand, snap.index).slots
    need = max(gang.min_member - len(gang.bound), 1)
    offered = [int(slots[nodes].sum()) for _, nodes in domains]
    kept = [(r, d) for r, d in zip(offered, domains, strict=True) if r >= min(need, demand.n)]
    kept.sort(key=lambda rd: (0, rd[0] - demand.n) if rd[0] >= demand.n else (1, -rd[0]))
    return [d for _, d in kept]


def _kept(refilter: Refilter | None, nodes: I64) -> Refilter | None:
    """The attempt's filters, run again, with the demand they give kept to `nodes`."""
    return None if refilter is None else _Within(refilter, nodes)


@dataclass(frozen=True)
class _Within:
    """A refilter whose answers are kept to `nodes` (the attempt's runs, and what it keeps of
    them, shared by every place)."""

    refilter: Refilter
    nodes: I64

    def __call__(self, snap: Snapshot, pods: Sequence[GangPod]) -> GangDemand | None:
        got = self.refilter(snap, pods)
        return within(got, self.nodes) if got is not None else None

    def without_lower(self, snap: Snapshot, pods: Sequence[GangPod], priority: int) -> BestCase | None:
        got = self.refilter.without_lower(snap, pods, priority)
        return None if got is None else replace(got, demand=within(got.demand, self.nodes))


def _most_members(
    gang: Gang, demand: GangDemand, snap: Snapshot, room: PreemptionRoom, refilter: Refilter | None
) -> tuple[GangDemand, GangDemand | None] | None:
    """The pods to make room for: every pending member when evicting lower priorities can hold
    them all; for an elastic gang, else, the longest rank prefix of at least minMember that it
    can hold (kube's workload-aware preemption: as many members as room can be made for without
    touching a higher or equal priority; the rest wait). With it, the demand as the filters see
    it with every lower priority gone (None when they were not run again). None when not even
    minMember fits."""
    fits, best_case = room_without_lower(demand, snap, room, refilter)
    if fits:
        return demand, best_case
    required = max(gang.min_member - len(gang.bound), 1)
    if gang.all_or_nothing or required >= demand.n:
        return None
    best: tuple[GangDemand, GangDemand | None] | None = None
    lo, hi = required, demand.n - 1
    while lo <= hi:  # fewer members never fit worse: a binary search finds the most
        mid = (lo + hi) // 2
        part = sub_demand(demand, range(mid), snap.index)
        fits, best_case = room_without_lower(part, snap, room, refilter)
        if fits:
            best, lo = (part, best_case), mid + 1
        else:
            hi = mid - 1
    return best


def room_without_lower(
    demand: GangDemand, snap: Snapshot, room: PreemptionRoom, refilter: Refilter | None = None
) -> tuple[bool, GangDemand | None]:
    """Would the gang fit if every lower-priority, not yet terminating pod were gone? With the
    filters run again on that state when they read bound pods (and then the demand they gave
    there); by room alone otherwise."""
    if refilter is not None and reads_bound_pods(demand, snap):
        best_case = revived(demand, snap, refilter)
        return best_case is not None, best_case
    return fits_without_lower(demand, snap, room), None


def fits_without_lower(demand: GangDemand, snap: Snapshot, room: PreemptionRoom) -> bool:
    """Would the gang fit by room if every lower-priority, not yet terminating pod were gone?"""
    if not room.may_free(demand.priority):
        return False
    # The same selection as a real attempt: exact for the uniform and leader shapes.
    return select(demand, room.freed(demand.priority), snap.index) is not None
