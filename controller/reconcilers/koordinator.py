"""Koordinator gangs -> Volcano PodGroups + pod patches (`topobridge run --translate-koordinator`).

Gangs come from `scheduling.sigs.k8s.io` / `scheduling.x-k8s.io` PodGroups and from pods
carrying `gang.scheduling.koordinator.sh/name`; `translations.koordinator_to_volcano` says
what each becomes (GangGroups fold into one PodGroup).

* The Volcano PodGroup is topobridge's own: server-side applied whole (field manager
  `topobridge`), labelled `app.kubernetes.io/managed-by=topobridge` and
  `topobridge.io/translated-from=koordinator`. A PodGroup of that name someone else owns is
  refused (reported), never overwritten. When the gang goes, its PodGroup goes.
* Member pods get the translation's annotation and labels by JSON merge patch, only when
  they lack them. `schedulerName` is immutable on a created pod, so it is left to the
  mutating webhook (at admission) and reported, never patched.

One key per namespace: a GangGroup's members and annotation-only gangs are only known once
every pod of the namespace is looked at. (A GangGroup spanning namespaces is translated per
namespace, as far as each sees.) Each gang is translated on its own, so one bad gang does not
block the others; its error is reported on its PodGroup (or its first pod) as an Event.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import structlog

from controller.errors import NotFoundError
from controller.informer import FuncHandler, Informer
from controller.kube import JsonDict, Kube
from controller.reconcile import Done, Outcome, Requeue
from controller.reconcilers.common import MANAGED_BY, MANAGED_BY_LABEL, is_subset, summarize
from controller.reporting import EventRecorder
from controller.resources import (
    CLUSTER_NETWORK_TOPOLOGIES,
    HYPERNODES,
    PODS,
    SIGS_PODGROUPS,
    VOLCANO_PODGROUPS,
    X_PODGROUPS,
    Resource,
)
from translations import koordinator as koord
from translations import koordinator_to_volcano as k2v
from translations import schedplugins
from translations.core import Pod
from translations.errors import TopobridgeError
from translations.topology import from_hypernodes
from translations.volcano import HyperNode

log = structlog.get_logger(__name__)

TRANSLATED_FROM_LABEL = "topobridge.io/translated-from"
SOURCE = "koordinator"


def namespace_of(obj: JsonDict) -> str | None:
    ns = (obj.get("metadata") or {}).get("namespace")
    return str(ns) if ns else None


def is_koordinator_pod(obj: JsonDict) -> bool:
    meta = obj.get("metadata") or {}
    labels, ann = meta.get("labels") or {}, meta.get("annotations") or {}
    return (
        koord.GANG_NAME in ann
        or koord.SIGS_POD_GROUP_LABEL in labels
        or schedplugins.POD_GROUP_LABEL in labels
    )


def ours(pg: JsonDict) -> bool:
    labels = (pg.get("metadata") or {}).get("labels") or {}
    return labels.get(MANAGED_BY_LABEL) == MANAGED_BY and labels.get(TRANSLATED_FROM_LABEL) == SOURCE


@dataclass
class _Found:
    """The gangs of one namespace, and for each the object its Events go on."""

    gangs: list[k2v.KoordGang] = field(default_factory=list)
    sources: dict[str, JsonDict] = field(default_factory=dict)


class KoordinatorReconciler:
    kind: ClassVar[str] = "KoordinatorGang"
    watches: ClassVar[Mapping[str, Resource]] = {
        "sigs_pgs": SIGS_PODGROUPS,
        "x_pgs": X_PODGROUPS,
        "pods": PODS,
        "volcano_pgs": VOLCANO_PODGROUPS,
        "cnts": CLUSTER_NETWORK_TOPOLOGIES,
        "hypernodes": HYPERNODES,
    }
    """The informers the reconciler reads, by the name the constructor finds each under in `reads`."""
    max_workers: ClassVar[int | None] = None

    def __init__(self, kube: Kube, reads: Mapping[str, Informer], *, recorder: EventRecorder) -> None:
        self.kube = kube
        self.sigs_pgs = reads["sigs_pgs"]
        self.x_pgs = reads["x_pgs"]
        self.pods = reads["pods"]
        self.volcano_pgs = reads["volcano_pgs"]
        self.cnts = reads["cnts"]
        self.hypernodes = reads["hypernodes"]
        self.recorder = recorder
        self._reported: dict[str, str] = {}
        self.pods.add_index(
            "koordinator-ns", lambda o: [n] if is_koordinator_pod(o) and (n := namespace_of(o)) else []
        )

    def wire(self, enqueue: Callable[[str], None]) -> None:
        def by_ns(obj: JsonDict) -> None:
            ns = namespace_of(obj)
            if ns:
                enqueue(ns)

        def pod_changed(obj: JsonDict) -> None:
            if is_koordinator_pod(obj):
                by_ns(obj)

        def our_pg(obj: JsonDict) -> None:
            if ours(obj):
                by_ns(obj)

        self.sigs_pgs.add_handler(FuncHandler(by_ns))
        self.x_pgs.add_handler(FuncHandler(by_ns))
        self.pods.add_handler(FuncHandler(pod_changed, on_resync=False))
        self.volcano_pgs.add_handler(FuncHandler(our_pg, on_resync=False))

    def _layers(self) -> k2v.Layers:
        cnt_raw = self.cnts.get(koord.CNT_DEFAULT_NAME)
        cnt = None
        if cnt_raw is not None:
            try:
                cnt = koord.ClusterNetworkTopology.parse(cnt_raw)
            except TopobridgeError:
                cnt = None
        tree = None
        if cnt is None and self.hypernodes.cache:
            hns = []
            for raw in self.hypernodes.items():
                try:
                    hns.append(HyperNode.parse(raw))
                except TopobridgeError:
                    continue
            tree = from_hypernodes(hns, [])
        return k2v.Layers.of(cnt, tree)

    async def reconcile(self, key: str) -> Outcome:
        """One namespace: its Koordinator gangs (by PodGroup, then by pod annotation), each
        group of them translated into a Volcano PodGroup its pods join; PodGroups we made for
        gangs that are gone deleted."""
        namespace = key
        for inf in (self.sigs_pgs, self.x_pgs, self.pods, self.volcano_pgs):
            if not inf.synced.is_set():
                return Requeue(after=0.5)
        pods = self._live_pods(namespace)
        found = _Found()
        await self._podgroup_gangs(namespace, pods, found)
        await self._annotation_gangs(namespace, pods, found)
        wanted = await self._translate(found)
        await self._delete_unwanted(namespace, wanted)
        return Done()

    def _live_pods(self, namespace: str) -> list[Pod]:
        """The namespace's Koordinator pods that are not being deleted and parse."""
        pods = []
        for raw in self.pods.by_index("koordinator-ns", namespace):
            if (raw.get("metadata") or {}).get("deletionTimestamp"):
                continue
            try:
                pods.append(Pod.parse(raw))
            except TopobridgeError:
                continue
        return pods

    async def _podgroup_gangs(self, namespace: str, pods: list[Pod], found: _Found) -> None:
        """A gang per PodGroup of either dialect; one that cannot be read is reported on it."""
        for inf in (self.sigs_pgs, self.x_pgs):
            for raw in inf.items():
                if namespace_of(raw) != namespace:
                    continue
                model = koord.SigsPodGroup if inf is self.sigs_pgs else schedplugins.XPodGroup
                try:
                    gang = k2v.gang_from_pod_group(model.parse(raw), pods)
                except TopobridgeError as exc:
                    await self._report(raw, False, str(exc))
                    continue
                found.gangs.append(gang)
                found.sources[gang.id] = raw

    async def _annotation_gangs(self, namespace: str, pods: list[Pod], found: _Found) -> None:
        """Gangs named only by their pods' annotation (no PodGroup of that name), reported on
        their first pod by name."""
        known = {g.id for g in found.gangs}
        by_name: dict[str, list[Pod]] = defaultdict(list)
        for p in pods:
            name = p.metadata.annotation(koord.GANG_NAME)
            if name and f"{namespace}/{name}" not in known:
                by_name[name].append(p)
        for name, members in sorted(by_name.items()):
            try:
                found.gangs.extend(k2v.gangs_from_pods(members))
            except TopobridgeError as exc:
                await self._report(_pod_ref(members[0]), False, str(exc))
                continue
            found.sources[f"{namespace}/{name}"] = _pod_ref(sorted(members, key=lambda p: p.name)[0])

    async def _translate(self, found: _Found) -> set[str]:
        """Each group of gangs into its Volcano PodGroup, applied, its pods patched to join it;
        the names of the PodGroups wanted."""
        layers = self._layers()
        wanted: set[str] = set()
        for group in k2v.group_gangs(found.gangs):
            subject = found.sources.get(group[0].id, {})
            try:
                result = k2v.translate_gangs(group, layers=layers)
            except TopobridgeError as exc:
                await self._report(subject, False, str(exc))
                continue
            pg_name = result.pod_group.name
            wanted.add(pg_name)
            refused = await self._apply_pod_group(result, subject)
            if refused:
                continue
            patched = await self._patch_pods(result)
            summary = summarize(result.report)
            message = (
                f"{patched} pod(s) patched to join PodGroup {pg_name}; {summary}" if patched else summary
            )
            # The verdict is the translation, not how many pods this pass patched: a pod patched
            # again while the cache still shows it unpatched is no news.
            await self._report(subject, True, message, verdict=f"{pg_name}: {summary}")
        return wanted

    async def _delete_unwanted(self, namespace: str, wanted: set[str]) -> None:
        """Our Volcano PodGroups in the namespace that no gang wants any more."""
        for raw in self.volcano_pgs.items():
            if namespace_of(raw) == namespace and ours(raw) and raw["metadata"]["name"] not in wanted:
                try:
                    await self.kube.delete(
                        VOLCANO_PODGROUPS,
                        raw["metadata"]["name"],
                        namespace=namespace,
                        uid=raw["metadata"].get("uid"),
                    )
                    log.info(
                        "koordinator.podgroup_deleted", namespace=namespace, name=raw["metadata"]["name"]
                    )
                except NotFoundError:
                    pass

    async def _apply_pod_group(self, result: k2v.VolcanoGang, subject: JsonDict) -> bool:
        """Apply the PodGroup; True when the name is taken by a PodGroup we do not own."""
        pg = result.pod_group
        current = self.volcano_pgs.get(pg.key)
        if current is not None and not ours(current):
            await self._report(
                subject,
                False,
                f"Volcano PodGroup {pg.key} exists and is not managed by topobridge: left untouched",
            )
            return True
        desired = pg.to_dict()
        meta = desired["metadata"]
        meta["labels"] = {
            **meta.get("labels", {}),
            MANAGED_BY_LABEL: MANAGED_BY,
            TRANSLATED_FROM_LABEL: SOURCE,
        }
        if (
            current is not None
            and is_subset(desired["spec"], current.get("spec") or {})
            and is_subset(meta["labels"], (current.get("metadata") or {}).get("labels") or {})
        ):
            return False
        await self.kube.apply(VOLCANO_PODGROUPS, desired)
        return False

    async def _patch_pods(self, result: k2v.VolcanoGang) -> int:
        patched = 0
        for patch in result.pod_patches:
            raw = self.pods.get(f"{patch.namespace}/{patch.name}")
            if raw is None:
                continue
            meta = raw.get("metadata") or {}
            body = patch.merge_patch()
            body.pop("spec", None)  # schedulerName is immutable once a pod exists
            if not body or is_subset(body.get("metadata") or {}, meta):
                continue
            try:
                await self.kube.merge_patch(PODS, patch.name, body, namespace=patch.namespace)
                patched += 1
            except NotFoundError:
                continue
        return patched

    async def _report(self, subject: JsonDict, ok: bool, message: str, *, verdict: str | None = None) -> None:
        """An Event when the verdict on `subject` changes (`verdict`, else the message): once per
        change, never once per reconcile."""
        if not subject:
            log.warning("koordinator.unreported", message=message)
            return
        meta = subject.get("metadata") or {}
        key = f"{meta.get('namespace')}/{subject.get('kind')}/{meta.get('name')}"
        verdict = f"{ok}/{verdict if verdict is not None else message}"
        if self._reported.get(key) == verdict:
            return
        self._reported[key] = verdict
        await self.recorder.event(
            subject, "Normal" if ok else "Warning", "Translated" if ok else "TranslationFailed", message
        )


def _pod_ref(pod: Pod) -> JsonDict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod.metadata.to_dict()}
