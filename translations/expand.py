"""Jobs as users write them -> the objects their controllers would create.

`topobridge simulate` takes a LeaderWorkerSet, a Volcano Job or a batch/v1 Job as written; this
module turns each into the pods (and Volcano PodGroups) its controllers would make, with the
names, labels, annotations and indexes they give them, so nobody hand-writes pods to see where a
job lands. One pure function per kind, `expand_lws`, `expand_volcano_job`, `expand_job`
(`expand` picks one), each returning an `Expansion`.

Invariants:
* Each function is given the pods (and PodGroup keys) the input already holds. A pod a
  controller already created (same namespace and name; for a batch/v1 Job, one of its pods
  holding that completion index) is kept, never made twice; so is a PodGroup of the same name.
* Every new object is a plain dict as `kubectl get -o yaml` prints it, and is checked as the API
  server checks it (`envelope`: the name, label keys and values); an object that would expand to
  more than `MAX_PODS` pods is refused. Both raise InvalidSpecError naming the field and the value,
  as does a job its own admission webhook would refuse (the existing readers are called for that).
  The pods of a batch/v1 Job are made from its template read once: each has a spec of its own,
  whose nested parts (containers, tolerations, ...) the Job's pods share; no reader changes them.
* `parse_pods` reads the pods into models as `Pod.parse` would, parsing each template once: a
  pod that differs from the one parsed before it only in what a controller sets per pod (name,
  labels, annotations, hostname, subdomain) is that pod's model with those fields replaced, the
  rest shared (models are never changed in place; a change is a copy). A 100,000-pod Job is then
  one parse, not 100,000.
* What only a live controller knows is stood in for, and said in `Expansion.notes`: LWS's template
  revision hash, a Job's uid, the API server's random name suffix (drawn from its alphabet by a
  hash, so a run is repeatable).
* Not made: the StatefulSets, Services and ControllerRevisions in between (LWS pods carry no
  ownerReferences), env vars the webhooks inject, volumes. Readiness is not modelled: with
  `startupPolicy: LeaderReady` LWS creates the workers once the leader is Ready; here they are
  created with it.

Facts, and the upstream files they were read from:

LeaderWorkerSet (kubernetes-sigs/lws)
* `pkg/controllers/leaderworkerset_controller.go` (`constructLeaderStatefulSetApplyConfiguration`):
  a StatefulSet `<lws>` of `replicas` leaders from the leaderTemplate (else the workerTemplate);
  template labels `name`, `worker-index: "0"`, `template-revision-hash`; annotations `size`, the
  LWS's `exclusive-topology`, with a subGroupPolicy `subgroup-policy-type` and `subgroup-size` (and
  the LWS's `subgroup-exclusive-topology`), `subdomainPolicy` when it is UniquePerReplica.
* `pkg/controllers/pod_controller.go` (`constructWorkerStatefulSetApplyConfiguration`): per leader a
  StatefulSet named after it, ordinals from 1, `size - 1` workers from the workerTemplate, labels
  `group-index`, `name`, `group-key` (the leader's), `template-revision-hash`; annotations `size`,
  `leader-name`, `exclusive-topology`, `subgroup-*`. With exclusive placement the workers are made
  once the leader is bound, pinned to its domain by a node selector; a snapshot has no binding
  order, so here they carry the leader's exclusive affinity instead.
* `pkg/webhooks/pod_webhook.go` (`Default`): a leader's `group-index` is its ordinal, its
  `group-key` the SHA-1 (hex) of `<namespace>/<leader>`; a worker's `worker-index` is its ordinal;
  with a subGroupPolicy the leader is subgroup 0 (not with LeaderExcluded, `subgroup-policy-type`)
  and worker w is subgroup (w-1) // s when (size-1) % s == 0, else w // s, its `subgroup-key` the
  SHA-1 of `<leader>/<subgroup>`; the exclusive affinity (`lws.exclusive_affinity`).
* `pkg/schedulerprovider/volcano_provider.go` (`InjectPodGroupMetadata`): `scheduling.k8s.io/
  group-name` is `<lws>-<group>-<revision>`. topobridge's pod webhook adds it to the pods of an
  LWS that asks for a topology (`lws_admission`), so here too; the PodGroups are
  `lws_to_volcano.translate`. The revision is read from a leader pod in the input, else a stand-in
  hash of the template (LWS hashes a Go object nothing else reproduces).
* Kubernetes' StatefulSet controller (`pkg/controller/statefulset/stateful_set_utils.go`) labels
  each pod `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index`.

Volcano Job (volcano-sh/volcano)
* `pkg/controllers/job/job_controller_actions.go` (`syncJob`): per task the pods 0..replicas-1
  that are missing, named `<job>-<task>-<index>`.
* `pkg/controllers/job/job_controller_util.go` (`createJobPod`): the template's labels and
  annotations; schedulerName the template's, else the job's (Volcano's mutating webhook defaults
  it to `volcano`); priorityClassName the template's, else the job's; the Job as controller owner;
  annotations `volcano.sh/task-index`, `volcano.sh/task-spec`, `scheduling.k8s.io/group-name` (the
  PodGroup), `volcano.sh/job-name`, `volcano.sh/queue-name`, `volcano.sh/job-version`,
  `volcano.sh/template-uid` (`<job>-<task>`); labels `volcano.sh/task-index`, `volcano.sh/job-name`,
  `volcano.sh/task-spec`, `volcano.sh/job-namespace`, `volcano.sh/queue-name`, and for a
  partitioned task `volcano.sh/partition-id` = index // partitionSize.
* The PodGroup is `volcano_job_to_podgroup.translate` (`createOrUpdatePodGroup`).

batch/v1 Job (kubernetes/kubernetes)
* `pkg/controller/job/job_controller.go` (`manageJob`): `parallelism` pods run at once, never more
  than the completions left; an Indexed Job's are the lowest indexes neither active nor succeeded,
  each with the `batch.kubernetes.io/job-completion-index` annotation and label (PodIndexLabel,
  1.28+) and hostname `<job>-<index>`; the Job is the controller owner; a suspended Job has none.
* `pkg/controller/job/indexed_job_utils.go` (`podGenerateNameWithIndex`): generateName
  `<job>-<index>-`, the job name cut so it fits 58 characters; a NonIndexed Job's is `<job>-`.
* `pkg/apis/batch/validation/validation.go` (`validateGeneratedSelector`): unless
  `manualSelector`, the template carries `batch.kubernetes.io/controller-uid`, `controller-uid`,
  `batch.kubernetes.io/job-name` and `job-name`.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from translations import gpu as gpumod
from translations import lws as lwsmod
from translations import lws_admission, lws_to_volcano, volcano, volcano_job, volcano_job_to_podgroup
from translations._base import INT32_MAX, JsonDict
from translations.core import Job, Pod, PodTemplateSpec, PriorityClass, effective_requests
from translations.digits import bounded_decimal
from translations.envelope import label_key_problems, label_value_problems, name_problems
from translations.errors import InvalidSpecError, raise_all, render_value
from translations.topology import natural_key

MAX_PODS = 100_000
"""Most pods one object may expand to (the simulator holds every pod in memory)."""
STS_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
STS_POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
VOLCANO_SCHEDULER = "volcano"
VC_TASK_INDEX = "volcano.sh/task-index"
VC_JOB_NAME = "volcano.sh/job-name"
VC_JOB_NAMESPACE = "volcano.sh/job-namespace"
VC_QUEUE_NAME = "volcano.sh/queue-name"
VC_JOB_VERSION = "volcano.sh/job-version"
VC_TEMPLATE_UID = "volcano.sh/template-uid"
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")
MAX_GENERATED_NAME = 58
"""apiserver's `names.MaxGeneratedNameLength`: 63 less the five random characters."""
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""The characters apimachinery's random name suffix is drawn from."""


Expandable = lwsmod.LeaderWorkerSet | volcano_job.VolcanoJob | Job
KINDS: Mapping[tuple[str, str], type[Expandable]] = {
    (lwsmod.GROUP, "LeaderWorkerSet"): lwsmod.LeaderWorkerSet,
    (volcano_job.GROUP, "Job"): volcano_job.VolcanoJob,
    ("batch", "Job"): Job,
}
"""(API group, kind) -> the model of each kind `expand` takes."""


@dataclass(frozen=True, slots=True)
class Expansion:
    """What the controllers of one object would create, less what the input already holds."""

    kind: str
    """`LeaderWorkerSet`, `Job.batch.volcano.sh` or `Job`."""
    key: str
    """`namespace/name` of the object."""
    pods: tuple[JsonDict, ...] = ()
    """The pods to add."""
    pod_groups: tuple[JsonDict, ...] = ()
    """The Volcano PodGroups to add."""
    groups: tuple[str, ...] = ()
    """Every PodGroup the pods join (added or already present)."""
    present: tuple[str, ...] = ()
    """Pods the input already had, by name: not made twice."""
    shape: str = ""
    """How the pods are laid out: `2 groups of 3`, `tasks ps 1, worker 4`, `indexes 0-3`."""
    notes: tuple[str, ...] = ()
    """What stood in for what only a live controller knows, and what the PodGroups leave out."""

    @property
    def subject(self) -> str:
        return f"{self.kind} {self.key}"

    def line(self) -> str:
        """One line: `LeaderWorkerSet ml/llm: 6 pod(s) (2 groups of 3), schedulerName volcano;
        PodGroups llm-0-1a2b, llm-1-1a2b`."""
        out = f"{self.subject}: {len(self.pods)} pod(s)" + (f" ({self.shape})" if self.shape else "")
        if self.present:
            out += f", {len(self.present)} already present"
        schedulers = sorted({str(p["spec"].get("schedulerName") or "default-scheduler") for p in self.pods})
        if schedulers:
            out += f", schedulerName {', '.join(schedulers)}"
        if self.groups:
            out += f"; PodGroup{'s' if len(self.groups) > 1 else ''} {', '.join(self.groups)}"
        return out

    def to_dict(self) -> JsonDict:
        """The `expanded` entry of `simulate -o json`."""
        return {
            "pods": [p["metadata"]["name"] for p in self.pods],
            "podGroups": list(self.groups),
            "present": list(self.present),
            "notes": list(self.notes),
        }


def expand(
    obj: Expandable,
    *,
    pods: Sequence[Pod] = (),
    pod_groups: Collection[str] = (),
    priority_classes: Iterable[PriorityClass] = (),
) -> Expansion:
    """The expansion of any of the three kinds (`pod_groups`: keys of the Volcano PodGroups in
    the input; `priority_classes` order a Volcano Job's tasks for its minResources)."""
    if isinstance(obj, lwsmod.LeaderWorkerSet):
        return expand_lws(obj, pods=pods, pod_groups=pod_groups)
    if isinstance(obj, volcano_job.VolcanoJob):
        return expand_volcano_job(obj, pods=pods, pod_groups=pod_groups, priority_classes=priority_classes)
    return expand_job(obj, pods=pods)


# --- LeaderWorkerSet ------------------------------------------------------------------------------


def expand_lws(
    lws: lwsmod.LeaderWorkerSet, *, pods: Sequence[Pod] = (), pod_groups: Collection[str] = ()
) -> Expansion:
    """Every group's leader and workers; with a topology, each group's PodGroup too."""
    raise_all(lwsmod.topology_request(lws)[1])  # what LWS's webhook and topobridge's refuse
    replicas = 1 if lws.spec.replicas is None else lws.spec.replicas
    size = lws.size
    _cap(replicas * size, "spec.replicas", replicas, f"{replicas} group(s) of {size} pod(s)")
    ns = lws.namespace or "default"
    leaders = lws_to_volcano.leader_pods(lws, pods)
    revision, notes = _lws_revision(lws, leaders)
    topology = bool(lws_admission.topology_fields(lws))
    made: list[JsonDict] = []
    for g in range(replicas):
        rev = (leaders[g].metadata.labels or {}).get(lwsmod.REVISION_LABEL) if g in leaders else None
        made += lws_group_pods(lws, g, rev or revision, group_name=topology)
    new, present = _split(made, ns, pods)
    groups: list[JsonDict] = []
    if topology:
        translated = lws_to_volcano.translate(lws, pods=pods, revision=revision)
        groups = [pg.to_dict() for pg in translated.pod_groups]
        notes += [f"PodGroups leave out: {text}" for text in translated.report.refused]
    else:
        notes.append("no PodGroup: the LeaderWorkerSet asks for no topology, so each pod is placed alone")
    return _finish(
        "LeaderWorkerSet",
        f"{ns}/{lws.name}",
        new,
        present=present,
        groups=groups,
        have_groups=pod_groups,
        shape=f"{replicas} group(s) of {size}",
        notes=notes,
    )


def lws_group_pods(
    lws: lwsmod.LeaderWorkerSet, group: int, revision: str, *, group_name: bool
) -> list[JsonDict]:
    """Group `group`'s leader and workers as LWS names and labels them; `group_name`: they carry
    `scheduling.k8s.io/group-name` (`<lws>-<group>-<revision>`)."""
    ns = lws.namespace or "default"
    leader = f"{lws.name}-{group}"
    labels = {
        lwsmod.NAME_LABEL: lws.name,
        lwsmod.GROUP_INDEX_LABEL: str(group),
        lwsmod.GROUP_KEY_LABEL: _sha1(f"{ns}/{leader}"),
        lwsmod.REVISION_LABEL: revision,
    }
    annotations = _lws_annotations(lws)
    if group_name:
        annotations[volcano.GROUP_NAME_ANNOTATION] = lws_to_volcano.pod_group_name(lws.name, group, revision)
    return [_lws_pod(lws, leader, group, w, labels, annotations) for w in range(lws.size)]


def _lws_pod(
    lws: lwsmod.LeaderWorkerSet,
    leader: str,
    group: int,
    worker: int,
    group_labels: dict[str, str],
    group_annotations: dict[str, str],
) -> JsonDict:
    """Pod `worker` of a group (0: the leader), with its StatefulSet's identity."""
    tmpl = lws.spec.leader_worker_template
    name = leader if worker == 0 else f"{leader}-{worker}"
    labels = {
        **group_labels,
        lwsmod.WORKER_INDEX_LABEL: str(worker),
        STS_POD_NAME_LABEL: name,
        STS_POD_INDEX_LABEL: str(group if worker == 0 else worker),
        **_subgroup_labels(lws, leader, worker),
    }
    annotations = dict(group_annotations)
    unique = (
        lws.spec.network_config is not None and lws.spec.network_config.subdomain_policy == "UniquePerReplica"
    )
    if worker == 0 and unique:
        annotations[lwsmod.SUBDOMAIN_POLICY_ANNOTATION] = "UniquePerReplica"
    if worker > 0:
        annotations[lwsmod.LEADER_NAME_ANNOTATION] = leader
    leader_template = worker == 0 and tmpl.leader_template is not None
    template = (
        (f"{lwsmod.TEMPLATE_PATH}.leaderTemplate", tmpl.leader_template)
        if leader_template
        else (f"{lwsmod.TEMPLATE_PATH}.workerTemplate", tmpl.worker_template)
    )
    pod = _pod(name, lws.namespace or "default", _template(*template), labels=labels, annotations=annotations)
    pod["spec"]["hostname"] = name
    pod["spec"]["subdomain"] = leader if unique else lws.name
    _exclusive(pod, lws)
    return pod


def _lws_annotations(lws: lwsmod.LeaderWorkerSet) -> dict[str, str]:
    """What both StatefulSet templates carry."""
    given = lws.metadata.annotations or {}
    out = {lwsmod.SIZE_ANNOTATION: str(lws.size)}
    if given.get(lwsmod.EXCLUSIVE_TOPOLOGY_ANNOTATION):
        out[lwsmod.EXCLUSIVE_TOPOLOGY_ANNOTATION] = given[lwsmod.EXCLUSIVE_TOPOLOGY_ANNOTATION]
    policy = lws.spec.leader_worker_template.sub_group_policy
    if policy is not None:
        out[lwsmod.SUBGROUP_POLICY_TYPE_ANNOTATION] = policy.sub_group_policy_type or "LeaderWorker"
        if policy.sub_group_size is not None:
            out[lwsmod.SUBGROUP_SIZE_ANNOTATION] = str(policy.sub_group_size)
        if given.get(lwsmod.SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION):
            out[lwsmod.SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION] = given[
                lwsmod.SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION
            ]
    return out


def _subgroup_labels(lws: lwsmod.LeaderWorkerSet, leader: str, worker: int) -> dict[str, str]:
    """`subgroup-index` and `subgroup-key` as LWS's pod webhook sets them (none without a policy,
    none on the leader with LeaderExcluded)."""
    policy = lws.spec.leader_worker_template.sub_group_policy
    if policy is None or not policy.sub_group_size:
        return {}
    s = policy.sub_group_size
    if worker == 0:
        if policy.sub_group_policy_type == "LeaderExcluded":
            return {}
        index = 0
    else:
        index = (worker - 1) // s if (lws.size - 1) % s == 0 else worker // s
    return {lwsmod.SUBGROUP_INDEX_LABEL: str(index), lwsmod.SUBGROUP_KEY_LABEL: _sha1(f"{leader}/{index}")}


def _exclusive(pod: JsonDict, lws: lwsmod.LeaderWorkerSet) -> None:
    """The exclusive-placement affinity of the group (and of the subgroup) the pod belongs to."""
    given = lws.metadata.annotations or {}
    labels = pod["metadata"]["labels"]
    for annotation, label in (
        (lwsmod.EXCLUSIVE_TOPOLOGY_ANNOTATION, lwsmod.GROUP_KEY_LABEL),
        (lwsmod.SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION, lwsmod.SUBGROUP_KEY_LABEL),
    ):
        topology_key = given.get(annotation)
        if not topology_key or label not in labels:
            continue
        terms = lwsmod.exclusive_affinity(labels[label], topology_key, label=label)
        affinity = pod["spec"].setdefault("affinity", {})
        for kind, wanted in terms.items():
            assert isinstance(wanted, dict)
            required = affinity.setdefault(kind, {}).setdefault(
                "requiredDuringSchedulingIgnoredDuringExecution", []
            )
            required.extend(wanted["requiredDuringSchedulingIgnoredDuringExecution"])


def _lws_revision(lws: lwsmod.LeaderWorkerSet, leaders: dict[int, Pod]) -> tuple[str, list[str]]:
    """The revision of groups whose leader is not in the input: a leader's, else a stand-in."""
    for index in sorted(leaders):
        rev = (leaders[index].metadata.labels or {}).get(lwsmod.REVISION_LABEL)
        if rev:
            return rev, []
    rev = revision_stand_in(lws)
    return rev, [f"revision {rev} stands in for LWS's template hash (no leader pod in the input)"]


def revision_stand_in(lws: lwsmod.LeaderWorkerSet) -> str:
    """A stable hash of the leader/worker templates: any change makes a new revision, as LWS's."""
    tmpl = lws.spec.leader_worker_template.to_dict()
    return hashlib.sha256(json.dumps(tmpl, sort_keys=True).encode()).hexdigest()[:10]


# --- Volcano Job ----------------------------------------------------------------------------------


def expand_volcano_job(
    job: volcano_job.VolcanoJob,
    *,
    pods: Sequence[Pod] = (),
    pod_groups: Collection[str] = (),
    priority_classes: Iterable[PriorityClass] = (),
) -> Expansion:
    """The Job's PodGroup and every task's pods."""
    # Volcano's webhook rules first: translate raises every problem `volcano_job.job_problems` finds.
    translated = volcano_job_to_podgroup.translate(job, priority_classes=priority_classes)
    tasks = volcano_job.effective_tasks(job.spec)
    _cap(sum(t.replicas for t in tasks), "spec.tasks", None, "pods over all tasks")
    ns = job.namespace or "default"
    group = translated.pod_group.name
    made = [_volcano_pod(job, task, ix, group) for task in tasks for ix in range(task.replicas)]
    new, present = _split(made, ns, pods)
    shape = "tasks " + ", ".join(f"{t.name} {t.replicas}" for t in tasks)
    notes = [f"PodGroup leaves out: {text}" for text in translated.report.refused]
    if not job.metadata.uid:
        notes.append(f"PodGroup {group}: the Job has no uid, so the name is <job> (Volcano's is <job>-<uid>)")
    return _finish(
        "Job.batch.volcano.sh",
        f"{ns}/{job.name}",
        new,
        present=present,
        groups=[translated.pod_group.to_dict()],
        have_groups=pod_groups,
        shape=shape,
        notes=notes,
    )


def _volcano_pod(
    job: volcano_job.VolcanoJob, task: volcano_job.EffectiveTask, ix: int, group: str
) -> JsonDict:
    ns = job.namespace or "default"
    queue = job.spec.queue or volcano_job.DEFAULT_QUEUE
    labels = {
        VC_TASK_INDEX: str(ix),
        VC_JOB_NAME: job.name,
        volcano_job.TASK_SPEC_LABEL: task.name,
        VC_JOB_NAMESPACE: ns,
        VC_QUEUE_NAME: queue,
    }
    policy = task.task.partition_policy
    if policy is not None:
        labels[volcano_job.PARTITION_ID_LABEL] = str(ix // policy.partition_size)
    annotations = {
        VC_TASK_INDEX: str(ix),
        volcano_job.TASK_SPEC_LABEL: task.name,
        volcano.GROUP_NAME_ANNOTATION: group,
        VC_JOB_NAME: job.name,
        VC_QUEUE_NAME: queue,
        VC_JOB_VERSION: "0",
        VC_TEMPLATE_UID: f"{job.name}-{task.name}",
    }
    owner = _owner(volcano_job.API_VERSION, "Job", job.name, job.metadata.uid)
    pod = _pod(
        f"{job.name}-{task.name}-{ix}",
        ns,
        _template(f"spec.tasks[{task.index}].template", task.task.template),
        labels=labels,
        annotations=annotations,
        owner=owner,
    )
    spec = pod["spec"]
    spec["schedulerName"] = spec.get("schedulerName") or job.spec.scheduler_name or VOLCANO_SCHEDULER
    if not spec.get("priorityClassName") and job.spec.priority_class_name:
        spec["priorityClassName"] = job.spec.priority_class_name
    return pod


# --- batch/v1 Job ---------------------------------------------------------------------------------


def expand_job(job: Job, *, pods: Sequence[Pod] = ()) -> Expansion:
    """The pods the Job controller starts: `parallelism` of them, Indexed or not."""
    ns = job.namespace or "default"
    try:
        effective_requests(job.spec.template.spec)
    except InvalidSpecError as exc:
        raise_all([InvalidSpecError(f"spec.template.{p.field_path}", p.value, p.detail) for p in exc.all])
    if job.spec.suspend:
        return Expansion(
            "Job", f"{ns}/{job.name}", notes=("spec.suspend: the Job controller starts no pods",)
        )
    uid = job.metadata.uid or stand_in_uid("Job", ns, job.name)
    owned = [p for p in pods if _owned_by(p, job, uid)]
    active = [p for p in owned if not p.terminal]
    indexed = job.spec.completion_mode == "Indexed"
    if indexed:
        indexes: list[int | None] = list(_indexes_to_start(job, owned, active))
        shape = "indexes " + _ranges([i for i in indexes if i is not None]) if indexes else ""
    else:
        indexes = [None] * _count_to_start(job, owned, active)
        shape = ""
    names = {p.name for p in pods if p.namespace == ns}
    new: list[JsonDict] = []
    if indexes:  # the template read once for all the pods (and only when there are some)
        template = _template("spec.template", job.spec.template)
        owner = _owner("batch/v1", "Job", job.name, uid)  # one for all: the pods share it
        new = [
            _job_pod(job, template, uid, index, ordinal=len(owned) + n, taken=names, owner=owner)
            for n, index in enumerate(indexes)
        ]
    notes = [] if job.metadata.uid else [f"uid {uid} stands in for the Job's (none in the input)"]
    return _finish("Job", f"{ns}/{job.name}", new, present=[p.name for p in active], shape=shape, notes=notes)


def _indexes_to_start(job: Job, owned: Sequence[Pod], active: Sequence[Pod]) -> list[int]:
    """The lowest indexes neither active nor succeeded, as many as parallelism leaves room for."""
    parallelism = 1 if job.spec.parallelism is None else job.spec.parallelism
    completions = job.spec.completions if job.spec.completions is not None else parallelism
    _cap(min(parallelism, completions), "spec.parallelism", parallelism, "pods at once")
    taken = {_index(p) for p in owned if not p.terminal or _phase(p) == "Succeeded"}
    room = max(parallelism - len(active), 0)
    out: list[int] = []
    for i in range(completions):
        if len(out) == room:
            break
        if i not in taken:
            out.append(i)
    return out


def _count_to_start(job: Job, owned: Sequence[Pod], active: Sequence[Pod]) -> int:
    parallelism = 1 if job.spec.parallelism is None else job.spec.parallelism
    succeeded = sum(1 for p in owned if _phase(p) == "Succeeded")
    if job.spec.completions is None:
        wanted = parallelism if not succeeded else 0
    else:
        wanted = min(parallelism, max(job.spec.completions - succeeded, 0))
    _cap(wanted, "spec.parallelism", parallelism, "pods at once")
    return max(wanted - len(active), 0)


def _job_pod(
    job: Job,
    template: _Template,
    uid: str,
    index: int | None,
    *,
    ordinal: int,
    taken: set[str],
    owner: JsonDict | None,
) -> JsonDict:
    ns = job.namespace or "default"
    labels: dict[str, str] = {}
    if not (job.spec.model_extra or {}).get("manualSelector"):
        labels = {gpumod.CONTROLLER_UID_LABELS[0]: uid, gpumod.CONTROLLER_UID_LABELS[1]: uid}
        labels |= dict.fromkeys(JOB_NAME_LABELS, job.name)
    annotations: dict[str, str] = {}
    if index is not None:
        labels[gpumod.COMPLETION_INDEX] = annotations[gpumod.COMPLETION_INDEX] = str(index)
    name = unique_name(
        generate_name(job.name, index), f"{uid}/{index if index is not None else ordinal}", taken
    )
    pod = _pod(
        name,
        ns,
        template,
        labels=labels,
        annotations=annotations,
        owner=owner,
    )
    if index is not None:
        pod["spec"]["hostname"] = f"{job.name}-{index}"
    return pod


def generate_name(job_name: str, index: int | None) -> str:
    """The Job controller's generateName (`<job>-<index>-`, `<job>-`), cut as the API server cuts it."""
    if index is None:
        return f"{job_name}-"[:MAX_GENERATED_NAME]
    suffix = f"-{index}-"
    return job_name[: MAX_GENERATED_NAME - len(suffix)] + suffix


def _owned_by(pod: Pod, job: Job, uid: str) -> bool:
    if pod.namespace != (job.namespace or "default"):
        return False
    owner = gpumod.job_uid_of(pod)
    if owner is not None:
        return owner == uid
    labels = pod.metadata.labels or {}
    return any(labels.get(k) == job.name for k in JOB_NAME_LABELS)


def _index(pod: Pod) -> int | None:
    raw = gpumod.completion_index(pod)
    if raw is None:
        return None
    index = bounded_decimal(raw, INT32_MAX)
    if index is None:
        raise InvalidSpecError(
            f"Pod {pod.key}: metadata.annotations[{gpumod.COMPLETION_INDEX}]",
            raw,
            f"Invalid value: {render_value(raw)}: must be a non-negative decimal integer"
            f" (at most {INT32_MAX})",
        )
    return index


def _phase(pod: Pod) -> str | None:
    return pod.status.phase if pod.status is not None else None


def stand_in_uid(kind: str, namespace: str, name: str) -> str:
    """A uid for an object read from a file (the API server sets the real one): stable per object."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"topobridge:{kind}:{namespace}/{name}"))


def unique_name(prefix: str, seed: str, taken: set[str]) -> str:
    """`prefix` and a suffix chosen by `seed`, not yet in `taken` (then added to it). Five
    characters of 27 collide about 4 times in 10,000 pods of one Job; the API server answers a
    collision with AlreadyExists and the Job controller retries with a new suffix: so here."""
    name, attempt = prefix + random_suffix(seed), 0
    while name in taken:
        attempt += 1
        name = prefix + random_suffix(f"{seed}#{attempt}")
    taken.add(name)
    return name


def random_suffix(seed: str) -> str:
    """Five characters of the API server's generateName alphabet, chosen by `seed`."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(NAME_ALPHABET[b % len(NAME_ALPHABET)] for b in digest[:5])


# --- shared ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Template:
    """A pod template as pods are made from it: its labels and annotations, type-checked (only
    the API server would have), and its spec as a dict."""

    labels: dict[str, str]
    annotations: dict[str, str]
    spec: JsonDict


def _template(path: str, tmpl: PodTemplateSpec | None) -> _Template:
    """The template at `path` made ready; a caller that makes many pods of it makes it once."""
    raw = tmpl.to_dict() if tmpl is not None else {}
    return _Template(_strings(raw, "labels", path), _strings(raw, "annotations", path), raw.get("spec") or {})


def _pod(
    name: str,
    namespace: str,
    template: _Template,
    *,
    labels: dict[str, str],
    annotations: dict[str, str],
    owner: JsonDict | None = None,
) -> JsonDict:
    """A pod from `template`: the template's labels and annotations, the controller's on top.
    The pod's spec is a copy of the template's top level only: a caller that changes anything
    deeper makes a template of its own for the pod."""
    meta: JsonDict = {"name": name, "namespace": namespace}
    all_labels = {**template.labels, **labels}
    all_annotations = {**template.annotations, **annotations}
    if all_labels:
        meta["labels"] = all_labels
    if all_annotations:
        meta["annotations"] = all_annotations
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(template.spec)}


def _strings(template: JsonDict, key: str, path: str) -> dict[str, str]:
    """A template's labels or annotations, which only the API server would have type-checked."""
    meta = template.get("metadata")
    value = meta.get(key) if isinstance(meta, dict) else None
    where = f"{path}.metadata.{key}"
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidSpecError(where, value, f"Invalid value: {render_value(value)}: must be of type object")
    for k, v in value.items():
        if not isinstance(v, str):
            raise InvalidSpecError(
                f"{where}[{k}]", v, f"Invalid value: {render_value(v)}: must be of type string"
            )
    return {str(k): v for k, v in value.items()}


def _owner(api_version: str, kind: str, name: str, uid: str | None) -> JsonDict | None:
    if not uid:
        return None
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _split(made: list[JsonDict], namespace: str, pods: Sequence[Pod]) -> tuple[list[JsonDict], list[str]]:
    """(pods to add, names already present)."""
    have = {p.key for p in pods}
    new = [p for p in made if f"{namespace}/{p['metadata']['name']}" not in have]
    present = [p["metadata"]["name"] for p in made if f"{namespace}/{p['metadata']['name']}" in have]
    return new, present


def _finish(
    kind: str,
    key: str,
    new: list[JsonDict],
    *,
    present: list[str],
    groups: Sequence[JsonDict] = (),
    have_groups: Collection[str] = (),
    shape: str,
    notes: list[str],
) -> Expansion:
    """Check every new object as the API server would; PodGroups already present are kept."""
    checked = _Checked()  # a job's pods share most labels: each key and value checked once
    for obj in new:
        _check(obj, checked)
    added = [
        g
        for g in groups
        if f"{g['metadata'].get('namespace', '')}/{g['metadata']['name']}" not in have_groups
    ]
    for obj in added:
        _check(obj, checked)
    return Expansion(
        kind,
        key,
        pods=tuple(new),
        pod_groups=tuple(added),
        groups=tuple(sorted((g["metadata"]["name"] for g in groups), key=natural_key)),
        present=tuple(present),
        shape=shape,
        notes=tuple(notes),
    )


@dataclass(slots=True)
class _Checked:
    """Label keys and label values found valid (a bad one is reported under each key it is
    found with, and raises). Apart: each pod of an Indexed Job has a label value of its own (its index)
    under a key every pod has."""

    keys: set[str] = field(default_factory=set)
    values: set[str] = field(default_factory=set)


def _check(obj: JsonDict, checked: _Checked) -> None:
    """The object's name and labels as the API server checks them; a label key or value
    `checked` holds already is not checked again."""
    meta = obj["metadata"]
    where = f"{obj['kind']} {meta.get('namespace', '')}/{meta['name']}"
    problems = name_problems(obj, require_name=True)
    for k, v in (meta.get("labels") or {}).items():
        if k not in checked.keys:
            found = label_key_problems(k, path="metadata.labels")
            problems += found
            if not found:
                checked.keys.add(k)
        if v not in checked.values:
            found = label_value_problems(v, path=f"metadata.labels[{k}]")
            problems += found
            if not found:
                checked.values.add(v)
    raise_all([InvalidSpecError(f"{where}: {p.field_path}", p.value, p.detail) for p in problems])


def _cap(count: int, path: str, value: Any, what: str) -> None:
    if count > MAX_PODS:
        shown = render_value(value) if value is not None else str(count)
        raise InvalidSpecError(
            path, value, f"Invalid value: {shown}: expands to {count} pods ({what}); at most {MAX_PODS}"
        )


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _ranges(values: list[int]) -> str:
    """`0-3, 6`: runs of consecutive values."""
    out: list[str] = []
    for v in values:
        if out and out[-1].split("-")[-1] == str(v - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{v}"
        else:
            out.append(str(v))
    return ", ".join(out)


# --- models ---------------------------------------------------------------------------------------

PER_POD_METADATA = ("name", "labels", "annotations")
"""What a controller gives each pod of one template its own of, in `metadata`..."""
PER_POD_SPEC = ("hostname", "subdomain")
"""... and in `spec` (fields PodSpec keeps as given: it models neither)."""


def parse_pods(raws: Iterable[JsonDict]) -> list[Pod]:
    """Each pod as `Pod.parse(raw)` reads it, a template parsed once (see the module
    docstring): a pod like the last one parsed is a copy of its model (`_copy_of`)."""
    out: list[Pod] = []
    last: tuple[JsonDict, Pod] | None = None
    for raw in raws:
        pod = _copy_of(last, raw) if last is not None else None
        if pod is None:
            pod = Pod.parse(raw)
            last = (raw, pod)
        out.append(pod)
    return out


def _copy_of(parsed: tuple[JsonDict, Pod], raw: JsonDict) -> Pod | None:
    """`raw` as a copy of the model parsed from `parsed[0]`, when the two differ only in the
    per-pod fields, present in both, whose values need no conversion (a name and a hostname
    are strings, labels and annotations maps of strings); None otherwise (`raw` is parsed)."""
    base_raw, base = parsed
    meta, base_meta = raw.get("metadata"), base_raw.get("metadata")
    spec, base_spec = raw.get("spec"), base_raw.get("spec")
    if not (
        type(meta) is dict and type(spec) is dict and type(base_meta) is dict and type(base_spec) is dict
    ):
        return None
    if not _alike(raw, base_raw, ("metadata", "spec")):
        return None
    if not (_alike(meta, base_meta, PER_POD_METADATA) and _alike(spec, base_spec, PER_POD_SPEC)):
        return None
    meta_update = {k: _as_modelled(k, meta[k]) for k in PER_POD_METADATA if k in meta}
    spec_update = {k: spec[k] for k in PER_POD_SPEC if k in spec}
    if any(v is None for v in meta_update.values()) or any(type(v) is not str for v in spec_update.values()):
        return None
    return base.replaced(
        metadata=base.metadata.replaced(**meta_update),
        spec=base.spec.replaced(**spec_update) if spec_update else base.spec,
    )


def _alike(a: JsonDict, b: JsonDict, apart: tuple[str, ...]) -> bool:
    """The same keys in the same order (a model keeps unknown fields in the order given), and
    the same values but under the keys `apart` (a value shared with `b`, as the pods of one
    template share their template's parts, is the same without a walk)."""
    if len(a) != len(b) or list(a) != list(b):
        return False
    for k, v in a.items():
        if k not in apart:
            w = b[k]
            if v is not w and v != w:
                return False
    return True


def _as_modelled(key: str, value: Any) -> str | dict[str, str] | None:
    """A per-pod metadata field's value as the model holds it (`name` a string, `labels` and
    `annotations` a copy of a map of strings); None when parsing would convert or refuse it."""
    if key == "name":
        return value if type(value) is str else None
    if type(value) is dict and _strings_only(value) and _strings_only(value.values()):
        return dict(value)
    return None


def _strings_only(values: Iterable[Any]) -> bool:
    """Every value a `str` exactly (no subclass: parsing would convert it)."""
    return set(map(type, values)) <= _STR


_STR = frozenset({str})
