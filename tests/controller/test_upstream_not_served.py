"""`topobridge run` against an API server that serves no `scheduling.k8s.io` PodGroups (the
v1.20 dev control plane; 1.35+ serve them behind `GenericWorkload`): discovery leaves the kind
out, the process says so once, and the fallback scheduler carries on placing pods."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import pytest
from controller_helpers import create_node, delete_nodes, eventually
from run_process import Ports, start_run

from controller.kube import Kube
from controller.resources import K8S_PODGROUPS, PODS
from translations import kinds

pytestmark = pytest.mark.integration


async def test_run_carries_on_without_the_gang_api_saying_so_once(
    control_plane: Any, admin: Kube, namespace: str
) -> None:
    assert not await admin.serves(K8S_PODGROUPS)
    node = f"upstream-{namespace}"[:63]
    await create_node(admin, node)
    proc = await start_run(
        "--no-webhook",
        "--lease-namespace",
        namespace,
        "--identity",
        f"upstream-{namespace}",
        kubeconfig=control_plane.kubeconfig,
        ports=Ports(),
        json_logs=True,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "plain", "namespace": namespace},
            "spec": {
                "schedulerName": "topobridge",
                "nodeSelector": {"kubernetes.io/hostname": node},
                "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
            },
        }
        await admin.create(PODS, pod, namespace=namespace)

        async def bound() -> str:
            got = await admin.get(PODS, "plain", namespace=namespace)
            return str((got.get("spec") or {}).get("nodeName") or "")

        assert await eventually(bound, timeout=60, what="the pod to be bound") == node
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 40)
        logged = (await proc.stderr.read()).decode() if proc.stderr else ""
        events = [json.loads(line) for line in logged.splitlines() if line.startswith("{")]
        said = [
            e
            for e in events
            if e.get("event") == "scheduler.kind_not_served" and e.get("kind") == kinds.K8S_PODGROUP.display
        ]
        assert len(said) == 1, logged[-3000:]
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await delete_nodes(admin, [node])
