"""Fixtures for the invariant tests: an admin client, the invariant watcher on the session's
control plane, and the controller tests' helpers (nodes, a kubelet stand-in, in-process
replicas) made importable here."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "controller"))  # controller_helpers

from rawclient import Endpoint
from watcher import InvariantWatcher, start


@pytest.fixture
async def watcher(control_plane: Any, namespace: str) -> AsyncIterator[InvariantWatcher]:
    """The watcher on this test's namespace (and the cluster-scoped kinds), a 3 s settle
    window, leadership read from the Lease `topobridge-under-watch` in the namespace."""
    endpoint = Endpoint(control_plane.server, control_plane.token, control_plane.ca_file)
    w = InvariantWatcher(
        endpoint, settle=3.0, lease=(namespace, "topobridge-under-watch"), namespaces={namespace}
    )
    task = await start(w)
    try:
        yield w
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
