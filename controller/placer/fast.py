"""Preemption for big places: one vectorised heuristic over every candidate place at once.

The exact search (`search.py`) settles small places; a spine of 512 nodes with thousands of
running pods is beyond any exact method in a scheduling cycle. For gangs of one shape this
module plans there, considering lone pods only (no gang members, none a budget covers); when
those cannot free enough room the caller falls back to the search's greedy. Its plans are valid
and usually close to the cheapest, but not proven so (`optimal=False`).

Per priority threshold q, lowest first, until some place can be freed (`_at_threshold`; only
the pods of places that could be freed with all of them gone are looked at, found by one
scatter, `_may_free`):
1. `_queues`: per node, its lone pods of priority <= q, largest share of the gang pod's request
   first; `_gains`: prefix sums give the slots the node offers after evicting the first j;
2. `_hull`: per node of a place its queues can free, the upper concave hull of (evictions,
   slots gained) as segments;
3. `_fill`: per place, segments by decreasing slope until its deficit is covered (the
   relaxation's optimum, rounded up to whole segments), counted for every place at once;
then the best place in the plans' order (`_best`), its victims listed, and a reprieve pass that
drops evictions it does not need, highest priority first (`_reprieve`, one victim's node
recounted per step). The gang's shape (`GangShape`) and the places (`Places`: node to place,
what each lacks) travel together through these steps. Room is divided column by column (one
table per requested resource), not over a short last axis, which numpy does several times
slower.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from controller.placer.columns import node_sums
from controller.placer.demand import GangDemand
from controller.placer.search import NO_VICTIM
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
        return self.slots_by_column([room[..., k] for k in range(len(self.cols))])

    def slots_by_column(self, room: Sequence[I64]) -> I64:
        """`slots` with the room given column by column (`room[k]`: the room on `cols[k]`, any
        shape): one floor division per column and an elementwise minimum, several times faster
        than dividing and reducing over a short last axis."""
        out: I64 | None = None
        for k, r in enumerate(room):
            fit = np.maximum(r, 0)
            fit //= self.request[k]
            out = fit if out is None else np.minimum(out, fit, out=out)
        assert out is not None, "a gang pod requests at least one resource"
        np.minimum(out, self.size, out=out)
        return out


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
    cand = np.flatnonzero(lone & (where_is.of_node[arrays.node] >= 0))
    prio = arrays.priority[cand]
    room = _Room.of(free, shape)
    left = prio
    while len(left):  # the thresholds, lowest first, as far as they go
        q = left.min()
        left = left[left > q]
        room.add(cand[prio == q], arrays)
        pick = cand[prio <= q]
        got = _at_threshold(pick, arrays, free, shape, where_is, room)
        i = _best(got, places, arrays, index) if got is not None else None
        if got is None or i is None:
            continue
        where, leftover = places[i]
        victims = _reprieve(got.victims(i), shape, free, where, index, arrays)
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
    pick: I64, arrays: PodArrays, free: I64, shape: GangShape, places: Places, room: _Room
) -> _Freed | None:
    """The places that can be freed with the pods `pick` (`room`: with them all gone), and the
    pods the hull greedy evicts in each."""
    if len(pick) == 0:
        return None
    # Only the pods of places that could be freed were all of them gone are queued: a node's
    # queue, gains and hull are its own, and a place that cannot be freed frees none of them.
    may = _may_free(room, shape, places)
    pick = pick[may[places.of_node[arrays.node[pick]]]]
    if len(pick) == 0:
        return None
    queues = _queues(pick, arrays, shape)
    gain = _gains(queues, arrays, free, shape)
    # The hull of a node ends at its largest gain: when no place can be freed even so, there is
    # nothing to build.
    most = np.bincount(places.of_node[queues.nodes], weights=gain[:, -1], minlength=places.count)
    freeable = (places.need > 0) & (most >= places.need)
    if not freeable.any():
        return None
    hull = _hull(gain, freeable[places.of_node[queues.nodes]])
    if hull is None:
        return None
    return _fill(hull, queues, gain, places)


@dataclass(frozen=True)
class _Room:
    """The room on the gang's columns with the pods of the thresholds so far gone, each
    threshold's pods added as it comes (a pod is summed once, not at every threshold above
    its own), beside the slots before any eviction."""

    cols: I64
    """The gang's columns (`GangShape.cols`)."""
    by_column: I64
    """[column, node]: integer sums, so exact."""
    base: I64
    """Per node: the slots on `free` itself."""

    @classmethod
    def of(cls, free: I64, shape: GangShape) -> _Room:
        by_column = np.ascontiguousarray(free[:, shape.cols].T)
        return cls(shape.cols, by_column, shape.slots_by_column(list(by_column)))

    def add(self, pods: I64, arrays: PodArrays) -> None:
        """The requests of `pods` freed on their nodes."""
        if len(pods):
            freed = node_sums(arrays.node[pods], arrays.req[pods][:, self.cols], self.by_column.shape[1])
            np.add(self.by_column, freed, out=self.by_column)


def _may_free(room: _Room, shape: GangShape, places: Places) -> Bool:
    """Per place: could it be freed were every pod of the threshold gone (`room`; each node's
    queue is cut, so this bounds what the queues can free)? No queue of another place is worth
    building."""
    gain = shape.slots_by_column(list(room.by_column)) - room.base
    gain[~shape.mask] = 0
    inside = places.of_node >= 0
    most = np.bincount(places.of_node[inside], weights=gain[inside], minlength=places.count)
    may: Bool = (places.need > 0) & (most >= places.need)
    return may


def _queues(pick: I64, arrays: PodArrays, shape: GangShape) -> _Queues:
    """`pick` grouped by node, largest share first, cut at `MAX_PER_NODE` per node."""
    # Share of the gang pod's request each pod frees: its largest ratio over the requested resources.
    share = (arrays.req[pick][:, shape.cols] / shape.request).max(axis=1)
    pods = pick[np.lexsort((-share, arrays.node[pick]))]
    nodes = arrays.node[pods]
    starts = np.flatnonzero(np.r_[True, nodes[1:] != nodes[:-1]])
    counts = np.diff(np.r_[starts, len(pods)])
    pos = np.arange(len(pods)) - np.repeat(starts, counts)
    keep = pos < MAX_PER_NODE
    pods, nodes, pos = pods[keep], nodes[keep], pos[keep]
    uniq = nodes[np.r_[True, nodes[1:] != nodes[:-1]]] if len(nodes) else nodes
    row = np.searchsorted(uniq, nodes)
    return _Queues(pods=pods, pos=pos, nodes=uniq, row=row)


def _gains(queues: _Queues, arrays: PodArrays, free: I64, shape: GangShape) -> I64:
    """[row, j]: the slots a node gains for the gang once the first j pods of its queue are gone."""
    shape_rows = (len(queues.nodes), queues.depth + 1)
    req = arrays.req[queues.pods]
    room: list[I64] = []
    for c in shape.cols.tolist():  # a table per resource: [row, j] the room after j evictions
        table = np.zeros(shape_rows, dtype=np.int64)
        table[queues.row, queues.pos + 1] = req[:, c]  # one pod per (node, position)
        np.cumsum(table, axis=1, out=table)
        table += free[queues.nodes, c][:, None]
        room.append(table)
    slots = shape.slots_by_column(room)
    slots[~shape.mask[queues.nodes]] = 0
    gain: I64 = slots - slots[:, :1]
    return gain


def _hull(gain: I64, wanted: Bool) -> _Segments | None:
    """The upper concave hull of (evictions, gain) of every `wanted` node, as segments; None
    when no eviction gains anything there."""
    k = gain.shape[1] - 1
    js = np.arange(k + 1)
    rows = np.flatnonzero(wanted & (gain[:, -1] > 0)) if k else np.zeros(0, dtype=np.int64)
    # A node whose last gain is 0 gains nothing anywhere (gains never fall): no segment. Each
    # round extends the nodes still on their hull, from `cur`, to the steepest point ahead.
    cur = np.zeros(len(rows), dtype=np.int64)
    parts: list[tuple[I64, I64, I64, npt.NDArray[np.float64]]] = []
    while len(rows):
        g = gain[rows]
        ahead = js[None, :] > cur[:, None]
        dist = np.where(ahead, js[None, :] - cur[:, None], 1)
        at = np.arange(len(rows))
        slope = np.where(ahead, (g - g[at, cur][:, None]) / dist, -1.0)
        best = slope.argmax(axis=1)  # first maximum: the nearest point on a tie
        steep = slope[at, best]
        ok = steep > 0
        parts.append((rows[ok], cur[ok], best[ok], steep[ok]))
        more = ok & (best < k)
        rows, cur = rows[more], best[more]
    if not parts or not sum(len(p[0]) for p in parts):
        return None
    row, start, end, slopes = (np.concatenate(col) for col in zip(*parts, strict=True))
    return _Segments(row=row, start=start, end=end, slope=slopes)


@dataclass(frozen=True)
class _Freed:
    """What the hull greedy evicts (`_fill`): the queued pods it takes, in the places it frees."""

    pods: I64
    """The pods taken (indexes into the snapshot's pod arrays)."""
    place: I64
    """Each one's place."""
    freed: I64
    """The places freed, ascending."""

    def victims(self, place: int) -> list[int]:
        out: list[int] = self.pods[self.place == place].tolist()
        return out


def _fill(hull: _Segments, queues: _Queues, gain: I64, places: Places) -> _Freed | None:
    """Per place whose deficit the hull covers: segments by decreasing slope until it is covered
    (the relaxation's optimum, rounded up to whole segments), as the pods they evict."""
    place = places.of_node[queues.nodes[hull.row]]
    order = np.lexsort((hull.start, queues.nodes[hull.row], -hull.slope, place))
    row, end, place = hull.row[order], hull.end[order], place[order]
    gained = gain[row, end] - gain[row, hull.start[order]]
    total = np.bincount(place, weights=gained, minlength=places.count)
    freed = (places.need > 0) & (total >= places.need)
    if not freed.any():
        return None
    # A place takes its segments while what they gained before each falls short of its need
    # (every segment gains something); a node's segments come in its hull's order, so it
    # evicts the first `evicts[row]` pods of its queue.
    bounds = np.flatnonzero(np.r_[True, place[1:] != place[:-1]])
    before = np.cumsum(gained) - gained
    before -= np.repeat(before[bounds], np.diff(np.r_[bounds, len(place)]))
    take = freed[place] & (before < places.need[place])
    evicts = np.zeros(len(queues.nodes), dtype=np.int64)
    np.maximum.at(evicts, row[take], end[take])
    taken = queues.pos < evicts[queues.row]
    pods = queues.pods[taken]
    return _Freed(
        pods=pods, place=places.of_node[queues.nodes[queues.row[taken]]], freed=np.flatnonzero(freed)
    )


def _best(
    got: _Freed, places: Sequence[tuple[Where, int]], arrays: PodArrays, index: ClusterIndex
) -> int | None:
    """The freed place whose plan comes first: highest victim priority, victim count, leftover,
    name."""
    from translations.topology import natural_key

    top = np.full(len(places), NO_VICTIM, dtype=np.int64)
    np.maximum.at(top, got.place, arrays.priority[got.pods])
    count = np.bincount(got.place, minlength=len(places))

    def key(i: int) -> tuple[object, ...]:
        return (int(top[i]), int(count[i]), places[i][1], natural_key(places[i][0].label(index)))

    return min(got.freed.tolist(), key=key) if len(got.freed) else None


def _reprieve(
    victims: list[int], shape: GangShape, free: I64, where: Where, index: ClusterIndex, arrays: PodArrays
) -> list[int]:
    """Drop evictions the gang does not need, the highest priority (then smallest) first: each
    victim put back stays when the place still holds the gang (its slots, counted with every
    victim still gone, touched only on the victim's node)."""
    lo, hi = where.range(index)
    idx = np.asarray(victims, dtype=np.int64)
    nodes = arrays.node[idx]
    reqs = arrays.req[idx]
    after = free[lo:hi][:, shape.cols].copy()
    np.add.at(after, nodes - lo, reqs[:, shape.cols])
    slots = shape.slots(after)
    slots[~shape.mask[lo:hi]] = 0
    total = int(slots.sum())
    room = {int(v): after[v - lo].tolist() for v in np.unique(nodes).tolist()}
    slot = {v: int(slots[v - lo]) for v in room}
    usable = {v: bool(shape.mask[v]) for v in room}
    request, size = shape.request.tolist(), shape.size
    order = np.lexsort((idx, reqs.sum(axis=1), -arrays.priority[idx])).tolist()
    asked, on = reqs[:, shape.cols].tolist(), nodes.tolist()
    kept = set(victims)
    for k in order:
        v = on[k]
        back = [r - q for r, q in zip(room[v], asked[k], strict=True)]
        now = 0
        if usable[v]:
            now = size
            for r, q in zip(back, request, strict=True):
                now = min(now, r // q if r > 0 else 0)
        if total - slot[v] + now >= size:
            total += now - slot[v]
            room[v], slot[v] = back, now
            kept.discard(victims[k])
    return sorted(kept)
