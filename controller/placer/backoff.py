"""Exponential backoff: the one rule every retry in topobridge follows.

A delay is `initial * factor ** (failures - 1)` capped at `maximum`, optionally scaled down by
a random factor in `[1 - jitter, 1]` (full jitter spreads retries of many clients apart). The
exponent is capped before it is computed, so no count of failures overflows a float. Pure: the
caller counts the failures and, for jitter, passes its own random source.

Who uses which (the values are kube-scheduler's and client-go's where they have one):
* `GANG_BIND`: a gang whose bind failed (0.5 s doubling, at most a minute);
* `GANG_ERROR`: a gang whose attempt raised (kube-scheduler's pod backoff, 1 s to 10 s);
* `GANG_TIMEOUT`: a gang whose scheduleTimeout fired (the same 1 s to 10 s);
* the informers' list/watch retries (`controller.informer.LIST_WATCH`), the work queue's
  per-key limiter (`controller.workqueue.ItemExponentialFailureRateLimiter`), the binder's
  API retries and roll-back deletes (`controller.runtime.binder.BIND_RETRY`, `ROLLBACK_RETRY`)
  and the preemptor's (`controller.runtime.preemptor.VICTIM_RETRY`) build their own `Backoff`
  with their own values.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

_MAX_EXPONENT = 64
"""2**64 times any initial delay is past every cap."""


@dataclass(frozen=True, slots=True)
class Backoff:
    initial: float
    """Seconds before the first retry."""
    maximum: float
    """No delay is longer."""
    factor: float = 2.0
    jitter: float = 0.0
    """Each delay is scaled by a random factor in [1 - jitter, 1] (0: none)."""

    def __post_init__(self) -> None:
        if not (0 < self.initial <= self.maximum) or self.factor < 1 or not 0 <= self.jitter <= 1:
            raise ValueError(f"backoff needs 0 < initial <= maximum, factor >= 1, 0 <= jitter <= 1: {self}")

    def delay(self, failures: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after `failures` failures in a row (1 for the first)."""
        exponent = min(max(failures - 1, 0), _MAX_EXPONENT)
        base = min(self.maximum, self.initial * self.factor**exponent)
        if self.jitter and rng is not None:
            base *= 1 - self.jitter * rng.random()
        return base


GANG_BIND = Backoff(0.5, 60.0)
GANG_ERROR = Backoff(1.0, 10.0)
GANG_TIMEOUT = Backoff(1.0, 10.0)
