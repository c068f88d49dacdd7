"""NodeResourcesFit: a pod fits a node only where the node's free room covers its request in
every resource it asks for, the `pods` count included (kube-scheduler's plugin of the same name).

The request is kube's (`translations.core.effective_requests`): containers, sidecars and the
largest init container, pod-level `spec.resources` where they name a resource, an in-place
resize's larger allocation, the overhead. Free room depends on the cycle (what other gangs
reserved, what preemption frees), so this plugin is not a static mask: its kernel
(`controller.placer.offer.class_slots`) counts, per node, how many of a shape class's pods fit,
and the selection and preemption read those counts. Filter's static half: a pod asking for a
resource no node has fits nowhere ("Insufficient <resource>" on every node).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from controller.placer.framework import Cut, CycleState, ShapeClass
from controller.placer.offer import insufficient
from controller.placer.snapshot import Snapshot

__all__ = ["NodeResourcesFit", "insufficient"]


class NodeResourcesFit:
    name: ClassVar[str] = "NodeResourcesFit"

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        """The static half: a class asking for a resource no node has fits nowhere."""
        index = snap.index
        missing = sorted(r for r, v in cls.pod.requests.items() if v > 0 and r not in index.res_pos)
        if not missing:
            return ()
        return ((f"Insufficient {missing[0]}", np.zeros(index.n_nodes, dtype=np.bool_)),)
