"""The answers' metrics, counted in plain integers and rendered at scrape time, read on
/metrics exactly as prometheus_client's own Counter and Histogram would write them."""

from __future__ import annotations

import re
import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from webhooks.metrics import LATENCY_BUCKETS, WebhookMetrics

Answer = tuple[str, str, bool, int, float]

answers = st.lists(
    st.tuples(
        st.sampled_from(["pods", "leaderworkersets.leaderworkerset.x-k8s.io"]),
        st.sampled_from(["CREATE", "UPDATE"]),
        st.booleans(),
        st.integers(0, 3),
        # bucket bounds themselves included: `le` counts an answer that takes exactly the bound
        st.one_of(st.sampled_from(LATENCY_BUCKETS), st.floats(0, 5, allow_nan=False)),
    ),
    max_size=30,
)


def reference(recorded: list[Answer]) -> bytes:
    """What the server's metrics were before: one Counter or Histogram child per series."""
    registry = CollectorRegistry()
    requests = Counter("topobridge_webhook_requests", "Admission reviews answered, by kind, operation and outcome.", ["kind", "operation", "outcome"], registry=registry)  # fmt: skip
    denials = Counter("topobridge_webhook_denials", "Objects denied, by kind.", ["kind"], registry=registry)
    warnings = Counter("topobridge_webhook_warnings", "Warnings returned to clients, by kind.", ["kind"], registry=registry)  # fmt: skip
    latency = Histogram("topobridge_webhook_request_duration_seconds", "Time from request to response, by kind.", ["kind"], buckets=LATENCY_BUCKETS, registry=registry)  # fmt: skip
    for kind, operation, allowed, warned, seconds in recorded:
        requests.labels(kind, operation, "allowed" if allowed else "denied").inc()
        if not allowed:
            denials.labels(kind).inc()
        if warned:
            warnings.labels(kind).inc(warned)
        latency.labels(kind).observe(seconds)
    return generate_latest(registry)


def scraped(recorded: list[Answer]) -> bytes:
    metrics = WebhookMetrics()
    for kind, operation, allowed, warned, seconds in recorded:
        stats = metrics.answers
        stats.record(stats.series(kind, operation, allowed), warned, seconds)
    text = generate_latest(metrics.registry)
    return b"".join(
        line + b"\n" for line in text.splitlines() if b"rejected" not in line and b"connections" not in line
    )


def comparable(text: bytes) -> list[str]:
    """Samples sorted, `_created` values (clock readings) and sums to 9 digits."""
    lines = []
    for line in text.decode().splitlines():
        line = re.sub(r"(_created\{[^}]*\}) \S+", r"\1 T", line)
        line = re.sub(r"(_sum\{[^}]*\}) (\S+)", lambda m: f"{m[1]} {float(m[2]):.9g}", line)
        lines.append(line)
    return sorted(lines)


@settings(max_examples=200, deadline=None)
@given(answers)
def test_the_text_is_prometheus_clients_own(recorded: list[Answer]) -> None:
    assert comparable(scraped(recorded)) == comparable(reference(recorded))


def test_answers_counted_from_several_threads_are_all_counted() -> None:
    stats = WebhookMetrics().answers
    series = stats.series("pods", "CREATE", True)

    def answer() -> None:
        for _ in range(20_000):
            stats.record(series, 1, 0.001)

    threads = [threading.Thread(target=answer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (series.answers, series.warnings, series.latency_counts[1]) == (80_000, 80_000, 80_000)
