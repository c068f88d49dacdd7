"""DynamicResources: a pod that lists `spec.resourceClaims` (DRA, GA in 1.34) can run only
where its claims are allocated, and allocating them is kube-scheduler's DynamicResources plugin's
work (devices, their classes, their counters). topobridge does not allocate claims, so it never
binds such a pod: the gang stays pending with a reason naming the claims, for a scheduler that
can (kube-scheduler, or Volcano with DRA) to place."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from controller.placer.framework import Code, CycleState, Status
from controller.placer.snapshot import Snapshot
from translations.gangs import Gang, GangPod


class DynamicResources:
    name: ClassVar[str] = "DynamicResources"

    def pre_filter(self, state: CycleState, gang: Gang, pods: Sequence[GangPod], snap: Snapshot) -> Status:
        for p in pods:
            claims = [c.name for c in p.pod.spec.resource_claims or ()]
            if claims:
                why = (
                    f"pod {p.key} uses resource claims ({', '.join(claims)}): topobridge does not allocate "
                    "DRA claims; a scheduler with the DynamicResources plugin must place it"
                )
                return Status(Code.UNRESOLVABLE, (why,), self.name)
        return Status()
