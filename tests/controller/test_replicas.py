"""Leader election with real processes: two `topobridge run` replicas, exactly one schedules;
SIGKILL the leader mid-run and the other takes over within twice the bound the lease sets
(`takeover_bound`), and the invariant watcher, reading every binding's author from the API
server, sees each pod bound once, by the replica that held the Lease at that point."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from controller_helpers import create_node, delete_nodes, eventually

from controller.kube import JsonDict, Kube
from controller.leaderelection import LeaderElectionConfig
from controller.resources import LEASES, PODS, VOLCANO_PODGROUPS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "invariants"))
from leadership import takeover_bound
from rawclient import Endpoint
from watcher import InvariantWatcher, start

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
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
                    ],
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
    control_plane: Any, admin: Kube, controller_user: str, namespace: str, tmp_path: Path
) -> None:
    for n in NODES:
        await create_node(admin, n, cpu="8")
    lease = LeaderElectionConfig(lease_name=LEASE, lease_namespace=namespace)  # the flags' defaults
    endpoint = Endpoint(control_plane.server, control_plane.token, control_plane.ca_file)
    # Partial gangs are judged after the bind retry deadline (30 s) plus a takeover.
    watcher = InvariantWatcher(
        endpoint, settle=30.0 + takeover_bound(lease), lease=(namespace, LEASE), namespaces={namespace}
    )
    logs = {name: tmp_path / f"{name}.log" for name in ("replica-a", "replica-b")}
    procs: dict[str, Any] = {}
    watching = await start(watcher)
    try:
        procs["replica-a"] = await start_replica(
            control_plane, namespace, "replica-a", controller_user, logs["replica-a"]
        )
        await eventually(
            lambda: _is(holder(admin, namespace), "replica-a"), timeout=30, what="replica-a to lead"
        )
        procs["replica-b"] = await start_replica(
            control_plane, namespace, "replica-b", controller_user, logs["replica-b"]
        )
        await asyncio.sleep(3)  # b is up and contending

        for g in range(5):
            await create_gang(admin, namespace, f"first-{g}", 4)
        await eventually(lambda: all_bound(admin, namespace, 20), timeout=30, what="the first gangs bound")

        # Kill the leader without warning, right after handing it new work.
        for g in range(5):
            await create_gang(admin, namespace, f"second-{g}", 4)
        procs["replica-a"].kill()
        killed_at = time.monotonic()
        await procs["replica-a"].wait()
        await eventually(
            lambda: _is(holder(admin, namespace), "replica-b"),
            timeout=2 * takeover_bound(lease),
            interval=0.2,
            what="replica-b to take the lease",
        )
        takeover = time.monotonic() - killed_at
        await eventually(lambda: all_bound(admin, namespace, 40), timeout=60, what="every gang bound")
        await asyncio.sleep(1)  # the watcher's stream catches up with the last bindings
    finally:
        for p in procs.values():
            if p.returncode is None:
                p.kill()
                await p.wait()
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
        await delete_nodes(admin, NODES)

    bound = takeover_bound(lease)
    print(f"\nleader failover: takeover {takeover:.1f}s after SIGKILL (bound {bound:.1f}s)")
    # The protocol's bound is printed, not asserted: how soon a standby's loop acts on an
    # expired Lease depends on the machine's load (it must take over within twice the bound).
    events = {name: log_events(path) for name, path in logs.items()}
    led = {name: any(e.get("event") == "controller.leading" for e in evs) for name, evs in events.items()}
    assert led == {"replica-a": True, "replica-b": True}
    # From the API server's side: every binding has an author (topobridge.io/bound-by, written
    # by the binding itself), and the author held the Lease at that resourceVersion.
    assert not watcher.violations, watcher.report()
    pods = {
        f"{namespace}/{p['metadata']['name']}" for p in (await admin.list(PODS, namespace=namespace)).items
    }
    per_pod = Counter(b.pod for b in watcher.bindings)
    assert set(per_pod) == pods and set(per_pod.values()) == {1}, per_pod
    assert all(b.author is not None and b.author == b.holder for b in watcher.bindings), watcher.bindings
    by_author = Counter((b.pod.split("/")[1].split("-")[0], b.author) for b in watcher.bindings)
    # While both ran only the leader bound; once it died, only its successor did.
    assert by_author[("first", "replica-a")] == 20 and by_author[("first", "replica-b")] == 0, by_author
    last_a = max((b.resource_version for b in watcher.bindings if b.author == "replica-a"), default=0)
    takeover_rv = next(rv for rv, who in watcher.holders if who == "replica-b")
    assert last_a < takeover_rv, "replica-a bound a pod after replica-b took the Lease"
    assert sum(1 for b in watcher.bindings if b.author == "replica-b") >= 1, by_author


async def _is(value: Any, want: str) -> bool:
    return bool(await value == want)
