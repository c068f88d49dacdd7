"""A Volcano PodGroup's status tells the truth about what is bound now, on the real API server:
preempted members take the gang out of Running, a raised minMember does too, a gang running at
its minMember stays Running while an extra member cannot be placed, and a running gang that
loses a member from outside says so (Event and condition) and gets its replacement placed back
inside its domain."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from controller_helpers import (
    Kubelet,
    controller_replica,
    create_node,
    delete_nodes,
    eventually,
    hypernode,
    running,
)

from controller.errors import NotFoundError
from controller.kube import JsonDict, Kube
from controller.manager import ControllerOptions
from controller.resources import EVENTS, HYPERNODES, PODS, PRIORITY_CLASSES, VOLCANO_PODGROUPS, Resource

pytestmark = pytest.mark.integration

REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet", namespaced=True)
OPTIONS = ControllerOptions(
    reconcile_lws=False, reconcile_hypernodes=False, leader_election=None, scheduler_tuning={"period": 0.5}
)


def member(name: str, group: str, *, cpu: str, priority_class: str | None = None) -> JsonDict:
    spec: JsonDict = {
        "schedulerName": "topobridge",
        "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {"scheduling.k8s.io/group-name": group}},
        "spec": spec,
    }


def pod_group(name: str, min_member: int, **spec: Any) -> JsonDict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": min_member, **spec},
    }


async def gang(
    kube: Kube, namespace: str, name: str, size: int, *, cpu: str, min_member: int | None = None, **kw: Any
) -> None:
    await kube.create(VOLCANO_PODGROUPS, pod_group(name, min_member or size), namespace=namespace)
    for i in range(size):
        await kube.create(PODS, member(f"{name}-{i}", name, cpu=cpu, **kw), namespace=namespace)


async def status(kube: Kube, namespace: str, name: str) -> tuple[str | None, dict[str, JsonDict]]:
    pg = await kube.get(VOLCANO_PODGROUPS, name, namespace=namespace)
    st = pg.get("status") or {}
    return st.get("phase"), {c["type"]: c for c in st.get("conditions") or []}


async def has_phase(kube: Kube, namespace: str, name: str, phase: str, message: str | None = None) -> bool:
    current, conditions = await status(kube, namespace, name)
    if current != phase:
        return False
    return message is None or any(message in (c.get("message") or "") for c in conditions.values())


async def events(kube: Kube, namespace: str, reason: str) -> list[JsonDict]:
    return [e for e in (await kube.list(EVENTS, namespace=namespace)).items if e.get("reason") == reason]


async def test_a_preempted_gang_is_no_longer_running(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    nodes = ["ps-node-0", "ps-node-1"]
    for n in nodes:
        await create_node(admin, n, cpu="4")
    classes = {"ps-low": 10, "ps-high": 1000}
    for name, value in classes.items():
        with contextlib.suppress(Exception):
            await admin.create(
                PRIORITY_CLASSES,
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": name},
                    "value": value,
                },
            )
    try:
        async with (
            controller_replica(control_plane.kubeconfig, OPTIONS, user=controller_user),
            running(Kubelet(admin, namespace).run(0.3)),
        ):
            await gang(admin, namespace, "low", 4, cpu="2", priority_class="ps-low")
            await eventually(
                lambda: has_phase(admin, namespace, "low", "Running", "4 pods bound"), timeout=30
            )
            # A higher-priority gang needs every cpu: all four members of `low` are preempted.
            await gang(admin, namespace, "high", 2, cpu="4", priority_class="ps-high")
            await eventually(
                lambda: has_phase(admin, namespace, "high", "Running"), timeout=60, what="high bound"
            )
            await eventually(
                lambda: has_phase(
                    admin, namespace, "low", "Pending", f"gang {namespace}/low: 0 of minMember 4 pods bound"
                ),
                timeout=30,
                what="low no longer Running",
            )
            _, conditions = await status(admin, namespace, "low")
            assert conditions["Unschedulable"]["reason"] == "BelowMinMember", conditions
            assert "Scheduled" not in conditions, conditions
            assert await events(admin, namespace, "GangBelowMinMember")
    finally:
        await delete_nodes(admin, nodes)
        for name in classes:
            with contextlib.suppress(NotFoundError):
                await admin.delete(PRIORITY_CLASSES, name)


async def test_raising_min_member_above_the_bound_count_leaves_running_and_lowering_it_returns(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    nodes = ["mm-node-0"]
    await create_node(admin, nodes[0], cpu="8")
    try:
        async with controller_replica(control_plane.kubeconfig, OPTIONS, user=controller_user):
            await gang(admin, namespace, "pair", 2, cpu="1")
            await eventually(lambda: has_phase(admin, namespace, "pair", "Running"), timeout=30)
            await admin.merge_patch(
                VOLCANO_PODGROUPS, "pair", {"spec": {"minMember": 3}}, namespace=namespace
            )
            await eventually(
                lambda: has_phase(
                    admin, namespace, "pair", "Unknown", f"gang {namespace}/pair: 2 of minMember 3 pods bound"
                ),
                timeout=30,
                what="Unknown once minMember exceeds the bound count",
            )
            warned = await events(admin, namespace, "GangBelowMinMember")
            assert warned and warned[0]["type"] == "Warning", warned
            await admin.merge_patch(
                VOLCANO_PODGROUPS, "pair", {"spec": {"minMember": 2}}, namespace=namespace
            )
            await eventually(
                lambda: has_phase(admin, namespace, "pair", "Running", "2 pods bound"),
                timeout=30,
                what="Running again",
            )
    finally:
        await delete_nodes(admin, nodes)


async def test_a_gang_at_min_member_stays_running_while_an_extra_member_cannot_fit(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    nodes = ["ex-node-0"]
    await create_node(admin, nodes[0], cpu="2")
    try:
        async with controller_replica(control_plane.kubeconfig, OPTIONS, user=controller_user):
            # Three members, minMember 2, room for two: the third waits, the gang runs.
            await gang(admin, namespace, "extra", 3, cpu="1", min_member=2)

            async def third_reported() -> bool:
                pod = await admin.get(PODS, "extra-2", namespace=namespace)
                return any(
                    c["type"] == "PodScheduled" and c["status"] == "False"
                    for c in (pod.get("status") or {}).get("conditions") or []
                )

            await eventually(third_reported, timeout=40, what="the third member reported unschedulable")
            bound = [
                p for p in (await admin.list(PODS, namespace=namespace)).items if p["spec"].get("nodeName")
            ]
            assert len(bound) == 2
            await eventually(lambda: has_phase(admin, namespace, "extra", "Running"), timeout=20)
            _, conditions = await status(admin, namespace, "extra")
            assert "Unschedulable" not in conditions, conditions
    finally:
        await delete_nodes(admin, nodes)


async def test_a_running_gang_that_loses_a_member_reports_it_and_its_replacement_returns_to_the_domain(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    blocks = {"lm-block-a": ["lm-a-0", "lm-a-1"], "lm-block-b": ["lm-b-0", "lm-b-1"]}
    for members in blocks.values():
        for n in members:
            await create_node(admin, n, cpu="4")
    for name, members in blocks.items():
        await admin.create(HYPERNODES, hypernode(name, members))
    try:
        async with controller_replica(control_plane.kubeconfig, OPTIONS, user=controller_user):
            await admin.create(
                VOLCANO_PODGROUPS,
                pod_group("ring", 3, networkTopology={"mode": "hard", "highestTierAllowed": 1}),
                namespace=namespace,
            )
            for i in range(3):
                await admin.create(PODS, member(f"ring-{i}", "ring", cpu="1"), namespace=namespace)
            await eventually(
                lambda: has_phase(admin, namespace, "ring", "Running"), timeout=40, what="ring running"
            )
            pods = (await admin.list(PODS, namespace=namespace)).items
            block = next(b for b, members in blocks.items() if pods[0]["spec"]["nodeName"] in members)
            assert all(p["spec"]["nodeName"] in blocks[block] for p in pods)

            # A member disappears from outside (its node drained, say): the gang says so.
            await admin.delete(PODS, "ring-0", namespace=namespace, grace_period_seconds=0)
            message = f"gang {namespace}/ring: 2 of minMember 3 pods bound"

            async def reported() -> bool:
                warned = await events(admin, namespace, "GangBelowMinMember")
                return bool(warned) and message in warned[0]["message"] and warned[0]["type"] == "Warning"

            await eventually(reported, timeout=30, what="the GangBelowMinMember Event")
            await eventually(lambda: has_phase(admin, namespace, "ring", "Unknown", message), timeout=20)
            _, conditions = await status(admin, namespace, "ring")
            assert conditions["Unschedulable"]["reason"] == "BelowMinMember", conditions

            # Its owner recreates it: the replacement joins the bound members' block.
            await admin.create(PODS, member("ring-0", "ring", cpu="1"), namespace=namespace)

            async def replaced() -> str | None:
                return (await admin.get(PODS, "ring-0", namespace=namespace))["spec"].get("nodeName")

            node = await eventually(replaced, timeout=40, what="the replacement bound")
            assert node in blocks[block], f"replacement on {node}, the gang runs in {block}"
            await eventually(
                lambda: has_phase(admin, namespace, "ring", "Running"), timeout=20, what="Running again"
            )
    finally:
        for name in blocks:
            with contextlib.suppress(NotFoundError):
                await admin.delete(HYPERNODES, name)
        await delete_nodes(admin, [n for members in blocks.values() for n in members])


async def test_an_unknown_tier_name_places_the_gang_without_a_limit_and_the_condition_says_so(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    """As Volcano does: a `highestTierName` no HyperNode tier carries is logged and no tier limit
    applies. The gang is placed, and its PodGroup's condition carries the warning."""
    nodes = ["tn-node-0", "tn-node-1"]
    for n in nodes:
        await create_node(admin, n, cpu="4")
    try:
        async with controller_replica(control_plane.kubeconfig, OPTIONS, user=controller_user):
            body = pod_group("named", 2, networkTopology={"mode": "hard", "highestTierName": "no-such-tier"})
            await admin.create(VOLCANO_PODGROUPS, body, namespace=namespace)
            for i in range(2):
                await admin.create(PODS, member(f"named-{i}", "named", cpu="3"), namespace=namespace)
            await eventually(
                lambda: has_phase(
                    admin, namespace, "named", "Running", '"no-such-tier" names no HyperNode tier'
                ),
                timeout=30,
                what="named bound, with the warning",
            )
    finally:
        await delete_nodes(admin, nodes)
