"""Two replicas, as the chart runs them: one leads and schedules, the standby serves the webhook.
SIGKILL the leader (a node lost, no lease released) and the standby takes over: the next
scenario is scheduled by it, and the webhook it serves never stopped answering."""

from __future__ import annotations

import asyncio
import secrets
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from controller.errors import ApiError
from controller.kube import Kube
from controller.resources import SIGS_PODGROUPS
from e2e import local
from e2e.kubelet import Kubelet
from e2e.scenario import LOCAL, ScenarioRunner, scenario

pytestmark = pytest.mark.integration


async def test_the_standby_replica_takes_over(
    control_plane: Any, admin: Kube, kubelet: Kubelet, make_namespace: Any
) -> None:
    lease = f"topobridge-failover-{secrets.token_hex(3)}"
    work = Path(tempfile.mkdtemp(prefix="topobridge-failover-"))
    leader = await local.start(
        control_plane.kubeconfig, work / "a", lease_name=lease, identity="replica-a", register=False
    )
    standby = await local.start(
        control_plane.kubeconfig, work / "b", lease_name=lease, identity="replica-b", wait_leading=False
    )
    try:
        assert await local.is_leading(leader) and not await local.is_leading(standby)
        first = await ScenarioRunner(admin, LOCAL).run(scenario("koordinator-prefer-gather"))
        assert first.ok, first.report() + "\n" + local.log_tail(leader, 20)

        leader.process().signal(signal.SIGKILL)
        killed = time.monotonic()
        while not await local.is_leading(standby):
            assert time.monotonic() - killed < 90, "the standby never took the lease:\n" + local.log_tail(
                standby
            )
            await asyncio.sleep(0.5)
        print(f"standby leading {time.monotonic() - killed:.1f}s after the leader was killed (lease 15 s)")

        second = await ScenarioRunner(admin, LOCAL).run(scenario("seed-preemption"))
        assert second.ok, second.report() + "\n" + local.log_tail(standby, 20)

        # The webhook never depended on the leader: the standby answered all along. (A gang
        # annotation: no CRD schema sees inside it, only the webhook can refuse it.)
        namespace = await make_namespace("failover-webhook")
        bad = {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {
                "name": "bad",
                "namespace": namespace,
                "annotations": {"gang.scheduling.koordinator.sh/min-available": "two"},
            },
            "spec": {"minMember": 2},
        }
        with pytest.raises(ApiError, match=r"validate\.topobridge\.io.*min-available"):
            await admin.create(SIGS_PODGROUPS, bad)
    finally:
        await local.stop(standby)
        await local.stop(leader)
        shutil.rmtree(work, ignore_errors=True)
