"""Answers computed together: the reviews handed over while the event loop takes two passes
are judged back to back, then the handlers write their answers.

A review's answer (the parse, the rule, the answer's JSON) takes about 30 us when calls follow
one another, and about four times that when TLS, HTTP and system calls run between two of
them and take back the CPU caches and the TLB (`benchmarks/webhook.py --stages` measures
both). Under load, each pass of the loop reads many requests; handling each to the end before
the next starts interleaves the two kinds of work. Here each handler hands its call over and
waits, and the calls run one after another once the loop has made `PASSES` more passes: the
handlers woken by the sockets read in those passes join the same batch. One more pass than
the least (1) cut the LWS answer's CPU by about 6 us at 64 clients, a third pass about 2 more,
within the benchmark's noise; with one request at a time, each pass costs a few microseconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
PASSES = 2
"""Passes of the loop between the first call handed over and the batch."""


class TurnBatch(Generic[T]):
    """Calls of one function, handed over from coroutines, run together `PASSES` passes of the
    running loop after the first of them."""

    def __init__(self, fn: Callable[..., T], passes: int = PASSES) -> None:
        if passes < 1:
            raise ValueError(f"passes must be at least 1, not {passes}")
        self._fn = fn
        self._passes = passes
        self._pending: list[tuple[tuple[object, ...], asyncio.Future[T]]] = []

    def __call__(self, *args: object) -> asyncio.Future[T]:
        if self._pending:
            # The batch's loop, from its first future: on Python 3.11, `get_running_loop()`
            # asks the kernel for the process id each time (a fork check), so it is asked once
            # per batch rather than once per review.
            loop = self._pending[0][1].get_loop()
        else:
            loop = asyncio.get_running_loop()
            loop.call_soon(self._wait, self._passes - 1)
        future: asyncio.Future[T] = loop.create_future()
        self._pending.append((args, future))
        return future

    def _wait(self, passes: int) -> None:
        if passes:
            asyncio.get_running_loop().call_soon(self._wait, passes - 1)
        else:
            self._run()

    def _run(self) -> None:
        pending, self._pending = self._pending, []
        for args, future in pending:
            if future.done():  # the handler was cancelled: its client went away
                continue
            try:
                future.set_result(self._fn(*args))
            except Exception as exc:  # the handler raises it, as if it had made the call itself
                future.set_exception(exc)
