"""Prefilter for inter-pod rules: pod affinity and anti-affinity, topology spread, host ports.

kube-scheduler's InterPodAffinity, PodTopologySpread and NodePorts, for a gang instead of one
pod. Counting is done once per pod class (its PreFilter): existing pods matching a term are
counted per node, then per value of the term's topology key; every node then costs one lookup
per term. A gang's own members count as they are reserved, which for a gang placed at once
means rules *between members*. Output, in the placer's terms:

* per class, a node mask (and the nodes each rule excluded, in kube's words):
  - required affinity: nodes whose key value holds a matching existing pod; when there is none
    anywhere, a term the gang's own members match lets the gang start it (kube's first-pod rule),
    and those members must then share one value (`Gather`); with no match at all, no node;
  - required anti-affinity: nodes whose key value holds a matching existing pod are out, and the
    members involved may not share a value (`ValueCap` of 1);
  - the symmetric check: an existing pod's required anti-affinity that selects a member keeps
    that member out of the existing pod's key value;
  - host ports: nodes where an existing pod holds a conflicting port are out; members with
    conflicting ports take one node each;
  - `DoNotSchedule` spread: nodes without the key are out, and the members the constraint counts
    may add at most `min + maxSkew - count` to each value (`ValueCap`);
* per node, a preference score: preferred (anti-)affinity weight times matching existing pods in
  the node's key value, minus the count for `ScheduleAnyway` spread. It ranks candidate places
  before binpack.

Sound, not always complete: members tied by a rule are capped and gathered jointly, so a gang
whose members relate through different classes may be refused a placement a pod-by-pod search
would find; a placement the engine returns never breaks a rule. Spread caps use the minimum count
before the gang, so a gang larger than the balanced room stays pending rather than skewed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from controller.placer.filter import FilterSpec, run_filter
from controller.placer.snapshot import I64, Bool, ClusterIndex, Snapshot
from controller.placer.terms import NamespaceLabels, PodTerm, PodTerms, ports_conflict
from translations.gangs import GangPod

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
SPREAD = "node(s) didn't match pod topology spread constraints"
PORTS = "node(s) didn't have free ports for the requested pod ports"
REASONS = (AFFINITY, ANTI_AFFINITY, EXISTING_ANTI_AFFINITY, SPREAD, PORTS)
NODE = ""
"""The topology key of a node-level rule (host ports): every node is its own value."""


@dataclass(frozen=True)
class ValueCap:
    """At most `limit[value]` of `members` in each value of `key` (nodes without it: no limit)."""

    key: str
    members: tuple[int, ...]
    """Positions in the demand's pods."""
    codes: I64
    """Per node: the value's code, -1 where the node lacks the key."""
    limit: I64
    """Per value code."""


@dataclass(frozen=True)
class Gather:
    """`members` share one value of `key`."""

    key: str
    members: tuple[int, ...]
    codes: I64


@dataclass(frozen=True)
class GangRules:
    """Rules between a gang's members, and its preference score."""

    caps: tuple[ValueCap, ...] = ()
    gathers: tuple[Gather, ...] = ()
    score: I64 | None = None
    """Per node; higher is preferred."""

    @property
    def binding(self) -> bool:
        """True when placements must be checked member by member."""
        return bool(self.caps or self.gathers)

    def restrict(self, remap: Mapping[int, int]) -> GangRules:
        """The rules for a subset of the members (`remap`: old position -> new)."""

        def keep(members: tuple[int, ...]) -> tuple[int, ...]:
            return tuple(remap[m] for m in members if m in remap)

        caps = tuple(
            ValueCap(c.key, keep(c.members), c.codes, c.limit) for c in self.caps if len(keep(c.members)) > 0
        )
        gathers = tuple(
            Gather(g.key, keep(g.members), g.codes) for g in self.gathers if len(keep(g.members)) > 1
        )
        return GangRules(caps, gathers, self.score)

    def holds(self, assignments: Iterable[tuple[int, int]]) -> bool:
        """Does a full assignment (position, node) keep every cap and gather?"""
        node_of = dict(assignments)
        for cap in self.caps:
            used: dict[int, int] = {}
            for m in cap.members:
                if m not in node_of:
                    continue
                code = int(cap.codes[node_of[m]])
                if code < 0:
                    continue
                used[code] = used.get(code, 0) + 1
                if used[code] > int(cap.limit[code]):
                    return False
        for g in self.gathers:
            values = {int(g.codes[node_of[m]]) for m in g.members if m in node_of}
            if len(values) > 1 or -1 in values:
                return False
        return True


@dataclass(frozen=True)
class ClassRule:
    """What the inter-pod rules leave a class: extra allowed nodes and the exclusion counts."""

    mask: Bool
    exclusions: dict[str, int]


def value_codes(index: ClusterIndex, key: str) -> tuple[I64, int]:
    """Per node: a dense code of its `key` label value (-1 without it), and how many values.
    The node key (`NODE`) gives every node its own code."""
    cache_key = ("value_codes", key)
    hit = index.cache.get(cache_key)
    if isinstance(hit, tuple):
        return hit
    if key == NODE:
        out: tuple[I64, int] = (np.arange(index.n_nodes, dtype=np.int64), index.n_nodes)
    else:
        values = index.label_values(key)
        seen: dict[str, int] = {}
        codes = np.full(index.n_nodes, -1, dtype=np.int64)
        for i, v in enumerate(values):
            if v is not None:
                codes[i] = seen.setdefault(v, len(seen))
        out = (codes, len(seen))
    index.cache[cache_key] = out
    return out


def node_unique(index: ClusterIndex, key: str) -> bool:
    """Every node has the key, with a value of its own (kubernetes.io/hostname, normally)."""
    codes, n = value_codes(index, key)
    return n == index.n_nodes and bool((codes >= 0).all())


@dataclass
class _Mask:
    """A class's allowed nodes as rules cut them, each node counted by the first rule that cut it."""

    mask: Bool
    exclusions: dict[str, int]

    def keep(self, cause: str, ok: Bool) -> None:
        gone = int(np.count_nonzero(self.mask & ~ok))
        if gone:
            self.exclusions[cause] = self.exclusions.get(cause, 0) + gone
        self.mask = self.mask & ok


@dataclass
class _Counter:
    """Existing pods matching a term, per value of its key; computed once per term."""

    index: ClusterIndex
    snap: Snapshot | None
    ns_labels: NamespaceLabels
    memo: dict[tuple[PodTerm, str], I64]

    def per_value(self, term: PodTerm, key: str) -> I64:
        hit = self.memo.get((term, key))
        if hit is not None:
            return hit
        codes, n = value_codes(self.index, key)
        counts = np.zeros(n, dtype=np.int64)
        if self.snap is not None:
            nodes = [
                p.node for p in self.snap.pods.values() if term.covers(p.namespace, p.labels, self.ns_labels)
            ]
            if nodes:
                c = codes[np.asarray(nodes, dtype=np.int64)]
                counts = np.bincount(c[c >= 0], minlength=n).astype(np.int64)
        self.memo[(term, key)] = counts
        return counts

    def at_nodes(self, term: PodTerm) -> I64:
        """Per node: matching existing pods in the node's value (0 without the key)."""
        codes, _ = value_codes(self.index, term.topology_key)
        per = self.per_value(term, term.topology_key)
        return np.where(codes >= 0, per[np.maximum(codes, 0)] if len(per) else 0, 0)


def prefilter(
    pods: Sequence[GangPod],
    classes: Sequence[tuple[tuple[int, ...], PodTerms | None, FilterSpec, Bool]],
    index: ClusterIndex,
    snap: Snapshot | None,
    *,
    ns_labels: NamespaceLabels | None = None,
) -> tuple[list[ClassRule | None], GangRules | None]:
    """The rules for a gang whose pending `pods` form `classes` (members, terms, filter spec,
    the mask the static filters left).

    Returns per class its `ClassRule` (the final mask; exclusions counted on nodes the static
    filters passed, as kube counts a node by its first failing plugin; None: no rule touches it) and the gang's rules (None when
    no rule relates members or ranks nodes). Free when neither the gang nor any existing pod
    carries a term."""
    ns_labels = ns_labels if ns_labels is not None else (snap.namespace_labels if snap is not None else {})
    existing = list(snap.with_terms.values()) if snap is not None else []
    if all(t is None for _, t, _, _ in classes) and not existing:
        return [None] * len(classes), None
    counter = _Counter(index, snap, ns_labels, {})
    n = index.n_nodes
    caps: list[ValueCap] = []
    gathers: list[Gather] = []
    score = np.zeros(n, dtype=np.int64)
    scored = False
    out: list[ClassRule | None] = []

    def matching(term: PodTerm) -> tuple[int, ...]:
        return tuple(i for i, p in enumerate(pods) if term.covers(p.pod.namespace, _labels(p), ns_labels))

    for members, terms, spec, base in classes:
        cut = _Mask(base.copy(), {})
        first = pods[members[0]]
        ns, labels = first.pod.namespace, _labels(first)
        # The symmetric check: existing pods whose required anti-affinity selects this class.
        for e in existing:
            assert e.terms is not None
            for t in e.terms.anti_affinity:
                if t.covers(ns, labels, ns_labels):
                    codes, _ = value_codes(index, t.topology_key)
                    here = int(codes[e.node])
                    if here >= 0:
                        cut.keep(EXISTING_ANTI_AFFINITY, codes != here)
        if terms is not None:
            for t in terms.affinity:
                codes, _ = value_codes(index, t.topology_key)
                have = counter.at_nodes(t)
                if have.any():
                    cut.keep(AFFINITY, have > 0)
                    continue
                mates = matching(t)
                if not mates:
                    cut.keep(AFFINITY, np.zeros(n, dtype=np.bool_))
                    continue
                cut.keep(AFFINITY, codes >= 0)
                together = tuple(sorted(set(members) | set(mates)))
                if len(together) > 1:
                    gathers.append(Gather(t.topology_key, together, codes))
            for t in terms.anti_affinity:
                codes, nvals = value_codes(index, t.topology_key)
                cut.keep(ANTI_AFFINITY, counter.at_nodes(t) == 0)
                mates = matching(t)
                if mates:
                    together = tuple(sorted(set(members) | set(mates)))
                    caps.append(ValueCap(t.topology_key, together, codes, np.ones(nvals, dtype=np.int64)))
            if terms.host_ports:
                held = np.zeros(n, dtype=np.bool_)
                for e in existing:
                    assert e.terms is not None
                    if any(ports_conflict(a, b) for a in e.terms.host_ports for b in terms.host_ports):
                        held[e.node] = True
                cut.keep(PORTS, ~held)
            for s in terms.spread:
                codes, nvals = value_codes(index, s.topology_key)
                term = PodTerm(s.selector, frozenset([ns]), None, s.topology_key)
                per = counter.per_value(term, s.topology_key)
                eligible = codes >= 0
                if s.honor_affinity:
                    eligible &= run_filter(index, _affinity_only(spec)).mask
                if s.honor_taints:
                    eligible &= run_filter(index, spec).mask
                if not s.hard:
                    scored = True
                    score -= np.where(codes >= 0, per[np.maximum(codes, 0)] if nvals else 0, 0)
                    continue
                if not eligible.any():
                    cut.keep(SPREAD, np.zeros(n, dtype=np.bool_))
                    continue
                low = int(per[np.unique(codes[eligible])].min())
                self_match = 1 if s.selector.matches(labels) else 0
                room = np.maximum(low + s.max_skew - per, 0)
                cut.keep(SPREAD, (codes >= 0) & (room[np.maximum(codes, 0)] >= self_match))
                mates = matching(term)
                if mates:
                    together = tuple(sorted(set(members) | set(mates)))
                    caps.append(ValueCap(s.topology_key, together, codes, room))
            for t in terms.preferred_affinity:
                scored = True
                score += t.weight * counter.at_nodes(t)
            for t in terms.preferred_anti_affinity:
                scored = True
                score -= t.weight * counter.at_nodes(t)
        out.append(ClassRule(cut.mask, cut.exclusions) if cut.exclusions else None)

    caps += _port_caps(pods, classes, n)
    if not caps and not gathers and not scored:
        return out, None
    return out, GangRules(tuple(caps), tuple(_merge_gathers(gathers)), score if scored else None)


def _port_caps(
    pods: Sequence[GangPod],
    classes: Sequence[tuple[tuple[int, ...], PodTerms | None, FilterSpec, Bool]],
    n: int,
) -> list[ValueCap]:
    """Members whose host ports conflict take one node each."""
    del pods
    with_ports = [(members, t.host_ports) for members, t, _, _ in classes if t is not None and t.host_ports]
    out: list[ValueCap] = []
    for i, (members, ports) in enumerate(with_ports):
        together = set(members)
        for other, theirs in with_ports[i + 1 :]:
            if any(ports_conflict(a, b) for a in ports for b in theirs):
                together |= set(other)
        if len(together) > 1:
            out.append(
                ValueCap(
                    NODE, tuple(sorted(together)), np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64)
                )
            )
    return out


def _merge_gathers(gathers: list[Gather]) -> list[Gather]:
    """One gather per key: members tied by any term on the key share one value."""
    by_key: dict[str, Gather] = {}
    for g in gathers:
        prev = by_key.get(g.key)
        members = tuple(sorted(set(g.members) | set(prev.members if prev else ())))
        by_key[g.key] = Gather(g.key, members, g.codes)
    return list(by_key.values())


def _affinity_only(spec: FilterSpec) -> FilterSpec:
    """The spec with every taint tolerated: what nodeAffinityPolicy Honor counts."""
    return FilterSpec(spec.node_selector, spec.affinity, (("", "Exists", "", ""),))


def _labels(p: GangPod) -> Mapping[str, str]:
    return p.pod.metadata.labels or {}


def signature(pod: GangPod, keys: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """The pod's labels that some selector in play reads: members equal here match alike."""
    labels = _labels(pod)
    return tuple(sorted((k, labels[k]) for k in keys if k in labels))
