"""The documentation stays true to the code: every flag, metric, annotation and fixed status
text the code has is documented, and the docs name nothing the code does not have."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path
from typing import Any

import exported_metrics
import pytest

from controller.placer import cluster, preempt, timeout
from controller.placer import gpu as gpu_placer
from controller.placer.framework import Code
from controller.placer.plugins import (
    default_preemption,
    inter_pod_affinity,
    node_ports,
    pod_topology_spread,
    scheduling_gates,
)
from controller.reconcilers import lws as lws_reconciler
from controller.runtime import scheduler
from topobridge.cli import build_parser
from topobridge.ui import whatif
from translations import goregex, gpu, koordinator, kueue, lws, quantity, topology, volcano, volcano_job

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
    section = doc("reference.md").split("## topobridge run", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`(--[a-z][a-z-]+)", section))
    assert named - run_flags() - {"--log-level", "--log-format"} == set()


def exposed_metrics() -> set[str]:
    """Families as the doc names them: counters with `_total`, histograms by their base name."""
    return {f.name + ("_total" if f.type == "counter" else "") for f in exported_metrics.families()}


def test_metrics_doc_matches_the_registries() -> None:
    documented = set(re.findall(r"`(topobridge_[a-z_]+)`", doc("metrics.md")))
    assert documented == exposed_metrics()


@pytest.mark.parametrize(
    "text",
    [
        default_preemption.NOT_ELIGIBLE_TERMINATING,
        default_preemption.NOT_ELIGIBLE_NEVER,
        default_preemption.NO_VICTIMS,
        default_preemption.NO_VICTIMS_IN_TIME,
        preempt.PREEMPTION_REASON,
        lws_reconciler.CONDITION,
        scheduler.HANDED_OFF_REASON,
        "preempting to accommodate higher priority pods, preemptor:",
        "gets rejected due to member Pod",
        "every member of a GangGroup must carry the same spec",
        timeout.TIMEOUT_REASON,
        "without starting (timeout",
        inter_pod_affinity.AFFINITY,
        inter_pod_affinity.ANTI_AFFINITY,
        inter_pod_affinity.EXISTING_ANTI_AFFINITY,
        inter_pod_affinity.INVALID,
        pod_topology_spread.REASON,
        pod_topology_spread.MISSING_KEY,
        node_ports.REASON,
        scheduling_gates.REASON,
        "topobridge does not allocate DRA claims",
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
        topology.FABRIC_TIER_PREFIX,
        topology.ACCELERATOR_DOMAIN_LABEL,
        topology.ACCELERATOR_SUB_DOMAIN_LABEL,
        topology.GPU_CLIQUE_LABEL,
        *topology.NVLINK_TIER_NAMES,
        *kueue.TAS_ANNOTATIONS,
        kueue.TOPOLOGY_GATE,
        volcano_job.TASK_SPEC_LABEL,
        volcano_job.PARTITION_ID_LABEL,
    ],
)
def test_annotations_and_labels_are_in_the_reference(key: str) -> None:
    assert key in doc("reference.md")


def test_links_between_docs_resolve() -> None:
    for page in DOCS.glob("*.md"):
        for target in re.findall(r"\]\(([a-z-]+\.md)(?:#[a-z-]+)?\)", page.read_text()):
            assert (DOCS / target).is_file(), f"{page.name} links to missing {target}"


# --- reasons -------------------------------------------------------------------------------------

ROOT = DOCS.parent
EVENT_CALLS = {"event", "_event_on_group", "_report_once"}
"""Calls whose third argument is an Event's reason: recorder.event(obj, type, reason, message)."""


def _strings(node: ast.AST, constants: dict[str, str]) -> set[str]:
    """The string values an expression can take: literals, both arms of `a if c else b`, and
    module-level string constants named directly."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _strings(node.body, constants) | _strings(node.orelse, constants)
    if isinstance(node, ast.Name) and node.id in constants:
        return {constants[node.id]}
    return set()


def emitted_reasons() -> set[str]:
    """Every reason the controller writes on a condition or an Event, found in its source:
    `reason=` keywords (not on loggers), `"reason": ...` in dict literals (conditions), and
    the reason argument of recorder events."""
    found: set[str] = set()
    for path in sorted((ROOT / "controller").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        constants = {
            t.id: n.value.value
            for n in tree.body
            if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Constant)
            and isinstance(n.value.value, str)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                owner = func.value if isinstance(func, ast.Attribute) else None
                if isinstance(owner, ast.Name) and owner.id in ("log", "glog", "logger"):
                    continue  # a log line's `reason=` is not a reason users see
                if callee in EVENT_CALLS and len(node.args) >= 3:
                    found |= _strings(node.args[2], constants)
                for kw in node.keywords:
                    if kw.arg == "reason":
                        found |= _strings(kw.value, constants)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "reason" and value is not None:
                        found |= _strings(value, constants)
    # The PodGroup condition's reason is the engine's verdict code (`verdict.code.value`).
    found |= {code.value for code in Code if code not in (Code.SUCCESS, Code.ASSEMBLING)}
    return found


def test_the_reason_scan_finds_reasons() -> None:
    reasons = emitted_reasons()
    assert {"WaitingForLeaderPods", "Preempted", "GangRolledBack", "Unresolvable"} <= reasons


def test_every_reason_the_code_emits_is_in_status_md() -> None:
    text = doc("status.md")
    missing = sorted(r for r in emitted_reasons() if f"`{r}`" not in text)
    assert missing == [], f"reasons the code emits that docs/status.md does not explain: {missing}"


# --- the architecture picture ----------------------------------------------------------------------


@pytest.mark.parametrize("source", sorted((DOCS / "images").glob("*.dot")), ids=lambda p: p.name)
def test_pictures_are_generated_from_their_sources(source: Path) -> None:
    import hashlib

    svg = source.with_suffix(".svg").read_text()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert f"<!-- source: {source.name} sha256:{digest} -->" in svg, (
        f"{source.with_suffix('.svg').name} is older than {source.name}: run `make docs-picture`"
    )
    assert "<svg" in svg


def _placer_layers() -> Any:
    """hack/placer_layers.py, the generator of the placer's layer picture."""
    import importlib.util

    path = DOCS.parent / "hack" / "placer_layers.py"
    spec = importlib.util.spec_from_file_location("placer_layers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_placer_layers_picture_is_drawn_from_the_imports() -> None:
    drawn = (DOCS / "images" / "placer-layers.dot").read_text()
    assert drawn == _placer_layers().dot_source(), (
        "docs/images/placer-layers.dot is not the placer's imports as they are: "
        "run `python hack/placer_layers.py --write && make docs-picture`"
    )


@pytest.mark.parametrize(
    ("edges", "kept"),
    [
        pytest.param({"a": {"b", "c"}, "b": {"c"}}, {"a": {"b"}, "b": {"c"}}, id="implied-arrow-left-out"),
        pytest.param({"a": {"b", "c"}}, {"a": {"b", "c"}}, id="independent-arrows-kept"),
        pytest.param(
            {"a": {"b", "d"}, "b": {"c"}, "c": {"d"}}, {"a": {"b"}, "b": {"c"}, "c": {"d"}}, id="long-path"
        ),
    ],
)
def test_the_layer_picture_leaves_out_only_implied_imports(
    edges: dict[str, set[str]], kept: dict[str, set[str]]
) -> None:
    assert _placer_layers().reduction(edges) == kept


def _plugin_table() -> dict[str, list[str]]:
    """docs/architecture.md's plugins table: plugin -> its extension points, as written."""
    section = doc("architecture.md").split("### Plugins", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    return {
        cells[0]: cells[1].split(", ")
        for cells in ([c.strip() for c in r.strip("|").split("|")] for r in rows)
    }


def test_the_architecture_lists_each_plugin_at_its_extension_points() -> None:
    from controller.placer.plugins import default_profile

    profile: dict[str, list[str]] = {}
    for point, names in default_profile().names().items():
        title = "".join(word.capitalize() for word in point.split("_"))
        for name in names:
            profile.setdefault(name, []).append(title)
    assert _plugin_table() == profile


def test_the_readme_links_the_real_cluster_install_from_its_first_screen() -> None:
    first_screen = "\n".join((ROOT / "README.md").read_text().splitlines()[:40])
    assert "docs/install.md#install-on-a-real-cluster" in first_screen
    assert "## Install on a real cluster" in doc("install.md")


def test_hypernode_regex_bounds_are_the_ones_enforced() -> None:
    text = " ".join(doc("reference.md").split())
    assert f"`regexMatch.pattern` has at most {goregex.MAX_PATTERN_LENGTH} characters" in text
    assert f"patterns at most {goregex.MAX_PATTERN_CHARS_PER_HYPERNODE} characters in all" in text


def test_scheduler_limits_are_the_ones_enforced() -> None:
    text = " ".join(doc("reference.md").split())
    assert f"= {quantity.SCHEDULER_UNIT_BOUND} (" in text
    assert quantity.SCHEDULER_UNIT_BOUND == 2**45 and "| 2^45 =" in text
    assert f"| {topology.MAX_TREE_DEPTH} levels" in text
    assert f"| {whatif.MAX_EXPLAINED}, the first in queue order |" in text
    assert f"| {cluster.RECENT_BINDS:,}, the latest |" in text
