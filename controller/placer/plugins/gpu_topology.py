"""GPU: the GPU dialect's rules (`gpu.topology/*` on batch/v1 Jobs; ours, after the GPU seed's
scheduler plugin). PreFilter resolves the gang's rules against its pods' requests (max-nodes,
min-gpus-per-node, pack/spread, NVLink); Filter keeps pods that require NVLink off nodes known
not to have it (a node nothing is known about passes, as the seed's Filter does); the selection
places the gang under the rules (`controller.placer.gpu.select_gpu`); Reserve writes each
placed pod's topology path and the gang's ring order for its launcher."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from controller.placer.framework import Cut, CycleState, ShapeClass, StateKey, Status
from controller.placer.gpu import NVLINK_EXCLUSION, GpuRules, nvlink_mask, rank_annotations
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

    def reserve(
        self, gang: Gang, placed: Sequence[tuple[str, str]], index: ClusterIndex
    ) -> Mapping[str, Mapping[str, str]]:
        return rank_annotations(gang, placed, index)

    def unreserve(self, gang: Gang) -> None:
        """Nothing is kept between reserve and bind: the annotations ride on the bind itself."""
