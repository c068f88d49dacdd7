"""Leader election: timing validation up front, local-clock expiry, races, loss and release.

The lease lock is the one seam faked here (an in-memory store with resourceVersion
semantics); the real Lease is exercised by the integration tests.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from controller.clock import FakeClock
from controller.errors import AlreadyExistsError, ConfigError, ConflictError, NotFoundError, TransportError
from controller.leaderelection import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
)


@pytest.mark.parametrize(
    ("lease", "renew", "retry", "message"),
    [
        (10.0, 10.0, 2.0, r"lease duration \(10.0s\) must be greater than the renew deadline \(10.0s\)"),
        (15.0, 2.4, 2.0, r"renew deadline \(2.4s\) must be greater than retry period x 1.2 \(2.4s\)"),
        (15.0, 10.0, 0.0, "retry_period must be positive"),
        (-1.0, 10.0, 2.0, "lease_duration must be positive"),
    ],
    ids=["lease-not-above-renew", "renew-not-above-retry-x1.2", "zero-retry", "negative-lease"],
)
def test_timings_validated_up_front(lease: float, renew: float, retry: float, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        LeaderElectionConfig(identity="a", lease_duration=lease, renew_deadline=renew, retry_period=retry)


def test_defaults_are_client_go_values() -> None:
    cfg = LeaderElectionConfig()
    assert (cfg.lease_duration, cfg.renew_deadline, cfg.retry_period) == (15.0, 10.0, 2.0)
    assert cfg.request_timeout == 5.0
    assert cfg.identity, "an empty identity is replaced by a unique one"
    assert LeaderElectionConfig().identity != cfg.identity


class Store:
    """One lease record and its resourceVersion; `fail` makes every call fail (a partition)."""

    def __init__(self) -> None:
        self.record: LeaderElectionRecord | None = None
        self.version = 0
        self.fail = False
        self.writes: list[str] = []


class FakeLock:
    def __init__(self, store: Store, identity: str) -> None:
        self.store = store
        self.identity = identity
        self.seen = -1
        self.partitioned = False

    def describe(self) -> str:
        return "fake/lease"

    def _check(self) -> None:
        if self.store.fail or self.partitioned:
            raise TransportError("partitioned")

    async def get(self) -> LeaderElectionRecord:
        self._check()
        if self.store.record is None:
            raise NotFoundError("lease not found", status=404, reason="NotFound")
        self.seen = self.store.version
        return self.store.record

    async def create(self, record: LeaderElectionRecord) -> None:
        self._check()
        if self.store.record is not None:
            raise AlreadyExistsError("exists", status=409, reason="AlreadyExists")
        self._write(record)

    async def update(self, record: LeaderElectionRecord) -> None:
        self._check()
        if self.seen != self.store.version:
            raise ConflictError("the object has been modified", status=409, reason="Conflict")
        self._write(record)

    def _write(self, record: LeaderElectionRecord) -> None:
        self.store.version += 1
        self.store.record = record
        self.store.writes.append(record.holder_identity)
        self.seen = self.store.version


CFG = LeaderElectionConfig(identity="x", lease_duration=15.0, renew_deadline=10.0, retry_period=2.0)


def elector(
    store: Store, identity: str, clock: FakeClock, callbacks: LeaderCallbacks | None = None
) -> tuple[LeaderElector, FakeLock]:
    lock = FakeLock(store, identity)
    cfg = dataclasses.replace(CFG, identity=identity)
    return LeaderElector(cfg, lock, clock=clock, callbacks=callbacks or LeaderCallbacks()), lock


async def test_first_candidate_creates_lease() -> None:
    store, clock = Store(), FakeClock()
    a, _ = elector(store, "a", clock)
    assert await a.try_acquire_or_renew()
    assert a.is_leader()
    assert store.record is not None and store.record.holder_identity == "a"
    assert store.record.lease_duration_seconds == 15


async def test_expiry_is_judged_by_local_clock_not_record_times() -> None:
    store, clock = Store(), FakeClock()
    a, _ = elector(store, "a", clock)
    b, _ = elector(store, "b", clock)
    assert await a.try_acquire_or_renew()
    # The record's renewTime is wall-clock "now", but b has only just seen it: b must wait.
    assert not await b.try_acquire_or_renew()
    await clock.advance(14.0)
    assert not await b.try_acquire_or_renew(), "b first saw the record 14 s ago: not expired yet"
    await clock.advance(1.5)
    assert await b.try_acquire_or_renew(), "unchanged for a full lease duration: b takes over"
    assert store.record is not None and store.record.holder_identity == "b"
    assert store.record.leader_transitions == 1


async def test_renewals_keep_others_out() -> None:
    store, clock = Store(), FakeClock()
    a, _ = elector(store, "a", clock)
    b, _ = elector(store, "b", clock)
    assert await a.try_acquire_or_renew()
    for _ in range(10):
        await clock.advance(10.0)
        assert await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew(), "each renewal changes the record, restarting b's wait"


async def test_racing_writers_settled_by_conflict() -> None:
    store, clock = Store(), FakeClock()
    a, _ = elector(store, "a", clock)
    b, _ = elector(store, "b", clock)
    c, _ = elector(store, "c", clock)
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    assert not await c.try_acquire_or_renew()
    store.fail = True  # a is gone; the lease goes stale
    await clock.advance(16.0)
    store.fail = False
    # b and c both read the stale record, then both try to write over it.
    results = await asyncio.gather(b.try_acquire_or_renew(), c.try_acquire_or_renew())
    assert sorted(results) == [False, True], "exactly one of two racing candidates wins"
    assert store.record is not None and store.record.holder_identity in ("b", "c")


async def test_leading_work_cancelled_when_renewal_misses_deadline() -> None:
    store, clock = Store(), FakeClock()
    stopped: list[str] = []
    a, lock = elector(store, "a", clock, LeaderCallbacks(on_stopped_leading=lambda: stopped.append("a")))
    work_cancelled = asyncio.Event()

    async def leading() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            work_cancelled.set()
            raise

    runner = asyncio.ensure_future(a.run(leading))
    await clock.advance(0)
    assert a.leading.is_set()
    lock.partitioned = True
    for _ in range(20):
        await clock.advance(1.0)
        if runner.done():
            break
    assert runner.done(), "the elector must give up within the renew deadline (plus a retry period)"
    assert await runner is True, "run reports the loss"
    assert work_cancelled.is_set(), "the leading scope is cancelled on loss"
    assert stopped == ["a"]
    assert not a.leading.is_set()
    assert store.record is not None and store.record.holder_identity == "a", "a lost lease is not released"


async def test_clean_exit_releases_after_work_stopped() -> None:
    store, clock = Store(), FakeClock()
    a, _ = elector(store, "a", clock)
    order: list[str] = []

    async def leading() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            order.append(f"work-stopped holder={store.record.holder_identity if store.record else None}")

    runner = asyncio.ensure_future(a.run(leading))
    await clock.advance(0)
    runner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await runner
    assert order == ["work-stopped holder=a"], "the lease is still ours while the work winds down"
    assert store.record is not None and store.record.holder_identity == ""
    assert store.record.lease_duration_seconds == 1
    b, _ = elector(store, "b", clock)
    assert await b.try_acquire_or_renew(), "a released lease is taken without waiting out the duration"


async def test_stopped_callback_fires_even_if_never_led() -> None:
    store, clock = Store(), FakeClock()
    a, _ = elector(store, "a", clock)
    assert await a.try_acquire_or_renew()
    stopped: list[bool] = []
    b, _ = elector(store, "b", clock, LeaderCallbacks(on_stopped_leading=lambda: stopped.append(True)))

    async def never() -> None:
        raise AssertionError("b must never lead while a renews")

    runner = asyncio.ensure_future(b.run(never))
    await clock.advance(3.0)
    runner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await runner
    assert stopped == [True]
    assert store.record is not None and store.record.holder_identity == "a", (
        "b released nothing it never held"
    )


async def test_work_failure_propagates_and_releases() -> None:
    store, clock = Store(), FakeClock()
    a, _ = elector(store, "a", clock)

    async def boom() -> None:
        raise RuntimeError("reconciler crashed")

    with pytest.raises(RuntimeError, match="reconciler crashed"):
        await a.run(boom)
    assert store.record is not None and store.record.holder_identity == ""


async def test_release_after_a_renewal_that_landed_unseen() -> None:
    """SIGTERM during a renewal: the write lands but its answer is never read, so the version
    the elector last saw is stale. The release still clears the holder."""
    store, clock = Store(), FakeClock()
    a, _ = elector(store, "a", clock)
    runner = asyncio.ensure_future(a.run(asyncio.Event().wait))
    await clock.advance(0)
    assert a.leading.is_set()
    assert store.record is not None
    store.version += 1  # the cancelled renewal, applied by the server
    store.record = dataclasses.replace(store.record, renew_time="later")
    runner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await runner
    assert store.record.holder_identity == "", "a clean exit releases the lease whatever the timing"
    assert store.record.lease_duration_seconds == 1


async def test_release_leaves_a_lease_another_holder_took() -> None:
    store, clock = Store(), FakeClock()
    a, _ = elector(store, "a", clock)
    assert await a.try_acquire_or_renew()
    assert store.record is not None
    store.version += 1  # a's lease went stale unseen and b took it
    store.record = dataclasses.replace(store.record, holder_identity="b")
    assert not await a.release()
    assert store.record.holder_identity == "b", "a release never clears another holder"
    assert a.leader == "b"
