"""Named, guarded root tasks and a graceful stop, as kopf runs its reactor.

Every long-lived loop (informers, workers, the elector, the webhook server) is a root task
created through `guarded()`: a failure is logged with the task's name and re-raised, and a
task that returns although it should run forever is reported. `run_roots` waits for the
first root to finish (or for the stop signal), cancels the rest, gives them `grace`
seconds to unwind, then re-raises the first failure. Signal handlers only resolve a future.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine, Mapping
from typing import Any

import structlog

log = structlog.get_logger(__name__)


async def guarded(name: str, coro: Coroutine[Any, Any, None], *, forever: bool = True) -> None:
    """Run `coro`; log a failure with the task name; warn if a forever-task returns."""
    try:
        await coro
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("task.failed", task=name)
        raise
    if forever:
        log.warning("task.exited_early", task=name)


def spawn(name: str, coro: Coroutine[Any, Any, None], *, forever: bool = True) -> asyncio.Task[None]:
    return asyncio.create_task(guarded(name, coro, forever=forever), name=name)


async def cancel_and_wait(tasks: set[asyncio.Task[Any]] | list[asyncio.Task[Any]], *, grace: float) -> None:
    """Cancel `tasks` and wait up to `grace` seconds for them to unwind; stragglers are logged."""
    pending = [t for t in tasks if not t.done()]
    for t in pending:
        t.cancel()
    if not pending:
        return
    _, still = await asyncio.wait(pending, timeout=grace)
    for t in still:
        log.warning("task.slow_to_stop", task=t.get_name(), grace=grace)
    if still:
        await asyncio.wait(still)  # cancelled already; they will end


async def run_roots(
    roots: Mapping[str, Coroutine[Any, Any, None]],
    *,
    stop: asyncio.Future[None] | None = None,
    grace: float = 30.0,
) -> None:
    """Run root tasks until one finishes or `stop` resolves; then stop all, re-raise failures."""
    tasks = {spawn(name, coro) for name, coro in roots.items()}
    waiters: set[asyncio.Future[Any]] = set(tasks)
    if stop is not None:
        waiters.add(stop)
    if not waiters:
        waiters.add(asyncio.get_running_loop().create_future())  # nothing to run: wait to be cancelled
    try:
        done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        await cancel_and_wait(tasks, grace=grace)
    for task in tasks:
        if task in done and not task.cancelled() and (exc := task.exception()) is not None:
            raise exc


def install_stop_signals(stop: asyncio.Future[None]) -> None:
    """SIGTERM and SIGINT resolve `stop`; a second signal is left to the default handler."""
    loop = asyncio.get_running_loop()

    def handler(sig: signal.Signals) -> None:
        log.info("signal.received", signal=sig.name)
        if not stop.done():
            stop.set_result(None)
        loop.remove_signal_handler(sig)  # a second SIGINT/SIGTERM kills the process

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, handler, sig)
