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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from controller.placer.affinity import GangRules, node_unique, prefilter, signature
from controller.placer.filter import FilterSpec, run_filter
from controller.placer.gpu import NVLINK_EXCLUSION, GpuRules, nvlink_mask
from controller.placer.snapshot import I64, Bool, ClusterIndex, Snapshot
from controller.placer.terms import PodTerms
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
    cap: I64 | None = None
    """Per node: at most this many of the class (a rule between members on a per-node key)."""

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
    rules: GangRules | None = None
    """Inter-pod rules between members (caps, gathers) and the preference score."""
    node_domains: bool = True
    """A single node counts as a place of its own (False for a Volcano PodGroup with a network
    topology above tier 0: Volcano chooses a HyperNode, then nodes inside it)."""
    gpu: GpuRules | None = None
    """The GPU dialect's rules (max-nodes, min-gpus-per-node, policy), applied by select."""

    @property
    def n(self) -> int:
        return len(self.pods)

    @property
    def exact(self) -> bool:
        """True when feasibility is decided exactly (no subgroups, no rules between members,
        uniform or leader shape)."""
        return self.kind != "mixed" and not self.subgroups and not self.binding

    @property
    def binding(self) -> bool:
        """True when rules between members must be checked pod by pod."""
        return self.rules is not None and self.rules.binding

    def total_request(self) -> I64:
        return sum((c.req * c.count for c in self.classes), np.zeros_like(self.classes[0].req))


def build_demand(
    gang: Gang,
    index: ClusterIndex,
    pods: Sequence[GangPod] | None = None,
    *,
    snap: Snapshot | None = None,
) -> GangDemand:
    """The demand for `pods` (default: every pending member) of `gang`; with `snap`, the
    inter-pod rules also count the pods already bound there."""
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
    terms_of = {shape: PodTerms.of(chosen[members[0]].pod) for shape, members in by_shape.items()}
    # Members of one shape may still differ in the labels some selector reads; those split.
    keys = _selector_keys(terms_of.values(), snap)
    ClassKey = tuple[bytes, FilterSpec, PodTerms | None, tuple[object, ...]]
    groups: dict[ClassKey, list[int]] = {}
    rows: dict[ClassKey, I64] = {}
    for shape, members in by_shape.items():
        first = chosen[members[0]]
        vec = index.vector(first.requests)
        if vec is None:
            unknown = unknown or next(
                r for r, v in first.requests.items() if v > 0 and r not in index.res_pos
            )
            vec = zero
        spec = FilterSpec.of(first.pod.spec)
        if not keys:
            key: ClassKey = (vec.tobytes(), spec, terms_of[shape], ())
            groups.setdefault(key, []).extend(members)
            rows[key] = vec
            continue
        for m in members:
            sig = (chosen[m].pod.namespace, signature(chosen[m], keys))
            key = (vec.tobytes(), spec, terms_of[shape], sig)
            groups.setdefault(key, []).append(m)
            rows[key] = vec
    static = {key: run_filter(index, key[1]) for key in groups}
    class_rules, rules = prefilter(
        chosen,
        [(tuple(sorted(m)), k[2], k[1], static[k].mask) for k, m in groups.items()],
        index,
        snap,
    )
    classes: list[PodClass] = []
    gpu_rules = GpuRules.of(gang)
    nvlink = (
        nvlink_mask(index, gpu_rules.nvlink_label)
        if gpu_rules is not None and gpu_rules.nvlink_label
        else None
    )
    for (key, members), extra in zip(groups.items(), class_rules, strict=True):
        mask, exclusions = static[key].mask, static[key].exclusions
        if extra is not None:
            mask = extra.mask
            exclusions = {**exclusions, **extra.exclusions}
        if nvlink is not None:
            mask, exclusions = mask & nvlink, {**exclusions, NVLINK_EXCLUSION: int((mask & ~nvlink).sum())}
        classes.append(
            PodClass(
                req=rows[key],
                mask=mask,
                pods=tuple(sorted(members)),
                exclusions=exclusions,
                cap=_node_cap(rules, members, index),
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
        rules=rules,
        node_domains=not (
            gang.source == "volcano"
            and gang.constraint is not None
            and gang.constraint.highest_tier is not None
            and gang.constraint.highest_tier > 0
        ),
        gpu=gpu_rules,
    )


def _selector_keys(terms: Iterable[PodTerms | None], snap: Snapshot | None) -> frozenset[str]:
    keys: set[str] = set()
    for t in terms:
        if t is not None:
            for sel in t.selectors():
                keys |= sel.keys()
    if snap is not None:
        for p in snap.with_terms.values():
            assert p.terms is not None
            for term in p.terms.anti_affinity:
                keys |= term.selector.keys()
    return frozenset(keys)


def _node_cap(rules: GangRules | None, members: Sequence[int], index: ClusterIndex) -> I64 | None:
    """Per node, the fewest members of the class any per-node cap allows (None: no such cap)."""
    if rules is None:
        return None
    out: I64 | None = None
    mine = set(members)
    for cap in rules.caps:
        if not mine <= set(cap.members) or not (cap.key == "" or node_unique(index, cap.key)):
            continue
        per_node = cap.limit[cap.codes]
        out = per_node if out is None else np.minimum(out, per_node)
    return out


def sub_demand(demand: GangDemand, positions: Sequence[int], index: ClusterIndex) -> GangDemand:
    """The same gang restricted to some of its pods (a subgroup, or a rank prefix)."""
    keep = sorted(positions)
    remap = {old: new for new, old in enumerate(keep)}
    classes: list[PodClass] = []
    for c in demand.classes:
        members = tuple(remap[p] for p in c.pods if p in remap)
        if members:
            classes.append(PodClass(req=c.req, mask=c.mask, pods=members, exclusions=c.exclusions, cap=c.cap))
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
        rules=demand.rules.restrict(remap) if demand.rules is not None else None,
        node_domains=demand.node_domains,
        gpu=demand.gpu,
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
        rules=demand.rules,
        node_domains=demand.node_domains,
        gpu=demand.gpu,
    )
