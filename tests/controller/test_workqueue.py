"""The work queue's contract (fair, stingy, delaying, rate-limited, clean shutdown) on a fake clock."""

from __future__ import annotations

import asyncio

import pytest

from controller.clock import FakeClock
from controller.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    QueueShutDown,
    WorkQueue,
    default_rate_limiter,
)


def make_queue(clock: FakeClock) -> WorkQueue[str]:
    return WorkQueue(name="test", clock=clock)


async def test_fair_order_and_dedup() -> None:
    q = make_queue(FakeClock())
    for key in ["a", "b", "a", "c", "b"]:
        q.add(key)
    assert len(q) == 3
    assert [await q.get() for _ in range(3)] == ["a", "b", "c"]


async def test_key_in_processing_is_not_handed_out_twice() -> None:
    q = make_queue(FakeClock())
    q.add("a")
    key = await q.get()
    q.add("a")  # arrives while a worker holds it
    q.add("a")
    assert len(q) == 0, "a key being processed must not be in line"
    second = asyncio.ensure_future(q.get())
    await asyncio.sleep(0)
    assert not second.done()
    q.done(key)  # dirty -> back in line exactly once
    assert await asyncio.wait_for(second, 1) == "a"
    q.done("a")
    assert len(q) == 0 and q.processing == 0


async def test_done_without_readd_drops_key() -> None:
    q = make_queue(FakeClock())
    q.add("a")
    q.done(await q.get())
    assert len(q) == 0 and q.processing == 0


async def test_add_after_waits_for_clock() -> None:
    clock = FakeClock()
    q = make_queue(clock)
    q.add_after("a", 5.0)
    getter = asyncio.ensure_future(q.get())
    await clock.advance(4.9)
    assert not getter.done()
    await clock.advance(0.2)
    assert await asyncio.wait_for(getter, 1) == "a"


async def test_readd_only_makes_key_sooner() -> None:
    clock = FakeClock()
    q = make_queue(clock)
    q.add_after("a", 10.0)
    q.add_after("a", 30.0)  # later: ignored
    q.add_after("b", 20.0)
    q.add_after("b", 2.0)  # sooner: wins
    assert q.delayed == 2
    await clock.advance(2.5)
    assert await asyncio.wait_for(q.get(), 1) == "b"
    getter = asyncio.ensure_future(q.get())
    await clock.advance(7.0)
    assert not getter.done(), "a is due at t=10, not before"
    await clock.advance(0.6)
    assert await asyncio.wait_for(getter, 1) == "a"
    await clock.advance(30.0)
    assert len(q) == 0, "the superseded later entry for a must not fire"


async def test_immediate_add_supersedes_delay() -> None:
    clock = FakeClock()
    q = make_queue(clock)
    q.add_after("a", 10.0)
    q.add("a")
    assert await q.get() == "a"
    q.done("a")
    await clock.advance(11.0)
    assert len(q) == 0 and q.delayed == 0


async def test_waiting_worker_wakes_for_sooner_delay() -> None:
    clock = FakeClock()
    q = make_queue(clock)
    q.add_after("late", 8.0)
    getter = asyncio.ensure_future(q.get())
    await clock.advance(0)
    q.add_after("soon", 1.0)
    await clock.advance(1.0)
    assert await asyncio.wait_for(getter, 1) == "soon"


async def test_shutdown_wakes_waiters_after_line_is_empty() -> None:
    q = make_queue(FakeClock())
    q.add("a")
    q.shut_down()
    q.add("b")  # ignored after shutdown
    assert await q.get() == "a"
    with pytest.raises(QueueShutDown):
        await q.get()


async def test_shutdown_with_drain_waits_for_processing() -> None:
    q = make_queue(FakeClock())
    q.add("a")
    key = await q.get()
    drained = asyncio.ensure_future(q.shut_down_with_drain())
    await asyncio.sleep(0)
    assert not drained.done()
    q.done(key)
    assert await asyncio.wait_for(drained, 1) is True


async def test_shutdown_with_drain_times_out() -> None:
    q = make_queue(FakeClock())
    q.add("a")
    await q.get()
    assert await q.shut_down_with_drain(timeout=0.01) is False


def test_exponential_backoff_doubles_and_caps() -> None:
    lim: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    delays = [lim.when("a") for _ in range(20)]
    assert delays[:4] == [0.005, 0.01, 0.02, 0.04]
    assert delays[-1] == 1000.0
    assert lim.num_requeues("a") == 20
    assert lim.when("b") == 0.005, "keys back off independently"
    lim.forget("a")
    assert lim.num_requeues("a") == 0 and lim.when("a") == 0.005
    for _ in range(200):
        lim.when("c")
    assert lim.when("c") == 1000.0


async def test_bucket_burst_then_rate() -> None:
    clock = FakeClock()
    lim: BucketRateLimiter[str] = BucketRateLimiter(10.0, 100, clock=clock)
    burst = [lim.when(f"k{i}") for i in range(100)]
    assert burst == [0.0] * 100
    assert lim.when("x") == pytest.approx(0.1)
    assert lim.when("y") == pytest.approx(0.2)
    await clock.advance(10.0)  # refills, but never beyond the burst
    assert [lim.when(f"z{i}") for i in range(98)] == [0.0] * 98


async def test_default_limiter_is_max_of_both() -> None:
    clock = FakeClock()
    lim: MaxOfRateLimiter[str] = default_rate_limiter(clock)
    for _ in range(100):
        lim.when("hot")  # exhausts the bucket and backs "hot" off to the cap... eventually
    assert lim.when("cold") == pytest.approx(0.1), "an empty bucket delays even a fresh key"
    assert lim.num_requeues("hot") == 100
    assert lim.when("hot") == 1000.0, "per-key backoff dominates once large"


async def test_add_rate_limited_and_forget() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(
        name="t", clock=clock, rate_limiter=ItemExponentialFailureRateLimiter(1.0, 60.0)
    )
    assert q.add_rate_limited("a") == 1.0
    assert q.add_rate_limited("a") == 2.0  # still waiting: the earlier ready time (1 s) stays
    assert q.num_requeues("a") == 2
    await clock.advance(1.0)
    assert await asyncio.wait_for(q.get(), 1) == "a"
    q.forget("a")
    q.done("a")
    assert q.num_requeues("a") == 0
    assert q.add_rate_limited("a") == 1.0


async def test_many_workers_share_without_duplicates() -> None:
    q = make_queue(FakeClock())
    handled: list[str] = []
    in_flight: set[str] = set()

    async def worker() -> None:
        while True:
            try:
                key = await q.get()
            except QueueShutDown:
                return
            assert key not in in_flight
            in_flight.add(key)
            await asyncio.sleep(0)
            handled.append(key)
            in_flight.discard(key)
            q.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    for i in range(50):
        q.add(f"k{i % 10}")
        await asyncio.sleep(0)
    await q.shut_down_with_drain()
    await asyncio.wait_for(asyncio.gather(*workers), 2)
    assert set(handled) == {f"k{i}" for i in range(10)}


def test_limiter_arguments_checked() -> None:
    with pytest.raises(ValueError, match="base_delay"):
        ItemExponentialFailureRateLimiter(0.0, 1.0)
    with pytest.raises(ValueError, match="burst"):
        BucketRateLimiter(10.0, 0)
    with pytest.raises(ValueError):
        MaxOfRateLimiter()
