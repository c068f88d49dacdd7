"""Preemption for big places: one vectorised heuristic over every candidate place at once.

The exact search (`search.py`) settles small places; a spine of 512 nodes with thousands of
running pods is beyond any exact method in a scheduling cycle. For gangs of one shape this
module plans there, considering lone pods only (no gang members, none a budget covers); when
those cannot free enough room the caller falls back to the search's greedy. Its plans are valid
and usually close to the cheapest, but not proven so (`optimal=False`).

Per priority threshold q, lowest first, until some place can be freed:
1. per node, its lone pods of priority <= q, largest share of the gang pod's request first;
   prefix sums give the slots the node offers after evicting the first j of them;
2. per node, the upper concave hull of (evictions, slots gained) as segments;
3. per place, segments by decreasing slope until its deficit is covered (the relaxation's
   optimum, rounded up to whole segments);
then the best place in the plans' order, and a reprieve pass that drops evictions it does not
need (highest priority first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from controller.placer.demand import GangDemand
from controller.placer.search import Fit, Problem
from controller.placer.select import Where
from controller.placer.snapshot import I64, Bool, ClusterIndex, PodArrays

MAX_PER_NODE = 16
"""Lone pods considered per node (the largest ones): more never pays for a gang pod's room."""


@dataclass(frozen=True)
class FastPlan:
    where: Where
    victims: tuple[int, ...]
    """Indexes into the snapshot's pod arrays."""
    opt_leftover: int


def fast_plan(
    demand: GangDemand,
    index: ClusterIndex,
    arrays: PodArrays,
    free: I64,
    lone: Bool,
    places: Sequence[tuple[Where, int]],
) -> FastPlan | None:
    """The heuristic's plan over `places` (disjoint node ranges), or None. `lone`: the pods it
    may evict (eligible, in no gang of two or more, covered by no budget)."""
    cls = demand.classes[0]
    n = demand.n
    cols = np.flatnonzero(cls.req)
    g = cls.req[cols]
    place_of = np.full(index.n_nodes, -1, dtype=np.int64)
    for i, (where, _) in enumerate(places):
        lo, hi = where.range(index)
        place_of[lo:hi] = i
    lone = lone & (place_of[arrays.node] >= 0)
    base_slots = np.minimum((np.maximum(free[:, cols], 0) // g).min(axis=1), n)
    base_slots[~cls.mask] = 0
    have = np.bincount(place_of[place_of >= 0], weights=base_slots[place_of >= 0], minlength=len(places))
    need = n - have.astype(np.int64)
    # Share of the gang pod's request each pod frees: its largest ratio over the requested resources.
    share = (arrays.req[:, cols] / g).max(axis=1)
    for q in np.unique(arrays.priority[lone]):
        pick = np.flatnonzero(lone & (arrays.priority <= q))
        got = _at_threshold(pick, arrays, share, free, cls.mask, cols, g, n, place_of, need, len(places))
        if got is None:
            continue
        chosen = _best(got, places, arrays, index)
        if chosen is None:
            continue
        i, victims = chosen
        where, leftover = places[i]
        victims = _reprieve(victims, demand, free, where, index, arrays)
        return FastPlan(where=where, victims=tuple(victims), opt_leftover=leftover)
    return None


def _at_threshold(
    pick: I64,
    arrays: PodArrays,
    share: np.ndarray,
    free: I64,
    mask: Bool,
    cols: I64,
    g: I64,
    n: int,
    place_of: I64,
    need: I64,
    n_places: int,
) -> dict[int, list[int]] | None:
    """Per place that can be freed with these pods: the pods the hull greedy evicts."""
    if len(pick) == 0:
        return None
    order = np.lexsort((-share[pick], arrays.node[pick]))
    pods = pick[order]
    nodes = arrays.node[pods]
    starts = np.flatnonzero(np.r_[True, nodes[1:] != nodes[:-1]])
    counts = np.diff(np.r_[starts, len(pods)])
    pos = np.arange(len(pods)) - np.repeat(starts, counts)
    keep = pos < MAX_PER_NODE
    pods, nodes, pos = pods[keep], nodes[keep], pos[keep]
    uniq = nodes[np.r_[True, nodes[1:] != nodes[:-1]]] if len(nodes) else nodes
    local = np.searchsorted(uniq, nodes)
    k = int(pos.max()) + 1 if len(pos) else 0
    prefix = np.zeros((len(uniq), k + 1, len(cols)), dtype=np.int64)
    prefix[local, pos + 1] = arrays.req[pods][:, cols]  # one pod per (node, position)
    np.cumsum(prefix, axis=1, out=prefix)
    after = np.maximum(free[uniq][:, cols][:, None, :] + prefix, 0)
    slots = np.minimum((after // g).min(axis=2), n)
    slots[~mask[uniq]] = 0
    gain = slots - slots[:, :1]
    # The hull of a node ends at its largest gain: when no place can be freed even so, there is
    # nothing to build.
    most = np.bincount(place_of[uniq], weights=gain.max(axis=1), minlength=n_places)
    if not ((need > 0) & (most >= need)).any():
        return None
    # Upper concave hull of (evictions, gain) per node, as segments (node, from, to, slope).
    seg_node: list[I64] = []
    seg_from: list[I64] = []
    seg_to: list[I64] = []
    seg_slope: list[np.ndarray] = []
    cur = np.zeros(len(uniq), dtype=np.int64)
    js = np.arange(k + 1)
    rows = np.arange(len(uniq))
    for _ in range(k):
        ahead = js[None, :] > cur[:, None]
        dist = np.where(ahead, js[None, :] - cur[:, None], 1)
        slope = np.where(ahead, (gain - gain[rows, cur][:, None]) / dist, -1.0)
        best = slope.argmax(axis=1)  # first maximum: the nearest point on a tie
        ok = slope[rows, best] > 0
        if not ok.any():
            break
        seg_node.append(rows[ok])
        seg_from.append(cur[ok])
        seg_to.append(best[ok])
        seg_slope.append(slope[rows, best][ok])
        cur = np.where(ok, best, k)
    if not seg_node:
        return None
    s_node = np.concatenate(seg_node)
    s_from = np.concatenate(seg_from)
    s_to = np.concatenate(seg_to)
    s_slope = np.concatenate(seg_slope)
    s_place = place_of[uniq[s_node]]
    s_gain = gain[s_node, s_to] - gain[s_node, s_from]
    order = np.lexsort((s_from, uniq[s_node], -s_slope, s_place))
    s_node, s_from, s_to, s_place, s_gain = (
        s_node[order],
        s_from[order],
        s_to[order],
        s_place[order],
        s_gain[order],
    )
    total = np.bincount(s_place, weights=s_gain, minlength=n_places)
    out: dict[int, list[int]] = {}
    # A node's pods in eviction order are `pods[first[l]:]` (pods are grouped by node): a
    # segment (from, to) of node l is `pods[first[l] + from : first[l] + to]`.
    first = np.flatnonzero(np.r_[True, local[1:] != local[:-1]])
    s_lo = (first[s_node] + s_from).tolist()
    s_hi = (first[s_node] + s_to).tolist()
    bounds = np.flatnonzero(np.r_[True, s_place[1:] != s_place[:-1]])
    for b, c in zip(bounds.tolist(), np.diff(np.r_[bounds, len(s_place)]).tolist(), strict=True):
        p = int(s_place[b])
        if need[p] <= 0 or total[p] < need[p]:
            continue
        cum = np.cumsum(s_gain[b : b + c])
        cut = int(np.searchsorted(cum, need[p])) + 1
        victims: list[int] = []
        for j in range(b, b + cut):
            victims.extend(pods[s_lo[j] : s_hi[j]].tolist())
        out[p] = victims
    return out or None


def _best(
    got: dict[int, list[int]], places: Sequence[tuple[Where, int]], arrays: PodArrays, index: ClusterIndex
) -> tuple[int, list[int]] | None:
    """The place whose plan comes first: highest victim priority, victim count, leftover, name."""
    from translations.topology import natural_key

    def key(item: tuple[int, list[int]]) -> tuple[object, ...]:
        i, victims = item
        top = int(arrays.priority[victims].max()) if victims else -(2**62)
        return (top, len(victims), places[i][1], natural_key(places[i][0].label(index)))

    return min(got.items(), key=key) if got else None


def _reprieve(
    victims: list[int], demand: GangDemand, free: I64, where: Where, index: ClusterIndex, arrays: PodArrays
) -> list[int]:
    """Drop evictions the gang does not need, the highest priority (then smallest) first."""
    lo, hi = where.range(index)
    fit = Fit(demand, free, Problem(where=where, lo=lo, hi=hi), index)
    idx = np.asarray(victims, dtype=np.int64)
    fit.apply(arrays.node[idx], arrays.req[idx], +1)
    kept = set(victims)
    for v in sorted(victims, key=lambda i: (-int(arrays.priority[i]), int(arrays.req[i].sum()), i)):
        one = np.asarray([v], dtype=np.int64)
        fit.apply(arrays.node[one], arrays.req[one], -1)
        if fit.fits():
            kept.discard(v)
        else:
            fit.apply(arrays.node[one], arrays.req[one], +1)
    return sorted(kept)
