"""The controller of one replica: leader election, and inside the leading scope the reconcilers,
the scheduler hand-off probes and the fallback scheduler.

Every replica runs `Manager.run()`; only the lease holder gets past `acquire`. What the leader
runs (reconcilers' workers, the scheduler, the hand-off probes) is built in `lead()` and
cancelled as one scope when the lease is lost; `run()` raises LeadershipLost then, and the
process exits and is restarted, as client-go controllers do.

The informers are not the leader's own: they come from the process's `SharedInformers`, so a
resource the webhook already watches (pods, HyperNodes, the ClusterNetworkTopology,
LeaderWorkerSets) is not watched a second time on the leader. The parts are a table
(`RECONCILERS`): each reconciler declares the informers it reads (`watches`), and `lead()`
loops over the table. The leader's tasks run under `aiotasks.run_roots` with the configured
grace.

Three clients, three request budgets (kube-scheduler splits its clients the same way): the
main one for watches and the writes that converge the cluster (binds first of all), one for
Events and status reports, and one for leader election alone, so a burst of binds never
delays a lease renewal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import structlog

from controller import metrics
from controller.aiotasks import cancel_and_wait, run_roots, spawn
from controller.clock import Clock, MonotonicClock
from controller.errors import ControllerError, LeadershipLost
from controller.handoff import HandOff, HandOffConfig
from controller.informer import Informer, SharedInformers
from controller.kube import Kube, KubeSettings
from controller.leaderelection import KubeLeaseLock, LeaderCallbacks, LeaderElectionConfig, LeaderElector
from controller.reconcile import Controller, Outcome
from controller.reconcilers.hypernodes import HyperNodeReconciler
from controller.reconcilers.koordinator import KoordinatorReconciler
from controller.reconcilers.lws import LwsReconciler
from controller.reporting import EventRecorder
from controller.resources import Resource, served_resources

if TYPE_CHECKING:
    from controller.runtime.scheduler import WarmCache

log = structlog.get_logger(__name__)

LEASE_CLIENT = KubeSettings(qps=5.0, burst=10, connection_pool=2)
"""Leader election's own budget: one renewal every retry period needs far less."""


@dataclass
class ControllerOptions:
    """What the controller does; each part can be switched off."""

    reconcile_lws: bool = True
    """Keep each LeaderWorkerSet group's PodGroup topology in step."""
    translate_koordinator: bool = False
    """Translate Koordinator gangs into Volcano PodGroups and pod patches."""
    reconcile_hypernodes: bool = True
    """Keep HyperNodes in step with the ClusterNetworkTopology and node labels."""
    fallback_scheduler: bool = True
    """Place and bind gangs of the served schedulerNames."""
    handoff: HandOffConfig = field(default_factory=HandOffConfig)
    """The schedulerNames served, and how to tell that another scheduler of a name runs."""
    workers: int = 4
    """Workers per reconciler (each reconcile waits on a few API round trips)."""
    resync_period: float = 300.0
    """Seconds between full re-reports of every cached object."""
    leader_election: LeaderElectionConfig | None = field(default_factory=LeaderElectionConfig)
    """None: lead unconditionally (single replica, development)."""
    identity: str = ""
    """Reported in Events; the lease identity when leader election is on."""
    grace: float = 30.0
    """Seconds the leader's tasks get to wind down (gangs in flight finish or roll back)."""
    scheduler_tuning: dict[str, Any] = field(default_factory=dict)
    """Extra SchedulerConfig fields (period, grace, bind_retry_deadline, enable_preemption...)."""


class WatchingReconciler(Protocol):
    """A reconciler as the manager builds it: an informer for each resource it `watches`,
    under the same name, and the settings its table row adds."""

    kind: ClassVar[str]
    watches: ClassVar[Mapping[str, Resource]]
    max_workers: ClassVar[int | None]

    def __init__(
        self, kube: Kube, reads: Mapping[str, Informer], *, recorder: EventRecorder, **settings: Any
    ) -> None: ...

    def wire(self, enqueue: Callable[[str], None]) -> None: ...

    async def reconcile(self, key: str) -> Outcome: ...


@dataclass(frozen=True, slots=True)
class ReconcilerPart:
    """One row of the table: a reconciler and the option that switches it on."""

    reconciler: type[WatchingReconciler]
    enabled: Callable[[ControllerOptions], bool]
    settings: Callable[[ControllerOptions], dict[str, Any]] = lambda _o: {}
    """Further constructor arguments taken from the options."""


RECONCILERS: tuple[ReconcilerPart, ...] = (
    ReconcilerPart(LwsReconciler, lambda o: o.reconcile_lws),
    ReconcilerPart(
        HyperNodeReconciler,
        lambda o: o.reconcile_hypernodes,
        # koord-scheduler owns the CNT's status while it runs: the hand-off's rule says when.
        lambda o: {"koordinator": o.handoff.rule_of("koord-scheduler")},
    ),
    ReconcilerPart(KoordinatorReconciler, lambda o: o.translate_koordinator),
)


@dataclass
class LeaderScope:
    """What one term of leadership built; handed to the parts that run inside it."""

    kube: Kube
    options: ControllerOptions
    informers: SharedInformers
    recorder: EventRecorder
    handoff: HandOff
    controllers: list[Controller] = field(default_factory=list)
    scheduler: Any = None
    """The GangScheduler while the fallback scheduler is on (for tests and metrics)."""


class Manager:
    """Runs the controller for one replica; see the module docstring."""

    def __init__(
        self,
        kube: Kube,
        options: ControllerOptions,
        *,
        informers: SharedInformers | None = None,  # None: the manager keeps its own
        clock: Clock | None = None,
    ) -> None:
        self.kube = kube
        self.options = options
        self.clock = clock or MonotonicClock()
        self.informers = informers
        le = options.leader_election
        self.identity = (le.identity if le else options.identity) or options.identity or "topobridge"
        self.elector: LeaderElector | None = None
        self.lease_kube: Kube | None = None
        self.scope: LeaderScope | None = None
        self.warm: WarmCache | None = None
        """The scheduler's cache filled while standing by (`stand_by`)."""
        if le is not None:
            # Its own connections and budget: a renewal never queues behind binds.
            self.lease_kube = kube.fork(
                settings=KubeSettings(
                    qps=LEASE_CLIENT.qps,
                    burst=LEASE_CLIENT.burst,
                    connection_pool=LEASE_CLIENT.connection_pool,
                    request_timeout=le.request_timeout,
                    impersonate=kube.settings.impersonate,
                )
            )
            lock = KubeLeaseLock(
                self.lease_kube,
                name=le.lease_name,
                namespace=le.lease_namespace,
                identity=le.identity,
                timeout=le.request_timeout,
            )
            self.elector = LeaderElector(
                le,
                lock,
                clock=self.clock,
                callbacks=LeaderCallbacks(
                    on_started_leading=lambda: metrics.IS_LEADER.set(1),
                    on_stopped_leading=lambda: metrics.IS_LEADER.set(0),
                ),
            )

    async def run(self) -> None:
        """Lead when elected; raise LeadershipLost if the lease is lost. Standing by, the
        scheduler's cache is filled already (`stand_by`)."""
        warming: asyncio.Task[None] | None = None
        try:
            if self.elector is None:
                await self.lead()
                return
            warming = await self.stand_by()
            lost = await self.elector.run(self.lead)
            if lost:
                raise LeadershipLost(f"lost the lease {self.elector.lock.describe()} as {self.identity}")
        finally:
            if warming is not None:
                await cancel_and_wait([warming], grace=1.0)
            if self.lease_kube is not None:
                await self.lease_kube.close()

    async def stand_by(self) -> asyncio.Task[None] | None:
        """Fill the fallback scheduler's cache from the process's informers before leading
        (`WarmCache`), as kube-scheduler's standby keeps its informers running: a takeover then
        costs the lease and a cycle, not a first list and a cold build. Returns the task that
        cuts the first view once they have listed; None when there is nothing to warm (no
        scheduler, or informers of the leader's own) or discovery fails (the leader starts
        cold, as before)."""
        opts = self.options
        if not opts.fallback_scheduler or self.informers is None:
            return None
        from controller.runtime.scheduler import WarmCache

        try:
            served = await served_resources(self.kube.serves)
        except ControllerError as exc:
            log.warning("controller.standby_not_warmed", error=str(exc))
            return None
        label = opts.scheduler_tuning.get("gpu_nvlink_label")
        extra = {} if label is None else {"nvlink_label": label}
        self.warm = WarmCache.attach(self.informers.of, served, **extra)
        return spawn("scheduler-warmup", self.warm.prepare(), forever=False)

    async def lead(self) -> None:
        """Everything the leader runs, as one scope of named root tasks."""
        opts = self.options
        roots: dict[str, Coroutine[Any, Any, None]] = {}
        informers = self.informers
        if informers is None:
            informers = SharedInformers(self.kube, resync_period=opts.resync_period, clock=self.clock)
            roots["informers"] = informers.run(grace=opts.grace)
        # Events get a request budget of their own (kube-scheduler's event client does too):
        # reporting never slows the writes that converge the cluster.
        events_kube = Kube.from_api_client(self.kube.api, settings=self.kube.settings)
        recorder = EventRecorder(events_kube, instance=self.identity, clock=self.clock)
        handoff = HandOff(self.kube, opts.handoff, clock=self.clock)
        scope = LeaderScope(self.kube, opts, informers, recorder, handoff)

        for part in RECONCILERS:
            if not part.enabled(opts):
                continue
            reads = {arg: informers.of(res) for arg, res in part.reconciler.watches.items()}
            rec = part.reconciler(self.kube, reads, recorder=recorder, **part.settings(opts))
            workers = min(opts.workers, rec.max_workers or opts.workers)
            ctl = Controller(rec, workers=workers, clock=self.clock)
            rec.wire(ctl.enqueue)
            scope.controllers.append(ctl)

        if opts.fallback_scheduler:
            from controller.runtime.scheduler import GangScheduler, SchedulerConfig, serve

            # Pod/PodGroup status and Events share the reporting budget: never slower binding.
            served = await served_resources(self.kube.serves)
            # The standby's cache when discovery still finds what it found then (a CRD
            # installed or removed since: a cache of the leader's own, read afresh).
            warm = self.warm if self.warm is not None and self.warm.resources == served else None
            sched = GangScheduler(
                self.kube,
                events_kube,
                SchedulerConfig(scheduler_names=opts.handoff.scheduler_names, **opts.scheduler_tuning),
                recorder=recorder,
                served_names=handoff.served_names,
                warm=warm,
            )
            watched: list[Informer] = sched.attach(informers.of, served)
            scope.scheduler = sched
            metrics.track_pending_gangs(sched.waiting_since)
            roots["scheduler"] = serve(
                sched, handoff, lambda: all(i.synced.is_set() for i in watched), recorder=recorder
            )
            roots["handoff"] = handoff.run()

        for ctl in scope.controllers:
            roots[f"controller:{ctl.kind}"] = ctl.run()

        self.scope = scope
        log.info(
            "controller.leading",
            identity=self.identity,
            tasks=sorted(roots),
            watching=sorted(str(r) for r in informers.resources()),
        )
        try:
            await run_roots(roots, grace=opts.grace)
        finally:
            self.scope = None
            metrics.track_pending_gangs(None)  # only the leader reports pending gangs
            metrics.set_pending_by_reason({})
