"""What one gang's attempt may spend: a budget counted in search steps, and a wall-clock guard.

Most of an attempt is vectorised and bounded by the cluster's size; the exact preemption
search is not, and a gang whose members differ in shape, over domains full of lower-priority
pods, can search for minutes. Each attempt gets an `AttemptBudget` (`CycleOptions.budget()`,
`--attempt-budget STEPS`): the search pays for its work in steps, and once they are spent it
stops and takes the best plan found so far (every place's greedy incumbent comes first), or,
with none, says so in its verdict; the gang is tried again in a later cycle.

A step is a unit of work, not of time, so where a search stops is a function of its input:
`simulate`, `run`, `explain` and the ui's what-if stop at the same step whatever the load, and
reach the same plan. The prices (`place_steps`, `NODE_STEPS`, `search.fit_steps`) are set so
that a step costs about the same CPU time whatever the gang's shape (30 to 55 us here): a fit
check of the uniform shape is one step, of the leader shape two, of any other three per member;
a node of the branch and bound two more for its bound. The default budget keeps the slowest
attempt known (`benchmarks/attempt_deadline.py`) under 0.1 s of CPU, where it finds the plan the
unbounded search proves cheapest after about 15 s.

The wall clock is only a last guard (`guard`, `--attempt-deadline`, far above what the steps
cost): were the machine so slow that it fires, the search stops there, and that is never
silent: `guarded` is set, the verdict says so (`DefaultPreemption`), and the runtime counts it
(`topobridge_attempt_guard_fired_total`), logs it and records an Event on the gang. The clock
is read at every payment (a read costs far less than a step) and injected, so tests can fire
the guard at a chosen step.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

DEFAULT_ATTEMPT_STEPS = 2_000
"""Steps one gang's attempt may spend searching for a preemption plan, by default."""
DEFAULT_GUARD_SECONDS = 2.0
"""The wall-clock guard, by default: several times what the default steps cost."""
PLACE_STEPS = 2
"""What taking up one candidate place costs (its victims gathered, its search set up), plus a
step per `NODES_PER_STEP` nodes of the cluster (its plan's leftover is weighed cluster-wide)."""
NODES_PER_STEP = 256
NODE_STEPS = 2
"""What one node of the branch-and-bound search costs besides its fit checks (the bound)."""


@dataclass
class AttemptBudget:
    """Steps left for one attempt (each attempt a fresh one: what is spent is per attempt)."""

    steps: float = DEFAULT_ATTEMPT_STEPS
    """Steps it may spend (`math.inf`: no limit)."""
    guard: float = DEFAULT_GUARD_SECONDS
    """Seconds after its start past which the guard stops it (`math.inf`: no guard)."""
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    spent: float = 0
    started: float = field(default=math.nan)
    """When it was made, on `clock`'s scale."""
    cut: bool = False
    """True once a payment found the steps spent (the search was cut short)."""
    guarded: bool = False
    """True once a payment found the guard past (the clock, not the steps, cut it short)."""

    def __post_init__(self) -> None:
        if math.isnan(self.started):
            self.started = self.clock()

    def pay(self, steps: float) -> bool:
        """Spend `steps` on work about to be done; False, and from then on, once the budget or
        the guard is spent (the work is then not done)."""
        if self.exhausted:
            return False
        if self.spent + steps > self.steps:
            self.cut = True
            return False
        self.spent += steps
        if self.guard != math.inf and self.clock() - self.started >= self.guard:
            self.guarded = True
            return False
        return True

    @property
    def exhausted(self) -> bool:
        return self.cut or self.guarded

    def why(self) -> str:
        """What stopped the search, for a verdict ("" when nothing did)."""
        if self.guarded:
            return (
                f"the attempt's wall-clock guard ({self.guard:g}s) stopped the search after "
                f"{self.spent:g} of {self.steps:g} steps: this plan depends on the machine's load"
            )
        if self.cut:
            return f"the search used the attempt's budget of {self.steps:g} steps"
        return ""


def place_steps(n_nodes: int) -> int:
    """What taking up one candidate place costs on a cluster of `n_nodes` nodes."""
    return PLACE_STEPS + n_nodes // NODES_PER_STEP


def unbounded() -> AttemptBudget:
    """No step limit and no guard (each call a fresh one)."""
    return AttemptBudget(math.inf, math.inf)
