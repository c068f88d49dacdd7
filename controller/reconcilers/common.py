"""Small helpers every reconciler shares: ownership labels, subset comparison, report text."""

from __future__ import annotations

from typing import Any

from translations.report import TranslationReport

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "topobridge"
"""Objects topobridge created carry this label; only those are ever deleted by it."""


def is_subset(want: Any, have: Any) -> bool:
    """True when every field of `want` is present and equal in `have` (server defaults in
    `have` are ignored, so a defaulted field does not look like drift)."""
    if isinstance(want, dict):
        if not isinstance(have, dict):
            return False
        return all(k in have and is_subset(v, have[k]) for k, v in want.items())
    if isinstance(want, list):
        if not isinstance(have, list) or len(want) != len(have):
            return False
        return all(is_subset(w, h) for w, h in zip(want, have, strict=True))
    return bool(want == have)


def managed_by_topobridge(obj: dict[str, Any]) -> bool:
    return ((obj.get("metadata") or {}).get("labels") or {}).get(MANAGED_BY_LABEL) == MANAGED_BY


def has_field_manager(obj: dict[str, Any], manager: str, operation: str | None = None) -> bool:
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        if entry.get("manager") == manager and (operation is None or entry.get("operation") == operation):
            return True
    return False


def summarize(report: TranslationReport, *, limit: int = 6) -> str:
    """The report's lines as one message: refusals first (they matter most), then the rest."""
    lines = (
        [f"refused: {t}" for t in report.refused]
        + [f"defaulted: {t}" for t in report.defaulted]
        + report.carried
    )
    shown = lines[:limit]
    more = len(lines) - len(shown)
    return "; ".join(shown) + (f"; (+{more} more)" if more > 0 else "")
