"""Read a cluster snapshot, read-only, from the current kubeconfig: the objects `simulate
--from-cluster` runs on. Only `list` calls are made. Kinds whose CRD is not installed (no
Volcano, no Koordinator) are skipped; PodDisruptionBudgets are read as policy/v1beta1 (what
Kubernetes 1.20 serves) or, where that is gone (1.25+), as policy/v1.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

from controller.errors import ControllerError, NotFoundError
from controller.kube import Kube, KubeSettings
from controller.resources import (
    CLUSTER_NETWORK_TOPOLOGIES,
    HYPERNODES,
    NAMESPACES,
    NODES,
    PDB_VERSIONS,
    PODS,
    PRIORITY_CLASSES,
    SIGS_PODGROUPS,
    VOLCANO_PODGROUPS,
    X_PODGROUPS,
    Resource,
)

log = structlog.get_logger(__name__)

REQUIRED: tuple[Resource, ...] = (NODES, PODS, PRIORITY_CLASSES, NAMESPACES)
OPTIONAL: tuple[Resource, ...] = (
    VOLCANO_PODGROUPS,
    SIGS_PODGROUPS,
    X_PODGROUPS,
    HYPERNODES,
    CLUSTER_NETWORK_TOPOLOGIES,
)
NOT_TERMINAL = "status.phase!=Succeeded,status.phase!=Failed"


class SnapshotError(Exception):
    """The cluster could not be read; the message says what failed."""


def read_cluster(*, kubeconfig: str | None = None, context: str | None = None) -> list[dict[str, Any]]:
    """Every object the simulator needs, as plain dicts with apiVersion and kind set."""
    return asyncio.run(read_cluster_async(kubeconfig=kubeconfig, context=context))


async def read_cluster_async(
    *, kubeconfig: str | None = None, context: str | None = None
) -> list[dict[str, Any]]:
    try:
        kube = await Kube.connect(
            kubeconfig=kubeconfig, context=context, settings=KubeSettings(request_timeout=30)
        )
    except ControllerError as exc:
        raise SnapshotError(str(exc)) from None
    try:
        return await read_objects(kube)
    finally:
        await kube.close()


async def read_objects(kube: Kube) -> list[dict[str, Any]]:
    """The snapshot through a client someone else holds (the demo's, a test's)."""
    try:
        out: list[dict[str, Any]] = []
        for res in REQUIRED:
            selector = NOT_TERMINAL if res is PODS else None
            out += await _list(kube, res, field_selector=selector)
        for res in OPTIONAL:
            try:
                out += await _list(kube, res)
            except NotFoundError:
                log.info("snapshot.kind_absent", resource=str(res))
        out += await _list(kube, await kube.first_served(PDB_VERSIONS))
        return out
    except ControllerError as exc:  # API errors and transport failures alike
        raise SnapshotError(f"reading the cluster failed: {exc}") from None


async def _list(kube: Kube, res: Resource, *, field_selector: str | None = None) -> list[dict[str, Any]]:
    got = await kube.list(res, field_selector=field_selector)
    log.debug("snapshot.listed", resource=str(res), count=len(got.items))
    return got.items
