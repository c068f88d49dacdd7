"""NodePorts: a pod asking for a host port fits only on nodes where no pod holds a conflicting
one (same protocol and port, overlapping address: `0.0.0.0` is every address); sidecars hold
theirs too (kube-scheduler's plugin of the same name). Between members: members whose ports
conflict take one node each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from controller.placer.framework import Cut, CycleState, ShapeClass, without_lower
from controller.placer.preempt import may_go
from controller.placer.rules import MemberRules, ValueCap
from controller.placer.snapshot import Snapshot
from controller.placer.terms import ports_conflict
from translations.gangs import GangPod

REASON = "node(s) didn't have free ports for the requested pod ports"


class NodePorts:
    name: ClassVar[str] = "NodePorts"

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        terms = cls.terms
        if terms is None or not terms.host_ports:
            return ()
        held = np.zeros(snap.index.n_nodes, dtype=np.bool_)
        lower = without_lower(state)  # preemption's best case: every evictable pod gone
        for e in snap.with_terms.values():
            assert e.terms is not None
            if lower is not None and may_go(e, lower):
                continue
            if any(ports_conflict(a, b) for a in e.terms.host_ports for b in terms.host_ports):
                held[e.node] = True
        return ((REASON, ~held),)

    def member_rules(
        self, state: CycleState, pods: Sequence[GangPod], classes: Sequence[ShapeClass], snap: Snapshot
    ) -> MemberRules:
        n = snap.index.n_nodes
        with_ports = [
            (c.members, c.terms.host_ports) for c in classes if c.terms is not None and c.terms.host_ports
        ]
        caps: list[ValueCap] = []
        for i, (members, ports) in enumerate(with_ports):
            together = set(members)
            for other, theirs in with_ports[i + 1 :]:
                if any(ports_conflict(a, b) for a in ports for b in theirs):
                    together |= set(other)
            if len(together) > 1:
                caps.append(
                    ValueCap(
                        "", tuple(sorted(together)), np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64)
                    )
                )
        return MemberRules(caps=tuple(caps))
