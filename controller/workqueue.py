"""The work queue between watchers and reconcilers, with client-go's contract.

* Fair: keys come out in the order they went in.
* Stingy: a key waits in line at most once, and is never handed to two workers at once;
  adding a key while it is being processed only marks it dirty, and `done()` puts it back.
* Shared: any number of producers and consumers on one event loop.
* Clean shutdown: `shut_down()` stops new adds and wakes waiting workers once the line is
  empty; `shut_down_with_drain()` also waits for keys in progress.

Delays (`add_after`) sit on a heap ordered by ready time; re-adding a waiting key can only
make it ready sooner. `add_rate_limited` is `add_after` with the limiter's delay; the default
limiter takes the larger of a per-key exponential backoff (5 ms doubling to 1000 s, the one
`Backoff` rule of `controller.placer.backoff`) and a
global token bucket (10/s, burst 100). `forget()` resets a key's backoff after a success.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from controller.clock import Clock, MonotonicClock
from controller.placer.backoff import Backoff

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)

HEARTBEAT = 10.0
"""Longest a waiting worker sleeps without re-checking the delay heap (client-go's safety net)."""


class QueueShutDown(Exception):
    """The queue was shut down and its line is empty: the worker should exit."""


class RateLimiter(Protocol[K_contra]):
    """Decides how long a failing key waits before its next try."""

    def when(self, key: K_contra) -> float: ...

    def forget(self, key: K_contra) -> None: ...

    def num_requeues(self, key: K_contra) -> int: ...


class ItemExponentialFailureRateLimiter(Generic[K]):
    """base * 2**failures per key, capped at `max_delay` (a `Backoff` per key's failure count)."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        if base_delay <= 0 or max_delay < base_delay:
            raise ValueError(
                f"need 0 < base_delay <= max_delay, got base_delay={base_delay}, max_delay={max_delay}"
            )
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._backoff = Backoff(base_delay, max_delay)
        self._failures: dict[K, int] = {}

    def when(self, key: K) -> float:
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        return self._backoff.delay(failures)

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: K) -> int:
        return self._failures.get(key, 0)


class BucketRateLimiter(Generic[K]):
    """A global token bucket: `rate` tokens per second, at most `burst` saved up.

    Like Go's `rate.Limiter.Reserve().Delay()`: each call takes a token now, going into debt
    if none is left, and the debt is the delay.
    """

    def __init__(self, rate: float = 10.0, burst: int = 100, *, clock: Clock | None = None) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"need rate > 0 and burst >= 1, got rate={rate}, burst={burst}")
        self.rate = rate
        self.burst = burst
        self._clock = clock or MonotonicClock()
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, key: K) -> float:
        now = self._clock.now()
        if self._last is not None:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    def forget(self, key: K) -> None:
        pass  # the bucket is global; a key's success returns nothing to it

    def num_requeues(self, key: K) -> int:
        return 0


class MaxOfRateLimiter(Generic[K]):
    """The longest delay any of the limiters asks for; requeues counted by the largest."""

    def __init__(self, *limiters: RateLimiter[K]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters = limiters

    def when(self, key: K) -> float:
        return max(limiter.when(key) for limiter in self.limiters)

    def forget(self, key: K) -> None:
        for limiter in self.limiters:
            limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return max(limiter.num_requeues(key) for limiter in self.limiters)


def default_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter[K]:
    """client-go's DefaultControllerRateLimiter: max(5 ms..1000 s per key, 10/s burst 100)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(10.0, 100, clock=clock)
    )


class WorkQueue(Generic[K]):
    """Fair, stingy, delaying and rate-limited; see the module docstring for the contract."""

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock | None = None,  # None outside tests
        rate_limiter: RateLimiter[K] | None = None,
    ) -> None:
        self.name = name
        self._clock = clock or MonotonicClock()
        self._limiter: RateLimiter[K] = rate_limiter or default_rate_limiter(self._clock)
        self._line: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiting: dict[K, float] = {}  # key -> ready time of its live heap entry
        self._heap: list[tuple[float, int, K]] = []
        self._seq = itertools.count()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._shutting_down = False
        self._drain = False

    # --- the plain queue ---------------------------------------------------------------

    def add(self, key: K) -> None:
        """Queue `key` unless it is already waiting in line; a processed key is marked dirty."""
        if self._shutting_down:
            return
        self._waiting.pop(key, None)  # an immediate add supersedes a pending delay
        if key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return  # done() puts it back in line
        self._line.append(key)
        self._wake.set()

    async def get(self) -> K:
        """The next key, marked processing; raises QueueShutDown once shut down and empty."""
        while True:
            self._promote_ready()
            if self._line:
                key = self._line.popleft()
                self._dirty.discard(key)
                self._processing.add(key)
                self._idle.clear()
                return key
            if self._shutting_down:
                raise QueueShutDown(self.name)
            await self._wait(self._next_ready_in())

    def done(self, key: K) -> None:
        """The worker finished `key`; if it became dirty meanwhile, it goes back in line."""
        self._processing.discard(key)
        if key in self._dirty:
            self._line.append(key)
            self._wake.set()
        if not self._processing:
            self._idle.set()

    def __len__(self) -> int:
        """Keys waiting in line (not the delayed ones, not those in progress)."""
        return len(self._line)

    @property
    def delayed(self) -> int:
        return len(self._waiting)

    @property
    def processing(self) -> int:
        return len(self._processing)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    # --- delays ------------------------------------------------------------------------

    def add_after(self, key: K, delay: float) -> None:
        """Queue `key` after `delay` seconds; a key already waiting keeps the earlier time."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        ready = self._clock.now() + delay
        current = self._waiting.get(key)
        if current is not None and current <= ready:
            return
        self._waiting[key] = ready
        heapq.heappush(self._heap, (ready, next(self._seq), key))
        self._wake.set()  # a sleeping worker may need to wake sooner

    def _promote_ready(self) -> None:
        now = self._clock.now()
        while self._heap and self._heap[0][0] <= now:
            ready, _, key = heapq.heappop(self._heap)
            if self._waiting.get(key) == ready:  # else a stale entry superseded by a sooner one
                del self._waiting[key]
                self.add(key)

    def _next_ready_in(self) -> float | None:
        while self._heap and self._waiting.get(self._heap[0][2]) != self._heap[0][0]:
            heapq.heappop(self._heap)  # drop superseded entries
        if not self._heap:
            return None
        return max(0.0, self._heap[0][0] - self._clock.now())

    async def _wait(self, timeout: float | None) -> None:
        self._wake.clear()
        timeout = HEARTBEAT if timeout is None else min(timeout, HEARTBEAT)
        waker = asyncio.ensure_future(self._wake.wait())
        sleeper = asyncio.ensure_future(self._clock.sleep(timeout))
        try:
            await asyncio.wait({waker, sleeper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (waker, sleeper):
                if not t.done():
                    t.cancel()
            await asyncio.gather(waker, sleeper, return_exceptions=True)

    # --- rate limiting -----------------------------------------------------------------

    def add_rate_limited(self, key: K) -> float:
        """Queue `key` after the limiter's delay for it; returns that delay."""
        delay = self._limiter.when(key)
        self.add_after(key, delay)
        return delay

    def forget(self, key: K) -> None:
        """The key succeeded: reset its backoff."""
        self._limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return self._limiter.num_requeues(key)

    # --- shutdown ----------------------------------------------------------------------

    def shut_down(self) -> None:
        """Stop accepting keys; workers get QueueShutDown once the line is empty."""
        self._shutting_down = True
        self._waiting.clear()
        self._heap.clear()
        self._wake.set()

    async def shut_down_with_drain(self, timeout: float | None = None) -> bool:
        """Shut down, then wait until no key is in progress. False if `timeout` passed first."""
        self.shut_down()
        if not self._processing:
            return True
        try:
            async with asyncio.timeout(timeout):  # not wait_for: it can swallow a cancellation
                await self._idle.wait()
        except TimeoutError:
            return False
        return True
