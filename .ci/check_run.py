"""Judge a finished test run from its JUnit file, not from pytest's exit code alone.

A green exit code proves only that nothing that ran failed. This check refuses the ways a
run can be green while proving less than it should:

* a test was skipped (or xfailed: JUnit records both as skipped): a skip must never stand in
  for a missing capability;
* a test the suite defines did not run at all: `-m`, `-k`, `--deselect`, `--ignore` or a
  file path in `PYTEST_ADDOPTS`/`PYTEST_ARGS` would otherwise shrink the run silently. The
  reference is a collection made with those variables cleared (`--collected`);
* fewer integration tests ran than the floor kept in the repository (`.ci/integration-floor`):
  deleting or unmarking integration tests is a decision to write down, not an accident.

Usage: check_run.py JUNIT --collected FILE --integration FILE --floor FILE
(FILE of node ids, one per line, as `pytest --collect-only -q` prints them). Exit 0 when the
run is whole, 1 with one line per problem otherwise. Standard library only: CI runs it with
whatever Python it has.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

_LISTED = 10
"""Names printed per problem before `... and N more`."""


@dataclass(frozen=True)
class Case:
    classname: str
    name: str
    outcome: str
    """passed, failed, error or skipped."""


def junit_key(node_id: str) -> tuple[str, str]:
    """A pytest node id as JUnit names it: (`tests.pkg.test_mod.Class`, `test_name[param]`),
    the way pytest's junitxml plugin mangles it (parameters may contain `::`)."""
    address, bracket, params = node_id.partition("[")
    path, *rest = address.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    names = [module, *rest]
    return ".".join(names[:-1]), names[-1] + bracket + params


def read_junit(path: Path) -> list[Case]:
    cases = []
    for tc in ET.parse(path).getroot().iter("testcase"):
        outcome = "passed"
        for child, name in (("skipped", "skipped"), ("failure", "failed"), ("error", "error")):
            if tc.find(child) is not None:
                outcome = name
        cases.append(Case(tc.get("classname", ""), tc.get("name", ""), outcome))
    return cases


def read_ids(path: Path) -> list[str]:
    """Node ids from `pytest --collect-only -q` output (its summary lines are not ids)."""
    return [line.strip() for line in path.read_text().splitlines() if "::" in line]


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:_LISTED])
    return shown + (f" ... and {len(items) - _LISTED} more" if len(items) > _LISTED else "")


def unrun(cases: list[Case], collected: list[str]) -> list[str]:
    """Collected node ids with no test case in the JUnit file."""
    ran = {(c.classname, c.name) for c in cases}
    return [n for n in collected if junit_key(n) not in ran]


def problems(
    cases: list[Case], *, collected: list[str], integration: list[str], floor: int, partial: bool = False
) -> list[str]:
    """Every reason the run does not prove what the suite defines (empty: it does). With
    `partial` (a developer narrowed the run on purpose, outside CI) only skips count."""
    out = []
    if not cases:
        out.append("the JUnit file holds no tests: the suite did not run")
    skipped = [f"{c.classname}::{c.name}" for c in cases if c.outcome == "skipped"]
    if skipped:
        out.append(f"{len(skipped)} test(s) skipped (CI fails on skips): {_names(skipped)}")
    if partial:
        return out
    missing = unrun(cases, collected)
    if missing:
        out.append(
            f"{len(missing)} of {len(collected)} collected test(s) did not run (deselected by "
            f"PYTEST_ADDOPTS/PYTEST_ARGS or options?): {_names(missing)}"
        )
    passed = {(c.classname, c.name) for c in cases if c.outcome == "passed"}
    ran_integration = sum(1 for n in integration if junit_key(n) in passed)
    if ran_integration < floor:
        out.append(
            f"{ran_integration} integration test(s) passed, fewer than the floor of {floor} in "
            ".ci/integration-floor (lower it in the same commit that removes integration tests)"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit", type=Path)
    parser.add_argument("--collected", type=Path, required=True, help="node ids the suite defines")
    parser.add_argument("--integration", type=Path, required=True, help="node ids of integration tests")
    parser.add_argument("--floor", type=Path, required=True, help="file holding the integration floor")
    parser.add_argument(
        "--partial",
        action="store_true",
        help="outside CI, the run was narrowed on purpose: report unrun tests, fail only on skips",
    )
    args = parser.parse_args(argv)
    cases = read_junit(args.junit)
    floor = int(args.floor.read_text().split()[0])
    integration = read_ids(args.integration)
    collected = read_ids(args.collected)
    found = problems(cases, collected=collected, integration=integration, floor=floor, partial=args.partial)
    counts = {o: sum(1 for c in cases if c.outcome == o) for o in ("passed", "failed", "error", "skipped")}
    print(
        f"[.ci/run] tests: {len(cases)} ({', '.join(f'{n} {o}' for o, n in counts.items())}); "
        f"integration collected: {len(integration)}, floor: {floor}",
        file=sys.stderr,
    )
    if args.partial:
        print(
            f"[.ci/run] partial run: {len(unrun(cases, collected))} collected test(s) not run",
            file=sys.stderr,
        )
    for p in found:
        print(f"[.ci/run] {p}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
