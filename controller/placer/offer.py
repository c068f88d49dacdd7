"""Offer slots: how many of a gang's pods each node can take, summed up the tree.

Per node, a class's slots are `min over requested resources of floor(free / request)` (the
`pods` resource included), zero where the filter excludes the node, capped at the gang size as
Koordinator caps them. Per domain, slots are a difference of two prefix sums because every
domain is a contiguous node range. The `leader` shape adds one more array: what hosting the
leader costs each node in worker slots (`delta`), and its minimum per domain.

`Offers` holds, for every node, every domain and the whole cluster, the offer (pods of this
gang it could hold, for ranking and messages) and whether the whole gang fits there.

Kueue's slices (`GangDemand.slices`: `size` consecutive ranks in one domain of a tier, nested
layers each inside the one above) quantize the slots: a node or domain at a sliced tier offers
whole slices only, and a domain above sums what its children offer after that, so every layer
is held at once (`slice_slots`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from controller.placer.demand import GangDemand, PodClass
from controller.placer.snapshot import I64, Bool, ClusterIndex

BIG = np.int64(1) << np.int64(40)


def class_slots(free: I64, cls: PodClass, cap: int | None = None) -> I64:
    """Per node: pods of `cls` that fit in `free` (rows may be any node subset)."""
    cols = np.flatnonzero(cls.req)
    if len(cols) == 0:
        slots = np.full(free.shape[0], cap if cap is not None else BIG, dtype=np.int64)
    else:
        slots = (np.maximum(free[:, cols], 0) // cls.req[cols]).min(axis=1)
    if cls.mask.shape[0] == free.shape[0]:
        slots[~cls.mask] = 0
        if cls.cap is not None:
            np.minimum(slots, cls.cap, out=slots)
    if cap is not None:
        np.minimum(slots, cap, out=slots)
    return slots


def _top_slots(slots: I64, dom_slots: I64, index: ClusterIndex) -> int:
    """The cluster's slots from its top domains and the nodes in no domain."""
    lo, hi = index.loose
    return int(sum(int(dom_slots[r]) for r in index.roots) + slots[lo:hi].sum())


def range_sums(values: I64, index: ClusterIndex) -> I64:
    """Per domain: the sum of `values` over its node range."""
    cs = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=cs[1:])
    return cs[index.dom_end] - cs[index.dom_start]


def range_mins(values: I64, index: ClusterIndex) -> I64:
    """Per domain: the minimum of `values` over its node range (BIG when empty)."""
    out = np.full(index.n_domains, BIG, dtype=np.int64)
    if index.n_domains == 0 or len(values) == 0:
        return out
    ext = np.append(values, BIG)
    for doms in index.tier_domains.values():
        starts, ends = index.dom_start[doms], index.dom_end[doms]
        nonempty = ends > starts
        if not nonempty.any():
            continue
        d = doms[nonempty]
        bounds = np.empty(2 * len(d), dtype=np.int64)
        bounds[0::2] = index.dom_start[d]
        bounds[1::2] = index.dom_end[d]
        out[d] = np.minimum.reduceat(ext, bounds)[0::2]
    return out


@dataclass
class LeaderCost:
    """For the `leader` shape: where the leader may go and what it costs in worker slots."""

    fits: Bool
    after: I64
    """Worker slots left on the node once the leader is there."""
    delta: I64
    """Worker slots the leader costs on the node (BIG where it cannot go)."""


@dataclass
class Offers:
    """One gang's offers over the whole cluster, on one free-capacity matrix."""

    demand: GangDemand
    slots: I64
    """Per node, capped at the gang size: the bulk class's slots (the only class when uniform)."""
    raw_slots: I64
    """Per node, uncapped bulk slots: true leftover for node-level binpacking."""
    node_offer: I64
    node_fit: Bool
    dom_slots: I64
    """Per domain: sum of `slots`."""
    dom_offer: I64
    dom_fit: Bool
    total_offer: int
    total_fit: bool
    leader: LeaderCost | None = None
    class_slots: tuple[I64, ...] = ()
    """`mixed` only: capped slots per class."""


def slice_slots(slots: I64, slices: tuple[tuple[int, int], ...], index: ClusterIndex) -> tuple[I64, I64]:
    """Node and domain slots counting whole slices only (see the module docstring): a node at
    a sliced tier 0 offers a multiple of that size; a domain offers what its direct nodes and
    child domains offer, rounded down to its tier's size when that tier is sliced."""
    size_of = dict(slices)
    nodes = slots // size_of[0] * size_of[0] if 0 in size_of else slots.copy()
    dom = np.zeros(index.n_domains, dtype=np.int64)
    cs = np.zeros(len(nodes) + 1, dtype=np.int64)
    np.cumsum(nodes, out=cs[1:])
    for tier in sorted(index.tier_domains):
        for d in index.tier_domains[tier].tolist():
            total = int(cs[index.dom_direct_end[d]] - cs[index.dom_start[d]])
            total += sum(int(dom[c]) for c in index.dom_children[d])
            size = size_of.get(tier)
            dom[d] = total // size * size if size else total
    return nodes, dom


def evaluate(free: I64, demand: GangDemand, index: ClusterIndex) -> Offers:
    """Offers of every node, domain and the cluster for `demand` on `free`."""
    n = demand.n
    bulk = demand.classes[0]
    raw = class_slots(free, bulk)
    slots = np.minimum(raw, n)
    if demand.slices and demand.kind == "uniform":
        slots, dom_slots = slice_slots(slots, demand.slices, index)
    else:
        dom_slots = range_sums(slots, index)
    total_slots = int(slots.sum()) if not demand.slices else _top_slots(slots, dom_slots, index)
    if demand.kind == "uniform":
        node_fit = slots >= n
        return Offers(
            demand,
            slots,
            raw,
            slots,
            node_fit,
            dom_slots,
            dom_slots,
            dom_slots >= n,
            total_slots,
            total_slots >= n,
        )
    if demand.kind == "leader":
        nb = bulk.count
        lead = demand.classes[1]
        fits = lead.mask & lead.room_for_one(free)
        after = np.minimum(class_slots(free - lead.req, bulk), nb)
        after[~fits] = 0
        capped = np.minimum(raw, nb)
        delta = np.where(fits, capped - after, BIG)
        # Worker slots are capped at the worker count here, so sums compare against nb.
        dom_b = range_sums(capped, index)
        dmin = range_mins(delta, index)
        has = dmin < BIG
        dom_offer = np.where(has, dom_b - np.where(has, dmin, 0) + 1, dom_b)
        dom_fit = has & (dom_b - np.where(has, dmin, 0) >= nb)
        node_offer = np.where(fits, np.maximum(after + 1, capped), capped)
        node_fit = fits & (after >= nb)
        total_b = int(capped.sum())
        tmin = int(delta.min()) if len(delta) else int(BIG)
        total_fit = bool(tmin < BIG and total_b - tmin >= nb)
        total_offer = total_b - tmin + 1 if tmin < BIG else total_b
        return Offers(
            demand,
            capped,
            raw,
            node_offer,
            node_fit,
            dom_b,
            dom_offer,
            dom_fit,
            total_offer,
            total_fit,
            leader=LeaderCost(fits=fits, after=after, delta=delta),
        )
    # mixed: necessary conditions only; candidates are confirmed by placing them class by class.
    per_class = tuple(class_slots(free, c, cap=c.count) for c in demand.classes)
    node_offer = np.sum(per_class, axis=0)
    dom_per = [range_sums(s, index) for s in per_class]
    dom_offer = np.sum(dom_per, axis=0) if dom_per else np.zeros(index.n_domains, np.int64)
    dom_fit = np.all([d >= c.count for d, c in zip(dom_per, demand.classes, strict=True)], axis=0)
    node_fit = np.all([s >= c.count for s, c in zip(per_class, demand.classes, strict=True)], axis=0)
    totals = [int(s.sum()) for s in per_class]
    total_fit = all(t >= c.count for t, c in zip(totals, demand.classes, strict=True))
    return Offers(
        demand,
        slots,
        raw,
        node_offer,
        node_fit,
        dom_slots,
        dom_offer,
        np.asarray(dom_fit, dtype=np.bool_),
        int(sum(totals)),
        bool(total_fit),
        class_slots=per_class,
    )


def fits_rows(free_rows: I64, demand: GangDemand, masks: tuple[Bool, ...]) -> bool:
    """Does the whole gang fit on these nodes taken together (one domain, no inner structure)?

    `masks` are the classes' masks restricted to the same rows. Exact for `uniform` and
    `leader`; for `mixed` a class-by-class first fit (sound, may miss a packing).
    """
    n = demand.n
    bulk = demand.classes[0]
    cols = np.flatnonzero(bulk.req)
    if demand.kind == "uniform":
        if len(cols) == 0:
            return bool(masks[0].any()) or n == 0
        s = (np.maximum(free_rows[:, cols], 0) // bulk.req[cols]).min(axis=1)
        s[~masks[0]] = 0
        return int(np.minimum(s, n).sum()) >= n
    if demand.kind == "leader":
        nb = bulk.count
        lead = demand.classes[1]
        s = (
            (np.maximum(free_rows[:, cols], 0) // bulk.req[cols]).min(axis=1)
            if len(cols)
            else np.full(free_rows.shape[0], nb, np.int64)
        )
        s[~masks[0]] = 0
        s = np.minimum(s, nb)
        fits = masks[1] & lead.room_for_one(free_rows)
        if not fits.any():
            return False
        rest = free_rows[fits] - lead.req
        a = (
            (np.maximum(rest[:, cols], 0) // bulk.req[cols]).min(axis=1)
            if len(cols)
            else np.full(len(rest), nb)
        )
        a[~masks[0][fits]] = 0
        a = np.minimum(a, nb)
        return int(s.sum()) - int((s[fits] - a).min()) >= nb
    work = free_rows.copy()
    for c, m in zip(demand.classes, masks, strict=True):
        ccols = np.flatnonzero(c.req)
        need = c.count
        s = (
            (np.maximum(work[:, ccols], 0) // c.req[ccols]).min(axis=1)
            if len(ccols)
            else np.full(len(work), need)
        )
        s[~m] = 0
        order = np.lexsort((np.arange(len(s)), -s))
        for v in order:
            if need <= 0 or s[v] <= 0:
                break
            take = min(int(s[v]), need)
            work[v] -= c.req * take
            need -= take
        if need > 0:
            return False
    return True


TOO_MANY_PODS = "Too many pods"
"""kube's NodeResourcesFit reason when a node's pod count is full."""


def short_reason(resource: str) -> str:
    """NodeResourcesFit's reason, in kube's words, for a node short of `resource`."""
    return TOO_MANY_PODS if resource == "pods" else f"Insufficient {resource}"


def room_cuts(req: I64, free: I64, index: ClusterIndex) -> list[tuple[str, Bool]]:
    """Per resource `req` asks for: (its reason, the nodes whose `free` holds one pod of it),
    in the index's resource order. A node short of a resource the pod does not ask for is not
    short for it (kube's `fitsRequest`); `class_slots` counts by the same rule."""
    return [(short_reason(index.resources[r]), free[:, r] >= req[r]) for r in np.flatnonzero(req > 0)]


def insufficient(req: I64, mask: Bool, free: I64, index: ClusterIndex) -> list[str]:
    """kube's `N Insufficient <resource>` (`N Too many pods`): nodes a class may use that lack
    room for one pod, counted for each resource it asks for."""
    out: list[str] = []
    for reason, ok in room_cuts(req, free, index):
        count = int(np.count_nonzero(mask & ~ok))
        if count:
            out.append(f"{count} {reason}")
    return out
