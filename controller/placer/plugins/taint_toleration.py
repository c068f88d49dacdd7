"""TaintToleration: a node's `NoSchedule` and `NoExecute` taints keep off every pod that does
not tolerate them (kube-scheduler's plugin of the same name; `PreferNoSchedule` is a score
kube weighs, not a filter). `spec.unschedulable` is NodeUnschedulable's.

Tolerations are checked once per distinct taint set of the index, so a cluster of thousands
of nodes with a handful of taint sets costs a handful of checks per pod shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from controller.placer.framework import Bool, Cut, CycleState, ShapeClass
from controller.placer.memo import MemoSlot
from controller.placer.snapshot import ClusterIndex, Snapshot, TaintTuple
from translations.core import PodSpec

REASON = "node(s) had untolerated taint(s)"
Toleration = tuple[str, str, str, str]
"""(key, operator, value, effect)."""
MASK: MemoSlot[Bool] = MemoSlot("Filter/TaintToleration")


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


class TaintToleration:
    name: ClassVar[str] = "TaintToleration"

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        if len(snap.index.taint_sets) == 1:  # no node has a hard taint
            return ()
        return ((REASON, tolerated_nodes(snap.index, pod_tolerations(cls.pod.pod.spec))),)
