"""Leader election on a `coordination.k8s.io/v1` Lease, following client-go's rules.

* Timings are checked up front: lease duration > renew deadline > retry period x 1.2
  (defaults 15 s, 10 s, 2 s).
* Only the local clock counts: another holder's lease is expired once *we* have not seen
  its record change for a full lease duration. Timestamps inside the record are written
  for humans and other tools, never trusted.
* `try_acquire_or_renew`: the current leader first tries an optimistic update of the record
  it last saw; otherwise get (or create) the record, back off while another holder's lease
  is live, and write ours. resourceVersion conflicts settle every race: of two writers of
  the same version, the API server accepts one.
* The leading work runs in a child task. If renewal keeps failing for the renew deadline,
  that task is cancelled and awaited before `run` returns, so nothing keeps acting on a
  lost lease. On a clean exit the lease is released (holder cleared, duration 1 s), but only
  after the leading work has stopped.

Honest limits (as client-go admits): there is no fencing. Between a partition and the renew
deadline a deposed leader may still issue a request; the scheduler runtime therefore makes
every write conditional (pod uid preconditions, bind refusing an already bound pod).
"""

from __future__ import annotations

import asyncio
import random
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

import structlog

from controller.clock import Clock, MonotonicClock
from controller.errors import ConfigError, ConflictError, ControllerError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import LEASES

log = structlog.get_logger(__name__)

JITTER_FACTOR = 1.2


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """Where the lease lives, who we are, and the three timings (seconds)."""

    lease_name: str = "topobridge-controller"
    lease_namespace: str = "kube-system"
    identity: str = ""
    """Unique per replica; empty picks `<hostname>_<random>`."""
    lease_duration: float = 15.0
    """How long others wait, after last seeing the record change, before taking over."""
    renew_deadline: float = 10.0
    """How long the leader keeps retrying a renewal before it gives up leadership."""
    retry_period: float = 2.0
    """Pause between attempts to acquire or renew."""
    release_on_cancel: bool = True
    """Clear the holder on a clean exit so a successor need not wait out the lease."""

    def __post_init__(self) -> None:
        if not self.identity:
            object.__setattr__(self, "identity", f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}")
        for name in ("lease_duration", "renew_deadline", "retry_period"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"leader election: {name} must be positive, got {getattr(self, name)}")
        if self.lease_duration <= self.renew_deadline:
            raise ConfigError(
                f"leader election: lease duration ({self.lease_duration}s) must be greater than "
                f"the renew deadline ({self.renew_deadline}s)"
            )
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ConfigError(
                f"leader election: renew deadline ({self.renew_deadline}s) must be greater than "
                f"retry period x {JITTER_FACTOR} ({JITTER_FACTOR * self.retry_period:g}s)"
            )
        if not self.lease_name or not self.lease_namespace:
            raise ConfigError("leader election: lease name and namespace must not be empty")

    @property
    def request_timeout(self) -> float:
        """Half the renew deadline: one hung request cannot cost leadership (client-go)."""
        return self.renew_deadline / 2


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """The lease's spec as the election reads and writes it."""

    holder_identity: str
    lease_duration_seconds: int
    acquire_time: str | None
    renew_time: str | None
    leader_transitions: int

    def to_spec(self) -> JsonDict:
        spec: JsonDict = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.leader_transitions,
        }
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec

    @classmethod
    def from_spec(cls, spec: JsonDict) -> LeaderElectionRecord:
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )


class LeaseLock(Protocol):
    """The resource lock: tiny so tests can fake it."""

    identity: str

    async def get(self) -> LeaderElectionRecord:
        """The current record; NotFoundError when there is no lease."""
        ...

    async def create(self, record: LeaderElectionRecord) -> None:
        """Create the lease; ConflictError (AlreadyExists) if someone else did first."""
        ...

    async def update(self, record: LeaderElectionRecord) -> None:
        """Write over the version last read or written; ConflictError if it moved."""
        ...

    def describe(self) -> str: ...


class KubeLeaseLock:
    """A LeaseLock on a coordination.k8s.io/v1 Lease."""

    def __init__(self, kube: Kube, *, name: str, namespace: str, identity: str, timeout: float) -> None:
        self.kube = kube
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.timeout = timeout
        self._last: JsonDict | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    async def get(self) -> LeaderElectionRecord:
        async with asyncio.timeout(self.timeout):
            obj = await self.kube.get(LEASES, self.name, namespace=self.namespace)
        self._last = obj
        return LeaderElectionRecord.from_spec(obj.get("spec") or {})

    async def create(self, record: LeaderElectionRecord) -> None:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_spec(),
        }
        async with asyncio.timeout(self.timeout):
            self._last = await self.kube.create(LEASES, body)

    async def update(self, record: LeaderElectionRecord) -> None:
        if self._last is None:
            raise ControllerError("lease lock: update before get or create")
        body = dict(self._last)
        body["spec"] = record.to_spec()  # metadata keeps the resourceVersion we last saw
        # asyncio.timeout rather than wait_for, which on Python 3.11 can swallow a cancellation.
        async with asyncio.timeout(self.timeout):
            self._last = await self.kube.replace(LEASES, body)


def micro_time(now: datetime | None = None) -> str:
    """A Kubernetes MicroTime."""
    return (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaderCallbacks:
    """What to call as leadership changes hands (client-go's `LeaderCallbacks`)."""

    on_started_leading: Callable[[], None] | None = None
    on_stopped_leading: Callable[[], None] | None = None
    on_new_leader: Callable[[str], None] | None = None
    """Called with the new holder's identity whenever a different one is observed."""


class LeaderElector:
    """Acquire, hold and release one lease; see the module docstring."""

    def __init__(
        self,
        config: LeaderElectionConfig,
        lock: LeaseLock,
        *,
        clock: Clock | None = None,  # None outside tests
        callbacks: LeaderCallbacks = LeaderCallbacks(),
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.lock = lock
        self.clock = clock or MonotonicClock()
        self.on_started_leading = callbacks.on_started_leading
        self.on_stopped_leading = callbacks.on_stopped_leading
        self.on_new_leader = callbacks.on_new_leader
        self._rng = rng or random.Random()
        self._observed: LeaderElectionRecord | None = None
        self._observed_at = 0.0
        self._reported_leader = ""
        self.leading = asyncio.Event()
        self._log = log.bind(lease=lock.describe(), identity=config.identity)

    @property
    def identity(self) -> str:
        return self.config.identity

    def is_leader(self) -> bool:
        return self._observed is not None and self._observed.holder_identity == self.identity

    @property
    def leader(self) -> str:
        return self._observed.holder_identity if self._observed else ""

    # --- one attempt -----------------------------------------------------------------

    async def try_acquire_or_renew(self) -> bool:
        """One attempt, as client-go's tryAcquireOrRenew: renew what we hold
        (`_renew_held`); else read the record, creating it when there is none
        (`_read_or_create`); wait while another holder's lease has not expired; else take it
        (`_take`)."""
        now_wall = micro_time()
        duration = max(1, round(self.config.lease_duration))
        # 1. Fast path: we hold it; renew over the version we last wrote.
        if self.is_leader() and await self._renew_held(duration, now_wall):
            return True
        # 2. Read (or create) the record.
        current = await self._read_or_create(duration, now_wall)
        if isinstance(current, bool):
            return current
        if current != self._observed:
            self._observe(current)
        # 3. Someone else holds a lease we have not seen expire: wait.
        if (
            current.holder_identity
            and current.holder_identity != self.identity
            and self._observed_at + self.config.lease_duration > self.clock.now()
        ):
            return False
        # 4. Take it (or keep it), carrying the history forward.
        return await self._take(current, duration, now_wall)

    async def _renew_held(self, duration: int, now_wall: str) -> bool:
        """Renew the record we last wrote; False when that write fails (read it afresh)."""
        if self._observed is None:
            return False
        renewed = LeaderElectionRecord(
            self.identity,
            duration,
            self._observed.acquire_time,
            now_wall,
            self._observed.leader_transitions,
        )
        try:
            await self.lock.update(renewed)
        except (ControllerError, TimeoutError) as exc:
            self._log.info("leader.renew_failed_fast_path", error=str(exc))
            return False
        self._observe(renewed)
        return True

    async def _read_or_create(self, duration: int, now_wall: str) -> LeaderElectionRecord | bool:
        """The lease's record; when there is none, whether creating it (ours) succeeded."""
        try:
            return await self.lock.get()
        except NotFoundError:
            mine = LeaderElectionRecord(
                holder_identity=self.identity,
                lease_duration_seconds=duration,
                acquire_time=now_wall,
                renew_time=now_wall,
                leader_transitions=0,
            )
            try:
                await self.lock.create(mine)
            except (ControllerError, TimeoutError) as exc:
                self._log.info("leader.create_failed", error=str(exc))
                return False
            self._observe(mine)
            return True
        except (ControllerError, TimeoutError) as exc:
            self._log.info("leader.get_failed", error=str(exc))
            return False

    async def _take(self, current: LeaderElectionRecord, duration: int, now_wall: str) -> bool:
        """Write the record as ours: kept (same acquire time) or taken over (one more transition)."""
        if current.holder_identity == self.identity:
            record = LeaderElectionRecord(
                self.identity, duration, current.acquire_time, now_wall, current.leader_transitions
            )
        else:
            record = LeaderElectionRecord(
                self.identity, duration, now_wall, now_wall, current.leader_transitions + 1
            )
        try:
            await self.lock.update(record)
        except ConflictError:
            return False  # someone else wrote first; their record wins this round
        except (ControllerError, TimeoutError) as exc:
            self._log.info("leader.update_failed", error=str(exc))
            return False
        self._observe(record)
        return True

    def _observe(self, record: LeaderElectionRecord) -> None:
        self._observed = record
        self._observed_at = self.clock.now()
        if record.holder_identity != self._reported_leader:
            self._reported_leader = record.holder_identity
            self._log.info("leader.observed", holder=record.holder_identity or "<none>")
            if self.on_new_leader is not None:
                self.on_new_leader(record.holder_identity)

    # --- the life cycle --------------------------------------------------------------

    def _jittered(self, period: float) -> float:
        return period * (1 + (JITTER_FACTOR - 1) * self._rng.random())

    async def acquire(self) -> None:
        """Return once we hold the lease; retries every retry period with jitter."""
        self._log.info("leader.acquiring")
        while not await self.try_acquire_or_renew():
            await self.clock.sleep(self._jittered(self.config.retry_period))
        self._log.info("leader.acquired")

    async def renew_until_lost(self) -> None:
        """Keep renewing; return when a renewal has not succeeded within the renew deadline."""
        cfg = self.config
        while True:
            deadline = self.clock.now() + cfg.renew_deadline
            while True:
                if await self.try_acquire_or_renew():
                    break
                if self.clock.now() + cfg.retry_period > deadline:
                    self._log.warning("leader.lost", holder=self.leader or "<unknown>")
                    return
                await self.clock.sleep(cfg.retry_period)
            await self.clock.sleep(cfg.retry_period)

    async def run(self, leading: Callable[[], Awaitable[None]]) -> bool:
        """Acquire, run `leading()` while renewing; cancel it when the lease is lost.

        Returns True if leadership was lost (the caller should exit), False if `leading`
        returned on its own. Cancelling `run` stops the work, then releases the lease.
        """
        lost = False
        started = False
        try:
            await self.acquire()
            started = True
            self.leading.set()
            if self.on_started_leading is not None:
                self.on_started_leading()
            work = asyncio.ensure_future(leading())
            renewer = asyncio.ensure_future(self.renew_until_lost())
            try:
                done, _ = await asyncio.wait({work, renewer}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for t in (work, renewer):
                    if not t.done():
                        t.cancel()
                # The work must have stopped before we let go of (or admit losing) the lease.
                await asyncio.gather(work, renewer, return_exceptions=True)
            lost = renewer in done
            if work in done and not work.cancelled() and (exc := work.exception()) is not None:
                raise exc
            return lost
        finally:
            self.leading.clear()
            if started and not lost and self.config.release_on_cancel:
                await asyncio.shield(self.release())
            if self.on_stopped_leading is not None:
                self.on_stopped_leading()

    async def release(self) -> bool:
        """Clear the holder if it is still us, so a successor can take over at once.

        A renewal cancelled in flight (SIGTERM arrives while it waits for its answer) may
        have landed unseen, leaving the version we last saw stale. The conflict that follows
        is answered by reading the record afresh and clearing it over that version while it
        still names us, so a clean exit releases whatever the timing of the stop."""
        if not self.is_leader() or self._observed is None:
            return False
        try:
            try:
                await self._clear_holder(self._observed.leader_transitions)
            except ConflictError:
                current = await self.lock.get()
                self._observe(current)
                if current.holder_identity != self.identity:
                    return False
                await self._clear_holder(current.leader_transitions)
        except (ControllerError, TimeoutError) as exc:
            self._log.warning("leader.release_failed", error=str(exc))
            return False
        self._log.info("leader.released")
        return True

    async def _clear_holder(self, leader_transitions: int) -> None:
        now_wall = micro_time()
        record = LeaderElectionRecord("", 1, now_wall, now_wall, leader_transitions)
        await self.lock.update(record)
        self._observe(record)
