"""`simulate --from-cluster` on the real local kube-apiserver: it reads the snapshot through the
kubeconfig, places pending pods in the simulation, and writes nothing back."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from typing import Any

from controller.errors import NotFoundError
from controller.kube import Kube
from controller.placer.scenario import load_scenario, simulate
from controller.resources import NODES, PODS
from topobridge.cmd_simulate import Source, run
from topobridge.snapshot_io import read_cluster_async


def _node(name: str, zone: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"sim-zone": zone}}}


def _pod(name: str, *, node: str | None = None, scheduler: str, zone: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "nodeSelector": {"sim-zone": zone},
        "containers": [
            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "4", "memory": "1Gi"}}}
        ],
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def test_from_cluster_simulates_the_live_snapshot_read_only(
    control_plane: Any, kube: Any, namespace: str
) -> None:
    k = Kube.from_api_client(kube)
    zone = "z" + namespace.rsplit("-", 1)[-1]
    scheduler = f"sim-{zone}"
    nodes = [f"{namespace}-a", f"{namespace}-b"]
    try:
        for n in nodes:
            # As a Ready kubelet leaves it: allocatable set, and without the not-ready taint that
            # admission adds to every new node (no node lifecycle controller runs without kubelets).
            await k.create(NODES, _node(n, zone))
            await k.merge_patch(
                NODES,
                n,
                {
                    "status": {
                        "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                        "conditions": [{"type": "Ready", "status": "True"}],
                    }
                },
                subresource="status",
            )
            await k.merge_patch(NODES, n, {"spec": {"taints": None}})
        await k.create(
            PODS,
            _pod("running", node=nodes[0], scheduler="default-scheduler", zone=zone),
            namespace=namespace,
        )
        await k.create(PODS, _pod("pending", scheduler=scheduler, zone=zone), namespace=namespace)

        objects = await read_cluster_async(kubeconfig=control_plane.kubeconfig)
        result = simulate(load_scenario(objects, lenient=True), schedulers=[scheduler])
        assert result.bound == {f"{namespace}/pending": nodes[1]}

        out, err = io.StringIO(), io.StringIO()
        code = await asyncio.to_thread(
            run,
            Source(from_cluster=True, kubeconfig=control_plane.kubeconfig),
            scheduler_names=scheduler,
            output="json",
            out=out,
            err=err,
        )
        assert code == 0, err.getvalue()
        assert json.loads(out.getvalue())["bound"] == {f"{namespace}/pending": nodes[1]}

        # A dry run: the API server still has the pod unbound.
        live = await k.get(PODS, "pending", namespace=namespace)
        assert not live["spec"].get("nodeName")
    finally:
        for n in nodes:
            with contextlib.suppress(NotFoundError):
                await k.delete(NODES, n)
