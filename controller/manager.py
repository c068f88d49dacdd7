"""Assemble the controller: informers, reconcilers, Volcano detection and the fallback
scheduler, all inside leader election's leading scope.

Every replica runs `Manager.run()`; only the lease holder gets past `acquire`. Everything
the leader does (watching, reconciling, scheduling) is built fresh in `lead()` and is
cancelled as one scope when the lease is lost, so a deposed leader keeps no stale cache and
no running loop. `run()` raises LeadershipLost then: the process should exit and be
restarted, as client-go controllers do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import structlog

from controller import metrics
from controller.aiotasks import cancel_and_wait, spawn
from controller.clock import Clock, MonotonicClock
from controller.errors import LeadershipLost
from controller.informer import Informer
from controller.kube import Kube
from controller.leaderelection import KubeLeaseLock, LeaderElectionConfig, LeaderElector
from controller.reconcile import Controller
from controller.reporting import EventRecorder
from controller.resources import (
    CLUSTER_NETWORK_TOPOLOGIES,
    HYPERNODES,
    LEADERWORKERSETS,
    NODES,
    PDB_VERSIONS,
    PODS,
    SIGS_PODGROUPS,
    VOLCANO_PODGROUPS,
    X_PODGROUPS,
    Resource,
)
from controller.volcano import VolcanoDetectionConfig, VolcanoDetector

log = structlog.get_logger(__name__)


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
    """Place and bind gangs while Volcano is absent."""
    scheduler_names: tuple[str, ...] = ("topobridge",)
    """Pods with one of these schedulerNames are scheduled by the fallback scheduler."""
    volcano: VolcanoDetectionConfig = field(default_factory=VolcanoDetectionConfig)
    """Where to look for Volcano."""
    workers: int = 4
    """Workers per reconciler (each reconcile waits on a few API round trips)."""
    resync_period: float = 300.0
    """Seconds between full re-reports of every cached object."""
    leader_election: LeaderElectionConfig | None = field(default_factory=LeaderElectionConfig)
    """None: lead unconditionally (single replica, development)."""
    identity: str = ""
    """Reported in Events; the lease identity when leader election is on."""
    scheduler_tuning: dict[str, Any] = field(default_factory=dict)
    """Extra SchedulerConfig fields (period, grace, bind_retry_deadline...)."""


class Informers:
    """One informer per resource, shared by every reconciler that reads it."""

    def __init__(self, kube: Kube, *, resync_period: float, clock: Clock) -> None:
        self.kube = kube
        self.resync_period = resync_period
        self.clock = clock
        self._by_resource: dict[Resource, Informer] = {}

    def of(self, resource: Resource) -> Informer:
        inf = self._by_resource.get(resource)
        if inf is None:
            inf = Informer(self.kube, resource, resync_period=self.resync_period, clock=self.clock)
            self._by_resource[resource] = inf
        return inf

    def all(self) -> list[Informer]:
        return list(self._by_resource.values())

    async def wait_synced(self) -> None:
        await asyncio.gather(*(inf.synced.wait() for inf in self._by_resource.values()))


SchedulerFactory = Callable[["LeaderScope"], Coroutine[Any, Any, None]]


@dataclass
class LeaderScope:
    """What one term of leadership built; handed to the parts that run inside it."""

    kube: Kube
    options: ControllerOptions
    informers: Informers
    recorder: EventRecorder
    detector: VolcanoDetector
    controllers: list[Controller] = field(default_factory=list)
    scheduler: Any = None
    """The GangScheduler while the fallback scheduler is on (for tests and metrics)."""


class Manager:
    """Runs the controller for one replica; see the module docstring."""

    def __init__(self, kube: Kube, options: ControllerOptions, *, clock: Clock | None = None) -> None:
        self.kube = kube
        self.options = options
        self.clock = clock or MonotonicClock()
        le = options.leader_election
        self.identity = (le.identity if le else options.identity) or options.identity or "topobridge"
        self.elector: LeaderElector | None = None
        self.scope: LeaderScope | None = None
        self.leading = asyncio.Event()
        if le is not None:
            lock = KubeLeaseLock(
                kube,
                name=le.lease_name,
                namespace=le.lease_namespace,
                identity=le.identity,
                timeout=le.request_timeout,
            )
            self.elector = LeaderElector(
                le,
                lock,
                clock=self.clock,
                on_started_leading=lambda: metrics.IS_LEADER.set(1),
                on_stopped_leading=lambda: metrics.IS_LEADER.set(0),
            )

    async def run(self) -> None:
        """Lead when elected; raise LeadershipLost if the lease is lost."""
        if self.elector is None:
            await self.lead()
            return
        lost = await self.elector.run(self.lead)
        if lost:
            raise LeadershipLost(f"lost the lease {self.elector.lock.describe()} as {self.identity}")

    async def lead(self) -> None:
        """Everything the leader runs, as one scope of named tasks."""
        opts = self.options
        informers = Informers(self.kube, resync_period=opts.resync_period, clock=self.clock)
        # Events get a request budget of their own (kube-scheduler's event client does too):
        # reporting never slows the writes that converge the cluster.
        events_kube = Kube.from_api_client(self.kube.api, settings=self.kube.settings)
        recorder = EventRecorder(events_kube, instance=self.identity, clock=self.clock)
        detector = VolcanoDetector(self.kube, opts.volcano, clock=self.clock)
        scope = LeaderScope(self.kube, opts, informers, recorder, detector)
        self.scope = scope
        roots: dict[str, Coroutine[Any, Any, None]] = {}

        if opts.reconcile_lws:
            from controller.reconcilers.lws import LwsReconciler

            lws_rec = LwsReconciler(
                self.kube,
                lws=informers.of(LEADERWORKERSETS),
                pods=informers.of(PODS),
                podgroups=informers.of(VOLCANO_PODGROUPS),
                recorder=recorder,
            )
            ctl = Controller(lws_rec, workers=opts.workers, clock=self.clock)
            lws_rec.wire(ctl.enqueue)
            scope.controllers.append(ctl)

        if opts.reconcile_hypernodes:
            from controller.reconcilers.hypernodes import HyperNodeReconciler

            hn_rec = HyperNodeReconciler(
                self.kube,
                cnts=informers.of(CLUSTER_NETWORK_TOPOLOGIES),
                nodes=informers.of(NODES),
                hypernodes=informers.of(HYPERNODES),
                recorder=recorder,
            )
            ctl = Controller(hn_rec, workers=1, clock=self.clock)  # one key: one worker is all it can use
            hn_rec.wire(ctl.enqueue)
            scope.controllers.append(ctl)

        if opts.translate_koordinator:
            from controller.reconcilers.koordinator import KoordinatorReconciler

            k_rec = KoordinatorReconciler(
                self.kube,
                sigs_pgs=informers.of(SIGS_PODGROUPS),
                x_pgs=informers.of(X_PODGROUPS),
                pods=informers.of(PODS),
                volcano_pgs=informers.of(VOLCANO_PODGROUPS),
                cnts=informers.of(CLUSTER_NETWORK_TOPOLOGIES),
                hypernodes=informers.of(HYPERNODES),
                recorder=recorder,
            )
            ctl = Controller(k_rec, workers=opts.workers, clock=self.clock)
            k_rec.wire(ctl.enqueue)
            scope.controllers.append(ctl)

        if opts.fallback_scheduler:
            from controller.runtime.scheduler import GangScheduler, SchedulerConfig, supervise

            # Pod/PodGroup status and Events share the reporting budget: never slower binding.
            sched = GangScheduler(
                self.kube,
                events_kube,
                SchedulerConfig(scheduler_names=opts.scheduler_names, **opts.scheduler_tuning),
                recorder=recorder,
            )
            watched = sched.attach(informers.of, pdbs=await self.kube.first_served(PDB_VERSIONS))
            scope.scheduler = sched
            roots["scheduler"] = supervise(sched, detector, lambda: all(i.synced.is_set() for i in watched))

        for extra in _extra_parts(scope):
            roots.update(extra)

        for inf in informers.all():
            roots[f"informer:{inf.name}"] = inf.run()
        for ctl in scope.controllers:
            roots[f"controller:{ctl.kind}"] = ctl.run()
        roots["volcano-detector"] = detector.run()

        tasks = [spawn(name, coro) for name, coro in roots.items()]
        log.info("controller.leading", identity=self.identity, tasks=sorted(roots))
        self.leading.set()
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.leading.clear()
            await cancel_and_wait(tasks, grace=15.0)
            self.scope = None
        for t in done:
            if not t.cancelled() and (exc := t.exception()) is not None:
                raise exc


def _extra_parts(scope: LeaderScope) -> list[dict[str, Coroutine[Any, Any, None]]]:
    """Reconcilers and the scheduler runtime that build on modules wired in later."""
    parts: list[dict[str, Coroutine[Any, Any, None]]] = []
    return parts
