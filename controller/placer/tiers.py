"""The tier that bounds a hard gang, as preemption (`preempt`) and the verdict's messages read
it. Which levels a gang is tried at is the NetworkTopology plugin's PlacementGenerate
(`plugins.network_topology`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.placer.snapshot import ClusterIndex
from translations.constraints import TopologyConstraint
from translations.topology import DomainId

if TYPE_CHECKING:
    from translations.gangs import Gang


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
