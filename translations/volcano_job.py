"""Volcano's Job (`batch.volcano.sh/v1alpha1`, v1.14+): the fields that decide its gang and its
place in the network, and Volcano's own admission rules for them.

The models cover `minAvailable`, `queue`, `priorityClassName`, `networkTopology` and each task's
`name`, `replicas`, `minAvailable`, `template` and `partitionPolicy`; every other field (plugins,
policies, volumes, status...) rides along unchecked, as in every model here.

`job_problems` is the one reading of a Job: the admission rule, `topobridge translate` and the
controller call it. It holds Volcano's webhook rules (`pkg/webhooks/admission/jobs/validate/
admit_job.go`) that concern the gang and the topology:
* at least one task; task names unique; a task's `minAvailable` at most its `replicas`; the
  job's `minAvailable` at most the replicas of all tasks; every quantity of a task's template
  parses (the PodGroup's minResources adds them up);
* `networkTopology`: mode `hard|soft` (the model's enum), `highestTierAllowed >= 0` (the model),
  not together with `highestTierName`, on the job and on each partition;
* `partitionPolicy`: `totalPartitions >= 1`, `partitionSize >= 1` (both required; the model),
  `replicas == totalPartitions * partitionSize`; with `minPartitions > 0` the task's
  `minAvailable` (when given) `== minPartitions * partitionSize` (v1.14.0 checked it even at 0;
  volcano#5401 relaxed it);
and one of topobridge's own, as for a PodGroup's subgroups: a partition no wider than its job.

`effective_tasks` applies Volcano's mutating webhook's defaults (task names `default<i>`, a
task's `minAvailable` = `minPartitions * partitionSize` with partitions, falling back to
`replicas` when `minPartitions` is 0 (volcano#5402), else `replicas`; the job's `minAvailable` =
the tasks' sum; queue `default`), which is what Volcano's job controller reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import Field

from translations import volcano
from translations._base import DNS1123_LABEL, DNS1123_SUBDOMAIN, INT32_MAX, KubeModel, TypedObject, at_most
from translations.core import PodTemplateSpec, effective_requests
from translations.errors import InvalidSpecError, render_value

GROUP = "batch.volcano.sh"
API_VERSION = f"{GROUP}/v1alpha1"
TASK_SPEC_LABEL = "volcano.sh/task-spec"
"""Label (and annotation) Volcano's job controller puts on each pod: the task's name."""
PARTITION_ID_LABEL = "volcano.sh/partition-id"
"""Label Volcano's job controller puts on each pod of a partitioned task: pod index // partitionSize."""
DEFAULT_QUEUE = "default"
DEFAULT_TASK_PREFIX = "default"
"""Volcano's mutating webhook names an unnamed task `default<index>`."""


class PartitionPolicy(KubeModel):
    """Splits a task's pods into partitions of consecutive indices, each gathering on its own."""

    total_partitions: int = Field(ge=1, json_schema_extra={"format": "int32"})
    """Partitions of the task; totalPartitions x partitionSize must equal replicas."""
    partition_size: int = Field(ge=1, json_schema_extra={"format": "int32"})
    """Pods per partition."""
    min_partitions: int | None = Field(
        default=None, ge=0, json_schema_extra={"default": 0, "format": "int32"}
    )
    """Partitions that must be schedulable for the job to start."""
    network_topology: volcano.NetworkTopologySpec | None = None
    """Where each partition must gather."""


class TaskSpec(KubeModel):
    """One task: `replicas` pods from one template."""

    name: str | None = Field(default=None, max_length=63, pattern=DNS1123_LABEL)
    """Task name, a DNS-1123 label; Volcano names an unnamed task `default<index>`."""
    replicas: int | None = Field(default=None, ge=0, json_schema_extra={"format": "int32"})
    """Pods of this task."""
    min_available: int | None = Field(default=None, ge=0, json_schema_extra={"format": "int32"})
    """Pods of this task that must be schedulable together."""
    template: PodTemplateSpec | None = None
    """The pods' template."""
    partition_policy: PartitionPolicy | None = None
    """How the task's pods split into partitions."""


class JobSpec(KubeModel):
    """The parts of a Volcano Job spec that make its gang."""

    scheduler_name: str | None = Field(default=None, max_length=63)
    """Scheduler of the pods (Volcano defaults it to `volcano`)."""
    min_available: int | None = Field(default=None, ge=0, json_schema_extra={"format": "int32"})
    """Pods that must be schedulable together; the tasks' sum when unset."""
    queue: str | None = Field(default=None, max_length=253, pattern=DNS1123_SUBDOMAIN)
    """Volcano queue; `default` when unset."""
    priority_class_name: str | None = Field(default=None, max_length=253, pattern=DNS1123_SUBDOMAIN)
    """Priority of the job."""
    network_topology: volcano.NetworkTopologySpec | None = None
    """Where the whole job must gather."""
    tasks: list[TaskSpec] | None = None
    """The tasks (at least one)."""


class VolcanoJob(TypedObject):
    """A Volcano Job: tasks of pods that Volcano's job controller gangs into one PodGroup."""

    api_version: str | None = API_VERSION
    kind: str | None = "Job"
    spec: JobSpec = Field(default_factory=JobSpec)
    """Desired behaviour."""
    status: dict[str, object] | None = None
    """Observed state (Volcano's)."""


# --- Volcano's admission rules ------------------------------------------------------------------


def job_problems(
    spec: JobSpec, *, tier_of_name: Callable[[str], int | None] = lambda _name: None
) -> list[InvalidSpecError]:
    """Every problem of a parsed Job spec (see the module docstring); a tierName is resolved
    through `tier_of_name` for the partition-no-wider-than-job check."""
    out = at_most("spec.minAvailable", spec.min_available, INT32_MAX)
    job_tier = volcano.hard_cap(
        spec.network_topology,
        volcano.job_topology_tier(spec.network_topology, "spec.networkTopology", tier_of_name, out),
    )
    tasks = spec.tasks or []
    if not tasks:
        out.append(InvalidSpecError("spec.tasks", None, "Required value: a Job needs at least one task"))
    names: set[str] = set()
    requests: dict[int, tuple[InvalidSpecError, ...]] = {}
    for i, task in enumerate(tasks):
        out += _task_problems(task, f"spec.tasks[{i}]", job_tier, tier_of_name, requests)
        if task.name is not None:
            if task.name in names:
                out.append(
                    InvalidSpecError(
                        f"spec.tasks[{i}].name", task.name, f"Duplicate value: {render_value(task.name)}"
                    )
                )
            names.add(task.name)
    replicas = sum(t.replicas or 0 for t in tasks)
    if tasks and spec.min_available is not None and spec.min_available > replicas:
        out.append(
            InvalidSpecError(
                "spec.minAvailable",
                spec.min_available,
                f"Invalid value: {spec.min_available}: must be less than or equal to the replicas of "
                f"all tasks ({replicas})",
            )
        )
    return out


def _task_problems(
    task: TaskSpec,
    base: str,
    job_tier: int | None,
    tier_of_name: Callable[[str], int | None],
    requests: dict[int, tuple[InvalidSpecError, ...]],
) -> list[InvalidSpecError]:
    """A task's problems; `requests`: what each template's requests came to, by the template
    model's identity (tasks may share one model: `webhooks.rules.volcano_job.parse`)."""
    out = at_most(f"{base}.replicas", task.replicas, INT32_MAX)
    out += at_most(f"{base}.minAvailable", task.min_available, INT32_MAX)
    replicas = task.replicas or 0
    if task.min_available is not None and task.min_available > replicas:
        out.append(
            InvalidSpecError(
                f"{base}.minAvailable",
                task.min_available,
                f"Invalid value: {task.min_available}: must be less than or equal to replicas ({replicas})",
            )
        )
    if task.template is not None:  # the PodGroup's minResources adds these up
        found = requests.get(id(task.template))
        if found is None:
            found = requests[id(task.template)] = _request_problems(task.template)
        out += [InvalidSpecError(f"{base}.template.{p.field_path}", p.value, p.detail) for p in found]
    policy = task.partition_policy
    if policy is None:
        return out
    path = f"{base}.partitionPolicy"
    for name, value in (
        ("totalPartitions", policy.total_partitions),
        ("partitionSize", policy.partition_size),
        ("minPartitions", policy.min_partitions),
    ):
        out += at_most(f"{path}.{name}", value, INT32_MAX)
    product = policy.total_partitions * policy.partition_size
    if replicas != product:
        out.append(
            InvalidSpecError(
                f"{base}.replicas",
                replicas,
                f"Invalid value: {replicas}: must equal partitionPolicy.totalPartitions x partitionSize "
                f"({policy.total_partitions} x {policy.partition_size} = {product})",
            )
        )
    minimum = policy.min_partitions or 0
    wanted = minimum * policy.partition_size
    if minimum > 0 and task.min_available is not None and task.min_available != wanted:
        out.append(
            InvalidSpecError(
                f"{base}.minAvailable",
                task.min_available,
                f"Invalid value: {task.min_available}: must equal partitionPolicy.minPartitions x "
                f"partitionSize ({minimum} x {policy.partition_size} = {wanted})",
            )
        )
    out += volcano.subgroup_topology_problems(
        policy.network_topology, f"{path}.networkTopology", job_tier, tier_of_name=tier_of_name
    )
    return out


def _request_problems(template: PodTemplateSpec) -> tuple[InvalidSpecError, ...]:
    try:
        effective_requests(template.spec)
    except InvalidSpecError as exc:
        return exc.all
    return ()


# --- Volcano's mutating defaults: what its job controller reads -------------------------------


@dataclass(frozen=True, slots=True)
class EffectiveTask:
    """A task as Volcano's job controller sees it, after Volcano's mutating webhook."""

    index: int
    name: str
    replicas: int
    min_available: int
    task: TaskSpec


def effective_tasks(spec: JobSpec) -> tuple[EffectiveTask, ...]:
    """Each task with its name and minAvailable defaulted as Volcano's mutating webhook does."""
    out = []
    for i, task in enumerate(spec.tasks or []):
        replicas = task.replicas or 0
        minimum = task.min_available
        if minimum is None:
            policy = task.partition_policy
            minimum = replicas
            if policy is not None and (policy.min_partitions or 0) > 0:
                minimum = (policy.min_partitions or 0) * policy.partition_size
        out.append(EffectiveTask(i, task.name or f"{DEFAULT_TASK_PREFIX}{i}", replicas, minimum, task))
    return tuple(out)


def effective_min_available(spec: JobSpec) -> int:
    """The job's minAvailable, else (as Volcano's mutating webhook sets it) the tasks' sum."""
    if spec.min_available:
        return spec.min_available
    return sum(t.min_available for t in effective_tasks(spec))
