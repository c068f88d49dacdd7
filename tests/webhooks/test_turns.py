"""Calls handed over during the batch's passes of the loop run back to back, each answer
going to its own caller; a failing call fails only its caller; a caller that went away is
skipped."""

from __future__ import annotations

import asyncio

import pytest

from webhooks.turns import TurnBatch


async def test_each_caller_gets_its_answer_once_the_whole_batch_ran() -> None:
    events: list[str] = []

    def square(x: int) -> int:
        events.append(f"call {x}")
        return x * x

    batch = TurnBatch(square)

    async def caller(x: int) -> int:
        result = await batch(x)
        events.append(f"got {x}")
        return result

    assert await asyncio.gather(*(caller(x) for x in range(4))) == [0, 1, 4, 9]
    # The handlers write their answers only after every call of the batch has run.
    assert events == [*(f"call {x}" for x in range(4)), *(f"got {x}" for x in range(4))]


async def batches_of(passes: int, lateness: list[int]) -> list[list[int]]:
    """Which callers' calls ran together, when caller i hands over `lateness[i]` passes after
    the loop starts: calls made in the same pass of the loop ran in the same batch."""
    ran: list[tuple[int, int]] = []
    tick = 0

    async def ticker() -> None:
        nonlocal tick
        while True:
            tick += 1
            await asyncio.sleep(0)

    batch = TurnBatch(lambda i: ran.append((tick, i)), passes=passes)

    async def caller(i: int) -> None:
        for _ in range(lateness[i]):
            await asyncio.sleep(0)
        await batch(i)

    ticking = asyncio.create_task(ticker())
    await asyncio.gather(*(caller(i) for i in range(len(lateness))))
    ticking.cancel()
    together: dict[int, list[int]] = {}
    for at, i in ran:
        together.setdefault(at, []).append(i)
    return list(together.values())


async def test_the_passes_decide_which_calls_run_together() -> None:
    lateness = [0, 0, 1, 2, 3, 6]
    assert await batches_of(1, lateness) == [[0, 1], [2], [3], [4], [5]]
    assert await batches_of(2, lateness) == [[0, 1, 2], [3, 4], [5]]
    assert await batches_of(3, lateness) == [[0, 1, 2, 3], [4], [5]]
    with pytest.raises(ValueError, match="passes must be at least 1, not 0"):
        TurnBatch(print, passes=0)


async def test_a_failing_call_fails_only_its_caller() -> None:
    def half(x: int) -> int:
        if x % 2:
            raise ValueError(f"odd: {x}")
        return x // 2

    batch = TurnBatch(half)
    results = await asyncio.gather(*(batch(x) for x in range(4)), return_exceptions=True)
    assert results[0::2] == [0, 1]
    assert [str(e) for e in results[1::2]] == ["odd: 1", "odd: 3"]


async def test_a_caller_that_went_away_is_skipped() -> None:
    called: list[int] = []
    batch = TurnBatch(called.append)
    gone = batch(1)
    kept = batch(2)
    gone.cancel()
    await kept
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert called == [2]
