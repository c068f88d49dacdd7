"""NodeAffinity: `spec.nodeSelector` and required node affinity (kube-scheduler's plugin of the
same name). Terms are ORed, requirements ANDed; `matchFields` reads `metadata.name` only; an
empty term list or an empty term matches no node. A term with a requirement kube cannot parse
(a value that is no label value, a `Gt`/`Lt` bound that is no integer, an unknown operator)
matches no node, as kube's lazy-error selector makes it.

Score: preferred node affinity (`preferredDuringSchedulingIgnoredDuringExecution`), as kube
scores it: per node, the sum of the weights of the preferred terms it matches (a term matches
exactly as a required term does: `_terms_mask`), normalized as kube's DefaultNormalizeScore
does (the best feasible node gets 100, the others in proportion; all zero stays zero).

Results depend only on the index and the pod's selector and affinity: memoised per index.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from controller.placer.framework import I64, Bool, Cut, CycleState, ShapeClass, default_normalize
from controller.placer.memo import MemoSlot
from controller.placer.snapshot import ClusterIndex, Snapshot
from translations.core import NodeSelectorRequirement, PodSpec

REASON = "node(s) didn't match Pod's node affinity/selector"
MASK: MemoSlot[Bool] = MemoSlot("Filter/NodeAffinity")
PREFERRED: MemoSlot[I64] = MemoSlot("Score/NodeAffinity")
_LABEL_VALUE = re.compile(r"^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
_INTEGER = re.compile(r"^[+-]?[0-9]{1,18}$")

Requirements = str
"""The pod's nodeSelector and required terms as canonical JSON: what decides the mask."""


def requirements(spec: PodSpec) -> Requirements:
    na = spec.affinity.node_affinity if spec.affinity else None
    req = na.required_during_scheduling_ignored_during_execution if na else None
    terms = [t.to_dict() for t in req.node_selector_terms] if req is not None else None
    return json.dumps({"selector": spec.node_selector or {}, "terms": terms}, sort_keys=True)


def allowed_nodes(index: ClusterIndex, spec: PodSpec) -> Bool:
    """Per node: the pod's node selector and required node affinity allow it."""
    key = requirements(spec)
    return index.memo.get(MASK, key, lambda: _mask(index, key))


def preferences(spec: PodSpec) -> str | None:
    """The pod's preferred terms as canonical JSON [(weight, term)], None when it has none."""
    na = spec.affinity.node_affinity if spec.affinity else None
    preferred = na.preferred_during_scheduling_ignored_during_execution if na else None
    if not preferred:
        return None
    return json.dumps([(p.weight, p.preference.to_dict()) for p in preferred], sort_keys=True)


def preferred_score(index: ClusterIndex, key: str) -> I64:
    """Per node: the summed weight of the preferred terms (`preferences`) it matches."""

    def build() -> I64:
        out = np.zeros(index.n_nodes, dtype=np.int64)
        for weight, term in json.loads(key):
            out += weight * _terms_mask(index, [term])
        return out

    return index.memo.get(PREFERRED, key, build)


def _mask(index: ClusterIndex, key: Requirements) -> Bool:
    parsed = json.loads(key)
    ok = np.ones(index.n_nodes, dtype=np.bool_)
    for label, value in parsed["selector"].items():
        ok &= index.label_values(label) == value
    if parsed["terms"] is not None:
        ok &= _terms_mask(index, parsed["terms"])
    return ok


def _terms_mask(index: ClusterIndex, terms: list[dict[str, object]]) -> Bool:
    out = np.zeros(index.n_nodes, dtype=np.bool_)
    for term in terms:
        exprs = [NodeSelectorRequirement.model_validate(e) for e in term.get("matchExpressions") or []]  # type: ignore[attr-defined]
        fields = [NodeSelectorRequirement.model_validate(e) for e in term.get("matchFields") or []]  # type: ignore[attr-defined]
        if not exprs and not fields:
            continue
        m = np.ones(index.n_nodes, dtype=np.bool_)
        for req in exprs:
            m &= _requirement(index.label_values(req.key), req)
        for req in fields:
            if req.key != "metadata.name":
                m[:] = False
                continue
            m &= _requirement(np.array(index.node_names, dtype=object), req)
        out |= m
    return out


def _requirement(values: npt.NDArray[np.object_], req: NodeSelectorRequirement) -> Bool:
    none = np.zeros(len(values), dtype=np.bool_)
    present = np.array([v is not None for v in values], dtype=np.bool_)
    wanted = req.values or []
    match req.operator:
        case "In" | "NotIn":
            if not wanted or not all(_LABEL_VALUE.match(v) for v in wanted):
                return none
            hit = np.isin(values, wanted) & present
            return hit if req.operator == "In" else ~hit
        case "Exists":
            return present
        case "DoesNotExist":
            return ~present
        case "Gt" | "Lt":
            if len(wanted) != 1 or not _INTEGER.match(wanted[0]):
                return none
            bound = int(wanted[0])
            out = none.copy()
            for i, v in enumerate(values):
                if isinstance(v, str) and _INTEGER.match(v):
                    out[i] = int(v) > bound if req.operator == "Gt" else int(v) < bound
            return out
        case _:
            return none


class NodeAffinity:
    name: ClassVar[str] = "NodeAffinity"

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        spec = cls.pod.pod.spec
        if not spec.node_selector and not (spec.affinity and spec.affinity.node_affinity):
            return ()
        return ((REASON, allowed_nodes(snap.index, spec)),)

    def score(
        self, state: CycleState, classes: Sequence[ShapeClass], snap: Snapshot, feasible: Bool
    ) -> I64 | None:
        out: I64 | None = None
        for cls in classes:
            key = preferences(cls.pod.pod.spec)
            if key is not None:
                part = preferred_score(snap.index, key)
                out = part.copy() if out is None else out + part
        return out

    def normalize(self, state: CycleState, scores: I64, feasible: Bool) -> I64:
        return default_normalize(scores, feasible)
