"""NodeResourcesFit: a pod fits a node only where the node's free room covers its request in
every resource it asks for, the `pods` count included (kube-scheduler's plugin of the same name).

The request is kube's (`translations.core.effective_requests`): containers, sidecars and the
largest init container, pod-level `spec.resources` where they name a resource, an in-place
resize's larger allocation, the overhead. Free room depends on the cycle (what other gangs
reserved, what preemption frees), so this plugin is not a static mask:

* Filter, the static half: a pod asking for a resource no node has fits nowhere
  ("Insufficient <resource>" on every node).
* FilterRoom, the half that reads free room (`room`): per resource the pod asks for, the nodes
  whose free room holds one more pod, with kube's reason for the others ("Insufficient cpu",
  "Too many pods"; `offer.room_cuts`). The kernels count by the same rule how many of a shape
  class's pods fit each node (`offer.class_slots`), which the selection and preemption read;
  a node without room is never taken out of the class's node mask, since preemption may make
  room there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from controller.placer.framework import I64, Cut, CycleState, ShapeClass
from controller.placer.offer import insufficient, room_cuts
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

    def room(self, state: CycleState, cls: ShapeClass, snap: Snapshot, free: I64) -> Sequence[Cut]:
        """Per resource `cls` asks for, the nodes whose `free` room holds one more of its pods."""
        return room_cuts(cls.req, free, snap.index)
