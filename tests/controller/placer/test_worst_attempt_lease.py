"""The slowest attempt known (`worst_cases.worst_attempt`: 12 s of preemption search before
attempts had a limit) runs on the real API server inside a leader-elected replica whose
Lease must be renewed within 10 s. The replica keeps its Lease through the attempt (its default
step budget), renews it, and the gang is placed once its victims are gone.

Before attempts were limited the search held the event loop for the whole 12 s: the renew
deadline passed, the replica gave up the Lease and stopped.

What is asserted does not depend on the machine's load: the renew deadline (10 s) is far above
what an attempt within its step budget holds the loop for even on a loaded 2-core machine, and
below the unbounded search; the renewals' spacing is printed, never asserted (timing goals
belong in `benchmarks/attempt_deadline.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from datetime import datetime
from typing import Any

import pytest
from controller_helpers import Kubelet, controller_replica, create_node, delete_nodes, eventually, running
from worst_cases import GANG, worst_attempt

from controller.errors import AlreadyExistsError, NotFoundError
from controller.handoff import HandOffConfig
from controller.kube import JsonDict, Kube
from controller.leaderelection import LeaderElectionConfig
from controller.manager import ControllerOptions
from controller.resources import CLUSTER_NETWORK_TOPOLOGIES, LEASES, PODS, PRIORITY_CLASSES, SIGS_PODGROUPS

pytestmark = pytest.mark.integration

LEASE = "worst-attempt"


async def _arrange(admin: Kube, namespace: str, objects: list[JsonDict]) -> list[str]:
    """Create the scenario's objects (pods in `namespace`); returns the node names."""
    nodes: list[str] = []
    for obj in objects:
        kind = obj["kind"]
        if kind == "Node":
            alloc = obj["status"]["allocatable"]
            name = obj["metadata"]["name"]
            await create_node(
                admin, name, cpu=alloc["cpu"], memory=alloc["memory"], labels=obj["metadata"]["labels"]
            )
            nodes.append(name)
        elif kind == "PriorityClass":
            with contextlib.suppress(AlreadyExistsError):
                await admin.create(PRIORITY_CLASSES, obj)
        elif kind == "ClusterNetworkTopology":
            await admin.create(CLUSTER_NETWORK_TOPOLOGIES, obj)
        elif kind == "PodGroup":
            obj["metadata"]["namespace"] = namespace
            await admin.create(SIGS_PODGROUPS, obj)
    return nodes


async def test_the_worst_attempt_runs_beside_lease_renewals(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    objects = worst_attempt()
    nodes = await _arrange(admin, namespace, objects)
    pods = [o for o in objects if o["kind"] == "Pod"]
    renewals: set[str] = set()
    holders: set[str] = set()

    async def watch_lease() -> None:
        while True:
            with contextlib.suppress(NotFoundError):
                spec = (await admin.get(LEASES, LEASE, namespace=namespace))["spec"]
                holders.add(spec.get("holderIdentity") or "")
                renewals.add(spec.get("renewTime") or "")
            await asyncio.sleep(0.2)

    try:
        for p in pods:
            if p["spec"].get("nodeName"):
                p["metadata"]["namespace"] = namespace
                await admin.create(PODS, p)
        async with (
            running(Kubelet(admin, namespace).run(), "kubelet"),
            controller_replica(control_plane.kubeconfig, _options("first", namespace), user=controller_user),
            running(watch_lease(), "lease-watch"),
        ):
            await eventually(
                lambda: _leading(holders), timeout=20, what="the first replica to take the Lease"
            )
            # A second replica stands by: it takes the Lease the moment the first lets it lapse.
            async with controller_replica(
                control_plane.kubeconfig, _options("standby", namespace), user=controller_user
            ):
                await _schedule_the_gang(admin, namespace, pods)
                await asyncio.sleep(3 * RENEW_RETRY)  # renewals past the bind: still the first's Lease
        assert holders - {""} == {"first"}, f"the Lease changed hands: {holders}"
        gaps = _gaps(renewals)
        print(f"lease renewals: {len(gaps) + 1}, largest gap {max(gaps, default=0):.2f}s")  # shown with -s
        assert gaps, f"the first replica never renewed its Lease: {sorted(renewals)}"
    finally:
        with contextlib.suppress(NotFoundError):
            await admin.delete(CLUSTER_NETWORK_TOPOLOGIES, "default")
        await delete_nodes(admin, nodes)


RENEW_DEADLINE = 10.0
RENEW_RETRY = 1.0


def _options(identity: str, namespace: str) -> ControllerOptions:
    return ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        handoff=HandOffConfig(scheduler_names=("topobridge",)),
        leader_election=LeaderElectionConfig(
            lease_name=LEASE,
            lease_namespace=namespace,
            identity=identity,
            lease_duration=15,
            renew_deadline=RENEW_DEADLINE,
            retry_period=RENEW_RETRY,
        ),
    )


async def _schedule_the_gang(admin: Kube, namespace: str, pods: list[JsonDict]) -> None:
    for p in pods:
        if not p["spec"].get("nodeName"):
            p["metadata"]["namespace"] = namespace
            await admin.create(PODS, p)

    async def gang_bound() -> bool:
        listed = (await admin.list(PODS, namespace=namespace)).items
        mine = [p for p in listed if p["metadata"]["name"].startswith(f"{GANG}-")]
        return len(mine) == 6 and all(p["spec"].get("nodeName") for p in mine)

    await eventually(gang_bound, timeout=60, interval=0.2, what="the gang to be placed after preemption")


async def _leading(holders: set[str]) -> bool:
    return "first" in holders


def _gaps(renewals: set[str]) -> list[float]:
    """Seconds between consecutive renewals seen (RFC 3339 times with microseconds)."""
    times = sorted(datetime.fromisoformat(t.replace("Z", "+00:00")) for t in renewals if t)
    return [round((b - a).total_seconds(), 2) for a, b in itertools.pairwise(times)]
