"""Kueue's topology-aware scheduling (TAS) annotations on the pod templates of the kinds Kueue
manages: a batch/v1 Job's template, a Pod, a LeaderWorkerSet's leader and worker templates
(`translations.kueue.read_pod_sets`, which holds Kueue's own rules and is shared with
`topobridge translate`).

Warnings, where the annotations would do nothing: on a batch/v1 Job's own metadata (Kueue reads
the pod template's), and on a Volcano Job's task templates (Kueue manages no Volcano Job).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from translations import kueue
from translations._base import raw_annotations_at
from webhooks.rules import fielderrors as fe
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import ALLOW, Decision


def validate(obj: Any, state: ClusterState) -> Decision:
    """The TAS annotations of every pod set of a Job, Pod or LeaderWorkerSet."""
    del state  # the levels are the Topology's, which admission does not know (Kueue neither)
    if not isinstance(obj, dict):
        return ALLOW
    if obj.get("kind") == "Pod" and not _has_tas(obj.get("metadata")):
        return ALLOW  # the hot path: every pod the webhook is sent, almost none Kueue's
    errors = [fe.from_spec_error(p) for _, _, problems in kueue.read_pod_sets(obj) for p in problems]
    warnings: list[str] = []
    if obj.get("kind") == "Job":
        warnings += misplaced(raw_annotations_at(obj, ("metadata",)), "metadata.annotations", "the Job's")
    return Decision.of(errors, warnings)


def _has_tas(metadata: Any) -> bool:
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    if not isinstance(annotations, dict):
        return False
    for key in kueue.TAS_ANNOTATIONS:  # noqa: SIM110 (a loop: any() over a generator costs twice as much)
        if key in annotations:
            return True
    return False


def ignored_annotations(metadata: Mapping[str, Any] | None, path: str) -> list[str]:
    """Warnings for TAS annotations where Kueue never reads them (a Volcano Job's task template)."""
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    if not isinstance(annotations, Mapping):
        return []
    return [
        f"{path}[{key}]: has no effect: Kueue manages no Volcano Job "
        "(partitionPolicy.networkTopology and spec.networkTopology say this in Volcano)"
        for key in kueue.TAS_ANNOTATIONS
        if key in annotations
    ]


def misplaced(annotations: Mapping[str, Any], path: str, whose: str) -> list[str]:
    return [
        f"{path}[{key}]: has no effect on {whose} own metadata: Kueue reads it on the pod template "
        "(spec.template.metadata.annotations)"
        for key in kueue.TAS_ANNOTATIONS
        if key in annotations
    ]
