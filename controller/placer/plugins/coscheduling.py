"""Coscheduling: the gang itself (Koordinator's and scheduler-plugins' plugin of the same name).

* PreFilter: a gang whose objects cannot be used as written (`Gang.error`: a bad annotation, a
  missing PodGroup) or with fewer pods than its minMember cannot be placed; preemption cannot
  change that.
* All or nothing lives in the runner's selection: every pending member is placed, or, for an
  elastic gang (minMember below its size), the longest rank prefix of at least minMember; a
  GangGroup or a GPU Job, never fewer than all.
* Permit: a gang with fewer pods than minMember is held silently (`Assembling`) for the
  assembly grace since it was first seen; a gang that waited its timeout
  (`scheduleTimeoutSeconds`, Koordinator's `waiting-time`) without starting lets go of what it
  holds and re-queues after a backoff (`controller.placer.timeout`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from controller.placer.framework import Code, CycleState, PermitInput, PermitResult, Status
from controller.placer.snapshot import Snapshot
from controller.placer.timeout import expiry
from translations.gangs import Gang, GangPod


class Coscheduling:
    name: ClassVar[str] = "Coscheduling"

    def pre_filter(self, state: CycleState, gang: Gang, pods: Sequence[GangPod], snap: Snapshot) -> Status:
        if gang.error:
            return Status(Code.UNRESOLVABLE, (gang.error,), self.name)
        if len(gang.pods) < gang.min_member:
            why = f"gang {gang.name} has {len(gang.pods)} pod(s), fewer than its minMember {gang.min_member}"
            return Status(Code.UNRESOLVABLE, (why,), self.name)
        return Status()

    def permit(self, request: PermitInput) -> PermitResult:
        """The timeout first (a gang that waited it lets go, whatever else holds it), then the
        assembly grace."""
        gang = request.gang
        fired = expiry(gang, waiting_since=request.first_seen, now=request.now, failures=request.failures + 1)
        if fired is not None:
            return PermitResult(Status(Code.UNSCHEDULABLE, (fired.message,), self.name), fired)
        if len(gang.pods) < gang.min_member and request.now - request.first_seen < request.assembly_grace:
            return PermitResult(Status(Code.ASSEMBLING, (), self.name))
        return PermitResult()
