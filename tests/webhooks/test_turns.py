"""Calls handed over during one loop turn run back to back in the next, each answer going to
its own caller; a failing call fails only its caller; a caller that went away is skipped."""

from __future__ import annotations

import asyncio

import pytest

from webhooks.turns import SameTurn


async def test_calls_of_one_turn_run_together_in_the_next() -> None:
    events: list[str] = []

    def square(x: int) -> int:
        events.append(f"call {x}")
        return x * x

    same_turn = SameTurn(square)

    async def caller(x: int) -> int:
        events.append(f"hand {x}")
        result = await same_turn(x)
        events.append(f"got {x}")
        return result

    results = await asyncio.gather(*(caller(x) for x in range(4)))
    assert results == [0, 1, 4, 9]
    assert events == [
        *(f"hand {x}" for x in range(4)),
        *(f"call {x}" for x in range(4)),
        *(f"got {x}" for x in range(4)),
    ]
    # The next turn's calls make a batch of their own.
    assert await caller(5) == 25
    assert events[-3:] == ["hand 5", "call 5", "got 5"]


async def test_a_failing_call_fails_only_its_caller() -> None:
    def half(x: int) -> int:
        if x % 2:
            raise ValueError(f"odd: {x}")
        return x // 2

    same_turn = SameTurn(half)
    results = await asyncio.gather(*(same_turn(x) for x in range(4)), return_exceptions=True)
    assert results[0::2] == [0, 1]
    assert [str(e) for e in results[1::2]] == ["odd: 1", "odd: 3"]


async def test_a_caller_that_went_away_is_skipped() -> None:
    called: list[int] = []
    same_turn = SameTurn(called.append)
    gone = asyncio.ensure_future(same_turn(1))
    kept = same_turn(2)
    gone.cancel()
    await kept
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert called == [2]
