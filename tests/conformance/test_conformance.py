"""Upstream scheduler tables as the placer's conformance suite (see the package docstring).

Every row passes unless `NOT_HONOURED` lists it, and every listed row really fails, so the list
is the placer's exact work list. The per-plugin figures are printed at the end of the session
(`conftest.py`) and by `hack/conformance.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.harness import Row, check
from conformance.not_honoured import NOT_HONOURED
from conformance.suite import DOCS_BEGIN, DOCS_END, RESULTS, ROWS, not_honoured_markdown

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference.md"


@pytest.mark.parametrize("row", [pytest.param(r, id=r.test_id) for r in ROWS])
def test_row(row: Row) -> None:
    outcome = check(row)
    RESULTS[row.key] = outcome.ok
    if row.key in NOT_HONOURED:
        assert not outcome.ok, (
            f"listed as not honoured ({NOT_HONOURED[row.key]}) but passes: take it off the list"
        )
    else:
        assert outcome.ok, f"{row.upstream} {row.case!r}: {outcome.detail}"


def test_rows_are_named_once() -> None:
    keys = [r.key for r in ROWS]
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)


def test_every_not_honoured_entry_names_a_row_and_one_line_reason() -> None:
    keys = {r.key for r in ROWS}
    assert set(NOT_HONOURED) <= keys, sorted(set(NOT_HONOURED) - keys)
    assert all(reason and "\n" not in reason for reason in NOT_HONOURED.values())


def test_reference_not_honoured_section_is_generated_from_the_table() -> None:
    text = REFERENCE.read_text()
    assert DOCS_BEGIN in text and DOCS_END in text, "docs/reference.md lacks the Not honoured markers"
    start = text.index(DOCS_BEGIN)
    end = text.index(DOCS_END) + len(DOCS_END)
    assert text[start:end] == not_honoured_markdown(), "run: python hack/conformance.py --write-docs"
