"""Read a cluster snapshot, read-only, from the current kubeconfig: the objects `simulate
--from-cluster` and `tree` run on. Only `list` calls are made (and discovery, which every
user may read). The kinds are the scheduler's own table (`translations.kinds.SCHEDULER_KINDS`,
through `controller.resources.served_resources`), so the dry run reads what the live
scheduler watches: each at the newest version the cluster serves (PodDisruptionBudgets as
policy/v1, else policy/v1beta1 on Kubernetes 1.20), and a kind whose CRD is not installed (no
Volcano, no Koordinator, no Kueue) is skipped. Finished pods are not listed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

from controller.errors import ControllerError, NotFoundError
from controller.kube import Kube, KubeSettings
from controller.resources import Resource, served_resources
from translations.kinds import POD, SCHEDULER_KINDS

log = structlog.get_logger(__name__)

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
        resources = await served_resources(kube.serves)
        out: list[dict[str, Any]] = []
        for read in SCHEDULER_KINDS:
            res = resources.get(read.api)
            if res is None:
                log.info("snapshot.kind_absent", kind=read.api.display)
                continue
            try:
                out += await _list(kube, res, field_selector=NOT_TERMINAL if read.api == POD else None)
            except NotFoundError:
                if not read.optional:
                    raise
                log.info("snapshot.kind_absent", kind=read.api.display)  # removed since discovery
        return out
    except ControllerError as exc:  # API errors and transport failures alike
        raise SnapshotError(f"reading the cluster failed: {exc}") from None


async def _list(kube: Kube, res: Resource, *, field_selector: str | None = None) -> list[dict[str, Any]]:
    got = await kube.list(res, field_selector=field_selector)
    log.debug("snapshot.listed", resource=str(res), count=len(got.items))
    return got.items
