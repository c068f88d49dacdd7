"""NodeUnschedulable: a node marked `spec.unschedulable` takes only pods that tolerate the
`node.kubernetes.io/unschedulable:NoSchedule` taint it behaves as if it had (kube-scheduler's
plugin of the same name)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from controller.placer.framework import Cut, CycleState, ShapeClass
from controller.placer.plugins.taint_toleration import pod_tolerations, tolerates
from controller.placer.snapshot import UNSCHEDULABLE_TAINT, Snapshot

REASON = "node(s) were unschedulable"


class NodeUnschedulable:
    name: ClassVar[str] = "NodeUnschedulable"

    def __init__(self, *, comparison_operators: bool = True) -> None:
        self.comparison_operators = comparison_operators
        """The `TaintTolerationComparisonOperators` gate (`taint_toleration`)."""

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        index = snap.index
        tolerations = pod_tolerations(cls.pod.pod.spec, comparison_operators=self.comparison_operators)
        if not index.unschedulable.any() or tolerates(tolerations, UNSCHEDULABLE_TAINT):
            return ()
        return ((REASON, ~index.unschedulable),)
