"""The fallback gang scheduler: a loop over scheduling cycles, served for the schedulerNames
the hand-off leaves to topobridge (`serve`, with `controller.handoff`).

A cycle (`run_cycle`) is `controller.placer.cycle.SchedulingCycle` over the cache's
incremental snapshot (`ClusterState.view()`): every decision (queue order, fit, reserve,
nominations, victims, the permit's assembly wait) is made there, the same code
`topobridge simulate` runs. This module only turns each gang's result into API work:
1. bind: the placed pods are assumed in the cache (the next cycle sees their room taken) and
   a job (a task per gang) binds them while the loop goes on; a gang is never planned again
   while its job runs, and a failed bind requeues it with backoff (`GangTiming`);
2. preempt: victims get their DisruptionTarget condition and are deleted, the gang's pods
   are nominated;
3. report: verdict messages go to the pods' PodScheduled condition and the Volcano PodGroup,
   only when they change.

The loop wakes on cache changes (debounced) and every `period` seconds (waiting gangs,
victims gone). Stopping (leadership lost, SIGTERM) stops planning at once
but lets jobs in flight finish within `grace`: a gang is finished or rolled back, never
left half-bound by us.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from controller import metrics
from controller.aiotasks import run_roots, spawn
from controller.handoff import HandOff
from controller.informer import Informer
from controller.kube import Kube
from controller.placer.attempt_budget import DEFAULT_ATTEMPT_STEPS, DEFAULT_GUARD_SECONDS
from controller.placer.cluster import Kind
from controller.placer.cycle import Bind, CycleOptions, GangTiming, Outcome, Preemption, SchedulingCycle
from controller.placer.explain import brief
from controller.placer.framework import Code
from controller.placer.room import tier_room
from controller.placer.snapshot import Snapshot
from controller.placer.timeout import TIMEOUT_REASON, Expiry
from controller.reporting import EventRecorder
from controller.resources import Resource
from controller.runtime.binder import Binder, BindOutcome
from controller.runtime.cache import ClusterCache
from controller.runtime.messages import preempting_message, short_message, with_brief
from controller.runtime.preemptor import Preemptor
from controller.runtime.status import (
    NOT_ENOUGH_RESOURCES,
    NOT_ENOUGH_TASKS,
    READY_REASON,
    SCHEDULED,
    UNSCHEDULABLE,
    StatusWriter,
)
from translations import gpu
from translations.errors import failure_text
from translations.gangs import Gang, membership
from translations.kinds import SCHEDULER_KINDS, ApiKind
from translations.serving import serves

log = structlog.get_logger(__name__)

Reported = tuple[Code, str, tuple[str, ...]]
"""A verdict written to a gang's pods: its code, its message and the pending members it went to."""


def reported(gang: Gang, outcome: Outcome) -> Reported:
    """What writing `outcome` would say, and to whom: the pending members by uid, so a pod that
    joins the gang, or one deleted and created again under a member's name between two cycles,
    gets its PodScheduled condition although the gang's verdict reads the same."""
    return (outcome.code, outcome.message, tuple(m.pod.metadata.uid or m.key for m in gang.pending))


@dataclass
class SchedulerConfig:
    scheduler_names: tuple[str, ...] = ("topobridge",)
    """Pods whose spec.schedulerName is one of these are ours to place."""
    period: float = 2.0
    """Seconds between cycles when nothing changes."""
    debounce: float = 0.02
    """Seconds to gather a burst of changes into one cycle."""
    min_interval: float = 0.1
    """Shortest time from one cycle's start to the next one's."""
    assembly_grace: float = 10.0
    """Seconds a gang with fewer pods than minMember may take to appear before it is reported."""
    grace: float = 20.0
    """Seconds jobs in flight may take to finish when the scheduler stops."""
    bind_retry_deadline: float = 30.0
    bind_concurrency: int = 32
    gpu_nvlink_label: str = gpu.NVLINK_LABEL
    """Node label saying a node's GPUs are NVLink-connected (GPU gangs that require NVLink)."""
    enable_preemption: bool = True
    """Koordinator's coscheduling `enablePreemption`: false never evicts to make room."""
    topology_aware: bool = True
    """Koordinator's coscheduling `awareNetworkTopology`: false places gangs ignoring their
    network-topology constraints (still whole)."""

    room_period: float = 10.0
    """Seconds between refreshes of the free room per tier (`topobridge_tier_*` metrics)."""

    attempt_steps: float = DEFAULT_ATTEMPT_STEPS
    """Steps one gang's attempt may spend searching for a preemption plan
    (`controller.placer.attempt_budget`)."""
    attempt_guard: float = DEFAULT_GUARD_SECONDS
    """Seconds past which the wall-clock guard stops an attempt's search (counted, logged, an Event)."""

    def cycle_options(self) -> CycleOptions:
        return CycleOptions(
            enable_preemption=self.enable_preemption,
            topology_aware=self.topology_aware,
            attempt_steps=self.attempt_steps,
            attempt_guard=self.attempt_guard,
        )

    def shape(self, gang: Gang) -> Gang:
        """The gang as these args let the engine see it (`CycleOptions.shape`)."""
        return self.cycle_options().shape(gang)


def attach_kinds(
    cache: ClusterCache, informer_of: Callable[[Resource], Informer], resources: Mapping[ApiKind, Resource]
) -> list[Informer]:
    """Feed `cache` from one informer per kind the scheduler reads (the table
    `translations.kinds.SCHEDULER_KINDS`), at the version `resources` names for it (the one
    the cluster serves: `controller.resources.served_resources`); a kind it leaves out (a CRD
    not installed) is not watched. Returns the informers: scheduling waits for all to sync."""
    watched: list[Informer] = []
    for read in SCHEDULER_KINDS:
        res = resources.get(read.api)
        if res is None:
            log.info("scheduler.kind_not_served", kind=read.api.display)
            continue
        informer = informer_of(res)
        cache.attach_kind(Kind(read.api), informer)
        watched.append(informer)
    return watched


@dataclass
class WarmCache:
    """The scheduler's cache filled before this replica leads, as kube-scheduler starts its
    informers before its leader election: a standby lists and watches what the scheduler
    reads and cuts its first view (the cold build) while it waits, so a takeover starts from a
    synced cache and an incremental view rather than from the first list. Memory is the
    leader's; the API server serves one more set of watches."""

    cache: ClusterCache
    informers: list[Informer]
    resources: Mapping[ApiKind, Resource]
    """The versions discovery chose: a leader that finds others served starts cold instead."""
    prepared: bool = False
    """The first view is cut (`prepare`)."""

    @classmethod
    def attach(
        cls,
        informer_of: Callable[[Resource], Informer],
        resources: Mapping[ApiKind, Resource],
        *,
        nvlink_label: str = gpu.NVLINK_LABEL,
    ) -> WarmCache:
        cache = ClusterCache(nvlink_label=nvlink_label)
        return cls(cache, attach_kinds(cache, informer_of, resources), dict(resources))

    def synced(self) -> bool:
        return all(i.synced.is_set() for i in self.informers)

    async def prepare(self) -> None:
        """Once every informer has listed, cut the first view (a view that fails is left for
        the leader's first cycle to rebuild)."""
        while not self.synced():
            await asyncio.sleep(0.05)
        started = time.perf_counter()
        try:
            self.cache.state.view()
        except Exception as exc:
            self.cache.state.invalidate()
            log.warning("scheduler.warm_view_failed", error=failure_text(exc), exc_info=exc)
            return
        self.prepared = True
        log.info("scheduler.warm", seconds=round(time.perf_counter() - started, 3))


@dataclass
class GangScheduler:
    """One scheduler instance: cache, view builder, binder, preemptor, status writer, loop."""

    kube: Kube
    status_kube: Kube
    config: SchedulerConfig
    recorder: EventRecorder | None = None
    served_names: Callable[[], Collection[str]] | None = None
    """The schedulerNames to place now (the hand-off's verdict); None: all configured ones."""
    warm: WarmCache | None = None
    """A cache filled while this replica stood by (`WarmCache`); None: a cache of its own."""
    cache: ClusterCache = field(init=False)
    cycles: int = 0
    _wake: asyncio.Event = field(init=False)
    _jobs: dict[str, asyncio.Task[None]] = field(init=False, default_factory=dict)
    timing: GangTiming = field(init=False, default_factory=GangTiming)
    _reported: dict[str, Reported] = field(init=False, default_factory=dict)
    _notices: set[asyncio.Task[None]] = field(init=False, default_factory=set)
    """Events in flight that no gang job carries (kept referenced until they finish)."""
    pending: dict[str, tuple[str, str, str]] = field(init=False, default_factory=dict)
    """Gangs attempted and not placed: gang -> (namespace, dialect, reason), for the metrics."""
    _room_at: float = field(init=False, default=float("-inf"))
    """When the free room per tier was last published (`_publish_room`)."""

    def __post_init__(self) -> None:
        self._wake = asyncio.Event()
        if self.warm is not None:
            self.cache = self.warm.cache
            self.cache.notify(self._wake.set)
        else:
            self.cache = ClusterCache(on_change=self._wake.set, nvlink_label=self.config.gpu_nvlink_label)
        self.status = StatusWriter(self.status_kube, self.cache, recorder=self.recorder)
        self.binder = Binder(
            self.kube,
            self.cache,
            concurrency=self.config.bind_concurrency,
            retry_deadline=self.config.bind_retry_deadline,
            author=self.recorder.instance if self.recorder is not None else "",
        )
        self.preemptor = Preemptor(self.kube, self.cache, self.status, self.recorder)
        self.stopping = False

    # --- wiring ----------------------------------------------------------------------

    def attach(
        self, informer_of: Callable[[Resource], Informer], resources: Mapping[ApiKind, Resource]
    ) -> list[Informer]:
        """Feed the cache (`attach_kinds`); a warm cache is fed already."""
        if self.warm is not None:
            return self.warm.informers
        return attach_kinds(self.cache, informer_of, resources)

    # --- the loop --------------------------------------------------------------------

    async def run(self, synced: Callable[[], bool]) -> None:
        """Cycle until cancelled; then let jobs in flight finish (within `grace`)."""
        try:
            while not synced():
                await asyncio.sleep(0.05)
            while True:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
                # cancellation that arrives as the wake-up fires, and the loop would never stop.
                try:
                    async with asyncio.timeout(self.config.period):
                        await self._wake.wait()
                    await asyncio.sleep(self.config.debounce)
                except TimeoutError:
                    pass
                self._wake.clear()
                started = time.monotonic()
                await self._guarded_cycle()
                took = time.monotonic() - started
                # A busy cluster wakes us constantly: cycles may use at most a third of the time,
                # leaving the event loop (and, on a small machine, the API server) room to bind.
                await asyncio.sleep(max(self.config.min_interval - took, 2 * took))
        finally:
            self.stopping = True
            await asyncio.shield(self.drain())

    async def _guarded_cycle(self) -> None:
        """One cycle and the PodGroup pass after it. Whatever escapes them (the cycle already
        turns a gang's failure into that gang's Error) is logged and counted, and the loop
        goes on: the scheduler's root task never ends on a cluster object."""
        try:
            await self.run_cycle()
            await self.status.reconcile_pod_groups(self.names())
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            metrics.SCHEDULER_ERRORS.labels("cycle").inc()
            log.error("scheduler.cycle_failed", cycle=self.cycles, error=failure_text(exc), exc_info=exc)

    async def drain(self) -> None:
        jobs = [t for t in self._jobs.values() if not t.done()]
        if not jobs:
            return
        log.info("scheduler.draining", jobs=len(jobs), grace=self.config.grace)
        _, pending = await asyncio.wait(jobs, timeout=self.config.grace)
        for t in pending:
            log.warning("scheduler.job_abandoned", job=t.get_name())
            t.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    def names(self) -> Collection[str]:
        return self.served_names() if self.served_names is not None else self.config.scheduler_names

    def served(self, gang: Gang) -> bool:
        return gang.served_by(self.names())

    def has_work(self) -> bool:
        """Any pending pod we serve (`translations.serving.serves`) not in a gang with a job in
        flight? (Cheap: it spares the full view while a burst of bindings streams back.)"""
        names, busy, assumed = self.names(), self._jobs, self.cache.assumed
        return any(
            serves(pod, names, assumed=assumed) and not (busy and membership(pod)[0] in busy)
            for pod in self.cache.pods.items.values()
        )

    def waiting_since(self) -> list[float]:
        """When each pending gang's wait began (`metrics.track_pending_gangs`)."""
        first_seen = self.timing.first_seen
        return [first_seen[k] for k in self.pending if k in first_seen]

    def _forget(self, live: Collection[str]) -> None:
        """Gangs gone from the cluster leave the reported verdicts and the pending ones."""
        for k in [k for k in self._reported if k not in live]:
            del self._reported[k]
        self._forget_pending(live)

    def _forget_pending(self, keep: Collection[str]) -> None:
        gone = [k for k in self.pending if k not in keep]
        for k in gone:
            del self.pending[k]
        if gone:
            self._publish_pending()

    def _note_pending(self, gang: Gang, outcome: Outcome) -> None:
        if outcome.code is Code.SUCCESS:
            self.pending.pop(gang.key, None)
        else:
            self.pending[gang.key] = (gang.namespace, gang.source, outcome.condition or outcome.code.value)

    def _publish_pending(self) -> None:
        metrics.set_pending_by_reason(Counter(self.pending.values()))

    def _publish_room(self, snap: Snapshot | None = None) -> None:
        """Refresh the free room per tier at most every `room_period` seconds: from the cycle's
        snapshot after its reservations, or from a fresh view when no cycle ran."""
        now = time.monotonic()
        if now - self._room_at < self.config.room_period:
            return
        self._room_at = now
        try:
            metrics.set_tier_room(tier_room(snap if snap is not None else self.cache.state.view().snapshot))
        except Exception as exc:  # a metric is never worth a cycle
            metrics.SCHEDULER_ERRORS.labels("room").inc()
            log.error("scheduler.room_failed", error=failure_text(exc), exc_info=exc)

    async def run_cycle(self) -> None:
        if not self.has_work():
            # Every pending pod we serve is in a gang with a job in flight: the others wait no more.
            self._forget_pending(self._jobs.keys())
            self._publish_room()
            return
        self.cycles += 1
        t0 = time.perf_counter()
        try:
            view = self.cache.state.view()
        except Exception:
            self.cache.state.invalidate()  # the next cycle rebuilds the view from the objects
            metrics.SCHEDULER_ERRORS.labels("view").inc()
            raise
        t_view = time.perf_counter() - t0
        cycle = SchedulingCycle(
            view,
            served=self.names(),
            now=time.monotonic(),
            timing=self.timing,
            busy=set(self._jobs),
            assembly_grace=self.config.assembly_grace,
            options=self.config.cycle_options(),
        )
        live = view.gangs.keys()
        self._forget(live)
        planned = 0
        for gang in cycle.queue():
            if self.stopping:
                return
            if not self.served(gang):
                continue  # handed off since the cycle began
            outcome = cycle.attempt(gang)
            metrics.SCHEDULING_ATTEMPTS.labels(outcome.code.value).inc()
            if outcome.guarded:
                self._guard_fired(gang, outcome)
            if outcome.code is Code.ERROR:
                metrics.SCHEDULER_ERRORS.labels("gang").inc()
                log.error(
                    "scheduler.gang_failed", gang=gang.key, error=outcome.message, exc_info=outcome.exception
                )
            self._apply(gang, outcome, cycle)
            self._note_pending(gang, outcome)
            planned += 1
            await asyncio.sleep(0)  # let bind jobs and informers breathe between gangs
        self._publish_pending()
        self._publish_room(view.snapshot)
        log.debug(
            "scheduler.cycle",
            cycle=self.cycles,
            gangs=planned,
            view_seconds=round(t_view, 3),
            seconds=round(time.perf_counter() - t0, 3),
        )

    def _guard_fired(self, gang: Gang, outcome: Outcome) -> None:
        """The wall-clock guard, not the step budget, stopped this attempt's search: its plan
        may differ from `simulate`'s. Counted, logged, and an Event on the gang."""
        metrics.ATTEMPT_GUARD_FIRED.inc()
        log.warning("scheduler.attempt_guard_fired", gang=gang.key, cycle=self.cycles, why=outcome.guarded)
        task = spawn(
            f"guard-event:{gang.key}",
            self._event_on_group(gang, "Warning", ATTEMPT_GUARD_REASON, f"{outcome.guarded}."),
            forever=False,
        )
        self._notices.add(task)
        task.add_done_callback(self._notices.discard)

    # --- decisions -------------------------------------------------------------------

    def _apply(self, gang: Gang, outcome: Outcome, cycle: SchedulingCycle) -> None:
        """Turn one gang's result into API work: nothing here decides anything."""
        bind, preemption, fired = cycle.plan.added_for(gang.key)
        if bind is not None:
            log.debug(
                "scheduler.bind_planned",
                gang=gang.key,
                cycle=self.cycles,
                pods=bind.pods,
                domain=bind.domain,
                tier=bind.tier,
                generation=self.cache.state.generation,
            )
            for key, node in bind.pods:
                self.cache.assume(key, node)
            self._start(gang.key, self._bind_job(gang, bind))
        elif preemption is not None:
            self._start(gang.key, self._preempt_job(gang, preemption, outcome))
        elif fired is not None:
            self._reported[gang.key] = reported(gang, outcome)
            self._start(gang.key, self._expire_job(gang, fired, outcome), wake=False)
        elif outcome.code is Code.ERROR:
            self._reported[gang.key] = reported(gang, outcome)
            self._start(gang.key, self._error_job(gang, outcome), wake=False)
        elif outcome.report and self._reported.get(gang.key) != (said := reported(gang, outcome)):
            # Only a changed verdict is written: an unschedulable gang costs nothing per cycle.
            self._reported[gang.key] = said
            self._start(
                gang.key, self._report_job(gang, outcome, brief=_brief(gang, cycle, outcome)), wake=False
            )

    def _start(self, key: str, coro: Coroutine[Any, Any, None], *, wake: bool = True) -> None:
        task = spawn(f"gang:{key}", coro, forever=False)
        self._jobs[key] = task

        def done(t: asyncio.Task[None]) -> None:
            if self._jobs.get(key) is t:
                del self._jobs[key]
            if wake:
                self._wake.set()  # what the job changed may let another gang go

        task.add_done_callback(done)

    async def _bind_job(self, gang: Gang, bind: Bind) -> None:
        already, domain, tier = list(bind.already_bound), bind.domain, bind.tier
        out: BindOutcome = await self.binder.bind_gang(
            gang.key,
            list(bind.pods),
            min_member=bind.min_member,
            already_bound=already,
            annotations=bind.annotations,
        )
        if out.result != "complete" or out.failed or out.unfinished:
            # Members that could not be bound wait before the next try, even when the gang
            # holds minMember without them (else a refused extra member is retried hot).
            self.timing.bind_failed(gang.key, time.monotonic())
        if out.result == "complete":
            metrics.GANGS_PLACED.inc()
            since = self.timing.bound(gang.key)
            if since is not None:
                metrics.SCHEDULING_LATENCY.observe(time.monotonic() - since)
            for key in out.bound:
                await self.status.clear_nomination(key)
            where = f"node {domain}" if tier == 0 else f"{domain} (tier {tier})"
            await self.status.pod_group(
                gang,
                phase="Running",
                condition=SCHEDULED,
                reason=READY_REASON,
                message=f"{len(out.bound) + len(already)} pods bound in {where}",
            )
            await self._events_scheduled(gang, dict(bind.pods), out.bound, where)
        elif out.result == "rolled-back":
            message = (
                f"gang {gang.name}: binding could not complete ({out.why()}); "
                f"deleted {len(out.rolled_back)} bound member(s) for their owners to recreate"
            )
            await self._event_on_group(gang, "Warning", "GangRolledBack", message)
            await self.status.pod_group(
                gang, phase="Pending", condition=UNSCHEDULABLE, reason="GangRolledBack", message=message
            )

    async def _preempt_job(self, gang: Gang, preemption: Preemption, outcome: Outcome) -> None:
        await self.preemptor.carry_out(preemption.plan, preemption.message, messages=outcome.pod_messages)
        short = preempting_message(preemption.message, preemption.plan.describe())
        await self.status.pod_group(
            gang, phase="Pending", condition=UNSCHEDULABLE, reason="Preempting", message=short
        )
        await self._events_failed(gang, preemption.message, outcome.pod_messages)

    async def _report_job(
        self, gang: Gang, outcome: Outcome, *, reason: str | None = None, brief: str = ""
    ) -> None:
        """Each pending pod's own message, and the verdict on the PodGroup (with `brief`, the
        explanation's short form: the best domain per tier, the tier limit)."""
        await self.status.pods_unschedulable(
            gang, outcome.message, reason=outcome.condition or UNSCHEDULABLE, messages=outcome.pod_messages
        )
        message = with_brief(outcome.message, brief)
        reason = reason or pod_group_reason(gang, outcome)
        await self.status.pod_group(
            gang, phase="Pending", condition=UNSCHEDULABLE, reason=reason, message=message
        )
        await self._events_failed(gang, outcome.message, outcome.pod_messages)
        if self.status.volcano_pod_group(gang) is not None:
            await self._event_on_group(
                gang, "Warning", UNSCHEDULABLE, self.status.unschedulable_message(gang, message)
            )

    async def _error_job(self, gang: Gang, outcome: Outcome) -> None:
        """The attempt failed: the pods, the PodGroup and an Event say what failed (never a
        traceback: that goes to the log), once per streak of the same message."""
        await self._report_job(gang, outcome, reason=SCHEDULING_ERROR_REASON)
        await self._event_on_group(gang, "Warning", SCHEDULING_ERROR_REASON, outcome.message)

    async def _expire_job(self, gang: Gang, fired: Expiry, outcome: Outcome) -> None:
        """The gang's timeout fired: its nominations go, and the PodGroup and an Event say so."""
        for m in gang.pending:
            await self.status.clear_nomination(m.key)
        await self._report_job(gang, outcome, reason=TIMEOUT_REASON)
        await self._event_on_group(gang, "Warning", TIMEOUT_REASON, fired.message)

    async def _events_failed(self, gang: Gang, message: str, messages: Mapping[str, str]) -> None:
        """kube-scheduler's `FailedScheduling` on every pending member, with its own short
        message (the recorder aggregates repeats)."""
        if self.recorder is None:
            return
        for m in gang.pending:
            ref = {"apiVersion": "v1", "kind": "Pod", "metadata": m.pod.metadata.to_dict()}
            text = short_message(messages.get(m.key, message))
            await self.recorder.event(ref, "Warning", FAILED_SCHEDULING, text)

    async def _events_scheduled(
        self, gang: Gang, planned: Mapping[str, str], bound: Collection[str], where: str
    ) -> None:
        """kube-scheduler's `Scheduled` on every pod bound, and the gang's on its PodGroup (or
        its first pod). A pod alone gets its own only: a second Event on it would say nothing
        new and cost a request per pod that kube-scheduler does not make."""
        if self.recorder is None:
            return
        members = {m.key: m.pod for m in gang.pods}
        for key in bound:
            pod = members.get(key)
            if pod is None:
                continue
            ref = {"apiVersion": "v1", "kind": "Pod", "metadata": pod.metadata.to_dict()}
            await self.recorder.event(
                ref, "Normal", SCHEDULED, f"Successfully assigned {key} to {planned.get(key, '')}"
            )
        if gang.source == "none" and len(gang.pods) == 1 and self.status.volcano_pod_group(gang) is None:
            return
        await self._event_on_group(
            gang, "Normal", SCHEDULED, f"gang {gang.name}: {len(bound)} pods bound in {where}"
        )

    async def _event_on_group(self, gang: Gang, type_: str, reason: str, message: str) -> None:
        if self.recorder is None:
            return
        pg = self.status.volcano_pod_group(gang)
        if pg is not None:
            obj = pg.to_dict()
        else:
            first = gang.pods[0].pod
            obj = {"apiVersion": "v1", "kind": "Pod", "metadata": first.metadata.to_dict()}
        await self.recorder.event(obj, type_, reason, message)  # type: ignore[arg-type]


async def serve(
    scheduler: GangScheduler,
    handoff: HandOff,
    synced: Callable[[], bool],
    *,
    recorder: EventRecorder | None = None,
) -> None:
    """Run the scheduler for the names `handoff` leaves to topobridge (it asks
    `handoff.served_names()` before every gang). When another scheduler of a served name
    appears, gangs of that name are no longer planned (binds in flight finish: a gang is
    never left half-bound), bound pods stay where they are, and each pending pod of that
    name gets an Event saying who schedules it now."""

    changes: asyncio.Queue[tuple[str, bool, str]] = asyncio.Queue()
    handoff.listen(lambda name, present, why: changes.put_nowait((name, present, why)))

    async def tell() -> None:
        while True:
            name, present, why = await changes.get()
            log.info(
                "scheduler.handed_off" if present else "scheduler.taken_over", scheduler=name, reason=why
            )
            if present and recorder is not None:
                await _tell_pending(scheduler, recorder, name, why)

    log.info("scheduler.started", names=list(handoff.config.scheduler_names))
    await run_roots(
        {"scheduler-loop": scheduler.run(synced), "handoff-events": tell()},
        grace=scheduler.config.grace + 5.0,  # the loop's own drain takes up to its grace
    )


def _brief(gang: Gang, cycle: SchedulingCycle, outcome: Outcome) -> str:
    """The explanation's short form on the cycle's snapshot, after a verdict about room (the
    outcome's Step says); "" when it cannot be had (a report is never held back by it)."""
    if gang.error or not gang.pending:
        return ""
    try:
        return brief(gang, cycle.snapshot, outcome.step)
    except Exception as exc:
        log.warning("scheduler.brief_failed", gang=gang.key, error=failure_text(exc), exc_info=exc)
        return ""


def pod_group_reason(gang: Gang, outcome: Outcome) -> str:
    """The reason on the PodGroup's Unschedulable condition: the pods' own word when they have
    one (`SchedulingGated`), Volcano's `NotEnoughTasks` while fewer pods than minMember exist,
    the verdict's code for a gang that cannot be read, else Volcano's `NotEnoughResources`."""
    if outcome.condition:
        return outcome.condition
    if len(gang.pods) < gang.min_member:
        return NOT_ENOUGH_TASKS
    if gang.error:
        return outcome.code.value
    return NOT_ENOUGH_RESOURCES


FAILED_SCHEDULING = "FailedScheduling"
HANDED_OFF_REASON = "HandedOff"
SCHEDULING_ERROR_REASON = "SchedulingError"
ATTEMPT_GUARD_REASON = "AttemptGuardFired"


async def _tell_pending(scheduler: GangScheduler, recorder: EventRecorder, name: str, why: str) -> None:
    """An Event on every pending pod of `name`: topobridge leaves it to the other scheduler."""
    for pod in list(scheduler.cache.pods.items.values()):
        if not serves(pod, (name,), assumed=scheduler.cache.assumed):
            continue
        ref = {"apiVersion": "v1", "kind": "Pod", "metadata": pod.metadata.to_dict()}
        await recorder.event(
            ref, "Normal", HANDED_OFF_REASON, f"{name} is running ({why}): topobridge leaves this pod to it"
        )
