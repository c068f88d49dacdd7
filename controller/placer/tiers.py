"""The tier that bounds a hard gang, as preemption (`preempt`) and the verdict's messages read
it. Which levels a gang is tried at is the NetworkTopology plugin's PlacementGenerate
(`plugins.network_topology`)."""

from __future__ import annotations

from controller.placer.snapshot import ClusterIndex
from translations.constraints import TopologyConstraint


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
