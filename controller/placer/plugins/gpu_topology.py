"""GPU: the GPU dialect's rules (`gpu.topology/*` on batch/v1 Jobs; ours, after the GPU seed's
scheduler plugin). PreFilter resolves the gang's rules against its pods' requests (max-nodes,
min-gpus-per-node, pack/spread, NVLink); Filter keeps pods that require NVLink off nodes known
not to have it (a node nothing is known about passes, as the seed's Filter does);
PlacementGenerate chooses the node set of a uniform gang under the rules itself
(`controller.placer.gpu.select_gpu`, over every level's candidates, each level's in Kueue's
BestFit order top down); PlacementFeasible holds any other placement to the node count and
per-node minimum; Reserve writes each placed pod's topology path and the gang's ring order for
its launcher. When no place holds the gang, the reason is the dialect's own (`unfit_reason`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from controller.placer.demand import Assignment, Chosen, Level, NodeSet, OfferCounts
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
from controller.placer.gpu import (
    NVLINK_EXCLUSION,
    GpuRules,
    nvlink_mask,
    rank_annotations,
    respects,
    select_gpu,
    unfit_reason,
)
from controller.placer.offer import Offers, evaluate
from controller.placer.select import Where, candidates
from controller.placer.snapshot import ClusterIndex, Snapshot
from translations.gangs import Gang, GangPod

KEY: StateKey[GpuRules | None] = StateKey("PreFilter/GPU")


class Gpu:
    name: ClassVar[str] = "GPU"

    def pre_filter(self, state: CycleState, gang: Gang, pods: Sequence[GangPod], snap: Snapshot) -> Status:
        state.write(KEY, GpuRules.of(gang))
        return Status()

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        rules = state.get(KEY, None)
        if rules is None or not rules.nvlink_label:
            return ()
        return ((NVLINK_EXCLUSION, nvlink_mask(snap.index, rules.nvlink_label)),)

    def generate(self, request: PlacementRequest, parent: Sequence[Level]) -> list[Level]:
        return list(parent)

    def node_set(self, request: PlacementRequest, free: I64, levels: Sequence[Level]) -> Chosen | None:
        demand, index = request.demand, request.index
        if demand.gpu is None or demand.kind != "uniform" or demand.binding:
            return None
        offers = evaluate(free, demand, index)
        places = [
            (lv, w.kind, w.idx)
            for lv in levels
            for w in sorted(
                candidates(lv, offers, index), key=lambda w: _top_down(w, offers, index, demand.n)
            )
        ]
        got = select_gpu(demand.gpu, offers.slots, demand.n, index, places)
        return Chosen(None if got is None else NodeSet(got.level, *got.place, tuple(got.counts)))

    def unplaced(self, request: PlacementRequest, offers: OfferCounts) -> str | None:
        demand = request.demand
        if demand.gpu is None or demand.kind != "uniform":
            return None
        return unfit_reason(demand.gpu, offers.slots, demand.n)

    def feasible(self, request: PlacementRequest, assignments: Sequence[Assignment]) -> Status:
        rules = request.demand.gpu
        if rules is None or respects(rules, assignments):
            return Status()
        return Status(Code.UNSCHEDULABLE, ("the placement breaks the gang's GPU rules",), self.name)

    def reserve(
        self, gang: Gang, placed: Sequence[tuple[str, str]], index: ClusterIndex
    ) -> Mapping[str, Mapping[str, str]]:
        return rank_annotations(gang, placed, index)

    def unreserve(self, gang: Gang) -> None:
        """Nothing is kept between reserve and bind: the annotations ride on the bind itself."""


def _top_down(where: Where, offers: Offers, index: ClusterIndex, n: int) -> tuple[int, ...]:
    """Kueue's BestFit, top down: the place inside the fullest widest domain that holds the
    gang, then inside it the fullest next one, down to the place itself (leftover slots, widest
    first). A GPU gang so fills a busy rack's clique before it breaks into an empty rack."""
    if where.kind == "cluster":
        return ()
    chain = index.node_anc[where.idx] if where.kind == "node" else index.dom_anc[where.idx]
    above = [int(offers.dom_offer[d]) - n for d in reversed(chain.tolist()) if d >= 0]
    own = int(offers.node_offer[where.idx] if where.kind == "node" else offers.dom_offer[where.idx]) - n
    return (*above, own)
