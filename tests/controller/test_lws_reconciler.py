"""LeaderWorkerSet networkTopology -> Volcano PodGroups, on the real API server."""

from __future__ import annotations

from typing import Any

import pytest
from controller_helpers import controller_replica, eventually

from controller.errors import NotFoundError, api_error
from controller.kube import JsonDict, Kube
from controller.manager import ControllerOptions
from controller.reconcilers.lws import CONDITION
from controller.reporting import find_condition
from controller.resources import EVENTS, LEADERWORKERSETS, PODS, VOLCANO_PODGROUPS, Resource
from translations import lws as lwsmod

pytestmark = pytest.mark.integration

REV = "5f7c9d"


def lws_body(
    name: str, namespace: str, *, size: int = 4, replicas: int = 2, topology: JsonDict | None = None
) -> JsonDict:
    container = {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    spec: JsonDict = {
        "replicas": replicas,
        "leaderWorkerTemplate": {"size": size, "workerTemplate": {"spec": {"containers": [container]}}},
    }
    if topology is not None:
        spec["networkTopology"] = topology
    return {
        "apiVersion": lwsmod.API_VERSION,
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def leader_pod(lws: JsonDict, group: int, *, revision: str = REV) -> JsonDict:
    """A leader pod as LWS makes it, owned by the LWS so the garbage collector follows it."""
    meta = lws["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{meta['name']}-{group}",
            "namespace": meta["namespace"],
            "labels": {
                lwsmod.NAME_LABEL: meta["name"],
                lwsmod.GROUP_INDEX_LABEL: str(group),
                lwsmod.WORKER_INDEX_LABEL: "0",
                lwsmod.REVISION_LABEL: revision,
            },
            "ownerReferences": [
                {
                    "apiVersion": lwsmod.API_VERSION,
                    "kind": "LeaderWorkerSet",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
            ],
        },
    }


def options(**kw: Any) -> ControllerOptions:
    return ControllerOptions(
        reconcile_hypernodes=False, fallback_scheduler=False, leader_election=None, resync_period=30.0, **kw
    )


async def podgroups(kube: Kube, namespace: str) -> dict[str, JsonDict]:
    listed = await kube.list(VOLCANO_PODGROUPS, namespace=namespace)
    return {pg["metadata"]["name"]: pg for pg in listed.items}


async def test_lws_groups_get_podgroups_with_topology_and_follow_edits(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    lws = await admin.create(
        LEADERWORKERSETS, lws_body("llm", namespace, topology={"mode": "hard", "highestTierAllowed": 1})
    )
    for g in range(2):
        await admin.create(PODS, leader_pod(lws, g))

    async with controller_replica(control_plane.kubeconfig, options(), user=controller_user):

        async def two_groups() -> dict[str, JsonDict] | None:
            pgs = await podgroups(admin, namespace)
            return pgs if set(pgs) == {f"llm-0-{REV}", f"llm-1-{REV}"} else None

        pgs = await eventually(two_groups, what="one PodGroup per group")
        for pg in pgs.values():
            spec = pg["spec"]
            assert spec["minMember"] == 4
            assert spec["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
            assert spec["minResources"] == {"cpu": "4", "memory": "4Gi"}
            assert pg["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "topobridge"

        async def translated() -> JsonDict | None:
            obj = await admin.get(LEADERWORKERSETS, "llm", namespace=namespace)
            cond = find_condition(obj, CONDITION)
            return cond if cond and cond["reason"] == "Translated" else None

        cond = await eventually(translated, what="TopologyTranslated=True on the LWS")
        assert cond["reason"] == "Translated"
        assert "2 PodGroups in step" in cond["message"]

        # Edit the topology: every group's PodGroup follows.
        await admin.merge_patch(
            LEADERWORKERSETS,
            "llm",
            {"spec": {"networkTopology": {"mode": "soft", "highestTierAllowed": 2}}},
            namespace=namespace,
        )

        async def followed() -> bool:
            pgs = await podgroups(admin, namespace)
            return len(pgs) == 2 and all(
                pg["spec"].get("networkTopology") == {"mode": "soft", "highestTierAllowed": 2}
                for pg in pgs.values()
            )

        await eventually(followed, what="PodGroups to follow the edited networkTopology")

        events = (await admin.list(EVENTS, namespace=namespace)).items
        reasons = {e["reason"] for e in events if e["involvedObject"].get("name") == "llm"}
        assert {"PodGroupCreated", "PodGroupUpdated", "Translated"} <= reasons

    # Deleting the LWS cleans everything up (controller running again to see the deletion).
    async with controller_replica(control_plane.kubeconfig, options(), user=controller_user):
        await admin.delete(LEADERWORKERSETS, "llm", namespace=namespace, propagation="Foreground")

        async def all_gone() -> bool:
            pgs = await podgroups(admin, namespace)
            pods = (await admin.list(PODS, namespace=namespace)).items
            return not pgs and not pods

        await eventually(all_gone, timeout=40, what="PodGroups and leader pods deleted with the LWS")


async def test_existing_lws_podgroup_keeps_lws_fields(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    """A PodGroup LWS made: only networkTopology/subGroupPolicy change, through server-side apply."""
    lws = await admin.create(
        LEADERWORKERSETS,
        lws_body("infer", namespace, replicas=1, topology={"mode": "hard", "highestTierAllowed": 2}),
    )
    name = f"infer-0-{REV}"
    # As LWS's provider would make it: its own minMember/queue, no topology, no topobridge label.
    await admin.create(
        VOLCANO_PODGROUPS,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace, "labels": {lwsmod.NAME_LABEL: "infer"}},
            "spec": {"minMember": 3, "queue": "team-a"},
        },
    )
    await admin.create(PODS, leader_pod(lws, 0))
    async with controller_replica(control_plane.kubeconfig, options(), user=controller_user):

        async def applied() -> JsonDict | None:
            pg = await admin.get(VOLCANO_PODGROUPS, name, namespace=namespace)
            return pg if pg["spec"].get("networkTopology") else None

        pg = await eventually(applied, what="topology applied to the LWS-made PodGroup")
        assert pg["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
        assert pg["spec"]["minMember"] == 3, "LWS's minMember is not topobridge's to change"
        assert pg["spec"]["queue"] == "team-a"
        managers = {(m["manager"], m["operation"]) for m in pg["metadata"]["managedFields"]}
        assert ("topobridge", "Apply") in managers
        assert "app.kubernetes.io/managed-by" not in (pg["metadata"].get("labels") or {})

        # Topology removed from the LWS: topobridge's applied fields are released.
        await admin.merge_patch(
            LEADERWORKERSETS, "infer", {"spec": {"networkTopology": None}}, namespace=namespace
        )

        async def released() -> bool:
            pg = await admin.get(VOLCANO_PODGROUPS, name, namespace=namespace)
            return "networkTopology" not in pg["spec"] and pg["spec"]["minMember"] == 3

        await eventually(released, what="topology removed from the PodGroup")


async def test_invalid_lws_reported_not_retried(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    body = lws_body("bad", namespace, replicas=1, topology={"mode": "hard", "highestTierAllowed": 1})
    body["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "Not_A_Queue"}
    lws = await admin.create(LEADERWORKERSETS, body)
    await admin.create(PODS, leader_pod(lws, 0))
    async with controller_replica(control_plane.kubeconfig, options(), user=controller_user):

        async def failed() -> JsonDict | None:
            obj = await admin.get(LEADERWORKERSETS, "bad", namespace=namespace)
            cond = find_condition(obj, CONDITION)
            return cond if cond and cond["status"] == "False" else None

        cond = await eventually(failed, what="TopologyTranslated=False")
        assert cond["reason"] == "InvalidSpec"
        assert "scheduling.volcano.sh/queue-name" in cond["message"] and "Not_A_Queue" in cond["message"]
        with pytest.raises(NotFoundError):
            await admin.get(VOLCANO_PODGROUPS, f"bad-0-{REV}", namespace=namespace)
        events = (await admin.list(EVENTS, namespace=namespace)).items
        assert any(e["reason"] == "TranslationFailed" and e["type"] == "Warning" for e in events)


class ConflictOnceKube(Kube):
    """The real client, except that the first LWS status write answers 409 Conflict, as the
    API server does when another writer moved the object since our cache saw it."""

    conflicts = 0

    async def merge_patch(self, res: Resource, name: str, patch: JsonDict, **kw: Any) -> JsonDict:
        if res == LEADERWORKERSETS and kw.get("subresource") == "status" and ConflictOnceKube.conflicts == 0:
            ConflictOnceKube.conflicts += 1
            raise api_error(409, {"reason": "Conflict", "message": "the object has been modified"})
        return await super().merge_patch(res, name, patch, **kw)


async def test_api_conflict_is_retried_not_reported_as_invalid_spec(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    """An API Conflict on the status write is an I/O failure: the queue retries it, and the
    LWS is never told its spec is invalid."""
    await admin.create(
        LEADERWORKERSETS, lws_body("racy", namespace, topology={"mode": "hard", "highestTierAllowed": 1})
    )
    async with controller_replica(
        control_plane.kubeconfig, options(), user=controller_user, kube_class=ConflictOnceKube
    ):

        async def reported() -> JsonDict | None:
            obj = await admin.get(LEADERWORKERSETS, "racy", namespace=namespace)
            return find_condition(obj, CONDITION)

        cond = await eventually(reported, what="a TopologyTranslated condition")
        assert ConflictOnceKube.conflicts == 1
        assert (cond["status"], cond["reason"]) == ("True", "WaitingForLeaderPods"), cond
        events = (await admin.list(EVENTS, namespace=namespace)).items
        assert [e["message"] for e in events if e["reason"] == "TranslationFailed"] == []
