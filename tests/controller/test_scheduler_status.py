"""What the fallback scheduler tells users: an unschedulable gang's pods carry PodScheduled=False
with the engine's reason and message, its Volcano PodGroup phase Pending with an Unschedulable
condition; once room appears the gang binds whole and the PodGroup says Running/Scheduled."""

from __future__ import annotations

from typing import Any

import pytest
from controller_helpers import controller_replica, create_node, delete_nodes, eventually

from controller.kube import JsonDict, Kube
from controller.manager import ControllerOptions
from controller.resources import PODS, VOLCANO_PODGROUPS

pytestmark = pytest.mark.integration

NODES = ["st-node-0", "st-node-1", "st-node-2"]


async def test_unschedulable_then_scheduled_status(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    for n in NODES[:2]:
        await create_node(admin, n, cpu="8")
    await admin.create(
        VOLCANO_PODGROUPS,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "big", "namespace": namespace},
            "spec": {"minMember": 3},
        },
    )
    for i in range(3):
        await admin.create(
            PODS,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"big-{i}",
                    "namespace": namespace,
                    "annotations": {"scheduling.k8s.io/group-name": "big"},
                },
                "spec": {
                    "schedulerName": "topobridge",
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "6"}}}],
                },
            },
        )
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        leader_election=None,
        scheduler_tuning={"period": 0.5},
    )
    try:
        async with controller_replica(control_plane.kubeconfig, options, user=controller_user):

            async def reported() -> tuple[list[JsonDict], JsonDict] | None:
                pods = (await admin.list(PODS, namespace=namespace)).items
                conds = [
                    next(
                        (c for c in p["status"].get("conditions") or [] if c["type"] == "PodScheduled"), None
                    )
                    for p in pods
                ]
                pg = await admin.get(VOLCANO_PODGROUPS, "big", namespace=namespace)
                if all(c and c["status"] == "False" for c in conds) and (pg.get("status") or {}).get(
                    "conditions"
                ):
                    return [c for c in conds if c], pg
                return None

            conds, pg = await eventually(reported, what="unschedulable status on the pods and the PodGroup")
            assert {c["reason"] for c in conds} == {"Unschedulable"}
            # The first member carries the fit error; the others say the gang waits on it.
            firsts = [c["message"] for c in conds if c["message"].startswith("0/2 nodes are available")]
            assert len(firsts) == 1
            message = firsts[0]
            others = [c["message"] for c in conds if c["message"] != message]
            assert len(others) == len(conds) - 1 and all(
                m.startswith(f'GangGroup "{namespace}/big" gets rejected due to member Pod') for m in others
            )
            assert pg["status"]["phase"] == "Pending"
            unsched = [c for c in pg["status"]["conditions"] if c["type"] == "Unschedulable"]
            assert unsched and unsched[0]["status"] == "False"
            # The PodGroup's message is the pod's, with explain's short form: two of the three
            # pods fit in the cluster, one on the best node.
            assert unsched[0]["message"].startswith(f"{message} [best per tier: ")
            assert unsched[0]["message"].endswith(" 1/3, cluster 2/3]"), unsched[0]["message"]
            assert not any(
                p["spec"].get("nodeName") for p in (await admin.list(PODS, namespace=namespace)).items
            )

            await create_node(admin, NODES[2], cpu="8")  # room for the third pod: the gang goes whole

            async def scheduled() -> JsonDict | None:
                pods = (await admin.list(PODS, namespace=namespace)).items
                pg = await admin.get(VOLCANO_PODGROUPS, "big", namespace=namespace)
                if (
                    all(p["spec"].get("nodeName") for p in pods)
                    and (pg.get("status") or {}).get("phase") == "Running"
                ):
                    return pg
                return None

            pg = await eventually(scheduled, what="the gang bound and the PodGroup Running")
            cond = next(c for c in pg["status"]["conditions"] if c["type"] == "Scheduled")
            assert cond["status"] == "True" and cond["message"].startswith("3 pods bound")
            nodes = {p["spec"]["nodeName"] for p in (await admin.list(PODS, namespace=namespace)).items}
            assert nodes == set(NODES), "one 6-CPU pod per 8-CPU node"
    finally:
        await delete_nodes(admin, NODES)
