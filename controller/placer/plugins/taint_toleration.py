"""TaintToleration: a node's `NoSchedule` and `NoExecute` taints keep off every pod that does
not tolerate them (kube-scheduler's plugin of the same name). `spec.unschedulable` is
NodeUnschedulable's.

Score: `PreferNoSchedule` taints are a preference, never a filter. As kube scores them, a
node's raw score is how many of its PreferNoSchedule taints the pod does not tolerate, reading
only the pod's tolerations whose effect is PreferNoSchedule or empty (`tolerates` is the one
matcher, for both points); normalized reversed (kube's DefaultNormalizeScore with reverse): the
node with the most untolerated taints gets 0, one with none 100, all 100 when no node has any.

Numeric operators (KEP-5471, gate `TaintTolerationComparisonOperators`): a toleration with
`Lt` or `Gt` tolerates a taint of its key whose value, and its own, read as base-10 int64 (Go's
`strconv.ParseInt`: an optional sign, digits, nothing else), compare so: `Lt` when the taint's
value is below the toleration's, `Gt` when above; a value that does not parse tolerates
nothing. topobridge runs with the gate on (the API server admits these operators only with its
own gate on, so a pod that carries one was written for it); a plugin built with
`comparison_operators=False` is kube-scheduler with the gate off, where such a toleration
tolerates nothing (`pod_tolerations` leaves it out). NodeUnschedulable and PodTopologySpread's
`nodeTaintsPolicy: Honor` read tolerations through the same two functions, as kube passes the
gate to all three.

Tolerations are checked once per distinct taint set of the index, so a cluster of thousands
of nodes with a handful of taint sets costs a handful of checks per pod shape.
"""

from __future__ import annotations

import re
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


COMPARISON_OPERATORS = frozenset({"Lt", "Gt"})
"""The numeric operators the `TaintTolerationComparisonOperators` gate lets a toleration use."""
_INT64 = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def pod_tolerations(spec: PodSpec, *, comparison_operators: bool = True) -> tuple[Toleration, ...]:
    """The pod's tolerations as `tolerates` reads them; without `comparison_operators` (the
    gate off) an `Lt` or `Gt` toleration tolerates nothing, so it is left out."""
    return tuple(
        (t.key or "", t.operator or "Equal", t.value or "", t.effect or "")
        for t in spec.tolerations or ()
        if comparison_operators or t.operator not in COMPARISON_OPERATORS
    )


def parse_int64(text: str) -> int | None:
    """`text` as Go's `strconv.ParseInt(text, 10, 64)` reads it; None where Go errs."""
    if _INT64.fullmatch(text) is None:
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _compares(op: str, toleration_value: str, taint_value: str) -> bool:
    """kube's compareNumericValues: `Lt` when the taint's value is below the toleration's,
    `Gt` when above; False when either does not parse as an int64."""
    mine, theirs = parse_int64(toleration_value), parse_int64(taint_value)
    if mine is None or theirs is None:
        return False
    return theirs < mine if op == "Lt" else theirs > mine


def tolerates(tolerations: Sequence[Toleration], taint: TaintTuple) -> bool:
    """kube's ToleratesTaint, for any of `tolerations`: an empty effect tolerates every effect,
    `Exists` with an empty key every taint, `Lt`/`Gt` a taint whose value compares as numbers."""
    return any(_tolerates(t, taint) for t in tolerations)


def _tolerates(toleration: Toleration, taint: TaintTuple) -> bool:
    key, op, value, effect = toleration
    t_key, t_value, t_effect = taint
    if effect and effect != t_effect:
        return False
    if op == "Exists":
        return not key or key == t_key
    if not key or key != t_key:
        return False
    if op == "Equal":
        return value == t_value
    return op in COMPARISON_OPERATORS and _compares(op, value, t_value)


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


def prefer_tolerations(spec: PodSpec, *, comparison_operators: bool = True) -> tuple[Toleration, ...]:
    """The pod's tolerations kube's Score reads: effect PreferNoSchedule or empty."""
    return tuple(
        t
        for t in pod_tolerations(spec, comparison_operators=comparison_operators)
        if t[3] in ("", "PreferNoSchedule")
    )


class TaintToleration:
    name: ClassVar[str] = "TaintToleration"

    def __init__(self, *, comparison_operators: bool = True) -> None:
        self.comparison_operators = comparison_operators
        """The `TaintTolerationComparisonOperators` gate (module docstring)."""

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        if len(snap.index.taint_sets) == 1:  # no node has a hard taint
            return ()
        tolerations = pod_tolerations(cls.pod.pod.spec, comparison_operators=self.comparison_operators)
        return ((REASON, tolerated_nodes(snap.index, tolerations)),)

    def score(
        self, state: CycleState, classes: Sequence[ShapeClass], snap: Snapshot, feasible: Bool
    ) -> I64 | None:
        if len(snap.index.prefer_sets) == 1:  # no node has a PreferNoSchedule taint: all 100
            return None
        out = np.zeros(snap.index.n_nodes, dtype=np.int64)
        for cls in classes:
            tolerations = prefer_tolerations(cls.pod.pod.spec, comparison_operators=self.comparison_operators)
            out += untolerated_prefer(snap.index, tolerations)
        return out

    def normalize(self, state: CycleState, scores: I64, feasible: Bool) -> I64:
        return default_normalize(scores, feasible, reverse=True)
