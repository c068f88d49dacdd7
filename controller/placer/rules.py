"""Rules between a gang's members: what the selection keeps while it places them.

kube-scheduler places a gang's pods one after another, each seeing the ones reserved before
it. The inter-pod plugins (InterPodAffinity, PodTopologySpread, NodePorts) describe what that
means for members in three shapes, and `ruled.place_ruled` applies them member by member:

* `ValueCap`: at most `limit[value]` of some members in each value of a node label (host
  ports: one per node; required anti-affinity between members: one per value);
* `Gather`: some members share one value (the first pod of a required-affinity collection
  starts it, the rest must join it);
* `SpreadRule`: a `DoNotSchedule` topology spread constraint as kube checks it for each pod:
  a member may go to a value only if that value's count, plus one when the member matches the
  selector, less the lowest count over the constraint's domains, stays within `maxSkew`; the
  counts grow as members are placed, so a gang of four over two empty nodes ends 2+2.

`holds` checks a finished assignment against all of them, replaying spread in rank order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class ValueCap:
    """At most `limit[value]` of `members` in each value of `key` (nodes without it: no limit)."""

    key: str
    members: tuple[int, ...]
    """Positions in the attempt's pending pods."""
    codes: I64
    """Per node: the value's code, -1 where the node lacks the key."""
    limit: I64
    """Per value code."""


@dataclass(frozen=True)
class Gather:
    """`members` share one value of `key`."""

    key: str
    members: tuple[int, ...]
    codes: I64


@dataclass(frozen=True)
class SpreadRule:
    """One hard spread constraint over some members (see the module docstring)."""

    key: str
    members: tuple[int, ...]
    """Members the constraint applies to (they carry it)."""
    matching: frozenset[int]
    """Members its selector matches: each adds one to its value's count once placed."""
    codes: I64
    """Per node: the value's code, -1 where the node lacks the key."""
    counts: I64
    """Per value code: matching pods already there (on eligible nodes)."""
    domains: Bool
    """Per value code: a domain of the constraint (it has an eligible node)."""
    max_skew: int
    min_domains: int = 1

    def allowed(self, counts: I64, matches: bool) -> Bool:
        """Per value code: may one more member (matching or not) go there now?"""
        low = int(counts[self.domains].min()) if self.domains.any() else 0
        if int(self.domains.sum()) < self.min_domains:
            low = 0  # fewer domains than minDomains: the global minimum counts as 0
        return counts + int(matches) - low <= self.max_skew


@dataclass(frozen=True)
class MemberRules:
    caps: tuple[ValueCap, ...] = ()
    gathers: tuple[Gather, ...] = ()
    spreads: tuple[SpreadRule, ...] = ()
    score: I64 | None = None
    """Per node, the Score plugins' weighted sum (`filtering.run_scores`); higher is preferred."""

    @property
    def binding(self) -> bool:
        """True when placements must be made member by member."""
        return bool(self.caps or self.gathers or self.spreads)

    def restrict(self, remap: Mapping[int, int]) -> MemberRules:
        """The rules for a subset of the members (`remap`: old position -> new)."""

        def keep(members: Iterable[int]) -> tuple[int, ...]:
            return tuple(remap[m] for m in members if m in remap)

        caps = tuple(replace(c, members=keep(c.members)) for c in self.caps if keep(c.members))
        gathers = tuple(replace(g, members=keep(g.members)) for g in self.gathers if len(keep(g.members)) > 1)
        spreads = tuple(
            replace(s, members=keep(s.members), matching=frozenset(keep(s.matching)))
            for s in self.spreads
            if keep(s.members)
        )
        return MemberRules(caps, gathers, spreads, self.score)

    def holds(self, assignments: Iterable[tuple[int, int]]) -> bool:
        """Does a full assignment (position, node) keep every rule?"""
        node_of = dict(assignments)
        for cap in self.caps:
            used: dict[int, int] = {}
            for m in cap.members:
                code = int(cap.codes[node_of[m]]) if m in node_of else -1
                if code >= 0:
                    used[code] = used.get(code, 0) + 1
                    if used[code] > int(cap.limit[code]):
                        return False
        for g in self.gathers:
            values = {int(g.codes[node_of[m]]) for m in g.members if m in node_of}
            if len(values) > 1 or -1 in values:
                return False
        return all(_spread_holds(s, node_of) for s in self.spreads)


def _spread_holds(rule: SpreadRule, node_of: Mapping[int, int]) -> bool:
    counts = rule.counts.copy()
    for m in sorted(set(rule.members) | rule.matching):
        if m not in node_of:
            continue
        code = int(rule.codes[node_of[m]])
        if m in rule.members and (code < 0 or not rule.allowed(counts, m in rule.matching)[code]):
            return False
        if code >= 0 and m in rule.matching:
            counts[code] += 1
    return True


def merge_gathers(gathers: Iterable[Gather]) -> list[Gather]:
    """One gather per key: members tied by any term on the key share one value."""
    by_key: dict[str, Gather] = {}
    for g in gathers:
        prev = by_key.get(g.key)
        members = tuple(sorted(set(g.members) | set(prev.members if prev else ())))
        by_key[g.key] = Gather(g.key, members, g.codes)
    return list(by_key.values())
