"""Member-by-member placement inside one place, for gangs whose members are tied by inter-pod
rules (anti-affinity caps, affinity gathers, spread caps, host ports).

Offer slots cannot express "at most one of these per block" or "all of these in one zone", so
such a gang is placed the way kube-scheduler would place its pods one after another, each seeing
the ones reserved before it: pods in rank order, each on the first node of the place (tree order,
nodes already holding members first, so consecutive ranks still share a node) that passes its
class's mask, has room, and keeps every cap. A gather tries each value of its key in the place
in tree order. Greedy and sound: the result always keeps every rule (checked again at the end);
it may miss a packing a full search would find.
"""

from __future__ import annotations

import numpy as np

from controller.placer.affinity import GangRules
from controller.placer.demand import GangDemand
from controller.placer.snapshot import I64, Bool, ClusterIndex


def place_ruled(
    lo: int, hi: int, demand: GangDemand, free: I64, index: ClusterIndex
) -> list[tuple[int, int]] | None:
    """(position, node) for every pod of `demand` inside nodes [lo, hi), or None."""
    rules = demand.rules
    assert rules is not None
    del index
    if not rules.gathers:
        return _greedy(lo, hi, demand, free, rules, None)
    g = rules.gathers[0]
    seg = g.codes[lo:hi]
    usable = np.zeros(hi - lo, dtype=np.bool_)
    for c in demand.classes:
        if set(c.pods) & set(g.members):
            usable |= c.mask[lo:hi]
    # Values in tree order of their first node inside the place.
    values, first = np.unique(seg[usable & (seg >= 0)], return_index=True)
    for v in values[np.argsort(first, kind="stable")]:
        got = _greedy(lo, hi, demand, free, rules, (g.members, seg == v))
        if got is not None:
            return got
    return None


def _greedy(
    lo: int,
    hi: int,
    demand: GangDemand,
    free: I64,
    rules: GangRules,
    gather: tuple[tuple[int, ...], Bool] | None,
) -> list[tuple[int, int]] | None:
    work = free[lo:hi].copy()
    used = [np.zeros(len(c.limit), dtype=np.int64) for c in rules.caps]
    caps_of: dict[int, list[int]] = {}
    for k, cap in enumerate(rules.caps):
        for m in cap.members:
            caps_of.setdefault(m, []).append(k)
    gathered = set(gather[0]) if gather is not None else set()
    class_of = {p: c for c in demand.classes for p in c.pods}
    holding = np.zeros(hi - lo, dtype=np.bool_)
    out: list[tuple[int, int]] = []
    for pos in range(demand.n):
        c = class_of[pos]
        ok = c.mask[lo:hi] & (work >= c.req).all(axis=1)
        if gather is not None and pos in gathered:
            ok &= gather[1]
        for k in caps_of.get(pos, ()):
            cap = rules.caps[k]
            codes = cap.codes[lo:hi]
            room = cap.limit[np.maximum(codes, 0)] - used[k][np.maximum(codes, 0)] if len(cap.limit) else 0
            ok &= (codes < 0) | (room > 0)
        cand = np.flatnonzero(ok & holding)
        if len(cand) == 0:
            cand = np.flatnonzero(ok)
        if len(cand) == 0:
            return None
        v = int(cand[0])
        work[v] -= c.req
        holding[v] = True
        for k in caps_of.get(pos, ()):
            code = int(rules.caps[k].codes[lo + v])
            if code >= 0:
                used[k][code] += 1
        out.append((pos, lo + v))
    return out if rules.holds(out) else None
