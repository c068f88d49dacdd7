"""Filter: the nodes a pod may run on at all, whatever their free capacity.

The rules are kube-scheduler's: NodeUnschedulable (an unschedulable node behaves as if tainted
`node.kubernetes.io/unschedulable:NoSchedule`), NodeAffinity (`nodeSelector`, and required node
affinity: terms ORed, requirements ANDed, `matchFields` on `metadata.name`), TaintToleration
(`NoSchedule` and `NoExecute`). Everything runs over whole node arrays; tolerations are checked
once per distinct taint set. Results depend only on the static index, so they are cached on it.
Excluded nodes are counted by their first failing cause, for the status message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from controller.placer.snapshot import Bool, ClusterIndex, TaintTuple
from translations.core import NodeSelectorRequirement, PodSpec, Toleration

UNSCHEDULABLE = "node(s) were unschedulable"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
TAINT = "node(s) had untolerated taint(s)"


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """The parts of a pod spec that decide where it may run; hashable, so equal pods share work."""

    node_selector: tuple[tuple[str, str], ...] = ()
    affinity: str = ""
    """Required node affinity terms as canonical JSON ("" when none)."""
    tolerations: tuple[tuple[str, str, str, str], ...] = ()
    """(key, operator, value, effect) per toleration."""

    @classmethod
    def of(cls, spec: PodSpec) -> FilterSpec:
        na = spec.affinity.node_affinity if spec.affinity else None
        req = na.required_during_scheduling_ignored_during_execution if na else None
        affinity = ""
        if req is not None:
            affinity = json.dumps([t.to_dict() for t in req.node_selector_terms], sort_keys=True)
        return cls(
            node_selector=tuple(sorted((spec.node_selector or {}).items())),
            affinity=affinity,
            tolerations=tuple(_toleration_tuple(t) for t in spec.tolerations or []),
        )


@dataclass(frozen=True)
class FilterResult:
    mask: Bool
    """True where the pod may run."""
    exclusions: dict[str, int]
    """Cause -> how many nodes it excluded."""


def _toleration_tuple(t: Toleration) -> tuple[str, str, str, str]:
    return (t.key or "", t.operator or "Equal", t.value or "", t.effect or "")


def tolerates(tolerations: Sequence[tuple[str, str, str, str]], taint: TaintTuple) -> bool:
    """kube's ToleratesTaint for one taint."""
    t_key, t_value, t_effect = taint
    for key, op, value, effect in tolerations:
        if effect and effect != t_effect:
            continue
        if op == "Exists":
            if not key or key == t_key:
                return True
        elif op == "Equal" and key and key == t_key and value == t_value:
            return True
    return False


def run_filter(index: ClusterIndex, spec: FilterSpec) -> FilterResult:
    """The nodes a pod with `spec` passes, cached per index generation."""
    cache_key = ("filter", spec)
    hit = index.cache.get(cache_key)
    if isinstance(hit, FilterResult):
        return hit
    n = index.n_nodes
    exclusions: dict[str, int] = {}
    # Taints, one verdict per distinct taint set; the unschedulable pseudo-taint is its own cause.
    unsched_ok = np.ones(len(index.taint_sets), dtype=np.bool_)
    taint_ok = np.ones(len(index.taint_sets), dtype=np.bool_)
    for i, taints in enumerate(index.taint_sets):
        for taint in taints:
            if tolerates(spec.tolerations, taint):
                continue
            if taint[0] == "node.kubernetes.io/unschedulable":
                unsched_ok[i] = False
            else:
                taint_ok[i] = False
    unsched_pass = unsched_ok[index.taint_group] if n else np.ones(0, np.bool_)
    taint_pass = taint_ok[index.taint_group] if n else np.ones(0, np.bool_)
    aff_pass = np.ones(n, dtype=np.bool_)
    for key, value in spec.node_selector:
        aff_pass &= index.label_values(key) == value
    if spec.affinity:
        aff_pass &= _affinity_mask(index, json.loads(spec.affinity))
    mask = np.ones(n, dtype=np.bool_)
    for cause, ok in ((UNSCHEDULABLE, unsched_pass), (AFFINITY, aff_pass), (TAINT, taint_pass)):
        excluded = int(np.count_nonzero(mask & ~ok))
        if excluded:
            exclusions[cause] = excluded
        mask &= ok
    result = FilterResult(mask=mask, exclusions=exclusions)
    index.cache[cache_key] = result
    return result


def _affinity_mask(index: ClusterIndex, terms: list[dict[str, object]]) -> Bool:
    """Terms are ORed; an empty term list or an empty term matches no node (as in kube)."""
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
            names = np.array(index.node_names, dtype=object)
            m &= _requirement(names, req)
        out |= m
    return out


def _requirement(values: npt.NDArray[np.object_], req: NodeSelectorRequirement) -> Bool:
    present = np.array([v is not None for v in values], dtype=np.bool_)
    wanted = req.values or []
    match req.operator:
        case "In":
            return np.isin(values, wanted) & present
        case "NotIn":
            return ~(np.isin(values, wanted) & present)
        case "Exists":
            return present
        case "DoesNotExist":
            return ~present
        case "Gt" | "Lt":
            if len(wanted) != 1 or not _is_int(wanted[0]):
                return np.zeros(len(values), dtype=np.bool_)
            bound = int(wanted[0])
            out = np.zeros(len(values), dtype=np.bool_)
            for i, v in enumerate(values):
                if v is not None and _is_int(v):
                    out[i] = int(v) > bound if req.operator == "Gt" else int(v) < bound
            return out
        case _:
            return np.zeros(len(values), dtype=np.bool_)


def _is_int(text: object) -> bool:
    if not isinstance(text, str):
        return False
    body = text[1:] if text[:1] in "+-" else text
    return body.isdigit()
