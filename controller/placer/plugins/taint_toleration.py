"""TaintToleration: a node's `NoSchedule` and `NoExecute` taints keep off every pod that does
not tolerate them (kube-scheduler's plugin of the same name). `spec.unschedulable` is
NodeUnschedulable's.

Score: `PreferNoSchedule` taints are a preference, never a filter. As kube scores them, a
node's raw score is how many of its PreferNoSchedule taints the pod does not tolerate, reading
only the pod's tolerations whose effect is PreferNoSchedule or empty (`tolerates` is the one
matcher, for both points); normalized reversed (kube's DefaultNormalizeScore with reverse): the
node with the most untolerated taints gets 0, one with none 100, all 100 when no node has any.

Tolerations are checked once per distinct taint set of the index, so a cluster of thousands
of nodes with a handful of taint sets costs a handful of checks per pod shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from controller.placer.framework import I64, Bool, Cut, CycleState, ShapeClass, default_normalize
from controller.placer.memo import MemoSlot
from controller.placer.snapshot import ClusterIndex, Snapshot, TaintTuple
from translations.core import PodSpec

REASON = "node(s) had untolerated taint(s)"
Toleration = tuple[str, str, str, str]
"""(key, operator, value, effect)."""
MASK: MemoSlot[Bool] = MemoSlot("Filter/TaintToleration")
UNTOLERATED: MemoSlot[I64] = MemoSlot("Score/TaintToleration")


def pod_tolerations(spec: PodSpec) -> tuple[Toleration, ...]:
    return tuple(
        (t.key or "", t.operator or "Equal", t.value or "", t.effect or "") for t in spec.tolerations or ()
    )


def tolerates(tolerations: Sequence[Toleration], taint: TaintTuple) -> bool:
    """kube's ToleratesTaint for one taint: an empty effect tolerates every effect, `Exists`
    with an empty key every taint."""
    t_key, t_value, t_effect = taint
    for key, op, value, effect in tolerations:
        if effect and effect != t_effect:
            continue
        if op == "Exists":
            if not key or key == t_key:
                return True
        elif op == "Equal" and key and key == t_key and value == t_value:
            return True
    return False


def tolerated_nodes(index: ClusterIndex, tolerations: tuple[Toleration, ...]) -> Bool:
    """Per node: every one of its NoSchedule/NoExecute taints is tolerated."""

    def build() -> Bool:
        ok = np.array(
            [all(tolerates(tolerations, t) for t in taints) for taints in index.taint_sets],
            dtype=np.bool_,
        )
        return ok[index.taint_group] if index.n_nodes else np.ones(0, np.bool_)

    return index.memo.get(MASK, tolerations, build)


def untolerated_prefer(index: ClusterIndex, tolerations: tuple[Toleration, ...]) -> I64:
    """Per node: its PreferNoSchedule taints that none of `tolerations` tolerates (kube reads
    only the tolerations with effect PreferNoSchedule or empty here: the caller's are)."""

    def build() -> I64:
        per_set = np.array(
            [sum(not tolerates(tolerations, t) for t in taints) for taints in index.prefer_sets],
            dtype=np.int64,
        )
        return per_set[index.prefer_group] if index.n_nodes else np.zeros(0, np.int64)

    return index.memo.get(UNTOLERATED, tolerations, build)


def prefer_tolerations(spec: PodSpec) -> tuple[Toleration, ...]:
    """The pod's tolerations kube's Score reads: effect PreferNoSchedule or empty."""
    return tuple(t for t in pod_tolerations(spec) if t[3] in ("", "PreferNoSchedule"))


class TaintToleration:
    name: ClassVar[str] = "TaintToleration"

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        if len(snap.index.taint_sets) == 1:  # no node has a hard taint
            return ()
        return ((REASON, tolerated_nodes(snap.index, pod_tolerations(cls.pod.pod.spec))),)

    def score(
        self, state: CycleState, classes: Sequence[ShapeClass], snap: Snapshot, feasible: Bool
    ) -> I64 | None:
        if len(snap.index.prefer_sets) == 1:  # no node has a PreferNoSchedule taint: all 100
            return None
        out = np.zeros(snap.index.n_nodes, dtype=np.int64)
        for cls in classes:
            out += untolerated_prefer(snap.index, prefer_tolerations(cls.pod.pod.spec))
        return out

    def normalize(self, state: CycleState, scores: I64, feasible: Bool) -> I64:
        return default_normalize(scores, feasible, reverse=True)
