"""Which tiers of the topology tree a gang may be placed at: the NetworkTopology plugin's rule,
read by the selection (`select`), preemption (`preempt`) and the verdict's messages (see
`plugins.network_topology` for the rule in words)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.placer.snapshot import CLUSTER, ClusterIndex
from translations.constraints import TopologyConstraint
from translations.topology import DomainId

if TYPE_CHECKING:
    from controller.placer.demand import GangDemand
    from translations.gangs import Gang

Level = int | str
"""A tier (0: single nodes) or `CLUSTER`."""


def levels(demand: GangDemand, index: ClusterIndex) -> list[Level]:
    """Tiers to try, lowest first (see the module docstring); a Kueue TAS gang from its
    requested level up, as Kueue searches."""
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
    if not demand.node_domains and len(out) > 1 and out[1] != CLUSTER:
        out.pop(0)
    if demand.kueue_tas and c is not None and c.highest_tier is not None:
        # Kueue starts at the requested level (the tightest domain there), never below it.
        out = [lv for lv in out if lv == CLUSTER or int(lv) >= c.highest_tier] or out
    return out


def hard_limit_tier(constraint: TopologyConstraint | None, index: ClusterIndex) -> int | None:
    """The tier whose domains bound a hard gang: the widest present tier <= its limit (0: single
    nodes), or the cluster's (max tier + 1) when the limit is above every tier; None when the
    gang has no hard limit."""
    if constraint is None or not constraint.binds or constraint.highest_tier is None:
        return None
    if index.tiers and constraint.highest_tier > index.max_tier:
        return index.max_tier + 1
    present = [t for t in index.tiers if 0 < t <= constraint.highest_tier]
    return present[-1] if present else 0


def allocated_domain(gang: Gang, index: ClusterIndex) -> int | None:
    """The domain of the HyperNode Volcano recorded its running members in (the PodGroup's
    `job-allocated-hypernode`), while a member is bound and the HyperNode is in the tree, as
    Volcano keeps it (`removeInvalidAllocatedHyperNode`); else None."""
    name = gang.allocated_hypernode
    if name is None or not gang.bound or index.tree.source != "hypernode":
        return None
    return index.dom_pos.get(DomainId(name))
