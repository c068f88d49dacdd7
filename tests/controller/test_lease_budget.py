"""Leader election has a request budget of its own: lease renewals go through while the
client that watches and binds is saturated (a burst of binds cannot cost leadership)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from controller_helpers import eventually, running

from controller.kube import Kube, KubeSettings
from controller.leaderelection import LeaderElectionConfig
from controller.manager import ControllerOptions, Manager
from controller.resources import LEASES, PRIORITY_CLASSES

pytestmark = pytest.mark.integration

BACKLOG = 40
"""Requests queued on the shared client: 80 s of its budget at 0.5 requests per second."""


async def test_lease_renewals_go_through_while_the_shared_client_is_saturated(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    kube = await Kube.connect(
        kubeconfig=control_plane.kubeconfig,
        settings=KubeSettings(qps=0.5, burst=1, impersonate=controller_user),
    )
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        fallback_scheduler=False,
        leader_election=LeaderElectionConfig(
            lease_name="budget",
            lease_namespace=namespace,
            lease_duration=3,
            renew_deadline=2,
            retry_period=0.5,
        ),
    )
    backlog = [asyncio.ensure_future(kube.list(PRIORITY_CLASSES)) for _ in range(BACKLOG)]
    renew_times: set[str] = set()

    async def renewed_often() -> bool:
        spec = (await admin.get(LEASES, "budget", namespace=namespace))["spec"]
        if spec.get("holderIdentity") == manager.identity:
            renew_times.add(spec["renewTime"])
        return len(renew_times) >= 5

    manager = Manager(kube, options)
    try:
        async with running(manager.run(), "replica"):
            await eventually(renewed_often, timeout=30, interval=0.2, what="five lease renewals")
            waiting = sum(1 for t in backlog if not t.done())
            assert waiting >= BACKLOG // 2, f"the shared client was not saturated ({waiting} queued)"
    finally:
        for t in backlog:
            t.cancel()
        await asyncio.gather(*backlog, return_exceptions=True)
        await kube.close()
