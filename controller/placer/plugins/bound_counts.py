"""Counts of bound pods per topology value, kept for an attempt the way kube-scheduler's PreFilter
state is kept with its AddPod/RemovePod extensions.

A plugin that counts bound pods (PodTopologySpread's matching pods per domain, InterPodAffinity's
pods a term of the incoming pod selects) counts them once per attempt, over every bound pod,
split by whether the pod may be evicted by the attempt's gang (`preempt.may_go`) or stays. When
preemption runs the filters again with candidate victims removed or put back, the counts are
adjusted by just the pods the snapshot set since (`Snapshot.watch`); preemption's best case,
every evictable pod gone (`framework.WITHOUT_LOWER`), reads the staying pods' counts alone.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np

from controller.placer.framework import I64, CycleState, StateKey
from controller.placer.preempt import may_go, may_go_each
from controller.placer.records import BoundPod
from controller.placer.snapshot import PodWatch, Snapshot
from controller.placer.terms import NamespaceLabels
from controller.placer.values import per_value, value_codes

_node_of = attrgetter("node")

Matches = Callable[[BoundPod], bool]
"""Whether a bound pod counts (the plugin's rule: its namespace, labels, node)."""


@dataclass
class WatchedPods:
    """What an attempt's kept counts were made from: the snapshot, its namespace labels, the
    gang's priority, the bound pods at the start and the watch telling which changed since."""

    snap: Snapshot
    ns_labels: NamespaceLabels
    priority: int
    watch: PodWatch
    base: dict[str, BoundPod]
    """The bound pods at the start (the watch tells which changed since)."""

    def holds(self, snap: Snapshot, priority: int) -> bool:
        """Can the counts be brought up to date for `snap` by the pods set since?"""
        return (
            snap is self.snap
            and snap.namespace_labels is self.ns_labels
            and priority == self.priority
            and not self.watch.lost
        )


@dataclass
class BoundCounts(WatchedPods):
    """One attempt's counts (see the module docstring): per question (`what`, naming the rule
    and the topology key), the matching pods per value of the key, those that stay and those
    that may go."""

    goes: np.ndarray
    """Per pod of `base` (in its order): may it be evicted by the gang?"""
    split: dict[Hashable, tuple[I64, I64]] = field(default_factory=dict)

    @classmethod
    def of(cls, snap: Snapshot, priority: int) -> BoundCounts:
        base = dict(snap.pods)
        watch = snap.watch(max(64, len(base) // 4))
        goes = may_go_each(list(base.values()), priority)
        return cls(snap, snap.namespace_labels, priority, watch, base, goes)

    def count(self, what: Hashable, key: str, matches: Matches, lower: int | None) -> I64:
        """Per value of `key`: the bound pods `matches` counts, on the snapshot as it stands
        now, or with every pod a gang of priority `lower` may evict left out. `what` names the
        rule (the same `what` always comes with the same `matches`)."""
        codes, n = value_codes(self.snap.index, key)
        split = self.split.get((what, key))
        if split is None:
            pods = list(self.base.values())
            hit = np.fromiter(map(matches, pods), dtype=np.bool_, count=len(pods))
            nodes = np.fromiter(map(_node_of, pods), dtype=np.int64, count=len(pods))
            stays = per_value(codes, nodes[hit & ~self.goes].tolist(), n)
            split = self.split[(what, key)] = (stays, per_value(codes, nodes[hit & self.goes].tolist(), n))
        out = split[0].copy() if lower is not None else split[0] + split[1]
        now = self.snap.pods
        for k in self.watch.touched:
            was, cur = self.base.get(k), now.get(k)
            if was is cur:
                continue
            for e, sign in ((was, -1), (cur, 1)):
                if e is None or (lower is not None and may_go(e, lower)) or not matches(e):
                    continue
                code = int(codes[e.node])
                if code >= 0:
                    out[code] += sign
        return out


COUNTS: StateKey[BoundCounts | None] = StateKey("PreFilter/boundCounts", attempt=True)
"""The attempt's counts, shared by the plugins that count bound pods (each names its own
questions)."""


def bound_counts(state: CycleState, snap: Snapshot, priority: int) -> BoundCounts:
    """The attempt's `BoundCounts` (made by its first run, or anew when it cannot be brought up
    to date: another snapshot, another gang's priority, too many pods changed)."""
    got = state.get(COUNTS, None)
    if got is None or not got.holds(snap, priority):
        got = BoundCounts.of(snap, priority)
        state.write(COUNTS, got)
    return got
