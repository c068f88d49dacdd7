"""NodeName: a pod that names its node (`spec.nodeName`) fits only there (kube-scheduler's
plugin of the same name). A pod the scheduler places has none; a pod that has one is bound,
so this only matters for pods another component pinned but the API server has not bound."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from controller.placer.framework import Cut, CycleState, ShapeClass
from controller.placer.snapshot import Snapshot

REASON = "node(s) didn't match the requested node name"


class NodeName:
    name: ClassVar[str] = "NodeName"

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        wanted = cls.pod.pod.spec.node_name
        if not wanted:
            return ()
        mask = np.zeros(snap.index.n_nodes, dtype=np.bool_)
        pos = snap.index.node_pos.get(wanted)
        if pos is not None:
            mask[pos] = True
        return ((REASON, mask),)
