"""Prometheus metrics of the admission server, in a registry of its own (one per server, so
tests and benchmarks can run several)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST


class WebhookMetrics:
    """Requests by kind and outcome, denials, warnings, malformed reviews, latency."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.requests = Counter(
            "topobridge_webhook_requests",
            "Admission reviews answered, by kind, operation and outcome.",
            ["kind", "operation", "outcome"],
            registry=self.registry,
        )
        self.denials = Counter(
            "topobridge_webhook_denials",
            "Objects denied, by kind.",
            ["kind"],
            registry=self.registry,
        )
        self.warnings = Counter(
            "topobridge_webhook_warnings",
            "Warnings returned to clients, by kind.",
            ["kind"],
            registry=self.registry,
        )
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
        self.latency = Histogram(
            "topobridge_webhook_request_duration_seconds",
            "Time from request to response, by kind.",
            ["kind"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
