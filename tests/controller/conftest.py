"""Fixtures for the controller tests: our own client on the session control plane, and the
controller's generated RBAC installed so replicas run as its ServiceAccount."""

from __future__ import annotations

import contextlib

import pytest

from controller import rbac
from controller.errors import AlreadyExistsError
from controller.kube import Kube
from controller.resources import Resource

CLUSTER_ROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False)
CLUSTER_ROLE_BINDINGS = Resource(
    "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False
)
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role", namespaced=True)
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", namespaced=True)


@pytest.fixture
async def controller_user(admin: Kube, namespace: str) -> str:
    """The user controller replicas act as: the ServiceAccount bound to the generated
    ClusterRole, and to the Lease Role in the two lease namespaces the tests use (kube-system,
    the default, and the test's own). Replicas impersonate it, so the API server refuses any
    call the roles lack."""
    for res, body in (
        (CLUSTER_ROLES, rbac.cluster_role()),
        (CLUSTER_ROLE_BINDINGS, rbac.cluster_role_binding()),
    ):
        with contextlib.suppress(AlreadyExistsError):
            await admin.create(res, body)
        await admin.apply(res, body)  # keep it current if an earlier test installed an older one
    for lease_namespace in ("kube-system", namespace):
        for res, body in (
            (ROLES, rbac.lease_role(namespace=lease_namespace)),
            (ROLE_BINDINGS, rbac.lease_role_binding(namespace=lease_namespace)),
        ):
            with contextlib.suppress(AlreadyExistsError):
                await admin.create(res, body, namespace=lease_namespace)
            await admin.apply(res, body)
    return f"system:serviceaccount:{rbac.NAMESPACE}:{rbac.SERVICE_ACCOUNT}"
