"""Scheduler hand-off per schedulerName, on the real API server: topobridge serves a name only
while no other scheduler of that name runs (koord-scheduler by its renewed Lease, Volcano by its
ready Deployment), leaves pods already bound where they are, and tells pending pods when it
hands them over."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from controller_helpers import Kubelet, controller_replica, create_node, delete_nodes, eventually, running
from test_replicas import create_gang

from controller.errors import AlreadyExistsError, NotFoundError
from controller.handoff import HandOffConfig, PresenceRule, default_rules
from controller.kube import JsonDict, Kube
from controller.leaderelection import micro_time
from controller.manager import ControllerOptions, Manager
from controller.resources import DEPLOYMENTS, EVENTS, LEASES, PODS
from controller.runtime.scheduler import HANDED_OFF_REASON

pytestmark = pytest.mark.integration

LEASE_SECONDS = 2


async def nodes_of(kube: Kube, namespace: str, prefix: str) -> dict[str, str | None]:
    pods = (await kube.list(PODS, namespace=namespace)).items
    return {
        p["metadata"]["name"]: p["spec"].get("nodeName")
        for p in pods
        if p["metadata"]["name"].startswith(prefix)
    }


async def bound(kube: Kube, namespace: str, prefix: str) -> int:
    return sum(1 for node in (await nodes_of(kube, namespace, prefix)).values() if node)


def present(manager: Manager, name: str) -> bool | None:
    return manager.scope.handoff.present(name) if manager.scope is not None else None


class FakeKoordScheduler:
    """A koord-scheduler that does nothing but hold its leader-election Lease, renewing it
    every half second while `renewing` is set."""

    def __init__(self, kube: Kube, namespace: str) -> None:
        self.kube = kube
        self.namespace = namespace
        self.renewing = asyncio.Event()
        self.renewals = 0

    async def create(self) -> None:
        now = micro_time()
        await self.kube.create(
            LEASES,
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "koord-scheduler", "namespace": self.namespace},
                "spec": {
                    "holderIdentity": "koord-scheduler-0",
                    "leaseDurationSeconds": LEASE_SECONDS,
                    "acquireTime": now,
                    "renewTime": now,
                },
            },
        )

    async def run(self) -> None:
        while True:
            await self.renewing.wait()
            await self.kube.merge_patch(
                LEASES, "koord-scheduler", {"spec": {"renewTime": micro_time()}}, namespace=self.namespace
            )
            self.renewals += 1
            await asyncio.sleep(0.5)


async def test_koord_scheduler_lease_hands_its_pods_over_and_back(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str, make_namespace: Any
) -> None:
    koord_ns = await make_namespace("koordinator")
    nodes = ["ho-node-0", "ho-node-1"]
    for n in nodes:
        await create_node(admin, n, cpu="8")
    koord = FakeKoordScheduler(admin, koord_ns)
    await koord.create()
    koord.renewing.set()
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        leader_election=None,
        handoff=HandOffConfig(
            scheduler_names=("koord-scheduler", "topobridge"),
            rules=(PresenceRule("koord-scheduler", "lease", koord_ns, "koord-scheduler"),),
            interval=0.3,
        ),
        scheduler_tuning={"period": 0.5},
    )
    try:
        async with (
            running(koord.run(), "koord-scheduler"),
            controller_replica(control_plane.kubeconfig, options, user=controller_user) as manager,
        ):
            await eventually(
                lambda: _is(present(manager, "koord-scheduler"), True), what="koord-scheduler seen running"
            )
            # Its pods are left alone; pods of a name nobody else serves are still placed.
            await create_gang(admin, namespace, "koord-a", 3, scheduler_name="koord-scheduler")
            await create_gang(admin, namespace, "own", 2)
            await eventually(
                lambda: _eq(bound(admin, namespace, "own-"), 2), what="topobridge's own gang bound"
            )
            for _ in range(3):  # several hand-off checks and scheduler cycles after the gang came
                await manager.scope.handoff.refresh()  # type: ignore[union-attr]
                await asyncio.sleep(0.5)
            assert koord.renewals > 0
            assert await bound(admin, namespace, "koord-a-") == 0, "bound pods of a running koord-scheduler"

            # The renewals stop: once the lease duration passes, topobridge takes the pods over.
            koord.renewing.clear()
            await eventually(
                lambda: _eq(bound(admin, namespace, "koord-a-"), 3),
                timeout=30,
                what="koord-scheduler pods taken over once its Lease is no longer renewed",
            )
            assert present(manager, "koord-scheduler") is False
            placed = await nodes_of(admin, namespace, "koord-a-")

            # A gang that cannot fit waits with topobridge; then koord-scheduler comes back.
            await create_gang(admin, namespace, "koord-b", 2, scheduler_name="koord-scheduler", cpu="64")
            await eventually(
                lambda: _not_scheduled(admin, namespace, "koord-b-0"),
                what="the oversized gang reported unschedulable by topobridge",
            )
            koord.renewing.set()
            await eventually(
                lambda: _has_event(admin, namespace, "koord-b-0", HANDED_OFF_REASON),
                timeout=30,
                what="an Event on the pending pod when koord-scheduler returns",
            )
            events = await _events(admin, namespace, "koord-b-1")
            assert any(
                e["reason"] == HANDED_OFF_REASON and "koord-scheduler is running" in e["message"]
                for e in events
            ), events
            # Pods already running stay where topobridge put them.
            assert await nodes_of(admin, namespace, "koord-a-") == placed
            assert await bound(admin, namespace, "koord-b-") == 0
    finally:
        await delete_nodes(admin, nodes)


async def test_volcano_deployment_hands_volcano_pods_over_and_back(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str, make_namespace: Any
) -> None:
    """Volcano is present while its CRDs are served (they are, here) and its scheduler
    Deployment has a ready replica; only pods named `volcano` are handed over."""
    volcano_ns = await make_namespace("volcano")
    nodes = ["vd-node-0", "vd-node-1"]
    for n in nodes:
        await create_node(admin, n, cpu="8")
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        leader_election=None,
        handoff=HandOffConfig(
            scheduler_names=("volcano", "topobridge"),
            rules=default_rules(volcano_namespace=volcano_ns, volcano_deployment="volcano-scheduler"),
            interval=0.5,
        ),
        scheduler_tuning={"period": 0.5},
    )
    kubelet = Kubelet(admin, volcano_ns)
    try:
        async with (
            controller_replica(control_plane.kubeconfig, options, user=controller_user) as manager,
            running(kubelet.run(0.2), "kubelet"),
        ):
            await create_gang(admin, namespace, "early", 3, scheduler_name="volcano")
            await eventually(
                lambda: _eq(bound(admin, namespace, "early-"), 3),
                what="a volcano gang bound while Volcano is absent",
            )
            # Volcano arrives: a Deployment whose pod becomes ready (pinned to a node, no scheduler needed).
            await admin.create(DEPLOYMENTS, volcano_deployment(volcano_ns, nodes[0]))
            await eventually(
                lambda: _is(present(manager, "volcano"), True), timeout=60, what="Volcano to be detected"
            )
            await create_gang(admin, namespace, "late", 3, scheduler_name="volcano")
            await create_gang(admin, namespace, "mine", 2)
            await eventually(
                lambda: _eq(bound(admin, namespace, "mine-"), 2), what="topobridge's own gang bound"
            )
            for _ in range(3):
                await manager.scope.handoff.refresh()  # type: ignore[union-attr]
                await asyncio.sleep(0.5)
            assert await bound(admin, namespace, "late-") == 0, (
                "the fallback bound volcano pods with Volcano present"
            )
            assert await bound(admin, namespace, "early-") == 3

            # Volcano goes away again: the fallback scheduler takes the waiting gang.
            await admin.delete(
                DEPLOYMENTS, "volcano-scheduler", namespace=volcano_ns, propagation="Background"
            )
            await eventually(
                lambda: _eq(bound(admin, namespace, "late-"), 3),
                timeout=60,
                what="the fallback scheduler to resume once Volcano is gone",
            )
    finally:
        await delete_nodes(admin, nodes)
        with contextlib.suppress(NotFoundError, AlreadyExistsError):
            await admin.delete(DEPLOYMENTS, "volcano-scheduler", namespace=volcano_ns)


def volcano_deployment(namespace: str, node: str) -> JsonDict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "volcano-scheduler", "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "volcano-scheduler"}},
            "template": {
                "metadata": {"labels": {"app": "volcano-scheduler"}},
                "spec": {"nodeName": node, "containers": [{"name": "s", "image": "volcano"}]},
            },
        },
    }


async def _events(kube: Kube, namespace: str, pod: str) -> list[JsonDict]:
    return [
        e
        for e in (await kube.list(EVENTS, namespace=namespace)).items
        if (e.get("involvedObject") or {}).get("name") == pod
    ]


async def _has_event(kube: Kube, namespace: str, pod: str, *reasons: str) -> bool:
    return any(e["reason"] in reasons for e in await _events(kube, namespace, pod))


async def _not_scheduled(kube: Kube, namespace: str, pod: str) -> bool:
    conds = ((await kube.get(PODS, pod, namespace=namespace)).get("status") or {}).get("conditions") or []
    return any(c["type"] == "PodScheduled" and c["status"] == "False" for c in conds)


async def _eq(value: Any, want: int) -> bool:
    return bool(await value == want)


async def _is(value: bool | None, want: bool) -> bool:
    return value is want
