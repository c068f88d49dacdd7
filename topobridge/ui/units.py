"""Figures as people read them on the page: a free/allocatable pair in one unit, thousands
grouped (`26.4Ti/32Ti`, `36,108/80,000`, `1,234/8,000`), never two units side by side as
Kubernetes' canonical quantities print them (`27008Gi/32Ti`, `36108/80k`). Scheduler units
in (millicores for cpu, bytes, counts), text out; `topobridge tree` keeps kubectl's forms."""

from __future__ import annotations

from collections.abc import Mapping

from controller.placer.snapshot import ClusterIndex
from topobridge.cmd_tree import Figures

RESOURCE_ORDER = ("nvidia.com/gpu", "cpu", "memory")
"""The colour's resource: GPUs first when the cluster has any, then CPU, then memory."""
LABELS = (("cpu", "cpu"), ("memory", "mem"), ("nvidia.com/gpu", "gpu"))
BINARY = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def _number(value: float) -> str:
    """At most three significant digits past the point, thousands grouped: 26.4, 0.25, 36,108."""
    if value == int(value):
        return f"{int(value):,}"
    digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2
    text = f"{value:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _scale(resource: str, reference: int) -> tuple[float, str]:
    """The divisor and suffix every figure of `resource` beside `reference` is shown in."""
    if resource == "cpu":
        return 1000.0, ""
    if resource != "memory":
        return 1.0, ""
    step = 0
    while step + 1 < len(BINARY) and abs(reference) >= 1024 ** (step + 1):
        step += 1
    return float(1024**step), BINARY[step]


def readable(resource: str, units: int, *, like: int | None = None) -> str:
    """`units` of `resource` in the unit `like` (default: its own) is shown in."""
    div, suffix = _scale(resource, units if like is None else like)
    return _number(units / div) + suffix


def pair(resource: str, free: int, alloc: int) -> tuple[str, str]:
    """Free and allocatable in allocatable's unit: ("26.4Ti", "32Ti")."""
    return readable(resource, free, like=alloc), readable(resource, alloc)


def figure_pairs(units: Figures) -> tuple[dict[str, str], dict[str, str]]:
    """Per resource: (free, allocatable) as `pair` shows them."""
    shown = {r: pair(r, units.free.get(r, 0), a) for r, a in units.allocatable.items()}
    return {r: f for r, (f, _) in shown.items()}, {r: a for r, (_, a) in shown.items()}


def figures_text(index: ClusterIndex, free: Mapping[str, int], alloc: Mapping[str, int]) -> str:
    """`free cpu 3/8 mem 12Gi/32Gi gpu 2/8` over the main resources the cluster has (GPUs where
    this figure has any), each pair in one unit."""
    parts = []
    for resource, label in LABELS:
        if resource not in index.res_pos or (resource == "nvidia.com/gpu" and not alloc.get(resource)):
            continue
        f, a = pair(resource, free.get(resource, 0), alloc.get(resource, 0))
        parts.append(f"{label} {f}/{a}")
    return "free " + " ".join(parts)
