"""What the scheduler knows about the cluster: parsed models kept in step by informers.

Each object is parsed once per resourceVersion (pods and nodes through the lean
`translations.core` views), so a scheduling cycle never touches raw dicts. A topology
generation counter moves whenever anything that shapes the static index changes (nodes
appearing or going, their labels, taints, allocatable, HyperNodes, the ClusterNetworkTopology),
so the index is rebuilt only then.

Pods the scheduler has sent to bind are *assumed* on their node until the informer shows the
binding (kube-scheduler's assume cache): the next cycle must not hand their room to another gang.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import structlog

from controller.informer import Informer, object_key
from controller.kube import JsonDict
from translations import koordinator as koord
from translations import schedplugins, volcano
from translations._base import KubeModel
from translations.core import Job, Node, Pod, PodDisruptionBudget, PriorityClass
from translations.errors import InvalidSpecError

log = structlog.get_logger(__name__)

M = TypeVar("M", bound=KubeModel)


@dataclass
class ParsedStore(Generic[M]):
    """key -> parsed model of one resource; objects that do not parse are set aside with why."""

    model: type[M]
    items: dict[str, M] = field(default_factory=dict)
    invalid: dict[str, str] = field(default_factory=dict)

    def put(self, obj: JsonDict) -> M | None:
        key = object_key(obj)
        try:
            parsed = self.model.parse(obj)
        except InvalidSpecError as exc:
            self.items.pop(key, None)
            self.invalid[key] = str(exc)
            return None
        self.invalid.pop(key, None)
        self.items[key] = parsed
        return parsed

    def drop(self, obj: JsonDict) -> None:
        key = object_key(obj)
        self.items.pop(key, None)
        self.invalid.pop(key, None)


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
    """What about a pod can change a scheduling decision (status heartbeats cannot)."""
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    return (
        spec.get("nodeName"),
        meta.get("deletionTimestamp"),
        status.get("phase") in ("Succeeded", "Failed"),
        meta.get("labels"),
        meta.get("annotations"),
        status.get("nominatedNodeName"),
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
        self._store.put(new)
        if self._changed(old, new):
            self._touch()

    def on_delete(self, obj: JsonDict) -> None:
        self._store.drop(obj)
        self._touch()


class ClusterCache:
    """Parsed pods, nodes, gangs' PodGroups, priority classes, budgets and the topology."""

    def __init__(self, *, on_change: Callable[[], None] | None = None) -> None:
        self.pods: ParsedStore[Pod] = ParsedStore(Pod)
        self.nodes: ParsedStore[Node] = ParsedStore(Node)
        self.volcano_pgs: ParsedStore[volcano.PodGroup] = ParsedStore(volcano.PodGroup)
        self.sigs_pgs: ParsedStore[koord.SigsPodGroup] = ParsedStore(koord.SigsPodGroup)
        self.x_pgs: ParsedStore[schedplugins.XPodGroup] = ParsedStore(schedplugins.XPodGroup)
        self.priority_classes: ParsedStore[PriorityClass] = ParsedStore(PriorityClass)
        self.pdbs: ParsedStore[PodDisruptionBudget] = ParsedStore(PodDisruptionBudget)
        self.hypernodes: ParsedStore[volcano.HyperNode] = ParsedStore(volcano.HyperNode)
        self.cnts: ParsedStore[koord.ClusterNetworkTopology] = ParsedStore(koord.ClusterNetworkTopology)
        self.jobs: ParsedStore[Job] = ParsedStore(Job)
        """batch/v1 Jobs: the GPU dialect's gangs read their annotations and parallelism."""
        self.topology_generation = 0
        self.generation = 0
        """Moves on every change that can alter a scheduling decision."""
        self.assumed: dict[str, str] = {}
        """pod key -> node: sent to bind, not yet seen bound."""
        self._on_change = on_change

    # --- wiring ----------------------------------------------------------------------

    def attach(
        self,
        informer: Informer,
        store: ParsedStore[Any],
        *,
        topology: bool = False,
        changed: Callable[[JsonDict, JsonDict], bool] | None = None,
    ) -> None:
        informer.add_handler(_Handler(store, lambda: self._touch(topology), changed or (lambda _o, _n: True)))

    def attach_pods(self, informer: Informer) -> None:
        def add(obj: JsonDict) -> None:
            pod = self.pods.put(obj)
            if pod is not None and pod.spec.node_name and self.assumed.get(pod.key) == pod.spec.node_name:
                del self.assumed[pod.key]  # the binding is visible now
            self._touch(False)

        def delete(obj: JsonDict) -> None:
            self.pods.drop(obj)
            self.assumed.pop(object_key(obj), None)
            self._touch(False)

        class PodHandler:
            def on_add(self, obj: JsonDict) -> None:
                add(obj)

            def on_update(self, old: JsonDict, new: JsonDict) -> None:
                if old is new:
                    return
                if _pod_shape(old) != _pod_shape(new):
                    add(new)
                else:
                    cache.pods.put(new)  # phase/conditions only: current model, no wake-up

            def on_delete(self, obj: JsonDict) -> None:
                delete(obj)

        cache = self
        informer.add_handler(PodHandler())

    def attach_nodes(self, informer: Informer) -> None:
        self.attach(
            informer, self.nodes, topology=True, changed=lambda o, n: _node_shape(o) != _node_shape(n)
        )

    def attach_jobs(self, informer: Informer) -> None:
        self.attach(informer, self.jobs, changed=lambda o, n: _job_shape(o) != _job_shape(n))

    def _touch(self, topology: bool) -> None:
        self.generation += 1
        if topology:
            self.topology_generation += 1
        if self._on_change is not None:
            self._on_change()

    # --- assume ----------------------------------------------------------------------

    def assume(self, pod_key: str, node: str) -> None:
        self.assumed[pod_key] = node
        self.generation += 1

    def forget(self, pod_key: str) -> None:
        if self.assumed.pop(pod_key, None) is not None:
            self.generation += 1
            if self._on_change is not None:
                self._on_change()
