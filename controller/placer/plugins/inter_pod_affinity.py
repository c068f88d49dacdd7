"""InterPodAffinity: required and preferred pod affinity and anti-affinity (kube-scheduler's
plugin of the same name, `interpodaffinity/filtering.go` and `scoring.go`).

Filter, per shape class, in kube's order:
1. the pod's required affinity: only nodes that have every term's key, each value holding a
   pod that matches *all* the terms (one pod satisfies the set, not one pod per term). When no
   pod anywhere matches all the terms and the pod matches them itself, it is the first of a
   collection and may start it on any node with the keys ("didn't match pod affinity rules");
2. the pod's required anti-affinity: out of every value holding a pod a term selects ("didn't
   match pod anti-affinity rules");
3. existing pods' required anti-affinity: a term of a bound pod that selects this pod keeps
   it out of that pod's topology value ("didn't satisfy existing pods anti-affinity rules").

PreFilter refuses a pod whose term has a selector kube cannot parse (a value that is no label
value): it cannot be placed, and preemption cannot change that.

State, as kube's PreFilter extensions keep it (AddPod/RemovePod; `ExistingTerms`, an attempt
slot of the cycle state): the bound pods' terms that select the pod being placed are counted
per topology key and value once per attempt, each distinct terms value read once for all the
pods that share it, the counts split by whether the counted pod may be evicted by the gang or
stays. When preemption runs the filters again with candidate victims removed or put back, the
counts are adjusted by just the pods set since; its best case, every evictable pod gone, reads
the staying pods' counts alone.

Between members (they count as reserved, as kube places them one after another): members of a
collection that starts here gather in one value per term key; members a required anti-affinity
term relates take one value each.

Score, per node, the sum of two halves (kube's PreScore and Score):
* the pod's own preferred terms: each term's weight times the bound pods it selects in the
  node's value of its key (anti-affinity subtracts);
* the symmetric half: each bound pod's term that selects the pod adds to every node sharing the
  bound pod's value of the term's key: a preferred affinity term its weight, a preferred
  anti-affinity term minus its weight, a required affinity term kube's default
  hardPodAffinityWeight (1). A bound pod's required anti-affinity is Filter's (point 3) only.
Normalized min-max to 0..100 over the feasible nodes as kube's NormalizeScore does (all equal:
all 0). kube's plugin args are at their defaults: hardPodAffinityWeight 1, the preferred terms
of existing pods read (`ignorePreferredTermsOfExistingPods: false`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import ClassVar

import numpy as np

from controller.placer.framework import (
    I64,
    MAX_NODE_SCORE,
    Bool,
    Code,
    Cut,
    CycleState,
    ShapeClass,
    StateKey,
    Status,
    without_lower,
)
from controller.placer.plugins.bound_counts import BoundCounts, WatchedPods, bound_counts
from controller.placer.preempt import may_go as _may_go
from controller.placer.preempt import may_go_each
from controller.placer.records import BoundPod
from controller.placer.rules import Gather, MemberRules, ValueCap, merge_gathers
from controller.placer.snapshot import ClusterIndex, Snapshot
from controller.placer.terms import NamespaceLabels, PodTerm, PodTerms
from controller.placer.values import at_nodes, value_codes
from translations.gangs import Gang, GangPod

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
INVALID = "a pod affinity term's label selector cannot be parsed"
HARD_POD_AFFINITY_WEIGHT = 1
"""What an existing pod's required affinity term that selects the newcomer weighs in its score
(kube's InterPodAffinityArgs.hardPodAffinityWeight, at its default)."""


Selecting = tuple[tuple[PodTerm, int | None], ...]
"""A bound pod's terms that select a given pod, each with its signed score weight
(`_terms_toward`): None for required anti-affinity (Filter's alone)."""

PodKey = tuple[str, frozenset[tuple[str, str]]]
"""The pod a count is for: its namespace and labels (all a term's selection reads)."""


@dataclass
class TermCounts:
    """The bound pods' terms that select one pod, counted per topology key and value code
    (kube's PreFilter state): `anti`, pods whose required anti-affinity term selects it (kube's
    existingAntiAffinityCounts, Filter's point 3); `weights`, the signed score weights of their
    other terms that select it, and `scored`, how many such terms (a key whose weights cancel
    out still scores, at 0)."""

    anti: dict[str, I64] = field(default_factory=dict)
    weights: dict[str, I64] = field(default_factory=dict)
    scored: dict[str, I64] = field(default_factory=dict)

    def copy(self) -> TermCounts:
        return TermCounts(
            {k: v.copy() for k, v in self.anti.items()},
            {k: v.copy() for k, v in self.weights.items()},
            {k: v.copy() for k, v in self.scored.items()},
        )

    def add(self, selecting: Selecting, node: int, sign: int, index: ClusterIndex) -> None:
        """kube's AddPod (sign 1) or RemovePod (-1) for one bound pod on `node`."""
        for t, weight in selecting:
            codes, n = value_codes(index, t.topology_key)
            code = int(codes[node])
            if code < 0:
                continue  # a pod on a node without the key counts nowhere
            if weight is None:
                self.anti.setdefault(t.topology_key, np.zeros(n, dtype=np.int64))[code] += sign
            else:
                self.weights.setdefault(t.topology_key, np.zeros(n, dtype=np.int64))[code] += sign * weight
                self.scored.setdefault(t.topology_key, np.zeros(n, dtype=np.int64))[code] += sign

    @classmethod
    def of(cls, groups: Sequence[tuple[Selecting, I64]], index: ClusterIndex) -> TermCounts:
        """The counts of pods given in groups (terms, their nodes): one bincount per key."""
        anti: dict[str, list[I64]] = {}
        scored: dict[str, list[tuple[I64, int]]] = {}
        for selecting, nodes in groups:
            for t, weight in selecting:
                if weight is None:
                    anti.setdefault(t.topology_key, []).append(nodes)
                else:
                    scored.setdefault(t.topology_key, []).append((nodes, weight))
        out = cls()
        for key, parts in anti.items():
            codes, n = value_codes(index, key)
            at = codes[np.concatenate(parts)]
            out.anti[key] = np.bincount(at[at >= 0], minlength=n).astype(np.int64)
        for key, weighted in scored.items():
            codes, n = value_codes(index, key)
            at = codes[np.concatenate([nodes for nodes, _ in weighted])]
            w = np.concatenate([np.full(len(nodes), weight, dtype=np.int64) for nodes, weight in weighted])
            held = at >= 0
            out.scored[key] = np.bincount(at[held], minlength=n).astype(np.int64)
            # Integer weights: the float sums are exact, as the rint that follows keeps them.
            sums = np.bincount(at[held], weights=w[held].astype(np.float64), minlength=n)
            out.weights[key] = np.rint(sums).astype(np.int64)
        return out


@dataclass
class ExistingTerms(WatchedPods):
    """The bound pods' terms as the attempt's first PreFilter found them, kept for the whole
    attempt (kube's PreFilter state and its AddPod/RemovePod extensions). Pods sharing one
    `PodTerms` value (a workload's replicas) are read as one group; per pod asked about, the
    counts are made once, split by whether the counted pod may be evicted by the attempt's gang
    (`preempt.may_go`) or stays. A run of the filters after preemption removed candidate
    victims or put them back reads the counts adjusted by the pods set since (`watch`), one by
    one, never recounted over every bound pod; with every evictable pod left out
    (`framework.WITHOUT_LOWER`) it reads the staying pods' counts alone. Its `base` is the
    bound pods with terms at the start."""

    groups: list[tuple[PodTerms, I64]]
    """Each distinct terms value, with the positions in `base` of the pods holding it."""
    nodes: I64
    """Per pod of `base`: its node."""
    _stays: Bool | None = None
    counted: dict[tuple[PodKey, bool], TermCounts] = field(default_factory=dict)
    """Per pod asked about: the counts of every pod (False), or of the pods that stay (True)."""
    selecting: dict[tuple[int, PodKey], tuple[PodTerms, Selecting]] = field(default_factory=dict)

    @classmethod
    def of(cls, snap: Snapshot, priority: int) -> ExistingTerms:
        base = dict(snap.with_terms)
        watch = snap.watch(max(64, len(base) // 4))
        records = list(base.values())
        n = len(records)
        # In passes over the records (no loop body per pod): their terms' identities and nodes,
        # then grouped by identity (equal terms are one object).
        held = list(map(_terms_of, records))
        ids = np.fromiter(map(id, held), dtype=np.uint64, count=n)
        nodes = np.fromiter(map(_node_of, records), dtype=np.int64, count=n)
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.cumsum(np.bincount(inverse, minlength=len(first)))[:-1]
        groups = []
        for g, idx in enumerate(np.split(order, bounds) if n else ()):
            terms = held[int(first[g])]
            assert terms is not None
            groups.append((terms, idx))
        return cls(snap, snap.namespace_labels, priority, watch, base, groups, nodes)

    @property
    def stays(self) -> Bool:
        """Per pod of `base`: does it stay (not `may_go` for the gang)? Read when preemption
        first asks for its best case, not by an attempt that never preempts."""
        if self._stays is None:
            self._stays = ~may_go_each(list(self.base.values()), self.priority)
        return self._stays

    def toward(self, terms: PodTerms, pod: PodKey) -> Selecting:
        """`terms`' terms that select the pod (each distinct terms value read once)."""
        key = (id(terms), pod)
        got = self.selecting.get(key)
        if got is None or got[0] is not terms:
            ns, labels = pod
            got = self.selecting[key] = (terms, _selecting(terms, ns, dict(labels), self.ns_labels))
        return got[1]

    def counts(self, pod: PodKey, lower: int | None) -> TermCounts:
        """The counts for the pod on the snapshot as it stands now, or with every pod of lower
        priority than `lower` that may go left out."""
        kept = self.counted.get((pod, lower is not None))
        if kept is None:
            keep = self.stays if lower is not None else np.ones(len(self.nodes), dtype=np.bool_)
            parts = [(self.toward(t, pod), self.nodes[idx[keep[idx]]]) for t, idx in self.groups]
            kept = self.counted[(pod, lower is not None)] = TermCounts.of(parts, self.snap.index)
        out = kept.copy()
        now = self.snap.with_terms
        for key in self.watch.touched:
            was, cur = self.base.get(key), now.get(key)
            if was is cur:
                continue
            for e, sign in ((was, -1), (cur, 1)):
                if e is not None and e.terms is not None and (lower is None or not _may_go(e, lower)):
                    out.add(self.toward(e.terms, pod), e.node, sign, self.snap.index)
        return out


_terms_of, _node_of = attrgetter("terms"), attrgetter("node")

EXISTING: StateKey[ExistingTerms | None] = StateKey("PreFilter/InterPodAffinity/existingTerms", attempt=True)


def _selecting(terms: PodTerms, ns: str, labels: Mapping[str, str], ns_labels: NamespaceLabels) -> Selecting:
    """`terms`' terms (see `_terms_toward`) that select a pod of namespace `ns` with `labels`."""
    return tuple((t, w) for t, w in _terms_toward(terms) if t.covers(ns, labels, ns_labels))


@dataclass
class _Counts:
    """What one run of the filters reads of the bound pods, each computed once: the pods
    matching a term (or every term of a set) per value (`bound_counts`), and the bound pods'
    terms that select a pod (`ExistingTerms`), which Filter and Score both read; both made for
    the attempt the first time a run asks (`attempt`: its state). `without_lower`: the run
    leaves out every pod a gang of that priority may evict (`framework.WITHOUT_LOWER`)."""

    snap: Snapshot
    ns_labels: NamespaceLabels
    attempt: CycleState
    priority: int
    """The attempt's gang's: which pods the kept counts split off as those that may go."""
    without_lower: int | None = None
    memo: dict[tuple[tuple[PodTerm, ...], str], np.ndarray] = field(default_factory=dict)
    selecting: dict[PodKey, TermCounts] = field(default_factory=dict)

    def toward(self, ns: str, labels: Mapping[str, str]) -> TermCounts:
        """The bound pods' terms that select a pod of namespace `ns` with `labels`, counted."""
        key = (ns, frozenset(labels.items()))
        hit = self.selecting.get(key)
        if hit is None:
            lower = self.without_lower
            if lower is not None and lower != self.priority:  # split for another gang
                existing = ExistingTerms.of(self.snap, lower)
            else:
                existing = _existing(self.attempt, self.snap, self.priority)
            hit = self.selecting[key] = existing.counts(key, lower)
        return hit

    def per_value(self, terms: tuple[PodTerm, ...], key: str) -> np.ndarray:
        """Per value of `key`: bound pods every one of `terms` selects."""
        hit = self.memo.get((terms, key))
        if hit is None:
            lower = self.without_lower
            if lower is not None and lower != self.priority:  # split for another gang
                counts = BoundCounts.of(self.snap, lower)
            else:
                counts = bound_counts(self.attempt, self.snap, self.priority)
            ns_labels = self.ns_labels
            hit = self.memo[(terms, key)] = counts.count(
                (self.__class__, terms), key, lambda p: _covered(terms, p, ns_labels), lower
            )
        return hit


def _covered(terms: tuple[PodTerm, ...], p: BoundPod, ns_labels: NamespaceLabels) -> bool:
    return all(t.covers(p.namespace, p.labels, ns_labels) for t in terms)


KEY: StateKey[_Counts] = StateKey("PreFilter/InterPodAffinity")


def _existing(state: CycleState, snap: Snapshot, priority: int) -> ExistingTerms:
    """The attempt's `ExistingTerms` (made by its first run, or anew when it cannot be brought
    up to date: another snapshot, namespaces labelled anew, too many pods changed)."""
    got = state.get(EXISTING, None)
    if got is None or not got.holds(snap, priority):
        got = ExistingTerms.of(snap, priority)
        state.write(EXISTING, got)
    return got


def _labels(p: GangPod) -> Mapping[str, str]:
    return p.pod.metadata.labels or {}


class InterPodAffinity:
    name: ClassVar[str] = "InterPodAffinity"

    def pre_filter(self, state: CycleState, gang: Gang, pods: Sequence[GangPod], snap: Snapshot) -> Status:
        state.write(KEY, _Counts(snap, snap.namespace_labels, state, gang.priority, without_lower(state)))
        for p in pods:
            terms = PodTerms.of(p.pod)
            if terms is not None and not all(
                t.selector.valid() for t in (*terms.affinity, *terms.anti_affinity)
            ):
                return Status(Code.UNRESOLVABLE, (INVALID, f"pod {p.key}"), self.name)
        return Status()

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        counts = state.read(KEY)
        pod = cls.pod
        ns, labels = pod.pod.namespace, _labels(pod)
        n = snap.index.n_nodes
        cuts: list[Cut] = []
        terms = cls.terms
        if terms is not None and terms.affinity:
            cuts.append((AFFINITY, _affinity_nodes(terms.affinity, ns, labels, counts, snap)))
        if terms is not None and terms.anti_affinity:
            anti = np.ones(n, dtype=np.bool_)
            for t in terms.anti_affinity:
                codes, _ = value_codes(snap.index, t.topology_key)
                anti &= at_nodes(codes, counts.per_value((t,), t.topology_key)) == 0
            cuts.append((ANTI_AFFINITY, anti))
        cuts.append((EXISTING_ANTI_AFFINITY, _existing_anti_affinity(counts.toward(ns, labels), snap)))
        return cuts

    def member_rules(
        self, state: CycleState, pods: Sequence[GangPod], classes: Sequence[ShapeClass], snap: Snapshot
    ) -> MemberRules:
        counts = state.read(KEY)
        gathers: list[Gather] = []
        caps: list[ValueCap] = []

        def matching(terms: tuple[PodTerm, ...]) -> set[int]:
            return {
                i
                for i, p in enumerate(pods)
                if all(t.covers(p.pod.namespace, _labels(p), counts.ns_labels) for t in terms)
            }

        for cls in classes:
            terms = cls.terms
            if terms is None:
                continue
            if terms.affinity and _starts_collection(terms.affinity, cls.pod, counts, snap):
                together = tuple(sorted(set(cls.members) | matching(terms.affinity)))
                if len(together) > 1:
                    for t in terms.affinity:
                        codes, _ = value_codes(snap.index, t.topology_key)
                        gathers.append(Gather(t.topology_key, together, codes))
            for t in terms.anti_affinity:
                mates = matching((t,))
                if mates:
                    codes, nvals = value_codes(snap.index, t.topology_key)
                    together = tuple(sorted(set(cls.members) | mates))
                    caps.append(ValueCap(t.topology_key, together, codes, np.ones(nvals, dtype=np.int64)))
        return MemberRules(caps=tuple(caps), gathers=tuple(merge_gathers(gathers)))

    def score(
        self, state: CycleState, classes: Sequence[ShapeClass], snap: Snapshot, feasible: Bool
    ) -> I64 | None:
        counts = state.read(KEY)
        out: I64 | None = None
        for cls in classes:
            for part in (_own_preferences(cls, counts, snap), _existing_preferences(cls, counts, snap)):
                if part is not None:
                    out = part if out is None else out + part
        return out

    def normalize(self, state: CycleState, scores: I64, feasible: Bool) -> I64:
        """Min-max over the feasible nodes, truncated as kube truncates its float."""
        if not feasible.any():
            return np.zeros(len(scores), dtype=np.int64)
        lo, hi = int(scores[feasible].min()), int(scores[feasible].max())
        if hi == lo:
            return np.zeros(len(scores), dtype=np.int64)
        scaled = (MAX_NODE_SCORE * ((scores - lo) / (hi - lo))).astype(np.int64)
        return np.where(feasible, scaled, 0)


def _own_preferences(cls: ShapeClass, counts: _Counts, snap: Snapshot) -> I64 | None:
    """Score, the pod's half: each preferred term's weight times the bound pods it selects in
    the node's value (anti-affinity subtracts); None when the pod has no preferred term."""
    terms = cls.terms
    if terms is None or not (terms.preferred_affinity or terms.preferred_anti_affinity):
        return None
    out = np.zeros(snap.index.n_nodes, dtype=np.int64)
    for t, sign in [
        *((t, 1) for t in terms.preferred_affinity),
        *((t, -1) for t in terms.preferred_anti_affinity),
    ]:
        codes, _ = value_codes(snap.index, t.topology_key)
        out += sign * t.weight * at_nodes(codes, counts.per_value((t,), t.topology_key))
    return out


def _existing_preferences(cls: ShapeClass, counts: _Counts, snap: Snapshot) -> I64 | None:
    """Score, the symmetric half: every term of a bound pod that selects this pod adds its
    weight (see `_terms_toward`) to each node sharing that bound pod's value of the term's key;
    None when no such term adds anywhere. Read off the counts per value, one pass per key."""
    out: I64 | None = None
    got = counts.toward(cls.pod.pod.namespace, _labels(cls.pod))
    for key, weights in got.weights.items():
        if got.scored[key].any():  # a bound pod on a node without the key adds nowhere
            codes, _ = value_codes(snap.index, key)
            part = at_nodes(codes, weights)
            out = part if out is None else out + part
    return out


def _existing_anti_affinity(got: TermCounts, snap: Snapshot) -> Bool:
    """Filter, point 3: every node outside the values that hold a bound pod whose required
    anti-affinity term selects this pod (one pass per topology key)."""
    ok = np.ones(snap.index.n_nodes, dtype=np.bool_)
    for key, per in got.anti.items():
        codes, _ = value_codes(snap.index, key)
        ok &= at_nodes(codes, per) == 0
    return ok


def _terms_toward(terms: PodTerms) -> Iterator[tuple[PodTerm, int | None]]:
    """A bound pod's terms as another pod's placement reads them: required anti-affinity for
    Filter (weight None), then, with their signed score weights, required affinity at kube's
    default hardPodAffinityWeight, preferred affinity at its weight, preferred anti-affinity at
    minus its weight."""
    yield from ((t, None) for t in terms.anti_affinity)
    yield from ((t, HARD_POD_AFFINITY_WEIGHT) for t in terms.affinity)
    yield from ((t, t.weight) for t in terms.preferred_affinity)
    yield from ((t, -t.weight) for t in terms.preferred_anti_affinity)


def _affinity_nodes(
    terms: tuple[PodTerm, ...], ns: str, labels: Mapping[str, str], counts: _Counts, snap: Snapshot
) -> np.ndarray:
    """kube's satisfyPodAffinity over every node (see the module docstring, point 3)."""
    n = snap.index.n_nodes
    has_keys = np.ones(n, dtype=np.bool_)
    satisfied = np.ones(n, dtype=np.bool_)
    anywhere = False
    for t in terms:
        codes, _ = value_codes(snap.index, t.topology_key)
        per = counts.per_value(terms, t.topology_key)
        anywhere = anywhere or bool(per.any())
        has_keys &= codes >= 0
        satisfied &= at_nodes(codes, per) > 0
    if not anywhere and all(t.covers(ns, labels, counts.ns_labels) for t in terms):
        return has_keys  # the first pod of a collection: no pod matches all the terms anywhere
    return has_keys & satisfied


def _starts_collection(terms: tuple[PodTerm, ...], pod: GangPod, counts: _Counts, snap: Snapshot) -> bool:
    """No bound pod matches every term anywhere, and the pod matches them itself."""
    if not all(t.covers(pod.pod.namespace, _labels(pod), counts.ns_labels) for t in terms):
        return False
    return not any(counts.per_value(terms, t.topology_key).any() for t in terms)
