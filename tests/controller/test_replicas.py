"""Leader election with real processes: two `topobridge run` replicas, exactly one schedules;
SIGKILL the leader mid-run and the other takes over within 20 s, and no pod is bound twice."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from controller_helpers import create_node, delete_nodes, eventually, running

from controller.informer import FuncHandler, Informer
from controller.kube import JsonDict, Kube
from controller.resources import LEASES, PODS, VOLCANO_PODGROUPS

pytestmark = pytest.mark.integration

NODES = [f"rp-node-{i}" for i in range(8)]
LEASE = "topobridge-controller"


async def start_replica(control_plane: Any, namespace: str, identity: str, user: str, log: Path) -> Any:
    with log.open("wb") as sink:  # the child keeps its own copy of the descriptor
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "topobridge.cli",
            "--log-format",
            "json",
            "run",
            "--no-webhook",
            "--kubeconfig",
            control_plane.kubeconfig,
            "--as",
            user,
            "--lease-namespace",
            namespace,
            "--identity",
            identity,
            "--no-lws",
            "--no-hypernodes",
            "--metrics-port",
            "0",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=sink,
            env={**os.environ},
        )


def log_events(path: Path) -> list[JsonDict]:
    out = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


async def create_gang(
    kube: Kube, namespace: str, name: str, size: int, *, scheduler_name: str = "topobridge", cpu: str = "500m"
) -> None:
    await kube.create(
        VOLCANO_PODGROUPS,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": size},
        },
    )
    for i in range(size):
        await kube.create(
            PODS,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-{i}",
                    "namespace": namespace,
                    "annotations": {"scheduling.k8s.io/group-name": name},
                },
                "spec": {
                    "schedulerName": scheduler_name,
                    "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
                },
            },
        )


async def all_bound(kube: Kube, namespace: str, expected: int) -> bool:
    pods = (await kube.list(PODS, namespace=namespace)).items
    return len(pods) == expected and all(p["spec"].get("nodeName") for p in pods)


async def holder(kube: Kube, namespace: str) -> str:
    try:
        return str((await kube.get(LEASES, LEASE, namespace=namespace))["spec"].get("holderIdentity") or "")
    except Exception:
        return ""


async def test_one_leader_schedules_and_a_killed_leader_is_replaced(
    control_plane: Any, tkube: Kube, controller_user: str, namespace: str, tmp_path: Path
) -> None:
    for n in NODES:
        await create_node(tkube, n, cpu="8")
    node_history: dict[str, list[str | None]] = defaultdict(list)
    watcher = Informer(tkube, PODS, namespace=namespace, resync_period=None)
    watcher.add_handler(
        FuncHandler(
            lambda o: node_history[o["metadata"]["name"]].append(o["spec"].get("nodeName")), on_resync=False
        )
    )
    logs = {name: tmp_path / f"{name}.log" for name in ("replica-a", "replica-b")}
    procs: dict[str, Any] = {}
    try:
        async with running(watcher.run(), "pod-history"):
            procs["replica-a"] = await start_replica(
                control_plane, namespace, "replica-a", controller_user, logs["replica-a"]
            )
            await eventually(
                lambda: _is(holder(tkube, namespace), "replica-a"), timeout=30, what="replica-a to lead"
            )
            procs["replica-b"] = await start_replica(
                control_plane, namespace, "replica-b", controller_user, logs["replica-b"]
            )
            await asyncio.sleep(3)  # b is up and contending

            for g in range(5):
                await create_gang(tkube, namespace, f"first-{g}", 4)
            await eventually(
                lambda: all_bound(tkube, namespace, 20), timeout=30, what="the first gangs bound"
            )

            # Kill the leader without warning, right after handing it new work.
            for g in range(5):
                await create_gang(tkube, namespace, f"second-{g}", 4)
            procs["replica-a"].kill()
            killed_at = time.monotonic()
            await procs["replica-a"].wait()
            await eventually(
                lambda: _is(holder(tkube, namespace), "replica-b"),
                timeout=25,
                interval=0.2,
                what="replica-b to take the lease",
            )
            takeover = time.monotonic() - killed_at
            await eventually(lambda: all_bound(tkube, namespace, 40), timeout=40, what="every gang bound")
    finally:
        for p in procs.values():
            if p.returncode is None:
                p.kill()
                await p.wait()
        await delete_nodes(tkube, NODES)

    assert takeover <= 20.0, f"takeover took {takeover:.1f}s"
    events = {name: log_events(path) for name, path in logs.items()}
    led = {name: any(e.get("event") == "controller.leading" for e in evs) for name, evs in events.items()}
    assert led == {"replica-a": True, "replica-b": True}
    # While both ran, only the leader scheduled: b bound nothing before a died.
    b_binds_before = [
        e
        for e in events["replica-b"]
        if e.get("event", "").startswith("bind.gang_")
        and e.get("gang", "").split("/")[-1].startswith("first-")
    ]
    assert not b_binds_before, "the standby replica bound pods while the leader was alive"
    a_first = {e["gang"] for e in events["replica-a"] if e.get("event") == "bind.gang_complete"}
    assert {f"{namespace}/first-{g}" for g in range(5)} <= a_first
    # No pod bound twice: once a pod has a node it never changes, and every pod has one.
    for pod, history in node_history.items():
        seen = [n for n in history if n]
        assert seen and len(set(seen)) == 1, f"{pod} nodes over time: {history}"
    # Every gang whole, on one side or split across the failover but never half-bound.
    pods = (await tkube.list(PODS, namespace=namespace)).items
    assert len(pods) == 40 and all(p["spec"].get("nodeName") for p in pods)
    print(f"\nleader failover: takeover {takeover:.1f}s after SIGKILL")


async def _is(value: Any, want: str) -> bool:
    return bool(await value == want)
