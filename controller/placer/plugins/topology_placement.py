"""TopologyPlacement, PlacementBinPacking and PodGroupPodsCount: how kube-scheduler 1.37 chooses
the domain of a PodGroup with a topology key (KEP-5732), for gangs whose source is `upstream`.

kube-scheduler's pod group cycle (`pkg/scheduler/algorithm_podgroup.go`) runs:

* PlacementGenerate (`TopologyPlacement`, `plugins/topologyaware/topology_placement.go`): one
  candidate placement per value of the group's topology key among the nodes; already-scheduled
  members pin the value (members on different values, on a node the snapshot lacks or on a
  node without the label are an error). The key's values are the domains of the tree's tier
  made of that label when there is one, else the label's own values (a key at a bare node
  label, `TopologyConstraint.label_key`: `tiers.label_domains`, each value's nodes the
  placement, nodes without the label in none), any node label being a level as in kube;
* PreFilter: a bare label no node carries generates no placement: the gang waits, naming
  the key;
* every candidate in turn: the group's pods placed inside it; a candidate is feasible when at
  least `minCount` pods (counting the bound ones) fit, and it keeps as many as fit;
* PlacementScore, weight 1 each, summed: `PlacementBinPacking` (`noderesources`, default
  strategy MostAllocated over cpu and memory, weight 1 each: the placement's nodes' allocated
  plus proposed requests over their allocatable, summed over the nodes first) and
  `PodGroupPodsCount` (bound members plus proposed ones, normalized to 0..100 by the largest);
* the highest total wins. kube draws among equal totals at random; topobridge takes the first
  in the tree's order (a bare label's values in natural order), so a run is a function of its
  input.

Inside the chosen domain the pods are laid out by topobridge's selection (`select.place_in`),
as for every other dialect; kube places them pod by pod with the default profile.

A `CompositePodGroup` (v1alpha3) is not placed here: its member groups wait, saying why
(`translations.upstream_gangs.composite_wait`).

Runner hook: `engine._select` calls `place` where it would otherwise let `select` choose among
candidate domains (marked there). When the framework grows PlacementGenerate / PlacementScore
extension points, `generate_placements` (`tiers`, which preemption reads too) is this plugin's
PlacementGenerate and `bin_packing` plus `pods_count` (normalized) its PlacementScore; `place`
is the runner's loop over them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, TypeVar

import numpy as np

from controller.placer.demand import GangDemand, sub_demand, within
from controller.placer.framework import Code, CycleState, Status
from controller.placer.offer import Offers, evaluate
from controller.placer.select import Placement, Where, place_in
from controller.placer.snapshot import I64, ClusterIndex, Snapshot
from controller.placer.tiers import (
    WHOLE_CLUSTER,
    PlacementGenerateError,
    carried,
    generate_placements,
    hard_limit_tier,
    label_domains,
)
from translations.gangs import Gang, GangPod

P = TypeVar("P")
"""A candidate placement as `_best_whole`'s caller names it: a place, or one value's nodes."""

__all__ = [
    "WHOLE_CLUSTER",
    "Candidate",
    "PlacementGenerateError",
    "Strategy",
    "TopologyPlacement",
    "bin_packing",
    "generate_placements",
    "normalize_pods_count",
    "pods_count",
    "resource_score",
]

MAX_SCORE = 100
"""kube-scheduler's `MaxNodeScore` (and `fwk.MaxScore`)."""


class Strategy(Enum):
    """The ScoringStrategy types PlacementBinPacking takes (RequestedToCapacityRatio is not
    offered: topobridge has no scheduler configuration to carry its shape)."""

    MOST_ALLOCATED = "MostAllocated"
    LEAST_ALLOCATED = "LeastAllocated"


DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))
"""kube's default PlacementBinPacking resources and weights."""
BASE_RESOURCES = frozenset({"cpu", "memory"})
"""Resources counted even when the group asks for none of them (kube skips a scalar resource
nobody in the group requests)."""


def resource_score(requested: int, allocatable: int, strategy: Strategy) -> int:
    """kube's mostRequestedScore / leastRequestedScore for one resource (integer arithmetic)."""
    if allocatable == 0:
        return 0
    if strategy is Strategy.MOST_ALLOCATED:
        return min(requested, allocatable) * MAX_SCORE // allocatable
    if requested > allocatable:
        return 0
    return (allocatable - requested) * MAX_SCORE // allocatable


def bin_packing(
    allocatable: Sequence[Mapping[str, int]],
    allocated: Sequence[Mapping[str, int]],
    proposed: Sequence[Mapping[str, int]],
    *,
    strategy: Strategy = Strategy.MOST_ALLOCATED,
    resources: Sequence[tuple[str, int]] = DEFAULT_RESOURCES,
) -> int:
    """PlacementBinPacking's ScorePlacement over one placement: `allocatable` and `allocated`
    per node of the placement, `proposed` the requests of each group pod placed there, all
    summed before the ratio is taken. A resource no node offers is skipped; so is a scalar
    resource no pod of the group asks for."""
    total = weights = 0
    for name, weight in resources:
        cap = sum(a.get(name, 0) for a in allocatable)
        asked = sum(p.get(name, 0) for p in proposed)
        if cap == 0 or (name not in BASE_RESOURCES and asked == 0):
            continue
        used = sum(a.get(name, 0) for a in allocated)
        total += resource_score(used + asked, cap, strategy) * weight
        weights += weight
    return total // weights if weights else 0


def pods_count(scheduled: int, proposed: int) -> int:
    """PodGroupPodsCount's ScorePlacement: bound members plus the ones proposed here."""
    return scheduled + proposed


def normalize_pods_count(scores: Sequence[int]) -> list[int]:
    """PodGroupPodsCount's NormalizePlacementScore: 0..100 by the largest count; all zero is
    kube's error (no pod of the group assigned anywhere)."""
    top = max(scores, default=0)
    if top == 0:
        raise ValueError("no pods from pod group are assigned to any of the candidate placements")
    return [s * MAX_SCORE // top for s in scores]


@dataclass(frozen=True)
class Candidate:
    """One feasible placement: where, the pods it holds, and the demand they are (a prefix of
    the group's pending pods when fewer than all fit)."""

    where: Where
    placed: Placement
    demand: GangDemand
    rows: slice | I64 | None = None
    """The placement's nodes, when not all of `where` (one value of a bare label)."""


class TopologyPlacement:
    """The placement plugins for an upstream PodGroup with a topology key (module docstring)."""

    name: ClassVar[str] = "TopologyPlacement"

    def pre_filter(self, state: CycleState, gang: Gang, pods: Sequence[GangPod], snap: Snapshot) -> Status:
        """A key at a bare node label that no node carries: no placement can be generated
        until a node is labelled (kube's TopologyPlacement returns none; the group waits)."""
        c = gang.constraint
        key = c.label_key if c is not None else None
        if gang.source != "upstream" or key is None or carried(key, snap.index):
            return Status()
        why = (
            f"no node carries label {key!r}, the PodGroup's topology key "
            "(spec.schedulingConstraints.topology[0].key): its pods wait until a node does"
        )
        return Status(Code.UNRESOLVABLE, (why,), self.name)

    @staticmethod
    def applies(gang: Gang, demand: GangDemand, index: ClusterIndex) -> bool:
        """A PodGroup (source upstream) whose key is a tier of the tree below the cluster, or a
        bare node label (whatever rules bind its members: each value is placed as anywhere)."""
        if gang.source != "upstream":
            return False
        if demand.constraint is not None and demand.constraint.label_key is not None:
            return True
        tier = hard_limit_tier(demand.constraint, index)
        return tier is not None and tier <= index.max_tier and not demand.binding

    def place(
        self, gang: Gang, demand: GangDemand, index: ClusterIndex, free: I64, offers: Offers, required: int
    ) -> tuple[Placement | None, GangDemand]:
        """Generate, place in each candidate, score, take the best (module docstring)."""
        if demand.constraint is not None and demand.constraint.label_key is not None:
            return _place_by_label(gang, demand, index, free, offers, required)
        tier = hard_limit_tier(demand.constraint, index)
        assert tier is not None
        try:
            domains = _candidates(demand, index, tier)
        except PlacementGenerateError:
            return None, demand  # the fit message says the gang does not fit; bound members pin it
        need = max(required, 1)
        if gang.all_or_nothing or all(
            _fits_whole(w, offers) or _room(w, offers, index) < need for w in domains
        ):
            whole = _best_whole(
                [w for w in domains if _fits_whole(w, offers)],
                lambda w: _bin_packing_of(w, demand, index, free),
                lambda w: place_in(w, demand, free, index, offers),
            )
            if whole is not None or gang.all_or_nothing:
                return whole, demand
        found = [
            c
            for w in domains
            if (c := _try(w, demand, free, index, offers, need=need, whole=gang.all_or_nothing)) is not None
        ]
        if not found:
            return None, demand
        best = _best(found, len(gang.bound), index, free)
        return best.placed, best.demand


def _place_by_label(
    gang: Gang, demand: GangDemand, index: ClusterIndex, free: I64, offers: Offers, required: int
) -> tuple[Placement | None, GangDemand]:
    """A key at a bare node label: the group tried inside each value's nodes (`label_domains`),
    placed there as it would be anywhere (`demand.within`), the best by PlacementScore. For a
    uniform group, the slots each value's nodes offer decide first: a value short of what the
    group needs is not tried, and when every value holds the whole group or too little, the
    values are scored before they are placed (`_best_whole`)."""
    try:
        domains = label_domains(demand, index)
    except PlacementGenerateError:
        return None, demand  # bound members pin no one value: the fit message says it does not fit
    need = max(required, 1)
    if offers.demand.kind == "uniform":
        room = [int(offers.slots[nodes].sum()) for _, nodes in domains]
        if demand.exact and all(r >= demand.n or r < need for r in room):
            whole = _best_whole(
                [nodes for (_, nodes), r in zip(domains, room, strict=True) if r >= demand.n],
                lambda nodes: _bin_packing_of(nodes, demand, index, free),
                lambda nodes: place_in(Where("cluster", -1), within(demand, nodes), free, index),
            )
            if whole is not None or gang.all_or_nothing:
                return whole, demand
        domains = [d for d, r in zip(domains, room, strict=True) if r >= need]
    found: list[Candidate] = []
    for _, nodes in domains:
        narrowed = within(demand, nodes)
        got = _try(
            Where("cluster", -1),
            narrowed,
            free,
            index,
            evaluate(free, narrowed, index),
            need=need,
            whole=gang.all_or_nothing,
        )
        if got is not None:
            found.append(Candidate(got.where, got.placed, got.demand, nodes))
    if not found:
        return None, demand
    best = _best(found, len(gang.bound), index, free)
    return best.placed, best.demand


def _fits_whole(where: Where, offers: Offers) -> bool:
    """The offer check the selection makes before placing: may the whole demand fit here?"""
    return bool(offers.node_fit[where.idx] if where.kind == "node" else offers.dom_fit[where.idx])


def _room(where: Where, offers: Offers, index: ClusterIndex) -> int:
    """How many pods a candidate may take at most (a uniform demand's slots; else unknown: all)."""
    if offers.demand.kind != "uniform":
        return offers.demand.n
    lo, hi = where.range(index)
    return int(offers.slots[lo:hi].sum())


def _best_whole(
    fitting: Sequence[P], score: Callable[[P], int], place: Callable[[P], Placement | None]
) -> Placement | None:
    """Every candidate holds the whole group or none of it. The scores of a whole placement do
    not depend on its layout (PodGroupPodsCount is the same for all, PlacementBinPacking reads
    the domain's sums and the group's requests), so the candidates that may hold it (`fitting`)
    are scored before they are placed and placed best first until one holds: the choice
    `_best` would make, without placing the group in every domain."""
    scores = [score(c) for c in fitting]
    for i in sorted(range(len(fitting)), key=lambda i: -scores[i]):  # stable: tree order on ties
        placed = place(fitting[i])
        if placed is not None:
            return placed
    return None


def _candidates(demand: GangDemand, index: ClusterIndex, tier: int) -> list[Where]:
    """PlacementGenerate on the index: a domain of `tier` per value, tree order."""
    nodes = list(range(index.n_nodes))
    anchors = [int(a) for a in demand.anchors]
    if tier == 0:
        by_value = generate_placements(nodes, lambda n: n, anchors, lambda n: 0 <= n < index.n_nodes)
        return [Where("node", int(v)) for v in by_value]
    by_value = generate_placements(
        nodes, lambda n: _domain(index, n, tier), anchors, lambda n: 0 <= n < index.n_nodes
    )
    return sorted((Where("domain", int(v)) for v in by_value), key=lambda w: int(index.dom_start[w.idx]))


def _domain(index: ClusterIndex, node: int, tier: int) -> int | None:
    """The node's enclosing domain at `tier` (the key's value), None outside every one."""
    for d in index.node_anc[node].tolist():
        if d >= 0 and int(index.dom_tier[d]) == tier:
            return int(d)
    return None


def _try(
    where: Where,
    demand: GangDemand,
    free: I64,
    index: ClusterIndex,
    offers: Offers,
    *,
    need: int,
    whole: bool,
) -> Candidate | None:
    """The group placed inside `where`: whole, else (not all-or-nothing) as kube's pod group cycle
    goes, pod after pod in rank order, each kept when it still fits beside those kept before
    (the longest fitting prefix first, then each pod past it); None with fewer than `need`."""
    lo, hi = where.range(index)
    if int(offers.slots[lo:hi].sum()) < need and demand.kind == "uniform":
        return None
    got = place_in(where, demand, free, index, offers)
    if got is not None:
        return Candidate(where, got, demand)
    if whole:
        return None
    keep = _longest_prefix(where, demand, free, index)
    for pos in range(len(keep) + 1, demand.n):  # kube goes on past a pod that does not fit
        if place_in(where, sub_demand(demand, [*keep, pos], index), free, index) is not None:
            keep.append(pos)
    if len(keep) < need:
        return None
    d = sub_demand(demand, keep, index)
    placed = place_in(where, d, free, index)
    return Candidate(where, placed, d) if placed is not None else None


def _longest_prefix(where: Where, demand: GangDemand, free: I64, index: ClusterIndex) -> list[int]:
    """The longest rank prefix of the pending pods that fits in `where` (feasibility only
    shrinks as pods are added, so a binary search finds it)."""
    low, high, best = 1, demand.n - 1, 0
    while low <= high:
        mid = (low + high) // 2
        if place_in(where, sub_demand(demand, range(mid), index), free, index) is not None:
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return list(range(best))


def _best(found: Sequence[Candidate], bound: int, index: ClusterIndex, free: I64) -> Candidate:
    """PlacementScore: PlacementBinPacking + normalized PodGroupPodsCount; first on ties."""
    if len(found) == 1:
        return found[0]  # kube skips scoring a lone feasible placement
    counts = normalize_pods_count([pods_count(bound, c.demand.n) for c in found])
    totals = [
        _bin_packing_of(c.rows if c.rows is not None else c.where, c.demand, index, free) + n
        for c, n in zip(found, counts, strict=True)
    ]
    return found[int(np.argmax(totals))]


def _bin_packing_of(where: Where | slice | I64, demand: GangDemand, index: ClusterIndex, free: I64) -> int:
    """PlacementBinPacking of `demand` placed whole in `where` (a place, or its nodes)."""
    rows = slice(*where.range(index)) if isinstance(where, Where) else where
    names = index.resources
    alloc = index.alloc[rows].sum(axis=0)
    used = (index.alloc[rows] - free[rows]).sum(axis=0)
    req = np.zeros(len(names), dtype=np.int64)
    for cls in demand.classes:
        req += cls.req * len(cls.pods)
    return bin_packing(
        [{r: int(alloc[i]) for i, r in enumerate(names)}],
        [{r: int(used[i]) for i, r in enumerate(names)}],
        [{r: int(req[i]) for i, r in enumerate(names)}],
    )
