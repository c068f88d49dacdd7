"""The scheduler's picture of a cluster, and the per-cycle snapshot cut from it.

`ClusterState` holds the parsed objects a cycle reads (pods, nodes, PodGroups, priority
classes, PodDisruptionBudgets, HyperNodes, the ClusterNetworkTopology) and, beside them, the
aggregates a cycle needs, kept in step with every change: the static index, per-node
requested resources, the bound pods with what preemption and affinity read (namespace,
labels, priority, gang), gangs' minMember, nominations, and the discovered gangs.

Both runners feed it: the live scheduler from informer events (`controller.runtime.cache`),
`topobridge simulate` from a snapshot file and from the plans it applies. `view()` then does
what kube-scheduler's `UpdateSnapshot` does: only what changed since the last cycle is
recomputed (pods of gangs whose members, PodGroup or links moved; PDB counts only when read);
nodes, HyperNodes or the ClusterNetworkTopology moving rebuild the index and everything on
it. `view(full=True)` rebuilds everything from the objects (the reference the incremental path
is tested against).

The rules that both runners share live here, once:
* `topology_tree`: which tree the scheduler uses;
* `request_vector`: how a bound pod's request meets the resource axis;
* `build_index`: which resources the axis has;
* gangs' minMember is known for every gang (`Snapshot.gang_min`);
* assumed pods (sent to bind, not seen bound yet) are bound on their assumed node; a pending
  pod's `status.nominatedNodeName` is a nomination; a pod with a deletionTimestamp is terminating;
  a pod bound to a node not in the index holds nothing (it stays a member of its gang).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from controller.placer.preempt import Budget, budgets_from
from controller.placer.snapshot import I64, BoundPod, ClusterIndex, Nomination, Snapshot
from controller.placer.terms import PodTerms
from translations import gpu as gpumod
from translations import hypernodes as hntr
from translations import koordinator as koord
from translations import schedplugins, volcano
from translations.core import Job, Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from translations.errors import InvalidSpecError
from translations.gangs import (
    Gang,
    GangKey,
    GangPod,
    GangSource,
    PodGroups,
    discover_gangs,
    gang_pod,
    membership,
)
from translations.topology import TopologyTree, from_cluster_network_topology, from_hypernodes, natural_key


class Kind(enum.Enum):
    """The kinds of object a cycle reads."""

    POD = "Pod"
    NODE = "Node"
    VOLCANO_PODGROUP = "PodGroup.scheduling.volcano.sh"
    SIGS_PODGROUP = "PodGroup.scheduling.sigs.k8s.io"
    X_PODGROUP = "PodGroup.scheduling.x-k8s.io"
    PRIORITY_CLASS = "PriorityClass"
    PDB = "PodDisruptionBudget"
    HYPERNODE = "HyperNode"
    CNT = "ClusterNetworkTopology"
    JOB = "Job"
    """batch/v1: the GPU dialect's gangs."""
    NAMESPACE = "Namespace"
    """Only labels: what a pod affinity term's `namespaceSelector` selects by."""


_TOPOLOGY = (Kind.NODE, Kind.HYPERNODE, Kind.CNT)
_PODGROUPS = (Kind.VOLCANO_PODGROUP, Kind.SIGS_PODGROUP, Kind.X_PODGROUP)


# --- the shared rules ---------------------------------------------------------------------------


def translated_from_cnt(hn: volcano.HyperNode) -> bool:
    """A HyperNode topobridge wrote from the ClusterNetworkTopology (not Volcano's own)."""
    labels = hn.metadata.labels or {}
    return (
        labels.get(hntr.MANAGED_BY_LABEL) == hntr.MANAGED_BY
        and labels.get(hntr.SOURCE_LABEL) == "koordinator"
    )


def topology_tree(
    nodes: Sequence[Node], hypernodes: Iterable[volcano.HyperNode], cnt: koord.ClusterNetworkTopology | None
) -> TopologyTree:
    """The tree the scheduler uses: HyperNodes (what Volcano would use) when any exist that
    topobridge did not translate from the ClusterNetworkTopology, or when there is no
    ClusterNetworkTopology; else the ClusterNetworkTopology `default` over node labels (its
    domain names are what Koordinator's messages use); else none.

    Raises InvalidSpecError when the ClusterNetworkTopology chosen cannot be used."""
    hns = list(hypernodes)
    if any(not translated_from_cnt(h) for h in hns) or (hns and cnt is None):
        return from_hypernodes(hns, nodes)
    if cnt is not None:
        return from_cluster_network_topology(cnt, nodes)
    return TopologyTree.empty()


def build_index(nodes: Sequence[Node], tree: TopologyTree) -> ClusterIndex:
    """The resource axis is what nodes offer, nothing else: a pending pod asking for a resource
    no node has is `N Insufficient <resource>` (`demand.unknown_resource`), as in kube, and the
    index depends on nodes and the tree alone (pods arriving never rebuild it)."""
    return ClusterIndex.build(nodes, tree)


REQUEST_ROWS = 4096
"""Distinct requests whose rows an index keeps (pods mostly share a few shapes)."""


def request_vector(index: ClusterIndex, requests: Mapping[str, int]) -> I64:
    """A bound, assumed or nominated pod's request over the index's resource axis; resources no
    node has are dropped (they consume no room anything is scheduled with), the rest still count.

    Rows are shared between pods asking the same (read-only; kept on the index, whose axis
    they are on)."""
    rows = index.cache.get("request_rows")
    if not isinstance(rows, dict) or len(rows) >= REQUEST_ROWS:
        rows = index.cache["request_rows"] = {}
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
    return out


def queue_order(gangs: Iterable[Gang]) -> list[Gang]:
    """Scheduling order: higher priority first, then older, then by key."""
    return sorted(gangs, key=lambda g: (-g.priority, g.creation or "", natural_key(g.key)))


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


@dataclass
class _Aggregates:
    """What the snapshot is made of, maintained across cycles."""

    tree: TopologyTree
    index: ClusterIndex
    snapshot: Snapshot
    """Shares `used`, `bound`, `gang_min`, `nominations` and `budget_hits` below."""
    used: I64
    bound: dict[str, BoundPod] = field(default_factory=dict)
    nominations: dict[str, Nomination] = field(default_factory=dict)
    gang_min: dict[str, int] = field(default_factory=dict)
    gangs: dict[str, Gang] = field(default_factory=dict)
    gang_of: dict[GangKey, str] = field(default_factory=dict)
    """Membership key -> the key of the (possibly merged) gang it is part of."""
    parts: dict[str, tuple[GangKey, ...]] = field(default_factory=dict)
    """Gang key -> the membership keys it was discovered from."""
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
    warnings: tuple[str, ...] = ()


class ClusterState:
    """Parsed objects plus incrementally maintained aggregates (see the module docstring)."""

    def __init__(self, *, nvlink_label: str = gpumod.NVLINK_LABEL) -> None:
        self.nvlink_label = nvlink_label
        """The node label GPU gangs that require NVLink are held to."""
        self.pods: dict[str, Pod] = {}
        self.nodes: dict[str, Node] = {}
        self.volcano_pgs: dict[str, volcano.PodGroup] = {}
        self.sigs_pgs: dict[str, koord.SigsPodGroup] = {}
        self.x_pgs: dict[str, schedplugins.XPodGroup] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.hypernodes: dict[str, volcano.HyperNode] = {}
        self.cnts: dict[str, koord.ClusterNetworkTopology] = {}
        self.jobs: dict[str, Job] = {}
        self.namespaces: dict[str, Namespace] = {}
        self.namespace_labels: dict[str, Mapping[str, str]] = {}
        """Namespace -> its labels, kept in step with `namespaces`; every snapshot reads it."""
        self._jobs_by_uid: dict[str, Job] = {}
        self.assumed: dict[str, str] = {}
        """pod key -> node: sent to bind, not yet seen bound."""
        self._members: dict[GangKey, set[str]] = {}
        self._key_of: dict[str, GangKey] = {}
        self._membership: dict[str, tuple[GangKey, GangSource]] = {}
        """Pod key -> the gang it names and the dialect naming it, computed when it changes."""
        self._linking: dict[GangKey, set[str]] = {}
        """Membership key -> its pods that carry a `groups` annotation (GangGroups)."""
        self._dirty: set[GangKey] = set()
        self._all_dirty = True
        self._topology_dirty = True
        self._budgets_dirty = True
        self._agg: _Aggregates | None = None
        self._members_memo: dict[str, tuple[Pod, GangPod, str | None]] = {}
        """Pod key -> (the model, its GangPod, its error), computed when the pod changes (as
        kube-scheduler builds a PodInfo in its event handler), so a cycle does not."""
        self._cover_memo: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[str, ...]] = {}
        self._budget_index: dict[str, list[Budget]] = {}
        self.generation = 0
        """Moves on every change that can alter a scheduling decision."""
        self.topology_generation = 0

    # --- events ---------------------------------------------------------------------------

    def store(self, kind: Kind) -> dict[str, Any]:
        """The dict holding `kind`'s objects by key (shared with whoever feeds the state)."""
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
        }
        return stores[kind]

    def put(self, kind: Kind, key: str, obj: Any, *, relevant: bool = True) -> None:
        """Add or replace an object. `relevant=False`: nothing a decision reads changed (a
        status heartbeat), so the stored model is replaced and no aggregate moves."""
        items = self.store(kind)
        old = items.get(key)
        items[key] = obj
        if relevant or old is None:
            self._changed(kind, key, old, obj)

    def delete(self, kind: Kind, key: str) -> None:
        old = self.store(kind).pop(key, None)
        if kind is Kind.POD:
            self.assumed.pop(key, None)
        if old is not None:
            self._changed(kind, key, old, None)

    def assume(self, pod_key: str, node: str) -> None:
        """The pod was sent to bind on `node`: it holds that room from now on."""
        self.assumed[pod_key] = node
        self._pod_dirty(pod_key)

    def forget(self, pod_key: str) -> bool:
        """The bind failed: the pod is pending again. True when it was assumed."""
        if self.assumed.pop(pod_key, None) is None:
            return False
        self._pod_dirty(pod_key)
        return True

    def _pod_dirty(self, pod_key: str) -> None:
        self.generation += 1
        key = self._key_of.get(pod_key)
        if key is not None:
            self._dirty.add(key)

    def _changed(self, kind: Kind, key: str, old: Any, new: Any) -> None:
        self.generation += 1
        if kind in _TOPOLOGY:
            self.topology_generation += 1
            self._topology_dirty = True
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
            before = self._key_of.pop(key, None)
            if before is not None:
                for table in (self._members, self._linking):
                    pods = table.get(before)
                    if pods is not None:
                        pods.discard(key)
                        if not pods:
                            del table[before]
                self._dirty.add(before)
            if new is not None:
                if self.assumed.get(key) is not None and new.spec.node_name:
                    del self.assumed[key]  # the binding is visible now
                mkey, _ = self._membership[key] = membership(new, self._jobs_by_uid)
                self._key_of[key] = mkey
                self._members.setdefault(mkey, set()).add(key)
                if koord.GANG_GROUPS in (new.metadata.annotations or {}):
                    self._linking.setdefault(mkey, set()).add(key)
                self._dirty.add(mkey)
                self._member(new)
            else:
                self._members_memo.pop(key, None)
                self._membership.pop(key, None)
        elif kind in _PODGROUPS:
            self._dirty.add(GangKey(key))
        elif kind is Kind.JOB:
            # A Job decides whether its pods form a GPU gang, and its size: its pods are keyed again.
            uid = (new or old).metadata.uid
            if uid:
                if new is not None:
                    self._jobs_by_uid[uid] = new
                else:
                    self._jobs_by_uid.pop(uid, None)
                for pod in [p for p in self.pods.values() if gpumod.job_uid_of(p) == uid]:
                    self._changed(Kind.POD, pod.key, pod, pod)

    def _member(self, pod: Pod) -> tuple[GangPod, str | None]:
        memo = self._members_memo.get(pod.key)
        if memo is not None and memo[0] is pod:
            return memo[1], memo[2]
        gp, error = gang_pod(pod, self.priority_classes)
        if pod is self.pods.get(pod.key):  # not an assumed copy: keep it
            self._members_memo[pod.key] = (pod, gp, error)
        return gp, error

    # --- the snapshot ---------------------------------------------------------------------

    def view(self, *, full: bool = False) -> ClusterView:
        """The next cycle's inputs: only what changed is recomputed, unless `full`.

        The snapshot is kept from one cycle to the next (kube-scheduler's UpdateSnapshot): the
        previous cycle's reservations are rolled back first, so a view is good until the next
        `view()` call, and the cycle may reserve on it freely."""
        if self._agg is not None:
            self._agg.snapshot.rollback()
        if full or self._agg is None or self._topology_dirty:
            self._agg = self._rebuild_topology()
            self._all_dirty = True
        agg = self._agg
        if self._all_dirty:
            self._reset(agg)
            keys: set[GangKey] = set(self._members)
        else:
            keys = self._dirty
        if self._budgets_dirty:
            self._recount_budgets(agg)
        if keys:
            self._rediscover(agg, keys)
            agg.snapshot._changed()  # bound pods may have moved: pod arrays are rebuilt on demand
        self._dirty = set()
        self._all_dirty = False
        snap = agg.snapshot
        snap.namespace_labels = self.namespace_labels
        snap.start_journal()
        pending = sorted(agg.pending, key=natural_key)
        # Budgets count the pods as the cycle starts; the cycle takes off what its preemptions use.
        budgets = budgets_from(list(self.pdbs.values()), snap, healthy=agg.healthy, covered=agg.covered)
        return ClusterView(
            tree=agg.tree,
            index=agg.index,
            snapshot=snap,
            gangs=agg.gangs,
            pending=pending,
            budgets=budgets,
            warnings=agg.warnings,
        )

    def _rebuild_topology(self) -> _Aggregates:
        nodes = sorted(self.nodes.values(), key=lambda n: natural_key(n.name))
        cnt = self.cnts.get(koord.CNT_DEFAULT_NAME)
        warnings: list[str] = []
        try:
            tree = topology_tree(nodes, self.hypernodes.values(), cnt)
        except InvalidSpecError as exc:
            warnings.append(f"ClusterNetworkTopology {koord.CNT_DEFAULT_NAME}: left out: {exc}")
            tree = TopologyTree.empty()
        warnings.extend(tree.warnings)
        index = build_index(nodes, tree)
        self._topology_dirty = False
        used = np.zeros_like(index.alloc)
        hits: dict[str, tuple[str, ...]] = {}
        snap = Snapshot(index=index, used=used, pods={}, gang_min={}, budget_hits=hits, keep_columns=True)
        return _Aggregates(
            tree=tree,
            index=index,
            snapshot=snap,
            used=used,
            bound=snap.pods,
            gang_min=snap.gang_min,
            nominations=snap.nominations,
            budget_hits=hits,
            warnings=tuple(warnings),
        )

    def _reset(self, agg: _Aggregates) -> None:
        agg.used[:] = 0
        agg.snapshot.clear_pods()  # agg.bound with it
        for table in (agg.nominations, agg.gang_min, agg.gangs, agg.gang_of, agg.parts, agg.links):
            table.clear()
        agg.budget_hits.clear()
        agg.healthy.clear()
        agg.covered.clear()
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
        for pod in agg.bound.values():
            self._count_budgets(agg, pod, +1)

    def _covering(self, pod: BoundPod) -> tuple[str, ...]:
        budgets = self._budget_index.get(pod.namespace)
        if not budgets:
            return ()
        memo_key = (pod.namespace, tuple(sorted(pod.labels.items())))
        hits = self._cover_memo.get(memo_key)
        if hits is None:
            hits = tuple(b.key for b in budgets if b.covers(pod.namespace, pod.labels))
            self._cover_memo[memo_key] = hits
        return hits

    def _count_budgets(self, agg: _Aggregates, pod: BoundPod, sign: int) -> None:
        hits = self._covering(pod) if sign > 0 else agg.budget_hits.pop(pod.key, ())
        if sign > 0:
            # Recorded even when empty: preemption reads "covered by none" instead of matching
            # the pod against every budget again.
            agg.budget_hits[pod.key] = hits
        for k in hits:
            agg.covered[k] = agg.covered.get(k, 0) + sign
            if not pod.terminating:
                agg.healthy[k] = agg.healthy.get(k, 0) + sign

    def _closure(self, agg: _Aggregates, keys: Iterable[GangKey]) -> set[GangKey]:
        """`keys` plus every membership key that may share a gang with one of them: the parts
        of the gangs they were in, and keys linked by a `groups` annotation either way.

        One walk, no recursion: a chain of a thousand gangs each listing the next is reached
        from its last gang through back-links, looked up in an index of the links as they
        stood before the walk (only keys the walk reaches have their links read afresh)."""
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
            gang = agg.gang_of.get(k)
            if gang is not None:
                todo.extend(agg.parts.get(gang, ()))
        return out

    def _links_of(self, key: GangKey) -> frozenset[GangKey]:
        raw: list[str] = []
        for pg in (self.sigs_pgs.get(key), self.x_pgs.get(key)):
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
                out.update(GangKey(g) for g in koord.parse_groups(text))
            except InvalidSpecError:
                continue  # discovery reports it on the gang
        out.discard(key)
        return frozenset(out)

    def _rediscover(self, agg: _Aggregates, dirty: Iterable[GangKey]) -> None:
        keys = self._closure(agg, dirty)
        # Take out what the gangs these keys were part of contributed.
        for gang_key in {agg.gang_of[k] for k in keys if k in agg.gang_of}:
            self._withdraw(agg, gang_key)
        for k in keys:
            agg.gang_of.pop(k, None)
            if k not in self._members:
                agg.links.pop(k, None)
        # Sorted: discovery takes a gang's dialect from its first pod, so the order must not
        # depend on the order events came in.
        pods = [self._as_planned(pk) for k in sorted(keys) for pk in sorted(self._members.get(k, ()))]
        if not pods:
            return
        groups = PodGroups(
            volcano=[self.volcano_pgs[k] for k in keys if k in self.volcano_pgs],
            koordinator=[self.sigs_pgs[k] for k in keys if k in self.sigs_pgs],
            scheduler_plugins=[self.x_pgs[k] for k in keys if k in self.x_pgs],
            jobs=list(self._jobs_by_uid.values()),
        )
        gangs = discover_gangs(
            pods,
            podgroups=groups,
            priority_classes=self.priority_classes.values(),
            tree=agg.tree,
            cnt=self.cnts.get(koord.CNT_DEFAULT_NAME),
            nvlink_label=self.nvlink_label,
            member=self._member,
            membership_of=self._membership_of,
        )
        for gang in gangs:
            self._contribute(agg, gang)

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

    def _withdraw(self, agg: _Aggregates, gang_key: str) -> None:
        gang = agg.gangs.pop(gang_key, None)
        agg.gang_min.pop(gang_key, None)
        agg.pending.discard(gang_key)
        for k in agg.parts.pop(gang_key, ()):
            agg.gang_of.pop(k, None)
        if gang is None:
            return
        for m in gang.pods:
            pod = agg.bound.get(m.key)
            if pod is not None:
                agg.snapshot.set_pod(None, m.key)
                agg.used[pod.node] -= pod.req
                self._count_budgets(agg, pod, -1)
            agg.nominations.pop(m.key, None)

    def _contribute(self, agg: _Aggregates, gang: Gang) -> None:
        index = agg.index
        agg.gangs[gang.key] = gang
        agg.gang_min[gang.key] = gang.min_member
        parts = tuple(sorted({self._key_of[m.key] for m in gang.pods}))
        agg.parts[gang.key] = parts
        for k in parts:
            agg.gang_of[k] = gang.key
        if gang.pending:
            agg.pending.add(gang.key)
        for m in gang.pods:
            pod = m.pod
            if m.node_name:
                pos = index.node_pos.get(m.node_name)
                if pos is None:
                    continue  # on a node we do not know (deleted): holds nothing we schedule on
                bp = BoundPod(
                    key=m.key,
                    namespace=pod.namespace,
                    node=pos,
                    req=request_vector(index, m.requests),
                    priority=m.priority,
                    gang=gang.key,
                    labels=pod.metadata.labels or {},
                    terminating=pod.metadata.deletion_timestamp is not None,
                    terms=PodTerms.of(pod),
                )
                agg.snapshot.set_pod(bp, m.key)
                agg.used[pos] += bp.req
                self._count_budgets(agg, bp, +1)
            elif pod.status is not None and pod.status.nominated_node_name:
                pos = index.node_pos.get(pod.status.nominated_node_name)
                if pos is not None:
                    agg.nominations[m.key] = Nomination(
                        m.key, gang.key, pos, request_vector(index, m.requests), gang.priority
                    )

    # --- sizes ----------------------------------------------------------------------------

    def estimate_bytes(self) -> int:
        """A rough size of the aggregates (not the parsed objects): arrays plus per-pod records."""
        agg = self._agg
        if agg is None:
            return 0
        per_pod = 200  # a BoundPod with its request row and dict slot
        return int(agg.used.nbytes + agg.index.alloc.nbytes + per_pod * len(agg.bound) + 400 * len(agg.gangs))
