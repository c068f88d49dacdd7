"""Which event loop a long-running topobridge process runs on.

uvloop implements the loop, its sockets and its TLS transport in Cython over libuv, where
asyncio's own are Python over selectors and `ssl.MemoryBIO`. Every admission answer goes
through that TLS transport twice (the request read, the answer written), and every API call
and watch event of the controller once, so the loop is a fixed share of each. uvloop is the
default where it is installed (a dependency on every platform it ships wheels for); `asyncio`
stays selectable for a platform without it or to rule the loop out when chasing a problem.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar, get_args

EventLoopName = Literal["uvloop", "asyncio"]
EVENT_LOOPS: tuple[EventLoopName, ...] = get_args(EventLoopName)

T = TypeVar("T")


class EventLoopUnavailable(Exception):
    """The event loop asked for cannot be had on this machine."""


def default_event_loop() -> EventLoopName:
    """uvloop where it is installed, asyncio elsewhere (found without importing it, so that
    building the command line costs no import)."""
    return "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"


def loop_factory(name: EventLoopName) -> Callable[[], asyncio.AbstractEventLoop]:
    """A function that makes a new event loop of the kind `name` names."""
    if name == "asyncio":
        return asyncio.new_event_loop
    if name == "uvloop":
        try:
            import uvloop
        except ImportError as exc:
            raise EventLoopUnavailable(
                f"event loop 'uvloop' is not installed ({exc}); install it or choose 'asyncio'"
            ) from None
        factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
        return factory
    raise EventLoopUnavailable(f"event loop {name!r} is not one of {', '.join(EVENT_LOOPS)}")


def run(main: Coroutine[Any, Any, T], name: EventLoopName) -> T:
    """`asyncio.run(main)`, on a loop of the kind `name` names."""
    try:
        factory = loop_factory(name)
    except EventLoopUnavailable:
        main.close()  # never started: closed, so no "never awaited" warning hides the error
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def running_loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """`uvloop` or `asyncio`: which implementation `loop` is, for the logs."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
