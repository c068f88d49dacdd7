"""Answers computed together: the reviews that come in during one event-loop turn are judged
back to back in the next.

A review's answer (the parse, the rule, the answer's JSON) takes about 30 us when calls follow
one another, and three times that when TLS, HTTP and system calls run between two of them and
take back the CPU caches and the TLB (`benchmarks/webhook.py --stages` measures both). Under
load, one turn of the loop reads many requests; handling each to the end before the next
starts interleaves the two kinds of work. Here each handler hands its call over and waits;
the calls of a turn then run one after another, and the handlers write their answers after.
With one request at a time, the cost is two more passes of the loop (a few microseconds).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class SameTurn(Generic[T]):
    """Calls of one function, gathered in one turn of the running loop, run in the next."""

    def __init__(self, fn: Callable[..., T]) -> None:
        self._fn = fn
        self._pending: list[tuple[tuple[object, ...], asyncio.Future[T]]] = []

    def __call__(self, *args: object) -> asyncio.Future[T]:
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        if not self._pending:
            future.get_loop().call_soon(self._run)
        self._pending.append((args, future))
        return future

    def _run(self) -> None:
        pending, self._pending = self._pending, []
        for args, future in pending:
            if future.done():  # the handler was cancelled: its client went away
                continue
            try:
                future.set_result(self._fn(*args))
            except Exception as exc:  # the handler raises it, as if it had made the call itself
                future.set_exception(exc)
