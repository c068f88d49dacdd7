"""Koordinator gangs -> Volcano PodGroups + pod patches (--translate-koordinator), on the real
API server: a PodGroup with network-topology-spec, an annotation-only gang, a bad gang that
is reported without blocking the others, and clean-up when the gang goes."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from controller_helpers import controller_replica, eventually

from controller.errors import NotFoundError
from controller.kube import JsonDict, Kube
from controller.manager import ControllerOptions
from controller.resources import CLUSTER_NETWORK_TOPOLOGIES, EVENTS, PODS, SIGS_PODGROUPS, VOLCANO_PODGROUPS
from translations import koordinator as koord

pytestmark = pytest.mark.integration

CNT: JsonDict = {
    "apiVersion": "scheduling.koordinator.sh/v1alpha1",
    "kind": "ClusterNetworkTopology",
    "metadata": {"name": "default"},
    "spec": {
        "networkTopologySpec": [
            {"labelKey": ["network.topology.nvidia.com/spine"], "topologyLayer": "SpineLayer"},
            {
                "labelKey": ["network.topology.nvidia.com/block"],
                "parentTopologyLayer": "SpineLayer",
                "topologyLayer": "BlockLayer",
            },
            {"parentTopologyLayer": "BlockLayer", "topologyLayer": "NodeTopologyLayer"},
        ]
    },
}


def member(
    name: str,
    namespace: str,
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> JsonDict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels or {},
            "annotations": annotations or {},
        },
        "spec": {
            "schedulerName": "koord-scheduler",
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "8", "memory": "32Gi"}}}
            ],
        },
    }


@pytest.fixture
async def cnt(admin: Kube) -> Any:
    await admin.create(CLUSTER_NETWORK_TOPOLOGIES, CNT)
    yield
    with contextlib.suppress(NotFoundError):
        await admin.delete(CLUSTER_NETWORK_TOPOLOGIES, "default")


async def test_koordinator_gangs_become_volcano_podgroups(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str, cnt: Any
) -> None:
    spec = json.dumps(
        {
            "gatherStrategy": [
                {"layer": "BlockLayer", "strategy": "PreferGather"},
                {"layer": "SpineLayer", "strategy": "PreferGather"},
            ]
        }
    )
    await admin.create(
        SIGS_PODGROUPS,
        {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {
                "name": "topology-demo-job",
                "namespace": namespace,
                "annotations": {koord.NETWORK_TOPOLOGY_SPEC: spec},
            },
            "spec": {"minMember": 4, "scheduleTimeoutSeconds": 300},
        },
    )
    for i in range(4):
        await admin.create(
            PODS,
            member(
                f"training-pod-{i}",
                namespace,
                labels={koord.SIGS_POD_GROUP_LABEL: "topology-demo-job"},
                annotations={koord.NETWORK_TOPOLOGY_INDEX: str(i)},
            ),
        )
    for i in range(2):  # an annotation-only gang, MustGather at the block
        await admin.create(
            PODS,
            member(
                f"ann-{i}",
                namespace,
                annotations={
                    koord.GANG_NAME: "ann-gang",
                    koord.GANG_MIN_AVAILABLE: "2",
                    koord.NETWORK_TOPOLOGY_SPEC: json.dumps(
                        {"gatherStrategy": [{"layer": "BlockLayer", "strategy": "MustGather"}]}
                    ),
                },
            ),
        )
    # A gang whose spec names a layer the ClusterNetworkTopology lacks: refused, reported, not blocking.
    await admin.create(
        PODS,
        member(
            "bad-0",
            namespace,
            annotations={
                koord.GANG_NAME: "bad-gang",
                koord.GANG_MIN_AVAILABLE: "1",
                koord.NETWORK_TOPOLOGY_SPEC: json.dumps(
                    {"gatherStrategy": [{"layer": "RackLayer", "strategy": "MustGather"}]}
                ),
            },
        ),
    )

    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        fallback_scheduler=False,
        translate_koordinator=True,
        leader_election=None,
        resync_period=30.0,
    )
    async with controller_replica(control_plane.kubeconfig, options, user=controller_user):

        async def translated() -> dict[str, JsonDict] | None:
            pgs = {
                pg["metadata"]["name"]: pg
                for pg in (await admin.list(VOLCANO_PODGROUPS, namespace=namespace)).items
            }
            return pgs if {"topology-demo-job", "ann-gang"} <= set(pgs) else None

        pgs = await eventually(translated, what="Volcano PodGroups for both gangs")
        job = pgs["topology-demo-job"]
        assert job["spec"]["minMember"] == 4
        assert job["spec"]["networkTopology"] == {"mode": "soft", "highestTierAllowed": 2}
        assert job["metadata"]["labels"]["topobridge.io/translated-from"] == "koordinator"
        assert pgs["ann-gang"]["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
        assert "bad-gang" not in pgs

        async def joined() -> bool:
            pods = {p["metadata"]["name"]: p for p in (await admin.list(PODS, namespace=namespace)).items}
            return all(
                pods[f"training-pod-{i}"]["metadata"]["annotations"].get("scheduling.k8s.io/group-name")
                == "topology-demo-job"
                for i in range(4)
            ) and all(
                pods[f"ann-{i}"]["metadata"]["annotations"].get("scheduling.k8s.io/group-name") == "ann-gang"
                for i in range(2)
            )

        await eventually(joined, what="member pods to carry the group-name annotation")

        async def translated_events() -> list[JsonDict]:
            return [
                e
                for e in (await admin.list(EVENTS, namespace=namespace)).items
                if e["reason"] == "Translated" and e["involvedObject"]["name"] == "topology-demo-job"
            ]

        await eventually(translated_events, what="a Translated event on the PodGroup")
        # Pods changing (a kubelet's status, a label) make the namespace reconcile again and
        # again; the translation did not change, so it is told once.
        for round_ in range(5):
            for i in range(4):
                await admin.merge_patch(
                    PODS,
                    f"training-pod-{i}",
                    {"metadata": {"labels": {"touched": str(round_)}}},
                    namespace=namespace,
                )

        async def touched_seen() -> bool:
            pods = (await admin.list(PODS, namespace=namespace)).items
            return all(
                (p["metadata"].get("labels") or {}).get("touched") == "4"
                for p in pods
                if "training" in p["metadata"]["name"]
            )

        await eventually(touched_seen, what="the touches stored")
        told = await translated_events()
        assert len(told) == 1 and told[0]["count"] == 1, told

        async def bad_reported() -> JsonDict | None:
            events = (await admin.list(EVENTS, namespace=namespace)).items
            return next(
                (
                    e
                    for e in events
                    if e["reason"] == "TranslationFailed" and e["involvedObject"]["name"] == "bad-0"
                ),
                None,
            )

        event = await eventually(bad_reported, what="a TranslationFailed event on the bad gang's pod")
        assert "RackLayer" in event["message"] and event["type"] == "Warning"

        # The gang goes: its PodGroup goes with it.
        await admin.delete(SIGS_PODGROUPS, "topology-demo-job", namespace=namespace)
        for i in range(4):
            await admin.delete(PODS, f"training-pod-{i}", namespace=namespace, grace_period_seconds=0)

        async def cleaned() -> bool:
            names = {
                pg["metadata"]["name"]
                for pg in (await admin.list(VOLCANO_PODGROUPS, namespace=namespace)).items
            }
            return names == {"ann-gang"}

        await eventually(cleaned, what="the translated PodGroup deleted with its gang")


async def test_podgroup_owned_by_someone_else_is_left_alone(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str, cnt: Any
) -> None:
    await admin.create(
        VOLCANO_PODGROUPS,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "job", "namespace": namespace},
            "spec": {"minMember": 9, "queue": "mine"},
        },
    )
    await admin.create(
        SIGS_PODGROUPS,
        {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "job", "namespace": namespace},
            "spec": {"minMember": 2},
        },
    )
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        fallback_scheduler=False,
        translate_koordinator=True,
        leader_election=None,
    )
    async with controller_replica(control_plane.kubeconfig, options, user=controller_user):

        async def refused() -> bool:
            events = (await admin.list(EVENTS, namespace=namespace)).items
            return any(
                e["reason"] == "TranslationFailed" and "not managed by topobridge" in e["message"]
                for e in events
            )

        await eventually(refused, what="the refusal reported")
    pg = await admin.get(VOLCANO_PODGROUPS, "job", namespace=namespace)
    assert pg["spec"] == {"minMember": 9, "queue": "mine"}
