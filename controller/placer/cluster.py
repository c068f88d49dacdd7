"""The scheduler's picture of a cluster, and the per-cycle snapshot cut from it.

`ClusterState` holds the parsed objects a cycle reads (pods, nodes, PodGroups, priority
classes, PodDisruptionBudgets, HyperNodes, the ClusterNetworkTopology, Kueue Topologies) and, beside them, the
aggregates a cycle needs, kept in step with every change: the static index, per-node
requested resources, the bound pods with what preemption and affinity read (namespace,
labels, priority, gang), gangs' minMember, nominations, and the discovered gangs.

Both runners feed it: the live scheduler from informer events (`controller.runtime.cache`),
`topobridge simulate` from a snapshot file and from the plans it applies. `view()` then does
what kube-scheduler's `UpdateSnapshot` does: only what changed since the last cycle is
recomputed (pods of gangs whose members, PodGroup or links moved; a gang whose pods were only
bound, all of them at once, is made again from its members on their nodes rather than
discovered again, `_bound_again`; PDB counts only when read);
nodes, HyperNodes, the ClusterNetworkTopology or a Kueue Topology moving rebuild the tree and
the index (nothing else does; a node's quantities are read again only when its model changed),
except a few nodes relabelled on a tree of label levels: each is moved between domains in
place (`_relabel`: `Branches.move`, `ClusterIndex.relabelled`; the gangs and warnings stay).
On a new tree the gangs are discovered again, unless only nodes moved and the tree reads alike
to discovery (`tiers_read`): then the kept gangs stay, and their records move to their nodes'
new rows (`_remap`; contributed to the new index afresh when the nodes or the resource axis
changed). `view(full=True)` rebuilds everything from the objects (the reference the incremental path
is tested against).

The rules that both runners share live here, once:
* `topology_tree`: which tree the scheduler uses, the first usable of: HyperNodes (unless all
  are topobridge's copies of a description in view), the ClusterNetworkTopology `default`, a
  Kueue Topology (the one there is, else the one named by `kueue_topology`, else `default`),
  the nodes' topograph and GPU Feature Discovery labels; else none. A source that cannot be
  used is a warning and the next one is tried;
* `request_vector`: how a bound pod's request meets the resource axis;
* `build_index`: which resources the axis has;
* gangs' minMember is known for every gang (`Snapshot.gang_min`);
* assumed pods (sent to bind, not seen bound yet) are bound on their assumed node; a pending
  pod's `status.nominatedNodeName` is a nomination; a pod with a deletionTimestamp is terminating;
  a pod bound to a node not in the index holds nothing (it stays a member of its gang).
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import operator
import sys
from collections import Counter, deque
from collections.abc import Collection, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from operator import attrgetter
from typing import Any, TypeVar

import numpy as np

from controller.placer.budgets import Budget, budgets_from
from controller.placer.memo import MemoSlot
from controller.placer.records import BoundPod, Nomination
from controller.placer.snapshot import I64, ClusterIndex, Snapshot, add_requests
from controller.placer.terms import PodTerms
from translations import collector, kinds, kueue, schedplugins, upstream_gangs, volcano, workload
from translations import gpu as gpumod
from translations import hypernodes as hntr
from translations import koordinator as koord
from translations._base import KubeModel
from translations.compact import compact, compact_own
from translations.core import Job, Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from translations.errors import InvalidSpecError, failure_text
from translations.gangs import (
    Gang,
    GangKey,
    GangPod,
    GangSource,
    MemberFn,
    PodGroups,
    bound_member,
    discover_gangs,
    discovered,
    gang_key,
    gang_name,
    koordinator_key,
    lone_gang,
    membership,
    safe_gang_pod,
    unusable_gang,
)
from translations.topology import (
    Branches,
    TopologyTree,
    cnt_levels,
    from_cluster_network_topology,
    from_hypernodes,
    from_kueue_topology,
    from_node_labels,
    natural_key,
)


class Kind(enum.Enum):
    """The kinds of object a cycle reads, one `ClusterState` store each: the entries of the
    scheduler's table of kinds (`translations.kinds.SCHEDULER_KINDS`), each member's value
    its entry's `api` (`read` is the entry: its model, whether its CRD may be absent)."""

    POD = kinds.POD
    NODE = kinds.NODE
    VOLCANO_PODGROUP = kinds.VOLCANO_PODGROUP
    SIGS_PODGROUP = kinds.SIGS_PODGROUP
    X_PODGROUP = kinds.X_PODGROUP
    PRIORITY_CLASS = kinds.PRIORITY_CLASS
    PDB = kinds.PDB
    HYPERNODE = kinds.HYPERNODE
    CNT = kinds.CLUSTER_NETWORK_TOPOLOGY
    JOB = kinds.JOB
    """batch/v1: the GPU dialect's gangs."""
    NAMESPACE = kinds.NAMESPACE
    """Only labels: what a pod affinity term's `namespaceSelector` selects by."""
    KUEUE_TOPOLOGY = kinds.KUEUE_TOPOLOGY
    K8S_PODGROUP = kinds.K8S_PODGROUP
    """Kubernetes' own `scheduling.k8s.io` PodGroups (1.37)."""
    K8S_WORKLOAD = kinds.K8S_WORKLOAD_V1ALPHA1
    """Kubernetes 1.35's Workloads, whose groups pods join by `spec.workloadRef`."""

    @property
    def read(self) -> kinds.ReadKind:
        return kinds.read_kind(self.value)


_TOPOLOGY = (Kind.NODE, Kind.HYPERNODE, Kind.CNT, Kind.KUEUE_TOPOLOGY)
_PODGROUPS = (Kind.VOLCANO_PODGROUP, Kind.SIGS_PODGROUP, Kind.X_PODGROUP, Kind.K8S_PODGROUP)
_GROUPING = (Kind.SIGS_PODGROUP, Kind.X_PODGROUP)
"""The PodGroups whose `groups` annotation links gangs (GangGroups)."""
_NO_LINKS: frozenset[GangKey] = frozenset()
_LONE = gang_key("none", "")
"""The prefix of the key of a pod's gang when it names none (the pod alone)."""
_LONE_AT = len(_LONE)
"""Where the pod's key starts in such a key."""
_PODGROUP_SOURCE: Mapping[Kind, GangSource] = {
    Kind.VOLCANO_PODGROUP: "volcano",
    Kind.SIGS_PODGROUP: "koordinator",
    Kind.X_PODGROUP: "scheduler-plugins",
    Kind.K8S_PODGROUP: "upstream",
}


# --- the shared rules ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TopologyChoice:
    """The tree chosen, and the sources passed over because they cannot be used."""

    tree: TopologyTree
    unusable: tuple[str, ...] = ()
    """Each names the object and why, e.g. `ClusterNetworkTopology default: ...`."""


def mirrors_a_source(hn: volcano.HyperNode, *, cnt: bool, kueue_topology: bool) -> bool:
    """A HyperNode topobridge wrote from a description that is itself in view: from the
    ClusterNetworkTopology (`cnt`: there is one), a Kueue Topology (`kueue_topology`: one is
    used), or node labels (always in view)."""
    labels = hn.metadata.labels or {}
    if labels.get(hntr.MANAGED_BY_LABEL) != hntr.MANAGED_BY:
        return False
    source = labels.get(hntr.SOURCE_LABEL)
    return (
        (source == hntr.SOURCE_KOORDINATOR and cnt)
        or (source == hntr.SOURCE_KUEUE and kueue_topology)
        or source == hntr.SOURCE_NODE_LABELS
    )


def choose_topology(
    nodes: Sequence[Node],
    hypernodes: Iterable[volcano.HyperNode],
    cnt: koord.ClusterNetworkTopology | None,
    kueue_topologies: Iterable[kueue.Topology] = (),
    *,
    kueue_topology: str | None = None,
) -> TopologyChoice:
    """The scheduler's tree (the order is in the module docstring). HyperNodes are used whole
    when any is not a copy of a description in view: Volcano's own, or ones a user applied
    from `topobridge translate` without the description they came from."""
    unusable: list[str] = []
    topo, why = pick_kueue_topology(kueue_topologies, kueue_topology)
    if why:
        unusable.append(why)
    hns = list(hypernodes)
    if any(not mirrors_a_source(h, cnt=cnt is not None, kueue_topology=topo is not None) for h in hns):
        return TopologyChoice(from_hypernodes(hns, nodes), tuple(unusable))
    if cnt is not None:
        try:
            return TopologyChoice(from_cluster_network_topology(cnt, nodes), tuple(unusable))
        except InvalidSpecError as exc:
            unusable.append(f"ClusterNetworkTopology {cnt.name}: left out: {exc}")
    if topo is not None:
        try:
            return TopologyChoice(from_kueue_topology(topo, nodes), tuple(unusable))
        except InvalidSpecError as exc:
            unusable.append(f"Kueue Topology {topo.name}: left out: {exc}")
    tree = from_node_labels(nodes)
    return TopologyChoice(tree if tree.domains else TopologyTree.empty(), tuple(unusable))


def pick_kueue_topology(
    topologies: Iterable[kueue.Topology], name: str | None
) -> tuple[kueue.Topology | None, str | None]:
    """The Kueue Topology the scheduler reads: the one named `name`; with no name, the only
    one, else the one named `default`. Second: why none is read, when some exist."""
    by_name = {t.name: t for t in topologies}
    if name is not None:
        if name in by_name:
            return by_name[name], None
        return None, f"Kueue Topology {name}: not found (named as the scheduler's)" if by_name else None
    if len(by_name) == 1:
        return next(iter(by_name.values())), None
    if "default" in by_name:
        return by_name["default"], None
    if by_name:
        names = ", ".join(sorted(by_name, key=natural_key))
        return None, f"Kueue Topologies {names}: none read: more than one, none named default"
    return None, None


def topology_tree(
    nodes: Sequence[Node],
    hypernodes: Iterable[volcano.HyperNode],
    cnt: koord.ClusterNetworkTopology | None,
    kueue_topologies: Iterable[kueue.Topology] = (),
    *,
    kueue_topology: str | None = None,
) -> TopologyTree:
    """The tree the scheduler uses (`choose_topology`); its warnings start with the sources
    passed over. Never raises."""
    choice = choose_topology(nodes, hypernodes, cnt, kueue_topologies, kueue_topology=kueue_topology)
    if not choice.unusable:
        return choice.tree
    return dataclasses.replace(choice.tree, warnings=(*choice.unusable, *choice.tree.warnings))


def build_index(
    nodes: Sequence[Node], tree: TopologyTree, allocatable: Mapping[str, Mapping[str, int]] | None = None
) -> ClusterIndex:
    """The resource axis is what nodes offer, nothing else: a pending pod asking for a resource
    no node has is `N Insufficient <resource>` (`demand.unknown_resource`), as in kube, and the
    index depends on nodes and the tree alone (pods arriving never rebuild it). `allocatable`:
    each node's, when already read."""
    return ClusterIndex.build(nodes, tree, allocatable=allocatable)


REQUEST_ROWS = 4096
"""Distinct requests whose rows an index keeps (pods mostly share a few shapes)."""
REQUEST_ROW_TABLE: MemoSlot[dict[tuple[tuple[str, int], ...], I64]] = MemoSlot("request_rows")
REQUEST_ROW_OF: MemoSlot[dict[int, tuple[Mapping[str, int], I64]]] = MemoSlot("request_row_of")
"""The row of each requests' dict read (by identity, the dict held so its id stays its own):
members asking the same share one dict (`gang_pod`), so most pods' rows are found without
making a key of their requests."""


def request_vector(index: ClusterIndex, requests: Mapping[str, int]) -> I64:
    """A bound, assumed or nominated pod's request over the index's resource axis; resources no
    node has are dropped (they consume no room anything is scheduled with), the rest still count.

    Rows are shared between pods asking the same (read-only; kept on the index, whose axis
    they are on)."""
    seen = index.memo.get(REQUEST_ROW_OF, None, dict)
    hit = seen.get(id(requests))
    if hit is not None and hit[0] is requests:  # members share their requests' dict
        return hit[1]
    rows = index.memo.get(REQUEST_ROW_TABLE, None, dict)
    if len(rows) >= REQUEST_ROWS or len(seen) >= REQUEST_ROWS:
        index.memo.drop(REQUEST_ROW_TABLE)
        index.memo.drop(REQUEST_ROW_OF)
        rows = index.memo.get(REQUEST_ROW_TABLE, None, dict)
        seen = index.memo.get(REQUEST_ROW_OF, None, dict)
    key = tuple(requests.items())
    out = rows.get(key)
    if out is None:
        out = np.zeros(len(index.resources), dtype=np.int64)
        for name, v in requests.items():
            pos = index.res_pos.get(name)
            if pos is not None and v > 0:
                out[pos] = v
        out.flags.writeable = False
        rows[key] = out
    seen[id(requests)] = (requests, out)
    return out


def queue_order(gangs: Iterable[Gang]) -> list[Gang]:
    """Scheduling order: higher priority first, then older, then by name, then by dialect."""
    return sorted(gangs, key=lambda g: (-g.priority, g.creation or "", natural_key(g.name), g.key))


# --- the view a cycle gets ----------------------------------------------------------------------


@dataclass
class ClusterView:
    """One cycle's inputs. `snapshot` is the cycle's own copy: reserving mutates it."""

    tree: TopologyTree
    index: ClusterIndex
    snapshot: Snapshot
    gangs: Mapping[str, Gang]
    """Every gang, by key."""
    pending: Sequence[str]
    """Keys of gangs with pending members."""
    budgets: Sequence[Budget]
    warnings: Sequence[str] = ()
    freed: int = 0
    """`ClusterState.freed` as the view was taken: equal in two views, nothing between them
    can have made room or lifted a constraint (the cycle's queueing hint)."""
    bound: int = 0
    """`ClusterState.binds.count` as the view was taken: the pending pods bound so far."""
    binds: BindJournal | None = field(default=None, compare=False, repr=False)
    """The state's journal of binds (read up to `bound`)."""


RECENT_BINDS = 4_096
"""Binds of pending pods the state remembers (`BindJournal`): an unschedulable gang with
inter-pod terms that fell further behind than this is tried again."""


class BindJournal:
    """Pending pods bound (or assumed), numbered from 1 as they come, the latest
    `RECENT_BINDS` kept with what inter-pod terms read of them (namespace, labels): the
    queueing hint of a gang with pod affinity or topology spread, which only a bound pod its
    terms select can help (kube-scheduler's InterPodAffinity and PodTopologySpread hints)."""

    def __init__(self) -> None:
        self.count = 0
        self._recent: deque[tuple[str, Mapping[str, str]]] = deque(maxlen=RECENT_BINDS)

    def add(self, pod: Pod) -> None:
        self.count += 1
        self._recent.append((pod.namespace, pod.metadata.labels or {}))

    def since(self, seen: int, upto: int) -> Iterator[tuple[str, Mapping[str, str]]] | None:
        """The binds numbered `seen + 1` to `upto`; None when some of them are no longer kept."""
        first = self.count - len(self._recent)  # binds numbered up to this one are gone
        if seen < first or upto > self.count:
            return None
        return itertools.islice(self._recent, seen - first, upto - first)


def _only_bound(old: Pod | None, new: Pod | None) -> bool:
    """`new` is `old`, pending, given a node and nothing else: the same metadata and status
    models, every other spec field the same object (a bind as `simulate` applies it; a pod read
    afresh from the API server never passes, which only costs a retry)."""
    if old is None or new is None or old.spec.node_name or not new.spec.node_name:
        return False
    if old.metadata is not new.metadata or old.status is not new.status:
        return False
    before, after = old.spec.__dict__, new.spec.__dict__
    if list(before) != list(after) or old.spec.__pydantic_extra__ != new.spec.__pydantic_extra__:
        return False
    # The fields in the same order, so side by side: only `node_name` (unset, then set) differs.
    return list(map(operator.is_, before.values(), after.values())).count(False) == 1


class _Members(Mapping[GangKey, Collection[str]]):
    """Membership key -> the keys of the pods naming it. The key of a pod that names no gang
    (`_LONE` and the pod's key) is that pod's alone: such keys, most of a large cluster's, are
    kept in one set rather than each with a set of its own (a set of one costs 216 bytes)."""

    def __init__(self) -> None:
        self._named: dict[GangKey, set[str]] = {}
        self._lone: set[GangKey] = set()

    def add(self, key: GangKey, pod: str) -> None:
        if key.startswith(_LONE) and key[_LONE_AT:] == pod:
            self._lone.add(key)
        else:
            self._named.setdefault(key, set()).add(pod)

    def discard(self, key: GangKey, pod: str) -> None:
        if key.startswith(_LONE) and key[_LONE_AT:] == pod:
            self._lone.discard(key)
            return
        pods = self._named.get(key)
        if pods is not None:
            pods.discard(pod)
            if not pods:
                del self._named[key]

    def __getitem__(self, key: GangKey) -> Collection[str]:
        pods = self._named.get(key)
        if pods is not None:
            return pods
        if key in self._lone:
            return (key[_LONE_AT:],)
        raise KeyError(key)

    def get(self, key: GangKey, default: Collection[str] = ()) -> Collection[str]:  # type: ignore[override]
        pods = self._named.get(key)
        if pods is not None:
            return pods
        return (key[_LONE_AT:],) if key in self._lone else default

    def __contains__(self, key: object) -> bool:
        return key in self._named or key in self._lone

    def __iter__(self) -> Iterator[GangKey]:
        yield from self._named
        yield from self._lone

    def __len__(self) -> int:
        return len(self._named) + len(self._lone)

    def lone(self) -> Collection[GangKey]:
        """The keys of pods that name no gang."""
        return self._lone


class _Gangs(MutableMapping[str, Gang]):
    """The discovered gangs by key, where the gang of a bound pod that names no gang is kept
    as its pod alone and made when read (`lone_gang`): a cycle reads the gangs with pending
    members, and most gangs of a large cluster are bound pods alone, so their gangs are not
    made at every cold start for nothing."""

    def __init__(self, member: MemberFn) -> None:
        self._made: dict[str, Gang] = {}
        self._lone: dict[str, Pod] = {}
        self._member = member

    def put_lone(self, key: str, pod: Pod) -> None:
        self._made.pop(key, None)
        self._lone[key] = pod

    def put_lones(self, keys: Sequence[str], pods: Sequence[Pod]) -> None:
        """`put_lone` for each key and pod (a cold start puts most pods' here)."""
        made = self._made
        for key in made.keys() & keys if made else ():
            del made[key]
        self._lone.update(zip(keys, pods, strict=True))

    def made(self) -> Mapping[str, Gang]:
        """The gangs made already (discovered ones among them), by key."""
        return self._made

    def __getitem__(self, key: str) -> Gang:
        gang = self._made.get(key)
        if gang is not None:
            return gang
        return lone_gang(self._lone[key], self._member)

    def __setitem__(self, key: str, gang: Gang) -> None:
        self._lone.pop(key, None)
        self._made[key] = gang

    def __delitem__(self, key: str) -> None:
        if self._made.pop(key, None) is None:
            del self._lone[key]

    def __contains__(self, key: object) -> bool:
        return key in self._made or key in self._lone

    def __iter__(self) -> Iterator[str]:
        yield from self._made
        yield from self._lone

    def __len__(self) -> int:
        return len(self._made) + len(self._lone)

    def clear(self) -> None:
        self._made.clear()
        self._lone.clear()


class _Parts:
    """The membership keys each gang was discovered from (`parts`), and the gang each key is
    part of (`gang_of`). A gang of a bound pod that names none is its key's alone and that
    key's gang: such gangs, most of a large cluster's, are kept in one set (`add_lones`),
    without a tuple and two dict entries each."""

    def __init__(self) -> None:
        self._parts: dict[str, tuple[GangKey, ...]] = {}
        self._of: dict[GangKey, str] = {}
        self._lone: set[str] = set()

    def parts(self, gang: str) -> tuple[GangKey, ...]:
        """The keys `gang` was discovered from (none: not a gang here)."""
        parts = self._parts.get(gang)
        if parts is not None:
            return parts
        return (GangKey(gang),) if gang in self._lone else ()

    def gang_of(self, key: GangKey) -> str | None:
        """The key of the (possibly merged) gang `key` is part of."""
        gang = self._of.get(key)
        if gang is not None:
            return gang
        return key if key in self._lone else None

    def set(self, gang: str, parts: tuple[GangKey, ...]) -> None:
        self._lone.discard(gang)
        self._parts[gang] = parts
        for k in parts:
            self._of[k] = gang

    def add_lones(self, keys: Iterable[GangKey]) -> None:
        """Each of `keys` the gang of its own key alone."""
        self._lone.update(keys)

    def drop(self, gang: str) -> None:
        """`gang` is gone: its parts are part of no gang."""
        parts = self._parts.pop(gang, None)
        if parts is None:
            self._lone.discard(gang)
            parts = ()
        for k in parts:
            self._of.pop(k, None)

    def unlink(self, key: GangKey) -> None:
        """`key` is part of no gang (its gang was dropped)."""
        self._of.pop(key, None)

    def clear(self) -> None:
        self._parts.clear()
        self._of.clear()
        self._lone.clear()

    def __bool__(self) -> bool:
        """Some gang has parts here."""
        return bool(self._parts or self._lone)


class _LoneBatch:
    """Bound pods that name no gang, read one by one and contributed in passes
    (`ClusterState._write_lones`): each one's gang key and model, and its record when its node
    is in the index."""

    def __init__(self, index: ClusterIndex) -> None:
        self.index = index
        self._rows: dict[int, tuple[Mapping[str, int], I64]] = {}
        """`request_vector`'s row of each requests' dict read, by identity (members share them)."""
        self.keys: list[GangKey] = []
        self.pods: list[Pod] = []
        self.records: list[BoundPod] = []

    def add(self, key: GangKey, pod: Pod, member: GangPod) -> bool:
        """The pod, when bound and kept by discovery and its record can be made; else False
        (nothing added: `ClusterState._contribute_lone` says why, on its gang)."""
        if not pod.spec.node_name or pod.terminal:  # `discovered`, of a bound pod
            return False
        req = member.requests
        hit = self._rows.get(id(req))
        try:
            if hit is None or hit[0] is not req:
                if len(self._rows) >= REQUEST_ROWS:
                    self._rows.clear()
                hit = self._rows[id(req)] = (req, request_vector(self.index, req))
            record = bound_record(self.index, key, member, hit[1])
        except Exception:
            return False
        self.keys.append(key)
        self.pods.append(pod)
        if record is not None:
            self.records.append(record)
        return True

    def nodes(self) -> I64:
        return np.fromiter(map(_node_of, self.records), dtype=np.int64, count=len(self.records))

    def requests(self) -> I64:
        """[record, resource]: each record's request row (rows are shared between pods asking
        the same, `request_vector`: each distinct one is stacked once)."""
        reqs = list(map(_req_of, self.records))
        distinct = {id(row): row for row in reqs}
        code = dict(zip(distinct, range(len(distinct)), strict=True))
        rows = np.fromiter(map(code.__getitem__, map(id, reqs)), dtype=np.int64, count=len(reqs))
        return np.stack(list(distinct.values()))[rows]

    def clear(self) -> None:
        self.keys, self.pods, self.records = [], [], []


_node_of, _req_of, _key_of_record = attrgetter("node"), attrgetter("req"), attrgetter("key")


@dataclass
class _Aggregates:
    """What the snapshot is made of, maintained across cycles."""

    tree: TopologyTree
    index: ClusterIndex
    snapshot: Snapshot
    """Shares `used`, `bound`, `gang_min`, `nominations` and `budget_hits` below."""
    used: I64
    gangs: _Gangs
    bound: dict[str, BoundPod] = field(default_factory=dict)
    nominations: dict[str, Nomination] = field(default_factory=dict)
    gang_min: dict[str, int] = field(default_factory=dict)
    parts: _Parts = field(default_factory=_Parts)
    """Gang key -> the membership keys it was discovered from, and back."""
    links: dict[GangKey, frozenset[GangKey]] = field(default_factory=dict)
    """Membership key -> keys its `groups` annotation lists (GangGroups)."""
    pending: set[str] = field(default_factory=set)
    budget_hits: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Bound pod -> keys of the PodDisruptionBudgets covering it (empty when none does)."""
    healthy: dict[str, int] = field(default_factory=dict)
    """Budget key -> covered bound pods not terminating (the healthy count)."""
    covered: dict[str, int] = field(default_factory=dict)
    """Budget key -> covered bound pods, terminating ones included (what percentages and
    maxUnavailable are of)."""
    budgets: list[Budget] | None = None
    """The budgets as the counts above leave them, until a count or a budget changes (a
    cycle's view reads them without going over every budget again)."""
    warnings: tuple[str, ...] = ()
    replaced: bool = False
    """Some gang here is not discovery's own (an unusable gang stands in for one, or discovery
    went key by key): a new tree discovers every gang again rather than carry them over."""
    moved: dict[str, Node | None] = field(default_factory=dict)
    """Node name -> its model as `tree` was built with it, for the nodes changed since
    (`ClusterState._relabel`)."""
    branches: Branches | None = None
    """`tree`'s branches, once a relabel read them (`ClusterState._relabel`)."""


def tiers_read(tree: TopologyTree) -> frozenset[tuple[int, str | None, str | None]]:
    """All gang discovery reads of a tree: its domains' (tier, tierName, label key), through
    `tier_of_name`, `tier_names`, `tier_labels`, `tier_of_label` and `layer_tiers`. Two trees
    alike in these discover the same gangs from the same objects, whichever nodes they hold."""
    return frozenset((d.tier, d.tier_name, d.label_key) for d in tree.domains.values())


class ClusterState:
    """Parsed objects plus incrementally maintained aggregates (see the module docstring)."""

    _dirty: set[GangKey]
    """Keys whose gangs are discovered again at the next view."""
    _bound_dirty: set[GangKey]
    """Keys whose pods were bound as they were (`_pod_bound`): their gangs are made again from
    their members on their nodes, not discovered again, unless a key is in `_dirty` too or
    discovery could find another gang (`_bound_again`)."""

    def __init__(self, *, nvlink_label: str = gpumod.NVLINK_LABEL, kueue_topology: str | None = None) -> None:
        self.nvlink_label = nvlink_label
        """The node label GPU gangs that require NVLink are held to."""
        self.kueue_topology = kueue_topology
        """The Kueue Topology to read when there are several (`pick_kueue_topology`)."""
        self.pods: dict[str, Pod] = {}
        self.nodes: dict[str, Node] = {}
        self.volcano_pgs: dict[str, volcano.PodGroup] = {}
        self.sigs_pgs: dict[str, koord.SigsPodGroup] = {}
        self.x_pgs: dict[str, schedplugins.XPodGroup] = {}
        self.k8s_pgs: dict[str, workload.PodGroup] = {}
        self.k8s_workloads: dict[str, workload.WorkloadV1alpha1] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.hypernodes: dict[str, volcano.HyperNode] = {}
        self.cnts: dict[str, koord.ClusterNetworkTopology] = {}
        self.kueue_topologies: dict[str, kueue.Topology] = {}
        self.jobs: dict[str, Job] = {}
        self.namespaces: dict[str, Namespace] = {}
        self.namespace_labels: dict[str, Mapping[str, str]] = {}
        """Namespace -> its labels, kept in step with `namespaces`; every snapshot reads it."""
        self._jobs_by_uid: dict[str, Job] = {}
        self.assumed: dict[str, str] = {}
        """pod key -> node: sent to bind, not yet seen bound."""
        self._members = _Members()
        self._key_of: dict[str, GangKey] = {}
        self._membership: dict[str, tuple[GangKey, GangSource]] = {}
        """Pod key -> the gang it names and the dialect naming it, computed when it changes."""
        self._linking: dict[GangKey, set[str]] = {}
        """Membership key -> its pods that carry a `groups` annotation (GangGroups)."""
        self._grouping: set[str] = set()
        """`namespace/name` of the Koordinator and scheduler-plugins PodGroups that carry a
        `groups` annotation: a gang's links are looked for only where there may be some."""
        self._dirty, self._bound_dirty = set(), set()
        self._all_dirty = True
        self._topology_dirty = True
        self._sources_moved = True
        """A tree source other than nodes changed since the last tree (gangs are discovered
        again: a ClusterNetworkTopology's layers are read by discovery as well)."""
        self._budgets_dirty = True
        self._agg: _Aggregates | None = None
        self._members_memo: dict[str, tuple[Pod, GangPod, str | None]] = {}
        """Pod key -> (the model, its GangPod, its error), computed when the pod changes (as
        kube-scheduler builds a PodInfo in its event handler), so a cycle does not."""
        self._cover_memo: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[str, ...]] = {}
        self._budget_index: dict[str, list[Budget]] = {}
        self._allocatable: dict[str, tuple[Node, Mapping[str, int] | str]] = {}
        """Node name -> (its model, its allocatable or why it cannot be read), as the last
        topology rebuild read them (`_readable_nodes`)."""
        self.generation = 0
        """Moves on every change that can alter a scheduling decision."""
        self.freed, self.binds = 0, BindJournal()
        """`freed` moves on every change but a pending pod bound as it was (its node set,
        nothing else changed) or assumed: only those can never make room or lift a constraint
        for a gang without inter-pod terms of its own (kube-scheduler's queueing hints); `binds`
        numbers those, for the gangs with terms (a bound pod they select may help them)."""
        self.topology_generation = 0
        self._stores = self._by_kind()

    # --- events ---------------------------------------------------------------------------

    def store(self, kind: Kind) -> dict[str, Any]:
        """The dict holding `kind`'s objects by key (shared with whoever feeds the state)."""
        return self._stores[kind]

    def _by_kind(self) -> dict[Kind, dict[str, Any]]:
        """Each kind's dict (made once: `store` is called for every event)."""
        stores: dict[Kind, dict[str, Any]] = {
            Kind.POD: self.pods,
            Kind.NODE: self.nodes,
            Kind.VOLCANO_PODGROUP: self.volcano_pgs,
            Kind.SIGS_PODGROUP: self.sigs_pgs,
            Kind.X_PODGROUP: self.x_pgs,
            Kind.PRIORITY_CLASS: self.priority_classes,
            Kind.PDB: self.pdbs,
            Kind.HYPERNODE: self.hypernodes,
            Kind.CNT: self.cnts,
            Kind.JOB: self.jobs,
            Kind.NAMESPACE: self.namespaces,
            Kind.KUEUE_TOPOLOGY: self.kueue_topologies,
            Kind.K8S_PODGROUP: self.k8s_pgs,
            Kind.K8S_WORKLOAD: self.k8s_workloads,
        }
        return stores

    def put(self, kind: Kind, key: str, obj: Any, *, relevant: bool = True) -> None:
        """Add or replace an object. `relevant=False`: nothing a decision reads changed (a
        status heartbeat), so the stored model is replaced and no aggregate moves."""
        items = self.store(kind)
        if kind is Kind.POD:
            key = sys.intern(key)  # one string per pod key: its GangPod's and records' are the same
        old = items.get(key)
        bound = kind is Kind.POD and old is not None and _only_bound(old, obj)
        if bound:
            compact_own(obj, obj.spec)  # all else it holds is the stored pod's, compacted
        elif isinstance(obj, KubeModel):
            compact(obj)  # a large cluster's models share their bookkeeping and repeated text
        items[key] = obj
        if kind in _GROUPING:
            self._regroup(key)
        if kind is Kind.PDB and self._agg is not None:
            self._agg.budgets = None  # even a change called irrelevant is read afresh, as before
        if relevant or old is None:
            if bound and old is not None:
                self._pod_bound(key, old, obj)
                return
            self.freed += 1
            self._changed(kind, key, old, obj)

    def delete(self, kind: Kind, key: str) -> None:
        old = self.store(kind).pop(key, None)
        if kind in _GROUPING:
            self._regroup(key)
        if kind is Kind.POD:
            self.assumed.pop(key, None)
        if old is not None:
            self.freed += 1
            self._changed(kind, key, old, None)

    def assume(self, pod_key: str, node: str) -> None:
        """The pod was sent to bind on `node`: it holds that room from now on."""
        self.assumed[pod_key] = node
        pod = self.pods.get(pod_key)
        if pod is not None:
            self.binds.add(pod)
        self._pod_dirty(pod_key)

    def forget(self, pod_key: str) -> bool:
        """The bind failed: the pod is pending again. True when it was assumed."""
        if self.assumed.pop(pod_key, None) is None:
            return False
        self.freed += 1
        self._pod_dirty(pod_key)
        return True

    def _pod_dirty(self, pod_key: str) -> None:
        self.generation += 1
        key = self._key_of.get(pod_key)
        if key is not None:
            self._dirty.add(key)

    def _changed(self, kind: Kind, key: str, old: Any, new: Any) -> None:
        """What a change to one object makes stale: the topology, every gang, the budgets, or
        the gangs it belongs to."""
        self.generation += 1
        if kind in _TOPOLOGY:
            self._topology_changed(kind, key, old)
        elif kind is Kind.PRIORITY_CLASS:
            self._all_dirty = True
            self._members_memo.clear()
        elif kind is Kind.PDB:
            self._budgets_dirty = True
        elif kind is Kind.NAMESPACE:
            # Inter-pod rules are worked out per cycle from the snapshot: no gang is dirty.
            if new is not None:
                self.namespace_labels[key] = dict(new.metadata.labels or {})
            else:
                self.namespace_labels.pop(key, None)
        elif kind is Kind.POD:
            self._pod_changed(key, new)
        elif kind in _PODGROUPS:
            self._dirty.add(gang_key(_PODGROUP_SOURCE[kind], key))
        elif kind is Kind.JOB:
            self._job_changed(old, new)
        elif kind is Kind.K8S_WORKLOAD:  # its groups are gangs `upstream:<ns>/<workload>/<group>...`
            self._dirty.update(k for k in self._members if k.startswith(gang_key("upstream", f"{key}/")))

    def _topology_changed(self, kind: Kind, key: str, old: Any) -> None:
        """A new tree is due: nodes' models as the tree in use read them are kept (`_relabel`)."""
        self.topology_generation += 1
        self._topology_dirty = True
        self._sources_moved |= kind is not Kind.NODE
        if kind is Kind.NODE and self._agg is not None:
            self._agg.moved.setdefault(key, old)

    def _pod_changed(self, key: str, new: Pod | None) -> None:
        """The pod leaves the gang it was in, and joins the one it is in now (both dirty)."""
        before = self._key_of.pop(key, None)
        if before is not None:
            self._members.discard(before, key)
            pods = self._linking.get(before)
            if pods is not None:
                pods.discard(key)
                if not pods:
                    del self._linking[before]
            self._dirty.add(before)
        if new is None:
            self._members_memo.pop(key, None)
            self._membership.pop(key, None)
            return
        if self.assumed.get(key) is not None and new.spec.node_name:
            del self.assumed[key]  # the binding is visible now
        mkey, _ = self._membership[key] = membership(new, self._jobs_by_uid)
        self._key_of[key] = mkey
        self._members.add(mkey, key)
        if koord.GANG_GROUPS in (new.metadata.annotations or {}):
            self._linking.setdefault(mkey, set()).add(key)
        self._dirty.add(mkey)
        self._member(new, key)

    def _pod_bound(self, key: str, old: Pod, new: Pod) -> None:
        """`new` is `old` bound as it was (`_only_bound`): what it is keyed by is the same, so it
        stays in its gang (made dirty), and its member is the old one on its node
        (`bound_member`) rather than read again: a gang of 100,000 pods bound costs no rereading."""
        self.binds.add(new)
        mkey = self._key_of.get(key)
        if mkey is None:  # not keyed yet (no earlier put): keyed as any change is
            self._changed(Kind.POD, key, old, new)
            return
        self.generation += 1
        self.assumed.pop(key, None)  # the binding is visible now
        self._bound_dirty.add(mkey)
        memo = self._members_memo.get(key)
        if memo is not None and memo[0] is old and memo[2] is None:
            self._members_memo[key] = (new, bound_member(memo[1], new), None)
        else:
            self._member(new)

    def _job_changed(self, old: Job | None, new: Job | None) -> None:
        """A Job decides whether its pods form a GPU gang, and its size: its pods are keyed again."""
        job = new or old
        uid = job.metadata.uid if job is not None else None
        if not uid:
            return
        if new is not None:
            self._jobs_by_uid[uid] = new
        else:
            self._jobs_by_uid.pop(uid, None)
        for pod in [p for p in self.pods.values() if gpumod.job_uid_of(p) == uid]:
            self._changed(Kind.POD, pod.key, pod, pod)

    def _member(self, pod: Pod, key: str | None = None) -> tuple[GangPod, str | None]:
        """The pod's `GangPod` and error, memoised while the stored model is `pod` (`key`: its
        key, when the caller has it)."""
        key = pod.key if key is None else key
        memo = self._members_memo.get(key)
        if memo is not None and memo[0] is pod:
            return memo[1], memo[2]
        gp, error = safe_gang_pod(pod, self.priority_classes)
        if pod is self.pods.get(key):  # not an assumed copy: keep it
            self._members_memo[key] = (pod, gp, error)
        return gp, error

    # --- the snapshot ---------------------------------------------------------------------

    def invalidate(self) -> None:
        """Rebuild everything at the next `view()` (after a view that failed half-way)."""
        self._agg = None
        self._all_dirty = self._topology_dirty = self._budgets_dirty = True

    def view(self, *, full: bool = False) -> ClusterView:
        """The next cycle's inputs: only what changed is recomputed, unless `full`.

        The snapshot is kept from one cycle to the next (kube-scheduler's UpdateSnapshot): the
        previous cycle's reservations are rolled back first, so a view is good until the next
        `view()` call, and the cycle may reserve on it freely."""
        with collector.paused():
            return self._view(full)

    def _view(self, full: bool) -> ClusterView:
        if self._agg is not None:
            self._agg.snapshot.rollback()
        if full or self._agg is None or self._topology_dirty:
            self._retree(full)
        agg = self._agg
        assert agg is not None
        bound: set[GangKey] = set()
        # A view that puts every bound pod again (a reset) builds the pod arrays preemption
        # reads as well; the reference rebuild (`full`) leaves them to the first read, as a
        # snapshot built from scratch does.
        walks_pods = self._all_dirty and not full
        if self._all_dirty:
            self._reset(agg)
            keys: set[GangKey] = set(self._members)
        else:
            keys, bound = self._dirty, self._bound_dirty - self._dirty
        if self._budgets_dirty:
            self._recount_budgets(agg)
        if keys or bound:
            self._rediscover(agg, keys, bound)
            agg.snapshot._changed()  # bound pods may have moved: pod arrays are rebuilt on demand
        self._dirty, self._bound_dirty = set(), set()
        self._all_dirty = False
        snap = agg.snapshot
        if walks_pods:
            snap.keep_arrays()
        snap.namespace_labels = self.namespace_labels
        snap.start_journal()
        pending = sorted(agg.pending, key=natural_key)
        # Budgets count the pods as the cycle starts; the cycle takes off what its preemptions use.
        if agg.budgets is None:
            agg.budgets = budgets_from(
                list(self.pdbs.values()), snap, healthy=agg.healthy, covered=agg.covered
            )
        budgets = agg.budgets
        return ClusterView(
            tree=agg.tree,
            index=agg.index,
            snapshot=snap,
            gangs=agg.gangs,
            pending=pending,
            budgets=budgets,
            warnings=agg.warnings,
            freed=self.freed,
            bound=self.binds.count,
            binds=self.binds,
        )

    def _rebuild_topology(self) -> _Aggregates:
        nodes = sorted(self.nodes.values(), key=lambda n: natural_key(n.name))
        cnt = self.cnts.get(koord.CNT_DEFAULT_NAME)
        warnings: list[str] = []
        allocatable: dict[str, Mapping[str, int]] = {}
        nodes = self._readable_nodes(nodes, warnings, allocatable)
        try:
            tree = topology_tree(
                nodes,
                self.hypernodes.values(),
                cnt,
                self.kueue_topologies.values(),
                kueue_topology=self.kueue_topology,
            )
        except Exception as exc:  # a tree no rule foresaw: gangs still schedule, without it
            warnings.append(f"topology tree left out: {failure_text(exc)}")
            tree = TopologyTree.empty()
        warnings.extend(tree.warnings)
        index = build_index(nodes, tree, allocatable)
        self._topology_dirty = self._sources_moved = False
        used = np.zeros_like(index.alloc)
        hits: dict[str, tuple[str, ...]] = {}
        snap = Snapshot(index=index, used=used, pods={}, gang_min={}, budget_hits=hits, keep_columns=True)
        return _Aggregates(
            tree=tree,
            index=index,
            snapshot=snap,
            gangs=_Gangs(self._member),
            used=used,
            bound=snap.pods,
            gang_min=snap.gang_min,
            nominations=snap.nominations,
            budget_hits=hits,
            warnings=tuple(warnings),
        )

    def _retree(self, full: bool) -> None:
        """A new tree and index; the gangs carried over to them when they can be (`_carry`),
        else every gang discovered again."""
        if full:
            self._allocatable = {}  # the reference reads every node again
        kept, moved = self._agg, self._sources_moved
        if not (full or kept is None or moved or self._all_dirty or kept.replaced) and self._relabel(kept):
            return
        self._agg = self._rebuild_topology()
        if full or kept is None or moved or self._all_dirty or not self._carry(kept, self._agg):
            self._all_dirty = True

    def _carry(self, kept: _Aggregates, agg: _Aggregates) -> bool:
        """The gangs of `kept` contributed to `agg`, built on a new tree, without discovering
        them again, when discovery would find the same ones (`tiers_read` alike): a node moved
        to another domain only moves the room its pods hold. False: nothing carried."""
        if kept.replaced or tiers_read(kept.tree) != tiers_read(agg.tree):
            return False
        if not self._remap(kept, agg):
            self._recontribute(kept, agg)
        agg.snapshot._changed()
        return True

    RELABELS = 8
    """Nodes changed since the last tree that a view moves one at a time (`_relabel`); more
    build the tree again."""

    def _relabel(self, agg: _Aggregates) -> bool:
        """The nodes changed since the last tree, each moved between domains in place: the tree
        (`Branches.move`), the index (`ClusterIndex.relabelled`), then `used` and the records
        on the rows that shifted. Only when each node is relabelled and no more: readable and
        in the tree before and after, its quantities, taints and schedulability as they were,
        the tree of labels over a ClusterNetworkTopology or a Kueue Topology, its levels and
        domain names alike (so warnings, tiers and the gangs stay). False: nothing changed."""
        if not agg.moved or len(agg.moved) > self.RELABELS:
            return False
        branches = agg.branches or self._branches_of(agg.tree)
        steps: list[tuple[Node, Mapping[str, int], Branches, ClusterIndex, I64]] = []
        index = agg.index
        for name, old in agg.moved.items():
            new, hit = self.nodes.get(name), self._allocatable.get(name)
            if new is None or old is None or hit is None or hit[0] is not old or isinstance(hit[1], str):
                return False
            if branches is None or self._read_allocatable(new) != hit[1]:
                return False
            before, after = branches.path(old), branches.path(new)
            moved = branches.move(name, before, after) if before and after else None
            if moved is None:
                return False
            relabelled = index.relabelled(moved.tree, new)
            if relabelled is None:
                return False
            branches, index = moved, relabelled[0]
            steps.append((new, hit[1], moved, index, relabelled[1]))
        for new, read, moved, index, perm in steps:
            self._allocatable[new.name] = (new, read)
            self._move_rows(agg, moved.tree, index, perm)
        agg.branches = branches
        agg.moved.clear()
        self._topology_dirty = False
        return True

    def _branches_of(self, tree: TopologyTree) -> Branches | None:
        """The branches of a tree of label levels (`_relabel`): the ClusterNetworkTopology's
        layers or the Kueue Topology's levels it was built over; None for any other tree."""
        try:
            cnt = self.cnts.get(koord.CNT_DEFAULT_NAME)
            if tree.source == "koordinator" and cnt is not None:
                return Branches.of(tree, cnt_levels(cnt))
            topo = pick_kueue_topology(self.kueue_topologies.values(), self.kueue_topology)[0]
            if tree.source == "kueue" and topo is not None:
                hostname = any(level.node_label == kueue.HOSTNAME_LABEL for level in topo.spec.levels)
                return Branches.of(
                    tree,
                    kueue.label_levels(topo),
                    stand_in_lowest=False,
                    required=kueue.HOSTNAME_LABEL if hostname else None,
                )
        except InvalidSpecError:
            pass  # the tree came from elsewhere then: build it again
        return None

    @staticmethod
    def _move_rows(agg: _Aggregates, tree: TopologyTree, index: ClusterIndex, perm: I64) -> None:
        """`agg` on `index`, whose row r was the old index's row `perm[r]`: `used` permuted in
        place, the records and nominations on rows that moved made on their new rows."""
        agg.used[:] = agg.used[perm]
        moved = np.flatnonzero(perm != np.arange(len(perm)))
        if len(moved):
            row = np.empty_like(perm)
            row[perm] = np.arange(len(perm))
            lo, hi = int(perm[moved].min()), int(perm[moved].max())
            snap = agg.snapshot
            shifted = [(k, p) for k, p in agg.bound.items() if lo <= p.node <= hi]
            for key, pod in shifted:
                snap.set_pod(dataclasses.replace(pod, node=int(row[pod.node])), key)
            for key, nom in list(agg.nominations.items()):
                if lo <= nom.node <= hi:
                    agg.nominations[key] = dataclasses.replace(nom, node=int(row[nom.node]))
        agg.tree, agg.index = tree, index
        agg.snapshot.index = index
        agg.snapshot._changed()

    def _recontribute(self, kept: _Aggregates, agg: _Aggregates) -> None:
        """`kept`'s gangs contributed to `agg` (their records made on its index). A gang with a
        dirty part is not carried: a member may be gone since (deleted with a node in one batch)
        or in another gang now; its parts are discovered again with the dirty keys."""
        agg.links.update(kept.links)
        for key, gang in kept.gangs.made().items():
            parts = kept.parts.parts(key)
            if all(part.startswith(_LONE) for part in parts):
                continue
            if not self._dirty.isdisjoint(parts):
                self._dirty.update(parts)
                continue
            self._contribute_safely(agg, gang)
        self._contribute_lones(agg, list(self._members.lone()))

    @staticmethod
    def _remap(kept: _Aggregates, agg: _Aggregates) -> bool:
        """`kept`'s records moved to `agg`'s index, each to its node's new row, when both index
        the same nodes over the same resource axis (nodes relabelled): nothing else a record,
        a gang, minMember or a budget count holds depends on where a node sits. False: the
        nodes or the axis differ, nothing moved."""
        old, new = kept.index, agg.index
        if old.resources != new.resources or old.node_pos.keys() != new.node_pos.keys():
            return False
        row = np.fromiter((new.node_pos[n] for n in old.node_names), dtype=np.int64, count=old.n_nodes)
        agg.used[row] = kept.used
        snap = agg.snapshot
        for key, pod in kept.bound.items():
            at = int(row[pod.node])
            snap.set_pod(pod if at == pod.node else dataclasses.replace(pod, node=at), key)
        for key, nom in kept.nominations.items():
            at = int(row[nom.node])
            agg.nominations[key] = nom if at == nom.node else dataclasses.replace(nom, node=at)
        agg.gangs, agg.parts, agg.links = kept.gangs, kept.parts, kept.links
        agg.gang_min.update(kept.gang_min)
        agg.budget_hits.update(kept.budget_hits)
        agg.pending, agg.healthy, agg.covered = kept.pending, kept.healthy, kept.covered
        return True

    def _readable_nodes(
        self, nodes: list[Node], warnings: list[str], allocatable: dict[str, Mapping[str, int]]
    ) -> list[Node]:
        """The nodes whose allocatable can be read (into `allocatable`, by name); each other one
        is left out with a warning (pods bound there then hold nothing, as on a deleted node).

        Each node's reading is kept while its stored model is the same object: a node relabelled
        rebuilds the tree, and only that node's quantities are read again."""
        out: list[Node] = []
        kept, self._allocatable = self._allocatable, {}
        for node in nodes:
            hit = kept.get(node.name)
            read = hit[1] if hit is not None and hit[0] is node else self._read_allocatable(node)
            self._allocatable[node.name] = (node, read)
            if isinstance(read, str):
                warnings.append(f"node {node.name}: left out: {read}")
                continue
            allocatable[node.name] = read
            out.append(node)
        return out

    @staticmethod
    def _read_allocatable(node: Node) -> Mapping[str, int] | str:
        """The node's allocatable, or why it cannot be read."""
        try:
            return node.allocatable()
        except Exception as exc:
            return failure_text(exc)

    def _reset(self, agg: _Aggregates) -> None:
        agg.used[:] = 0
        agg.snapshot.clear_pods()  # agg.bound with it
        for table in (agg.nominations, agg.gang_min, agg.gangs, agg.parts, agg.links):
            table.clear()
        agg.budget_hits.clear()
        agg.healthy.clear()
        agg.covered.clear()
        agg.budgets = None
        agg.pending.clear()

    # --- disruption budgets ---

    def _recount_budgets(self, agg: _Aggregates) -> None:
        """A budget changed: match every bound pod again (memoised by namespace and labels)."""
        self._budgets_dirty = False
        self._cover_memo.clear()
        self._budget_index = {}
        for pdb in sorted(self.pdbs.values(), key=lambda p: natural_key(p.key)):
            self._budget_index.setdefault(pdb.namespace, []).append(
                Budget(pdb.key, pdb.namespace, pdb.spec.selector, 0)
            )
        agg.budget_hits.clear()
        agg.healthy.clear()
        agg.covered.clear()
        agg.budgets = None
        for pod in agg.bound.values():
            self._count_budgets(agg, pod, +1)
        agg.snapshot.coverage_changed()

    def _covering(self, pod: BoundPod) -> tuple[str, ...]:
        budgets = self._budget_index.get(pod.namespace)
        if not budgets:
            return ()
        # Unsorted: equal labels in another order only make a second entry with the same hits.
        memo_key = (pod.namespace, tuple(pod.labels.items()))
        hits = self._cover_memo.get(memo_key)
        if hits is None:
            hits = tuple(b.key for b in budgets if b.covers(pod.namespace, pod.labels))
            self._cover_memo[memo_key] = hits
        return hits

    def _covering_all(self, pods: Sequence[BoundPod]) -> list[tuple[str, ...]]:
        """`_covering` of each of `pods` (one loop: a cold start asks it of every bound pod)."""
        budgets, memo, covering = self._budget_index, self._cover_memo, self._covering
        out: list[tuple[str, ...]] = []
        add = out.append
        for pod in pods:
            if pod.namespace not in budgets:
                add(())
                continue
            hits = memo.get((pod.namespace, tuple(pod.labels.items())))
            add(hits if hits is not None else covering(pod))
        return out

    def _count_budgets(self, agg: _Aggregates, pod: BoundPod, sign: int) -> None:
        hits = self._covering(pod) if sign > 0 else agg.budget_hits.pop(pod.key, ())
        if sign > 0:
            # Recorded even when empty: preemption reads "covered by none" instead of matching
            # the pod against every budget again.
            agg.budget_hits[pod.key] = hits
        if hits:
            agg.budgets = None
        for k in hits:
            agg.covered[k] = agg.covered.get(k, 0) + sign
            if not pod.terminating:
                agg.healthy[k] = agg.healthy.get(k, 0) + sign

    def _count_budgets_of(self, agg: _Aggregates, records: Sequence[BoundPod]) -> None:
        """`_count_budgets(agg, pod, +1)` for each of `records` (new to the aggregates), the
        counts summed in one pass."""
        hits = self._covering_all(records)
        agg.budget_hits.update(zip(map(_key_of_record, records), hits, strict=True))
        covering = [(h, r.terminating) for h, r in zip(hits, records, strict=True) if h]
        if not covering:
            return
        agg.budgets = None
        for k, n in Counter(chain.from_iterable(h for h, _ in covering)).items():
            agg.covered[k] = agg.covered.get(k, 0) + n
        for k, n in Counter(chain.from_iterable(h for h, ending in covering if not ending)).items():
            agg.healthy[k] = agg.healthy.get(k, 0) + n

    def _closure(self, agg: _Aggregates, keys: Iterable[GangKey]) -> set[GangKey]:
        """`keys` plus every membership key that may share a gang with one of them: the parts
        of the gangs they were in, and keys linked by a `groups` annotation either way.

        One walk, no recursion: a chain of a thousand gangs each listing the next is reached
        from its last gang through back-links, looked up in an index of the links as they
        stood before the walk (only keys the walk reaches have their links read afresh)."""
        if not (self._grouping or self._linking or agg.links):
            return self._closure_by_parts(agg, keys)  # no key links any: the parts alone
        back: dict[GangKey, list[GangKey]] = {}
        for k, ls in agg.links.items():
            for target in ls:
                back.setdefault(target, []).append(k)
        out: set[GangKey] = set()
        todo = list(keys)
        while todo:
            k = todo.pop()
            if k in out:
                continue
            out.add(k)
            links = self._links_of(k)
            if links:
                agg.links[k] = links  # only keys with links: the back-link index stays small
            else:
                agg.links.pop(k, None)
            todo.extend(links)
            todo.extend(back.get(k, ()))
            gang = agg.parts.gang_of(k)
            if gang is not None:
                todo.extend(agg.parts.parts(gang))
        return out

    @staticmethod
    def _closure_by_parts(agg: _Aggregates, keys: Iterable[GangKey]) -> set[GangKey]:
        """`_closure` where no PodGroup or pod carries a `groups` annotation and no key had
        links: `keys` plus the parts of the gangs they were in (a cold start: every key, and no
        gang yet), without asking each key for links it cannot have."""
        out = set(keys)
        parts, gang_of = agg.parts.parts, agg.parts.gang_of
        todo = [g for g in map(gang_of, out) if g is not None]
        while todo:
            for part in parts(todo.pop()):
                if part not in out:
                    out.add(part)
                    gang = gang_of(part)
                    if gang is not None:
                        todo.append(gang)
        return out

    def _regroup(self, name: str) -> None:
        """Whether a PodGroup named `name` carries a `groups` annotation now."""
        pgs = (self.sigs_pgs.get(name), self.x_pgs.get(name))
        if any(pg is not None and koord.GANG_GROUPS in (pg.metadata.annotations or {}) for pg in pgs):
            self._grouping.add(name)
        else:
            self._grouping.discard(name)

    def _links_of(self, key: GangKey) -> frozenset[GangKey]:
        raw: list[str] = []
        name = gang_name(key)
        if name not in self._grouping and key not in self._linking:
            return _NO_LINKS
        for pg in (self.sigs_pgs.get(name), self.x_pgs.get(name)):
            if pg is not None:
                ann = pg.metadata.annotations or {}
                if koord.GANG_GROUPS in ann:
                    raw.append(ann[koord.GANG_GROUPS])
        for pk in self._linking.get(key, ()):
            text = (self.pods[pk].metadata.annotations or {}).get(koord.GANG_GROUPS)
            if text is not None:
                raw.append(text)
        out: set[GangKey] = set()
        for text in raw:
            try:
                out.update(koordinator_key(g) for g in koord.parse_groups(text))
            except InvalidSpecError:
                continue  # discovery reports it on the gang
        out.discard(key)
        return frozenset(out)

    def _rediscover(self, agg: _Aggregates, dirty: Iterable[GangKey], bound: Iterable[GangKey] = ()) -> None:
        """The gangs the `dirty` keys may be part of, discovered again: what they contributed
        withdrawn, then the gangs found now contributed (`_discover_apart`, `_contribute_safely`:
        one bad object costs only its own gang its view). The gangs of `bound` keys (whose
        pods were only bound since) are made again from their members where discovery would
        find the same gang with them (`_bound_again`), else discovered with the rest."""
        again = self._bound_again(agg, bound)
        keys = self._closure(agg, [*dirty, *(k for k in bound if k not in again)])
        if again:  # a key linked to from a key discovered again is discovered with it
            again = {k: gang for k, gang in again.items() if k not in keys}
        self._withdraw_all(agg, keys, again)
        # Pods that name no gang are gangs of their own, made without discovery's tables (most
        # pods of a large cluster are these: a cold start is mostly them).
        lone = [k for k in keys if k.startswith(_LONE)]
        grouped = keys.difference(lone) if lone else keys
        # Sorted: discovery takes a gang's dialect from its first pod, so the order must not
        # depend on the order events came in.
        stored, assumed, as_planned = self.pods, self.assumed, self._as_planned
        pods = [
            stored[pk] if pk not in assumed else as_planned(pk)  # `_as_planned`, a call only when assumed
            for k in sorted(grouped)
            for pk in sorted(self._members.get(k, ()))
        ]
        gangs: list[Gang] = []
        if pods:
            try:
                gangs = self._discover(agg, grouped, pods)
            except Exception as exc:  # one bad object must not cost every gang in the batch its view
                gangs = self._discover_apart(agg, grouped)
                self._warn(agg, f"gang discovery failed, {failure_text(exc)}: discovered one key at a time")
        if again:  # in discovery's order: by key, as if discovered with the rest
            gangs = sorted([*gangs, *again.values()], key=lambda g: natural_key(g.key))
        for gang in gangs:
            self._contribute_safely(agg, gang)
        self._contribute_lones(agg, lone)

    def _bound_again(self, agg: _Aggregates, keys: Iterable[GangKey]) -> dict[GangKey, Gang]:
        """Key -> its gang made again from its members as they are now, for each of `keys`
        (whose pods were only bound since the last view) where discovery would find just that:
        the gang is the key's alone (no GangGroup, no `groups` link from it; one to it from a
        key discovered again takes it along, `_rediscover`), it read without an
        error, the same pods are its members, every one of them is bound now and none or all
        of them were before (what discovery reads of a gang's pending members, its priority,
        policy and scheduler, is then read of all of them both times), and each one's member
        is the one kept for its stored model (`_pod_bound`'s). A bind changes nothing else
        discovery reads: a gang of 100,000 pods bound is not discovered again pod by pod."""
        out: dict[GangKey, Gang] = {}
        for k in keys:
            if k.startswith(_LONE) or k in agg.links or k in self._linking or gang_name(k) in self._grouping:
                continue
            name = agg.parts.gang_of(k)
            gang = agg.gangs.made().get(name) if name is not None else None
            if gang is None or gang.error is not None or agg.parts.parts(gang.key) != (k,):
                continue
            pods = self._members.get(k, ())
            if len(gang.pods) != len(pods) or len(gang.bound) not in (0, len(gang.pods)):
                continue
            members = self._bound_members(gang, pods)
            if members is not None:
                out[k] = dataclasses.replace(gang, pods=members)
        return out

    def _bound_members(self, gang: Gang, pods: Collection[str]) -> tuple[GangPod, ...] | None:
        """`gang`'s members as kept for their stored models, in its order, when each of its
        pods is one of `pods`, stored, bound and read without an error; else None."""
        out: list[GangPod] = []
        memo, stored = self._members_memo, self.pods
        for m in gang.pods:
            kept = memo.get(m.key)
            if kept is None or kept[2] is not None or m.key not in pods:
                return None
            pod, member = kept[0], kept[1]
            if (
                pod is not stored.get(m.key)
                or member.pod is not pod
                or not member.bound
                or m.key in self.assumed
            ):
                return None
            out.append(member)
        return tuple(out)

    def _contribute_lones(self, agg: _Aggregates, keys: Iterable[GangKey]) -> None:
        """The gangs of pods that name none. The bound ones (a cold start is mostly them) are
        read into a `_LoneBatch`, one record per pod, and written to the snapshot, `used`, the
        budget counts and the gang tables in passes over the batch; any other pod goes through
        `_contribute_lone` (a bound one after the batch so far is written, so the snapshot
        holds the bound pods in the order they are read)."""
        batch = _LoneBatch(agg.index)
        add = batch.add
        members, pods, assumed, memos = self._members, self.pods, self.assumed, self._members_memo
        lone = members.lone()
        for k in sorted(keys):
            for pk in (k[_LONE_AT:],) if k in lone else members.get(k, ()):
                pod = pods[pk] if pk not in assumed else self._as_planned(pk)
                memo = memos.get(pk)
                if memo is not None and memo[0] is pod and add(k, pod, memo[1]):
                    continue
                if pod.spec.node_name:
                    self._write_lones(agg, batch)
                self._contribute_lone(agg, k, pk, pod)
        self._write_lones(agg, batch)

    def _write_lones(self, agg: _Aggregates, batch: _LoneBatch) -> None:
        """The batch's pods contributed as `_contribute_lone` does each, in passes; emptied."""
        if not batch.keys:
            return
        keys, records = batch.keys, batch.records
        agg.gangs.put_lones(keys, batch.pods)
        agg.gang_min.update(dict.fromkeys(keys, 1))  # `lone_gang`'s min_member
        agg.parts.add_lones(keys)
        if records:
            agg.snapshot.set_pods(records)
            self._count_budgets_of(agg, records)
            np.add.at(agg.used, batch.nodes(), batch.requests())
        batch.clear()

    def _contribute_lone(self, agg: _Aggregates, key: GangKey, pod_key: str, pod: Pod) -> None:
        """The gang of a pod that names none, contributed on its own: a bound one as its record
        alone (its gang is made when read, `_Gangs`), the rest as any gang (an unusable gang of
        the pod when even that fails: `_discover_apart`'s last resort)."""
        if not discovered(pod):
            return
        if pod.spec.node_name:
            try:
                memo = self._members_memo.get(pod_key)
                gp = memo[1] if memo is not None and memo[0] is pod else self._member(pod, pod_key)[0]
                record = bound_record(agg.index, key, gp)
            except Exception:
                pass  # the general path below says why, on the gang
            else:
                agg.gangs.put_lone(key, pod)
                agg.gang_min[key] = 1  # `lone_gang`'s min_member
                agg.parts.add_lones((key,))
                if record is not None:
                    agg.snapshot.set_pod(record, record.key)
                    agg.used[record.node] += record.req
                    self._count_budgets(agg, record, +1)
                return
        try:
            gang = lone_gang(pod, self._member)
        except Exception as exc:
            gang = unusable_gang(key, [pod], failure_text(exc), member=self._member)
        self._contribute_safely(agg, gang)

    def _discover_apart(self, agg: _Aggregates, keys: Iterable[GangKey]) -> list[Gang]:
        """Discovery one key at a time; a key that still fails is an unusable gang of its own."""
        gangs: list[Gang] = []
        for k in sorted(keys):
            alone = [self._as_planned(pk) for pk in sorted(self._members.get(k, ()))]
            if not alone:
                continue
            try:
                gangs += self._discover(agg, {k}, alone)
            except Exception as one:
                gangs.append(unusable_gang(k, alone, failure_text(one), member=self._member))
        return gangs

    def _contribute_safely(self, agg: _Aggregates, gang: Gang) -> None:
        """Contribute `gang`; when that fails, an unusable gang of its pods in its place."""
        try:
            self._contribute(agg, gang)
        except Exception as exc:
            agg.replaced = True
            bad = unusable_gang(gang.key, [m.pod for m in gang.pods], failure_text(exc), member=self._member)
            try:
                self._contribute(agg, bad)
            except Exception:
                self._contribute(agg, bad, hold=False)

    def _discover(self, agg: _Aggregates, keys: set[GangKey], pods: list[Pod]) -> list[Gang]:
        groups = PodGroups(
            volcano=_groups_of(self.volcano_pgs, keys, "volcano"),
            koordinator=_groups_of(self.sigs_pgs, keys, "koordinator"),
            scheduler_plugins=_groups_of(self.x_pgs, keys, "scheduler-plugins"),
            jobs=self._jobs_of(pods),
            upstream=_groups_of(self.k8s_pgs, keys, "upstream"),
            upstream_workloads=[
                self.k8s_workloads[w] for w in _workloads_named(keys) if w in self.k8s_workloads
            ],
        )
        return discover_gangs(
            pods,
            podgroups=groups,
            priority_classes=self.priority_classes.values(),
            tree=agg.tree,
            cnt=self.cnts.get(koord.CNT_DEFAULT_NAME),
            nvlink_label=self.nvlink_label,
            member=self._member,
            membership_of=self._membership_of,
        )

    def _jobs_of(self, pods: Sequence[Pod]) -> list[Job]:
        """The Jobs `pods` belong to: all discovery reads of Jobs (a gang's Job is its first
        pod's), without going over every Job in the cluster for a batch of a few pods."""
        if len(pods) >= len(self._jobs_by_uid):
            return list(self._jobs_by_uid.values())
        uids = {gpumod.job_uid_of(p) for p in pods}
        uids.discard(None)
        return [self._jobs_by_uid[u] for u in sorted(uids, key=str) if u in self._jobs_by_uid]

    @staticmethod
    def _warn(agg: _Aggregates, text: str) -> None:
        agg.replaced = True  # a warning of discovery's: its gangs are discovered again
        if text not in agg.warnings and len(agg.warnings) < MAX_WARNINGS:
            agg.warnings = (*agg.warnings, text)

    def _membership_of(self, pod: Pod) -> tuple[GangKey, GangSource]:
        known = self._membership.get(pod.key)
        return known if known is not None else membership(pod, self._jobs_by_uid)

    def _as_planned(self, pod_key: str) -> Pod:
        """The pod as planning sees it: an assumed pod is bound on its assumed node."""
        pod = self.pods[pod_key]
        node = self.assumed.get(pod_key)
        if node is None or pod.spec.node_name:
            return pod
        return pod.model_copy(update={"spec": pod.spec.model_copy(update={"node_name": node})})

    def _withdraw_all(self, agg: _Aggregates, keys: set[GangKey], again: Iterable[GangKey]) -> None:
        """Take out what the gangs `keys` and `again` were part of contributed, and the links of
        keys no pod names now (after a reset there is nothing to take out: a cold start asks
        nothing of each key)."""
        if agg.parts:
            gang_of = agg.parts.gang_of
            for old in {g for g in map(gang_of, [*keys, *again]) if g is not None}:
                self._withdraw(agg, old)
            for k in keys:
                agg.parts.unlink(k)
        if agg.links:
            for k in keys:
                if k not in self._members:
                    agg.links.pop(k, None)

    def _withdraw(self, agg: _Aggregates, gang_key: str) -> None:
        gang = agg.gangs.pop(gang_key, None)
        agg.gang_min.pop(gang_key, None)
        agg.pending.discard(gang_key)
        agg.parts.drop(gang_key)
        if gang is None:
            return
        for m in gang.pods:
            pod = agg.bound.get(m.key)
            if pod is not None:
                agg.snapshot.set_pod(None, m.key)
                agg.used[pod.node] -= pod.req
                self._count_budgets(agg, pod, -1)
            agg.nominations.pop(m.key, None)

    def _contribute(self, agg: _Aggregates, gang: Gang, *, hold: bool = True) -> None:
        """Add a discovered gang to the aggregates. Bound members are read before anything is
        changed, so a member that cannot be read leaves the aggregates as they were. `hold=False`:
        the gang's members hold no room (the last resort for members that cannot be read)."""
        index = agg.index
        held = [(m, self._bound_record(index, gang, m)) for m in gang.pods] if hold else []
        agg.gangs[gang.key] = gang
        agg.gang_min[gang.key] = gang.victim_min
        parts = tuple(sorted({self._key_of[m.key] for m in gang.pods}))
        agg.parts.set(gang.key, parts)
        if gang.pending:
            agg.pending.add(gang.key)
        rows: list[BoundPod] = []
        try:
            for m, record in held:
                if isinstance(record, BoundPod):
                    agg.snapshot.set_pod(record, m.key)
                    rows.append(record)
                    self._count_budgets(agg, record, +1)
                elif record is not None:
                    agg.nominations[m.key] = record
        finally:  # the room of every record set, even when counting a budget failed
            add_requests(agg.used, rows)

    @staticmethod
    def _bound_record(index: ClusterIndex, gang: Gang, m: GangPod) -> BoundPod | Nomination | None:
        """What a member holds: its node's room when bound (nothing on a node we do not know,
        deleted: it stays a member), its nominated node's when nominated, else nothing."""
        pod = m.pod
        if m.node_name:
            return bound_record(index, gang.key, m)
        nominated = pod.status.nominated_node_name if pod.status is not None else None
        pos = index.node_pos.get(nominated) if nominated else None
        if pos is None:
            return None
        return Nomination(m.key, gang.key, pos, request_vector(index, m.requests), gang.priority)

    # --- sizes ----------------------------------------------------------------------------

    def estimate_bytes(self) -> int:
        """A rough size of the aggregates (not the parsed objects): arrays plus per-pod records."""
        agg = self._agg
        if agg is None:
            return 0
        per_pod = 200  # a BoundPod with its request row and dict slot
        return int(agg.used.nbytes + agg.index.alloc.nbytes + per_pod * len(agg.bound) + 400 * len(agg.gangs))


def bound_record(index: ClusterIndex, gang: str, m: GangPod, req: I64 | None = None) -> BoundPod | None:
    """A bound member's record (None on a node not in the index); `req`: its request's row
    (`request_vector`), when the caller has it."""
    pod = m.pod
    pos = index.node_pos.get(pod.spec.node_name or "")
    if pos is None:
        return None
    meta = pod.metadata
    # Positional, in BoundPod's field order: one is made for every bound pod at a cold start.
    return BoundPod(
        m.key,
        meta.namespace or "",
        pos,
        request_vector(index, m.requests) if req is None else req,
        m.priority,
        gang,
        meta.labels or {},
        meta.deletion_timestamp is not None,
        PodTerms.of(pod),
        start_seconds(pod),
        volcano.preemptable(meta.annotations, meta.labels),
    )


def start_seconds(pod: Pod) -> float | None:
    """`status.startTime` in seconds since the epoch; None when unset or not RFC 3339 (the
    kubelet writes it; a value no clock could have written counts as not started)."""
    raw = pod.status.start_time if pod.status is not None else None
    if not raw:
        return None
    try:
        return datetime.fromisoformat(raw).timestamp()
    except ValueError:
        return None


PG = TypeVar("PG")


def _groups_of(podgroups: Mapping[str, PG], keys: Iterable[GangKey], source: GangSource) -> list[PG]:
    """The PodGroups of one dialect (stored by `namespace/name`) that `keys` of that dialect name."""
    mine = gang_key(source, "")
    names = {gang_name(k) for k in keys if k.startswith(mine)}
    return [podgroups[n] for n in sorted(names, key=natural_key) if n in podgroups]


def _workloads_named(keys: Iterable[GangKey]) -> list[str]:
    """`namespace/name` of the 1.35 Workloads the `keys` of their groups name."""
    mine = gang_key("upstream", "")
    found = {upstream_gangs.workload_of(gang_name(k)) for k in keys if k.startswith(mine)}
    return sorted({w[0] for w in found if w is not None}, key=natural_key)


MAX_WARNINGS = 100
"""Warnings a view carries (each names the object left out); a hostile cluster can make more."""
