"""The dialect table (`translations/dialects.py`) is what docs/reference.md shows, and its claims
hold where code can check them: a dialect said to be validated has a rule that refuses a bad
object of it, and "honoured by the fallback" matches what the placer reads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from webhook_corpus import tas_job, vcjob

from translations import dialects
from webhooks.rules import ClusterState, validate_object

ROOT = Path(__file__).resolve().parent.parent.parent
START, END = "<!-- dialect-table:start -->\n", "<!-- dialect-table:end -->"


def test_reference_carries_the_generated_table() -> None:
    text = (ROOT / "docs" / "reference.md").read_text()
    shown = text.split(START, 1)[1].split(END, 1)[0]
    assert shown == dialects.render_markdown(), (
        "paste translations.dialects.render_markdown() into docs/reference.md"
    )


def test_every_row_has_a_cell_per_column() -> None:
    rows = dialects.render_markdown().splitlines()
    assert {row.count("|") for row in rows} == {len(dialects.TARGETS) + 6}
    assert {r.dialect for r in dialects.ROWS} >= {"Volcano Job", "Kueue TAS"}


BAD: dict[str, Any] = {
    "Volcano Job": vcjob(networkTopology={"mode": "hrad"}),
    "Kueue TAS": tas_job({"kueue.x-k8s.io/podset-slice-size": "2"}),
}


@pytest.mark.parametrize("dialect", sorted(BAD))
def test_a_validated_dialect_refuses_a_bad_object(dialect: str) -> None:
    assert any(r.validated == "yes" for r in dialects.ROWS if r.dialect == dialect)
    kind, decision = validate_object(BAD[dialect], ClusterState.unknown())
    assert kind is not None
    assert not decision.allowed


def _placer_sources() -> str:
    files = [*sorted((ROOT / "controller" / "placer").rglob("*.py")), ROOT / "translations" / "gangs.py"]
    return "\n".join(f.read_text() for f in files)


@pytest.mark.parametrize(
    ("flag", "evidence", "dialect"),
    [
        pytest.param(
            dialects.FALLBACK_READS_VOLCANO_JOBS, r"\bvolcano_job\b", "Volcano Job", id="volcano-job"
        ),
        pytest.param(
            dialects.FALLBACK_READS_KUEUE, r"\bgated_by_kueue\b|\btas_request\b", "Kueue TAS", id="kueue"
        ),
        pytest.param(
            dialects.FALLBACK_READS_UPSTREAM, r"\bupstream_gangs\b", "Kubernetes gang API", id="upstream"
        ),
    ],
)
def test_fallback_flags_say_what_the_placer_reads(flag: bool, evidence: str, dialect: str) -> None:
    assert flag == bool(re.search(evidence, _placer_sources()))
    cells = {
        r.fallback
        for r in dialects.ROWS
        if r.dialect == dialect and r.field != "Topology `spec.levels`" and r.fallback != "no"
    }
    assert cells == {"yes" if flag else "not yet"}
