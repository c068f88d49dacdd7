"""Another commit's tree beside this one, for benchmarks that measure both in one run."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export_tree(ref: str, into: Path) -> Path:
    """The repository's tree at `ref` written under `into` (`git archive`); `into`. Code run
    from there with its root first on `sys.path` is that commit's, so both commits are
    measured on one machine, in one run."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into
