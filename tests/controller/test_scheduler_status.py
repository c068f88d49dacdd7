"""What the fallback scheduler tells users: an unschedulable gang's pods carry PodScheduled=False
with the engine's reason and message, its Volcano PodGroup phase Pending with an Unschedulable
condition; once room appears the gang binds whole and the PodGroup says Running/Scheduled.

Read as users' tools read them: `kubectl wait --for=condition=Unschedulable` on the PodGroup
(Volcano's condition, status True) and `kubectl describe pod` (kube-scheduler's
`FailedScheduling` Event), with the kubectl built beside the control plane."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from controller_helpers import controller_replica, create_node, delete_nodes, eventually
from prometheus_client import REGISTRY

from controller.kube import JsonDict, Kube
from controller.manager import ControllerOptions
from controller.resources import PODS, VOLCANO_PODGROUPS
from topobridge.devcluster import default_bin_dir

pytestmark = pytest.mark.integration

NODES = ["st-node-0", "st-node-1", "st-node-2"]


async def kubectl(kubeconfig: str, *args: str) -> tuple[int, str]:
    """kubectl's exit code and its output (stdout and stderr together)."""
    proc = await asyncio.create_subprocess_exec(
        str(default_bin_dir() / "kubectl"),
        f"--kubeconfig={kubeconfig}",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode(errors="replace")


def pending_here(namespace: str) -> dict[tuple[str, str], float]:
    """`topobridge_pending_gangs_by_reason` of `namespace`: (dialect, reason) -> gangs."""
    return {
        (s.labels["dialect"], s.labels["reason"]): s.value
        for family in REGISTRY.collect()
        if family.name == "topobridge_pending_gangs_by_reason"
        for s in family.samples
        if s.labels.get("namespace") == namespace
    }


async def unschedulable_as_tools_read_it(kubeconfig: str, namespace: str, head: str) -> None:
    """`kubectl wait --for=condition=Unschedulable` on the PodGroup, `FailedScheduling` in
    `kubectl describe pod`, Volcano's `Unschedulable` Event on the PodGroup."""
    code, out = await kubectl(
        kubeconfig,
        "wait",
        "--for=condition=Unschedulable",
        "podgroups.scheduling.volcano.sh/big",
        f"--namespace={namespace}",
        "--timeout=30s",
    )
    assert code == 0 and "condition met" in out, out

    async def described() -> str | None:
        code, out = await kubectl(kubeconfig, "describe", "pod", "big-0", "-n", namespace)
        assert code == 0, out
        return out if "FailedScheduling" in out else None

    out = await eventually(described, what="kubectl describe pod showing FailedScheduling")
    events = out[out.index("Events:") :]
    assert "Warning  FailedScheduling" in events and "topobridge" in events, events

    async def group_event() -> str | None:
        _, out = await kubectl(
            kubeconfig,
            "describe",
            "podgroups.scheduling.volcano.sh",
            "big",
            "-n",
            namespace,
        )
        return out if "Warning  Unschedulable" in out else None

    out = await eventually(group_event, what="an Unschedulable Event on the PodGroup")
    assert head in out[out.index("Events:") :], out


async def scheduled_as_tools_read_it(kubeconfig: str, namespace: str) -> None:
    """`kubectl wait --for=condition=Scheduled`, and kube-scheduler's `Scheduled` Event on a pod."""
    code, out = await kubectl(
        kubeconfig,
        "wait",
        "--for=condition=Scheduled",
        "podgroups.scheduling.volcano.sh/big",
        f"--namespace={namespace}",
        "--timeout=30s",
    )
    assert code == 0, out

    async def assigned() -> str | None:
        _, out = await kubectl(kubeconfig, "describe", "pod", "big-2", "-n", namespace)
        return out if "Successfully assigned" in out else None

    out = await eventually(assigned, what="a Scheduled Event on the pod")
    assert f"Successfully assigned {namespace}/big-2 to st-node-" in out


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
            assert unsched and unsched[0]["status"] == "True"
            assert unsched[0]["reason"] == "NotEnoughResources"
            assert "Scheduled" not in {c["type"] for c in pg["status"]["conditions"]}
            # Volcano's head, then the pod's message, with explain's short form: two of the
            # three pods fit in the cluster, one on the best node.
            head = "3/3 tasks in gang unschedulable: "
            assert unsched[0]["message"].startswith(f"{head}{message} [best per tier: ")
            assert unsched[0]["message"].endswith(" 1/3, cluster 2/3]"), unsched[0]["message"]

            # The leader's metrics: one gang pending here, a Volcano one the cluster has no room for.
            assert pending_here(namespace) == {("volcano", "Unresolvable"): 1.0}
            assert (REGISTRY.get_sample_value("topobridge_pending_gangs") or 0) >= 1

            await unschedulable_as_tools_read_it(control_plane.kubeconfig, namespace, head)
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
            assert cond["reason"] == "tasks in gang are ready to be scheduled"
            assert pending_here(namespace) == {}
            assert "Unschedulable" not in {c["type"] for c in pg["status"]["conditions"]}
            await scheduled_as_tools_read_it(control_plane.kubeconfig, namespace)
            nodes = {p["spec"]["nodeName"] for p in (await admin.list(PODS, namespace=namespace)).items}
            assert nodes == set(NODES), "one 6-CPU pod per 8-CPU node"
    finally:
        await delete_nodes(admin, NODES)
