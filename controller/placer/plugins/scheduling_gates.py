"""SchedulingGates: a pod whose `spec.schedulingGates` is not empty is not schedulable; the API
server refuses its binding (kube-scheduler's PreEnqueue plugin of the same name). A gang is
placed all or nothing, so a gang with a gated pending member waits until every gate is lifted.
Kueue's topology-aware scheduling gates its pods with `kueue.x-k8s.io/topology` until it has
chosen their nodes: such a pod is Kueue's, and topobridge says so."""

from __future__ import annotations

from typing import ClassVar

from controller.placer.framework import SCHEDULING_GATED, Code, Status
from translations import kueue
from translations.gangs import Gang

REASON = SCHEDULING_GATED


class SchedulingGates:
    name: ClassVar[str] = "SchedulingGates"

    def pre_enqueue(self, gang: Gang) -> Status:
        gated = [(p.key, g.name) for p in gang.pending for g in p.pod.spec.scheduling_gates or ()]
        if not gated:
            return Status()
        pod, gate = gated[0]
        if gate == kueue.TOPOLOGY_GATE:
            why = f"pod {pod} is gated by {gate}: Kueue's topology-aware scheduling places it"
        else:
            why = f"pod {pod} has scheduling gate {gate}: scheduling is blocked until every gate is removed"
        more = f" ({len(gated) - 1} more gate(s) on the gang's pods)" if len(gated) > 1 else ""
        return Status(Code.UNRESOLVABLE, (why + more,), self.name)
