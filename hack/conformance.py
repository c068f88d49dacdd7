#!/usr/bin/env python3
"""Run the conformance rows (tests/conformance) and print one line per upstream plugin and one
per upstream table (repository/file:TestFunction).

    python hack/conformance.py               # plugin=<name> / table=<name> cases=<n> pass=<n> not_honoured=<n>, summary
    python hack/conformance.py --write-docs  # regenerate docs/reference.md "Not honoured"

Exits 1 when a row disagrees with `NOT_HONOURED` (an unlisted row fails, or a listed row passes),
naming each such row.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from conformance.harness import check  # noqa: E402
from conformance.not_honoured import NOT_HONOURED  # noqa: E402
from conformance.suite import (  # noqa: E402
    DOCS_BEGIN,
    DOCS_END,
    ROWS,
    not_honoured_markdown,
    summary_lines,
)

REFERENCE = ROOT / "docs" / "reference.md"


def write_docs() -> None:
    text = REFERENCE.read_text()
    start, end = text.index(DOCS_BEGIN), text.index(DOCS_END) + len(DOCS_END)
    REFERENCE.write_text(text[:start] + not_honoured_markdown() + text[end:])


def main() -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write-docs", action="store_true", help='rewrite docs/reference.md "Not honoured"')
    args = parser.parse_args()
    if args.write_docs:
        write_docs()
        return 0
    passed: dict[tuple[str, str], bool] = {}
    wrong: list[str] = []
    for row in ROWS:
        outcome = check(row)
        passed[row.key] = outcome.ok
        if outcome.ok == (row.key in NOT_HONOURED):
            state = "passes but is listed" if outcome.ok else f"fails unlisted: {outcome.detail}"
            wrong.append(f"{row.plugin} {row.upstream} {row.case!r}: {state}")
    for line in wrong:
        print(f"mismatch: {line}")
    for line in summary_lines(ROWS, passed):
        print(line)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
