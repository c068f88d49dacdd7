"""Drive one reconciler: a work queue, a few workers, three outcomes.

A reconciler is level-based: given a key it reads the informers' caches, compares with
what should be, and writes the difference. It returns `Done()` or `Requeue(after=N)`; an
exception is a failure retried with the queue's per-key backoff. Bad user input is not a
failure: reconcilers report it on the object and return `Done()`; the object's next change
brings the key back.

Each call gets a structlog logger bound to its kind and key, dotted event names
(`reconcile.requeued`, `reconcile.failed`), and metrics (count, latency, errors per kind).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import ClassVar, Protocol

import structlog

from controller import metrics
from controller.aiotasks import spawn
from controller.clock import Clock
from controller.errors import is_retryable
from controller.workqueue import QueueShutDown, RateLimiter, WorkQueue

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Done:
    """Converged (or reported a user error); nothing to do until something changes."""


@dataclass(frozen=True, slots=True)
class Requeue:
    """Look again after `after` seconds (waiting for something outside our control)."""

    after: float


Outcome = Done | Requeue


class Reconciler(Protocol):
    kind: ClassVar[str]

    async def reconcile(self, key: str) -> Outcome: ...


class Controller:
    """One reconciler's queue and workers."""

    def __init__(
        self,
        reconciler: Reconciler,
        *,
        workers: int = 2,
        clock: Clock | None = None,  # None outside tests
        rate_limiter: RateLimiter[str] | None = None,
    ) -> None:
        self.reconciler = reconciler
        self.kind = reconciler.kind
        self.workers = workers
        self.queue: WorkQueue[str] = WorkQueue(name=self.kind, clock=clock, rate_limiter=rate_limiter)
        metrics.track_queue(self.kind, lambda: len(self.queue), lambda: self.queue.delayed)

    def enqueue(self, key: str) -> None:
        self.queue.add(key)

    async def run(self, *, grace: float = 10.0) -> None:
        """Run the workers until cancelled; then stop handing out keys and give the keys in
        progress `grace` seconds to finish (a reconcile is a short, idempotent sequence of
        writes: abandoning one midway is safe, finishing it is kinder)."""
        tasks = [spawn(f"worker:{self.kind}:{i}", self._worker(), forever=False) for i in range(self.workers)]
        try:
            await asyncio.wait(tasks)  # waiting (unlike gather) leaves the workers running on cancel
        finally:
            self.queue.shut_down()
            _, pending = await asyncio.wait(tasks, timeout=grace)
            if pending:
                log.warning("reconcile.drain_timeout", kind=self.kind, grace=grace)
                for t in pending:
                    t.cancel()
                await asyncio.gather(*pending, return_exceptions=True)

    async def _worker(self) -> None:
        while True:
            try:
                key = await self.queue.get()
            except QueueShutDown:
                return
            if self.queue.shutting_down:  # stopping: leave queued keys to the next leader's resync
                self.queue.done(key)
                return
            try:
                await self.process(key)
            finally:
                self.queue.done(key)

    async def process(self, key: str) -> None:
        """Reconcile one key and apply the outcome to the queue."""
        klog = log.bind(kind=self.kind, key=key)
        started = time.perf_counter()
        try:
            outcome = await self.reconciler.reconcile(key)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            metrics.RECONCILES.labels(self.kind, "error").inc()
            metrics.RECONCILE_ERRORS.labels(self.kind, type(exc).__name__).inc()
            delay = self.queue.add_rate_limited(key)
            if is_retryable(exc):
                klog.info(
                    "reconcile.retrying",
                    error=str(exc),
                    retry_in=round(delay, 3),
                    attempts=self.queue.num_requeues(key),
                )
            else:
                klog.exception(
                    "reconcile.failed", retry_in=round(delay, 3), attempts=self.queue.num_requeues(key)
                )
            return
        finally:
            metrics.RECONCILE_LATENCY.labels(self.kind).observe(time.perf_counter() - started)
        self.queue.forget(key)
        if isinstance(outcome, Requeue):
            metrics.RECONCILES.labels(self.kind, "requeue").inc()
            self.queue.add_after(key, outcome.after)
            klog.debug("reconcile.requeued", after=outcome.after)
        else:
            metrics.RECONCILES.labels(self.kind, "done").inc()
            klog.debug("reconcile.done")
