"""What the rules may know about the cluster: a frozen, pure view.

The admission server keeps one up to date from a cache (fed by watches); the CLI builds one
from `--cluster-state FILE`. Rules never call the API: whatever they need is here.

* HyperNodes: tier, tierName and HyperNode members (exact names and regex patterns), from
  which parents (each HyperNode's kept parent resolved by the scheduler tree's own rule,
  `translations.topology.ParentClaims`), the widest tier and the known tier names follow.
* The layers of the ClusterNetworkTopology named `default` (None when there is none).
* Koordinator gangs: the pods holding each network-topology index.
* GPU nodes: each node's allocatable `nvidia.com/gpu` (nodes without GPUs are left out).

`known=False` means "no view at all" (no file given, cache not synced yet): rules then skip
every check that needs the cluster rather than warn about an empty one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from translations import koordinator as koord
from translations import schedplugins
from translations._base import ObjectMeta, TypedObject
from translations.core import Node, PodStatus
from translations.errors import InvalidSpecError
from translations.gangs import koordinator_gang_of
from translations.goregex import regex_matches
from translations.gpu import GPU_RESOURCE
from translations.topology import ParentClaims
from translations.volcano import HYPERNODE_GROUP, HyperNode

GangKey = str
"""`namespace/name` of a Koordinator gang."""


@dataclass(frozen=True, slots=True)
class HyperNodeFacts:
    """The parts of one HyperNode the tree rules need."""

    name: str
    tier: int
    tier_name: str | None = None
    member_hypernodes: tuple[str, ...] = ()
    """exactMatch names of its HyperNode members."""
    member_patterns: tuple[str, ...] = ()
    """regexMatch patterns of its HyperNode members."""

    @classmethod
    def of(cls, hn: HyperNode) -> HyperNodeFacts:
        exact: list[str] = []
        patterns: list[str] = []
        for m in hn.spec.member_list:
            if m.type != "HyperNode":
                continue
            if m.selector.exact_match is not None:
                exact.append(m.selector.exact_match.name)
            elif m.selector.regex_match is not None:
                patterns.append(m.selector.regex_match.pattern)
        return cls(hn.name, hn.spec.tier, hn.spec.tier_name, tuple(exact), tuple(patterns))


def gang_of(meta: ObjectMeta) -> str | None:
    """The Koordinator gang a pod belongs to, read as the scheduler reads it
    (`translations.gangs.koordinator_gang_of`: a PodGroup label before the gang-name annotation)."""
    named = koordinator_gang_of(meta.labels or {}, meta.annotations or {})
    return named[0] or None if named is not None else None


def _frozen(mapping: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, eq=False)
class ClusterState:
    """A snapshot of the cluster as far as the rules are concerned."""

    known: bool = False
    hypernodes: Mapping[str, HyperNodeFacts] = field(default_factory=lambda: _frozen({}))
    cnt_layers: frozenset[str] | None = None
    """Layers of ClusterNetworkTopology `default`, ClusterTopologyLayer included; None: none exists."""
    gang_indices: Mapping[GangKey, Mapping[int, tuple[str, ...]]] = field(default_factory=lambda: _frozen({}))
    """gang -> network-topology index -> the pods (`namespace/name`) that carry it."""
    node_gpus: Mapping[str, int] = field(default_factory=lambda: _frozen({}))
    """Node name -> allocatable `nvidia.com/gpu`, for nodes that have any."""
    gang_specs: Mapping[GangKey, str | None] = field(default_factory=lambda: _frozen({}))
    """gang -> its network-topology-spec annotation as written (None: it carries none), from
    its PodGroup (`scheduling.sigs.k8s.io`, `scheduling.x-k8s.io`) or, for a gang by
    annotation, its pods."""

    @classmethod
    def unknown(cls) -> ClusterState:
        return cls(known=False)

    @classmethod
    def build(
        cls,
        *,
        hypernodes: Iterable[HyperNodeFacts] = (),
        cnt_layers: Iterable[str] | None = None,
        pod_indices: Iterable[tuple[GangKey, int, str]] = (),
        node_gpus: Mapping[str, int] | None = None,
        gang_specs: Mapping[GangKey, str | None] | None = None,
    ) -> ClusterState:
        """A known state from facts (the cache's path: it keeps facts, not whole objects)."""
        indices: dict[GangKey, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
        for gang, index, pod in pod_indices:
            indices[gang][index].append(pod)
        return cls(
            known=True,
            hypernodes=_frozen({h.name: h for h in hypernodes}),
            cnt_layers=None if cnt_layers is None else frozenset([*cnt_layers, koord.CLUSTER_LAYER]),
            gang_indices=_frozen(
                {
                    g: _frozen({i: tuple(sorted(p)) for i, p in by_index.items()})
                    for g, by_index in indices.items()
                }
            ),
            node_gpus=_frozen(node_gpus or {}),
            gang_specs=_frozen(gang_specs or {}),
        )

    @classmethod
    def from_objects(cls, objects: Iterable[Any]) -> tuple[ClusterState, list[str]]:
        """A known state from raw HyperNodes, ClusterNetworkTopologies and Pods (anything else
        is ignored). Objects that do not parse are left out and described in the second value."""
        facts = StateFacts()
        problems: list[str] = []
        for obj in objects:
            problem = facts.add(obj)
            if problem:
                problems.append(problem)
        return facts.state(), problems

    # --- derived views ------------------------------------------------------------------

    @cached_property
    def max_tier(self) -> int | None:
        """The widest HyperNode tier, None without HyperNodes."""
        return max((h.tier for h in self.hypernodes.values()), default=None)

    @cached_property
    def tier_names(self) -> Mapping[str, tuple[int, ...]]:
        """tierName -> the tiers of the HyperNodes that carry it."""
        out: dict[str, set[int]] = defaultdict(set)
        for h in self.hypernodes.values():
            if h.tier_name:
                out[h.tier_name].add(h.tier)
        return _frozen({name: tuple(sorted(tiers)) for name, tiers in out.items()})

    @cached_property
    def _children(self) -> Mapping[str, tuple[str, ...]]:
        names = sorted(self.hypernodes)
        out: dict[str, tuple[str, ...]] = {}
        for h in self.hypernodes.values():
            kids = set(h.member_hypernodes)
            for pattern in h.member_patterns:
                kids.update(regex_matches(pattern, names))
            kids.discard(h.name)
            out[h.name] = tuple(sorted(kids))
        return _frozen(out)

    @cached_property
    def _parents(self) -> Mapping[str, tuple[str, ...]]:
        out: dict[str, list[str]] = defaultdict(list)
        for parent, kids in self._children.items():
            for kid in kids:
                out[kid].append(parent)
        return _frozen({k: tuple(sorted(v)) for k, v in out.items()})

    @cached_property
    def known_gang_specs(self) -> Mapping[GangKey, koord.NetworkTopologyGatherSpec | None]:
        """`gang_specs` parsed; a gang whose spec does not parse is left out (not known)."""
        out: dict[GangKey, koord.NetworkTopologyGatherSpec | None] = {}
        for gang, raw in self.gang_specs.items():
            if raw is None:
                out[gang] = None
            elif (spec := koord.check_network_topology_spec(raw)[0]) is not None:
                out[gang] = spec
        return _frozen(out)

    def children_of(self, name: str) -> tuple[str, ...]:
        return self._children.get(name, ())

    def parents_of(self, name: str, *, excluding: str | None = None) -> tuple[str, ...]:
        """HyperNodes that list `name` as a member (other than `excluding`)."""
        return tuple(p for p in self._parents.get(name, ()) if p != excluding)

    @cached_property
    def _parent(self) -> Mapping[str, str]:
        """The parent each HyperNode keeps, resolved as the scheduler's tree resolves it
        (`translations.topology.ParentClaims`: of two, the lower tier, then the first name;
        cycles cut). A name no HyperNode in view has (the one being admitted) is a child too."""
        claims = ParentClaims("hypernode")
        for name in sorted(self.hypernodes):
            for kid in self._children[name]:
                claims.claim(kid, name, self.hypernodes[name].tier)
        return _frozen(claims.resolved(sorted(self.hypernodes)))

    def ancestors(self, name: str) -> list[str]:
        """The HyperNodes above `name`, parent first, as the scheduler's tree has them
        (`_parent`); linear in the depth (a set remembers the ones met)."""
        out: list[str] = []
        seen = {name}
        cur = self._parent.get(name)
        while cur is not None and cur not in seen:
            out.append(cur)
            seen.add(cur)
            cur = self._parent.get(cur)
        return out


class _PodView(TypedObject):
    """A pod as the state reads it: metadata and phase (pods are many; parse little)."""

    status: PodStatus | None = None


class StateFacts:
    """Mutable builder of a ClusterState: keeps the facts of each object by key.

    `version` counts changes of facts; most pod updates (status, conditions) change none,
    so a cache of built states stays valid through them.
    """

    def __init__(self) -> None:
        self.hypernodes: dict[str, HyperNodeFacts] = {}
        self.cnt_layers: tuple[str, ...] | None = None
        self.pod_indices: dict[str, tuple[GangKey, int]] = {}
        """pod `namespace/name` -> (gang, index)."""
        self.node_gpus: dict[str, int] = {}
        self.gang_specs: dict[str, tuple[GangKey, str | None]] = {}
        """`Kind namespace/name` of a PodGroup, or of a pod of a gang by annotation ->
        (gang, its network-topology-spec as written)."""
        self.version = 0

    def add(self, obj: Any) -> str | None:
        """Record one object; returns why it was left out, or None."""
        if not isinstance(obj, dict):
            return f"not an object: {type(obj).__name__}"
        kind, group = obj.get("kind"), str(obj.get("apiVersion") or "").rpartition("/")[0]
        try:
            if kind == "HyperNode" and group in (HYPERNODE_GROUP, ""):
                hn = HyperNode.parse(obj)
                self._set(self.hypernodes, hn.name, HyperNodeFacts.of(hn))
            elif kind == "ClusterNetworkTopology" and group in (koord.GROUP, ""):
                cnt = koord.ClusterNetworkTopology.parse(obj)
                if cnt.name == koord.CNT_DEFAULT_NAME:
                    layers = tuple(layer.topology_layer for layer in cnt.spec.network_topology_spec)
                    if layers != self.cnt_layers:
                        self.cnt_layers, self.version = layers, self.version + 1
            elif kind == "Pod" and group == "":
                self.add_pod(_PodView.parse(obj))
            elif kind == "Node" and group == "":
                node = Node.parse(obj)
                self._set(self.node_gpus, node.name, node.allocatable().get(GPU_RESOURCE) or None)
            elif kind == "PodGroup" and group in (koord.SIGS_GROUP, schedplugins.GROUP):
                pg = TypedObject.parse(obj)
                spec = pg.metadata.annotation(koord.NETWORK_TOPOLOGY_SPEC)
                self._set(self.gang_specs, f"PodGroup {pg.key}", (f"{pg.namespace}/{pg.name}", spec))
        except InvalidSpecError as exc:
            meta = obj.get("metadata")
            name = meta.get("name") if isinstance(meta, dict) else None
            return f"{kind} {name or '<unnamed>'} left out: {exc}"
        return None

    def _set(self, table: dict[str, Any], key: str, value: Any) -> None:
        if value is None:
            if table.pop(key, None) is not None:
                self.version += 1
        elif table.get(key) != value:
            table[key] = value
            self.version += 1

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        if kind == "HyperNode":
            self._set(self.hypernodes, name, None)
        elif kind == "ClusterNetworkTopology" and name == koord.CNT_DEFAULT_NAME:
            if self.cnt_layers is not None:
                self.cnt_layers, self.version = None, self.version + 1
        elif kind == "Pod":
            self._set(self.pod_indices, f"{namespace}/{name}", None)
            self._set(self.gang_specs, f"Pod {namespace}/{name}", None)
        elif kind == "Node":
            self._set(self.node_gpus, name, None)
        elif kind == "PodGroup":
            self._set(self.gang_specs, f"PodGroup {namespace}/{name}", None)

    def add_pod(self, pod: _PodView) -> None:
        key = f"{pod.namespace}/{pod.name}"
        self._set(self.pod_indices, key, self._pod_fact(pod))
        gang = gang_of(pod.metadata)
        spec_fact = (f"{pod.namespace}/{gang}", pod.metadata.annotation(koord.NETWORK_TOPOLOGY_SPEC))
        self._set(self.gang_specs, f"Pod {key}", spec_fact if gang else None)

    @staticmethod
    def _pod_fact(pod: _PodView) -> tuple[GangKey, int] | None:
        raw_index = pod.metadata.annotation(koord.NETWORK_TOPOLOGY_INDEX)
        gang = gang_of(pod.metadata)
        finished = pod.status is not None and pod.status.phase in ("Succeeded", "Failed")
        if raw_index is None or gang is None or finished:
            return None
        try:
            index = koord.parse_non_negative_int(koord.NETWORK_TOPOLOGY_INDEX, raw_index)
        except InvalidSpecError:
            return None
        return (f"{pod.namespace}/{gang}", index)

    def state(self) -> ClusterState:
        return ClusterState.build(
            hypernodes=self.hypernodes.values(),
            cnt_layers=self.cnt_layers,
            pod_indices=((gang, index, pod) for pod, (gang, index) in self.pod_indices.items()),
            node_gpus=self.node_gpus,
            gang_specs=self._gang_specs(),
        )

    def _gang_specs(self) -> dict[GangKey, str | None]:
        """Per gang, its PodGroup's spec, else the spec its pods carry."""
        out: dict[GangKey, str | None] = {}
        for _key, (gang, spec) in sorted(
            self.gang_specs.items(), key=lambda kv: not kv[0].startswith("PodGroup")
        ):
            out.setdefault(gang, spec)
        return out
