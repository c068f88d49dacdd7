"""A time limit for one gang's attempt, read by the searches that could otherwise run long.

Most of an attempt is vectorised and bounded by the cluster's size; the exact preemption
search is bounded by steps, and a gang whose members differ in shape, over a domain full of
lower-priority pods, can take seconds of steps. The runner gives each attempt a `Deadline`
(`CycleOptions.attempt_deadline`, `--attempt-deadline`): past it, the search stops and the
attempt uses the best plan found so far (the search's greedy incumbent comes first), or, with
none, says so in its verdict; the gang is tried again in a later cycle. The event loop that
renews the Lease and answers `/healthz` is given back between gangs, so no gang holds it much
longer than its deadline.

The clock is injected, so tests can expire a deadline at a chosen step; `NEVER` never expires.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

DEFAULT_ATTEMPT_SECONDS = 0.3
"""One gang's attempt, preemption search included, by default."""
CHECK_EVERY = 64
"""Search steps between two looks at the clock (a look costs about as much as a step)."""


@dataclass
class Deadline:
    at: float
    """When it expires, on `clock`'s scale."""
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    hit: bool = False
    """True once some search saw it expired (the verdict then says the search was cut short)."""

    @classmethod
    def after(cls, seconds: float, clock: Callable[[], float] = time.monotonic) -> Deadline:
        return cls(clock() + seconds, clock)

    def expired(self) -> bool:
        if self.hit:
            return True
        if self.at != math.inf and self.clock() >= self.at:
            self.hit = True
        return self.hit


def never() -> Deadline:
    """A deadline that never expires (each call a fresh one: `hit` is per attempt)."""
    return Deadline(math.inf)
