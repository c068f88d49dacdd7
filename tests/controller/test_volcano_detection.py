"""Volcano detection: the fallback scheduler places gangs while Volcano is absent and stops
once a ready volcano-scheduler Deployment appears (its CRDs are already served here)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from controller_helpers import Kubelet, controller_replica, create_node, delete_nodes, eventually, running
from test_replicas import create_gang

from controller.errors import AlreadyExistsError, NotFoundError
from controller.kube import Kube
from controller.manager import ControllerOptions
from controller.resources import DEPLOYMENTS, PODS, Resource
from controller.volcano import VolcanoDetectionConfig

pytestmark = pytest.mark.integration

NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
NODES = ["vd-node-0", "vd-node-1"]


async def bound(kube: Kube, namespace: str, prefix: str) -> int:
    pods = (await kube.list(PODS, namespace=namespace)).items
    return sum(1 for p in pods if p["metadata"]["name"].startswith(prefix) and p["spec"].get("nodeName"))


async def test_scheduler_runs_only_while_volcano_is_absent(
    control_plane: Any, tkube: Kube, controller_user: str, namespace: str, make_namespace: Any
) -> None:
    volcano_ns = await make_namespace("volcano")
    for n in NODES:
        await create_node(tkube, n, cpu="8")
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        leader_election=None,
        volcano=VolcanoDetectionConfig(namespace=volcano_ns, deployment="volcano-scheduler", interval=0.5),
    )
    kubelet = Kubelet(tkube, volcano_ns)
    try:
        async with (
            controller_replica(control_plane.kubeconfig, options, user=controller_user) as manager,
            running(kubelet.run(0.2), "kubelet"),
        ):
            await create_gang(tkube, namespace, "early", 3)
            await eventually(
                lambda: _eq(bound(tkube, namespace, "early-"), 3), what="a gang bound while Volcano is absent"
            )

            # Volcano arrives: a Deployment whose pod becomes ready (pinned to a node, no scheduler needed).
            await tkube.create(
                DEPLOYMENTS,
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": {"name": "volcano-scheduler", "namespace": volcano_ns},
                    "spec": {
                        "replicas": 1,
                        "selector": {"matchLabels": {"app": "volcano-scheduler"}},
                        "template": {
                            "metadata": {"labels": {"app": "volcano-scheduler"}},
                            "spec": {"nodeName": NODES[0], "containers": [{"name": "s", "image": "volcano"}]},
                        },
                    },
                },
            )

            async def volcano_seen() -> bool:
                return manager.scope is not None and manager.scope.detector.present is True

            await eventually(volcano_seen, timeout=60, what="Volcano to be detected")
            await create_gang(tkube, namespace, "late", 3)
            for _ in range(20):  # five seconds, several scheduler periods: nothing may bind now
                assert await bound(tkube, namespace, "late-") == 0, (
                    "the fallback scheduler bound with Volcano present"
                )
                await asyncio.sleep(0.25)

            # Volcano goes away again: the fallback scheduler resumes and takes the waiting gang.
            await tkube.delete(
                DEPLOYMENTS, "volcano-scheduler", namespace=volcano_ns, propagation="Background"
            )
            await eventually(
                lambda: _eq(bound(tkube, namespace, "late-"), 3),
                timeout=60,
                what="the fallback scheduler to resume once Volcano is gone",
            )
    finally:
        await delete_nodes(tkube, NODES)
        with contextlib.suppress(NotFoundError, AlreadyExistsError):
            await tkube.delete(DEPLOYMENTS, "volcano-scheduler", namespace=volcano_ns)


async def _eq(value: Any, want: int) -> bool:
    return bool(await value == want)
