"""The documentation stays true to the code: every flag, metric, annotation and fixed status
text the code has is documented, and the docs name nothing the code does not have."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from prometheus_client import REGISTRY, CollectorRegistry

import controller.metrics  # noqa: F401  (registers the controller's metrics)
from controller.placer import affinity, engine, preempt
from controller.placer import gpu as gpu_placer
from controller.reconcilers import lws as lws_reconciler
from controller.runtime import scheduler
from topobridge.cli import build_parser
from translations import gpu, koordinator, lws, volcano
from webhooks.metrics import WebhookMetrics

DOCS = Path(__file__).resolve().parent.parent / "docs"


def doc(name: str) -> str:
    return (DOCS / name).read_text()


def run_flags() -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {s for a in sub.choices["run"]._actions for s in a.option_strings if s.startswith("--")} - {
        "--help"
    }


def test_every_run_flag_is_documented() -> None:
    text = doc("reference.md")
    missing = sorted(f for f in run_flags() if f"`{f}" not in text)
    assert missing == []


def test_documented_flags_exist() -> None:
    section = doc("reference.md").split("## topobridge run", 1)[1]
    named = set(re.findall(r"`(--[a-z][a-z-]+)", section))
    assert named - run_flags() - {"--log-level", "--log-format"} == set()


def exposed_metrics() -> set[str]:
    names = set()
    for registry in (REGISTRY, WebhookMetrics(CollectorRegistry()).registry):
        for family in registry.collect():
            if family.name.startswith("topobridge"):
                names.add(family.name + ("_total" if family.type == "counter" else ""))
    return names


def test_metrics_doc_matches_the_registries() -> None:
    documented = set(re.findall(r"`(topobridge_[a-z_]+)`", doc("metrics.md")))
    assert documented == exposed_metrics()


@pytest.mark.parametrize(
    "text",
    [
        engine.NOT_ELIGIBLE_TERMINATING,
        engine.NOT_ELIGIBLE_NEVER,
        engine.NO_VICTIMS,
        preempt.PREEMPTION_REASON,
        lws_reconciler.CONDITION,
        scheduler.HANDED_OFF_REASON,
        "preempting to accommodate higher priority pods, preemptor:",
        "gets rejected due to member Pod",
        "every member of a GangGroup must carry the same spec",
        *(" ".join(t.split()) for t in affinity.REASONS),
        gpu_placer.NVLINK_EXCLUSION,
    ],
)
def test_fixed_status_texts_are_explained(text: str) -> None:
    assert text in " ".join(doc("status.md").split())


@pytest.mark.parametrize(
    "key",
    [
        koordinator.GANG_NAME,
        koordinator.GANG_MIN_AVAILABLE,
        koordinator.GANG_TOTAL_NUMBER,
        koordinator.GANG_MODE,
        koordinator.GANG_WAITING_TIME,
        koordinator.GANG_GROUPS,
        koordinator.GANG_MATCH_POLICY,
        koordinator.NETWORK_TOPOLOGY_SPEC,
        koordinator.NETWORK_TOPOLOGY_INDEX,
        koordinator.SIGS_POD_GROUP_LABEL,
        lws.QUEUE_ANNOTATION,
        volcano.POD_TOPOLOGY_MODE_ANNOTATION,
        volcano.POD_TOPOLOGY_TIER_ANNOTATION,
        "topobridge.io/validation",
        "topobridge.io/validate",
        "scheduling.k8s.io/group-name",
        *gpu.KEYS,
        gpu_placer.TOPOLOGY_PATH_ANNOTATION,
        gpu_placer.RING_ORDER_ANNOTATION,
    ],
)
def test_annotations_and_labels_are_in_the_reference(key: str) -> None:
    assert key in doc("reference.md")


def test_links_between_docs_resolve() -> None:
    for page in DOCS.glob("*.md"):
        for target in re.findall(r"\]\(([a-z-]+\.md)(?:#[a-z-]+)?\)", page.read_text()):
            assert (DOCS / target).is_file(), f"{page.name} links to missing {target}"
