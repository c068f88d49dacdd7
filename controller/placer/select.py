"""Select: choose where a gang goes and which pod lands on which node.

The rules of where a gang may go are the placement plugins' (`framework`: PlacementGenerate,
PlacementScore, PlacementFeasible), asked through the demand (`demand.Placing`); this module
owns none and imports none of them.

1. Levels, lowest first: what the PlacementGenerate plugins leave (NetworkTopology: single
   nodes, each tier up to the constraint's, the whole cluster for soft and unconstrained gangs;
   KueueTAS: from the requested level up). A plugin may choose the node set itself instead
   (GPU, Kueue's LeastFreeCapacity): the gang goes there or nowhere.
2. Candidates at the lowest level where anything fits, ordered by: more already-bound members
   of the gang inside (Koordinator's ExistingPodNum), the higher Score (the runner's weighted
   sum of the Score plugins; a domain's is its best node's), fewest leftover slots (binpack),
   then the PlacementScore plugins' keys (NetworkTopology: the enclosing domains' leftovers,
   innermost first), then name.
3. Descent: inside the chosen domain, children with the most slots are taken first so the gang
   spans as few lower domains as possible; the child that completes the gang is swapped for the
   smallest one that still completes it (binpack). The leader's node, when there is one, is
   pinned first so the leader sits with its workers.
4. Layout: pods in rank order fill the chosen nodes in tree order, so consecutive ranks share a
   node, then a block, then a spine. The rank (network-topology-index) decides the mapping;
   names only break ties between unranked pods.

A placement stands when every PlacementFeasible plugin accepts it (GPU: its node count and
per-node minimum).

Subgroups are placed first, each at the lowest tier inside the gang's domain that holds it,
then the rest of the gang. That part is greedy: it never breaks a constraint but may miss a
packing that exists, so candidates are tried in order until one works.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

import numpy as np

from controller.placer.demand import GangDemand, NodeSet, SubGroupPart, sub_demand, without_subgroups
from controller.placer.memo import MemoSlot
from controller.placer.offer import BIG, Offers, class_slots, evaluate, range_mins, range_sums, slice_slots
from controller.placer.ruled import place_ruled
from controller.placer.snapshot import CLUSTER, I64, Bool, ClusterIndex, lexsort_first

MAX_TRIES = 64
"""Candidates tried per level when a placement may fail after the offer check (mixed, subgroups)."""


@dataclass(frozen=True)
class Where:
    """A place that may hold a gang: one node, one domain, or the whole cluster."""

    kind: str
    """"node", "domain" or "cluster"."""
    idx: int

    def range(self, index: ClusterIndex) -> tuple[int, int]:
        if self.kind == "node":
            return self.idx, self.idx + 1
        if self.kind == "domain":
            return int(index.dom_start[self.idx]), int(index.dom_end[self.idx])
        return 0, index.n_nodes

    def label(self, index: ClusterIndex) -> str:
        if self.kind == "node":
            return index.node_names[self.idx]
        if self.kind == "domain":
            return index.domain_label(self.idx)
        return CLUSTER

    def tier(self, index: ClusterIndex) -> int:
        if self.kind == "node":
            return 0
        if self.kind == "domain":
            return int(index.dom_tier[self.idx])
        return index.max_tier + 1


@dataclass(frozen=True)
class Placement:
    """Every pod of the demand on a node."""

    assignments: tuple[tuple[int, int], ...]
    """(position in demand.pods, node index), rank order."""
    chosen: Where
    """The candidate the selection settled on."""
    nominated: bool = False
    """True when the gang simply took the nodes it had been nominated to."""


def _anchor_ok(lo: I64, hi: I64, demand: GangDemand) -> Bool:
    if len(demand.anchors) == 0:
        return np.ones(len(lo), dtype=np.bool_)
    amin, amax = int(demand.anchors[0]), int(demand.anchors[-1])
    return (lo <= amin) & (hi > amax)


def candidates(
    level: int | str,
    offers: Offers,
    index: ClusterIndex,
    within: tuple[int, int] | None = None,
    *,
    limit: int | None = None,
) -> list[Where]:
    """Fitting candidates at one level, best first; the first `limit` of them when given (the
    order is computed over all, only the `Where`s past the limit are not made)."""
    demand = offers.demand
    n = demand.n
    hard = demand.constraint is not None and demand.constraint.binds
    if level == CLUSTER:
        return [Where("cluster", -1)] if offers.total_fit else []
    existing_node = np.zeros(index.n_nodes, dtype=np.int64)
    if len(demand.anchors):
        np.add.at(existing_node, demand.anchors, 1)
    if level == 0:
        idx = np.flatnonzero(offers.node_fit)
        if within is not None:
            idx = idx[(idx >= within[0]) & (idx < within[1])]
        if hard and len(demand.anchors):
            idx = idx[_anchor_ok(idx, idx + 1, demand)]
        if len(idx) == 0:
            return []
        leftover = offers.raw_slots[idx] - n if demand.kind == "uniform" else offers.node_offer[idx] - n
        keys = demand.placing.order(demand, index, index.node_anc, idx, offers.dom_offer)
        pref = _preference(demand, index)
        order = lexsort_first(
            (index.node_name_rank[idx], *reversed(keys), leftover, -pref[0][idx], -existing_node[idx]),
            limit,
            len(idx),
        )
        return [Where("node", i) for i in idx[order].tolist()]
    doms = index.tier_domains.get(int(level), np.zeros(0, np.int64))
    doms = doms[offers.dom_fit[doms]]
    if within is not None:
        doms = doms[(index.dom_start[doms] >= within[0]) & (index.dom_end[doms] <= within[1])]
    if hard and len(demand.anchors):
        doms = doms[_anchor_ok(index.dom_start[doms], index.dom_end[doms], demand)]
    if len(doms) == 0:
        return []
    cs = np.zeros(index.n_nodes + 1, dtype=np.int64)
    np.cumsum(existing_node, out=cs[1:])
    existing = cs[index.dom_end[doms]] - cs[index.dom_start[doms]]
    leftover = (_kueue_room(offers, index) if demand.kueue_tas else offers.dom_offer)[doms] - n
    keys = demand.placing.order(demand, index, index.dom_anc, doms, offers.dom_offer)
    pref = _preference(demand, index)
    order = lexsort_first(
        (index.dom_name_rank[doms], *reversed(keys), leftover, -pref[1][doms], -existing), limit, len(doms)
    )
    return [Where("domain", d) for d in doms[order].tolist()]


def _kueue_room(offers: Offers, index: ClusterIndex) -> I64:
    """Per domain, what Kueue's BestFit compares (the tightest domain that holds the pod set):
    pod slots not capped at the gang's size, in whole slices when it has slices. Capped, every
    domain holding the gang ties and tree order would choose. Offers of other shapes than
    `uniform` are compared as offered."""
    if offers.demand.kind != "uniform":
        return offers.dom_offer
    if offers.demand.slices:
        return slice_slots(offers.raw_slots, offers.demand.slices, index)[1]
    return range_sums(offers.raw_slots, index)


def _preference(demand: GangDemand, index: ClusterIndex) -> tuple[I64, I64]:
    """The Score of every node (the Score plugins' weighted sum, `filtering.run_scores`), and
    of every domain (its best node); zeros when no plugin scores."""
    score = demand.rules.score if demand.rules is not None else None
    if score is None:
        return np.zeros(index.n_nodes, np.int64), np.zeros(index.n_domains, np.int64)
    dom = -range_mins(-score, index)
    return score, np.where(dom <= -BIG, 0, dom)


def select(
    demand: GangDemand, free: I64, index: ClusterIndex, offers: Offers | None = None
) -> Placement | None:
    """The placement of the whole demand, or None when no allowed place holds it."""
    chosen = demand.placing.choose(demand, free, index)
    if chosen is not None:
        return _of_node_set(demand, chosen.node_set)
    offers = offers if offers is not None else evaluate(free, demand, index)
    for level in demand.placing.levels(demand, index):
        tries = 1 if demand.exact else MAX_TRIES
        for where in candidates(level, offers, index, limit=tries):
            placed = place_in(where, demand, free, index, offers)
            if placed is not None and demand.placing.feasible(demand, index, placed.assignments):
                return placed
    return None


def _of_node_set(demand: GangDemand, node_set: NodeSet | None) -> Placement | None:
    """The placement of a node set a PlacementGenerate plugin chose (a uniform demand)."""
    if node_set is None:
        return None
    assignments = tuple(sorted(_layout(demand.classes[0].pods, node_set.counts)))
    return Placement(assignments, Where(node_set.kind, node_set.idx))


def place_in(
    where: Where, demand: GangDemand, free: I64, index: ClusterIndex, offers: Offers | None = None
) -> Placement | None:
    """Place every pod of `demand` inside `where` (subgroups first), or None."""
    if not demand.placed_subgroups:
        got = _place_plain(where, demand, free, index, offers)
        return Placement(tuple(got), where) if got is not None else None
    placed = _place_subgroups(where, demand, free, index)
    # Subgroups are placed part by part: the rules between members are checked on the whole.
    if placed is not None and demand.rules is not None and not demand.rules.holds(placed.assignments):
        return None
    return placed


def _place_subgroups(where: Where, demand: GangDemand, free: I64, index: ClusterIndex) -> Placement | None:
    """Each subgroup in turn (`_place_subgroup`), on what the ones before it left; then the
    members in no subgroup anywhere in `where`."""
    work = free.copy()
    out: dict[int, int] = {}
    for part in demand.placed_subgroups:
        members = sorted(part.pods)
        sd = without_subgroups(sub_demand(demand, members, index))
        # The subgroup's own constraint, held against its own bound members only.
        sd = replace(sd, constraint=part.subgroup.constraint, anchors=part.anchors)
        got = _place_subgroup(sd, where, work, index)
        if got is None:
            return None
        for pos, node in got:
            out[members[pos]] = node
            work[node] -= _req_of(sd, pos)
    rest = [i for i in range(demand.n) if i not in out]
    if rest:
        rd = without_subgroups(sub_demand(demand, rest, index))
        got = _place_plain(where, rd, work, index, None)
        if got is None:
            return None
        for pos, node in got:
            out[rest[pos]] = node
    return Placement(tuple(sorted(out.items())), where)


def _place_subgroup(
    sd: GangDemand, where: Where, work: I64, index: ClusterIndex
) -> list[tuple[int, int]] | None:
    """One subgroup (`sd`, under its own constraint) inside `where`: at the lowest level its
    constraint allows that holds it, candidates in order. The cluster level (a soft subgroup's
    last resort, a hard one's when its tier is above every tier of the tree) is `where` itself:
    a subgroup never leaves its gang's domain, and a soft gang's tier never caps it."""
    sub_offers = evaluate(work, sd, index)
    for level in sd.placing.levels(sd, index):
        if level == CLUSTER:
            return _place_plain(where, sd, work, index, None)
        for cand in candidates(level, sub_offers, index, within=where.range(index), limit=MAX_TRIES):
            got = _place_plain(cand, sd, work, index, sub_offers)
            if got is not None:
                return got
    return None


def subgroups_ready(demand: GangDemand, placed: Collection[int], minimum: Sequence[tuple[str, int]]) -> bool:
    """Volcano's minSubGroups: for each policy, at least that many of its subgroups are ready
    (bound members plus those of `placed`, positions in `demand.pods`, reach its size)."""
    if not minimum:
        return True
    ready: Counter[str] = Counter()
    for part in demand.subgroups:
        sg = part.subgroup
        have = part.bound + sum(1 for p in part.pods if p in placed)
        if have >= (sg.ready_size or len(sg.pods)):
            ready[sg.policy] += 1
    return all(ready[name] >= least for name, least in minimum)


def _required_first(demand: GangDemand, minimum: Sequence[tuple[str, int]]) -> list[SubGroupPart]:
    """The subgroups with pending members, those a minSubGroups still needs first (per policy,
    its first ones in order, past those its bound members already make ready)."""
    still = dict(minimum)
    for part in demand.subgroups:
        if not part.pods and part.bound >= (part.subgroup.ready_size or len(part.subgroup.pods)):
            still[part.subgroup.policy] = still.get(part.subgroup.policy, 0) - 1
    first: list[SubGroupPart] = []
    later: list[SubGroupPart] = []
    for part in demand.placed_subgroups:
        name = part.subgroup.policy
        if still.get(name, 0) > 0:
            still[name] -= 1
            first.append(part)
        else:
            later.append(part)
    return [*first, *later]


def select_partial(
    demand: GangDemand, free: I64, index: ClusterIndex, required: int, minimum: Sequence[tuple[str, int]]
) -> tuple[Placement | None, GangDemand]:
    """A gang with subgroups that cannot start whole, as Volcano's allocate places it: its
    subgroups in turn (first those each minSubGroups still needs), each whole or not at all,
    then as many of the members in no subgroup as fit, in rank order. It stands when it
    reaches `required` pods and every minSubGroups."""
    parts = _required_first(demand, minimum)
    keep: list[int] = []
    for part in parts:
        trial = sorted([*keep, *part.pods])
        if select(sub_demand(demand, trial, index), free, index) is not None:
            keep = trial
    grouped = {p for part in demand.placed_subgroups for p in part.pods}
    rest = [i for i in range(demand.n) if i not in grouped]
    lo, hi, best = 1, len(rest), keep
    while lo <= hi:  # feasibility only shrinks as members are added: a binary search finds it
        mid = (lo + hi) // 2
        trial = sorted([*keep, *rest[:mid]])
        if select(sub_demand(demand, trial, index), free, index) is not None:
            best, lo = trial, mid + 1
        else:
            hi = mid - 1
    if len(best) < max(required, 1):
        return None, demand
    final = sub_demand(demand, best, index)
    placed = select(final, free, index)
    if placed is None or not subgroups_ready(final, range(final.n), minimum):
        return None, demand
    return placed, final


def _req_of(demand: GangDemand, pos: int) -> I64:
    for c in demand.classes:
        if pos in c.pods:
            return c.req
    raise KeyError(pos)


def _place_plain(
    where: Where, demand: GangDemand, free: I64, index: ClusterIndex, offers: Offers | None
) -> list[tuple[int, int]] | None:
    """Place a demand without subgroups inside `where`; (position, node) pairs or None."""
    if demand.binding:
        lo, hi = where.range(index)
        return place_ruled(lo, hi, demand, free, index)
    if demand.kind == "mixed":
        return _place_mixed(where, demand, free, index)
    o = offers if offers is not None else evaluate(free, demand, index)
    if demand.kind == "leader":
        return _place_leader(where, demand, o, index)
    if _inside_sum(where, o.slots, o.dom_slots, index) < demand.n:
        return None
    # Kueue's slices: among children offering as many slices, the one with fewer pod slots first;
    # below the outermost slice level, fewer pod slots first whatever they offer.
    tie = o.raw_slots if demand.slices else None
    below = demand.slices[0][0] if demand.slices else None
    kueue = KueueDescent(below=below, pool=below or 0) if demand.kueue_tas else None
    counts = _distribute(where, demand.n, o.slots, o.dom_slots, index, pin=None, tie=tie, kueue=kueue)
    return _layout(demand.classes[0].pods, counts)


def _place_leader(
    where: Where, demand: GangDemand, offers: Offers, index: ClusterIndex
) -> list[tuple[int, int]] | None:
    """The leader where it costs the fewest worker slots (ties: more slots left, tree order),
    then the workers around it, the leader's branch first."""
    assert offers.leader is not None
    lead = offers.leader
    lo, hi = where.range(index)
    seg = lead.delta[lo:hi]
    if len(seg) == 0 or int(seg.min()) >= BIG:
        return None
    cand = np.flatnonzero(seg == seg.min()) + lo
    v = int(cand[np.lexsort((cand, -lead.after[cand]))][0])
    slots = offers.slots.copy()
    slots[v] = lead.after[v]
    dom_slots = offers.dom_slots.copy()
    chain = index.node_anc[v]
    chain = chain[chain >= 0]
    dom_slots[chain] -= int(offers.slots[v] - lead.after[v])
    workers = demand.classes[0]
    if _inside_sum(where, slots, dom_slots, index) < workers.count:
        return None
    counts = _distribute(where, workers.count, slots, dom_slots, index, pin=v)
    out = [(demand.classes[1].pods[0], v)]
    out += _layout(workers.pods, counts)
    return sorted(out)


def _place_mixed(
    where: Where, demand: GangDemand, free: I64, index: ClusterIndex
) -> list[tuple[int, int]] | None:
    """Class by class on a private copy of free capacity, most numerous class first."""
    lo, hi = where.range(index)
    work = free.copy()
    out: list[tuple[int, int]] = []
    for c in demand.classes:
        s = class_slots(work, c, cap=c.count)
        s[:lo] = 0
        s[hi:] = 0
        ds = _dom_sums(s, index)
        if _inside_sum(where, s, ds, index) < c.count:
            return None
        counts = _distribute(where, c.count, s, ds, index, pin=None)
        for node, k in counts:
            work[node] -= c.req * k
        out += _layout(c.pods, counts)
    return sorted(out)


def _dom_sums(values: I64, index: ClusterIndex) -> I64:
    cs = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=cs[1:])
    return cs[index.dom_end] - cs[index.dom_start]


def _inside_sum(where: Where, slots: I64, dom_slots: I64, index: ClusterIndex) -> int:
    if where.kind == "node":
        return int(slots[where.idx])
    if where.kind == "domain":
        return int(dom_slots[where.idx])
    return int(slots.sum())


def _layout(pods: Sequence[int], counts: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Pods (rank order) onto nodes (layout order), filling each node before the next."""
    if not counts:
        return []
    nodes, k = zip(*counts, strict=True)
    return list(zip(pods, np.repeat(nodes, k).tolist(), strict=False))


@dataclass(frozen=True)
class _KidTable:
    """Children of every domain (and, last, of the cluster root) in CSR form, tree order."""

    ptr: I64
    is_dom: Bool
    ids: I64
    start: I64
    end: I64


KID_TABLE: MemoSlot[_KidTable] = MemoSlot("kid_table")


def _kid_table(index: ClusterIndex) -> _KidTable:
    return index.memo.get(KID_TABLE, None, lambda: _build_kid_table(index))


def _build_kid_table(index: ClusterIndex) -> _KidTable:
    ptr = [0]
    is_dom: list[bool] = []
    ids: list[int] = []
    start: list[int] = []
    end: list[int] = []
    for d in range(index.n_domains + 1):
        kids: list[tuple[bool, int, int, int]] = []
        if d < index.n_domains:
            lo, direct = int(index.dom_start[d]), int(index.dom_direct_end[d])
            kids += [(False, v, v, v + 1) for v in range(lo, direct)]
            kids += [(True, c, int(index.dom_start[c]), int(index.dom_end[c])) for c in index.dom_children[d]]
        else:
            kids += [(True, r, int(index.dom_start[r]), int(index.dom_end[r])) for r in index.roots]
            kids += [(False, v, v, v + 1) for v in range(*index.loose)]
        for k in sorted(kids, key=lambda k: k[2]):
            is_dom.append(k[0])
            ids.append(k[1])
            start.append(k[2])
            end.append(k[3])
        ptr.append(len(ids))
    return _KidTable(
        ptr=np.asarray(ptr, dtype=np.int64),
        is_dom=np.asarray(is_dom, dtype=np.bool_),
        ids=np.asarray(ids, dtype=np.int64),
        start=np.asarray(start, dtype=np.int64),
        end=np.asarray(end, dtype=np.int64),
    )


def _binpack_top(take: I64, cap: I64, n: int) -> I64:
    """Spread over the whole cluster (a soft gang past its tier): as few top domains as the
    largest-first choice needs, then the tightest such set (binpack): each chosen domain, the
    largest first, is swapped for the smallest unchosen one that still lets the set hold the
    gang. `take` and `cap` are per child in the order chosen; returns the new `take`."""
    chosen = take > 0
    total = int(cap[chosen].sum())
    for i in sorted(np.flatnonzero(chosen).tolist(), key=lambda i: -int(cap[i])):
        spare = total - n
        fits = np.flatnonzero(~chosen & (cap < cap[i]) & (cap >= cap[i] - spare) & (cap > 0))
        if len(fits) == 0:
            continue
        j = int(fits[np.argmin(cap[fits])])
        chosen[i], chosen[j] = False, True
        total += int(cap[j] - cap[i])
    out = np.zeros_like(take)
    left = n
    for i in sorted(np.flatnonzero(chosen).tolist(), key=lambda i: (-int(cap[i]), i)):
        out[i] = min(int(cap[i]), left)
        left -= int(out[i])
    return out


@dataclass(frozen=True)
class _Kids:
    """The children of every parent at one level of the descent, each parent's in the order they
    are taken: the pinned child (the leader's) first, then by most slots, tree order on ties."""

    parent: I64
    """Each child's parent, as a position in the level's parents."""
    cap: I64
    """The slots each child offers, at most its parent's amount."""
    pinned: Bool
    """The child holds the pinned node."""
    item: I64
    """The child's row in the kid table."""
    is_dom: Bool
    ids: I64
    """Domain or node index of each child."""
    first: I64
    """Per parent: the position of its first child."""


@dataclass(frozen=True)
class KueueDescent:
    """How Kueue's BestFit descends from the chosen place to its nodes, where it differs from
    ours (`_distribute`, for a Kueue TAS gang)."""

    below: int | None = None
    """The outermost slice tier: children under it count no slice, so they go fewest pod slots
    first whatever they offer (Kueue sorts them by a slice count of 0, then pod count)."""
    pool: int | None = None
    """Under parents above this tier (the slice tier; 0 without slices) the children of every
    chosen parent are one pool for the whole amount: Kueue re-picks each level greedily down to
    its slice level, what each parent took choosing the parents only. Its top is then the
    plain greedy pick, the last one best fit (no binpacking)."""


@dataclass(frozen=True)
class _Ties:
    """The order among children offering as many slots (Kueue's slices): fewest pod slots
    first (`node`, per node; `dom`, summed per domain); under tier `below`, that order alone."""

    node: I64
    dom: I64
    below: int | None
    dom_tier: I64


def _distribute(
    where: Where,
    n: int,
    slots: I64,
    dom_slots: I64,
    index: ClusterIndex,
    *,
    pin: int | None,
    tie: I64 | None = None,
    kueue: KueueDescent | None = None,
) -> list[tuple[int, int]]:
    """(node, count) in layout order: as few children as possible, best fit for the last one.

    Level by level over every chosen domain at once (`_kids`, then `_take`). In each domain:
    the pinned child (the leader's) first, then children by most slots (tree order on ties);
    the child that completes the amount is swapped for the smallest untaken one that also does
    (`_best_fit`). A soft gang spread over the whole cluster binpacks the top (`_binpack_top`).
    `tie` (per node; summed per domain): children offering as many slots go fewest `tie` first;
    `kueue`: Kueue's own descent (`KueueDescent`)."""
    if n <= 0:
        return []
    if where.kind == "node":
        return [(where.idx, n)]
    table = _kid_table(index)
    parents = np.asarray([where.idx if where.kind == "domain" else index.n_domains], dtype=np.int64)
    amounts = np.asarray([n], dtype=np.int64)
    out_nodes: list[I64] = []
    out_counts: list[I64] = []
    top = where.kind == "cluster" and pin is None
    below = kueue.below if kueue is not None else None
    ties = _Ties(tie, range_sums(tie, index), below, index.dom_tier) if tie is not None else None
    while len(parents):
        pooled = kueue is not None and kueue.pool is not None and _above(parents, kueue.pool, index)
        if pooled:
            top, amounts = False, np.asarray([int(amounts.sum())], dtype=np.int64)
        kids = _kids(table, parents, amounts, slots, dom_slots, pin=pin, ties=ties, pooled=pooled)
        take = _take(kids, amounts)
        if top:
            take = _binpack_top(take, kids.cap, int(amounts[0]))
            top = False
        chosen = take > 0
        nodes = chosen & ~kids.is_dom
        out_nodes.append(kids.ids[nodes])
        out_counts.append(take[nodes])
        doms = chosen & kids.is_dom
        parents, amounts = kids.ids[doms], take[doms]
    if sum(int(c.sum()) for c in out_counts) != n:
        raise AssertionError("distribute called on a place that does not hold the gang")
    return _layout_order(np.concatenate(out_nodes), np.concatenate(out_counts), index, pin)


def _above(parents: I64, tier: int, index: ClusterIndex) -> bool:
    """Every parent (a domain, or the cluster root past the last domain) is above `tier`."""
    doms = parents[parents < index.n_domains]
    return bool((index.dom_tier[doms] > tier).all()) if len(doms) else True


def _kids(
    table: _KidTable,
    parents: I64,
    amounts: I64,
    slots: I64,
    dom_slots: I64,
    *,
    pin: int | None,
    ties: _Ties | None = None,
    pooled: bool = False,
) -> _Kids:
    """The children of `parents`, with their slots, in the order they are taken (`pooled`: as
    the children of one parent, whose amount is `amounts[0]`)."""
    lo, hi = table.ptr[parents], table.ptr[parents + 1]
    sizes = hi - lo
    parent = np.repeat(np.arange(len(parents)), sizes)
    if pooled:
        parent = np.zeros_like(parent)
    item = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes) + np.repeat(lo, sizes)
    is_dom, ids = table.is_dom[item], table.ids[item]
    cap = np.where(
        is_dom,
        dom_slots[np.where(is_dom, ids, 0)] if len(dom_slots) else 0,
        slots[np.where(is_dom, 0, ids)],
    )
    cap = np.minimum(cap, amounts[parent])
    pinned = (
        (table.start[item] <= pin) & (table.end[item] > pin)
        if pin is not None
        else np.zeros(len(item), np.bool_)
    )
    if ties is not None:
        tie_key = np.where(is_dom, ties.dom[np.where(is_dom, ids, 0)], ties.node[np.where(is_dom, 0, ids)])
        first_key = -cap
        if ties.below is not None and len(ties.dom_tier):
            tier = np.where(is_dom, ties.dom_tier[np.where(is_dom, ids, 0)], 0)
            first_key = np.where(tier < ties.below, 0, -cap)
        order = np.lexsort((item, tie_key, first_key, ~pinned, parent))
    else:
        order = np.lexsort((item, -cap, ~pinned, parent))
    return _Kids(
        parent=parent[order],
        cap=cap[order],
        pinned=pinned[order],
        item=item[order],
        is_dom=is_dom[order],
        ids=ids[order],
        first=np.zeros(1, np.int64) if pooled else np.r_[0, np.cumsum(sizes)[:-1]],
    )


def _take(kids: _Kids, amounts: I64) -> I64:
    """How much each child takes: children in order until the parent's amount is covered, the
    one that completes it then swapped for the best fit."""
    g, c = kids.parent, kids.cap
    before = np.cumsum(c) - c
    before -= before[kids.first][g]
    take = np.clip(amounts[g] - before, 0, c)
    # The child that completes each parent's amount, and what it still had to cover.
    completes = np.flatnonzero((before < amounts[g]) & (before + c >= amounts[g]) & (c > 0) & ~kids.pinned)
    if len(completes):
        _best_fit(kids, take, completes, amounts[g[completes]] - before[completes], len(amounts))
    return take


def _best_fit(kids: _Kids, take: I64, completes: I64, rest: I64, n_parents: int) -> None:
    """Swap each completing child (what it still had to cover: `rest`) for the smallest
    untaken child, from it on, that also covers that, in `take`."""
    g, c = kids.parent, kids.cap
    groups = g[completes]
    at = np.full(n_parents, len(g), dtype=np.int64)
    at[groups] = completes
    rest_of = np.zeros(n_parents, dtype=np.int64)
    rest_of[groups] = rest
    pool = np.flatnonzero((np.arange(len(g)) >= at[g]) & ~kids.pinned & (c >= rest_of[g]))
    # Ties on slots go in the children's order (tree order, or Kueue's fewer pod slots first).
    pool = pool[np.lexsort((pool, c[pool], g[pool]))]
    best = pool[np.r_[True, g[pool][1:] != g[pool][:-1]]]
    take[completes] = 0
    take[best] = rest_of[g[best]]


def _layout_order(nodes: I64, counts: I64, index: ClusterIndex, pin: int | None) -> list[tuple[int, int]]:
    """Tree order (node indexes are in tree order); with a pin, the pin's branch first at every
    level, i.e. nodes sharing more enclosing domains with the pin come first."""
    if pin is not None:
        pin_anc = index.node_anc[pin]
        anc = index.node_anc[nodes]
        shared = (np.isin(anc, pin_anc[pin_anc >= 0]) & (anc >= 0)).sum(axis=1) + (nodes == pin)
        order = np.lexsort((nodes, -shared))
    else:
        order = np.argsort(nodes, kind="stable")
    return list(zip(nodes[order].tolist(), counts[order].tolist(), strict=True))
