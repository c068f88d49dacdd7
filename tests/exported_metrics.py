"""The metrics topobridge exports, read from its real registries: the controller's
(`controller.metrics`, registered on the process-wide REGISTRY) and the admission server's
(`webhooks.metrics.WebhookMetrics`, a registry per server)."""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.metrics_core import Metric

import controller.metrics  # noqa: F401  (registers the controller's metrics)
from webhooks.metrics import WebhookMetrics

SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
"""The series Prometheus stores per family type, as the text format exposes them."""


def families() -> list[Metric]:
    """Every topobridge metric family, as prometheus_client names it (counters without `_total`)."""
    out: list[Metric] = []
    for registry in (REGISTRY, WebhookMetrics(CollectorRegistry()).registry):
        out.extend(f for f in registry.collect() if f.name.startswith("topobridge"))
    return out


def series_names() -> set[str]:
    """Every metric name a PromQL query over topobridge can use."""
    return {f.name + suffix for f in families() for suffix in SUFFIXES[f.type]}
