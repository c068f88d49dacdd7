"""Every pending member of an unschedulable gang carries its PodScheduled reason, also a pod
that joins the gang after its verdict was written, and the pods of a gang deleted and created
again under the same names.

The scheduler writes a gang's verdict only when it changes (an unschedulable gang costs nothing
per cycle). The verdict was remembered by the gang's key, its code and its message alone, so
a member that joined while the message stayed the same, or a pod recreated under a member's
name between two cycles (a StatefulSet's, an LWS group's), was never written to: it stayed
pending with no reason at all. Found by `hack/livefuzz.py` (seed 9, round 2: an Indexed Job's
pods whose completion index is `²`, stored again under the names of the round before)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from controller_helpers import controller_replica, create_node, delete_nodes, eventually

from controller.errors import NotFoundError
from controller.kube import JsonDict, Kube
from controller.manager import ControllerOptions
from controller.resources import PODS

pytestmark = pytest.mark.integration

NODE = "reported-members-0"
INDEX = "batch.kubernetes.io/job-completion-index"


def _member(name: str, namespace: str, index: str) -> JsonDict:
    """A pod of the GPU dialect's Indexed Job `train` (its `controller-uid` label); index `²`
    is not a decimal integer."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"job-name": "train", "controller-uid": "uid-train"},
            "annotations": {INDEX: index, "gpu.topology/policy": "nvlink", "gpu.topology/max-nodes": "2"},
            # No ownerReference: the garbage collector would delete pods whose Job does not exist.
        },
        "spec": {
            "schedulerName": "topobridge",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
        },
    }


def _reason(pod: JsonDict) -> str:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return str(c.get("message") or "")
    return ""


async def _all_told(admin: Kube, namespace: str, names: list[str]) -> dict[str, str]:
    async def told() -> dict[str, str]:
        pods = {p["metadata"]["name"]: p for p in (await admin.list(PODS, namespace=namespace)).items}
        reasons = {n: _reason(pods[n]) for n in names if n in pods}
        assert len(reasons) == len(names) and all(reasons.values()), f"reasons now: {reasons}"
        return reasons

    return await eventually(told, timeout=30, what=f"a PodScheduled reason on each of {names}")


async def test_a_member_that_joins_or_is_recreated_gets_the_gangs_reason(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    await create_node(admin, NODE, cpu="8")
    for name, index in (("train-0", "²"), ("train-1", "1")):
        await admin.create(PODS, _member(name, namespace, index))
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        leader_election=None,
        scheduler_tuning={"period": 0.5},
    )
    try:
        async with controller_replica(control_plane.kubeconfig, options, user=controller_user):
            first = await _all_told(admin, namespace, ["train-0", "train-1"])
            assert any(f"metadata.annotations[{INDEX}]" in m and '"²"' in m for m in first.values()), first

            # A member joins; the gang's verdict (it names train-0's index) reads the same.
            await admin.create(PODS, _member("train-2", namespace, "2"))
            joined = await _all_told(admin, namespace, ["train-0", "train-1", "train-2"])
            assert f'GangGroup "{namespace}/train"' in joined["train-2"] or INDEX in joined["train-2"]

            # Every member deleted and created again at once, under the same names.
            for name in joined:
                await admin.delete(PODS, name, namespace=namespace, grace_period_seconds=0)
            for name, index in (("train-0", "²"), ("train-1", "1"), ("train-2", "2")):
                await admin.create(PODS, _member(name, namespace, index))
            again = await _all_told(admin, namespace, ["train-0", "train-1", "train-2"])
            assert again == joined
    finally:
        for name in ("train-0", "train-1", "train-2"):
            with contextlib.suppress(NotFoundError):
                await admin.delete(PODS, name, namespace=namespace, grace_period_seconds=0)
        await delete_nodes(admin, [NODE])
