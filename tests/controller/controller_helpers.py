"""Helpers for the controller's integration tests: polling, fake nodes, a kubelet stand-in,
and running a controller replica in-process against the real API server."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from controller.errors import ConflictError, NotFoundError
from controller.kube import JsonDict, Kube, KubeSettings
from controller.manager import ControllerOptions, Manager
from controller.resources import NODES, PODS

T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T]],
    *,
    timeout: float = 20.0,
    interval: float = 0.1,
    what: str = "condition",
) -> T:
    """Poll `probe` until it returns a truthy value (returned) or raises no AssertionError."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            value = await probe()
            if value:
                return value
        except (AssertionError, NotFoundError) as exc:
            last = exc
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout}s waiting for {what}" + (f": {last}" if last else "")
            )
        await asyncio.sleep(interval)


def node_body(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    cpu: str = "8",
    memory: str = "32Gi",
    pods: str = "110",
    gpu: str | None = None,
) -> JsonDict:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    if gpu is not None:
        alloc["nvidia.com/gpu"] = gpu
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {
            "allocatable": alloc,
            "capacity": alloc,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "test"}],
        },
    }


async def create_node(kube: Kube, name: str, **kw: Any) -> JsonDict:
    """Create a Node object as a kubelet would leave it once Ready: status (allocatable,
    Ready) written through nodes/status, and without the `node.kubernetes.io/not-ready`
    taint that admission (TaintNodesByCondition) puts on every new node and that only the
    node lifecycle controller, which cannot run without kubelets, would remove."""
    body = node_body(name, **kw)
    created = await kube.create(NODES, {k: v for k, v in body.items() if k != "status"})
    await kube.merge_patch(NODES, name, {"status": body["status"]}, subresource="status")
    return await kube.merge_patch(NODES, name, {"spec": {"taints": None}}) or created


def hypernode(name: str, members: list[str], *, tier: int = 1, member_type: str = "Node") -> JsonDict:
    """A Volcano HyperNode of tier `tier` whose members are the named nodes (or HyperNodes)."""
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {
            "tier": tier,
            "members": [{"type": member_type, "selector": {"exactMatch": {"name": m}}} for m in members],
        },
    }


async def delete_nodes(kube: Kube, names: list[str]) -> None:
    for n in names:
        with contextlib.suppress(NotFoundError):
            await kube.delete(NODES, n)


class Kubelet:
    """Marks pods bound to a node Running (and Ready), as a kubelet would; honours deletion by
    removing pods that are being deleted (grace period elapsed immediately: no containers)."""

    def __init__(self, kube: Kube, namespace: str) -> None:
        self.kube = kube
        self.namespace = namespace
        self.started: set[str] = set()

    async def sync(self) -> None:
        listed = await self.kube.list(PODS, namespace=self.namespace)
        for pod in listed.items:
            meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
            if meta.get("deletionTimestamp"):
                with contextlib.suppress(NotFoundError, ConflictError):
                    await self.kube.delete(
                        PODS, meta["name"], namespace=self.namespace, grace_period_seconds=0, uid=meta["uid"]
                    )
                continue
            if spec.get("nodeName") and status.get("phase") != "Running":
                with contextlib.suppress(NotFoundError):
                    await self.kube.patch_pod_status(
                        namespace=self.namespace,
                        pod=meta["name"],
                        patch={
                            "phase": "Running",
                            "conditions": [
                                {"type": "Ready", "status": "True"},
                                {"type": "PodScheduled", "status": "True"},
                            ],
                        },
                    )
                    self.started.add(meta["name"])

    async def run(self, interval: float = 0.2) -> None:
        while True:
            await self.sync()
            await asyncio.sleep(interval)


@contextlib.asynccontextmanager
async def running(coro: Awaitable[Any], name: str = "background") -> AsyncIterator[asyncio.Task[Any]]:
    """Run `coro` as a task for the duration of the block; cancel and await it after."""
    task = asyncio.ensure_future(coro)
    task.set_name(name)
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def controller_replica(
    kubeconfig: str,
    options: ControllerOptions,
    *,
    user: str | None = None,
    kube_class: type[Kube] = Kube,
) -> AsyncIterator[Manager]:
    """One controller replica with its own client, running until the block ends; with `user`,
    every request impersonates that user (the controller's ServiceAccount)."""
    kube = await kube_class.connect(kubeconfig=kubeconfig, settings=KubeSettings(impersonate=user))
    manager = Manager(kube, options)
    try:
        async with running(manager.run(), name=f"replica:{manager.identity}"):
            yield manager
    finally:
        await kube.close()
