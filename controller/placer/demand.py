"""A gang's demand in the index's terms: what one scheduling attempt asks of the cluster, and
what the kernels (`offer`, `select`, `preempt`, `search`, `fast`) read.

Its pending pods in rank order, grouped into classes (`PodClass`: one request row, the nodes the
Filter plugins let it onto, a per-node cap), the rules that tie members to each other, the
subgroups, the bound members' nodes (anchors). The runner builds it (`filtering.build_demand`,
through the Filter, MemberRules and Score plugins); `sub_demand` restricts it to some of its
pods (a subgroup, a rank prefix).

The shape of the gang decides how exactly the placer can reason about it:

* `uniform`: one class. Offer slots add up, so a domain fits iff its slot sum >= n (exact).
* `leader`: one pod of its own shape plus one class for the rest (LWS leader + workers, a
  master + workers). Exact too: the leader goes where it costs the fewest worker slots.
* `mixed`: anything else. Placed class by class, largest first (sound, not always complete).

Where a gang may go is not the kernels' to decide: the demand carries the attempt's placement
extension points (`Placing`, run by `framework.PlacementPoints` over the profile's
PlacementGenerate, PlacementScore and PlacementFeasible plugins), and the selection asks them
for the levels to try, the order of the candidates, whether a plugin chooses the node set
itself, and whether a placement is feasible. Preemption's selections read the same points
through the demand it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

import numpy as np

from controller.placer.gpu import GpuRules
from controller.placer.rules import MemberRules
from controller.placer.snapshot import I64, Bool, ClusterIndex, SortKey
from translations.constraints import TopologyConstraint
from translations.gangs import GangPod, SubGroup

Kind = Literal["uniform", "leader", "mixed"]
Level = int | str
"""A tier (0: single nodes) or `snapshot.CLUSTER`: where the selection looks for candidates."""
Assignment = tuple[int, int]
"""(position in `GangDemand.pods`, node index)."""


@dataclass(frozen=True)
class NodeSet:
    """A placement a PlacementGenerate plugin chose itself (upstream's `Placement`: the nodes
    of one candidate domain, here with how many pods go on each)."""

    level: Level
    kind: str
    """"node", "domain" or "cluster": the candidate the nodes lie in."""
    idx: int
    counts: tuple[tuple[int, int], ...]
    """(node index, pods), layout order."""


@dataclass(frozen=True)
class Chosen:
    """A PlacementGenerate plugin's decision for a gang it places itself; `node_set` None: no
    candidate holds the gang."""

    node_set: NodeSet | None


class OfferCounts(Protocol):
    """What a placement plugin reads of the offer slots (`offer.Offers` has it): pods of the
    demand each node, each domain and the cluster could hold."""

    @property
    def slots(self) -> I64: ...

    @property
    def node_offer(self) -> I64: ...

    @property
    def dom_offer(self) -> I64: ...

    @property
    def total_offer(self) -> int: ...


class Placing(Protocol):
    """The placement extension points as the selection calls them (implemented by
    `framework.PlacementPoints`; the plugins' protocols and their order live there)."""

    def levels(self, demand: GangDemand, index: ClusterIndex) -> list[Level]:
        """PlacementGenerate: the levels whose places are candidates, lowest first."""
        ...

    def choose(self, demand: GangDemand, free: I64, index: ClusterIndex) -> Chosen | None:
        """PlacementGenerate: the node set a plugin chooses itself; None: the selection's
        descent places the gang (the usual case)."""
        ...

    def order(
        self, demand: GangDemand, index: ClusterIndex, anc: I64, rows: I64, dom_offer: I64
    ) -> list[SortKey]:
        """PlacementScore: extra sort keys for candidates `rows` (of the ancestor table `anc`),
        after the selection's own (existing members, Score, leftover), before the name."""
        ...

    def feasible(self, demand: GangDemand, index: ClusterIndex, assignments: Sequence[Assignment]) -> bool:
        """PlacementFeasible: does every plugin accept this placement of the whole demand?"""
        ...

    def unplaced(self, demand: GangDemand, index: ClusterIndex, offers: OfferCounts) -> str | None:
        """PlacementGenerate: why no candidate holds the demand, in a plugin's own words (its
        dialect's); None: the runner's (kube's) words."""
        ...


@dataclass(frozen=True)
class PodClass:
    """Pods of one shape: same request row, same allowed nodes."""

    req: I64
    mask: Bool
    pods: tuple[int, ...]
    """Positions in `GangDemand.pods` (rank order)."""
    exclusions: dict[str, int]
    cap: I64 | None = None
    """Per node: at most this many of the class (a rule between members on a per-node key)."""

    @property
    def count(self) -> int:
        return len(self.pods)

    def room_for_one(self, free: I64) -> Bool:
        """Per row of `free`: does one pod of the class find room? Only the resources it asks
        for count, as in NodeResourcesFit's `fitsRequest`: a node overcommitted on another one
        (a GPU a nomination holds while its victim terminates) still takes a pod without it."""
        cols = np.flatnonzero(self.req)
        return np.asarray((free[:, cols] >= self.req[cols]).all(axis=1), dtype=np.bool_)


@dataclass(frozen=True)
class SubGroupPart:
    """A subgroup as one attempt sees it."""

    subgroup: SubGroup
    pods: tuple[int, ...]
    """Its pending members' positions in `GangDemand.pods` (a pod joins its first subgroup only)."""
    anchors: I64
    """Nodes of its bound members: its own constraint must hold them too (not the whole gang's)."""
    bound: int = 0
    """Bound members: they count towards the subgroup being ready."""


@dataclass(frozen=True)
class GangDemand:
    """What one scheduling attempt asks of the cluster."""

    key: str
    pods: tuple[GangPod, ...]
    """Pending pods to place, in rank order."""
    classes: tuple[PodClass, ...]
    kind: Kind
    constraint: TopologyConstraint | None
    subgroups: tuple[SubGroupPart, ...]
    """Each subgroup with pending members in `pods`, or bound ones (those count for minSubGroups)."""
    anchors: I64
    """Nodes of already-bound members: a hard constraint must hold them too."""
    priority: int
    placing: Placing
    """The attempt's placement extension points (see the module docstring)."""
    unknown_resource: str | None = None
    """A requested resource no node offers: nothing can ever fit."""
    rules: MemberRules | None = None
    """Rules between members (caps, gathers, spread) and the preference score."""
    gpu: GpuRules | None = None
    """The GPU dialect's rules (max-nodes, min-gpus-per-node, policy), applied by select."""
    kueue_tas: bool = False
    """Kueue's BestFit order: equally tight candidates in tree order (`select.candidates`)."""
    slices: tuple[tuple[int, int], ...] = ()
    """Kueue's slice layers, (tier, size) outermost first: the offers count whole slices only
    (`offer.slice_slots`), and the rank layout keeps each slice in one domain of its tier."""

    @property
    def n(self) -> int:
        return len(self.pods)

    @property
    def exact(self) -> bool:
        """True when feasibility is decided exactly (no subgroups, no rules between members,
        uniform or leader shape)."""
        return self.kind != "mixed" and not self.placed_subgroups and not self.binding

    @property
    def placed_subgroups(self) -> tuple[SubGroupPart, ...]:
        """The subgroups with pending members (the others are only counted)."""
        return tuple(part for part in self.subgroups if part.pods)

    @property
    def binding(self) -> bool:
        """True when rules between members must be checked pod by pod."""
        return self.rules is not None and self.rules.binding

    def total_request(self) -> I64:
        return sum((c.req * c.count for c in self.classes), np.zeros_like(self.classes[0].req))


def placing_order(c: PodClass) -> tuple[int, tuple[int, ...]]:
    """Larger classes first, then larger requests: the order `mixed` places classes in."""
    return (-c.count, tuple(-c.req))


def kind_of(classes: Sequence[PodClass]) -> Kind:
    if len(classes) == 2 and classes[1].count == 1:
        return "leader"
    return "mixed" if len(classes) > 1 else "uniform"


def sub_demand(demand: GangDemand, positions: Sequence[int], index: ClusterIndex) -> GangDemand:
    """The same gang restricted to some of its pods (a subgroup, or a rank prefix)."""
    del index
    keep = sorted(positions)
    remap = {old: new for new, old in enumerate(keep)}
    classes: list[PodClass] = []
    for c in demand.classes:
        members = tuple(remap[p] for p in c.pods if p in remap)
        if members:
            classes.append(replace(c, pods=members))
    classes.sort(key=placing_order)
    subgroups = tuple(
        replace(part, pods=tuple(remap[p] for p in part.pods if p in remap))
        for part in demand.subgroups
        if part.bound or any(p in remap for p in part.pods)
    )
    return replace(
        demand,
        pods=tuple(demand.pods[p] for p in keep),
        classes=tuple(classes),
        kind=kind_of(classes),
        subgroups=subgroups,
        rules=demand.rules.restrict(remap) if demand.rules is not None else None,
    )


def without_subgroups(demand: GangDemand) -> GangDemand:
    return replace(demand, subgroups=())


def within(demand: GangDemand, nodes: I64) -> GangDemand:
    """The same gang kept to `nodes` (node indexes: one candidate domain of a bare-label
    constraint, `tiers.label_domains`): each class's nodes narrowed to them, and no constraint
    left to bind (the narrowing holds it), so the selection and preemption place it there as
    they would anywhere."""
    if not demand.classes:
        return replace(demand, constraint=None)
    keep = np.zeros(len(demand.classes[0].mask), dtype=np.bool_)
    keep[nodes] = True
    return replace(
        demand,
        classes=tuple(replace(c, mask=c.mask & keep) for c in demand.classes),
        constraint=None,
    )
