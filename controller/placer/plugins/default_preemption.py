"""DefaultPreemption: when nothing fits, evict lower-priority pods to make room (kube-scheduler's
PostFilter plugin of the same name, at the level of whole jobs, as Koordinator's and Volcano's
gang preemption do; the planner is `controller.placer.preempt`).

* A gang whose policy is `Never` evicts nothing (`Unschedulable`).
* A gang that would not fit even with every lower-priority, not yet terminating pod gone
  cannot be helped (`Unresolvable`).
* Otherwise the cheapest plan (budgets broken, then the highest victim priority, then the
  number of victims) inside one place the gang's constraint allows; the gang then waits for its
  victims (`WaitingForVictims`), holding its nominated nodes. No plan, or none found within the
  attempt's step budget (`attempt_budget`), is `Unschedulable`.
* When the wall-clock guard, not the steps, stopped the search, the verdict says so (its plan,
  or its lack of one, then depends on the machine's load).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from controller.placer.attempt_budget import AttemptBudget
from controller.placer.budgets import Budget
from controller.placer.demand import GangDemand
from controller.placer.framework import I64, Code, PostFilterResult, Status
from controller.placer.preempt import plan_preemption
from controller.placer.select import select
from controller.placer.snapshot import Snapshot
from translations.gangs import Gang

NOT_ELIGIBLE_TERMINATING = "not eligible due to terminating pod on the nominated node."
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NO_VICTIMS = "no set of lower-priority pods whose eviction lets the whole gang fit."
NO_VICTIMS_IN_TIME = "no set of lower-priority pods found within the attempt's budget; tried again later."


class DefaultPreemption:
    name: ClassVar[str] = "DefaultPreemption"

    def post_filter(
        self,
        gang: Gang,
        demand: GangDemand,
        snap: Snapshot,
        free: I64,
        budgets: Sequence[Budget],
        attempt_budget: AttemptBudget,
    ) -> PostFilterResult:
        if gang.preemption_policy == "Never":
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (NOT_ELIGIBLE_NEVER,), self.name))
        if not fits_without_lower(demand, snap, free):
            return PostFilterResult(Status(Code.UNRESOLVABLE, (NO_VICTIMS,), self.name))
        plan = plan_preemption(
            demand,
            snap,
            free,
            budgets,
            scheduler=gang.scheduler_name or "topobridge",
            attempt_budget=attempt_budget,
        )
        guard = (f"{attempt_budget.why()}.",) if attempt_budget.guarded else ()
        if plan is None:
            why = NO_VICTIMS_IN_TIME if attempt_budget.exhausted else NO_VICTIMS
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (why, *guard), self.name))
        return PostFilterResult(
            Status(Code.WAITING_FOR_VICTIMS, (NOT_ELIGIBLE_TERMINATING, *guard), self.name), plan
        )


def fits_without_lower(demand: GangDemand, snap: Snapshot, free: I64) -> bool:
    """Would the gang fit if every lower-priority, not yet terminating pod were gone?"""
    arrays = snap.arrays()
    lower = (arrays.priority < demand.priority) & ~arrays.terminating
    if not lower.any():
        return False
    optimistic = free.copy()
    np.add.at(optimistic, arrays.node[lower], arrays.req[lower])
    # The same selection as a real attempt: exact for the uniform and leader shapes.
    return select(demand, optimistic, snap.index) is not None
