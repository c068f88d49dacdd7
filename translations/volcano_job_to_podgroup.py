"""Volcano Job -> the PodGroup Volcano's job controller makes for it (`pkg/controllers/job`,
`createOrUpdatePodGroup`), so `translate` shows what Volcano will schedule and the way on to
Koordinator starts from it.

* name `<job>-<uid>` (the job's uid keeps a recreated job from reusing an old PodGroup); without
  a uid (a file never sent to the API server) the name is `<job>`, which Volcano's controller
  also finds (its lookup falls back to the job's name);
* labels and annotations: the job's; the job as controller owner when its uid is known;
* `minMember` = the job's minAvailable, `minTaskMember` = each task's minAvailable, `queue`,
  `priorityClassName`, all after Volcano's mutating defaults (`volcano_job.effective_tasks`);
* `minResources`: tasks by priority (their template's PriorityClass, highest first), first each
  task's minAvailable pods until the job's minAvailable is reached, then the remaining replicas
  (`CalcPGMinResources`); when the job's minAvailable is below the tasks' sum, the first that
  many pods in priority order (`CalcFirstCountResources`). A pod's request is the scheduler's
  (`core.effective_requests`);
* `networkTopology`: the job's (a tier number, else a tierName);
* `subGroupPolicy`: one entry per partitioned task, named after the task: `subGroupSize` =
  partitionSize, `minSubGroups` = minPartitions, pods selected by `volcano.sh/task-spec=<task>`
  and grouped by `volcano.sh/partition-id` (which the controller sets to pod index //
  partitionSize), the partition's networkTopology.

Kueue TAS annotations on a task's template are reported as refused: Kueue manages no Volcano Job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from translations import constraints, kueue, volcano, volcano_job
from translations._base import JsonDict
from translations.core import PriorityClass, binary_formats, effective_requests
from translations.errors import raise_all
from translations.quantity import from_scheduler_units
from translations.report import TranslationReport, inline
from translations.topology import TopologyTree
from translations.volcano_job import EffectiveTask, VolcanoJob

JOB_KIND = "Job"


@dataclass(frozen=True)
class JobPodGroup:
    """The PodGroup of one Volcano Job, and what was done to get it."""

    pod_group: volcano.PodGroup
    report: TranslationReport


def pod_group_name(job: VolcanoJob) -> str:
    """`<job>-<uid>` as Volcano's controller names it; `<job>` without a uid."""
    return f"{job.name}-{job.metadata.uid}" if job.metadata.uid else job.name


def translate(
    job: VolcanoJob,
    *,
    priority_classes: Iterable[PriorityClass] = (),
    tree: TopologyTree | None = None,
) -> JobPodGroup:
    """The PodGroup; raises InvalidSpecError with every problem `volcano_job.job_problems` finds.
    `tree` (the HyperNodes of the input) resolves tierNames for the report."""
    raise_all(volcano_job.job_problems(job.spec, tier_of_name=tree.tier_of_name if tree else lambda _: None))
    report = TranslationReport(f"Job {job.key}", "Volcano")
    tasks = volcano_job.effective_tasks(job.spec)
    spec: JsonDict = {"minMember": volcano_job.effective_min_available(job.spec)}
    source = (
        "spec.minAvailable"
        if job.spec.min_available
        else "the tasks' minAvailable summed, as Volcano defaults it"
    )
    report.carry(f"minMember = {spec['minMember']} ({source})")
    spec["minTaskMember"] = {t.name: t.min_available for t in tasks}
    report.carry("minTaskMember = " + inline(spec["minTaskMember"]))
    spec["queue"] = job.spec.queue or volcano_job.DEFAULT_QUEUE
    (report.carry if job.spec.queue else report.default)(f"queue = {spec['queue']}")
    if job.spec.priority_class_name:
        spec["priorityClassName"] = job.spec.priority_class_name
        report.carry(f"priorityClassName = {job.spec.priority_class_name}")
    resources = min_resources(tasks, spec["minMember"], {pc.name: pc.value for pc in priority_classes})
    if resources:
        spec["minResources"] = resources
        report.carry(
            "minResources = " + inline(resources) + " (tasks by priority, as Volcano's controller adds them)"
        )
    nt = job.spec.network_topology
    if nt is not None:
        spec["networkTopology"] = _topology(nt, "spec.networkTopology", tree, report)
    policies = [_subgroup(t, tree, report) for t in tasks if t.task.partition_policy is not None]
    if policies:
        spec["subGroupPolicy"] = policies
    _refuse_kueue(job, report)
    return JobPodGroup(volcano.PodGroup.parse(_object(job, spec, report)), report)


def _object(job: VolcanoJob, spec: JsonDict, report: TranslationReport) -> JsonDict:
    meta: JsonDict = {"name": pod_group_name(job)}
    if job.namespace:
        meta["namespace"] = job.namespace
    for key in ("labels", "annotations"):
        value = getattr(job.metadata, key)
        if value:
            meta[key] = dict(value)
    if job.metadata.uid:
        meta["ownerReferences"] = [
            {
                "apiVersion": volcano_job.API_VERSION,
                "kind": JOB_KIND,
                "name": job.name,
                "uid": job.metadata.uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        report.carry(f"name {meta['name']}: <job>-<uid>, owned by the Job")
    else:
        report.default(
            f"name {meta['name']}: the Job has no metadata.uid (Volcano names it <job>-<uid>, and finds one "
            "named after the job too)"
        )
    return {"apiVersion": volcano.PODGROUP_API_VERSION, "kind": "PodGroup", "metadata": meta, "spec": spec}


def _topology(
    nt: volcano.NetworkTopologySpec, field: str, tree: TopologyTree | None, report: TranslationReport
) -> JsonDict:
    out: JsonDict = {"mode": nt.mode} if nt.mode else {}
    if nt.highest_tier_allowed is not None:
        out["highestTierAllowed"] = nt.highest_tier_allowed
    elif nt.highest_tier_name is not None:
        out["highestTierName"] = nt.highest_tier_name
        warnings: list[str] = []
        constraints.resolve_tier(
            tier=None, tier_name=nt.highest_tier_name, tree=tree, field=field, warnings=warnings
        )
        for warning in warnings:
            report.default(warning)
    report.carry(f"{field} -> networkTopology {inline(out)}")
    return out


def _subgroup(task: EffectiveTask, tree: TopologyTree | None, report: TranslationReport) -> JsonDict:
    policy = task.task.partition_policy
    assert policy is not None
    entry: JsonDict = {
        "name": task.name,
        "subGroupSize": policy.partition_size,
        "minSubGroups": policy.min_partitions or 0,
        "labelSelector": {"matchLabels": {volcano_job.TASK_SPEC_LABEL: task.name}},
        "matchLabelKeys": [volcano_job.PARTITION_ID_LABEL],
    }
    where = f"spec.tasks[{task.index}].partitionPolicy"
    if policy.network_topology is not None:
        entry["networkTopology"] = _topology(
            policy.network_topology, f"{where}.networkTopology", tree, report
        )
    report.carry(
        f"{where} -> subGroupPolicy {task.name}: {policy.total_partitions} partitions of {policy.partition_size} "
        f"pods (minSubGroups {entry['minSubGroups']}), grouped by {volcano_job.PARTITION_ID_LABEL}"
    )
    return entry


def _refuse_kueue(job: VolcanoJob, report: TranslationReport) -> None:
    for i, task in enumerate(job.spec.tasks or []):
        meta = task.template.metadata if task.template is not None else None
        annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
        for key in kueue.TAS_ANNOTATIONS:
            if isinstance(annotations, Mapping) and key in annotations:
                report.refuse(
                    f"spec.tasks[{i}].template.metadata.annotations[{key}]: Kueue manages no Volcano Job; not carried"
                )


def min_resources(
    tasks: Iterable[EffectiveTask], min_member: int, priorities: Mapping[str, int]
) -> dict[str, str]:
    """The gang's minResources as Volcano's controller adds them (see the module docstring)."""
    ordered = sorted(tasks, key=lambda t: -_priority(t, priorities))  # stable, as Go's sort is on few tasks
    counts: list[tuple[EffectiveTask, int]] = []
    if min_member < sum(t.min_available for t in ordered):
        left = min_member
        for t in ordered:
            take = min(left, t.replicas)
            counts.append((t, take))
            left -= take
            if left <= 0:
                break
    else:
        placed = 0
        for t in ordered:
            take = min(t.min_available, min_member - placed)
            counts.append((t, take))
            placed += take
        left = min_member - placed
        for t in ordered:
            spare = min(t.replicas - t.min_available, left)
            if spare > 0:
                counts.append((t, spare))
                left -= spare
    return _sum_requests(counts)


def _priority(task: EffectiveTask, priorities: Mapping[str, int]) -> int:
    template = task.task.template
    name = template.spec.priority_class_name if template is not None else None
    return priorities.get(name or "", 0)


def _sum_requests(counts: Iterable[tuple[EffectiveTask, int]]) -> dict[str, str]:
    totals: dict[str, int] = {}
    binary: dict[str, bool] = {}
    for task, n in counts:
        template = task.task.template
        if template is None or n <= 0:
            continue
        for name, units in effective_requests(template.spec).items():  # job_problems checked them
            totals[name] = totals.get(name, 0) + n * units
        for name, is_binary in binary_formats(template).items():
            binary.setdefault(name, is_binary)
    return {
        name: from_scheduler_units(name, units, binary=binary.get(name, False))
        for name, units in sorted(totals.items())
        if units
    }
