"""DefaultPreemption: when nothing fits, evict lower-priority pods to make room (kube-scheduler's
PostFilter plugin of the same name, at the level of whole jobs, as Koordinator's and Volcano's
gang preemption do; the planner is `controller.placer.preempt`).

* A gang whose policy is `Never` evicts nothing (`Unschedulable`).
* A gang that would not fit even with every lower-priority, not yet terminating pod gone
  cannot be helped (`Unresolvable`); that is decided with the filters run again on that state
  when they read bound pods (a pod's anti-affinity, ports or spread count may be what keeps
  the gang out).
* Otherwise the cheapest plan (budgets broken, then the highest victim priority, then the
  number of victims) inside one place the gang's constraint allows; the gang then waits for its
  victims (`WaitingForVictims`), holding its nominated nodes. No plan, or none found before the
  attempt's deadline, is `Unschedulable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from controller.placer.budgets import Budget
from controller.placer.deadline import Deadline
from controller.placer.demand import GangDemand
from controller.placer.framework import I64, Code, PostFilterResult, Status
from controller.placer.preempt import Refilter, plan_preemption, reads_bound_pods, revived
from controller.placer.select import select
from controller.placer.snapshot import Snapshot
from translations.gangs import Gang

NOT_ELIGIBLE_TERMINATING = "not eligible due to terminating pod on the nominated node."
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NO_VICTIMS = "no set of lower-priority pods whose eviction lets the whole gang fit."
NO_VICTIMS_IN_TIME = "no set of lower-priority pods found within the attempt's deadline; tried again later."


class DefaultPreemption:
    name: ClassVar[str] = "DefaultPreemption"

    def post_filter(
        self,
        gang: Gang,
        demand: GangDemand,
        snap: Snapshot,
        free: I64,
        budgets: Sequence[Budget],
        deadline: Deadline,
        *,
        refilter: Refilter | None = None,
    ) -> PostFilterResult:
        if gang.preemption_policy == "Never":
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (NOT_ELIGIBLE_NEVER,), self.name))
        if not fits_without_lower(demand, snap, free, refilter):
            return PostFilterResult(Status(Code.UNRESOLVABLE, (NO_VICTIMS,), self.name))
        plan = plan_preemption(
            demand,
            snap,
            free,
            budgets,
            scheduler=gang.scheduler_name or "topobridge",
            deadline=deadline,
            refilter=refilter,
        )
        if plan is None:
            why = NO_VICTIMS_IN_TIME if deadline.hit else NO_VICTIMS
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (why,), self.name))
        return PostFilterResult(
            Status(Code.WAITING_FOR_VICTIMS, (NOT_ELIGIBLE_TERMINATING,), self.name), plan
        )


def fits_without_lower(
    demand: GangDemand, snap: Snapshot, free: I64, refilter: Refilter | None = None
) -> bool:
    """Would the gang fit if every lower-priority, not yet terminating pod were gone? With the
    filters run again on that state when they read bound pods; by room alone otherwise."""
    if refilter is not None and reads_bound_pods(demand, snap):
        return revived(demand, snap, refilter) is not None
    arrays = snap.arrays()
    lower = (arrays.priority < demand.priority) & ~arrays.terminating
    if not lower.any():
        return False
    optimistic = free.copy()
    np.add.at(optimistic, arrays.node[lower], arrays.req[lower])
    # The same selection as a real attempt: exact for the uniform and leader shapes.
    return select(demand, optimistic, snap.index) is not None
