"""The Filter step of an attempt, with MemberRules and Score: the runner's part that turns a
gang's pending pods into the demand the kernels read (`demand.GangDemand`).

Steps (`build_demand`), each a function of its own:
1. `shape_classes`: members of one placement shape (`GangPod.shape`: requests, node selector
   and affinity, tolerations, inter-pod terms) form one class, split further where a selector in
   play reads labels in which they differ;
2. `_filtered`: each class through the profile's Filter plugins (`run_filters`): its node mask,
   and how many nodes each reason excluded;
3. `run_scores`: the Score plugins' preference per node, each plugin's raw score normalized to
   0..100 over the feasible nodes (where some class may go), times its weight in the profile,
   summed (kube's default profile);
4. `_member_rules`: the MemberRules plugins' caps, gathers and spread rules, carried with the
   score in `MemberRules` (the score alone when no pod in play has an inter-pod term);
5. the gang's subgroups, its bound members' nodes (anchors), its kind, and the attempt's
   placement points (`framework.PlacementPoints`), which the selection asks where the gang
   may go.

The Score plugins run with the `CycleState` stamped `Score` (an error there is reported at
Score), the rest with the step the caller stamped (Filter).

The PreFilter plugins run before this (the runner's `engine.demand_of` does both); Filter
plugins read what they wrote into the `CycleState`.

Scores differ from kube's in one way: kube scores and normalizes per pod over the nodes that pod
passed Filter on; a gang's classes are scored at once (each plugin sums its raw score over the
classes) and normalized over the nodes where any class may go. For a gang of one shape, the
usual case, that is kube's score.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import replace
from operator import attrgetter

import numpy as np

from controller.placer.demand import GangDemand, PodClass, SubGroupPart, kind_of, placing_order
from controller.placer.framework import (
    Bool,
    CycleState,
    FilterPlugin,
    PlacementPoints,
    Profile,
    ShapeClass,
    Step,
    Weighted,
)
from controller.placer.gpu import GpuRules
from controller.placer.rules import Gather, MemberRules, SpreadRule, ValueCap, merge_gathers
from controller.placer.snapshot import I64, ClusterIndex, Snapshot
from controller.placer.terms import PodTerms
from controller.placer.tiers import allocated_domain
from controller.placer.values import node_unique
from translations.gangs import Gang, GangPod


def build_demand(
    gang: Gang,
    snap: Snapshot,
    *,
    profile: Profile,
    state: CycleState,
    pods: Sequence[GangPod] | None = None,
) -> GangDemand:
    """The demand for `pods` (default: every pending member) of `gang` on `snap`, through the
    profile's Filter, MemberRules and Score plugins (see the module docstring)."""
    index = snap.index
    chosen = tuple(gang.pending if pods is None else pods)
    shapes, unknown = shape_classes(chosen, snap)
    classes = [_filtered(profile, state, cls, snap) for cls in shapes]
    feasible = np.zeros(index.n_nodes, dtype=np.bool_)
    for c in classes:
        feasible |= c.mask
    before, state.step = state.step, Step.SCORE
    score = run_scores(profile.score, state, shapes, snap, feasible)
    state.step = before
    rules = _member_rules(profile, state, chosen, shapes, snap, score)
    for i, cls in enumerate(shapes):
        classes[i] = replace(classes[i], cap=_node_cap(rules, cls.members, index))
    classes.sort(key=placing_order)
    return GangDemand(
        key=gang.key,
        pods=chosen,
        classes=tuple(classes),
        kind=kind_of(classes),
        constraint=gang.constraint,
        subgroups=_subgroups(gang, chosen, index),
        slices=gang.slices,
        kueue_tas=gang.kueue_tas,
        anchors=_anchors(gang, index),
        priority=gang.priority,
        placing=PlacementPoints(profile, state),
        unknown_resource=unknown,
        rules=rules,
        gpu=GpuRules.of(gang),
    )


def shape_classes(pods: Sequence[GangPod], snap: Snapshot) -> tuple[list[ShapeClass], str | None]:
    """Members grouped by placement shape, split where a selector in play reads labels in
    which they differ; and a requested resource no node offers, if any."""
    index = snap.index
    by_shape: dict[str, list[int]] = {}
    for i, p in enumerate(pods):
        by_shape.setdefault(p.shape or p.key, []).append(i)
    terms_of = {shape: PodTerms.of(pods[members[0]].pod) for shape, members in by_shape.items()}
    # Members alike in namespace and labels match every selector alike: no key need be read
    # (a lone pod, or a gang whose pods share their labels, skips every bound pod's terms).
    alike = len({(p.pod.namespace, frozenset((p.pod.metadata.labels or {}).items())) for p in pods}) <= 1
    keys = frozenset() if alike else _selector_keys(terms_of.values(), snap)
    groups: dict[tuple[str, Hashable], list[int]] = {}
    for shape, members in by_shape.items():
        for m in members:
            sig = (pods[m].pod.namespace, _signature(pods[m], keys)) if keys else ()
            groups.setdefault((shape, sig), []).append(m)
    unknown: str | None = None
    out: list[ShapeClass] = []
    zero = np.zeros(len(index.resources), dtype=np.int64)
    for (shape, _), members in groups.items():
        first = pods[members[0]]
        vec = index.vector(first.requests)
        if vec is None:
            unknown = unknown or next(
                r for r, v in first.requests.items() if v > 0 and r not in index.res_pos
            )
            vec = zero
        out.append(ShapeClass(tuple(sorted(members)), first, vec, terms_of[shape]))
    return out, unknown


def _filtered(profile: Profile, state: CycleState, cls: ShapeClass, snap: Snapshot) -> PodClass:
    mask, exclusions = run_filters(profile.filter, state, cls, snap)
    return PodClass(req=cls.req, mask=mask, pods=cls.members, exclusions=exclusions)


def run_filters(
    plugins: Sequence[FilterPlugin], state: CycleState, cls: ShapeClass, snap: Snapshot
) -> tuple[Bool, dict[str, int]]:
    """The nodes every filter lets `cls` onto, and how many each reason excluded (a node is
    counted under the first cut that removed it, in plugin order)."""
    mask = np.ones(snap.index.n_nodes, dtype=np.bool_)
    excluded: dict[str, int] = {}
    for plugin in plugins:
        for reason, ok in plugin.filter(state, cls, snap):
            gone = int(np.count_nonzero(mask & ~ok))
            if gone:
                excluded[reason] = excluded.get(reason, 0) + gone
                mask = mask & ok
    return mask, excluded


def run_scores(
    plugins: Sequence[Weighted],
    state: CycleState,
    classes: Sequence[ShapeClass],
    snap: Snapshot,
    feasible: Bool,
) -> I64 | None:
    """Per node, the sum of each Score plugin's normalized score times its weight; 0 off the
    feasible nodes (so a domain's best node is a feasible one); None when no plugin scores."""
    total: I64 | None = None
    for entry in plugins:
        raw = entry.plugin.score(state, classes, snap, feasible)
        if raw is None:
            continue  # kube would give every node one value: no order changes
        part = entry.weight * entry.plugin.normalize(state, raw, feasible)
        total = part if total is None else total + part
    return total


def _member_rules(
    profile: Profile,
    state: CycleState,
    pods: Sequence[GangPod],
    classes: Sequence[ShapeClass],
    snap: Snapshot,
    score: I64 | None,
) -> MemberRules | None:
    if all(c.terms is None for c in classes) and not snap.with_terms:
        # The common case: no pod in play carries an inter-pod term; only a preference, if any.
        return None if score is None else MemberRules(score=score)
    caps: list[ValueCap] = []
    gathers: list[Gather] = []
    spreads: list[SpreadRule] = []
    for plugin in profile.member_rules:
        got = plugin.member_rules(state, pods, classes, snap)
        caps += got.caps
        gathers += got.gathers
        spreads += got.spreads
    if not caps and not gathers and not spreads and score is None:
        return None
    return MemberRules(tuple(caps), tuple(merge_gathers(gathers)), tuple(spreads), score)


def _subgroups(gang: Gang, chosen: Sequence[GangPod], index: ClusterIndex) -> tuple[SubGroupPart, ...]:
    """Each subgroup's pending members among `chosen` (a pod joins its first subgroup only),
    and its bound members' nodes."""
    if not gang.subgroups:
        return ()
    pos = {p.key: i for i, p in enumerate(chosen)}
    bound = {p.key: p.node_name for p in gang.bound}
    seen: set[int] = set()
    out: list[SubGroupPart] = []
    for sg in gang.subgroups:
        taken = tuple(pos[k] for k in sg.pods if k in pos and pos[k] not in seen)
        nodes = [bound[k] for k in sg.pods if k in bound]
        if taken or nodes:
            seen.update(taken)
            at = sorted({index.node_pos[n] for n in nodes if n is not None and n in index.node_pos})
            out.append(SubGroupPart(sg, taken, np.asarray(at, dtype=np.int64), len(nodes)))
    return tuple(out)


def _anchors(gang: Gang, index: ClusterIndex) -> I64:
    """The bound members' nodes, and the ends of the HyperNode Volcano recorded for them
    (`allocated_domain`): a hard constraint must hold both."""
    nodes = {
        index.node_pos[n] for n in (p.node_name for p in gang.bound) if n is not None and n in index.node_pos
    }
    domain = allocated_domain(gang, index)
    if domain is not None:
        nodes |= {int(index.dom_start[domain]), int(index.dom_end[domain]) - 1}
    return np.asarray(sorted(nodes), dtype=np.int64)


_terms_of = attrgetter("terms")


def _selector_keys(terms: Iterable[PodTerms | None], snap: Snapshot) -> frozenset[str]:
    keys: set[str] = set()
    for t in terms:
        if t is not None:
            for sel in t.selectors():
                keys |= sel.keys()
    # Bound pods' anti-affinity selectors, each distinct one read once: pods of one shape share
    # one interned PodTerms (`PodTerms.of`), told apart by identity without hashing each pod's.
    held = list(map(_terms_of, snap.with_terms.values()))
    distinct = dict(zip(map(id, held), held, strict=True))
    bound = {term.selector for t in distinct.values() if t is not None for term in t.anti_affinity}
    for sel in bound:
        keys |= sel.keys()
    return frozenset(keys)


def _signature(pod: GangPod, keys: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """The pod's labels that some selector in play reads: members equal here match alike."""
    labels = pod.pod.metadata.labels or {}
    return tuple(sorted((k, labels[k]) for k in keys if k in labels))


def _node_cap(rules: MemberRules | None, members: Sequence[int], index: ClusterIndex) -> I64 | None:
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
