"""A kubelet stand-in for nodes that exist only as API objects (the local control plane has
no kubelet): pods bound to one of its nodes are marked Running and Ready, and pods being
deleted are removed once their grace period (capped) has passed, as a kubelet would after
stopping their containers.

It belongs to the demo and the end-to-end harness, never to the product: on a real cluster
(or KWOK) the kubelet does this. Run it in-process (`Kubelet.run()`) or as a background
process: `python -m e2e.kubelet --kubeconfig PATH --nodes node-0,node-1`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import signal
import sys
from collections.abc import Sequence

import structlog

from controller.errors import ConflictError, ControllerError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import PODS

log = structlog.get_logger("e2e.kubelet")

MAX_TERMINATION_SECONDS = 2.0
"""Pods being deleted linger at most this long: enough to be seen Terminating, no longer."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _stamp() -> str:
    return _now().strftime("%Y-%m-%dT%H:%M:%SZ")


class Kubelet:
    """Runs the pods of `nodes` (None: of every node) in every namespace."""

    def __init__(
        self,
        kube: Kube,
        *,
        nodes: Sequence[str] | None = None,
        max_termination: float = MAX_TERMINATION_SECONDS,
    ) -> None:
        self.kube = kube
        self.nodes = set(nodes) if nodes is not None else None
        self.max_termination = max_termination
        self.started: set[str] = set()
        self.removed: set[str] = set()

    def _mine(self, pod: JsonDict) -> bool:
        node = (pod.get("spec") or {}).get("nodeName")
        return bool(node) and (self.nodes is None or node in self.nodes)

    async def sync(self) -> None:
        """One pass over every pod."""
        for pod in (await self.kube.list(PODS)).items:
            meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
            key = f"{meta['namespace']}/{meta['name']}"
            if meta.get("deletionTimestamp"):
                await self._finish_deletion(pod, key)
            elif self._mine(pod) and status.get("phase") not in ("Running", "Succeeded", "Failed"):
                with contextlib.suppress(NotFoundError):
                    await self.kube.patch_pod_status(
                        namespace=meta["namespace"],
                        pod=meta["name"],
                        patch={
                            "phase": "Running",
                            "startTime": _stamp(),
                            "conditions": [
                                {"type": "Ready", "status": "True", "lastTransitionTime": _stamp()},
                                {"type": "ContainersReady", "status": "True", "lastTransitionTime": _stamp()},
                            ],
                            # So `kubectl get pods` shows READY 1/1, as with a real kubelet.
                            "containerStatuses": [
                                {
                                    "name": c["name"],
                                    "image": c.get("image", ""),
                                    "imageID": "",
                                    "ready": True,
                                    "started": True,
                                    "restartCount": 0,
                                    "state": {"running": {"startedAt": _stamp()}},
                                }
                                for c in spec.get("containers") or []
                            ],
                        },
                    )
                    self.started.add(key)
                    log.debug("kubelet.started", pod=key, node=spec.get("nodeName"))

    async def _finish_deletion(self, pod: JsonDict, key: str) -> None:
        meta = pod["metadata"]
        if not (pod.get("spec") or {}).get("nodeName"):
            return  # the API server deletes unbound pods at once; nothing runs them
        deleted_at = dt.datetime.strptime(meta["deletionTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=dt.UTC
        )
        grace = float(meta.get("deletionGracePeriodSeconds") or 0)
        requested = deleted_at - dt.timedelta(seconds=grace)
        if (_now() - requested).total_seconds() < min(grace, self.max_termination):
            return
        with contextlib.suppress(NotFoundError, ConflictError):
            await self.kube.delete(
                PODS, meta["name"], namespace=meta["namespace"], grace_period_seconds=0, uid=meta["uid"]
            )
            self.removed.add(key)
            log.debug("kubelet.removed", pod=key)

    async def run(self, interval: float = 0.25) -> None:
        """Sync forever; API trouble is logged and retried."""
        while True:
            try:
                await self.sync()
            except ControllerError as exc:
                log.warning("kubelet.sync_failed", error=str(exc))
            await asyncio.sleep(interval)


async def _main(kubeconfig: str, nodes: Sequence[str] | None) -> None:
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    kube = await Kube.connect(kubeconfig=kubeconfig)
    try:
        task = asyncio.create_task(Kubelet(kube, nodes=nodes).run(), name="kubelet")
        await stop.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    finally:
        await kube.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m e2e.kubelet", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--nodes", default=None, help="comma-separated node names (default: every node)")
    args = parser.parse_args(argv)
    from topobridge import logs

    logs.configure(level="info", json_output=True)
    asyncio.run(_main(args.kubeconfig, args.nodes.split(",") if args.nodes else None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
