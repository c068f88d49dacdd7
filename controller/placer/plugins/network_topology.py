"""NetworkTopology: where a gang may go in the topology tree (ours; Volcano's network-topology
plugin and Koordinator's topology-aware gang placement, one meaning for every dialect through
`translations.constraints`).

* Levels (`controller.placer.tiers.levels`, read by the selection and preemption): the places
  a gang is tried at, lowest first: single nodes (tier 0), each
  tier up to the constraint's (hard: the limit; soft: where the preference stops; none: the
  top), then for soft and unconstrained gangs the whole cluster. A Volcano PodGroup with a
  tier above 0 chooses a HyperNode first: a single node is a place of its own only at tier 0.
  Volcano adds a virtual HyperNode one tier above the highest real one (`framework/session.go`
  `addClusterTopHyperNode`), so a hard limit above the tree's highest tier lets the gang span
  the whole cluster.
* PreFilter: a hard constraint cannot be kept around a member bound to a node that is gone
  (its domain is unknown): the gang waits until that member is deleted, unless its Volcano
  PodGroup records the HyperNode the members run in (`tiers.allocated_domain`), which Volcano
  reads instead of their nodes.
* Filter: a Kueue TAS gang over a Kueue Topology goes only onto nodes of that Topology, those
  carrying every level's label (Kueue reads no other node, `NodeMatchesFlavor`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from controller.placer.framework import Code, Cut, CycleState, ShapeClass, StateKey, Status
from controller.placer.snapshot import Snapshot
from controller.placer.tiers import allocated_domain
from translations.gangs import Gang, GangPod

KUEUE_TAS: StateKey[bool] = StateKey("PreFilter/NetworkTopology")
"""The gang is a Kueue TAS pod set (its nodes are the Kueue Topology's)."""
OFF_KUEUE_TOPOLOGY = "node(s) lacked a level of the Kueue Topology"


class NetworkTopology:
    name: ClassVar[str] = "NetworkTopology"

    def pre_filter(self, state: CycleState, gang: Gang, pods: Sequence[GangPod], snap: Snapshot) -> Status:
        state.write(KUEUE_TAS, gang.kueue_tas)
        c = gang.constraint
        if c is None or not c.binds or allocated_domain(gang, snap.index) is not None:
            return Status()
        for m in gang.bound:
            if m.node_name and m.node_name not in snap.index.node_pos:
                why = (
                    f"member {m.key} is bound to node {m.node_name}, which is gone: the gang's hard "
                    "topology constraint waits until that pod is deleted"
                )
                return Status(Code.UNRESOLVABLE, (why,), self.name)
        return Status()

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        index = snap.index
        if not state.get(KUEUE_TAS, False) or index.tree.source != "kueue":
            return ()
        lo, hi = index.loose
        in_tree = np.ones(index.n_nodes, dtype=np.bool_)
        in_tree[lo:hi] = False
        return ((OFF_KUEUE_TOPOLOGY, in_tree),)
