"""Fixtures for the controller tests: our own client on the session control plane, and the
controller's generated RBAC installed so replicas run as its ServiceAccount."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from controller import rbac
from controller.errors import AlreadyExistsError
from controller.kube import Kube
from controller.resources import Resource

CLUSTER_ROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False)
CLUSTER_ROLE_BINDINGS = Resource(
    "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False
)


@pytest.fixture
async def tkube(control_plane: Any) -> AsyncIterator[Kube]:
    """controller.kube.Kube as cluster admin (for arranging and inspecting test objects)."""
    kube = await Kube.connect(kubeconfig=control_plane.kubeconfig)
    try:
        yield kube
    finally:
        await kube.close()


@pytest.fixture
async def controller_user(tkube: Kube) -> str:
    """The user controller replicas act as: the ServiceAccount bound to the generated
    ClusterRole. Replicas impersonate it, so the API server refuses any call the role lacks."""
    for res, body in (
        (CLUSTER_ROLES, rbac.cluster_role()),
        (CLUSTER_ROLE_BINDINGS, rbac.cluster_role_binding()),
    ):
        with contextlib.suppress(AlreadyExistsError):
            await tkube.create(res, body)
        await tkube.apply(res, body)  # keep it current if an earlier test installed an older one
    return f"system:serviceaccount:{rbac.NAMESPACE}:{rbac.SERVICE_ACCOUNT}"
