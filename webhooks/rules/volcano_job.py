"""Volcano Job (`batch.volcano.sh/v1alpha1`): what `translations.volcano_job.job_problems` finds
(Volcano's own webhook rules for the gang and the topology, shared with the translations), a
tierName resolved through the cluster's HyperNodes, plus warnings: tiers and tier names the
cluster does not have, `minPartitions` above `totalPartitions` (a gang that never starts), and
Kueue topology annotations on a task's template (Kueue manages no Volcano Job: they do nothing)."""

from __future__ import annotations

from typing import Any

import orjson

from translations import volcano_job
from translations.core import PodTemplateSpec
from translations.errors import InvalidSpecError
from translations.volcano_job import VolcanoJob
from webhooks.rules import fielderrors as fe
from webhooks.rules import kueue as kueue_rule
from webhooks.rules._common import Findings, parse_strict, tier_of_name, topology_warnings
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import Decision

SHARED_TEMPLATES_FROM = 64
"""Tasks from which a Job's templates are read once per distinct template (`parse`)."""
MAX_DISTINCT_TEMPLATES = 32
"""More distinct templates than this and every task's is read on its own, as below the bound."""


def validate(obj: Any, state: ClusterState) -> Decision:
    job, errors = parse(obj)
    if job is None:
        return Decision.of(errors)
    problems = volcano_job.job_problems(job.spec, tier_of_name=lambda name: tier_of_name(state, name))
    out = Findings(errors=[fe.from_spec_error(p) for p in problems])
    topology_warnings(job.spec.network_topology, "spec.networkTopology", state, out)
    for i, task in enumerate(job.spec.tasks or []):
        base = f"spec.tasks[{i}]"
        policy = task.partition_policy
        if policy is not None:
            topology_warnings(policy.network_topology, f"{base}.partitionPolicy.networkTopology", state, out)
            if (policy.min_partitions or 0) > policy.total_partitions:
                out.warnings.append(
                    f"{base}.partitionPolicy.minPartitions: {policy.min_partitions} is above totalPartitions "
                    f"({policy.total_partitions}): the job can never start"
                )
        template = task.template.metadata if task.template is not None else None
        out.warnings += kueue_rule.ignored_annotations(template, f"{base}.template.metadata.annotations")
    return Decision.of(out.errors, out.warnings)


def parse(obj: Any) -> tuple[VolcanoJob | None, list[fe.FieldError]]:
    """`parse_strict`, with each distinct task template read once when the Job has many tasks.

    The largest Job the API server stores (1.5 MB) holds about 8,000 tasks, nearly always from
    a few templates: reading each one as a model took most of a review. Templates that are the
    same JSON (same types: `1` and `true` differ) share one model. When anything is wrong, or
    the templates are too varied to share, the whole Job is read as before, so what a refusal
    says never depends on this path."""
    lean = _shared_templates(obj)
    if lean is None:
        return parse_strict(VolcanoJob, obj)
    templates, which = lean
    try:
        models = [PodTemplateSpec.parse(t, strict=True, keep_unknown=False) for t in templates]
    except InvalidSpecError:
        return parse_strict(VolcanoJob, obj)
    # A model where a template goes is taken as it is, not read again.
    tasks = [
        task if k is None else {**task, "template": models[k]}
        for task, k in zip(obj["spec"]["tasks"], which, strict=True)
    ]
    job, errors = parse_strict(VolcanoJob, {**obj, "spec": {**obj["spec"], "tasks": tasks}})
    if job is None or errors:
        return parse_strict(VolcanoJob, obj)
    return job, []


def _shared_templates(obj: Any) -> tuple[list[Any], list[int | None]] | None:
    """(the distinct templates, per task the index of its template or None), or None when the
    tasks are few or their templates too varied."""
    spec = obj.get("spec") if isinstance(obj, dict) else None
    tasks = spec.get("tasks") if isinstance(spec, dict) else None
    if not isinstance(tasks, list) or len(tasks) < SHARED_TEMPLATES_FROM:
        return None
    seen: dict[bytes, int] = {}
    templates: list[Any] = []
    which: list[int | None] = []
    for task in tasks:
        template = task.get("template") if isinstance(task, dict) else None
        if not isinstance(template, dict):
            which.append(None)
            continue
        try:
            text = orjson.dumps(template)
        except (TypeError, ValueError):  # past 64-bit integers, lone surrogates: read it whole
            return None
        k = seen.get(text)
        if k is None:
            if len(templates) == MAX_DISTINCT_TEMPLATES:
                return None
            k = seen[text] = len(templates)
            templates.append(template)
        which.append(k)
    return templates, which
