"""How much room each tier of the topology has now: what an operator asks before submitting a
gang, and what Volcano and Kueue users read off their dashboards.

For every tier of the tree and every resource on the nodes' allocatable axis:

* `free`: the resource free on schedulable nodes of the tier's domains, summed;
* `largest`: the most of it free inside any one domain of the tier. A gang that must stay in
  one domain of that tier can ask for at most that much now (an upper bound: how the free room
  splits across nodes can lower it; `explain` answers for a given gang);
* `domains`: how many domains the tier has.

Cordoned nodes (`spec.unschedulable`) hold no room; room nominated for a preempting gang is not
free. An over-committed node counts as zero, never as negative room. Every figure is one
prefix sum over the nodes in tree order (`ClusterIndex`: each domain is a contiguous range), so
the whole table costs O(nodes x resources) in array operations, whatever the number of domains.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from controller.placer.snapshot import I64, Snapshot


@dataclass(frozen=True)
class TierRoom:
    """One tier's room, per resource, in scheduler units (millicores for cpu)."""

    tier: int
    name: str
    """The tier's name where its domains agree on one (HyperNode tierName, or the node label
    key of a label-built tier), else ""."""
    domains: int
    free: dict[str, int]
    largest: dict[str, int]


ANY_PRIORITY = -(2**31)
"""Below every pod priority: every nomination's claim is held, whoever nominated."""


def free_per_node(snap: Snapshot) -> I64:
    """[node, resource]: what each schedulable node has free, never below zero. Room nominated
    for a preempting gang (its victims still terminating) is held, as the cycle holds it."""
    free: I64 = np.maximum(snap.free(priority=ANY_PRIORITY), 0)
    free[snap.index.unschedulable] = 0
    return free


def tier_room(snap: Snapshot) -> tuple[TierRoom, ...]:
    """The room of every tier of `snap`'s tree, shallowest tier first."""
    ix = snap.index
    if not ix.tiers:
        return ()
    prefix = np.zeros((ix.n_nodes + 1, len(ix.resources)), dtype=np.int64)
    np.cumsum(free_per_node(snap), axis=0, out=prefix[1:])
    per_domain = prefix[ix.dom_end] - prefix[ix.dom_start]
    names = {**ix.tree.tier_labels, **ix.tree.tier_names}
    out = []
    for tier in ix.tiers:
        rows = per_domain[ix.tier_domains[tier]]
        out.append(
            TierRoom(
                tier=tier,
                name=names.get(tier, ""),
                domains=len(rows),
                free=dict(zip(ix.resources, (int(v) for v in rows.sum(axis=0)), strict=True)),
                largest=dict(zip(ix.resources, (int(v) for v in rows.max(axis=0)), strict=True)),
            )
        )
    return tuple(out)
