"""Prometheus metrics of the admission server, in a registry of its own (one per server, so
tests and benchmarks can run several).

The answers themselves (requests, denials, warnings, latency) are counted in plain integers,
one `AnswerSeries` per (kind, operation, outcome), and turned into metric families only when
/metrics is read. prometheus_client's Counter and Histogram cost a few Python calls and a lock
per increment and per bucket, four updates an answer, on the admission hot path. The text on
/metrics is the same either way (`tests/webhooks/test_answer_metrics.py`).
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

CONTENT_TYPE = CONTENT_TYPE_LATEST
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
_LE = (*(repr(bound) for bound in LATENCY_BUCKETS), "+Inf")
"""The buckets' `le` labels, as prometheus_client writes them."""


@dataclass(slots=True, eq=False)
class AnswerSeries:
    """The answers of one (kind, operation, outcome) so far."""

    kind: str
    operation: str
    allowed: bool
    created: float = field(default_factory=time.time)
    answers: int = 0
    warnings: int = 0
    latency_sum: float = 0.0
    latency_counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))
    """Answers per latency bucket, not cumulative; the last one is beyond every bound."""


class AnswerStats(Collector):
    """Every `AnswerSeries`, and their metric families when the registry is read."""

    def __init__(self) -> None:
        self._series: dict[tuple[str, str, bool], AnswerSeries] = {}
        # Answers judged on a worker thread (large reviews) count here too.
        self._lock = threading.Lock()

    def series(self, kind: str, operation: str, allowed: bool) -> AnswerSeries:
        found = self._series.get((kind, operation, allowed))
        if found is None:
            with self._lock:
                found = self._series.setdefault(
                    (kind, operation, allowed), AnswerSeries(kind, operation, allowed)
                )
        return found

    def record(self, series: AnswerSeries, warnings: int, seconds: float) -> None:
        bucket = bisect.bisect_left(LATENCY_BUCKETS, seconds)  # `le`: a bound counts as inside
        with self._lock:
            series.answers += 1
            series.warnings += warnings
            series.latency_sum += seconds
            series.latency_counts[bucket] += 1

    def collect(self) -> Iterator[Metric]:
        with self._lock:  # copies: answers go on counting while the families are built
            snapshot = [replace(s, latency_counts=list(s.latency_counts)) for s in self._series.values()]
        requests = CounterMetricFamily(
            "topobridge_webhook_requests",
            "Admission reviews answered, by kind, operation and outcome.",
            labels=["kind", "operation", "outcome"],
        )
        denials = CounterMetricFamily(
            "topobridge_webhook_denials", "Objects denied, by kind.", labels=["kind"]
        )
        warned = CounterMetricFamily(
            "topobridge_webhook_warnings", "Warnings returned to clients, by kind.", labels=["kind"]
        )
        latency = HistogramMetricFamily(
            "topobridge_webhook_request_duration_seconds",
            "Time from request to response, by kind.",
            labels=["kind"],
        )
        by_kind: dict[str, _KindTotals] = {}
        for s in snapshot:
            outcome = "allowed" if s.allowed else "denied"
            requests.add_metric([s.kind, s.operation, outcome], s.answers, created=s.created)
            by_kind.setdefault(s.kind, _KindTotals(created=s.created)).add(s)
        for kind, t in by_kind.items():
            # As prometheus_client's children: a kind's series shows once it has counted something.
            if t.denials:
                denials.add_metric([kind], t.denials, created=t.created)
            if t.warnings:
                warned.add_metric([kind], t.warnings, created=t.created)
            cumulative, buckets = 0, []
            for le, count in zip(_LE, t.latency_counts, strict=True):
                cumulative += count
                buckets.append((le, float(cumulative)))
            latency.add_metric([kind], buckets, t.latency_sum)
            latency.samples.append(Sample(latency.name + "_created", {"kind": kind}, t.created))
        yield from (requests, denials, warned, latency)


@dataclass(slots=True)
class _KindTotals:
    """The series of one kind added up: its denials, warnings and latency."""

    created: float
    denials: int = 0
    warnings: int = 0
    latency_sum: float = 0.0
    latency_counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))

    def add(self, s: AnswerSeries) -> None:
        self.created = min(self.created, s.created)
        if not s.allowed:
            self.denials += s.answers
        self.warnings += s.warnings
        self.latency_sum += s.latency_sum
        self.latency_counts = [a + b for a, b in zip(self.latency_counts, s.latency_counts, strict=True)]


class WebhookMetrics:
    """Requests by kind and outcome, denials, warnings, latency (`answers`), refused requests
    and closed connections."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.answers = AnswerStats()
        self.registry.register(self.answers)
        self.rejected = Counter(
            "topobridge_webhook_rejected_requests",
            "Requests refused before any rule ran, by HTTP status.",
            ["status"],
            registry=self.registry,
        )
        self.connections_closed = Counter(
            "topobridge_webhook_connections_closed",
            "Connections the server closed before a request: headers too late, or over the cap.",
            ["reason"],
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
