"""ClusterNetworkTopology + labelled nodes -> HyperNodes on the real API server: creation,
a relabelled node moving, unowned HyperNodes untouched, deletion of owned ones only."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from controller_helpers import controller_replica, create_node, delete_nodes, eventually, running
from test_handoff import FakeKoordScheduler

from controller.errors import NotFoundError
from controller.handoff import HandOffConfig, PresenceRule
from controller.kube import JsonDict, Kube
from controller.manager import ControllerOptions
from controller.resources import CLUSTER_NETWORK_TOPOLOGIES, EVENTS, HYPERNODES, NODES

pytestmark = pytest.mark.integration

SPINE = "network.topology.nvidia.com/spine"
BLOCK = "network.topology.nvidia.com/block"

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

# node -> (spine, block)
LAYOUT = {
    "hn-node-1": ("hs-0", "hb-0"),
    "hn-node-2": ("hs-0", "hb-0"),
    "hn-node-3": ("hs-0", "hb-1"),
    "hn-node-4": ("hs-1", "hb-2"),
}


def options() -> ControllerOptions:
    return ControllerOptions(
        reconcile_lws=False, fallback_scheduler=False, leader_election=None, resync_period=30.0
    )


async def hypernodes(kube: Kube) -> dict[str, JsonDict]:
    return {h["metadata"]["name"]: h for h in (await kube.list(HYPERNODES)).items}


def node_members(hn: JsonDict) -> set[str]:
    return {m["selector"]["exactMatch"]["name"] for m in hn["spec"]["members"] if m["type"] == "Node"}


def child_members(hn: JsonDict) -> set[str]:
    return {m["selector"]["exactMatch"]["name"] for m in hn["spec"]["members"] if m["type"] == "HyperNode"}


@pytest.fixture
async def topology_cluster(admin: Kube) -> Any:
    for name, (spine, block) in LAYOUT.items():
        await create_node(admin, name, labels={SPINE: spine, BLOCK: block})
    yield
    with contextlib.suppress(NotFoundError):
        await admin.delete(CLUSTER_NETWORK_TOPOLOGIES, "default")
    await delete_nodes(admin, list(LAYOUT))
    for name in await hypernodes(admin):
        with contextlib.suppress(NotFoundError):
            await admin.delete(HYPERNODES, name)


async def test_cnt_to_hypernodes_relabel_and_owned_deletion(
    control_plane: Any, admin: Kube, controller_user: str, topology_cluster: Any
) -> None:
    foreign = {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "someone-elses"},
        "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "hn-node-1"}}}]},
    }
    await admin.create(HYPERNODES, foreign)
    await admin.create(CLUSTER_NETWORK_TOPOLOGIES, CNT)

    async with controller_replica(control_plane.kubeconfig, options(), user=controller_user):

        async def tree() -> dict[str, JsonDict] | None:
            hns = await hypernodes(admin)
            return (
                hns
                if {
                    "blocklayer-hb-0",
                    "blocklayer-hb-1",
                    "blocklayer-hb-2",
                    "spinelayer-hs-0",
                    "spinelayer-hs-1",
                }
                <= set(hns)
                else None
            )

        hns = await eventually(tree, what="HyperNodes for every block and spine")
        assert node_members(hns["blocklayer-hb-0"]) == {"hn-node-1", "hn-node-2"}
        assert node_members(hns["blocklayer-hb-1"]) == {"hn-node-3"}
        assert child_members(hns["spinelayer-hs-0"]) == {"blocklayer-hb-0", "blocklayer-hb-1"}
        assert hns["blocklayer-hb-0"]["spec"]["tier"] == 1 and hns["spinelayer-hs-0"]["spec"]["tier"] == 2
        assert hns["spinelayer-hs-0"]["spec"]["tierName"] == "SpineLayer"
        assert hns["blocklayer-hb-0"]["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "topobridge"

        # Relabel: node-2 moves to block hb-1; node-4 to a brand-new block under spine hs-1.
        await admin.merge_patch(NODES, "hn-node-2", {"metadata": {"labels": {BLOCK: "hb-1"}}})
        await admin.merge_patch(NODES, "hn-node-4", {"metadata": {"labels": {BLOCK: "hb-9"}}})

        async def moved() -> dict[str, JsonDict] | None:
            hns = await hypernodes(admin)
            ok = (
                "blocklayer-hb-2" not in hns
                and "blocklayer-hb-9" in hns
                and node_members(hns.get("blocklayer-hb-1", {"spec": {"members": []}}))
                == {"hn-node-2", "hn-node-3"}
                and node_members(hns.get("blocklayer-hb-0", {"spec": {"members": []}})) == {"hn-node-1"}
            )
            return hns if ok else None

        hns = await eventually(moved, what="relabelled nodes to move between HyperNodes")
        assert child_members(hns["spinelayer-hs-1"]) == {"blocklayer-hb-9"}
        assert hns["someone-elses"]["spec"] == foreign["spec"], "an unowned HyperNode is never touched"

        # Deleting the ClusterNetworkTopology deletes only the owned HyperNodes.
        await admin.delete(CLUSTER_NETWORK_TOPOLOGIES, "default")

        async def only_foreign_left() -> bool:
            return set(await hypernodes(admin)) == {"someone-elses"}

        await eventually(only_foreign_left, what="owned HyperNodes deleted, the foreign one kept")


async def test_name_taken_by_unowned_hypernode_is_refused(
    control_plane: Any, admin: Kube, controller_user: str, topology_cluster: Any
) -> None:
    squatter = {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "blocklayer-hb-0", "labels": {"team": "net"}},
        "spec": {"tier": 3, "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-"}}}]},
    }
    await admin.create(HYPERNODES, squatter)
    await admin.create(CLUSTER_NETWORK_TOPOLOGIES, CNT)
    async with controller_replica(control_plane.kubeconfig, options(), user=controller_user):

        async def others_created() -> bool:
            return "blocklayer-hb-1" in await hypernodes(admin)

        await eventually(others_created, what="the other HyperNodes")

        async def refusal_reported() -> bool:
            from controller.resources import EVENTS

            events = (await admin.list(EVENTS, namespace="default")).items
            return any(
                e["reason"] == "HyperNodeNotOwned" and "blocklayer-hb-0" in e["message"] for e in events
            )

        await eventually(refusal_reported, what="a HyperNodeNotOwned event on the CNT")
        hn = await admin.get(HYPERNODES, "blocklayer-hb-0")
        assert hn["spec"] == squatter["spec"] and hn["metadata"]["labels"] == {"team": "net"}


async def test_detail_status_written_while_koordinator_absent(
    control_plane: Any, admin: Kube, controller_user: str, topology_cluster: Any
) -> None:
    await admin.create(CLUSTER_NETWORK_TOPOLOGIES, CNT)
    async with controller_replica(control_plane.kubeconfig, options(), user=controller_user):

        async def status_written() -> JsonDict | None:
            cnt = await admin.get(CLUSTER_NETWORK_TOPOLOGIES, "default")
            return cnt if (cnt.get("status") or {}).get("detailStatus") else None

        cnt = await eventually(
            status_written, timeout=10, what="detailStatus written while Koordinator is absent"
        )
        root = cnt["status"]["detailStatus"][0]
        assert root["topologyInfo"] == {"topologyLayer": "ClusterTopologyLayer", "topologyName": ""}
        assert root["nodeNum"] == 4 and root["childTopologyLayer"] == "SpineLayer"
        spines = [
            d for d in cnt["status"]["detailStatus"] if d["topologyInfo"]["topologyLayer"] == "SpineLayer"
        ]
        assert {d["topologyInfo"]["topologyName"]: d["nodeNum"] for d in spines} == {"hs-0": 3, "hs-1": 1}


async def test_detail_status_left_to_a_running_koord_scheduler(
    control_plane: Any, admin: Kube, controller_user: str, topology_cluster: Any, make_namespace: Any
) -> None:
    """The hand-off's koord-scheduler rule decides: while its Lease is renewed, the CNT's
    status is koord-scheduler's and topobridge writes none (HyperNodes are still made)."""
    koord_ns = await make_namespace("koordinator")
    koord = FakeKoordScheduler(admin, koord_ns)
    await koord.create()
    koord.renewing.set()
    opts = options()
    opts.handoff = HandOffConfig(
        rules=(PresenceRule("koord-scheduler", "lease", koord_ns, "koord-scheduler"),)
    )
    cnt_uid = (await admin.create(CLUSTER_NETWORK_TOPOLOGIES, CNT))["metadata"]["uid"]
    async with (
        running(koord.run(), "koord-scheduler"),
        controller_replica(control_plane.kubeconfig, opts, user=controller_user),
    ):

        async def synced() -> bool:
            # By uid: an earlier test's ClusterNetworkTopology "default" left its own Event.
            events = (await admin.list(EVENTS, namespace="default")).items
            return any(
                e["reason"] == "HyperNodesSynced" and e["involvedObject"].get("uid") == cnt_uid
                for e in events
            )

        # The status decision is made in the same reconcile, after the HyperNodes are written.
        await eventually(synced, what="HyperNodes made from the ClusterNetworkTopology")
        cnt = await admin.get(CLUSTER_NETWORK_TOPOLOGIES, "default")
        assert koord.renewals > 0
        assert "detailStatus" not in (cnt.get("status") or {}), cnt.get("status")
