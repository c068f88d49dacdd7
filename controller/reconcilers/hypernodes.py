"""ClusterNetworkTopology `default` + node labels -> Volcano HyperNodes, and the CNT's status.

The desired set is `translations.hypernodes.from_cluster_network_topology`. HyperNodes
topobridge owns carry `app.kubernetes.io/managed-by=topobridge` and
`topobridge.io/topology-source=koordinator`; only those are ever updated or deleted. A
desired name already taken by a HyperNode someone else owns is refused (reported), never
overwritten. Deleting the ClusterNetworkTopology deletes the owned HyperNodes only.

When Koordinator is absent, `status.detailStatus` is written as Koordinator would; when
koord-scheduler runs, it owns that status and topobridge keeps out. Whether it runs is the
scheduler hand-off's `koord-scheduler` rule (`controller.handoff`: its leader Lease being
renewed), checked every 30 seconds; while unsure, topobridge keeps out.

One key (`default`) covers everything: a node label change can move a node between
domains, and the tree is rebuilt whole (it is cheap next to the API writes).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import structlog

from controller.clock import MonotonicClock
from controller.errors import AlreadyExistsError, InvalidError, NotFoundError
from controller.handoff import HandOffConfig, PresenceProbe, PresenceRule
from controller.informer import ChangeHandler, FuncHandler, Informer
from controller.kube import JsonDict, Kube
from controller.reconcile import Done, Outcome, Requeue
from controller.reconcilers.common import is_subset, summarize
from controller.reporting import EventRecorder
from controller.resources import CLUSTER_NETWORK_TOPOLOGIES, HYPERNODES, NODES, Resource
from translations import hypernodes as hntr
from translations import koordinator as koord
from translations.core import Node
from translations.errors import InvalidSpecError

log = structlog.get_logger(__name__)

KEY = koord.CNT_DEFAULT_NAME
KOORD_SCHEDULER = "koord-scheduler"
KOORD_CHECK_INTERVAL = 30.0
"""Seconds between checks that koord-scheduler runs (it owns the CNT's status then)."""
SOURCE = "koordinator"


def owned(hn: JsonDict) -> bool:
    labels = (hn.get("metadata") or {}).get("labels") or {}
    return labels.get(hntr.MANAGED_BY_LABEL) == hntr.MANAGED_BY and labels.get(hntr.SOURCE_LABEL) == SOURCE


def labels_changed(old: JsonDict, new: JsonDict) -> bool:
    """A node update that can move it in the topology: its labels (not a status heartbeat)."""
    return bool((old.get("metadata") or {}).get("labels") != (new.get("metadata") or {}).get("labels"))


@dataclass
class _Changes:
    """What one reconcile did to the HyperNodes, by name."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """Not ours: left untouched."""


class HyperNodeReconciler:
    kind: ClassVar[str] = "ClusterNetworkTopology"
    watches: ClassVar[Mapping[str, Resource]] = {
        "cnts": CLUSTER_NETWORK_TOPOLOGIES,
        "nodes": NODES,
        "hypernodes": HYPERNODES,
    }
    """The informers the reconciler reads, by the name the constructor finds each under in `reads`."""
    max_workers: ClassVar[int | None] = 1
    """One key (`default`): a second worker would have nothing to do."""

    def __init__(
        self,
        kube: Kube,
        reads: Mapping[str, Informer],
        *,
        recorder: EventRecorder,
        koordinator: PresenceRule | None = None,
        write_status: bool | None = None,
    ) -> None:
        self.kube = kube
        self.cnts = reads["cnts"]
        self.nodes = reads["nodes"]
        self.hypernodes = reads["hypernodes"]
        self.recorder = recorder
        rule = koordinator or HandOffConfig().rule_of(KOORD_SCHEDULER)
        assert rule is not None  # a default rule exists for koord-scheduler
        self.koordinator = PresenceProbe(kube, rule, clock=MonotonicClock())
        self.write_status = write_status
        """None: write CNT status only while Koordinator is absent; True/False: always/never."""
        self._koord_checked_at: float | None = None
        self._last_report: str | None = None

    def wire(self, enqueue: Callable[[str], None]) -> None:
        self.cnts.add_handler(FuncHandler(lambda _o: enqueue(KEY)))
        self.nodes.add_handler(ChangeHandler(lambda: enqueue(KEY), labels_changed))

        def on_hypernode(obj: JsonDict) -> None:
            if owned(obj):
                enqueue(KEY)

        self.hypernodes.add_handler(FuncHandler(on_hypernode, on_resync=False))

    async def reconcile(self, key: str) -> Outcome:
        """The CNT `default` translated into HyperNodes; ours converged to them (`_converge`),
        the result reported (`_report`), the CNT's status written while Koordinator is away."""
        if key != KEY:
            return Done()  # only `default` is read, as Koordinator does
        for inf in (self.cnts, self.nodes, self.hypernodes):
            if not inf.synced.is_set():
                return Requeue(after=0.5)
        ours = {hn["metadata"]["name"]: hn for hn in self.hypernodes.items() if owned(hn)}
        raw = self.cnts.get(KEY)
        if raw is None or (raw.get("metadata") or {}).get("deletionTimestamp"):
            for name, hn in sorted(ours.items()):
                await self._delete(name, hn)
            self._last_report = None
            return Done()
        nodes = [Node.parse(n) for n in self.nodes.items()]
        try:
            cnt = koord.ClusterNetworkTopology.parse(raw)
            result = hntr.from_cluster_network_topology(cnt, nodes)
        except InvalidSpecError as exc:
            await self._report_once(raw, "Warning", "TranslationFailed", f"no HyperNodes: {exc}")
            return Done()
        changes = await self._converge({hn.name: hn.to_dict() for hn in result.hypernodes}, ours)
        if changes is None:
            return Requeue(after=0.5)  # our cache is behind; look again
        await self._report(raw, changes, summarize(result.report))
        if await self._should_write_status():
            await self._write_status(raw, cnt, nodes)
        return Done()

    async def _converge(
        self, desired: Mapping[str, JsonDict], ours: Mapping[str, JsonDict]
    ) -> _Changes | None:
        """Create, update and delete our HyperNodes until they are `desired`; one of the same
        name that is not ours is left alone. None when our cache turned out to be behind."""
        changes = _Changes()
        for name, body in desired.items():
            current = self.hypernodes.get(name)
            if current is not None and not owned(current):
                changes.refused.append(name)
            elif current is None:
                try:
                    await self.kube.create(HYPERNODES, body)
                except AlreadyExistsError:
                    return None
                changes.created.append(name)
            elif self._differs(body, current):
                await self._update(name, body, current)
                changes.updated.append(name)
        for name, hn in sorted(ours.items()):
            if name not in desired:
                await self._delete(name, hn)
                changes.deleted.append(name)
        return changes

    async def _update(self, name: str, body: JsonDict, current: JsonDict) -> None:
        """Our labels, annotations and spec over the object as the cache last saw it."""
        meta = body["metadata"]
        await self.kube.merge_patch(
            HYPERNODES,
            name,
            {
                "metadata": {
                    "labels": meta.get("labels"),
                    "annotations": meta.get("annotations"),
                    "resourceVersion": current["metadata"]["resourceVersion"],
                },
                "spec": body["spec"],
            },
        )

    async def _report(self, raw: JsonDict, changes: _Changes, summary: str) -> None:
        """An Event for what changed; the verdict (refused names, or the translation's summary)
        once per change of verdict."""
        done = (("created", changes.created), ("updated", changes.updated), ("deleted", changes.deleted))
        parts = [f"{verb} {', '.join(names)}" for verb, names in done if names]
        if parts:
            await self.recorder.event(raw, "Normal", "HyperNodesSynced", "HyperNodes " + "; ".join(parts))
        if changes.refused:
            await self._report_once(
                raw,
                "Warning",
                "HyperNodeNotOwned",
                f"HyperNodes {', '.join(changes.refused)} exist and are not managed by topobridge: left untouched",
            )
        else:
            await self._report_once(raw, "Normal", "Translated", summary)

    @staticmethod
    def _differs(body: JsonDict, current: JsonDict) -> bool:
        """Spec, labels or annotations we set are not what the object has (server defaults
        in the object are not drift; a member list of another length is)."""
        spec, cur_spec = body["spec"], current.get("spec") or {}
        meta, cur_meta = body["metadata"], current.get("metadata") or {}
        same_spec = is_subset(spec, cur_spec)  # lists compare element-wise and by length
        same_meta = is_subset(meta.get("labels") or {}, cur_meta.get("labels") or {}) and is_subset(
            meta.get("annotations") or {}, cur_meta.get("annotations") or {}
        )
        return not (same_spec and same_meta)

    async def _delete(self, name: str, hn: JsonDict) -> None:
        try:
            await self.kube.delete(HYPERNODES, name, uid=hn["metadata"].get("uid"))
            log.info("hypernode.deleted", name=name)
        except NotFoundError:
            pass

    async def _report_once(self, raw: JsonDict, type_: str, reason: str, message: str) -> None:
        """Report a verdict only when it changes, so resyncs do not repeat it."""
        key = f"{type_}/{reason}/{message}"
        if key == self._last_report:
            return
        self._last_report = key
        await self.recorder.event(raw, type_, reason, message)  # type: ignore[arg-type]

    async def _should_write_status(self) -> bool:
        if self.write_status is not None:
            return self.write_status
        now = time.monotonic()
        if self._koord_checked_at is None or now - self._koord_checked_at > KOORD_CHECK_INTERVAL:
            await self.koordinator.refresh()  # a failed check keeps the last verdict
            self._koord_checked_at = now
        return self.koordinator.present is False  # unsure: do not write what Koordinator may own

    async def _write_status(
        self, raw: JsonDict, cnt: koord.ClusterNetworkTopology, nodes: list[Node]
    ) -> None:
        status = hntr.detail_status(cnt, nodes).to_dict()
        if (raw.get("status") or {}).get("detailStatus") == status.get("detailStatus"):
            return
        try:
            await self.kube.merge_patch(
                CLUSTER_NETWORK_TOPOLOGIES, KEY, {"status": status}, subresource="status"
            )
        except InvalidError as exc:
            # The server refuses the status itself: retrying the same body cannot help.
            await self._report_once(
                raw, "Warning", "StatusRejected", f"status.detailStatus not written: {exc}"
            )
