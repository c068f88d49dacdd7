"""The page's data, as plain functions: objects in, JSON-able data out (no I/O here).

`build(objects)` reads one snapshot as `topobridge tree` does (`load_scenario(lenient=True)`
into the scheduler's own `ClusterState`, the state `prepare` reads) and keeps that state: the
model is the scheduler's picture of the cluster plus what the page draws of it. Nothing here
decides anything a second time: free and allocatable figures are the snapshot's arrays, placed
gangs and pending gangs' reasons are `cmd_tree`'s (`_gang_views`, `_pods_by_node`), and
explanations are the scheduling cycle's (`cmd_explain.explain_prepared`).

`update(model, changes)` applies a burst of watch events (added, changed or deleted objects)
to the same state, as the live scheduler's cache does: `ClusterState.view()` recomputes only
what they touch (a bind moves one pod's gang and one node's figures), and the page's figures
are array sums (per domain, two lookups in a prefix sum), formatted only for what a request
sends. A node change that only relabels it with labels no topology source reads is held back
from the state (the tree and every figure stay as they are: nothing drawn changes) until an
explanation needs the scheduler's labels. A node moved to another domain gives a new tree:
the domains' figures are summed again (array sums), and a gang's rows are made again only
when one of its nodes sits under other domains (`_moved_nodes`) or the gang itself changed. What cannot be applied piece by piece (a job the
scenario expands into pods, or a pod one owns; an object that cannot be read; a kind the
scheduler does not read) answers False: the caller builds the model again. Either way the model equals
`build(objects)` of the objects after the changes (tests/ui/test_ui_model.py).

What the page gets:
* `page(model)`: the summary (topology line, resources in colour order, tiers, counts, the first
  placed and pending gangs, the largest free room per tier, warnings) and the tree from the
  root down `DEPTH` levels;
* `gangs(model, which, query, offset, limit)`: one page of the placed or pending gangs whose
  key or reason contains `query`;
* `subtree(model, id)`: one domain and `DEPTH` levels below it, what the page fetches when it
  zooms. Nodes come with it only when the domain holds at most `NODE_LIMIT` of them (then the
  whole subtree is sent): a 10,000-node cluster travels as aggregates, its nodes one zoomed-in
  domain at a time;
* `explanation(model, gang)`: `Explanation.to_dict()` and its text, cached per snapshot.

Invariants: a domain's id is its name as the tree prints it (`cluster` for the root; a repeated
name gets `#2`, `#3` in tree order), so a zoom survives a redraw after a change; figures come as
scheduler units (millicores, bytes, GPUs) beside the same figures as people read them (`units`):
a free/allocatable pair in one unit (`26.4Ti/32Ti`, `36,108/80,000`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from controller.placer.cluster import ClusterState, ClusterView, Kind
from controller.placer.scenario import Prepared, Scenario, cluster_state, load_scenario
from controller.placer.snapshot import CLUSTER, I64, ClusterIndex
from topobridge.cmd_tree import Figures, PendingGang, PlacedGang, _Gangs
from topobridge.ui.units import RESOURCE_ORDER, figure_pairs, figures_text, readable
from translations import collector, kinds
from translations.topology import natural_key

DEPTH = 3
"""Levels of domains sent below the domain the page shows."""
NODE_LIMIT = 128
"""A domain's nodes are sent (and drawn) when it holds at most this many."""
PODS_SHOWN = 12
WARNINGS_SHOWN = 50
GANGS_SHOWN = 20
"""Placed and pending gangs in one page of a list (the counts say how many there are)."""
GANGS_MAX = 200
"""The most a page of a list asks for."""
FIGURES_KEPT = 100_000
REASON_SHOWN = 300
"""Characters of a pending gang's reason in the list (the explanation has all of it)."""

Change = tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]
"""One watch event: (the object before, the object after); None before: added, after: deleted."""


@dataclass
class Drawn:
    """What the page draws of one `ClusterView`: arrays over the index, gangs, pods per node."""

    ids: list[str]
    """Per index domain: its id (module docstring)."""
    by_id: dict[str, int]
    """id -> index domain (-1: the root)."""
    free: I64
    dom_alloc: I64
    dom_free: I64
    """[domain, resource]; row `n_domains` is the whole cluster."""
    placed: list[PlacedGang]
    pending: list[PendingGang]
    in_domain: dict[str, list[str]]


@dataclass
class Model:
    """One snapshot, read once, asked many times, brought up to date by `update`."""

    state: ClusterState
    view: ClusterView
    source: str
    drawn: Drawn
    pods_on: dict[str, list[tuple[str, str, str]]]
    """node -> (node, pod, state) as `cmd_tree._pods_by_node` lists them."""
    pod_rows: dict[str, tuple[str, tuple[str, str, str]]]
    """pod key -> its row in `pods_on` (node, row), to move it on a change."""
    pg_messages: dict[str, str]
    load_warnings: list[str]
    incremental: bool
    """False when the snapshot had jobs expanded into pods they lack (`update` then answers
    False): what a change makes of them is the expansion's to say."""
    held: dict[str, Any] = field(default_factory=dict)
    """Relabelled nodes not yet in `state` (module docstring), by name."""
    explained: dict[str, dict[str, Any]] = field(default_factory=dict)
    kept_prepared: Prepared | None = None
    """The view as `explain` takes it, kept until the view changes: `explain` keeps its cycle
    walk per prepared snapshot, so the ui's questions about one state share one walk."""
    orphans: dict[str, str] = field(default_factory=dict)
    """Pod key -> the warning of a pod bound to a node not in the snapshot."""
    rows: GangRows = field(default_factory=lambda: GangRows())
    shown: dict[bytes, dict[str, Any]] = field(default_factory=dict)
    """Figures as `_figures` formats them, by the numbers they are of (most domains' figures do
    not move between two updates)."""

    @property
    def index(self) -> ClusterIndex:
        return self.view.index

    @property
    def resources(self) -> list[str]:
        return [
            r for r in RESOURCE_ORDER if r in self.index.res_pos and self.drawn.dom_alloc[-1, self._pos(r)]
        ]

    @property
    def tiers(self) -> list[tuple[int, str]]:
        """(tier, name) from single nodes (0) up to the whole cluster."""
        index = self.index
        out = [(0, "node")]
        out += [(t, index.tree.tier_names.get(t, f"tier {t}")) for t in index.tiers]
        return [*out, (index.max_tier + 1, CLUSTER)]

    @property
    def warnings(self) -> list[str]:
        orphans = [self.orphans[k] for k in sorted(self.orphans, key=natural_key)]
        return [*self.load_warnings, *self.view.warnings, *orphans]

    def _pos(self, resource: str) -> int:
        return self.index.res_pos[resource]


def build(objects: Sequence[Mapping[str, Any]], *, source: str = "") -> Model:
    """The model of one snapshot (`objects` as `kubectl get -o yaml` lists them)."""
    from topobridge.cmd_tree import _podgroup_messages

    sc = load_scenario(objects, lenient=True)
    state = cluster_state(sc)
    view = state.view()
    pods_on, rows = _pod_rows(objects)
    m = Model(
        state,
        view,
        source,
        _drawn(view, {}, GangRows()),
        pods_on,
        rows,
        _podgroup_messages(objects),
        list(sc.warnings),
        incremental=not any(e.pods or e.pod_groups for e in sc.expansions),
    )
    m.drawn = _drawn(view, m.pg_messages, m.rows)
    m.orphans = _orphans(state, state.pods)
    return m


def _pod_rows(
    objects: Iterable[Mapping[str, Any]],
) -> tuple[dict[str, list[tuple[str, str, str]]], dict[str, tuple[str, tuple[str, str, str]]]]:
    from topobridge.cmd_tree import _pods_by_node

    pods_on = _pods_by_node(objects, lambda _ns, _name: True, short=False)
    rows = {row[1]: (node, row) for node, listed in pods_on.items() for row in listed}
    return pods_on, rows


@dataclass(frozen=True, slots=True)
class _Row:
    """One gang's rows, and what they were made of."""

    gang: Any
    message: str | None
    lists: _Gangs
    nodes: frozenset[str]
    """The nodes its bound pods are on, where its rows read their places (none for a pod of
    no gang: it is never listed as placed)."""

    def made_of(self, g: Any, message: str | None) -> bool:
        """Whether `g` with `message` makes these rows: the same gang, or (a pod of no gang,
        whose `Gang` is made afresh when read) the same member read from the same pod."""
        if self.message != message:
            return False
        if self.gang is g:
            return True
        was = self.gang
        return bool(g.source == "none" == was.source and g.pods[0] is was.pods[0] and g.error == was.error)


@dataclass
class GangRows:
    """Each gang's rows in the lists (`cmd_tree._gang_views` of that gang alone), kept while
    its `Gang` (which `ClusterState` replaces when any of its members changes; `_Row.made_of`),
    its PodGroup's message and the index stay the same."""

    rows: dict[str, _Row] = field(default_factory=dict)
    order: dict[str, Any] = field(default_factory=dict)
    """Gang key -> its natural sort key."""
    names: dict[str, str] = field(default_factory=dict)
    """Gang key -> its `namespace/name` (what PodGroup messages are keyed by)."""

    def keep_unmoved(self, moved: set[str] | None) -> None:
        """On a new index: the rows of gangs with a bound pod on a `moved` node are made again
        (where a gang is placed is read from its nodes' domains); None: every row is."""
        if moved is None:
            self.rows = {}
            return
        self.rows = {key: hit for key, hit in self.rows.items() if hit.nodes.isdisjoint(moved)}

    def lists(self, index: ClusterIndex, gangs: Mapping[str, Any], messages: Mapping[str, str]) -> _Gangs:
        from topobridge.cmd_tree import _gang_views

        fresh: dict[str, _Row] = {}
        for key, g in gangs.items():
            name = self.names.get(key)
            if name is None:
                name = self.names[key] = g.name
            msg = messages.get(name)
            hit = self.rows.get(key)
            if hit is None or not hit.made_of(g, msg):
                views = _gang_views(index, [g], {name: msg} if msg is not None else {})
                nodes = (
                    frozenset() if g.source == "none" else frozenset(p.pod.spec.node_name for p in g.bound)
                )
                hit = _Row(g, msg, views, nodes)
            fresh[key] = hit
            if key not in self.order:
                self.order[key] = natural_key(key)
        self.rows = fresh
        out = _Gangs()
        for key in sorted(fresh, key=self.order.__getitem__):
            one = fresh[key].lists
            out.placed += one.placed
            out.pending += one.pending
            for domain, keys in one.in_domain.items():
                out.in_domain.setdefault(domain, []).extend(keys)
        return out


def _drawn(view: ClusterView, pg_messages: Mapping[str, str], rows: GangRows) -> Drawn:
    index = view.index
    free = index.alloc - view.snapshot.used
    gangs = rows.lists(index, view.gangs, pg_messages)
    ids = _domain_ids(index)
    by_id = {ident: d for d, ident in enumerate(ids)}
    by_id[CLUSTER] = -1
    return Drawn(
        ids,
        by_id,
        free,
        _domain_sums(index, index.alloc),
        _domain_sums(index, free),
        gangs.placed,
        gangs.pending,
        gangs.in_domain,
    )


def _domain_ids(index: ClusterIndex) -> list[str]:
    """Each domain's name, `#2`, `#3` added to a repeated one, in tree order."""
    ids = [""] * index.n_domains
    seen = {CLUSTER}
    stack = list(reversed(index.roots))
    while stack:
        d = stack.pop()
        name = ident = index.domain_label(d)
        n = 1
        while ident in seen:
            n += 1
            ident = f"{name}#{n}"
        seen.add(ident)
        ids[d] = ident
        stack.extend(reversed(index.dom_children[d]))
    return ids


def _domain_sums(index: ClusterIndex, per_node: I64) -> I64:
    """[domain, resource] sums of `per_node` over each domain's node range, and the whole
    cluster as the last row."""
    sums = np.zeros((per_node.shape[0] + 1, per_node.shape[1]), dtype=np.int64)
    np.cumsum(per_node, axis=0, out=sums[1:])
    out = sums[index.dom_end] - sums[index.dom_start]
    return np.vstack([out, sums[-1:]])


# --- bringing it up to date -------------------------------------------------------------------


def update(m: Model, changes: Sequence[Change]) -> bool:
    """Apply `changes` (module docstring). False: nothing was applied, build the model again.

    The cyclic collector is held off meanwhile (`collector.paused`): a change that moves the
    tree redraws every gang's rows, and a full collection in the middle walks every object of
    the cluster (measured at half of such an update at 10,000 nodes)."""
    with collector.paused():
        return _apply(m, changes)


def _apply(m: Model, changes: Sequence[Change]) -> bool:
    from topobridge.cmd_tree import _podgroup_messages

    if not m.incremental or m.load_warnings:
        return False
    parsed = [_parse(old, new) for old, new in changes]
    if any(p is None for p in parsed):
        return False
    for (old, new), change in zip(changes, parsed, strict=True):
        assert change is not None
        kind, key, obj = change
        if kind is Kind.NODE:
            _put_node(m, key, obj)
            continue
        _put(m, kind, key, obj)
        if kind is Kind.POD:
            _move_pod(m, old, new)
            m.orphans.pop(key, None)
            m.orphans.update(_orphans(m.state, {key: obj} if obj is not None else {}))
        elif kind.value.kind == "PodGroup":
            before = _podgroup_messages([old] if old else [])
            m.pg_messages = {k: v for k, v in m.pg_messages.items() if k not in before}
            m.pg_messages.update(_podgroup_messages([new] if new else []))
    _refresh(m, m.state.view())
    return True


def _put_node(m: Model, name: str, node: Any) -> None:
    """A node changed: held back when only relabelled (module docstring), else put; the pods
    bound to nowhere are looked for again only when a node came or went."""
    if _relabel_only(m, name, node):
        m.held[name] = node
        return
    there = name in m.state.nodes
    _put(m, Kind.NODE, name, node)
    if there != (name in m.state.nodes):
        m.orphans = _orphans(m.state, m.state.pods)


def _put(m: Model, kind: Kind, key: str, obj: Any) -> None:
    if kind is Kind.NODE:
        _release(m)  # held relabels first, in the order they came
    if obj is None:
        m.state.delete(kind, key)
    else:
        m.state.put(kind, key, obj)


def _release(m: Model) -> None:
    for name, node in m.held.items():
        m.state.put(Kind.NODE, name, node)
    m.held.clear()


def _refresh(m: Model, view: ClusterView) -> None:
    m.explained.clear()
    m.kept_prepared = None
    before = m.view.index
    if view.index is not before:  # a new tree: only what cannot have changed is kept
        m.rows.keep_unmoved(_moved_nodes(before, view.index))
        if before.resources != view.index.resources:
            m.shown = {}  # figures are formatted over the resource axis
        m.drawn = _drawn(view, m.pg_messages, m.rows)
        m.view = view
        return
    m.view = view
    index = view.index
    d = m.drawn
    d.free = index.alloc - view.snapshot.used
    d.dom_free = _domain_sums(index, d.free)
    gangs = m.rows.lists(index, view.gangs, m.pg_messages)
    d.placed, d.pending, d.in_domain = gangs.placed, gangs.pending, gangs.in_domain


def _moved_nodes(before: ClusterIndex, after: ClusterIndex) -> set[str] | None:
    """The nodes of `before` whose place differs in `after`: gone, or under other domains (by
    name and tier, innermost first), the names a gang's place is told by. None: the tiers
    changed, every place may read otherwise."""
    if before.max_tier != after.max_tier or before.node_anc.shape[1] != after.node_anc.shape[1]:
        return None
    if not after.n_nodes:
        return set(before.node_names)
    names = before.node_names
    kept, pos = _rows_after(before, after)
    places = [_same_domain(before, after)[before.node_anc], after.node_anc[np.where(kept, pos, 0)]]
    moved = ~kept | np.any(places[0] != places[1], axis=1)
    return {names[v] for v in np.flatnonzero(moved)}


def _rows_after(before: ClusterIndex, after: ClusterIndex) -> tuple[Any, I64]:
    """Per node of `before`: whether `after` has it, and its row there (-1 where not). The same
    nodes (a node relabelled) are matched by their name ranks, without a lookup per node."""
    if before.node_pos.keys() == after.node_pos.keys():
        row_of_rank = np.empty(after.n_nodes, dtype=np.int64)
        row_of_rank[after.node_name_rank] = np.arange(after.n_nodes, dtype=np.int64)
        pos = row_of_rank[before.node_name_rank]
    else:
        names = before.node_names
        pos = np.fromiter((after.node_pos.get(n, -1) for n in names), dtype=np.int64, count=len(names))
    return pos >= 0, pos


def _same_domain(before: ClusterIndex, after: ClusterIndex) -> I64:
    """Per domain of `before`, then -1 (past the top): the domain of `after` of the same name
    and tier, -2 where there is none."""
    out = np.full(before.n_domains + 1, -1, dtype=np.int64)
    for d, ident in enumerate(before.dom_ids):
        a = after.dom_pos.get(ident, -2)
        out[d] = a if a >= 0 and after.dom_tier[a] == before.dom_tier[d] else -2
    return out


def _parse(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> tuple[Kind, str, Any] | None:
    """(store, key, the object as the scheduler reads it, None when deleted); None: an object
    this path does not apply (the caller builds again, which says what is wrong with it)."""
    from controller.placer.scenario import _read
    from translations.envelope import name_problems

    raw = new if new is not None else old
    if raw is None or _expanded(old) or _expanded(new):
        return None
    read = kinds.scheduler_kind(str(raw.get("apiVersion") or ""), str(raw.get("kind") or ""))
    if read is None or name_problems(raw, require_name=True):
        return None
    kind = Kind(read.api)
    meta = raw.get("metadata") or {}
    key = f"{meta.get('namespace') or 'default'}/{meta['name']}" if kind.value.namespaced else meta["name"]
    if new is None:
        return kind, key, None
    try:
        obj = _read(kind, new)
    except Exception:
        return None
    return (kind, key, obj) if obj is not None else None


def _expanded(raw: Mapping[str, Any] | None) -> bool:
    """A Job, or a pod a Job owns: reading the snapshot expands a Job into the pods it lacks
    (`load_scenario`), so a change to either is the expansion's to apply."""
    if raw is None:
        return False
    if raw.get("kind") == "Job":
        return True
    owners = (raw.get("metadata") or {}).get("ownerReferences") or []
    return any(isinstance(o, Mapping) and o.get("kind") == "Job" for o in owners)


def _relabel_only(m: Model, name: str, node: Any) -> bool:
    """The node is there and only its labels changed, none a topology source reads."""
    if node is None or m.state.hypernodes:
        return False
    before = m.held.get(name) or m.state.nodes.get(name)
    if before is None:
        return False
    old, new = before.metadata.labels or {}, node.metadata.labels or {}
    moved = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
    return not any(_topology_key(m, k) for k in moved) and _same_but_labels(before, node)


def _same_but_labels(before: Any, node: Any) -> bool:
    a, b = before.model_dump(), node.model_dump()
    for d in (a, b):
        d["metadata"] = {k: v for k, v in d["metadata"].items() if k not in ("labels", "resource_version")}
    return bool(a == b)


def _topology_key(m: Model, key: str) -> bool:
    """Whether any tree source could read node label `key`: the hostname, the node-label
    trees' keys, the ClusterNetworkTopology's layers, any Kueue Topology's levels."""
    from translations.topology import HOSTNAME_LABEL, _is_topology_key

    if key == HOSTNAME_LABEL or _is_topology_key(key):
        return True
    for cnt in m.state.cnts.values():
        if any(key in (layer.label_key or ()) for layer in cnt.layers_bottom_up()):
            return True
    return any(key == level.node_label for t in m.state.kueue_topologies.values() for level in t.spec.levels)


def _move_pod(m: Model, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
    """The pod's row in `pods_on`, as `_pods_by_node` would list it now."""
    for raw in (old, new):
        if raw is None:
            continue
        meta = raw.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        row = m.pod_rows.pop(key, None)
        if row is not None:
            listed = m.pods_on[row[0]]
            listed.remove(row[1])
            if not listed:
                del m.pods_on[row[0]]
    if new is None:
        return
    now, rows = _pod_rows([new])
    for node, listed in now.items():
        here = m.pods_on.setdefault(node, [])
        here.extend(listed)
        here.sort(key=lambda t: (t[2] != "running", natural_key(t[1])))
    m.pod_rows.update(rows)


def _orphans(state: ClusterState, pods: Mapping[str, Any]) -> dict[str, str]:
    """Of `pods`, those bound to a node not in the snapshot, with the warning `prepare` gives."""
    return {
        p.key: f"pod {p.key}: holds nothing: bound to node {p.spec.node_name}, which is not in the snapshot"
        for p in pods.values()
        if not p.terminal and p.bound and p.spec.node_name not in state.nodes
    }


# --- what the page fetches ------------------------------------------------------------------


def page(m: Model) -> dict[str, Any]:
    """Everything the page draws first: the summary and the tree's top `DEPTH` levels."""
    from topobridge.treeview import topology_line

    d = m.drawn
    warnings = m.warnings
    return {
        "source": m.source,
        "topology": topology_line(m.index),
        "resources": m.resources,
        "tiers": [{"tier": t, "name": n} for t, n in m.tiers],
        "counts": {
            "nodes": m.index.n_nodes,
            "domains": m.index.n_domains,
            "placed": len(d.placed),
            "pending": len(d.pending),
        },
        "placed": gangs(m, "placed"),
        "pending": gangs(m, "pending"),
        "largest": largest(m),
        "warnings": warnings[:WARNINGS_SHOWN],
        "warningCount": len(warnings),
        "nodeLimit": NODE_LIMIT,
        "tree": subtree(m, CLUSTER),
    }


def gangs(m: Model, which: str, query: str = "", offset: int = 0, limit: int = GANGS_SHOWN) -> dict[str, Any]:
    """One page of the placed or pending gangs whose key (or reason) contains `query`, any case."""
    listed: Sequence[PlacedGang | PendingGang] = m.drawn.placed if which == "placed" else m.drawn.pending
    q = query.strip().lower()
    if q:
        listed = [g for g in listed if q in g.gang.lower() or q in getattr(g, "reason", "").lower()]
    offset = max(0, min(offset, len(listed)))
    limit = max(1, min(limit, GANGS_MAX))
    items = [_gang_data(g) for g in listed[offset : offset + limit]]
    total = len(m.drawn.placed if which == "placed" else m.drawn.pending)
    return {
        "which": which,
        "query": query,
        "total": total,
        "matched": len(listed),
        "offset": offset,
        "items": items,
    }


def _gang_data(g: PlacedGang | PendingGang) -> dict[str, Any]:
    data = g.to_dict()
    if isinstance(g, PendingGang):
        data["reasonLength"] = len(g.reason)
        if len(g.reason) > REASON_SHOWN:
            data["reason"] = g.reason[:REASON_SHOWN] + "…"
    return data


def subtree(m: Model, ident: str) -> dict[str, Any] | None:
    """Domain `ident` with `DEPTH` levels below it, and every node when it holds few enough;
    with the path of ids from the root down to it, for the breadcrumb. None: no such domain."""
    d = m.drawn.by_id.get(ident)
    if d is None:
        return None
    detailed = _node_count(m, d) <= NODE_LIMIT
    data = _domain_data(m, d, depth=-1 if detailed else DEPTH, nodes=detailed)
    path: list[dict[str, str]] = []
    at = d
    while at >= 0:
        path.append({"id": m.drawn.ids[at], "name": m.index.domain_label(at)})
        at = int(m.index.dom_parent[at])
    path.append({"id": CLUSTER, "name": CLUSTER})
    data["path"] = path[::-1]
    return data


def _node_count(m: Model, d: int) -> int:
    index = m.index
    return index.n_nodes if d < 0 else int(index.dom_end[d] - index.dom_start[d])


def _domain_data(m: Model, d: int, *, depth: int, nodes: bool) -> dict[str, Any]:
    """Domain `d` (-1: the root); depth < 0: every level below."""
    index, drawn = m.index, m.drawn
    if d < 0:
        kids, direct = list(index.roots), range(*index.loose)
        name, tier, source = CLUSTER, index.max_tier + 1, None
    else:
        kids = list(index.dom_children[d])
        direct = range(int(index.dom_start[d]), int(index.dom_direct_end[d]))
        name, tier = index.domain_label(d), int(index.dom_tier[d])
        source = index.tree.domains[index.dom_ids[d]].source
    out: dict[str, Any] = {
        "id": drawn.ids[d] if d >= 0 else CLUSTER,
        "name": name,
        "tier": tier,
        "source": source,
        "nodeCount": _node_count(m, d),
        "directNodes": len(direct),
        **_figures(m, drawn.dom_alloc[d], drawn.dom_free[d]),
        "gangs": drawn.in_domain.get(name, []),
    }
    if depth == 0:
        out["domains"] = None  # more below: fetched when the page zooms in
    else:
        out["domains"] = [_domain_data(m, k, depth=depth - 1, nodes=nodes) for k in kids]
    if nodes:
        out["nodes"] = [_node_data(m, v) for v in direct]
    return out


def _figures(m: Model, alloc: I64, free: I64) -> dict[str, Any]:
    """The main resources' figures: numbers (scheduler units), readable pairs, the text line
    (formatted once per distinct figures: `Model.shown`)."""
    key = alloc.tobytes() + free.tobytes()
    found = m.shown.get(key)
    if found is None:
        if len(m.shown) > FIGURES_KEPT:
            m.shown.clear()
        found = m.shown[key] = _format_figures(m, alloc, free)
    return found


def _format_figures(m: Model, alloc: I64, free: I64) -> dict[str, Any]:
    from topobridge.treeview import MAIN_RESOURCES

    index = m.index
    a = {r: int(alloc[p]) for r, p in index.res_pos.items()}
    f = {r: int(free[p]) for r, p in index.res_pos.items()}
    main = sorted(r for r, _ in MAIN_RESOURCES if a.get(r))
    units = Figures({r: a[r] for r in main}, {r: f[r] for r in main})
    shown_free, shown_alloc = figure_pairs(units)
    return {
        "alloc": shown_alloc,
        "free": shown_free,
        "units": {"alloc": units.allocatable, "free": units.free},
        "text": figures_text(index, f, a),
    }


def _node_data(m: Model, v: int) -> dict[str, Any]:
    name = m.index.node_names[v]
    pods = m.pods_on.get(name, [])
    return {
        "name": name,
        **_figures(m, m.index.alloc[v], m.drawn.free[v]),
        "pods": [{"name": p, "state": s} for _, p, s in pods[:PODS_SHOWN]],
        "podCount": len(pods),
    }


def largest(m: Model) -> list[dict[str, Any]]:
    """Per tier, per resource: the domain (a node at tier 0) with the most free now, and how
    much; the room the largest gang of that tier could take (ties: the first by name)."""
    index, drawn = m.index, m.drawn
    out: list[dict[str, Any]] = []
    for tier, name in m.tiers:
        if tier == 0:
            rows, free, ranks = np.arange(index.n_nodes), drawn.free, index.node_name_rank
            label: Callable[[int], str] = index.node_names.__getitem__
        elif tier > index.max_tier:
            rows, free, ranks = (
                np.asarray([index.n_domains]),
                drawn.dom_free,
                np.zeros(index.n_domains + 1, dtype=np.int64),
            )
            label = lambda _d: CLUSTER  # noqa: E731
        else:
            rows, free = index.tier_domains.get(tier, np.zeros(0, dtype=np.int64)), drawn.dom_free
            ranks, label = index.dom_name_rank, index.domain_label
        best: dict[str, Any] = {}
        for r in m.resources if len(rows) else ():
            col = free[rows, m._pos(r)]
            pick = int(rows[np.lexsort((ranks[rows], -col))[0]])
            amount = int(free[pick, m._pos(r)])
            best[r] = {"domain": label(pick), "free": amount, "freeText": readable(r, amount)}
        out.append({"tier": tier, "name": name, "best": best})
    return out


def explanation(m: Model, gang: str) -> dict[str, Any] | None:
    """Why `gang` waits, from the cycle (`topobridge explain`'s answer); None: no such gang."""
    if gang not in m.explained:
        from controller.placer.explain import render
        from topobridge.cmd_explain import explain_prepared

        if m.held:  # the scheduler reads labels: the held ones join the state first
            _release(m)
            _refresh(m, m.state.view())
        found = explain_prepared(_scenario(m), prepared(m), gang)
        if found is None:
            return None
        m.explained[gang] = {"gang": gang, "explanation": found.to_dict(), "text": render(found)}
    return m.explained[gang]


def prepared(m: Model) -> Prepared:
    """The snapshot as `prepare` hands it to `explain`: the state's current view (one object
    per view, `Model.kept_prepared`)."""
    if m.kept_prepared is None:
        v = m.view
        gangs = sorted(v.gangs.values(), key=lambda g: natural_key(g.key))
        m.kept_prepared = Prepared(v.tree, v.index, v.snapshot, gangs, m.warnings)
    return m.kept_prepared


def _scenario(m: Model) -> Scenario:
    loaded = {kind: list(m.state.store(kind).values()) for kind in Kind}
    return Scenario.of(loaded, warnings=list(m.load_warnings), lenient=True)
