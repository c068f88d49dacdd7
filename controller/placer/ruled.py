"""Member-by-member placement inside one place, for gangs whose members are tied by inter-pod
rules (anti-affinity caps, affinity gathers, spread caps, host ports).

Offer slots cannot express "at most one of these per block" or "all of these in one zone", so
such a gang is placed the way kube-scheduler would place its pods one after another, each seeing
the ones reserved before it: pods in rank order, each on the first node of the place (tree order,
nodes already holding members first, so consecutive ranks still share a node) that passes its
class's mask, has room, keeps every cap, and keeps every spread constraint with the members
placed so far counted (`rules.SpreadRule`). A gather tries each value of its key in the place
in tree order. Greedy and sound: the result always keeps every rule (checked again at the end);
it may miss a packing a full search would find.
"""

from __future__ import annotations

import numpy as np

from controller.placer.demand import GangDemand
from controller.placer.rules import MemberRules
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


class _Kept:
    """What the rules allow as members are placed one after another: each cap's and each
    spread's counts so far, over the place's nodes [lo, hi)."""

    def __init__(self, rules: MemberRules, lo: int, hi: int) -> None:
        self.rules, self.lo, self.hi = rules, lo, hi
        self.used = [np.zeros(len(c.limit), dtype=np.int64) for c in rules.caps]
        self.counts = [s.counts.copy() for s in rules.spreads]
        self.caps_of: dict[int, list[int]] = {}
        for k, cap in enumerate(rules.caps):
            for m in cap.members:
                self.caps_of.setdefault(m, []).append(k)

    def allowed(self, pos: int) -> Bool:
        """Nodes of the place where member `pos` may go now."""
        ok = np.ones(self.hi - self.lo, dtype=np.bool_)
        for k in self.caps_of.get(pos, ()):
            cap = self.rules.caps[k]
            codes = cap.codes[self.lo : self.hi]
            safe = np.maximum(codes, 0)
            room = cap.limit[safe] - self.used[k][safe] if len(cap.limit) else np.zeros(len(codes), np.int64)
            ok &= (codes < 0) | (room > 0)
        for rule, counts in zip(self.rules.spreads, self.counts, strict=True):
            if pos in rule.members:
                codes = rule.codes[self.lo : self.hi]
                fits = rule.allowed(counts, pos in rule.matching)
                ok &= (codes >= 0) & fits[np.maximum(codes, 0)]
        return ok

    def place(self, pos: int, node: int) -> None:
        for k in self.caps_of.get(pos, ()):
            code = int(self.rules.caps[k].codes[node])
            if code >= 0:
                self.used[k][code] += 1
        for rule, counts in zip(self.rules.spreads, self.counts, strict=True):
            code = int(rule.codes[node])
            if code >= 0 and pos in rule.matching:
                counts[code] += 1


def _greedy(
    lo: int,
    hi: int,
    demand: GangDemand,
    free: I64,
    rules: MemberRules,
    gather: tuple[tuple[int, ...], Bool] | None,
) -> list[tuple[int, int]] | None:
    work = free[lo:hi].copy()
    kept = _Kept(rules, lo, hi)
    gathered = set(gather[0]) if gather is not None else set()
    class_of = {p: c for c in demand.classes for p in c.pods}
    holding = np.zeros(hi - lo, dtype=np.bool_)
    out: list[tuple[int, int]] = []
    for pos in range(demand.n):
        c = class_of[pos]
        ok = c.mask[lo:hi] & c.room_for_one(work) & kept.allowed(pos)
        if gather is not None and pos in gathered:
            ok &= gather[1]
        cand = np.flatnonzero(ok & holding)
        if len(cand) == 0:
            cand = np.flatnonzero(ok)
        if len(cand) == 0:
            return None
        v = int(cand[0])
        work[v] -= c.req
        holding[v] = True
        kept.place(pos, lo + v)
        out.append((pos, lo + v))
    return out if rules.holds(out) else None
