"""A gang's demand in the index's terms: its pending pods grouped into shape classes.

Pods with the same request vector and the same filter spec form one class; each class carries
the node mask its filter allows. The shape of the gang decides how exactly the placer can
reason about it:

* `uniform`: one class. Offer slots add up, so a domain fits iff its slot sum >= n (exact).
* `leader`: one pod of its own shape plus one class for the rest (LWS leader + workers, a
  master + workers). Exact too: the leader goes where it costs the fewest worker slots.
* `mixed`: anything else. Placed class by class, largest first (sound, not always complete).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from controller.placer.filter import FilterSpec, run_filter
from controller.placer.snapshot import I64, Bool, ClusterIndex
from translations.constraints import TopologyConstraint
from translations.gangs import Gang, GangPod, SubGroup

Kind = Literal["uniform", "leader", "mixed"]


@dataclass(frozen=True)
class PodClass:
    """Pods of one shape: same request row, same allowed nodes."""

    req: I64
    mask: Bool
    pods: tuple[int, ...]
    """Positions in `GangDemand.pods` (rank order)."""
    exclusions: dict[str, int]

    @property
    def count(self) -> int:
        return len(self.pods)


@dataclass(frozen=True)
class GangDemand:
    """What one scheduling attempt asks of the cluster."""

    key: str
    pods: tuple[GangPod, ...]
    """Pending pods to place, in rank order."""
    classes: tuple[PodClass, ...]
    kind: Kind
    constraint: TopologyConstraint | None
    subgroups: tuple[tuple[SubGroup, tuple[int, ...]], ...]
    """Each subgroup with its members' positions in `pods` (a pod joins its first subgroup only)."""
    anchors: I64
    """Nodes of already-bound members: a hard constraint must hold them too."""
    priority: int
    unknown_resource: str | None = None
    """A requested resource no node offers: nothing can ever fit."""

    @property
    def n(self) -> int:
        return len(self.pods)

    @property
    def exact(self) -> bool:
        """True when feasibility is decided exactly (no subgroups, uniform or leader shape)."""
        return self.kind != "mixed" and not self.subgroups

    def total_request(self) -> I64:
        return sum((c.req * c.count for c in self.classes), np.zeros_like(self.classes[0].req))


def build_demand(gang: Gang, index: ClusterIndex, pods: Sequence[GangPod] | None = None) -> GangDemand:
    """The demand for `pods` (default: every pending member) of `gang`."""
    chosen = tuple(gang.pending if pods is None else pods)
    # Members of one shape share a class; the shape was computed once, at discovery.
    shapes = [p.shape or p.key for p in chosen]
    by_shape: dict[str, list[int]] = {}
    if shapes and shapes.count(shapes[0]) == len(shapes):
        by_shape[shapes[0]] = list(range(len(shapes)))
    else:
        for i, shape in enumerate(shapes):
            by_shape.setdefault(shape, []).append(i)
    unknown: str | None = None
    zero = np.zeros(len(index.resources), dtype=np.int64)
    groups: dict[tuple[bytes, FilterSpec], list[int]] = {}
    rows: dict[tuple[bytes, FilterSpec], I64] = {}
    for members in by_shape.values():
        first = chosen[members[0]]
        vec = index.vector(first.requests)
        if vec is None:
            unknown = unknown or next(
                r for r, v in first.requests.items() if v > 0 and r not in index.res_pos
            )
            vec = zero
        key = (vec.tobytes(), FilterSpec.of(first.pod.spec))
        groups.setdefault(key, []).extend(members)
        rows[key] = vec
    classes: list[PodClass] = []
    for key, members in groups.items():
        result = run_filter(index, key[1])
        classes.append(
            PodClass(
                req=rows[key], mask=result.mask, pods=tuple(sorted(members)), exclusions=result.exclusions
            )
        )
    # Larger counts first, then larger requests: the order `mixed` places classes in.
    classes.sort(key=lambda c: (-c.count, tuple(-c.req)))
    kind: Kind = "uniform"
    if len(classes) == 2 and classes[1].count == 1:
        kind = "leader"
    elif len(classes) > 1:
        kind = "mixed"
    pos = {p.key: i for i, p in enumerate(chosen)} if gang.subgroups else {}
    seen: set[int] = set()
    subgroups: list[tuple[SubGroup, tuple[int, ...]]] = []
    for sg in gang.subgroups:
        taken = tuple(pos[k] for k in sg.pods if k in pos and pos[k] not in seen)
        if taken:
            seen.update(taken)
            subgroups.append((sg, taken))
    anchors = np.asarray(
        sorted(
            {
                index.node_pos[n]
                for n in (p.node_name for p in gang.bound)
                if n is not None and n in index.node_pos
            }
        ),
        dtype=np.int64,
    )
    return GangDemand(
        key=gang.key,
        pods=chosen,
        classes=tuple(classes),
        kind=kind,
        constraint=gang.constraint,
        subgroups=tuple(subgroups),
        anchors=anchors,
        priority=gang.priority,
        unknown_resource=unknown,
    )


def sub_demand(demand: GangDemand, positions: Sequence[int], index: ClusterIndex) -> GangDemand:
    """The same gang restricted to some of its pods (a subgroup, or a rank prefix)."""
    keep = sorted(positions)
    remap = {old: new for new, old in enumerate(keep)}
    classes: list[PodClass] = []
    for c in demand.classes:
        members = tuple(remap[p] for p in c.pods if p in remap)
        if members:
            classes.append(PodClass(req=c.req, mask=c.mask, pods=members, exclusions=c.exclusions))
    classes.sort(key=lambda c: (-c.count, tuple(-c.req)))
    kind: Kind = "uniform"
    if len(classes) == 2 and classes[1].count == 1:
        kind = "leader"
    elif len(classes) > 1:
        kind = "mixed"
    subgroups = tuple(
        (sg, tuple(remap[p] for p in members if p in remap))
        for sg, members in demand.subgroups
        if any(p in remap for p in members)
    )
    return GangDemand(
        key=demand.key,
        pods=tuple(demand.pods[p] for p in keep),
        classes=tuple(classes),
        kind=kind,
        constraint=demand.constraint,
        subgroups=subgroups,
        anchors=demand.anchors,
        priority=demand.priority,
        unknown_resource=demand.unknown_resource,
    )


def without_subgroups(demand: GangDemand) -> GangDemand:
    return GangDemand(
        key=demand.key,
        pods=demand.pods,
        classes=demand.classes,
        kind=demand.kind,
        constraint=demand.constraint,
        subgroups=(),
        anchors=demand.anchors,
        priority=demand.priority,
        unknown_resource=demand.unknown_resource,
    )
