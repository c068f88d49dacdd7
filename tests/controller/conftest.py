"""Fixtures for the controller tests: our own client on the session control plane."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from controller.kube import Kube


@pytest.fixture
async def tkube(control_plane: Any) -> AsyncIterator[Kube]:
    """controller.kube.Kube as cluster admin (for arranging and inspecting test objects)."""
    kube = await Kube.connect(kubeconfig=control_plane.kubeconfig)
    try:
        yield kube
    finally:
        await kube.close()
