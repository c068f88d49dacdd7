"""Prometheus metrics of the controller, named once here and served by `topobridge run`.

Reconcilers report per kind (`LeaderWorkerSet`, `ClusterNetworkTopology`, ...); the scheduler
runtime reports gangs, pods bound, latency, preemptions and victims; work queues expose
their depth through a callback so nothing has to remember to update it, and so do the
scheduler's pending gangs (`track_pending_gangs`): how many wait and how long the oldest has
waited are computed when /metrics is read, so the age grows between scheduling cycles too.
Two gauges, not one per gang: a series per gang would grow with every job ever submitted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from controller.placer.room import TierRoom

NAMESPACE = "topobridge"

RECONCILES = Counter(
    "reconciles",
    "Reconcile calls, by kind and outcome (done, requeue, error).",
    ["kind", "outcome"],
    namespace=NAMESPACE,
)
RECONCILE_ERRORS = Counter(
    "reconcile_errors",
    "Reconciles that raised, by kind and error class.",
    ["kind", "error"],
    namespace=NAMESPACE,
)
RECONCILE_LATENCY = Histogram(
    "reconcile_duration_seconds",
    "Time spent in one reconcile call, by kind.",
    ["kind"],
    namespace=NAMESPACE,
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
QUEUE_DEPTH = Gauge("workqueue_depth", "Keys waiting in a work queue.", ["queue"], namespace=NAMESPACE)
QUEUE_DELAYED = Gauge(
    "workqueue_delayed", "Keys waiting for a delay or backoff.", ["queue"], namespace=NAMESPACE
)
GANGS_PLACED = Counter("gangs_placed", "Gangs bound in full by the fallback scheduler.", namespace=NAMESPACE)
GANGS_ROLLED_BACK = Counter(
    "gangs_rolled_back",
    "Gangs whose partial binding was rolled back after a bind failed.",
    namespace=NAMESPACE,
)
PODS_BOUND = Counter("pods_bound", "Pods bound by the fallback scheduler.", namespace=NAMESPACE)
SCHEDULING_LATENCY = Histogram(
    "gang_scheduling_duration_seconds",
    "From the moment a gang had minMember pods pending to the moment all were bound.",
    namespace=NAMESPACE,
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
SCHEDULING_ATTEMPTS = Counter(
    "scheduling_attempts",
    "Gang scheduling attempts, by result.",
    ["result"],
    namespace=NAMESPACE,
)
SCHEDULER_ERRORS = Counter(
    "scheduler_errors",
    "Failures inside the fallback scheduler, by where: a gang's attempt (`gang`, that gang backs "
    "off), building the cycle's view (`view`), or the cycle around them (`cycle`); none stops it.",
    ["where"],
    namespace=NAMESPACE,
)
PENDING_GANGS = Gauge(
    "pending_gangs",
    "Gangs the fallback scheduler has seen pending and not yet placed.",
    namespace=NAMESPACE,
)
PENDING_GANGS_BY_REASON = Gauge(
    "pending_gangs_by_reason",
    "Gangs the fallback scheduler attempted and could not place in its last cycle, by namespace, "
    "dialect (volcano, koordinator, lws, job, ...) and reason (the verdict: Unschedulable, "
    "Unresolvable, WaitingForVictims, SchedulingGated, Error, ...).",
    ["namespace", "dialect", "reason"],
    namespace=NAMESPACE,
)
TIER_LABELS = ["tier", "tier_name", "resource"]
TIER_FREE = Gauge(
    "tier_free",
    "A resource free on the schedulable nodes of a topology tier's domains, summed, in base units "
    "(cores for cpu, bytes for memory, pods for pods, devices for extended resources).",
    TIER_LABELS,
    namespace=NAMESPACE,
)
TIER_LARGEST_FREE = Gauge(
    "tier_largest_free",
    "The most of a resource free inside any one domain of a topology tier, in base units: the "
    "largest gang (in that resource) that domain can take now, before per-node fragmentation.",
    TIER_LABELS,
    namespace=NAMESPACE,
)
TIER_DOMAINS = Gauge(
    "tier_domains", "Domains in a topology tier.", ["tier", "tier_name"], namespace=NAMESPACE
)
OLDEST_PENDING_GANG_AGE = Gauge(
    "oldest_pending_gang_age_seconds",
    "Seconds the longest-waiting pending gang has waited to be placed; 0 when none waits.",
    namespace=NAMESPACE,
)
ATTEMPT_GUARD_FIRED = Counter(
    "attempt_guard_fired",
    "Scheduling attempts whose preemption search the wall-clock guard (--attempt-deadline) stopped "
    "before their step budget (--attempt-budget) was spent: their plan depends on the machine's load.",
    namespace=NAMESPACE,
)
PREEMPTIONS = Counter("preemptions", "Preemptions started for a gang.", namespace=NAMESPACE)
PREEMPTION_VICTIMS = Counter(
    "preemption_victims", "Pods evicted to make room for a gang.", namespace=NAMESPACE
)
KUBE_REQUESTS = Counter(
    "kube_requests",
    "Requests sent to the API server (watches excluded), by HTTP method.",
    ["method"],
    namespace=NAMESPACE,
)
KUBE_THROTTLE = Counter(
    "kube_client_throttle_seconds",
    "Seconds requests waited for the client-side rate limiter (--kube-api-qps/--kube-api-burst).",
    namespace=NAMESPACE,
)
OBJECTS_UNREADABLE = Counter(
    "objects_unreadable",
    "Objects from the API server holding a value nested deeper than topobridge reads, by resource "
    "and outcome: `trimmed` (only a managedFields entry's fieldsV1, which nothing reads, was "
    "dropped) or `left_out` (the object is missing from every cache).",
    ["resource", "outcome"],
    namespace=NAMESPACE,
)
EVENTS_DROPPED = Counter(
    "events_dropped",
    "Events not written because their object's spam-filter bucket was empty (client-go's: 25, "
    "then one per 5 minutes).",
    namespace=NAMESPACE,
)
IS_LEADER = Gauge("leader", "1 while this replica holds the controller lease.", namespace=NAMESPACE)
SCHEDULER_PRESENT = Gauge(
    "scheduler_present",
    "1 while the scheduler of this schedulerName is detected running (topobridge leaves its pods to it).",
    ["scheduler_name"],
    namespace=NAMESPACE,
)


def track_queue(name: str, depth: Callable[[], int], delayed: Callable[[], int]) -> None:
    """Read a queue's depth at scrape time."""
    QUEUE_DEPTH.labels(name).set_function(lambda: float(depth()))
    QUEUE_DELAYED.labels(name).set_function(lambda: float(delayed()))


def oldest_wait(waiting_since: Iterable[float], now: float) -> float:
    """Seconds the longest wait has lasted at `now`; 0 for none. An instant after `now` (a gang
    backing off after its schedule timeout, whose wait starts afresh then) counts as 0 s."""
    return max((max(0.0, now - since) for since in waiting_since), default=0.0)


def track_pending_gangs(
    waiting_since: Callable[[], Collection[float]] | None,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Read the fallback scheduler's pending gangs at scrape time.

    `waiting_since` returns, for every gang seen pending and not yet placed, the instant on
    `clock` its wait began. None (the scheduler stopped: leadership lost, shutdown) reads as
    no gang pending, so only the leading replica reports any.
    """
    if waiting_since is None:
        PENDING_GANGS.set_function(lambda: 0.0)
        OLDEST_PENDING_GANG_AGE.set_function(lambda: 0.0)
        return
    PENDING_GANGS.set_function(lambda: float(len(waiting_since())))
    OLDEST_PENDING_GANG_AGE.set_function(lambda: oldest_wait(waiting_since(), clock()))


def set_pending_by_reason(counts: Mapping[tuple[str, str, str], int]) -> None:
    """Replace every `pending_gangs_by_reason` series with `counts` ((namespace, dialect,
    reason) -> gangs): a combination no gang has any more leaves no series behind."""
    PENDING_GANGS_BY_REASON.clear()
    for (namespace, dialect, reason), n in counts.items():
        PENDING_GANGS_BY_REASON.labels(namespace, dialect, reason).set(n)


def set_tier_room(rooms: Iterable[TierRoom]) -> None:
    """Replace every per-tier series with `rooms` (`controller.placer.room.tier_room`): a tier
    or resource gone from the cluster leaves no series behind."""
    for gauge in (TIER_FREE, TIER_LARGEST_FREE, TIER_DOMAINS):
        gauge.clear()
    for room in rooms:
        tier = str(room.tier)
        TIER_DOMAINS.labels(tier, room.name).set(room.domains)
        for resource, free in room.free.items():
            TIER_FREE.labels(tier, room.name, resource).set(base_units(resource, free))
            TIER_LARGEST_FREE.labels(tier, room.name, resource).set(
                base_units(resource, room.largest[resource])
            )


def base_units(resource: str, units: int) -> float:
    """Scheduler units (millicores for cpu) in Prometheus' base units (cores)."""
    return units / 1000 if resource == "cpu" else float(units)


def registry() -> CollectorRegistry:
    return REGISTRY
