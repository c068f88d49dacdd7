"""Prints the conformance figures (one line per plugin, then a summary) after the session."""

from __future__ import annotations

import pytest

from conformance.suite import RESULTS, ROWS, summary_lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not RESULTS:
        return
    ran = [r for r in ROWS if r.key in RESULTS]
    title = (
        "conformance"
        if len(ran) == len(ROWS)
        else f"conformance (partial: {len(ran)} of {len(ROWS)} rows ran)"
    )
    terminalreporter.section(title)
    for line in summary_lines(ran, RESULTS):
        terminalreporter.write_line(line)
