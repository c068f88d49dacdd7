"""What the scheduler knows about the cluster: informer events fed into the placer's
`ClusterState` (parsed models plus the aggregates each cycle's snapshot is cut from).

Each object is parsed once per resourceVersion (pods and nodes through the lean
`translations.core` views), so a scheduling cycle never touches raw dicts, and each model is
kept once: `ParsedStore.items` is the state's own dict. Changes that cannot alter a decision
(status heartbeats) replace the model without moving any aggregate or waking the scheduler.

Pods the scheduler has sent to bind are *assumed* on their node until the informer shows the
binding (kube-scheduler's assume cache): the next cycle must not hand their room to another gang.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import structlog

from controller.informer import Informer, object_key
from controller.kube import JsonDict
from controller.placer.cluster import ClusterState, Kind
from translations import gpu, kueue, schedplugins, volcano, workload
from translations import koordinator as koord
from translations._base import KubeModel
from translations.core import Job, Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from translations.errors import InvalidSpecError

log = structlog.get_logger(__name__)

M = TypeVar("M", bound=KubeModel)


class ParsedStore(Generic[M]):
    """key -> parsed model of one kind (the state's dict); objects that do not parse are set
    aside with why (and count as deleted)."""

    def __init__(self, model: type[M], state: ClusterState, kind: Kind) -> None:
        if model is not kind.read.model:  # the table of kinds says what each kind parses into
            raise TypeError(
                f"{kind.name} objects parse into {kind.read.model.__name__}, not {model.__name__}"
            )
        self.model, self.state, self.kind = model, state, kind
        self.items: dict[str, M] = state.store(kind)
        self.invalid: dict[str, str] = {}

    def put(self, obj: JsonDict, *, relevant: bool = True) -> M | None:
        key = object_key(obj)
        try:
            parsed = self.model.parse(obj)
        except InvalidSpecError as exc:
            self.state.delete(self.kind, key)
            self.invalid[key] = str(exc)
            return None
        self.invalid.pop(key, None)
        self.state.put(self.kind, key, parsed, relevant=relevant)
        return parsed

    def drop(self, obj: JsonDict) -> None:
        key = object_key(obj)
        self.state.delete(self.kind, key)
        self.invalid.pop(key, None)


def _labels(obj: JsonDict) -> Any:
    return (obj.get("metadata") or {}).get("labels")


def _node_shape(obj: JsonDict) -> Any:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    return (
        meta.get("labels"),
        spec.get("taints"),
        spec.get("unschedulable"),
        status.get("allocatable"),
        status.get("capacity"),
    )


def _pod_shape(obj: JsonDict) -> Any:
    """What about a pod can change a scheduling decision (status heartbeats cannot): the whole
    spec (mostly immutable, but gates are lifted, tolerations added, requests resized), the
    metadata gangs and budgets read, and the status fields the placer reads: a terminal phase,
    the nomination, `startTime` (which of two equal victims goes: kube spares the one that has
    run longer) and what the kubelet allocated on an in-place resize."""
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    return (
        spec,
        meta.get("deletionTimestamp"),
        meta.get("labels"),
        meta.get("annotations"),
        meta.get("ownerReferences"),
        status.get("phase") in ("Succeeded", "Failed"),
        status.get("nominatedNodeName"),
        status.get("startTime"),
        [(c.get("name"), c.get("allocatedResources")) for c in status.get("containerStatuses") or ()],
    )


def _job_shape(obj: JsonDict) -> Any:
    """What about a Job shapes its GPU gang (its status moves on every pod change; it cannot)."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    template = spec.get("template") or {}
    return (
        meta.get("annotations"),
        spec.get("parallelism"),
        spec.get("completions"),
        (template.get("metadata") or {}).get("annotations"),
    )


CHANGED: dict[Kind, Callable[[JsonDict, JsonDict], bool]] = {
    Kind.POD: lambda o, n: bool(_pod_shape(o) != _pod_shape(n)),
    Kind.NODE: lambda o, n: bool(_node_shape(o) != _node_shape(n)),
    Kind.JOB: lambda o, n: bool(_job_shape(o) != _job_shape(n)),
    Kind.NAMESPACE: lambda o, n: bool(_labels(o) != _labels(n)),  # what a namespaceSelector reads
}
"""Per kind, which updates can change a decision (the others replace the model quietly);
kinds not named here: every update."""


class _Handler:
    """Parse every change; wake the scheduler only for changes `changed` calls relevant."""

    def __init__(
        self,
        store: ParsedStore[Any],
        touch: Callable[[], None],
        changed: Callable[[JsonDict, JsonDict], bool],
    ) -> None:
        self._store, self._touch, self._changed = store, touch, changed

    def on_add(self, obj: JsonDict) -> None:
        self._store.put(obj)
        self._touch()

    def on_update(self, old: JsonDict, new: JsonDict) -> None:
        if old is new:
            return  # resync: nothing new to parse
        relevant = self._changed(old, new)
        self._store.put(new, relevant=relevant)
        if relevant:
            self._touch()

    def on_delete(self, obj: JsonDict) -> None:
        self._store.drop(obj)
        self._touch()


class ClusterCache:
    """Parsed objects of every kind the scheduler reads (`Kind`): pods, nodes, gangs'
    PodGroups and Jobs, priority classes, budgets, namespaces and the topology's sources."""

    def __init__(
        self, *, on_change: Callable[[], None] | None = None, nvlink_label: str = gpu.NVLINK_LABEL
    ) -> None:
        self.state = ClusterState(nvlink_label=nvlink_label)
        st = self.state
        self.pods: ParsedStore[Pod] = ParsedStore(Pod, st, Kind.POD)
        self.nodes: ParsedStore[Node] = ParsedStore(Node, st, Kind.NODE)
        self.volcano_pgs: ParsedStore[volcano.PodGroup] = ParsedStore(
            volcano.PodGroup, st, Kind.VOLCANO_PODGROUP
        )
        self.sigs_pgs: ParsedStore[koord.SigsPodGroup] = ParsedStore(
            koord.SigsPodGroup, st, Kind.SIGS_PODGROUP
        )
        self.x_pgs: ParsedStore[schedplugins.XPodGroup] = ParsedStore(
            schedplugins.XPodGroup, st, Kind.X_PODGROUP
        )
        self.priority_classes: ParsedStore[PriorityClass] = ParsedStore(
            PriorityClass, st, Kind.PRIORITY_CLASS
        )
        self.pdbs: ParsedStore[PodDisruptionBudget] = ParsedStore(PodDisruptionBudget, st, Kind.PDB)
        self.hypernodes: ParsedStore[volcano.HyperNode] = ParsedStore(volcano.HyperNode, st, Kind.HYPERNODE)
        self.cnts: ParsedStore[koord.ClusterNetworkTopology] = ParsedStore(
            koord.ClusterNetworkTopology, st, Kind.CNT
        )
        self.jobs: ParsedStore[Job] = ParsedStore(Job, st, Kind.JOB)
        """batch/v1 Jobs: the GPU dialect's gangs read their annotations and parallelism."""
        self.namespaces: ParsedStore[Namespace] = ParsedStore(Namespace, st, Kind.NAMESPACE)
        self.kueue_topologies: ParsedStore[kueue.Topology] = ParsedStore(
            kueue.Topology, st, Kind.KUEUE_TOPOLOGY
        )
        self.k8s_pgs: ParsedStore[workload.PodGroup] = ParsedStore(
            workload.ServedPodGroup, st, Kind.K8S_PODGROUP
        )
        """Kubernetes' own PodGroups, where the API server serves them."""
        self.k8s_workloads: ParsedStore[workload.WorkloadV1alpha1] = ParsedStore(
            workload.WorkloadV1alpha1, st, Kind.K8S_WORKLOAD
        )
        """Kubernetes 1.35's Workloads, where served."""
        self.stores: dict[Kind, ParsedStore[Any]] = {
            s.kind: s
            for s in (
                self.pods,
                self.nodes,
                self.volcano_pgs,
                self.sigs_pgs,
                self.x_pgs,
                self.priority_classes,
                self.pdbs,
                self.hypernodes,
                self.cnts,
                self.jobs,
                self.namespaces,
                self.kueue_topologies,
                self.k8s_pgs,
                self.k8s_workloads,
            )
        }
        """One store per kind the scheduler reads (`Kind`)."""
        self._on_change = on_change

    @property
    def generation(self) -> int:
        """Moves on every change that can alter a scheduling decision."""
        return self.state.generation

    @property
    def topology_generation(self) -> int:
        return self.state.topology_generation

    @property
    def assumed(self) -> dict[str, str]:
        """pod key -> node: sent to bind, not yet seen bound."""
        return self.state.assumed

    # --- wiring ----------------------------------------------------------------------

    def attach(
        self,
        informer: Informer,
        store: ParsedStore[Any],
        *,
        changed: Callable[[JsonDict, JsonDict], bool] | None = None,
    ) -> None:
        informer.add_handler(_Handler(store, self._wake, changed or (lambda _o, _n: True)))

    def attach_kind(self, kind: Kind, informer: Informer) -> None:
        """Feed `kind`'s store from `informer`, waking the scheduler as `CHANGED` says."""
        self.attach(informer, self.stores[kind], changed=CHANGED.get(kind))

    def notify(self, on_change: Callable[[], None] | None) -> None:
        """Call `on_change` from now on whenever a change can alter a decision (a cache filled
        before its scheduler existed, a standby's, is handed to it this way)."""
        self._on_change = on_change

    def _wake(self) -> None:
        if self._on_change is not None:
            self._on_change()

    # --- assume ----------------------------------------------------------------------

    def assume(self, pod_key: str, node: str) -> None:
        self.state.assume(pod_key, node)

    def forget(self, pod_key: str) -> None:
        if self.state.forget(pod_key):
            self._wake()
