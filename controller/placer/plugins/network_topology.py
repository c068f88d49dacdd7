"""NetworkTopology: where a gang may go in the topology tree (ours; Volcano's network-topology
plugin and Koordinator's topology-aware gang placement, one meaning for every dialect through
`translations.constraints`).

* PlacementGenerate (`generate`): the levels a gang is tried at, lowest first: single nodes
  (tier 0), each
  tier up to the constraint's (hard: the limit; soft: where the preference stops; none: the
  top), then for soft and unconstrained gangs the whole cluster. A Volcano PodGroup with a
  tier above 0 chooses a HyperNode first: a single node is a place of its own only at tier 0.
  Volcano adds a virtual HyperNode one tier above the highest real one (`framework/session.go`
  `addClusterTopHyperNode`), so a hard limit above the tree's highest tier lets the gang span
  the whole cluster. A subgroup is asked under its own constraint, inside its gang's place.
  PreFilter writes whether a single node is a place of its own (`NODE_PLACES`).
* PlacementScore (`order`): among equally tight candidates, the one whose enclosing domains
  are left fullest, innermost first, so larger free domains stay intact (binpack up the tree).
  A Kueue TAS gang is ordered by Kueue's BestFit instead (first in tree order, `KueueTAS`).
* Its words when nothing holds a gang it binds or prefers (Koordinator's): "no candidate
  topology nodes can accommodate job, desiredOfferSlot: N", then each domain of the gang's
  tier with the pods it could hold (each node at tier 0, the cluster above every tier).
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

from controller.placer.demand import Chosen, GangDemand, Level, OfferCounts
from controller.placer.framework import (
    I64,
    Code,
    Cut,
    CycleState,
    PlacementRequest,
    ShapeClass,
    StateKey,
    Status,
)
from controller.placer.snapshot import CLUSTER, ClusterIndex, Snapshot, SortKey
from controller.placer.tiers import allocated_domain, hard_limit_tier
from translations.gangs import Gang, GangPod
from translations.topology import natural_key

NODE_PLACES: StateKey[bool] = StateKey("PreFilter/NetworkTopology/nodePlaces")
"""Whether a single node is a place of its own: not for a Volcano PodGroup whose network
topology is above tier 0 (Volcano chooses a HyperNode, then nodes inside it)."""
KUEUE_TAS: StateKey[bool] = StateKey("PreFilter/NetworkTopology/kueueTas")
"""The gang is a Kueue TAS pod set (its nodes are the Kueue Topology's)."""
OFF_KUEUE_TOPOLOGY = "node(s) lacked a level of the Kueue Topology"


class NetworkTopology:
    name: ClassVar[str] = "NetworkTopology"

    def pre_filter(self, state: CycleState, gang: Gang, pods: Sequence[GangPod], snap: Snapshot) -> Status:
        c = gang.constraint
        above_nodes = c is not None and c.highest_tier is not None and c.highest_tier > 0
        state.write(NODE_PLACES, not (gang.source == "volcano" and above_nodes))
        state.write(KUEUE_TAS, gang.kueue_tas)
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

    def generate(self, request: PlacementRequest, parent: Sequence[Level]) -> list[Level]:
        allowed = set(parent)
        node_places = request.state.get(NODE_PLACES, True)
        return [lv for lv in levels(request.demand, request.index, node_places=node_places) if lv in allowed]

    def node_set(self, request: PlacementRequest, free: I64, levels: Sequence[Level]) -> Chosen | None:
        return None  # the selection's descent places the gang inside the chosen domain

    def unplaced(self, request: PlacementRequest, offers: OfferCounts) -> str | None:
        demand, index = request.demand, request.index
        c = demand.constraint
        if c is None or not (c.binds or c.mode == "soft") or not index.n_domains:
            return None
        tier = hard_limit_tier(c, index) if c.binds else (c.highest_tier or index.max_tier)
        listing = _offer_listing(tier, offers, index)
        return f"no candidate topology nodes can accommodate job, desiredOfferSlot: {demand.n}, {listing}"

    def order(self, request: PlacementRequest, anc: I64, rows: I64, dom_offer: I64) -> list[SortKey]:
        if request.demand.kueue_tas or len(dom_offer) == 0:
            return []
        return enclosing_leftovers(anc, rows, dom_offer, request.demand.n)


def levels(demand: GangDemand, index: ClusterIndex, *, node_places: bool = True) -> list[Level]:
    """Tiers to try, lowest first (see the module docstring); `node_places`: a single node is a
    place of its own."""
    c = demand.constraint
    out: list[Level] = [0]
    if c is not None and c.binds:
        limit = c.highest_tier if c.highest_tier is not None else 0
        out += [t for t in index.tiers if 0 < t <= limit]
        if index.tiers and limit > index.max_tier:
            out.append(CLUSTER)  # Volcano's virtual top HyperNode
    else:
        limit = (
            c.highest_tier
            if (c is not None and c.mode == "soft" and c.highest_tier is not None)
            else index.max_tier
        )
        out += [t for t in index.tiers if 0 < t <= limit]
        out.append(CLUSTER)
    if not node_places and len(out) > 1 and out[1] != CLUSTER:
        out.pop(0)
    return out


def enclosing_leftovers(anc: I64, rows: I64, dom_offer: I64, n: int) -> list[SortKey]:
    """Leftover slots of each enclosing domain of `anc`'s `rows`, innermost first (0 past the
    top): per key, what gives them for the rows (by position) still being ranked."""

    def key(k: int) -> SortKey:
        def values(positions: I64) -> I64:
            col = anc[rows[positions], k]
            return np.where(col >= 0, dom_offer[np.maximum(col, 0)] - n, 0)

        return values

    return [key(k) for k in range(anc.shape[1])]


def _offer_listing(tier: int | None, offers: OfferCounts, index: ClusterIndex) -> str:
    """Koordinator's `topology topologyNode <domain>: <slots>` per domain of the gang's tier
    (per node at tier 0; the whole cluster above the highest tier)."""
    if tier and tier > index.max_tier:
        return f"topology topologyNode {CLUSTER}: {offers.total_offer}"
    if tier:
        doms = sorted(
            index.tier_domains.get(tier, np.zeros(0, np.int64)).tolist(),
            key=lambda d: natural_key(index.domain_label(d)),
        )
        return ";".join(
            f"topology topologyNode {index.domain_label(d)}: {int(offers.dom_offer[d])}" for d in doms
        )
    return ";".join(
        f"topology topologyNode {index.node_names[v]}: {int(offers.node_offer[v])}"
        for v in range(index.n_nodes)
    )
