"""Gang timeouts: when a waiting gang gives up its reservations and re-queues.

Koordinator's and scheduler-plugins' rule: a gang that has waited `scheduleTimeoutSeconds` (or
Koordinator's `waiting-time`, default 300 s) without starting releases what it holds (the
members reserved in the cache, its nominations), its PodGroup and an Event say so, and it is
tried again after a backoff. Pure: the caller passes the clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.placer.backoff import GANG_TIMEOUT
from translations.gangs import Gang, gang_name

TIMEOUT_REASON = "GangTimeout"


@dataclass(frozen=True)
class Expiry:
    """A gang's timeout fired: what to release and say, and when to try it again."""

    gang: str
    waited: float
    timeout: float
    retry_after: float

    @property
    def message(self) -> str:
        return (
            f"gang {gang_name(self.gang)} waited {self.waited:.0f}s without starting (timeout {self.timeout:.0f}s): "
            f"its reservations and nominations are released; it is tried again in {self.retry_after:.0f}s"
        )


def expired(gang: Gang, *, waiting_since: float | None, now: float) -> bool:
    """True when `gang` has waited its timeout since `waiting_since` and has not started (no
    member bound). A gang with no timeout, or not waiting, never expires."""
    if gang.schedule_timeout is None or waiting_since is None or gang.bound:
        return False
    return now - waiting_since >= gang.schedule_timeout


def expiry(gang: Gang, *, waiting_since: float | None, now: float, failures: int = 1) -> Expiry | None:
    """The expiry of `gang` at `now`, or None while it may keep waiting."""
    if not expired(gang, waiting_since=waiting_since, now=now):
        return None
    assert gang.schedule_timeout is not None and waiting_since is not None
    return Expiry(gang.key, now - waiting_since, gang.schedule_timeout, GANG_TIMEOUT.delay(failures))
