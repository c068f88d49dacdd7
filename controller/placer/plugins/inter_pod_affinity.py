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

State, as kube's PreFilter extensions keep it (AddPod/RemovePod): which of a bound pod's terms
select the pod being placed is worked out once per bound pod for the whole attempt
(`PodTermsMemo`, an attempt slot of the cycle state), so when preemption runs the filters again
with candidate victims removed or put back, only a pod it has not seen (or whose record
changed) is read afresh; the rest is summed again from what is kept.

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
)
from controller.placer.records import BoundPod
from controller.placer.rules import Gather, MemberRules, ValueCap, merge_gathers
from controller.placer.snapshot import Snapshot
from controller.placer.terms import NamespaceLabels, PodTerm, PodTerms
from controller.placer.values import at_nodes, per_value, value_codes
from translations.gangs import Gang, GangPod

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
INVALID = "a pod affinity term's label selector cannot be parsed"
HARD_POD_AFFINITY_WEIGHT = 1
"""What an existing pod's required affinity term that selects the newcomer weighs in its score
(kube's InterPodAffinityArgs.hardPodAffinityWeight, at its default)."""


Toward = tuple[int, PodTerm, int | None]
"""A bound pod's term that selects the pod being placed: the bound pod's node, the term, and the
term's signed score weight (`_terms_toward`), None for required anti-affinity (Filter's alone)."""


Selecting = tuple[tuple[PodTerm, int | None], ...]
"""One bound pod's terms that select a given pod, each with its signed score weight (`Toward`)."""


@dataclass
class PodTermsMemo:
    """What each bound pod's terms say toward a pod, kept for the whole attempt (kube's
    PreFilter extensions: preemption removes a candidate victim and puts it back, and only that
    pod's share changes). Per pod (namespace, labels) asked about: bound pod key -> its record
    and its terms that select such a pod. A record other than the one seen (the pod changed) is
    looked at afresh; a pod gone is simply not read."""

    ns_labels: NamespaceLabels
    selecting: dict[tuple[str, frozenset[tuple[str, str]]], dict[str, tuple[BoundPod, Selecting]]] = field(
        default_factory=dict
    )

    def toward(
        self, pods: Mapping[str, BoundPod], ns: str, labels: Mapping[str, str]
    ) -> Iterator[tuple[BoundPod, Selecting]]:
        """Each of `pods` (the bound pods with terms) with its terms that select a pod of
        namespace `ns` with `labels` (those with none left out)."""
        seen = self.selecting.setdefault((ns, frozenset(labels.items())), {})
        for key, e in pods.items():
            got = seen.get(key)
            if got is None or got[0] is not e:
                got = seen[key] = (e, _selecting(e, ns, labels, self.ns_labels))
            if got[1]:
                yield got


def _selecting(e: BoundPod, ns: str, labels: Mapping[str, str], ns_labels: NamespaceLabels) -> Selecting:
    """`e`'s terms (see `_terms_toward`) that select a pod of namespace `ns` with `labels`."""
    if e.terms is None:
        return ()
    return tuple((t, w) for t, w in _terms_toward(e.terms) if t.covers(ns, labels, ns_labels))


MEMO: StateKey[PodTermsMemo] = StateKey("PreFilter/InterPodAffinity/podTerms", attempt=True)


@dataclass
class _Counts:
    """What one attempt reads of the bound pods, each computed once: the pods matching a term (or
    every term of a set) per value, and the bound pods' terms that select a pod (`toward`), which
    Filter and Score both read."""

    snap: Snapshot
    ns_labels: NamespaceLabels
    terms_memo: PodTermsMemo
    memo: dict[tuple[tuple[PodTerm, ...], str], np.ndarray] = field(default_factory=dict)
    selecting: dict[tuple[str, frozenset[tuple[str, str]]], tuple[Toward, ...]] = field(default_factory=dict)

    def toward(self, ns: str, labels: Mapping[str, str]) -> tuple[Toward, ...]:
        """Every bound pod's term that selects a pod of namespace `ns` with `labels`."""
        key = (ns, frozenset(labels.items()))
        hit = self.selecting.get(key)
        if hit is None:
            hit = self.selecting[key] = tuple(
                (e.node, t, weight)
                for e, terms in self.terms_memo.toward(self.snap.with_terms, ns, labels)
                for t, weight in terms
            )
        return hit

    def per_value(self, terms: tuple[PodTerm, ...], key: str) -> np.ndarray:
        """Per value of `key`: bound pods every one of `terms` selects."""
        hit = self.memo.get((terms, key))
        if hit is None:
            codes, n = value_codes(self.snap.index, key)
            nodes = [p.node for p in self.snap.pods.values() if _covered(terms, p, self.ns_labels)]
            hit = self.memo[(terms, key)] = per_value(codes, nodes, n)
        return hit


def _covered(terms: tuple[PodTerm, ...], p: BoundPod, ns_labels: NamespaceLabels) -> bool:
    return all(t.covers(p.namespace, p.labels, ns_labels) for t in terms)


KEY: StateKey[_Counts] = StateKey("PreFilter/InterPodAffinity")


def _attempt_memo(state: CycleState, snap: Snapshot) -> PodTermsMemo:
    """The attempt's `PodTermsMemo` (a new one for the first run, or namespaces labelled anew)."""
    try:
        memo = state.read(MEMO)
    except KeyError:
        memo = None
    if memo is None or memo.ns_labels is not snap.namespace_labels:
        memo = PodTermsMemo(snap.namespace_labels)
        state.write(MEMO, memo)
    return memo


def _labels(p: GangPod) -> Mapping[str, str]:
    return p.pod.metadata.labels or {}


class InterPodAffinity:
    name: ClassVar[str] = "InterPodAffinity"

    def pre_filter(self, state: CycleState, gang: Gang, pods: Sequence[GangPod], snap: Snapshot) -> Status:
        state.write(KEY, _Counts(snap, snap.namespace_labels, _attempt_memo(state, snap)))
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
    None when no such term adds anywhere. Summed per value, one pass per topology key."""
    out: I64 | None = None
    for key, (nodes, weights) in _per_key(
        counts.toward(cls.pod.pod.namespace, _labels(cls.pod)), scored=True
    ):
        codes, n = value_codes(snap.index, key)
        at = codes[np.asarray(nodes, dtype=np.int64)]
        held = at >= 0  # a bound pod on a node without the key adds nowhere
        if held.any():
            sums = np.bincount(at[held], weights=np.asarray(weights, dtype=np.float64)[held], minlength=n)
            part = at_nodes(codes, np.rint(sums).astype(np.int64))
            out = part if out is None else out + part
    return out


def _existing_anti_affinity(toward: Sequence[Toward], snap: Snapshot) -> Bool:
    """Filter, point 3: every node outside the values that hold a bound pod whose required
    anti-affinity term selects this pod (one pass per topology key)."""
    ok = np.ones(snap.index.n_nodes, dtype=np.bool_)
    for key, (nodes, _) in _per_key(toward, scored=False):
        codes, n = value_codes(snap.index, key)
        ok &= at_nodes(codes, per_value(codes, nodes, n)) == 0
    return ok


def _per_key(toward: Sequence[Toward], *, scored: bool) -> Iterator[tuple[str, tuple[list[int], list[int]]]]:
    """The bound pods' nodes (and score weights) of the `toward` terms, grouped by topology key:
    the scored terms, or (`scored=False`) the required anti-affinity ones."""
    grouped: dict[str, tuple[list[int], list[int]]] = {}
    for node, t, weight in toward:
        if (weight is not None) is scored:
            nodes, weights = grouped.setdefault(t.topology_key, ([], []))
            nodes.append(node)
            weights.append(weight or 0)
    yield from grouped.items()


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
