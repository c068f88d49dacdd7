"""The places that bound a hard gang, as the placement plugins, preemption (`preempt`) and the
verdict's messages read them: the tier of the tree that bounds it (`hard_limit_tier`), or, for a
constraint at a bare node label, that label's values (`label_domains`: kube-scheduler's
TopologyPlacement PlacementGenerate, `generate_placements`). Which levels a gang is tried at is
the NetworkTopology plugin's PlacementGenerate (`plugins.network_topology`)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from controller.placer.demand import GangDemand
from controller.placer.snapshot import I64, ClusterIndex
from translations.constraints import TopologyConstraint
from translations.topology import DomainId, natural_key

if TYPE_CHECKING:
    from translations.gangs import Gang

N = TypeVar("N", bound=Hashable)
V = TypeVar("V", bound=Hashable)

WHOLE_CLUSTER = "whole-cluster"
"""The one placement of a group without a topology key (kube passes its parent placement on)."""


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


class PlacementGenerateError(ValueError):
    """kube's Error status from TopologyPlacement: the bound members do not name one domain."""


def generate_placements(
    placement_nodes: Sequence[N],
    domain_of: Callable[[N], V | None] | None,
    scheduled_on: Sequence[N],
    known: Callable[[N], bool],
) -> dict[V | str, list[N]]:
    """TopologyPlacement's PlacementGenerate: the nodes of each candidate placement by its
    domain (the topology key's value). `domain_of` None: the group has no key, one placement
    of every node (`WHOLE_CLUSTER`). Nodes without the key's value are in no placement;
    `scheduled_on` (the bound members' nodes) pins the domain, and a pin that does not hold
    (two domains, an unknown node, a node without the value) raises `PlacementGenerateError`."""
    if domain_of is None:
        return {WHOLE_CLUSTER: list(placement_nodes)}
    required: V | None = None
    for node in scheduled_on:
        if not known(node):
            raise PlacementGenerateError(f"a member is bound to node {node!r}, which the snapshot lacks")
        value = domain_of(node)
        if value is None:
            raise PlacementGenerateError(f"a member's node {node!r} has no value of the topology key")
        if required is not None and value != required:
            raise PlacementGenerateError(f"members sit in more than one domain: {required!r}, {value!r}")
        required = value
    out: dict[V | str, list[N]] = {}
    for node in placement_nodes:
        value = domain_of(node)
        if value is not None and (required is None or value == required):
            out.setdefault(value, []).append(node)
    return out


def label_domains(demand: GangDemand, index: ClusterIndex) -> list[tuple[str, I64]]:
    """The candidate domains of a demand whose constraint is at a bare node label (none when it
    is not): per value of the label, in natural order of the values, the nodes carrying it
    (ascending indexes); the bound members' value only, when they have one
    (`generate_placements`, whose `PlacementGenerateError` it raises when they do not)."""
    c = demand.constraint
    key = c.label_key if c is not None else None
    if key is None:
        return []
    values = index.label_values(key)
    by_value = generate_placements(
        range(index.n_nodes),
        lambda n: values[n],
        [int(a) for a in demand.anchors],
        lambda n: 0 <= n < index.n_nodes,
    )
    return [
        (str(value), np.asarray(by_value[value], dtype=np.int64))
        for value in sorted(by_value, key=lambda v: natural_key(str(v)))
    ]


def carried(key: str, index: ClusterIndex) -> bool:
    """Does any node carry label `key`?"""
    return any(key in labels for labels in index.labels)
