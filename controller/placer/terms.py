"""A pod's inter-pod terms, read once from its spec: pod affinity and anti-affinity (required
and preferred), topology spread constraints and host ports.

These are what kube-scheduler's InterPodAffinity, PodTopologySpread and NodePorts plugins read.
`PodTerms` is hashable, so pods of one shape share one value (`PodTerms.of` interns it), and
it rides on `BoundPod` so the placer can check an existing pod's required anti-affinity
against a newcomer (the symmetric rule) and its host ports against the newcomer's.

Namespaces, as kube reads a term: the term's `namespaces` list, plus every namespace whose
labels its `namespaceSelector` matches (`{}` matches every namespace); with neither, the pod's own
namespace. A topology spread constraint counts pods of the pod's own namespace only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from weakref import WeakValueDictionary

from translations._base import LabelSelector, LabelSelectorRequirement
from translations.core import Pod, PodAffinityTerm, PodSpec

_LABEL_VALUE = re.compile(r"^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")

NamespaceLabels = Mapping[str, Mapping[str, str]]
"""Namespace name -> its labels (what a `namespaceSelector` is matched against)."""


def _canonical(selector: LabelSelector | None) -> str:
    return "" if selector is None else json.dumps(selector.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class Selector:
    """A label selector with a hashable identity (its canonical JSON)."""

    text: str
    """"" for a null selector, which selects nothing."""
    model: LabelSelector | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(
        cls,
        selector: LabelSelector | None,
        *,
        same: Mapping[str, str] | None = None,
        differ: Mapping[str, str] | None = None,
    ) -> Selector:
        """The selector, narrowed by `matchLabelKeys` (`same`: key In the pod's value) and
        `mismatchLabelKeys` (`differ`: key NotIn the pod's value), as kube merges them in."""
        if selector is not None and (same or differ):
            extra = [
                LabelSelectorRequirement(key=k, operator="In", values=[v]) for k, v in (same or {}).items()
            ]
            extra += [
                LabelSelectorRequirement(key=k, operator="NotIn", values=[v])
                for k, v in (differ or {}).items()
            ]
            selector = selector.model_copy(
                update={"match_expressions": [*(selector.match_expressions or []), *extra]}
            )
        return cls(_canonical(selector), selector)

    def valid(self) -> bool:
        """kube parses a selector before it uses one: a value that is no label value makes
        the term an error (the pod cannot be placed), not a term matching nothing."""
        m = self.model
        if m is None:
            return True
        values = [
            *(m.match_labels or {}).values(),
            *(v for r in m.match_expressions or [] for v in r.values or []),
        ]
        return all(_LABEL_VALUE.match(v) for v in values)

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.model is not None and self.model.matches(dict(labels))

    def keys(self) -> frozenset[str]:
        """Label keys the selector reads: only these decide whether a pod matches."""
        if self.model is None:
            return frozenset()
        return frozenset(self.model.match_labels or {}) | frozenset(
            r.key for r in self.model.match_expressions or []
        )


@dataclass(frozen=True)
class PodTerm:
    """One pod (anti-)affinity term, resolved against the pod that carries it."""

    selector: Selector
    namespaces: frozenset[str]
    namespace_selector: Selector | None
    topology_key: str
    weight: int = 0
    """Preferred terms only."""

    @classmethod
    def of(
        cls,
        term: PodAffinityTerm,
        own_namespace: str,
        weight: int = 0,
        labels: Mapping[str, str] | None = None,
    ) -> PodTerm:
        """The term as it applies to the pod carrying it (`labels`: that pod's, for
        `matchLabelKeys` and `mismatchLabelKeys`; keys the pod lacks add nothing)."""
        names = frozenset(term.namespaces or ())
        ns_sel = Selector.of(term.namespace_selector) if term.namespace_selector is not None else None
        if not names and ns_sel is None:
            names = frozenset([own_namespace])
        own = labels or {}
        same = {k: own[k] for k in term.match_label_keys or () if k in own}
        differ = {k: own[k] for k in term.mismatch_label_keys or () if k in own}
        selector = Selector.of(term.label_selector, same=same, differ=differ)
        return cls(selector, names, ns_sel, term.topology_key, weight)

    def covers(self, namespace: str, labels: Mapping[str, str], ns_labels: NamespaceLabels) -> bool:
        """Does the term select a pod with these labels in this namespace?"""
        if namespace not in self.namespaces and not (
            self.namespace_selector is not None
            and self.namespace_selector.matches(ns_labels.get(namespace, {}))
        ):
            return False
        return self.selector.matches(labels)


@dataclass(frozen=True)
class SpreadTerm:
    """One topology spread constraint."""

    topology_key: str
    max_skew: int
    hard: bool
    """`DoNotSchedule` (a filter) rather than `ScheduleAnyway` (a score)."""
    selector: Selector
    honor_affinity: bool = True
    """nodeAffinityPolicy Honor: only nodes the pod's selector/affinity allow are counted."""
    honor_taints: bool = False
    """nodeTaintsPolicy Honor: only nodes whose taints the pod tolerates are counted."""
    min_domains: int = 1
    """Fewer domains than this and the global minimum counts as 0 (hard constraints only)."""


HostPort = tuple[str, str, int]
"""(protocol, host IP, port); host IP "0.0.0.0" means every address of the node."""


@dataclass(frozen=True)
class PodTerms:
    """Everything about a pod that relates it to other pods' placement."""

    affinity: tuple[PodTerm, ...] = ()
    anti_affinity: tuple[PodTerm, ...] = ()
    preferred_affinity: tuple[PodTerm, ...] = ()
    preferred_anti_affinity: tuple[PodTerm, ...] = ()
    spread: tuple[SpreadTerm, ...] = ()
    host_ports: tuple[HostPort, ...] = ()

    @classmethod
    def of(cls, pod: Pod) -> PodTerms | None:
        """The pod's terms, or None when it has none (the common case, kept free)."""
        spec = pod.spec
        aff = spec.affinity
        pa = aff.pod_affinity if aff is not None else None
        anti = aff.pod_anti_affinity if aff is not None else None
        if (
            pa is None
            and anti is None
            and not spec.topology_spread_constraints
            and not _claims_host_ports(spec)
        ):
            return None  # the common case, answered before building anything
        containers = [
            *spec.containers,
            *(c for c in spec.init_containers or () if c.restart_policy == "Always"),
        ]
        ns = pod.namespace

        own = pod.metadata.labels or {}

        def required(block: object) -> tuple[PodTerm, ...]:
            terms = getattr(block, "required_during_scheduling_ignored_during_execution", None) or []
            return tuple(PodTerm.of(t, ns, labels=own) for t in terms)

        def preferred(block: object) -> tuple[PodTerm, ...]:
            terms = getattr(block, "preferred_during_scheduling_ignored_during_execution", None) or []
            return tuple(PodTerm.of(w.pod_affinity_term, ns, w.weight, labels=own) for w in terms)

        spread = tuple(
            SpreadTerm(
                topology_key=c.topology_key,
                max_skew=max(1, c.max_skew),
                hard=c.when_unsatisfiable != "ScheduleAnyway",
                selector=Selector.of(
                    c.label_selector, same={k: own[k] for k in c.match_label_keys or () if k in own}
                ),
                honor_affinity=(c.node_affinity_policy or "Honor") == "Honor",
                honor_taints=(c.node_taints_policy or "Ignore") == "Honor",
                min_domains=max(1, c.min_domains or 1),
            )
            for c in spec.topology_spread_constraints or ()
        )
        ports = tuple(
            sorted(
                {
                    (p.protocol or "TCP", p.host_ip or "0.0.0.0", p.host_port)
                    for c in containers  # sidecars hold their ports for the pod's life
                    for p in c.ports or ()
                    if p.host_port
                }
            )
        )
        terms = cls(
            affinity=required(pa),
            anti_affinity=required(anti),
            preferred_affinity=preferred(pa),
            preferred_anti_affinity=preferred(anti),
            spread=spread,
            host_ports=ports,
        )
        if terms == _NONE:
            return None
        # Pods of one shape share one value: InterPodAffinity reads each distinct one once.
        return _INTERNED.setdefault(terms, terms)

    def wants(
        self, own_namespace: str, namespace: str, labels: Mapping[str, str], ns_labels: NamespaceLabels
    ) -> bool:
        """Whether a pod with `labels` in `namespace`, once bound, can change where a pod of
        `own_namespace` carrying these terms fits: its pod affinity (required or preferred)
        selects it, or its topology spread constraints count it (own namespace only). Another
        pod bound only ever narrows anti-affinity and host ports."""
        if any(t.covers(namespace, labels, ns_labels) for t in (*self.affinity, *self.preferred_affinity)):
            return True
        return namespace == own_namespace and any(s.selector.matches(labels) for s in self.spread)

    def selectors(self) -> list[Selector]:
        return [
            t.selector
            for t in (
                *self.affinity,
                *self.anti_affinity,
                *self.preferred_affinity,
                *self.preferred_anti_affinity,
            )
        ] + [s.selector for s in self.spread]


_NONE = PodTerms()
_INTERNED: WeakValueDictionary[PodTerms, PodTerms] = WeakValueDictionary()
"""Every live `PodTerms` value, once: equal terms are one object (held by the pods' records)."""


def _claims_host_ports(spec: PodSpec) -> bool:
    """Whether a container or a sidecar (an init container that keeps running) claims a host
    port: asked of every bound pod at a cold start, so no list is built for the common none."""
    for c in spec.containers:
        if c.ports and any(p.host_port for p in c.ports):
            return True
    for c in spec.init_containers or ():
        if c.restart_policy == "Always" and c.ports and any(p.host_port for p in c.ports):
            return True
    return False


def ports_conflict(a: HostPort, b: HostPort) -> bool:
    """kube's NodePorts: same protocol and port, and the addresses overlap (0.0.0.0 is every one)."""
    return a[0] == b[0] and a[2] == b[2] and (a[1] == b[1] or "0.0.0.0" in (a[1], b[1]))
