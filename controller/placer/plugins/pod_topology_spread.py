"""PodTopologySpread: topology spread constraints (kube-scheduler's plugin of the same name,
`podtopologyspread/filtering.go` and `scoring.go`).

A constraint's domains are the values of its topology key on eligible nodes: nodes that have
the key, that the pod's node selector and affinity allow (`nodeAffinityPolicy: Honor`, the
default), and whose taints it tolerates (`nodeTaintsPolicy: Honor`). Only pods on eligible
nodes count, in the pod's namespace, matched by the constraint's selector narrowed by
`matchLabelKeys`, and not terminating. With fewer domains than `minDomains` the global
minimum counts as 0.

Filter (`DoNotSchedule`): a node passes when it has the key and its value's count, plus one if
the pod matches the selector, less the global minimum is at most `maxSkew`. Between members: the
same check member by member, counts growing as members are placed (`rules.SpreadRule`), so a
gang spreads as kube would spread its pods one after another.

Score (`ScheduleAnyway`), as kube's `scoring.go`: per node, the sum over the soft constraints of
`count * log(domains + 2) + maxSkew - 1` (count: matching pods in the node's value, on eligible
nodes; the log weighs a constraint with more domains more), rounded; a node lacking a soft
constraint's key is ignored (raw `IGNORED`, normalized 0). A constraint's domains here are, as
kube counts them, its values on the scored nodes: those that passed Filter and have every soft
constraint's key, eligible or not (Filter's domains are the eligible nodes' values). Normalize,
over the feasible nodes that are not ignored: `100 * (max + min - s) / max`, so the emptiest
value scores highest; all 0: all 100.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from controller.placer.framework import (
    I64,
    MAX_NODE_SCORE,
    Bool,
    Cut,
    CycleState,
    ShapeClass,
    StateKey,
    Status,
    without_lower,
)
from controller.placer.plugins.bound_counts import BoundCounts, bound_counts
from controller.placer.plugins.node_affinity import allowed_nodes, requirements
from controller.placer.plugins.taint_toleration import pod_tolerations, tolerated_nodes
from controller.placer.records import BoundPod
from controller.placer.rules import MemberRules, SpreadRule
from controller.placer.snapshot import Snapshot
from controller.placer.terms import SpreadTerm
from controller.placer.values import at_nodes, per_value, value_codes
from translations.gangs import Gang, GangPod

REASON = "node(s) didn't match pod topology spread constraints"
MISSING_KEY = "node(s) didn't match pod topology spread constraints (missing required label)"
IGNORED = -1
"""Raw score of a node lacking a soft constraint's key (kube's IgnoredNodes)."""


@dataclass(frozen=True)
class Domains:
    """One constraint as one pod sees it: value codes, counts and which values are domains."""

    codes: I64
    counts: I64
    domains: Bool


@dataclass
class _State:
    comparison_operators: bool = True
    """The `TaintTolerationComparisonOperators` gate, as the plugin was built."""
    without_lower: int | None = None
    """Every pod a gang of this priority may evict left out (`framework.WITHOUT_LOWER`)."""
    attempt: CycleState = field(default_factory=CycleState)
    """The attempt's state: the counts kept for it (`bound_counts`) live there."""
    priority: int = 0
    """The attempt's gang's: which pods the kept counts split off as those that may go."""
    memo: dict[tuple[SpreadTerm, str, object], Domains] = field(default_factory=dict)


KEY: StateKey[_State] = StateKey("PreFilter/PodTopologySpread")


def domains(term: SpreadTerm, pod: GangPod, snap: Snapshot, state: _State) -> Domains:
    """The constraint's codes, its counts of matching pods per value, and its domains, for a
    pod in `pod`'s namespace with `pod`'s node selector, affinity and tolerations."""
    spec = pod.pod.spec
    tolerations = pod_tolerations(spec, comparison_operators=state.comparison_operators)
    key = (term, pod.pod.namespace, (requirements(spec), tolerations))
    hit = state.memo.get(key)
    if hit is not None:
        return hit
    index = snap.index
    codes, nvals = value_codes(index, term.topology_key)
    eligible = codes >= 0
    if term.honor_affinity:
        eligible &= allowed_nodes(index, spec)
    if term.honor_taints:
        eligible &= tolerated_nodes(index, tolerations)
    ns, lower = pod.pod.namespace, state.without_lower

    def matches(p: BoundPod) -> bool:
        return (
            not p.terminating
            and p.namespace == ns
            and bool(eligible[p.node])
            and term.selector.matches(p.labels)
        )

    if lower is not None and lower != state.priority:  # split for another gang
        kept = BoundCounts.of(snap, lower)
    else:
        kept = bound_counts(state.attempt, snap, state.priority)
    counts = kept.count(
        (PodTopologySpread, state.comparison_operators, key), term.topology_key, matches, lower
    )
    found = Domains(codes, counts, per_value(codes, np.flatnonzero(eligible).tolist(), nvals) > 0)
    state.memo[key] = found
    return found


def _low(d: Domains, min_domains: int) -> int:
    if int(d.domains.sum()) < min_domains or not d.domains.any():
        return 0
    return int(d.counts[d.domains].min())


class PodTopologySpread:
    name: ClassVar[str] = "PodTopologySpread"

    def __init__(self, *, comparison_operators: bool = True) -> None:
        self.comparison_operators = comparison_operators
        """The `TaintTolerationComparisonOperators` gate (`taint_toleration`)."""

    def pre_filter(self, state: CycleState, gang: Gang, pods: Sequence[GangPod], snap: Snapshot) -> Status:
        state.write(KEY, _State(self.comparison_operators, without_lower(state), state, gang.priority))
        return Status()

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        terms = cls.terms
        if terms is None or not any(s.hard for s in terms.spread):
            return ()
        st = state.read(KEY)
        labels = cls.pod.pod.metadata.labels or {}
        has_key = np.ones(snap.index.n_nodes, dtype=np.bool_)
        skew_ok = np.ones(snap.index.n_nodes, dtype=np.bool_)
        for s in terms.spread:
            if not s.hard:
                continue
            d = domains(s, cls.pod, snap, st)
            has_key &= d.codes >= 0
            self_match = int(s.selector.matches(labels))
            skew_ok &= at_nodes(d.codes, d.counts) + self_match - _low(d, s.min_domains) <= s.max_skew
        return ((MISSING_KEY, has_key), (REASON, skew_ok))

    def member_rules(
        self, state: CycleState, pods: Sequence[GangPod], classes: Sequence[ShapeClass], snap: Snapshot
    ) -> MemberRules:
        st = state.read(KEY)
        rules: list[SpreadRule] = []
        for cls in classes:
            for s in cls.terms.spread if cls.terms is not None else ():
                if not s.hard:
                    continue
                d = domains(s, cls.pod, snap, st)
                ns = cls.pod.pod.namespace
                matching = frozenset(
                    i for i, p in enumerate(pods) if p.pod.namespace == ns and s.selector.matches(_labels(p))
                )
                rules.append(
                    SpreadRule(
                        s.topology_key,
                        cls.members,
                        matching,
                        d.codes,
                        d.counts,
                        d.domains,
                        s.max_skew,
                        s.min_domains,
                    )
                )
        return MemberRules(spreads=tuple(rules))

    def score(
        self, state: CycleState, classes: Sequence[ShapeClass], snap: Snapshot, feasible: Bool
    ) -> I64 | None:
        out: I64 | None = None
        for cls in classes:
            soft = [s for s in (cls.terms.spread if cls.terms is not None else ()) if not s.hard]
            if soft:
                part = _raw_score(soft, cls.pod, snap, state.read(KEY), feasible)
                out = part if out is None else np.where((out < 0) | (part < 0), IGNORED, out + part)
        return out

    def normalize(self, state: CycleState, scores: I64, feasible: Bool) -> I64:
        counted = feasible & (scores >= 0)
        if not counted.any():
            return np.zeros(len(scores), dtype=np.int64)
        lo, hi = int(scores[counted].min()), int(scores[counted].max())
        if hi == 0:
            return np.where(counted, MAX_NODE_SCORE, 0)
        return np.where(counted, MAX_NODE_SCORE * (hi + lo - scores) // hi, 0)


def _raw_score(soft: Sequence[SpreadTerm], pod: GangPod, snap: Snapshot, st: _State, feasible: Bool) -> I64:
    """kube's raw score of one pod's soft constraints per node (see the module docstring)."""
    total = np.zeros(snap.index.n_nodes, dtype=np.float64)
    found = [domains(s, pod, snap, st) for s in soft]
    ignored = np.zeros(snap.index.n_nodes, dtype=np.bool_)
    for d in found:
        ignored |= d.codes < 0
    scored = feasible & ~ignored
    for s, d in zip(soft, found, strict=True):
        weight = np.log(_scored_domains(d, scored) + 2)
        total += at_nodes(d.codes, d.counts) * weight + (s.max_skew - 1)
    # Go's math.Round: half away from zero (the sums are never negative).
    return np.where(ignored, IGNORED, np.floor(total + 0.5)).astype(np.int64)


def _scored_domains(d: Domains, scored: Bool) -> int:
    """The constraint's domains as kube's score counts them: its values on the scored nodes
    (feasible, with every soft constraint's key), eligible or not."""
    return len(np.unique(d.codes[scored]))


def _labels(p: GangPod) -> Mapping[str, str]:
    return p.pod.metadata.labels or {}
