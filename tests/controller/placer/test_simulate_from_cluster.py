"""`simulate --from-cluster` on the real local kube-apiserver: it reads the snapshot through the
kubeconfig, places pending pods in the simulation, and writes nothing back; with `-f JOB` it
answers what the job would do if it were submitted now (as `explain --from-cluster -f JOB`)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

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


async def test_from_cluster_with_a_job_answers_what_if_read_only(
    control_plane: Any, kube: Any, namespace: str, tmp_path: Path
) -> None:
    """`simulate --from-cluster -f JOB` (and `explain`): the job added to the live snapshot, as
    the ui's what-if adds a pasted one; nothing is written, and a pod the cluster already holds
    is refused."""
    k = Kube.from_api_client(kube)
    zone = "w" + namespace.rsplit("-", 1)[-1]
    scheduler = f"sim-{zone}"
    nodes = [f"{namespace}-a", f"{namespace}-b"]
    try:
        for n in nodes:
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
        job = tmp_path / "job.yaml"
        new = _pod("new", scheduler=scheduler, zone=zone)
        new["metadata"]["namespace"] = namespace
        job.write_text(json.dumps(new))
        base = ["--kubeconfig", control_plane.kubeconfig, "--from-cluster", "-f", str(job)]

        code, out, err = await asyncio.to_thread(
            _cli, ["simulate", *base, "--scheduler-names", scheduler, "-o", "json"]
        )
        assert code == 0 and "error" not in err, err
        assert json.loads(out)["bound"] == {f"{namespace}/new": nodes[1]}

        code, out, err = await asyncio.to_thread(_cli, ["explain", *base, "--scheduler-names", scheduler])
        assert code == 0, err
        assert "verdict: Success at Select" in out and f"{namespace}/new -> {nodes[1]}" in out

        # Read-only: the job was never created.
        with pytest.raises(NotFoundError):
            await k.get(PODS, "new", namespace=namespace)

        taken = _pod("running", scheduler=scheduler, zone=zone)
        taken["metadata"]["namespace"] = namespace
        job.write_text(json.dumps(taken))
        code, out, err = await asyncio.to_thread(_cli, ["simulate", *base, "-o", "json"])
        assert (code, out) == (2, "")
        assert f"pod {namespace}/running: already exists in the cluster" in err
    finally:
        for n in nodes:
            with contextlib.suppress(NotFoundError):
                await k.delete(NODES, n)


def _cli(argv: list[str]) -> tuple[int, str, str]:
    from topobridge import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["--log-level", "warning", *argv])
    return code, out.getvalue(), err.getvalue()
