"""Kubernetes' own gang API (`scheduling.k8s.io` Workload, PodGroup, CompositePodGroup) and the
pod's links to it: the model of the object's version, then `translations.workload.problems`
(on create) or `update_problems` (on update: the immutable fields), the one reading of the API
server's rules that `validate` and the translations share."""

from __future__ import annotations

from typing import Any

from translations import workload
from translations._base import KubeModel
from webhooks.rules import fielderrors as fe
from webhooks.rules._common import parse_strict
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import ALLOW, Decision


def _model(obj: dict[str, Any]) -> type[workload.AnyObject] | None:
    return workload.model_for(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))


def _unserved(obj: dict[str, Any]) -> Decision:
    kind = str(obj.get("kind") or "")
    versions = [v for v, k in workload.served_pairs() if k == kind]
    return Decision.of(
        [fe.not_supported("apiVersion", obj.get("apiVersion"), [f"{workload.GROUP}/{v}" for v in versions])]
    )


def validate(obj: Any, state: ClusterState) -> Decision:
    """A Workload, PodGroup or CompositePodGroup as the API server validates it on create."""
    if not isinstance(obj, dict):
        return Decision.of([fe.invalid("<root>", obj, "must be of type object")])
    model = _model(obj)
    if model is None:
        return _unserved(obj)
    parsed, errors = parse_strict(model, obj)
    if parsed is None:
        return Decision.of(errors)
    return Decision.of([fe.from_spec_error(p) for p in workload.problems(parsed)])


def validate_update(obj: Any, old: Any, state: ClusterState) -> Decision:
    """An update: the create checks of the new object, and no immutable field changed."""
    if not isinstance(obj, dict) or not isinstance(old, dict):
        return validate(obj, state)
    model, old_model = _model(obj), _model(old)
    if model is None:
        return _unserved(obj)
    parsed, errors = parse_strict(model, obj)
    if parsed is None:
        return Decision.of(errors)
    before, _ = parse_strict(old_model, old) if old_model is not None else (None, [])
    if before is None:  # the stored object is not ours to judge: only the new one is checked
        return Decision.of([fe.from_spec_error(p) for p in workload.problems(parsed)])
    return Decision.of([fe.from_spec_error(p) for p in workload.update_problems(parsed, before)])


class _PodLinkSpec(KubeModel):
    workload_ref: workload.PodWorkloadReference | None = None
    scheduling_group: workload.PodSchedulingGroup | None = None


class _PodLinks(KubeModel):
    spec: _PodLinkSpec | None = None


def validate_pod(obj: Any, state: ClusterState) -> Decision:
    """A pod's `spec.workloadRef` (1.35) and `spec.schedulingGroup` (1.36+)."""
    spec = obj.get("spec") if isinstance(obj, dict) else None
    if not isinstance(spec, dict) or ("workloadRef" not in spec and "schedulingGroup" not in spec):
        return ALLOW
    links, errors = parse_strict(_PodLinks, {"spec": spec})
    if links is None or links.spec is None:
        return Decision.of(errors)
    problems = workload.pod_problems(links.spec.workload_ref, links.spec.scheduling_group)
    return Decision.of([fe.from_spec_error(p) for p in problems])
