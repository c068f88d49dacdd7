"""The local end-to-end target: topobridge (`topobridge run`, controller + webhook) as a
process beside the session's control plane, and a kubelet stand-in for its API-only nodes.

End-to-end tests run last (kopf's rule): they start a scheduler that acts on every pod it
serves, so nothing else should be running by then.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from controller.kube import Kube
from e2e import local
from e2e.kubelet import Kubelet

E2E_DIR = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    e2e = [i for i in items if Path(str(i.path)).is_relative_to(E2E_DIR)]
    if e2e:
        rest = [i for i in items if i not in e2e]
        items[:] = rest + e2e


@pytest.fixture(scope="module")
async def topobridge(control_plane: Any) -> AsyncIterator[local.TopobridgeState]:
    """One topobridge process for the module; its log is printed when it fails to start."""
    work = Path(tempfile.mkdtemp(prefix="topobridge-e2e-"))
    state = await local.start(control_plane.kubeconfig, work)
    try:
        yield state
    finally:
        await local.stop(state)
        shutil.rmtree(work, ignore_errors=True)  # failing tests print the log's tail themselves


@pytest.fixture(scope="module")
async def kubelet(admin: Kube) -> AsyncIterator[Kubelet]:
    stand_in = Kubelet(admin)
    task = asyncio.create_task(stand_in.run(), name="e2e-kubelet")
    try:
        yield stand_in
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
