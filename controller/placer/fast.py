"""Preemption for big places: one vectorised heuristic over every candidate place at once.

The exact search (`search.py`) settles small places; a spine of 512 nodes with thousands of
running pods is beyond any exact method in a scheduling cycle. For gangs of one shape this
module plans there, considering lone pods only (no gang members, none a budget covers); when
those cannot free enough room the caller falls back to the search's greedy. Its plans are valid
and usually close to the cheapest, but not proven so (`optimal=False`).

Per priority threshold q, lowest first, until some place can be freed (`_at_threshold`):
1. `_queues`: per node, its lone pods of priority <= q, largest share of the gang pod's request
   first; `_gains`: prefix sums give the slots the node offers after evicting the first j;
2. `_hull`: per node, the upper concave hull of (evictions, slots gained) as segments;
3. `_fill`: per place, segments by decreasing slope until its deficit is covered (the
   relaxation's optimum, rounded up to whole segments);
then the best place in the plans' order (`_best`), and a reprieve pass that drops evictions it
does not need, highest priority first (`_reprieve`). The gang's shape (`GangShape`) and the
places (`Places`: node to place, what each lacks) travel together through these steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from controller.placer.demand import GangDemand
from controller.placer.search import NO_VICTIM, Fit, Problem
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


@dataclass(frozen=True)
class GangShape:
    """The gang's one pod shape, as the heuristic measures room: its request on the resources
    it asks for, how many pods the gang has, the nodes its pods may use."""

    cols: I64
    """The resources the pod requests (columns of the index's resource axis)."""
    request: I64
    """Its request on those columns."""
    size: int
    """Pods in the gang: no node offers more slots than this."""
    mask: Bool
    """Nodes a member may use (the Filter plugins' verdict)."""

    def slots(self, room: I64) -> I64:
        """Pods of this shape that fit in `room` (rows over `cols`, on the last axis)."""
        slots: I64 = np.minimum((np.maximum(room, 0) // self.request).min(axis=-1), self.size)
        return slots


@dataclass(frozen=True)
class Places:
    """The candidate places (disjoint node ranges) as the heuristic reads them."""

    of_node: I64
    """Each node's place, -1 outside every place."""
    need: I64
    """Per place: the slots the gang still lacks there (<= 0: it fits already)."""

    @property
    def count(self) -> int:
        return len(self.need)


@dataclass(frozen=True)
class _Queues:
    """The pods that may be evicted, grouped by node (ascending), each node's in eviction order
    (largest share of the gang pod's request first), at most `MAX_PER_NODE` of them."""

    pods: I64
    """Pod indexes (into the snapshot's pod arrays)."""
    pos: I64
    """Each pod's position in its node's queue."""
    nodes: I64
    """The nodes with a queue, ascending: the rows of the gain table."""
    row: I64
    """Each pod's node, as a row of `nodes`."""
    first: I64
    """Per row: where its node's pods start in `pods`."""

    @property
    def depth(self) -> int:
        return int(self.pos.max()) + 1 if len(self.pos) else 0


@dataclass(frozen=True)
class _Segments:
    """Pieces of every node's upper concave hull of (evictions, slots gained)."""

    row: I64
    """The node's row in the queues."""
    start: I64
    """Evictions on the node before the piece."""
    end: I64
    """Evictions on the node after it."""
    slope: npt.NDArray[np.float64]
    """Slots gained per eviction along it."""


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
    cols = np.flatnonzero(cls.req)
    shape = GangShape(cols=cols, request=cls.req[cols], size=demand.n, mask=cls.mask)
    where_is = _places(places, index, free, shape)
    lone = lone & (where_is.of_node[arrays.node] >= 0)
    # Share of the gang pod's request each pod frees: its largest ratio over the requested resources.
    share = (arrays.req[:, cols] / shape.request).max(axis=1)
    for q in np.unique(arrays.priority[lone]):
        pick = np.flatnonzero(lone & (arrays.priority <= q))
        got = _at_threshold(pick, arrays, share, free, shape, where_is)
        chosen = _best(got, places, arrays, index) if got is not None else None
        if chosen is None:
            continue
        i, victims = chosen
        where, leftover = places[i]
        victims = _reprieve(victims, demand, free, where, index, arrays)
        return FastPlan(where=where, victims=tuple(victims), opt_leftover=leftover)
    return None


def _places(places: Sequence[tuple[Where, int]], index: ClusterIndex, free: I64, shape: GangShape) -> Places:
    """Which place each node is in, and the slots each place lacks before any eviction."""
    of_node = np.full(index.n_nodes, -1, dtype=np.int64)
    for i, (where, _) in enumerate(places):
        lo, hi = where.range(index)
        of_node[lo:hi] = i
    base = shape.slots(free[:, shape.cols])
    base[~shape.mask] = 0
    inside = of_node >= 0
    have = np.bincount(of_node[inside], weights=base[inside], minlength=len(places))
    return Places(of_node=of_node, need=shape.size - have.astype(np.int64))


def _at_threshold(
    pick: I64, arrays: PodArrays, share: npt.NDArray[np.float64], free: I64, shape: GangShape, places: Places
) -> dict[int, list[int]] | None:
    """Per place that can be freed with the pods `pick`: the pods the hull greedy evicts."""
    if len(pick) == 0:
        return None
    queues = _queues(pick, arrays, share)
    gain = _gains(queues, arrays, free, shape)
    # The hull of a node ends at its largest gain: when no place can be freed even so, there is
    # nothing to build.
    most = np.bincount(places.of_node[queues.nodes], weights=gain.max(axis=1), minlength=places.count)
    if not ((places.need > 0) & (most >= places.need)).any():
        return None
    hull = _hull(gain)
    if hull is None:
        return None
    return _fill(hull, queues, gain, places)


def _queues(pick: I64, arrays: PodArrays, share: npt.NDArray[np.float64]) -> _Queues:
    """`pick` grouped by node, largest share first, cut at `MAX_PER_NODE` per node."""
    pods = pick[np.lexsort((-share[pick], arrays.node[pick]))]
    nodes = arrays.node[pods]
    starts = np.flatnonzero(np.r_[True, nodes[1:] != nodes[:-1]])
    counts = np.diff(np.r_[starts, len(pods)])
    pos = np.arange(len(pods)) - np.repeat(starts, counts)
    keep = pos < MAX_PER_NODE
    pods, nodes, pos = pods[keep], nodes[keep], pos[keep]
    uniq = nodes[np.r_[True, nodes[1:] != nodes[:-1]]] if len(nodes) else nodes
    row = np.searchsorted(uniq, nodes)
    first = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    return _Queues(pods=pods, pos=pos, nodes=uniq, row=row, first=first)


def _gains(queues: _Queues, arrays: PodArrays, free: I64, shape: GangShape) -> I64:
    """[row, j]: the slots a node gains for the gang once the first j pods of its queue are gone."""
    prefix = np.zeros((len(queues.nodes), queues.depth + 1, len(shape.cols)), dtype=np.int64)
    prefix[queues.row, queues.pos + 1] = arrays.req[queues.pods][
        :, shape.cols
    ]  # one pod per (node, position)
    np.cumsum(prefix, axis=1, out=prefix)
    slots = shape.slots(free[queues.nodes][:, shape.cols][:, None, :] + prefix)
    slots[~shape.mask[queues.nodes]] = 0
    gain: I64 = slots - slots[:, :1]
    return gain


def _hull(gain: I64) -> _Segments | None:
    """The upper concave hull of (evictions, gain) of every node, as segments; None when no
    eviction gains anything anywhere."""
    k = gain.shape[1] - 1
    rows = np.arange(len(gain))
    js = np.arange(k + 1)
    cur = np.zeros(len(gain), dtype=np.int64)
    parts: list[tuple[I64, I64, I64, npt.NDArray[np.float64]]] = []
    for _ in range(k):
        ahead = js[None, :] > cur[:, None]
        dist = np.where(ahead, js[None, :] - cur[:, None], 1)
        slope = np.where(ahead, (gain - gain[rows, cur][:, None]) / dist, -1.0)
        best = slope.argmax(axis=1)  # first maximum: the nearest point on a tie
        ok = slope[rows, best] > 0
        if not ok.any():
            break
        parts.append((rows[ok], cur[ok], best[ok], slope[rows, best][ok]))
        cur = np.where(ok, best, k)
    if not parts:
        return None
    row, start, end, slopes = (np.concatenate(col) for col in zip(*parts, strict=True))
    return _Segments(row=row, start=start, end=end, slope=slopes)


def _fill(hull: _Segments, queues: _Queues, gain: I64, places: Places) -> dict[int, list[int]] | None:
    """Per place whose deficit the hull covers: segments by decreasing slope until it is covered
    (the relaxation's optimum, rounded up to whole segments), as the pods they evict."""
    place = places.of_node[queues.nodes[hull.row]]
    order = np.lexsort((hull.start, queues.nodes[hull.row], -hull.slope, place))
    row, start, end, place = hull.row[order], hull.start[order], hull.end[order], place[order]
    gained = gain[row, end] - gain[row, start]
    total = np.bincount(place, weights=gained, minlength=places.count)
    # A node's pods in eviction order are `pods[first[row]:]`: a segment (start, end) of that
    # node evicts `pods[first[row] + start : first[row] + end]`.
    lo = (queues.first[row] + start).tolist()
    hi = (queues.first[row] + end).tolist()
    out: dict[int, list[int]] = {}
    bounds = np.flatnonzero(np.r_[True, place[1:] != place[:-1]])
    for b, c in zip(bounds.tolist(), np.diff(np.r_[bounds, len(place)]).tolist(), strict=True):
        p = int(place[b])
        need = places.need[p]
        if need <= 0 or total[p] < need:
            continue
        cut = int(np.searchsorted(np.cumsum(gained[b : b + c]), need)) + 1
        victims: list[int] = []
        for j in range(b, b + cut):
            victims.extend(queues.pods[lo[j] : hi[j]].tolist())
        out[p] = victims
    return out or None


def _best(
    got: dict[int, list[int]], places: Sequence[tuple[Where, int]], arrays: PodArrays, index: ClusterIndex
) -> tuple[int, list[int]] | None:
    """The place whose plan comes first: highest victim priority, victim count, leftover, name."""
    from translations.topology import natural_key

    def key(item: tuple[int, list[int]]) -> tuple[object, ...]:
        i, victims = item
        top = int(arrays.priority[victims].max()) if victims else NO_VICTIM
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
