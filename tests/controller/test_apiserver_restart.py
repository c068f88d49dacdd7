"""Kill the API server mid-run and restart it: the controller's watches and writes reconnect
and it converges on work created after the restart (a private control plane, so no other
test sees the outage)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from controller_helpers import controller_replica, create_node, eventually
from test_lws_reconciler import REV, leader_pod, lws_body
from test_replicas import all_bound, create_gang

from controller.errors import ControllerError
from controller.kube import Kube
from controller.manager import ControllerOptions
from controller.resources import LEADERWORKERSETS, NODES, PODS, VOLCANO_PODGROUPS, Resource
from topobridge.devcluster import LocalControlPlane, ManagedProcess

pytestmark = pytest.mark.integration

NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)


@pytest.fixture
def private_plane() -> Iterator[LocalControlPlane]:
    plane = LocalControlPlane(with_controller_manager=False)
    plane.start()
    try:
        yield plane
    finally:
        plane.stop()


def restart_apiserver(plane: LocalControlPlane, *, down_for: float) -> float:
    """SIGKILL kube-apiserver, wait `down_for` seconds, start it again with the same argv.
    Returns when the new process is spawned (not yet ready)."""
    i, proc = next((i, p) for i, p in enumerate(plane.processes) if p.name == "kube-apiserver")
    argv = Path(f"/proc/{proc.pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    cwd = Path(proc.log_file).parent
    proc.signal(signal.SIGKILL)
    assert proc.wait(10), "kube-apiserver did not die"
    killed = time.monotonic()
    time.sleep(down_for)
    with open(proc.log_file, "ab") as out:
        popen = subprocess.Popen(
            [a.decode() for a in argv],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=str(cwd),
            start_new_session=True,
        )
    plane.processes[i] = ManagedProcess("kube-apiserver", popen.pid, None, proc.log_file, popen)
    return killed


async def test_apiserver_killed_and_restarted_controller_converges(private_plane: LocalControlPlane) -> None:
    kube = await Kube.connect(kubeconfig=private_plane.kubeconfig)
    try:
        for n in range(4):
            await create_node(kube, f"ar-node-{n}", cpu="8")
        await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "work"}})
        options = ControllerOptions(reconcile_hypernodes=False, leader_election=None, resync_period=30.0)
        async with controller_replica(private_plane.kubeconfig, options) as manager:
            await create_gang(kube, "work", "before", 3)
            await eventually(
                lambda: all_bound(kube, "work", 3), timeout=30, what="the gang before the outage"
            )

            killed = await asyncio.to_thread(restart_apiserver, private_plane, down_for=3.0)

            async def api_back() -> bool:
                with contextlib.suppress(ControllerError):  # custom resources are served last
                    for res in (NODES, VOLCANO_PODGROUPS, LEADERWORKERSETS):
                        await kube.list(res, namespace="work" if res.namespaced else None)
                    return True
                return False

            await eventually(api_back, timeout=90, interval=0.5, what="the API server to come back")
            outage = time.monotonic() - killed

            # Work that exists only after the restart: the controller must have reconnected.
            await create_gang(kube, "work", "after", 4)
            lws = await kube.create(
                LEADERWORKERSETS,
                lws_body("svc", "work", replicas=1, topology={"mode": "hard", "highestTierAllowed": 1}),
            )
            await kube.create(
                PODS,
                {
                    **leader_pod(lws, 0),
                    "spec": {
                        "schedulerName": "volcano",
                        "containers": [{"name": "main", "image": "busybox"}],
                    },
                },
            )

            async def after_bound() -> bool:
                pods = [
                    p
                    for p in (await kube.list(PODS, namespace="work")).items
                    if p["metadata"]["name"].startswith("after-")
                ]
                return len(pods) == 4 and all(p["spec"].get("nodeName") for p in pods)

            await eventually(after_bound, timeout=60, what="the gang after the restart")

            async def podgroup() -> bool:
                pg = await kube.get(VOLCANO_PODGROUPS, f"svc-0-{REV}", namespace="work")
                return bool(pg["spec"].get("networkTopology") == {"mode": "hard", "highestTierAllowed": 1})

            await eventually(podgroup, timeout=60, what="the LWS PodGroup after the restart")
            assert manager.scope is not None
            relists = {inf.name: inf.relists for inf in manager.scope.informers.all()}
            assert relists["pods"] >= 1
        print(f"\napiserver restart: down {outage:.1f}s (kill to ready), controller converged after it")
    finally:
        await kube.close()
