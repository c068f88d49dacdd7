"""The placer's view of a cluster: a static index built once per node-set generation, and cheap
per-cycle state on top of it.

`ClusterIndex` (static, shared, never mutated):
* nodes in depth-first tree order (roots, children and nodes in natural name order; nodes in no
  domain last), so every domain covers one contiguous range `[start, end)` of node indexes and
  any per-domain sum is two lookups in a prefix sum;
* domains as dense arrays: tier, parent, range, children, ancestors;
* allocatable as an int64 matrix [node, resource] over one resource axis;
* label and taint indexes that let filters run as array operations.

`Snapshot` (a cycle's state, mutated by the cycle's reservations; `clone()` copies only the
arrays): `used` [node, resource], the bound pods with their priority and gang (for preemption),
and nominations. A snapshot kept from one cycle to the next (`ClusterState`'s) journals the
cycle's changes and rolls them back before it is brought up to date, and patches its bound
pods' arrays from the pods that changed instead of rebuilding them (`columns.PodColumns`); its
gangs' bound members, once read, are kept in step the same way (`gang_pods`). What a plugin
derived from the bound pods can be brought up to date from the keys set since (`watch`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import compress, repeat
from operator import attrgetter, is_not, not_
from typing import Any, TypeVar
from weakref import ReferenceType, ref

import numpy as np
import numpy.typing as npt

from controller.placer.columns import PodArrays as PodArrays
from controller.placer.columns import PodColumns, pod_arrays
from controller.placer.memo import Memo
from controller.placer.records import BoundPod, Nomination
from controller.placer.terms import NamespaceLabels
from translations.core import Node, Taint
from translations.topology import DomainId, TopologyTree, clique_tier, natural_key

I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]

FIRST_RESOURCES = ("cpu", "memory", "pods")
CLUSTER = "cluster"
"""The implicit root above every domain and every node."""
UNSCHEDULABLE_TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")
"""What an unschedulable node behaves as if it had (a pod tolerating it may still go there)."""

TaintTuple = tuple[str, str, str]
"""(key, value, effect)."""
HARD = frozenset({"NoSchedule", "NoExecute"})
"""Taint effects that keep pods off a node (TaintToleration's Filter)."""
PREFER = frozenset({"PreferNoSchedule"})
"""The taint effect TaintToleration's Score weighs."""


@dataclass(frozen=True)
class ClusterIndex:
    """Static structure: rebuilt only when nodes, their labels/taints or the tree change."""

    node_names: tuple[str, ...]
    node_pos: Mapping[str, int]
    resources: tuple[str, ...]
    res_pos: Mapping[str, int]
    alloc: I64
    """[node, resource] allocatable in scheduler units."""
    labels: tuple[Mapping[str, str], ...]
    taint_group: I64
    """Per node: index into `taint_sets` (its NoSchedule/NoExecute taints; `spec.unschedulable`
    is `unschedulable`, which NodeUnschedulable reads as the taint kube says it stands for)."""
    taint_sets: tuple[tuple[TaintTuple, ...], ...]
    prefer_group: I64
    """Per node: index into `prefer_sets` (its PreferNoSchedule taints, which TaintToleration
    scores and never filters)."""
    prefer_sets: tuple[tuple[TaintTuple, ...], ...]
    unschedulable: Bool
    tree: TopologyTree
    dom_ids: tuple[DomainId, ...]
    dom_pos: Mapping[DomainId, int]
    dom_tier: I64
    dom_parent: I64
    dom_start: I64
    dom_end: I64
    dom_direct_end: I64
    """Nodes held directly by a domain are `[start, direct_end)`; its child domains follow."""
    dom_children: tuple[tuple[int, ...], ...]
    node_dom: I64
    """Innermost domain of each node, -1 for nodes in no domain."""
    tiers: tuple[int, ...]
    """Distinct domain tiers, ascending."""
    tier_domains: Mapping[int, I64]
    """tier -> its domain indexes, ordered by range start (disjoint, ascending)."""
    roots: tuple[int, ...]
    loose: tuple[int, int]
    """Range of nodes that belong to no domain (at the end of the order)."""
    node_anc: I64
    """[node, k]: k-th enclosing domain of the node (0 = innermost), -1 past the top."""
    dom_anc: I64
    """[domain, k]: k-th ancestor (0 = parent), -1 past the top."""
    node_name_rank: I64
    dom_name_rank: I64
    _label_cache: dict[str, npt.NDArray[np.object_]] = field(default_factory=dict, compare=False, repr=False)
    memo: Memo = field(default_factory=Memo, compare=False, repr=False)
    """Results that depend only on the static index (filters by pod spec, label codes), kept
    as long as the index (one generation of the node set), in typed slots."""

    @property
    def n_nodes(self) -> int:
        return len(self.node_names)

    @property
    def n_domains(self) -> int:
        return len(self.dom_ids)

    @classmethod
    def build(
        cls,
        nodes: Sequence[Node],
        tree: TopologyTree,
        *,
        resources: Iterable[str] = (),
        allocatable: Mapping[str, Mapping[str, int]] | None = None,
    ) -> ClusterIndex:
        """Index `nodes` under `tree`. Tree nodes that are not in `nodes` are ignored: the walk
        (`_TreeWalk`), then the nodes' table (`_NodeTable`), then the ancestor tables.
        `allocatable`: node name -> `Node.allocatable()`, when the caller has read it already."""
        by_name = {n.name: n for n in nodes}
        walk = _TreeWalk.of(tree, by_name)
        order = walk.order
        table = _NodeTable.of([by_name[name] for name in order], resources, allocatable)
        return cls(
            node_names=tuple(order),
            node_pos={n: i for i, n in enumerate(order)},
            resources=table.axis,
            res_pos=table.res_pos,
            alloc=table.alloc,
            labels=table.labels,
            taint_group=table.taint_group,
            taint_sets=table.taint_sets,
            prefer_group=table.prefer_group,
            prefer_sets=table.prefer_sets,
            unschedulable=table.unschedulable,
            node_name_rank=_name_ranks(order),
            **_walked(tree, walk),
        )

    def relabelled(self, tree: TopologyTree, node: Node) -> tuple[ClusterIndex, I64] | None:
        """This index with `node` (indexed here) relabelled and held where `tree` holds it, when
        its taints and schedulability are as indexed (its allocatable is the caller's to
        compare). Where `tree` has the same domains as this index's (a domain of the same name
        under another parent is another domain), the nodes between the node's old row and its
        new one shift by one, the domains' ranges with them; else the domain tables are made
        from `tree` (`_rewalked`). Second: the old row of each new row. None: build the index
        again."""
        i = self.node_pos.get(node.name)
        if i is None or tree.node_domain.get(node.name) is None:
            return None
        taints = node.spec.taints or []
        if (
            len(self.node_pos) != self.n_nodes
            or self.taint_sets[self.taint_group[i]] != _hard_taints(taints)
            or self.prefer_sets[self.prefer_group[i]] != _taints_of(taints, PREFER)
            or bool(self.unschedulable[i]) != bool(node.spec.unschedulable)
            or self.node_dom[i] < 0
        ):
            return None
        if not _same_domains(self.tree, tree):
            return self._rewalked(tree, node)
        ranges = _Ranges(self)
        ranges.shift(int(self.node_dom[i]), i, -1)
        b = self.dom_pos[tree.node_domain[node.name]]
        order = list(self.node_names)
        del order[i]
        direct = order[ranges.start[b] : ranges.direct_end[b]]
        j = int(ranges.start[b]) + bisect.bisect(direct, natural_key(node.name), key=natural_key)
        ranges.shift(b, j, +1)
        order.insert(j, node.name)
        perm = np.insert(np.delete(np.arange(self.n_nodes, dtype=np.int64), i), j, i)
        return self._moved(tree, node, order=order, perm=perm, ranges=ranges, i=i, j=j), perm

    def _rewalked(self, tree: TopologyTree, node: Node) -> tuple[ClusterIndex, I64]:
        """`relabelled` where domains came or went: the tree walked again over the indexed
        names, each per-node table taken in the new order (nothing of the nodes read again)."""
        walk = _TreeWalk.of(tree, self.node_pos)
        order = walk.order
        perm = np.fromiter((self.node_pos[n] for n in order), dtype=np.int64, count=len(order))
        node_pos = {n: v for v, n in enumerate(order)}
        labels = [self.labels[v] for v in perm]
        labels[node_pos[node.name]] = node.metadata.labels or {}
        index = replace(self, **self._rows_in(order, node_pos, labels, perm), **_walked(tree, walk))
        return index, perm

    def _rows_in(
        self, order: list[str], node_pos: dict[str, int], labels: list[Mapping[str, str]], perm: I64
    ) -> dict[str, Any]:
        """Every per-node table in a new row order (`perm`: new row -> old row), the names,
        positions and labels given; the caches that read rows emptied. The one list of them
        a relabel moves (`_rewalked`, `_moved`)."""
        return {
            "node_names": tuple(order),
            "node_pos": node_pos,
            "alloc": self.alloc[perm],
            "labels": tuple(labels),
            "taint_group": self.taint_group[perm],
            "prefer_group": self.prefer_group[perm],
            "unschedulable": self.unschedulable[perm],
            "node_name_rank": self.node_name_rank[perm],
            "_label_cache": {},
            "memo": Memo(),
        }

    def _moved(
        self, tree: TopologyTree, node: Node, *, order: list[str], perm: I64, ranges: _Ranges, i: int, j: int
    ) -> ClusterIndex:
        """`relabelled`'s index: every per-node table taken in the new row order."""
        node_pos = dict(self.node_pos)
        for v in range(min(i, j), max(i, j) + 1):
            node_pos[order[v]] = v
        labels = list(self.labels)
        del labels[i]
        labels.insert(j, node.metadata.labels or {})
        b = self.dom_pos[tree.node_domain[node.name]]
        node_dom = self.node_dom[perm]
        node_dom[j] = b
        node_anc = self.node_anc[perm]
        node_anc[j, 0] = b
        node_anc[j, 1:] = self.dom_anc[b, : node_anc.shape[1] - 1]
        return replace(
            self,
            **self._rows_in(order, node_pos, labels, perm),
            tree=tree,
            dom_start=ranges.start,
            dom_end=ranges.end,
            dom_direct_end=ranges.direct_end,
            node_dom=node_dom,
            node_anc=node_anc,
        )

    def label_values(self, key: str) -> npt.NDArray[np.object_]:
        """Per node: the value of label `key`, or None."""
        arr = self._label_cache.get(key)
        if arr is None:
            arr = np.array([lab.get(key) for lab in self.labels], dtype=object)
            self._label_cache[key] = arr
        return arr

    def vector(self, requests: Mapping[str, int]) -> I64 | None:
        """A request as a row over the resource axis; None when it names a resource no node has."""
        out = np.zeros(len(self.resources), dtype=np.int64)
        for r, v in requests.items():
            if v <= 0:
                continue
            pos = self.res_pos.get(r)
            if pos is None:
                return None
            out[pos] = v
        return out

    def domain_label(self, d: int) -> str:
        return str(self.dom_ids[d])

    @cached_property
    def max_tier(self) -> int:
        return self.tiers[-1] if self.tiers else 0

    @cached_property
    def clique_tier(self) -> int | None:
        """The tier whose domains are NVLink cliques (`topology.clique_tier`), or None."""
        return clique_tier(self.tree)


def _walked(tree: TopologyTree, walk: _TreeWalk) -> dict[str, Any]:
    """The index's fields the walk of `tree` gives: its domain tables and each node's domains."""
    node_dom, dom_anc, node_anc = _ancestors(walk)
    tiers = walk.tiers
    tier_domains = {
        t: np.asarray(
            sorted((d for d in range(len(walk.dom_ids)) if tiers[d] == t), key=lambda d: walk.starts[d]),
            dtype=np.int64,
        )
        for t in sorted(set(tiers))
    }
    return {
        "tree": tree,
        "dom_ids": tuple(walk.dom_ids),
        "dom_pos": walk.dom_pos,
        "dom_tier": np.asarray(tiers, dtype=np.int64),
        "dom_parent": np.asarray(walk.parents, dtype=np.int64),
        "dom_start": np.asarray(walk.starts, dtype=np.int64),
        "dom_end": np.asarray(walk.ends, dtype=np.int64),
        "dom_direct_end": np.asarray(walk.direct_ends, dtype=np.int64),
        "dom_children": tuple(tuple(c) for c in walk.children),
        "node_dom": node_dom,
        "tiers": tuple(sorted(set(tiers))),
        "tier_domains": tier_domains,
        "roots": tuple(walk.dom_pos[r] for r in tree.roots),
        "loose": (walk.loose_start, len(walk.order)),
        "node_anc": node_anc,
        "dom_anc": dom_anc,
        "dom_name_rank": _name_ranks([str(d) for d in walk.dom_ids]),
    }


def _same_domains(a: TopologyTree, b: TopologyTree) -> bool:
    """The same domains under the same parents (what the index's domain tables are of)."""
    if a.domains.keys() != b.domains.keys():
        return False
    return all(d.parent == b.domains[d.id].parent for d in a.domains.values())


@dataclass
class _Ranges:
    """Domains' node ranges as one node leaves a row or joins one (`ClusterIndex.relabelled`)."""

    index: ClusterIndex
    start: I64 = field(init=False)
    end: I64 = field(init=False)
    direct_end: I64 = field(init=False)

    def __post_init__(self) -> None:
        self.start = self.index.dom_start.copy()
        self.end = self.index.dom_end.copy()
        self.direct_end = self.index.dom_direct_end.copy()

    def shift(self, d: int, row: int, sign: int) -> None:
        """A node of domain `d` leaves `row` (`sign` -1) or joins at `row` (+1): `d` and the
        domains holding it end one row later or sooner, domains after the row move whole."""
        holding = np.zeros(len(self.start), dtype=np.bool_)
        anc = self.index.dom_anc[d]
        holding[anc[anc >= 0]] = True
        holding[d] = True
        after = ~holding & (self.start > row if sign < 0 else self.start >= row)
        self.start += sign * after
        self.direct_end += sign * after
        self.end += sign * (after | holding)
        self.direct_end[d] += sign


@dataclass
class _TreeWalk:
    """The tree walked depth-first: nodes in tree order, and each domain's place in it."""

    order: list[str] = field(default_factory=list)
    """Node names in tree order (nodes in no domain last)."""
    dom_ids: list[DomainId] = field(default_factory=list)
    dom_pos: dict[DomainId, int] = field(default_factory=dict)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    direct_ends: list[int] = field(default_factory=list)
    """Where each domain's own nodes end (its child domains' nodes follow)."""
    parents: list[int] = field(default_factory=list)
    """Each domain's parent, listed before its children (-1 for a root)."""
    tiers: list[int] = field(default_factory=list)
    children: list[list[int]] = field(default_factory=list)
    loose_start: int = 0
    """Where the nodes in no domain start."""

    @classmethod
    def of(cls, tree: TopologyTree, by_name: Collection[str]) -> _TreeWalk:
        """Depth-first, without recursion: a tree may be as deep as it has domains."""
        walk = cls()
        stack: list[tuple[DomainId, int] | int] = [(root, -1) for root in reversed(tree.roots)]
        while stack:
            item = stack.pop()
            if isinstance(item, int):  # every child of domain `item` is placed
                walk.ends[item] = len(walk.order)
                continue
            did, parent = item
            idx = walk.enter(did, parent, tree, by_name)
            stack.append(idx)
            kids = sorted(tree.domains[did].children, key=natural_key)
            stack.extend((child, idx) for child in reversed(kids))
        placed = set(walk.order)
        walk.loose_start = len(walk.order)
        walk.order.extend(sorted((n for n in by_name if n not in placed), key=natural_key))
        return walk

    def enter(self, did: DomainId, parent: int, tree: TopologyTree, by_name: Collection[str]) -> int:
        """Domain `did` under `parent`, its own nodes placed next: its index."""
        dom = tree.domains[did]
        idx = len(self.dom_ids)
        self.dom_pos[did] = idx
        self.dom_ids.append(did)
        self.parents.append(parent)
        self.tiers.append(dom.tier)
        self.children.append([])
        self.starts.append(len(self.order))
        self.order.extend(n for n in sorted(dom.nodes, key=natural_key) if n in by_name)
        self.direct_ends.append(len(self.order))
        self.ends.append(-1)
        if parent >= 0:
            self.children[parent].append(idx)
        return idx


@dataclass(frozen=True)
class _NodeTable:
    """Per node (tree order): allocatable over the resource axis, taints, labels."""

    axis: tuple[str, ...]
    res_pos: dict[str, int]
    alloc: I64
    taint_sets: tuple[tuple[TaintTuple, ...], ...]
    taint_group: I64
    prefer_sets: tuple[tuple[TaintTuple, ...], ...]
    prefer_group: I64
    unschedulable: Bool
    labels: tuple[Mapping[str, str], ...]

    @classmethod
    def of(
        cls,
        nodes: Sequence[Node],
        resources: Iterable[str],
        known: Mapping[str, Mapping[str, int]] | None = None,
    ) -> _NodeTable:
        # Parsed once (quantities are costly), or not at all when the caller has (`known`).
        allocatable = (
            [node.allocatable() for node in nodes] if known is None else [known[n.name] for n in nodes]
        )
        res_names = {r for a in allocatable for r in a} | set(resources)
        axis = FIRST_RESOURCES + tuple(sorted(res_names - set(FIRST_RESOURCES)))
        res_pos = {r: i for i, r in enumerate(axis)}
        # Nodes mostly share a few shapes and taint sets: each distinct one is read once.
        shapes: dict[tuple[tuple[str, int], ...], int] = {}
        shape_of = np.fromiter(
            (shapes.setdefault(tuple(a.items()), len(shapes)) for a in allocatable),
            dtype=np.int64,
            count=len(nodes),
        )
        rows = np.zeros((len(shapes), len(axis)), dtype=np.int64)
        for i, shape in enumerate(shapes):
            for r, v in shape:
                rows[i, res_pos[r]] = v
        alloc = rows[shape_of] if len(nodes) else np.zeros((0, len(axis)), dtype=np.int64)
        taint_sets: dict[tuple[TaintTuple, ...], int] = {(): 0}
        taint_group = np.zeros(len(nodes), dtype=np.int64)
        prefer_sets: dict[tuple[TaintTuple, ...], int] = {(): 0}
        prefer_group = np.zeros(len(nodes), dtype=np.int64)
        specs = [node.spec for node in nodes]
        unsched = np.fromiter((bool(spec.unschedulable) for spec in specs), dtype=np.bool_, count=len(nodes))
        for i, spec in enumerate(specs):
            taints = spec.taints
            if taints:
                taint_group[i] = taint_sets.setdefault(_hard_taints(taints), len(taint_sets))
                prefer_group[i] = prefer_sets.setdefault(_taints_of(taints, PREFER), len(prefer_sets))
        return cls(
            axis=axis,
            res_pos=res_pos,
            alloc=alloc,
            taint_sets=tuple(sorted(taint_sets, key=lambda t: taint_sets[t])),
            taint_group=taint_group,
            prefer_sets=tuple(sorted(prefer_sets, key=lambda t: prefer_sets[t])),
            prefer_group=prefer_group,
            unschedulable=unsched,
            labels=tuple(node.metadata.labels or {} for node in nodes),
        )


def _ancestors(walk: _TreeWalk) -> tuple[I64, I64, I64]:
    """Each node's own domain; [domain, k]: its k-th ancestor (0 = parent); [node, k]: its k-th
    enclosing domain (0 = innermost). -1 past the top."""
    n_nodes, parents = len(walk.order), walk.parents
    node_dom = np.full(n_nodes, -1, dtype=np.int64)
    for d in range(len(walk.dom_ids)):
        node_dom[walk.starts[d] : walk.direct_ends[d]] = d
    depth = _max_depth(parents)
    dom_anc = np.full((len(walk.dom_ids), max(depth, 1)), -1, dtype=np.int64)
    for d, p in enumerate(parents):  # a parent's row is complete before its children's
        if p >= 0:
            dom_anc[d, 0] = p
            dom_anc[d, 1:] = dom_anc[p, :-1]
    node_anc = np.full((n_nodes, depth + 1), -1, dtype=np.int64)
    node_anc[:, 0] = node_dom
    has = node_dom >= 0
    if len(walk.dom_ids):
        node_anc[has, 1:] = dom_anc[node_dom[has], :depth]
    return node_dom, dom_anc, node_anc


def _hard_taints(taints: Iterable[Taint]) -> tuple[TaintTuple, ...]:
    """Only NoSchedule and NoExecute keep pods off a node; PreferNoSchedule is a score."""
    return _taints_of(taints, HARD)


def _taints_of(taints: Iterable[Taint], effects: frozenset[str]) -> tuple[TaintTuple, ...]:
    return tuple(sorted({(t.key, t.value or "", t.effect) for t in taints if t.effect in effects}))


def _max_depth(parents: Sequence[int]) -> int:
    """Ancestors of the deepest domain; `parents` lists every parent before its children."""
    depth = [0] * len(parents)
    for d, p in enumerate(parents):
        if p >= 0:
            depth[d] = depth[p] + 1
    return max(depth, default=0)


def _name_ranks(names: Sequence[str]) -> I64:
    order = sorted(range(len(names)), key=lambda i: natural_key(names[i]))
    ranks = np.empty(len(names), dtype=np.int64)
    ranks[np.asarray(order, dtype=np.int64)] = np.arange(len(names), dtype=np.int64)
    return ranks


SortKey = I64 | Callable[[I64], I64]
"""A sort key: its values per item, or what gives them for the items asked (by position), so
a key that is costly over every item is worked out only for those still in contention."""


def lexsort_first(keys: Sequence[SortKey], limit: int | None, n: int) -> I64:
    """`np.lexsort(keys)[:limit]` over `n` items (the last key primary), without sorting what
    cannot be among the first `limit`: each key, primary first, keeps the items below its
    `limit`-th smallest value (all of them come first) and the items tied at it (they compete
    on the next key), so a cycle asking for a few candidates among tens of thousands of nodes
    sorts a few dozen."""
    if limit is None or n <= 2 * limit + 64:
        everything = np.arange(n, dtype=np.int64)
        return np.lexsort([_values(key, everything) for key in keys])[:limit]
    if limit <= 0:
        return np.zeros(0, dtype=np.int64)
    sure: list[I64] = []
    tied = np.arange(n, dtype=np.int64)
    need = limit
    for key in reversed(keys):
        if len(tied) <= need:
            break
        values = _values(key, tied)
        cut = np.partition(values, need - 1)[need - 1]
        below = tied[values < cut]
        sure.append(below)
        need -= len(below)
        tied = tied[values == cut]
    keep = np.concatenate([*sure, tied])  # each part in index order: full ties stay stable
    order = np.lexsort([_values(key, keep) for key in keys])
    return keep[order][:limit]


def _values(key: SortKey, positions: I64) -> I64:
    return key(positions) if callable(key) else key[positions]


# --- per-cycle state ---------------------------------------------------------------------------


@dataclass
class Snapshot:
    """One cycle's state. The runner mutates it through `bind`, `evict` and `nominate`."""

    index: ClusterIndex
    used: I64
    pods: dict[str, BoundPod]
    gang_min: dict[str, int]
    """Bound gangs' minMember (`Gang.victim_min`: Kubernetes' `disruptionMode` may set it
    otherwise): evicting below it takes the whole gang."""
    nominations: dict[str, Nomination] = field(default_factory=dict)
    namespace_labels: NamespaceLabels = field(default_factory=dict)
    """Namespace -> labels, for `namespaceSelector` in pod (anti-)affinity terms."""
    with_terms: dict[str, BoundPod] = field(default_factory=dict)
    """The bound pods that carry inter-pod terms (kept in step by build/bind/evict)."""
    protected: dict[str, BoundPod] = field(default_factory=dict)
    """The bound pods that are never victims (`BoundPod.preemptable` False; kept in step)."""
    budget_hits: Mapping[str, tuple[str, ...]] | None = None
    """Pod key -> keys of the PodDisruptionBudgets covering it (empty when none does), when the
    caller keeps them (a pod missing from it is matched against the budgets afresh)."""
    _arrays: PodArrays | None = field(default=None, repr=False)
    _columns: PodColumns | None = field(default=None, repr=False)
    """Kept from one `arrays()` to the next and told of every pod change (`set_pod`), when
    `keep_columns` (a snapshot kept across cycles); else the arrays are built afresh."""
    keep_columns: bool = False
    _gang_pods: dict[str, dict[str, None]] | None = field(default=None, repr=False)
    """Gang -> its bound members' keys (an ordered set), made on first read and then kept in
    step by `set_pod` (never rebuilt over every pod after a change)."""
    _journal: list[Callable[[], None]] | None = field(default=None, repr=False)
    _watches: list[ReferenceType[PodWatch]] = field(default_factory=list, repr=False)

    @classmethod
    def build(cls, index: ClusterIndex, pods: Iterable[BoundPod], gang_min: Mapping[str, int]) -> Snapshot:
        plist = list(pods)
        used = np.zeros_like(index.alloc)
        # Integer sums (bincount's weights are float64, inexact past 2^53 units).
        add_requests(used, plist)
        return cls(
            index=index,
            used=used,
            pods={p.key: p for p in plist},
            gang_min=dict(gang_min),
            with_terms={p.key: p for p in plist if p.terms is not None},
            protected={p.key: p for p in plist if not p.preemptable},
        )

    def clone(self) -> Snapshot:
        return Snapshot(
            index=self.index,
            used=self.used.copy(),
            pods=dict(self.pods),
            gang_min=dict(self.gang_min),
            nominations=dict(self.nominations),
            namespace_labels=self.namespace_labels,
            with_terms=dict(self.with_terms),
            protected=dict(self.protected),
            budget_hits=self.budget_hits,
        )

    def _changed(self) -> None:
        self._arrays = None

    # --- the journal: a snapshot kept from one cycle to the next undoes the cycle's changes ---

    def start_journal(self) -> None:
        """Record every change from now on, so `rollback` can undo them."""
        self._journal = []

    def rollback(self) -> None:
        """Undo every change since `start_journal` (newest first); no-op without a journal."""
        journal, self._journal = self._journal, None
        if journal:
            for undo in reversed(journal):
                undo()
            self._changed()

    def savepoint(self) -> int:
        """A mark `rollback_to` can return to (journaling starts here if it was off)."""
        if self._journal is None:
            self._journal = []
        return len(self._journal)

    def rollback_to(self, mark: int) -> None:
        """Undo every change made since `savepoint()` returned `mark` (newest first)."""
        journal = self._journal
        if journal is None or len(journal) <= mark:
            return
        while len(journal) > mark:
            journal.pop()()
        self._changed()

    @contextmanager
    def trial(self) -> Iterator[None]:
        """Changes made inside are undone on the way out, and journaling is as it was: what
        preemption uses to ask the filters about the snapshot with candidate victims gone."""
        was_off = self._journal is None
        mark = self.savepoint()
        try:
            yield
        finally:
            self.rollback_to(mark)
            if was_off:
                self._journal = None

    def _record(self, undo: Callable[[], None]) -> None:
        if self._journal is not None:
            self._journal.append(undo)

    def watch(self, limit: int) -> PodWatch:
        """Record, from now on, which bound pods are set anew, up to `limit` of them (kube's
        PreFilter extensions: counts made once are adjusted by the pods removed and added
        since, not made again; past the limit, counting afresh is cheaper)."""
        got = PodWatch(limit)
        self._watches = [w for w in self._watches if w() is not None]
        self._watches.append(ref(got))
        return got

    def _touch(self, key: str | None) -> None:
        """Tell every live watch that `key`'s pod was set (None: every pod was)."""
        for w in self._watches:
            live = w()
            if live is not None:
                live.touch(key)

    def set_pod(self, pod: BoundPod | None, key: str) -> None:
        """Set (or, for None, remove) a bound pod, keeping `with_terms` in step; `used` is the
        caller's (and no journal entry is made)."""
        if self._watches:
            self._touch(key)
        if self._gang_pods is not None:
            self._move_member(self.pods.get(key), pod, key)
        if pod is None:
            self.pods.pop(key, None)
            self.with_terms.pop(key, None)
            self.protected.pop(key, None)
        else:  # inline: a cold start sets every bound pod
            self.pods[key] = pod
            _restore(self.with_terms, key, pod if pod.terms is not None else None)
            _restore(self.protected, key, None if pod.preemptable else pod)
        if self._columns is not None and not self._columns.log(key, pod):
            self._columns = None  # so many changes that building afresh is cheaper

    def set_pods(self, pods: Sequence[BoundPod]) -> None:
        """`set_pod(pod, pod.key)` for each of `pods`, in passes over them (a cold start sets
        most bound pods here)."""
        if self._watches:
            self._touch(None)
        if self._gang_pods is not None or self._columns is not None:
            for pod in pods:
                self.set_pod(pod, pod.key)
            return
        keys = list(map(_key, pods))
        self.pods.update(zip(keys, pods, strict=True))
        for table in (self.with_terms, self.protected):
            for key in table.keys() & keys if table else ():
                del table[key]
        with_terms = list(compress(pods, map(is_not, map(_terms, pods), repeat(None))))
        self.with_terms.update(zip(map(_key, with_terms), with_terms, strict=True))
        protected = list(compress(pods, map(not_, map(_preemptable, pods))))
        self.protected.update(zip(map(_key, protected), protected, strict=True))

    def _move_member(self, was: BoundPod | None, pod: BoundPod | None, key: str) -> None:
        assert self._gang_pods is not None
        if was is not None:
            members = self._gang_pods.get(was.gang)
            if members is not None:
                members.pop(key, None)
                if not members:
                    del self._gang_pods[was.gang]
        if pod is not None:
            self._gang_pods.setdefault(pod.gang, {})[key] = None

    def bind(self, *pods: BoundPod) -> None:
        """Bind `pods` (one journal entry for all: a gang is reserved at once)."""
        stored, nominations, set_pod = self.pods, self.nominations, self.set_pod
        before = [(pod, stored.get(pod.key), nominations.get(pod.key)) for pod in pods]
        for pod in pods:  # a gang's thousand pods at once: the lookups made once, not per pod
            key = pod.key
            set_pod(pod, key)
            nominations.pop(key, None)
        # The rows added in one scatter (integers: the same sums as pod by pod).
        rows, reqs = request_rows(pods, self.used)
        np.add.at(self.used.reshape(-1), rows, reqs)
        self._changed()

        def undo() -> None:
            np.subtract.at(self.used.reshape(-1), rows, reqs)
            for pod, prev_pod, prev_nom in reversed(before):
                self.set_pod(prev_pod, pod.key)
                _restore(self.nominations, pod.key, prev_nom)

        self._record(undo)

    def evict(self, key: str) -> None:
        """The pod is gone (terminated): its resources are free again."""
        pod = self.pods[key]
        self.set_pod(None, key)
        self.used[pod.node] -= pod.req
        self._changed()

        def undo() -> None:
            self.set_pod(pod, key)
            self.used[pod.node] += pod.req

        self._record(undo)

    def evict_many(self, keys: Sequence[str]) -> None:
        """`evict` for many pods at once (one journal entry for all): what preemption does to
        ask the filters about the snapshot with every candidate victim gone."""
        gone = [self.pods[key] for key in keys]
        if not gone:
            return
        for pod in gone:
            self.set_pod(None, pod.key)
        nodes = np.fromiter((p.node for p in gone), dtype=np.int64, count=len(gone))
        reqs = np.stack([p.req for p in gone])
        np.subtract.at(self.used, nodes, reqs)
        self._changed()

        def undo() -> None:
            for pod in gone:
                self.set_pod(pod, pod.key)
            np.add.at(self.used, nodes, reqs)

        self._record(undo)

    def mark_terminating(self, *keys: str) -> None:
        """The pods are being deleted: they still hold their room (one journal entry for all)."""
        before = [self.pods[key] for key in keys]
        for pod in before:
            self.set_pod(replace(pod, terminating=True), pod.key)
        self._changed()

        def undo() -> None:
            for pod in reversed(before):
                self.set_pod(pod, pod.key)

        self._record(undo)

    def nominate(self, *noms: Nomination) -> None:
        """Pending pods claim nodes (one journal entry for all)."""
        prev = [(nom.pod, self.nominations.get(nom.pod)) for nom in noms]
        for nom in noms:
            self.nominations[nom.pod] = nom

        def undo() -> None:
            for pod, was in reversed(prev):
                _restore(self.nominations, pod, was)

        self._record(undo)

    def clear_nominations(self, gang: str) -> None:
        removed = {k: n for k, n in self.nominations.items() if n.gang == gang}
        for k in removed:
            del self.nominations[k]
        if removed:
            self._record(lambda: self.nominations.update(removed))

    def set_gang_min(self, gang: str, min_member: int) -> None:
        prev = self.gang_min.get(gang)
        self.gang_min[gang] = min_member
        self._record(lambda: _restore(self.gang_min, gang, prev))

    def arrays(self) -> PodArrays:
        if self._arrays is None:
            n_res = len(self.index.resources)
            if not self.keep_columns:
                self._arrays = pod_arrays(self.pods, n_res, self.budget_hits)
            else:
                if self._columns is None:
                    self._columns = PodColumns(self.pods, n_res, self.budget_hits)
                self._arrays = self._columns.arrays()
        return self._arrays

    def keep_arrays(self) -> None:
        """Build the kept columns now when they are to be kept and are not: what a caller that
        has just walked every bound pod anyway asks, so that no preemption pays for a pass over
        every bound pod in Python (`arrays()` then only patches what changed since)."""
        if self.keep_columns and self._columns is None:
            self._columns = PodColumns(self.pods, len(self.index.resources), self.budget_hits)

    def coverage_changed(self) -> None:
        """`budget_hits` was recounted (a budget changed): the arrays' copy of it, read as each
        pod's slot is written, is made afresh (the rest of the columns stand: a budget's status
        changes often, and none of them reads it)."""
        if self._columns is not None:
            self._columns.recode_cover()
        self._changed()

    def clear_pods(self) -> None:
        """Remove every bound pod (the caller zeroes `used`)."""
        if self._watches:
            self._touch(None)
        self.pods.clear()
        self.with_terms.clear()
        self.protected.clear()
        self._columns = None
        self._gang_pods = None
        self._changed()

    def gang_pods(self, gang: str) -> list[str]:
        """Bound members of `gang` (terminating ones included)."""
        if self._gang_pods is None:
            by: dict[str, dict[str, None]] = {}
            for key, p in self.pods.items():
                by.setdefault(p.gang, {})[key] = None
            self._gang_pods = by
        return list(self._gang_pods.get(gang, ()))

    def reserved_for(self, gang: str, priority: int) -> I64 | None:
        """Resources other gangs' nominations hold against `gang` (those of equal or higher
        priority, as kube-scheduler counts nominated pods); None when there are none."""
        noms = [n for n in self.nominations.values() if n.gang != gang and n.priority >= priority]
        if not noms:
            return None
        out = np.zeros_like(self.used)
        for n in noms:
            out[n.node] += n.req
        return out

    def free(self, gang: str = "", priority: int = 0) -> I64:
        free = self.index.alloc - self.used
        reserved = self.reserved_for(gang, priority)
        if reserved is not None:
            free -= reserved
        return free


def request_rows(pods: Sequence[BoundPod], used: I64) -> tuple[I64, I64]:
    """Where the pods' requests go in `used` flattened, and the requests flattened alike (for
    one `np.add.at` over the flat matrix: several times faster than over its rows)."""
    n_res = used.shape[1]
    if not pods:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    nodes = np.fromiter((p.node for p in pods), dtype=np.int64, count=len(pods))
    reqs = np.concatenate([p.req for p in pods])
    return (nodes[:, None] * n_res + np.arange(n_res)).ravel(), reqs


ONE_BY_ONE = 8
"""Requests added row by row up to this many pods (numpy's set-up costs more); more in one
scatter (`request_rows`)."""


def add_requests(used: I64, pods: Sequence[BoundPod]) -> None:
    """Each pod's request added to its node's row of `used` (integers: the same sums in any
    order, so one scatter equals pod by pod)."""
    if len(pods) <= ONE_BY_ONE:
        for p in pods:
            used[p.node] += p.req
        return
    rows, reqs = request_rows(pods, used)
    np.add.at(used.reshape(-1), rows, reqs)


V = TypeVar("V")
_key, _terms, _preemptable = attrgetter("key"), attrgetter("terms"), attrgetter("preemptable")


class PodWatch:
    """The keys of the bound pods set anew (bound, evicted, replaced, or put back) since the
    watch began (`Snapshot.watch`); `lost` when the snapshot changed too much to tell (every pod
    set at once, all cleared, or more than `limit` keys: then the keys are not kept). Held by
    whoever reads it: the snapshot keeps it weakly."""

    __slots__ = ("__weakref__", "limit", "lost", "touched")

    def __init__(self, limit: int) -> None:
        self.touched: set[str] = set()
        self.lost = False
        self.limit = limit

    def touch(self, key: str | None) -> None:
        if key is None or len(self.touched) >= self.limit:
            self.lost = True
            self.touched.clear()
        elif not self.lost:
            self.touched.add(key)


def _restore(table: dict[str, V], key: str, value: V | None) -> None:
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value
