"""LeaderWorkerSet networkTopology -> each group's Volcano PodGroup.

Groups are found through the leader pods LWS creates (labels `leaderworkerset.sigs.k8s.io/
name`, `group-index`, `template-revision-hash`, worker-index 0); the PodGroup of each is what
`translations.lws_to_volcano` says, under the name LWS's own Volcano provider uses.

* PodGroup missing: create it whole (POST, field manager `topobridge`, labelled
  `app.kubernetes.io/managed-by=topobridge`). LWS's provider, arriving second, finds it.
* PodGroup present (LWS made it): server-side apply of only the fields topobridge owns
  (`networkTopology`, `subGroupPolicy`), field manager `topobridge`, forced; minMember,
  minResources, queue and priority stay LWS's.
* Topology removed from the LWS: the fields topobridge applied are released (applied away),
  or nulled on PodGroups topobridge created.
* LWS deleted: PodGroups topobridge created for it are deleted (uid precondition); the rest
  belong to their leader pods and go with them through the garbage collector.

An LWS without topology whose PodGroups carry no topobridge fields is left alone.
The verdict goes on the LWS: condition `TopologyTranslated` and Events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import structlog

from controller.errors import AlreadyExistsError, NotFoundError
from controller.informer import FuncHandler, Informer, object_key, split_key
from controller.kube import FIELD_MANAGER, JsonDict, Kube
from controller.reconcile import Done, Outcome, Requeue
from controller.reconcilers.common import (
    MANAGED_BY,
    MANAGED_BY_LABEL,
    has_field_manager,
    is_subset,
    managed_by_topobridge,
    summarize,
)
from controller.reporting import EventRecorder, condition, find_condition, upsert_condition
from controller.resources import LEADERWORKERSETS, PODS, VOLCANO_PODGROUPS, Resource
from translations import lws as lwsmod
from translations import lws_to_volcano, volcano
from translations.core import Pod
from translations.errors import TopobridgeError
from translations.report import TranslationReport

log = structlog.get_logger(__name__)

CONDITION = "TopologyTranslated"
TOPOLOGY_FIELDS = ("networkTopology", "subGroupPolicy")
"""The PodGroup spec fields topobridge owns on a PodGroup LWS created."""
INDEX_LEADERS = "lws-leaders"
INDEX_LWS = "lws"


def lws_key_of(obj: JsonDict) -> str | None:
    """`namespace/lws-name` for a pod or PodGroup labelled as belonging to an LWS."""
    meta = obj.get("metadata") or {}
    name = (meta.get("labels") or {}).get(lwsmod.NAME_LABEL)
    return f"{meta.get('namespace')}/{name}" if name and meta.get("namespace") else None


def leader_index(pod: JsonDict) -> list[str]:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    key = lws_key_of(pod)
    if (
        key is None
        or lwsmod.GROUP_INDEX_LABEL not in labels
        or labels.get(lwsmod.WORKER_INDEX_LABEL, "0") != "0"
    ):
        return []
    return [key]


def lws_index(obj: JsonDict) -> list[str]:
    key = lws_key_of(obj)
    return [key] if key else []


def wants_topology(raw: JsonDict) -> bool:
    """Whether the LWS asks for a topology at all (spec field or Volcano annotations)."""
    if (raw.get("spec") or {}).get("networkTopology") is not None:
        return True
    ann = (raw.get("metadata") or {}).get("annotations") or {}
    return any(
        k in ann
        for k in (
            volcano.POD_TOPOLOGY_MODE_ANNOTATION,
            volcano.POD_TOPOLOGY_TIER_ANNOTATION,
            lws_to_volcano.SUBGROUP_MODE_ANNOTATION,
            lws_to_volcano.SUBGROUP_TIER_ANNOTATION,
        )
    )


class LwsReconciler:
    kind: ClassVar[str] = "LeaderWorkerSet"
    watches: ClassVar[Mapping[str, Resource]] = {
        "lws": LEADERWORKERSETS,
        "pods": PODS,
        "podgroups": VOLCANO_PODGROUPS,
    }
    """The informers the reconciler reads, by the name the constructor finds each under in `reads`."""
    max_workers: ClassVar[int | None] = None

    def __init__(self, kube: Kube, reads: Mapping[str, Informer], *, recorder: EventRecorder) -> None:
        self.kube = kube
        self.lws = reads["lws"]
        self.pods = reads["pods"]
        self.podgroups = reads["podgroups"]
        self.recorder = recorder
        self.pods.add_index(INDEX_LEADERS, leader_index)
        self.podgroups.add_index(INDEX_LWS, lws_index)

    def wire(self, enqueue: Callable[[str], None]) -> None:
        """Route changes to LWS keys: the LWS itself, its leader pods, its PodGroups."""
        self.lws.add_handler(FuncHandler(lambda o: enqueue(object_key(o))))

        def by_label(obj: JsonDict) -> None:
            key = lws_key_of(obj)
            if key is not None:
                enqueue(key)

        def by_leader(pod: JsonDict) -> None:
            for key in leader_index(pod):
                enqueue(key)

        self.pods.add_handler(FuncHandler(by_leader, on_resync=False))
        self.podgroups.add_handler(FuncHandler(by_label, on_resync=False))

    async def reconcile(self, key: str) -> Outcome:
        raw = self.lws.get(key)
        existing = {pg["metadata"]["name"]: pg for pg in self.podgroups.by_index(INDEX_LWS, key)}
        if raw is None:
            return await self._clean_up(key, existing)
        if (raw.get("metadata") or {}).get("deletionTimestamp"):
            return Done()  # the garbage collector takes the pods, and their PodGroups, with it
        if not wants_topology(raw) and not any(
            has_field_manager(pg, FIELD_MANAGER) for pg in existing.values()
        ):
            return Done()  # not ours: LWS alone decides its PodGroups
        # Only the pure steps sit in the try: an API error (a Conflict on the status write)
        # is retried by the queue, never reported on the LWS as a mistake in its spec.
        waiting: TranslationReport | None = None
        try:
            lws = lwsmod.LeaderWorkerSet.parse(raw)
            leaders = [
                Pod.parse(p)
                for p in self.pods.by_index(INDEX_LEADERS, key)
                if not (p.get("metadata") or {}).get("deletionTimestamp")
            ]
            if leaders:
                result = lws_to_volcano.translate(lws, pods=leaders)
            else:
                # No group exists yet (LWS has not made a leader pod): check the spec now so a
                # mistake is reported at once, and wait for the leaders to name the groups.
                waiting = TranslationReport(f"LeaderWorkerSet {key}", "Volcano")
                lws_to_volcano.gang_spec(lws, waiting)
        except TopobridgeError as exc:
            await self._report(raw, ok=False, reason="InvalidSpec", message=str(exc))
            return Done()
        if waiting is not None:
            await self._report(
                raw,
                ok=True,
                reason="WaitingForLeaderPods",
                message="0 PodGroups: no leader pod yet; " + summarize(waiting),
            )
            return Done()

        await self._converge_all(raw, result.pod_groups, existing)
        groups = len(result.pod_groups)
        message = f"{groups} PodGroup{'s' if groups != 1 else ''} in step; " + summarize(result.report)
        await self._report(raw, ok=True, reason="Translated", message=message)
        return Done()

    async def _converge_all(
        self, raw: JsonDict, pod_groups: Sequence[volcano.PodGroup], existing: Mapping[str, JsonDict]
    ) -> None:
        """Each PodGroup converged; an Event on the LWS for each one created or updated."""
        created: list[str] = []
        updated: list[str] = []
        for pg in pod_groups:
            change = await self._converge(pg, existing.get(pg.name))
            if change == "created":
                created.append(pg.name)
            elif change == "updated":
                updated.append(pg.name)
        for pg_name in created:
            await self.recorder.event(raw, "Normal", "PodGroupCreated", f"created Volcano PodGroup {pg_name}")
        for pg_name in updated:
            await self.recorder.event(
                raw,
                "Normal",
                "PodGroupUpdated",
                f"applied topobridge's fields ({', '.join(TOPOLOGY_FIELDS)}) to PodGroup {pg_name}",
            )

    async def _converge(self, pg: volcano.PodGroup, current: JsonDict | None) -> str | None:
        desired = pg.to_dict()
        meta = desired["metadata"]
        if current is None:
            body = {
                **desired,
                "metadata": {**meta, "labels": {**meta.get("labels", {}), MANAGED_BY_LABEL: MANAGED_BY}},
            }
            try:
                await self.kube.create(VOLCANO_PODGROUPS, body)
                return "created"
            except AlreadyExistsError:
                # Created a moment ago (by LWS or by our previous pass) and not yet in the cache.
                current = await self.kube.get(VOLCANO_PODGROUPS, pg.name, namespace=pg.namespace)
        spec_now = current.get("spec") or {}
        ours = {k: desired["spec"][k] for k in TOPOLOGY_FIELDS if k in desired.get("spec", {})}
        stale = [
            k
            for k in TOPOLOGY_FIELDS
            if k not in ours and k in spec_now and has_field_manager(current, FIELD_MANAGER)
        ]
        if is_subset(ours, spec_now) and not stale:
            return None
        if stale and managed_by_topobridge(current):
            # Created whole by us (an Update, not an Apply): null the fields explicitly.
            await self.kube.merge_patch(
                VOLCANO_PODGROUPS, pg.name, {"spec": dict.fromkeys(stale)}, namespace=pg.namespace
            )
            if is_subset(ours, spec_now):
                return "updated"
        body = {"metadata": {"name": pg.name, "namespace": pg.namespace}, "spec": ours}
        await self.kube.apply(VOLCANO_PODGROUPS, body)
        return "updated"

    async def _clean_up(self, key: str, existing: dict[str, JsonDict]) -> Outcome:
        namespace, name = split_key(key)
        if not self.lws.synced.is_set():
            return Requeue(after=1.0)  # absence in an unsynced cache proves nothing
        for pg_name, pg in sorted(existing.items()):
            if not managed_by_topobridge(pg):
                continue
            try:
                await self.kube.delete(
                    VOLCANO_PODGROUPS, pg_name, namespace=namespace, uid=(pg.get("metadata") or {}).get("uid")
                )
                log.info("lws.podgroup_deleted", namespace=namespace, name=pg_name, lws=name)
            except NotFoundError:
                pass
        return Done()

    async def _report(self, raw: JsonDict, *, ok: bool, reason: str, message: str) -> None:
        meta = raw.get("metadata") or {}
        cond = condition(CONDITION, ok, reason, message, generation=meta.get("generation"))
        before = find_condition(raw, CONDITION)
        changed = await upsert_condition(self.kube, LEADERWORKERSETS, raw, cond)
        if changed and (
            before is None or before.get("message") != message or before.get("status") != cond["status"]
        ):
            await self.recorder.event(
                raw, "Normal" if ok else "Warning", "Translated" if ok else "TranslationFailed", message
            )
