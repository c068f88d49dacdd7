"""The event loop a long-running process runs on: uvloop by default, asyncio on request, and
a clear error (not a traceback or a stray warning) for one that cannot be had."""

from __future__ import annotations

import asyncio
import sys

import pytest

from topobridge import eventloop
from topobridge.cli import main
from topobridge.eventloop import EventLoopUnavailable, default_event_loop, loop_factory, running_loop_name


async def which() -> str:
    return running_loop_name(asyncio.get_running_loop())


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop ships no Windows wheels")
def test_uvloop_is_the_default_where_it_is_a_dependency() -> None:
    assert default_event_loop() == "uvloop"


@pytest.mark.parametrize("name", ["uvloop", "asyncio"])
def test_each_name_runs_on_its_own_loop(name: eventloop.EventLoopName) -> None:
    assert eventloop.run(which(), name) == name
    loop = loop_factory(name)()
    try:
        assert running_loop_name(loop) == name
    finally:
        loop.close()


def test_an_unknown_loop_is_refused_by_name_and_its_coroutine_closed() -> None:
    coroutine = which()
    with pytest.raises(EventLoopUnavailable, match=r"event loop 'tokio' is not one of uvloop, asyncio"):
        eventloop.run(coroutine, "tokio")  # type: ignore[arg-type]
    assert coroutine.cr_frame is None, "closed, so no 'never awaited' warning follows the error"


def test_the_run_flag_offers_only_the_known_loops(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "--event-loop", "tokio"])
    assert exited.value.code == 2
    assert "argument --event-loop: invalid choice: 'tokio'" in capsys.readouterr().err
