"""KueueTAS: Kueue's Topology Aware Scheduling rules for a pod set (`pkg/cache/scheduler/tas_*`),
for gangs that carry Kueue's TAS annotations (`Gang.kueue_tas`).

* PlacementGenerate (`generate`): a required or preferred level is where Kueue starts: the
  tightest domain there, never below it (levels under the requested one are dropped, unless
  that leaves none). `node_set`: a pod set with no level and no slices is placed by Kueue's
  LeastFreeCapacity over single nodes: the node with the fewest slots that holds the whole
  gang, else nodes from the fewest slots up, each filled, until the gang is placed (tree order
  on ties). Only the uniform shape is exact enough for it.
* Ordering: Kueue's BestFit takes the first in tree order among the tightest candidates, so
  NetworkTopology's enclosing-domain keys are not added for these gangs.
* Slices (`podset-slice-required-topology-constraint`) are counted by the offer slots
  (`offer.slice_slots`): whole slices only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from controller.placer.demand import Chosen, GangDemand, Level, NodeSet, OfferCounts
from controller.placer.framework import I64, PlacementRequest
from controller.placer.offer import evaluate
from controller.placer.snapshot import CLUSTER


class KueueTAS:
    name: ClassVar[str] = "KueueTAS"

    def generate(self, request: PlacementRequest, parent: Sequence[Level]) -> list[Level]:
        c = request.demand.constraint
        if not request.demand.kueue_tas or c is None or c.highest_tier is None:
            return list(parent)
        return [lv for lv in parent if lv == CLUSTER or int(lv) >= c.highest_tier] or list(parent)

    def node_set(self, request: PlacementRequest, free: I64, levels: Sequence[Level]) -> Chosen | None:
        demand = request.demand
        if not least_free_capacity(demand):
            return None
        slots = evaluate(free, demand, request.index).slots
        return Chosen(_least_free(slots, demand.n, request.index.node_name_rank))

    def unplaced(self, request: PlacementRequest, offers: OfferCounts) -> str | None:
        return None  # Kueue reports in its own objects; kube's words here


def least_free_capacity(demand: GangDemand) -> bool:
    """Kueue places an unconstrained pod set (no level, no slices) by LeastFreeCapacity."""
    return (
        demand.kueue_tas
        and demand.constraint is None
        and not demand.slices
        and demand.exact
        and demand.kind == "uniform"
    )


def _least_free(slots: I64, n: int, name_rank: I64) -> NodeSet | None:
    order = np.lexsort((name_rank, slots))
    order = order[slots[order] > 0]
    whole = order[slots[order] >= n]
    if len(whole):
        return NodeSet(0, "node", int(whole[0]), ((int(whole[0]), n),))
    counts: list[tuple[int, int]] = []
    left = n
    for v in order.tolist():
        take = min(int(slots[v]), left)
        counts.append((v, take))
        left -= take
        if left == 0:
            break
    if left > 0:
        return None
    return NodeSet(CLUSTER, "cluster", -1, tuple(sorted(counts)))
