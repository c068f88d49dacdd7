"""Time as the controller sees it: a monotonic `now()` and an awaitable `sleep()`.

Everything that waits (the work queue's delays, the rate limiter, leader election's expiry
judgement, informer backoff) takes a `Clock`, so unit tests drive time by hand with
`FakeClock` instead of sleeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from typing import Protocol


class Clock(Protocol):
    """Monotonic seconds and a sleep measured on the same scale."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class MonotonicClock:
    """The event loop's monotonic clock."""

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class FakeClock:
    """A clock that moves only when a test calls `advance()`; sleepers wake in deadline order."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._seq), fut))
        await fut

    @property
    def sleepers(self) -> int:
        """Sleepers still waiting (cancelled ones excluded)."""
        return sum(1 for _, _, f in self._sleepers if not f.done())

    async def advance(self, seconds: float) -> None:
        """Move time forward, waking every sleeper whose deadline passed, then let them run."""
        target = self._now + seconds
        while self._sleepers and self._sleepers[0][0] <= target:
            deadline, _, fut = heapq.heappop(self._sleepers)
            self._now = max(self._now, deadline)
            if not fut.done():
                fut.set_result(None)
                await _settle()
        self._now = target
        await _settle()


async def _settle(rounds: int = 5) -> None:
    # A woken coroutine may need a few loop iterations to reach its next await point.
    for _ in range(rounds):
        await asyncio.sleep(0)
