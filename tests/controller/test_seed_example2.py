"""The seed's Example 2 end to end on the API server: MustGather to SpineLayer with
topology-aware preemption. low-priority-pod-5 gets DisruptionTarget and is deleted; the
gang's pods are nominated, then bound to node-5..8; nothing else is touched."""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from typing import Any

import pytest
from controller_helpers import Kubelet, controller_replica, create_node, delete_nodes, eventually, running

from controller.errors import AlreadyExistsError, NotFoundError
from controller.handoff import HandOffConfig
from controller.informer import FuncHandler, Informer
from controller.kube import JsonDict, Kube
from controller.manager import ControllerOptions
from controller.resources import (
    CLUSTER_NETWORK_TOPOLOGIES,
    HYPERNODES,
    PODS,
    PRIORITY_CLASSES,
    SIGS_PODGROUPS,
)

pytestmark = pytest.mark.integration

SPINE = "network.topology.nvidia.com/spine"
BLOCK = "network.topology.nvidia.com/block"
LAYOUT = {  # the seed's 12 nodes: spine -> block -> nodes
    "spine-0": {"block-0": [0, 1, 2], "block-1": [3, 4]},
    "spine-1": {"block-2": [5, 6], "block-3": [7, 8]},
    "spine-2": {"block-4": [9, 10, 11]},
}
CNT: JsonDict = {
    "apiVersion": "scheduling.koordinator.sh/v1alpha1",
    "kind": "ClusterNetworkTopology",
    "metadata": {"name": "default"},
    "spec": {
        "networkTopologySpec": [
            {"labelKey": [SPINE], "topologyLayer": "SpineLayer"},
            {"labelKey": [BLOCK], "parentTopologyLayer": "SpineLayer", "topologyLayer": "BlockLayer"},
            {"parentTopologyLayer": "BlockLayer", "topologyLayer": "NodeTopologyLayer"},
        ]
    },
}
NODE_NAMES = [f"node-{i}" for i in range(12)]
SEED_MESSAGE = (
    "0/12 nodes are available: no candidate topology nodes can accommodate job, desiredOfferSlot: 4, "
    "topology topologyNode SpineLayer/spine-0: 3;topology topologyNode SpineLayer/spine-1: 3;"
    "topology topologyNode SpineLayer/spine-2: 3. preemption: not eligible due to terminating pod on "
    "the nominated node.."
)


def pod(
    name: str,
    namespace: str,
    *,
    priority_class: str,
    node: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> JsonDict:
    res = {"cpu": "8", "memory": "32Gi"}
    spec: JsonDict = {
        "schedulerName": "koord-scheduler",
        "priorityClassName": priority_class,
        "containers": [
            {
                "name": "curlimage",
                "image": "busybox",
                "command": ["sleep", "365d"],
                "resources": {"requests": res, "limits": res},
            }
        ],
    }
    if node:
        spec["nodeName"] = node
    if priority_class == "high-priority":
        spec["preemptionPolicy"] = "PreemptLowerPriority"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels or {},
            "annotations": annotations or {},
        },
        "spec": spec,
    }


@pytest.fixture
async def seed_cluster(admin: Kube) -> Any:
    for spine, blocks in LAYOUT.items():
        for block, idx in blocks.items():
            for i in idx:
                await create_node(
                    admin, f"node-{i}", cpu="8", memory="32Gi", labels={SPINE: spine, BLOCK: block}
                )
    for name, value in (("high-priority", 1000000), ("low-priority", 1000)):
        with contextlib.suppress(AlreadyExistsError):
            await admin.create(
                PRIORITY_CLASSES,
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": name},
                    "value": value,
                    "preemptionPolicy": "PreemptLowerPriority",
                },
            )
    await admin.create(CLUSTER_NETWORK_TOPOLOGIES, CNT)
    yield
    with contextlib.suppress(NotFoundError):
        await admin.delete(CLUSTER_NETWORK_TOPOLOGIES, "default")
    await delete_nodes(admin, NODE_NAMES)
    for hn in (await admin.list(HYPERNODES)).items:
        with contextlib.suppress(NotFoundError):
            await admin.delete(HYPERNODES, hn["metadata"]["name"])


async def test_seed_example_2_end_to_end(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str, seed_cluster: Any
) -> None:
    history: dict[str, list[JsonDict]] = defaultdict(list)
    timeline: list[JsonDict] = []
    deleted: set[str] = set()
    watcher = Informer(admin, PODS, namespace=namespace, resync_period=None)

    def seen(obj: JsonDict) -> None:
        history[obj["metadata"]["name"]].append(obj)
        timeline.append(obj)

    watcher.add_handler(FuncHandler(seen, on_resync=False))

    class Deletions:
        def on_add(self, obj: JsonDict) -> None: ...
        def on_update(self, old: JsonDict, new: JsonDict) -> None: ...
        def on_delete(self, obj: JsonDict) -> None:
            deleted.add(obj["metadata"]["name"])

    watcher.add_handler(Deletions())
    kubelet = Kubelet(admin, namespace)
    async with running(watcher.run(), "pod-history"), running(kubelet.run(), "kubelet"):
        lows: dict[str, str] = {}
        for i in (0, 1, 5):
            created = await admin.create(
                PODS, pod(f"low-priority-pod-{i}", namespace, priority_class="low-priority", node=f"node-{i}")
            )
            lows[created["metadata"]["name"]] = created["metadata"]["uid"]

        async def lows_running() -> bool:
            pods = (await admin.list(PODS, namespace=namespace)).items
            return sum(1 for p in pods if p["status"].get("phase") == "Running") == 3

        await eventually(lows_running, what="the low-priority pods to run")

        spec = json.dumps({"gatherStrategy": [{"layer": "SpineLayer", "strategy": "MustGather"}]})
        await admin.create(
            SIGS_PODGROUPS,
            {
                "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {
                    "name": "high-priority-training",
                    "namespace": namespace,
                    "annotations": {"gang.scheduling.koordinator.sh/network-topology-spec": spec},
                },
                "spec": {"minMember": 4, "scheduleTimeoutSeconds": 300},
            },
        )
        options = ControllerOptions(
            reconcile_lws=False,
            leader_election=None,
            resync_period=60.0,
            handoff=HandOffConfig(scheduler_names=("koord-scheduler",)),
        )
        async with controller_replica(control_plane.kubeconfig, options, user=controller_user):
            for i in range(4):
                await admin.create(
                    PODS,
                    pod(
                        f"hp-training-pod-{i}",
                        namespace,
                        priority_class="high-priority",
                        labels={"pod-group.scheduling.sigs.k8s.io": "high-priority-training"},
                        annotations={"gang.scheduling.koordinator.sh/network-topology-index": str(i)},
                    ),
                )

            async def gang_bound() -> dict[str, str] | None:
                pods = {p["metadata"]["name"]: p for p in (await admin.list(PODS, namespace=namespace)).items}
                hp = {n: p["spec"].get("nodeName") for n, p in pods.items() if n.startswith("hp-")}
                return hp if len(hp) == 4 and all(hp.values()) else None

            placed = await eventually(gang_bound, timeout=60, what="the high-priority gang to be bound")

    assert placed == {f"hp-training-pod-{i}": f"node-{5 + i}" for i in range(4)}

    # The victim: DisruptionTarget with the seed's exact message, then deleted.
    victim_versions = history["low-priority-pod-5"]
    conditions = [
        c
        for v in victim_versions
        for c in (v.get("status") or {}).get("conditions") or []
        if c["type"] == "DisruptionTarget"
    ]
    assert conditions, "low-priority-pod-5 never carried a DisruptionTarget condition"
    cond = conditions[-1]
    assert (cond["status"], cond["reason"]) == ("True", "PreemptionByScheduler")
    assert cond["message"] == (
        f"koord-scheduler: preempting to accommodate higher priority pods, "
        f"preemptor: {namespace}/high-priority-training, triggerpod: {namespace}/hp-training-pod-0"
    )
    assert "low-priority-pod-5" in deleted

    # The seed's order: mark the victim, nominate the gang, then delete the victim.
    def first(pred: Any) -> int:
        return next(i for i, v in enumerate(timeline) if pred(v))

    marked = first(
        lambda v: (
            v["metadata"]["name"] == "low-priority-pod-5"
            and any(c["type"] == "DisruptionTarget" for c in (v.get("status") or {}).get("conditions") or [])
        )
    )
    terminating = first(
        lambda v: v["metadata"]["name"] == "low-priority-pod-5" and v["metadata"].get("deletionTimestamp")
    )
    nominated_at = [
        first(
            lambda v, i=i: (
                v["metadata"]["name"] == f"hp-training-pod-{i}"
                and (v.get("status") or {}).get("nominatedNodeName")
            )
        )
        for i in range(4)
    ]
    assert marked < min(nominated_at) and max(nominated_at) < terminating, (marked, nominated_at, terminating)

    # The gang's pods were nominated to node-5..8 before they were bound.
    for i in range(4):
        name = f"hp-training-pod-{i}"
        nominated = [
            v["status"].get("nominatedNodeName")
            for v in history[name]
            if not v["spec"].get("nodeName") and (v.get("status") or {}).get("nominatedNodeName")
        ]
        assert nominated and nominated[-1] == f"node-{5 + i}", f"{name} was not nominated before binding"
        waiting = [
            c
            for v in history[name]
            for c in (v.get("status") or {}).get("conditions") or []
            if c["type"] == "PodScheduled" and c["status"] == "False"
        ]
        assert waiting and waiting[-1]["reason"] == "Unschedulable"
        # pod-0 carries the fit error; the other members quote it, as the seed shows.
        expected = SEED_MESSAGE
        if i > 0:
            reason = SEED_MESSAGE.removeprefix("0/12 nodes are available: ").split(". preemption:")[0]
            expected = (
                f'GangGroup "{namespace}/high-priority-training" gets rejected due to member Pod '
                f'"{namespace}/hp-training-pod-0" is unschedulable with reason "{reason}", '
                f"alreadyWaitForBound: 0. preemption: preemption already attempted by "
                f"{namespace}/hp-training-pod-0 with message not eligible due to terminating pod on "
                "the nominated node.."
            )
        assert waiting[-1]["message"] == expected

    # The others are untouched: same pods, never a DisruptionTarget.
    for name in ("low-priority-pod-0", "low-priority-pod-1"):
        current = await admin.get(PODS, name, namespace=namespace)
        assert current["metadata"]["uid"] == lows[name]
        assert not any(
            c["type"] == "DisruptionTarget"
            for v in history[name]
            for c in (v.get("status") or {}).get("conditions") or []
        )
