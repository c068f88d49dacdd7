"""`.ci/check_run.py`, the part of CI that judges a run from its JUnit file: a deselected test,
a skip, or an integration count under the floor fails it, with a message naming what is missing.

Each case runs pytest for real (a small suite written to a temporary directory, as a
subprocess with `PYTEST_ADDOPTS`) and then the checker the way `.ci/run` does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT / ".ci" / "check_run.py"

SUITE = """
import pytest

def test_unit():
    assert 1 + 1 == 2

@pytest.mark.integration
def test_against_the_server():
    assert "api" in "apiserver"

@pytest.mark.integration
@pytest.mark.parametrize("n", [1, 2])
def test_each(n):
    assert n > 0

class TestGroup:
    def test_in_class(self):
        assert [1]
"""


def run_suite(tmp_path: Path, *, addopts: str = "", extra: str = "") -> Path:
    """Run the small suite as CI would (options from the environment), return its JUnit path;
    also write the reference collections made with the environment cleared."""
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_small.py").write_text(SUITE + extra)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    integration: needs a server\n")
    junit = tmp_path / "junit.xml"
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_ARGS")}
    subprocess.run(
        [*base, f"--junitxml={junit}"],
        cwd=tmp_path,
        env={**clean, "PYTEST_ADDOPTS": addopts},
        capture_output=True,
        check=False,
    )
    for name, marker in (("collected.txt", []), ("integration.txt", ["-m", "integration"])):
        listed = subprocess.run(
            [*base, "--collect-only", *marker], cwd=tmp_path, env=clean, capture_output=True, text=True
        )
        (tmp_path / name).write_text(listed.stdout)
    return junit


def check(
    tmp_path: Path, junit: Path, *, floor: int, partial: bool = False
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "floor").write_text(f"{floor}\n")
    argv = [
        sys.executable,
        str(CHECKER),
        str(junit),
        "--collected",
        str(tmp_path / "collected.txt"),
        "--integration",
        str(tmp_path / "integration.txt"),
        "--floor",
        str(tmp_path / "floor"),
    ]
    return subprocess.run(argv + (["--partial"] if partial else []), capture_output=True, text=True)


def test_a_whole_run_passes(tmp_path: Path) -> None:
    result = check(tmp_path, run_suite(tmp_path), floor=3)
    assert result.returncode == 0, result.stderr
    assert (
        "tests: 5 (5 passed, 0 failed, 0 error, 0 skipped); integration collected: 3, floor: 3"
        in result.stderr
    )


def test_a_test_deselected_through_pytest_addopts_fails(tmp_path: Path) -> None:
    junit = run_suite(tmp_path, addopts="--deselect tests/test_small.py::test_each[2]")
    result = check(tmp_path, junit, floor=2)
    assert result.returncode == 1
    assert (
        "1 of 5 collected test(s) did not run (deselected by PYTEST_ADDOPTS/PYTEST_ARGS or options?): "
        "tests/test_small.py::test_each[2]"
    ) in result.stderr


@pytest.mark.parametrize("addopts", ["-m 'not integration'", "-k unit"])
def test_the_integration_tests_filtered_out_fail_on_both_counts(tmp_path: Path, addopts: str) -> None:
    result = check(tmp_path, run_suite(tmp_path, addopts=addopts), floor=3)
    assert result.returncode == 1
    assert "tests/test_small.py::test_against_the_server" in result.stderr
    assert "0 integration test(s) passed, fewer than the floor of 3" in result.stderr


def test_a_skip_fails_even_in_a_partial_run(tmp_path: Path) -> None:
    extra = '\n@pytest.mark.skip(reason="no GPU here")\ndef test_gpu():\n    pass\n'
    junit = run_suite(tmp_path, addopts="-k 'unit or gpu'", extra=extra)
    result = check(tmp_path, junit, floor=3, partial=True)
    assert result.returncode == 1
    assert "1 test(s) skipped (CI fails on skips): tests.test_small::test_gpu" in result.stderr
    assert "partial run: 4 collected test(s) not run" in result.stderr


def test_fewer_integration_tests_than_the_floor_fail(tmp_path: Path) -> None:
    result = check(tmp_path, run_suite(tmp_path), floor=4)
    assert result.returncode == 1
    assert "3 integration test(s) passed, fewer than the floor of 4 in .ci/integration-floor" in result.stderr


def test_the_repository_floor_is_a_number_no_higher_than_the_integration_tests_defined() -> None:
    floor = int((ROOT / ".ci" / "integration-floor").read_text().split()[0])
    listed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--collect-only",
            "-m",
            "integration",
        ],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_ARGS")},
        capture_output=True,
        text=True,
    )
    defined = sum(1 for line in listed.stdout.splitlines() if "::" in line)
    assert 0 < floor <= defined, f"floor {floor}, integration tests defined {defined}"
