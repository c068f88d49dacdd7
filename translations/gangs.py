"""Gang discovery: which pods are scheduled together, from every dialect, as one `Gang` model.

A pod's gang is decided by the first of these that applies:

1. Volcano: annotation `scheduling.k8s.io/group-name` -> PodGroup `scheduling.volcano.sh`.
2. Koordinator's coscheduling: label `pod-group.scheduling.sigs.k8s.io` -> PodGroup
   `scheduling.sigs.k8s.io` (its annotations may carry `network-topology-spec` and `groups`).
3. scheduler-plugins: label `scheduling.x-k8s.io/pod-group` -> PodGroup `scheduling.x-k8s.io`.
4. Koordinator's annotations on the pods: `gang.scheduling.koordinator.sh/name` (+ `min-available`).
5. Kubernetes' own: `spec.schedulingGroup.podGroupName` -> PodGroup `scheduling.k8s.io`
   (`translations.upstream_gangs`), before Volcano's annotation, which translating it adds.
6. Kueue's pod groups, whose TAS annotations Kueue reads from the pods: label
   `kueue.x-k8s.io/pod-group-name` on pods that carry them (plain pods: one all-or-nothing
   gang of `pod-group-total-count` pods, ranked by `kueue.x-k8s.io/pod-group-pod-index`), or
   one LeaderWorkerSet group whose pods carry a `podset-group-name` (leader and workers in one
   gang of the group's size, one domain).
7. The GPU dialect: the pods of one batch/v1 Job (controller ownerReference, else the
   `controller-uid` label) whose request (`translations.gpu`, on the Job, its template or the
   pods) names a multi-node key: one all-or-nothing gang `namespace/<job>` of the Job's
   `parallelism` pods, ranked by `batch.kubernetes.io/job-completion-index`.
8. Nothing: a gang of one, keyed by the pod.

A Koordinator GangGroup (`gang.scheduling.koordinator.sh/groups`, on a PodGroup or on pods) merges
the gangs it lists into one gang that is placed all together.

Priority is `spec.priority` when set, else the value of `spec.priorityClassName`, else the
`globalDefault` PriorityClass, else 0. A gang's priority is its PodGroup's priorityClassName
when set, else the lowest of its members' (a gang never evicts pods at or above any of its own).

The topology constraint goes through `translations.constraints`, so every dialect means the same.
A gang whose objects cannot be used as written carries `error` instead of failing discovery: the
rest of the cluster still schedules. The controller calls this same function on its cache.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter, is_
from typing import Any, Literal, NewType

from translations import constraints as cons
from translations import gpu as gpumod
from translations import koordinator as koord
from translations import kueue, schedplugins, upstream_gangs, volcano, workload
from translations import lws as lwsmod
from translations._base import INT32_MAX
from translations.constraints import TopologyConstraint
from translations.core import Job, Pod, PriorityClass, effective_requests
from translations.digits import bounded_decimal
from translations.errors import InvalidSpecError, failure_text, shown_name
from translations.serving import scheduler_name, serves
from translations.topology import NaturalKey, TopologyTree, natural_key

GangKey = NewType("GangKey", str)
"""A gang's identity: its dialect, then `namespace/name` (`volcano:ns/train`, `koordinator:ns/train`,
`job:ns/train`, `pod:ns/train-0`). The dialect is part of it: a Volcano PodGroup, a Koordinator
gang, a scheduler-plugins PodGroup and a Job of one name in one namespace are four gangs."""
RankKey = tuple[int, int, NaturalKey]
KOORDINATOR_DEFAULT_WAITING_SECONDS = 300.0
"""Koordinator's wait for a gang that states neither `scheduleTimeoutSeconds` nor `waiting-time`."""
PreemptionPolicy = Literal["PreemptLowerPriority", "Never"]
GangSource = Literal[
    "volcano",
    "koordinator",
    "scheduler-plugins",
    "koordinator-annotations",
    "kueue",
    "job",
    "none",
    "upstream",
]
Dialect = Literal["volcano", "koordinator", "scheduler-plugins", "kueue", "job", "pod", "upstream"]
"""The name space a gang's name lives in. Koordinator's PodGroup label and its gang annotation
name one gang id (`namespace/name`) in Koordinator, so both are `koordinator`."""
_DIALECT: Mapping[GangSource, Dialect] = {
    "volcano": "volcano",
    "koordinator": "koordinator",
    "koordinator-annotations": "koordinator",
    "scheduler-plugins": "scheduler-plugins",
    "kueue": "kueue",
    "job": "job",
    "none": "pod",
    "upstream": "upstream",
}


_SOURCE_OF_DIALECT: Mapping[str, GangSource] = {
    "volcano": "volcano",
    "koordinator": "koordinator",
    "scheduler-plugins": "scheduler-plugins",
    "kueue": "kueue",
    "job": "job",
    "pod": "none",
    "upstream": "upstream",
}


def gang_key(source: GangSource, namespaced_name: str) -> GangKey:
    """The key of the gang `source` names `namespace/name`."""
    return GangKey(f"{_DIALECT[source]}:{namespaced_name}")


def gang_name(key: str) -> str:
    """`namespace/name` of a gang key (what users and other schedulers call the gang)."""
    return key.split(":", 1)[1] if ":" in key.split("/", 1)[0] else key


def koordinator_key(namespaced_name: str) -> GangKey:
    """The key of the Koordinator gang a `groups` annotation lists as `namespace/name`."""
    return gang_key("koordinator", namespaced_name)


@dataclass(frozen=True, slots=True)
class GangPod:
    """One member of a gang, with what the placer needs already resolved."""

    pod: Pod
    key: str
    """`namespace/name`."""
    rank: int | None
    """`gang.scheduling.koordinator.sh/network-topology-index`, else the LWS worker index, else
    the Job completion index."""
    priority: int
    preemption_policy: PreemptionPolicy
    requests: Mapping[str, int]
    """Effective requests in scheduler units, plus `pods: 1`."""
    shape: str = ""
    """Equal for members that are interchangeable for placement: same requests, node
    selector, required node affinity and tolerations (computed once, here)."""
    _order: RankKey | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def order(self) -> RankKey:
        """Where the member goes in its gang's rank order (`_rank_key`), computed when first
        read and kept: only discovery sorts members, and most pods of a large cluster are bound
        pods alone, whose order is never read (their keys' sort keys are not held for nothing)."""
        order = self._order
        if order is None:
            order = _rank_key(self.rank, self.key)
            object.__setattr__(self, "_order", order)
        return order

    @property
    def bound(self) -> bool:
        return bool(self.pod.spec.node_name)  # `Pod.bound`, read in one step: asked per member

    @property
    def node_name(self) -> str | None:
        return self.pod.spec.node_name


MemberFn = Callable[[Pod], tuple[GangPod, str | None]]
"""A pod -> its `GangPod` and the error it carries (see `gang_pod`)."""


@dataclass(frozen=True, slots=True)
class SubGroup:
    """Pods of a gang that gather more tightly inside the gang's domain."""

    name: str
    pods: tuple[str, ...]
    """Member pod keys (bound and pending), rank order."""
    constraint: TopologyConstraint
    policy: str = ""
    """The Volcano subGroupPolicy it comes from (its `minSubGroups` counts it); "" for others."""
    ready_size: int = 0
    """Members (bound or placed) that make it ready, Volcano's `subGroupSize`; 0: all of them."""


@dataclass(frozen=True)
class Gang:
    """Pods that are placed all together or not at all."""

    key: GangKey
    pods: tuple[GangPod, ...]
    """Every non-terminal member, pending and bound, in rank order."""
    min_member: int
    priority: int
    preemption_policy: PreemptionPolicy
    constraint: TopologyConstraint | None
    subgroups: tuple[SubGroup, ...] = ()
    source: GangSource = "none"
    scheduler_name: str = ""
    """Its first pending member's (rank order; of its first member when none is pending),
    defaulted as the API server defaults it (`serving.scheduler_name`)."""
    error: str | None = None
    """Why the gang cannot be scheduled as written (a bad annotation, a missing PodGroup)."""
    all_or_nothing: bool = False
    """True for GangGroups: every pending member at once, never a partial count."""
    creation: str = field(default="", compare=False)
    schedule_timeout: float | None = None
    """Seconds the gang may wait without starting before its reservations and nominations are
    released (PodGroup `scheduleTimeoutSeconds`, else Koordinator's `waiting-time` annotation,
    else Koordinator's default); None: no limit."""
    gpu: gpumod.GpuGang | None = None
    """The GPU dialect's request (source `job`): max-nodes, min-gpus-per-node, NVLink, policy."""
    disruption_min: int | None = None
    """Members a preemption must leave standing when that is not `min_member`: Kubernetes'
    `disruptionMode` (`single`: 0, any member may be taken; `all`: every bound member, so the
    gang goes whole or not at all)."""
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """What the gang's objects say that was read leniently, as its dialect would (an unknown
    `highestTierName`: no tier limit, as Volcano): its PodGroup's condition says it."""
    kueue_tas: bool = False
    """Placed by Kueue's TAS annotations: among equally tight domains, Kueue's BestFit takes the
    first in level order (not the one in the fullest enclosing domains)."""
    slices: tuple[tuple[int, int], ...] = ()
    """Kueue's slice layers as (tier, size), outermost first: `size` consecutive ranks in one
    domain of the tier, each layer inside the one above."""
    min_sub_groups: tuple[tuple[str, int], ...] = ()
    """Volcano `minSubGroups` per subGroupPolicy name (those above 0): the gang starts only
    when at least that many of the policy's subgroups are ready (`SubGroup.ready_size`)."""
    allocated_hypernode: str | None = None
    """Volcano's `job-allocated-hypernode` on the PodGroup: the HyperNode its running members
    were placed in, which a hard constraint holds as Volcano does (`filtering`'s anchors)."""

    @property
    def victim_min(self) -> int:
        """Members a preemption must leave standing unless it takes the whole gang."""
        return self.min_member if self.disruption_min is None else self.disruption_min

    @property
    def name(self) -> str:
        """`namespace/name`, as the gang's own dialect spells it (the key without the dialect)."""
        return gang_name(self.key)

    @property
    def namespace(self) -> str:
        return self.name.split("/", 1)[0]

    @cached_property
    def pending(self) -> tuple[GangPod, ...]:
        return tuple(p for p in self.pods if not p.bound)

    @cached_property
    def bound(self) -> tuple[GangPod, ...]:
        return tuple(p for p in self.pods if p.bound)

    def served_by(self, served: Collection[str]) -> bool:
        """Whether a scheduler of the `served` names places this gang: its first pending member
        is a pod it serves (`serving.serves`; members the snapshot assumes are bound already)."""
        return bool(self.pending) and serves(self.pending[0].pod, served)


@dataclass(frozen=True)
class PodGroups:
    """Every PodGroup of the snapshot, by dialect."""

    volcano: Sequence[volcano.PodGroup] = ()
    koordinator: Sequence[koord.SigsPodGroup] = ()
    scheduler_plugins: Sequence[schedplugins.XPodGroup] = ()
    jobs: Sequence[Job] = ()
    """batch/v1 Jobs, for the GPU dialect's gangs (their annotations and parallelism)."""
    upstream: Sequence[workload.PodGroup] = ()
    """Kubernetes' own `scheduling.k8s.io` PodGroups."""
    upstream_workloads: Sequence[workload.WorkloadV1alpha1] = ()
    """Kubernetes 1.35's Workloads (their groups are gangs)."""


# --- priority -------------------------------------------------------------------------------


def resolve_priority(pod: Pod, classes: Mapping[str, PriorityClass]) -> tuple[int, PreemptionPolicy]:
    """The pod's priority and preemption policy as the API server's admission would set them."""
    spec = pod.spec
    name = spec.priority_class_name
    pc = classes.get(name) if name else _global_default(classes)
    value = spec.priority if spec.priority is not None else (pc.value if pc is not None else 0)
    policy_raw = spec.preemption_policy or (pc.preemption_policy if pc is not None else None)
    policy: PreemptionPolicy = "Never" if policy_raw == "Never" else "PreemptLowerPriority"
    return value, policy


def _global_default(classes: Mapping[str, PriorityClass]) -> PriorityClass | None:
    """The globalDefault class of highest value (of those, the first by name); read for
    every pod that names none, so nothing is sorted when no class is a default."""
    defaults = [c for c in classes.values() if c.global_default]
    return min(defaults, key=lambda c: (-c.value, c.name)) if defaults else None


def class_priority(name: str | None, classes: Mapping[str, PriorityClass]) -> int | None:
    if not name:
        return None
    pc = classes.get(name)
    return pc.value if pc is not None else None


# --- discovery -------------------------------------------------------------------------------


class _Located(Exception):
    """A spec error with the object it was found on in front: `pod ns/x: field: detail`."""


@dataclass
class _Draft:
    key: GangKey
    source: GangSource
    members: list[Pod] = field(default_factory=list)
    min_member: int | None = None
    constraint: TopologyConstraint | None = None
    pg_priority: int | None = None
    error: str | None = None
    groups: tuple[str, ...] = ()
    gather_spec: koord.NetworkTopologyGatherSpec | None = None
    volcano_policies: Sequence[volcano.SubGroupPolicy] = ()
    allocated_hypernode: str | None = None
    creation: str = ""
    timeout: float | None = None
    gpu: gpumod.GpuTopologyRequest | None = None
    kueue: kueue.TasRequest | None = None
    warnings: list[str] = field(default_factory=list)
    never_preempts: bool = False
    """The group itself says `preemptionPolicy: Never` (Kubernetes' PodGroup)."""
    disruption_min: int | None = None

    @property
    def name(self) -> str:
        return gang_name(self.key)


def discover_gangs(
    pods: Iterable[Pod],
    *,
    podgroups: PodGroups | None = None,
    priority_classes: Iterable[PriorityClass] = (),
    tree: TopologyTree | None = None,
    cnt: koord.ClusterNetworkTopology | None = None,
    nvlink_label: str = gpumod.NVLINK_LABEL,
    member: MemberFn | None = None,
    membership_of: Callable[[Pod], tuple[GangKey, GangSource]] | None = None,
) -> list[Gang]:
    """Group pods into gangs. Terminal pods, and pending pods being deleted, are left out; every
    other pod is in exactly one gang.

    Gangs come back sorted by key (natural order) so callers iterate deterministically.
    `nvlink_label` is the node label GPU gangs that require NVLink are held to.
    `member` (default `gang_pod` with these priority classes) lets a caller that keeps each
    pod's `GangPod` from one change to the next hand it in instead of recomputing it, and
    `membership_of` (default `membership` with these Jobs) the gang each pod names.
    A `cnt` whose layers do not chain raises nothing here: a gang gathering by one of its
    layers gets an error saying so, and the others are discovered as usual.
    """
    groups_in = podgroups or PodGroups()
    classes = {c.name: c for c in priority_classes}
    tables = _Tables(
        volcano={pg.key: pg for pg in groups_in.volcano},
        koordinator={pg.key: pg for pg in groups_in.koordinator},
        scheduler_plugins={pg.key: pg for pg in groups_in.scheduler_plugins},
        jobs={j.metadata.uid: j for j in groups_in.jobs if j.metadata.uid},
        upstream={pg.key: pg for pg in groups_in.upstream},
        upstream_workloads={w.key: w for w in groups_in.upstream_workloads},
    )
    drafts: dict[GangKey, _Draft] = {}
    make = member or (lambda pod: gang_pod(pod, classes))
    gangs: list[Gang] = []
    # Member order is settled by rank in `_finish`, and gangs are sorted at the end.
    for pod in pods:
        if not discovered(pod):
            continue
        key, source = membership_of(pod) if membership_of is not None else membership(pod, tables.jobs)
        if source == "none":  # a pod alone: no draft, no group, nothing to merge
            gangs.append(lone_gang(pod, make))
            continue
        draft = drafts.get(key)
        if draft is None:  # made once per gang, not once per member
            draft = drafts[key] = _Draft(key=key, source=source)
        draft.members.append(pod)

    for d in drafts.values():
        try:
            _resolve_source(d, tables, classes, tree)
        except _Located as exc:
            d.error = str(exc)
        except InvalidSpecError as exc:
            d.error = f"PodGroup {d.name}: {exc}"

    try:
        tiers, left_out = cons.layer_tiers(tree, cnt), None
    except InvalidSpecError as exc:  # layers that do not chain: only gangs gathering by layer suffer
        tiers = {koord.NODE_LAYER: 0}
        left_out = f"ClusterNetworkTopology {koord.CNT_DEFAULT_NAME} is left out: {exc}"
    gangs += [
        _finish(group, make, tiers, tree, nvlink_label, left_out)
        for group in _merge_gang_groups(list(drafts.values()))
    ]
    return sorted(gangs, key=lambda g: natural_key(g.key))


def discovered(pod: Pod) -> bool:
    """Whether discovery puts `pod` in a gang: not when finished, nor when pending and being
    deleted (never placed; kube-scheduler skips it too)."""
    # `Pod.terminal` and `Pod.bound` read in place: asked of every pod of every gang discovered.
    status = pod.status
    if status is not None and status.phase in ("Succeeded", "Failed"):
        return False
    return bool(pod.spec.node_name) or pod.metadata.deletion_timestamp is None


def lone_gang(pod: Pod, member: MemberFn) -> Gang:
    """The gang of a pod that names none (`membership` says `none`): the pod alone, one
    member of one, its own priority, policy and scheduler. Nothing else is read (no group can
    name or merge it), so a cache builds the gangs of every such bound pod without discovery's
    tables: most pods of a large cluster are these."""
    gp, error = member(pod)
    return Gang(
        key=gang_key("none", pod.key),
        pods=(gp,),
        min_member=1,
        priority=gp.priority,
        preemption_policy="Never" if gp.preemption_policy == "Never" else "PreemptLowerPriority",
        constraint=None,
        source="none",
        scheduler_name=scheduler_name(pod),
        error=error,
        creation=pod.metadata.creation_timestamp or "",
    )


def membership(pod: Pod, jobs: Mapping[str, Job] | None = None) -> tuple[GangKey, GangSource]:
    """The key of the gang `pod` names (before GangGroups merge gangs), and the dialect naming
    it; `jobs` (by uid) are the Jobs in view, for the GPU dialect's gangs.

    The Koordinator and scheduler-plugins markers come before Volcano's group-name annotation:
    that annotation is what translating such a gang for Volcano adds, and the gang must not
    change meaning (or placement) when the translation lands."""
    ns = pod.namespace
    ann = pod.metadata.annotations or {}
    labels = pod.metadata.labels or {}
    named = koordinator_gang_of(labels, ann)
    if named is not None:
        name, source = named
        return gang_key(source, f"{ns}/{name}"), source
    upstream_group = upstream_gangs.pod_group_of(pod)
    if upstream_group is not None:
        return gang_key("upstream", upstream_group), "upstream"
    if volcano.GROUP_NAME_ANNOTATION in ann:
        return gang_key("volcano", f"{ns}/{ann[volcano.GROUP_NAME_ANNOTATION]}"), "volcano"
    if labels.get(kueue.POD_GROUP_NAME_LABEL) and kueue.has_tas_annotations(ann):
        return gang_key("kueue", f"{ns}/{labels[kueue.POD_GROUP_NAME_LABEL]}"), "kueue"
    lws_group = _lws_group(labels)
    if lws_group is not None and ann.get(kueue.GROUP_NAME):
        return gang_key("kueue", f"{ns}/{lws_group}"), "kueue"
    job_gang = _job_gang(pod, jobs or {})
    if job_gang is not None:
        return job_gang, "job"
    return gang_key("none", pod.key), "none"


def koordinator_gang_of(
    labels: Mapping[str, str], annotations: Mapping[str, str]
) -> tuple[str, GangSource] | None:
    """The Koordinator (or scheduler-plugins) gang a pod names, and the source naming it: the
    `pod-group.scheduling.sigs.k8s.io` label first, as Koordinator reads it, then the
    scheduler-plugins label, then the `gang.scheduling.koordinator.sh/name` annotation. The
    one reading of a pod's gang name: the scheduler, the webhook and `translate` call it."""
    if koord.SIGS_POD_GROUP_LABEL in labels:
        return labels[koord.SIGS_POD_GROUP_LABEL], "koordinator"
    if schedplugins.POD_GROUP_LABEL in labels:
        return labels[schedplugins.POD_GROUP_LABEL], "scheduler-plugins"
    if koord.GANG_NAME in annotations:
        return annotations[koord.GANG_NAME], "koordinator-annotations"
    return None


def _lws_group(labels: Mapping[str, str]) -> str | None:
    """`<lws>-<group index>`: the leader and workers of one LeaderWorkerSet group."""
    name, index = labels.get(lwsmod.NAME_LABEL), labels.get(lwsmod.GROUP_INDEX_LABEL)
    return f"{name}-{index}" if name and index is not None else None


def _job_gang(pod: Pod, jobs: Mapping[str, Job]) -> GangKey | None:
    """`namespace/<job>` when the pod's Job (or, without it, the pod) asks for a multi-node gang."""
    uid = gpumod.job_uid_of(pod)
    if uid is None:
        return None
    job = jobs.get(uid)
    if not _asks_tas(pod, job):  # else a gang whatever the GPU request says: not read then
        request, _ = gpumod.pod_request(pod, job)
        if request is None or not request.multi_node:
            return None
    labels = pod.metadata.labels or {}
    name = (
        job.name if job is not None else labels.get("job-name") or labels.get("batch.kubernetes.io/job-name")
    )
    return gang_key("job", f"{pod.namespace}/{name or uid}")


def _asks_tas(pod: Pod, job: Job | None) -> bool:
    """`kueue.has_tas_annotations` of `_template_annotations`, without merging the two."""
    return kueue.has_tas_annotations(_job_template_annotations(job)) or kueue.has_tas_annotations(
        pod.metadata.annotations or {}
    )


def _template_annotations(pod: Pod, job: Job | None) -> Mapping[str, Any]:
    """The pod's annotations over its Job template's (the template's reach the pod; a pod seen
    without its Job still carries them)."""
    return {**_job_template_annotations(job), **(pod.metadata.annotations or {})}


def _job_template_annotations(job: Job | None) -> Mapping[str, Any]:
    template = (job.spec.template.metadata or {}).get("annotations") if job is not None else None
    return template if isinstance(template, Mapping) else {}


@dataclass(frozen=True)
class _Tables:
    volcano: Mapping[str, volcano.PodGroup]
    koordinator: Mapping[str, koord.SigsPodGroup]
    scheduler_plugins: Mapping[str, schedplugins.XPodGroup]
    jobs: Mapping[str, Job] = field(default_factory=dict)
    """By uid."""
    upstream: Mapping[str, workload.PodGroup] = field(default_factory=dict)
    upstream_workloads: Mapping[str, workload.WorkloadV1alpha1] = field(default_factory=dict)


def _resolve_source(
    d: _Draft, tables: _Tables, classes: Mapping[str, PriorityClass], tree: TopologyTree | None
) -> None:
    """Fill the draft from what its dialect states: the PodGroup, the Job or the pods."""
    if d.source == "job":
        _resolve_job(d, tables, tree)
    elif d.source == "kueue":
        _resolve_kueue_pods(d, tree)
    elif d.source == "volcano":
        _resolve_volcano(d, tables, classes, tree)
    elif d.source in ("koordinator", "scheduler-plugins"):
        _resolve_pod_group(d, tables)
    elif d.source == "upstream":
        _resolve_upstream(d, tables, classes, tree)
    else:
        _resolve_pod_annotations(d)


def _resolve_job(d: _Draft, tables: _Tables, tree: TopologyTree | None) -> None:
    first = d.members[0]
    uid = gpumod.job_uid_of(first)
    job = tables.jobs.get(uid) if uid is not None else None
    request, problems = gpumod.pod_request(first, job)
    d.gpu = request
    if problems:
        where = f"Job {d.name}" if job is not None else f"pod {first.key}"
        raise _Located(f"{where}: {problems[0]}")
    # Without its Job in view, the pods present are the gang (their annotations said so).
    d.min_member = job.gang_size if job is not None else len(d.members)
    d.creation = (job or first).metadata.creation_timestamp or ""
    _resolve_kueue(d, first, job, tree)


def _resolve_kueue_pods(d: _Draft, tree: TopologyTree | None) -> None:
    """A Kueue pod group (plain pods, or the leader and workers of one LeaderWorkerSet group
    whose templates share a `podset-group-name`): `pod-group-total-count` (else the LWS group
    size) pods, else those present; the TAS annotations as Kueue reads them, from the first
    pod by rank (the leader)."""
    first = min(d.members, key=lambda p: _rank_key(_safe_rank(p), p.key))
    d.min_member = len(d.members)
    for key in (kueue.POD_GROUP_TOTAL_COUNT, lwsmod.SIZE_ANNOTATION):
        raw = next((p.metadata.annotation(key) for p in d.members if p.metadata.annotation(key)), None)
        if raw is not None:
            try:
                d.min_member = koord.parse_non_negative_int(key, raw)
            except InvalidSpecError as exc:
                raise _Located(f"pod {first.key}: {exc}") from None
            break
    d.creation = min((p.metadata.creation_timestamp or "" for p in d.members), default="")
    _resolve_kueue(d, first, None, tree)


def _resolve_volcano(
    d: _Draft, tables: _Tables, classes: Mapping[str, PriorityClass], tree: TopologyTree | None
) -> None:
    pg = tables.volcano.get(d.name)
    if pg is None:
        d.error = f"PodGroup {shown_name(d.name)} ({volcano.PODGROUP_GROUP}) not found: its pods wait until it exists"
        return
    d.creation = pg.metadata.creation_timestamp or ""
    d.min_member = pg.spec.min_member if pg.spec.min_member is not None else 1
    d.pg_priority = class_priority(pg.spec.priority_class_name, classes)
    d.constraint = cons.from_volcano(pg.spec.network_topology, tree, warnings=d.warnings)
    if d.constraint is None:
        d.constraint = _volcano_pod_constraint(d.members)
    d.volcano_policies = pg.spec.sub_group_policy or ()
    d.allocated_hypernode = (pg.metadata.annotations or {}).get(
        volcano.JOB_ALLOCATED_HYPERNODE_ANNOTATION
    ) or None


def _resolve_pod_group(d: _Draft, tables: _Tables) -> None:
    """A sigs.k8s.io PodGroup (Koordinator's or the scheduler-plugins' group), with
    Koordinator's gang annotations on it."""
    pgx: koord.SigsPodGroup | schedplugins.XPodGroup | None
    if d.source == "koordinator":
        pgx, group = tables.koordinator.get(d.name), koord.SIGS_GROUP
    else:
        pgx, group = tables.scheduler_plugins.get(d.name), schedplugins.GROUP
    if pgx is None:
        d.error = f"PodGroup {shown_name(d.name)} ({group}) not found: its pods wait until it exists"
        return
    d.creation = pgx.metadata.creation_timestamp or ""
    d.min_member = pgx.spec.min_member if pgx.spec.min_member is not None else 1
    ga = _annotations(pgx.metadata.annotations, f"PodGroup {d.name}")
    d.groups = ga.groups or ()
    d.gather_spec = ga.network_topology
    if pgx.spec.schedule_timeout_seconds is not None:
        d.timeout = float(pgx.spec.schedule_timeout_seconds)
    elif ga.waiting_time_seconds is not None:
        d.timeout = ga.waiting_time_seconds
    elif d.source == "koordinator":
        d.timeout = KOORDINATOR_DEFAULT_WAITING_SECONDS


def _resolve_upstream(
    d: _Draft, tables: _Tables, classes: Mapping[str, PriorityClass], tree: TopologyTree | None
) -> None:
    """Kubernetes' own PodGroup (`translations.upstream_gangs`)."""
    r = (
        upstream_gangs.resolve_v1alpha1(d.name, tables.upstream_workloads, d.members)
        if upstream_gangs.workload_of(d.name) is not None
        else upstream_gangs.resolve(d.name, tables.upstream, d.members, classes, tree)
    )
    d.min_member, d.constraint, d.pg_priority = r.min_member, r.constraint, r.priority
    d.never_preempts, d.creation, d.error = r.never_preempts, r.creation, r.error
    d.disruption_min = r.disruption_min


def _resolve_pod_annotations(d: _Draft) -> None:
    """Koordinator annotations on the pods themselves: the first member that states a value wins."""
    parsed = [_annotations(p.metadata.annotations, f"pod {p.key}") for p in d.members]
    d.creation = min((p.metadata.creation_timestamp or "" for p in d.members), default="")
    mins = [ga.min_available for ga in parsed if ga.min_available is not None]
    totals = [ga.total_number for ga in parsed if ga.total_number is not None]
    d.min_member = mins[0] if mins else (totals[0] if totals else len(d.members))
    d.groups = next((ga.groups for ga in parsed if ga.groups), ())
    d.gather_spec = next((ga.network_topology for ga in parsed if ga.network_topology is not None), None)
    d.timeout = next(
        (ga.waiting_time_seconds for ga in parsed if ga.waiting_time_seconds is not None),
        KOORDINATOR_DEFAULT_WAITING_SECONDS,
    )


def _resolve_kueue(d: _Draft, first: Pod, job: Job | None, tree: TopologyTree | None) -> None:
    """Kueue's TAS annotations on the Job's pod template (`translations.kueue`): required is a
    hard limit at the level's tier, preferred a soft one, unconstrained none; each slice layer
    keeps `size` consecutive ranks in one domain of its level. Levels are node label keys: a
    required one the tree has no tier for leaves the gang pending, saying so."""
    where = f"Job {d.name}" if job is not None else f"pod {first.key}"
    path = "spec.template.metadata.annotations" if job is not None else "metadata.annotations"
    request, problems = kueue.tas_request(
        _template_annotations(first, job), path=path, pod_count=d.min_member
    )
    if problems:
        raise _Located(f"{where}: {problems[0]}")
    if request is None:
        return
    d.kueue = request
    if request.level is not None:
        tier = _kueue_tier(request.level, tree, request, where)
        if tier is not None:
            d.constraint = TopologyConstraint("hard" if request.required else "soft", tier)
    for layer in request.slices:
        slice_tier = _kueue_tier(layer.topology, tree, request, where)  # a slice level must exist too
        if request.required is not None and slice_tier is not None and d.constraint is not None:
            required_tier = d.constraint.highest_tier
            if required_tier is not None and slice_tier > required_tier:
                raise _Located(
                    f"{where}: {request.path}: slice level {layer.topology!r} is above the required "
                    f"level {request.required!r}: Kueue assigns no topology to such a pod set"
                )


def _kueue_tier(level: str, tree: TopologyTree | None, request: kueue.TasRequest, where: str) -> int | None:
    tier = tree.tier_of_label(level) if tree is not None else (0 if level == kueue.HOSTNAME_LABEL else None)
    if tier is None and (request.required == level or level != request.preferred):
        known = ", ".join(tree.tier_labels.values()) if tree is not None else ""
        raise _Located(
            f"{where}: {request.path}: level {level!r} is no level of the topology tree "
            f"(levels: {known or 'none'}, {kueue.HOSTNAME_LABEL}): Kueue's required topology cannot be kept"
        )
    return tier


def _kueue_slice_tiers(request: kueue.TasRequest, tree: TopologyTree | None) -> tuple[tuple[int, int], ...]:
    """Each slice layer as (tier, size), outermost first: `size` consecutive ranks in one
    domain of the tier, every layer at once (the placer counts whole slices per domain)."""
    out: list[tuple[int, int]] = []
    for layer in request.slices:
        tier = tree.tier_of_label(layer.topology) if tree is not None else None
        if tier is not None and layer.size > 0:
            out.append((tier, layer.size))
    return tuple(out)


def _annotations(annotations: dict[str, str] | None, where: str) -> koord.GangAnnotations:
    try:
        return koord.parse_gang_annotations(annotations)
    except InvalidSpecError as exc:
        raise _Located(f"{where}: {exc}") from None


def _volcano_pod_constraint(members: Sequence[Pod]) -> TopologyConstraint | None:
    """Volcano's pod-level annotations, read from the first member that has them."""
    for pod in members:
        ann = pod.metadata.annotations or {}
        mode = ann.get(volcano.POD_TOPOLOGY_MODE_ANNOTATION)
        tier = ann.get(volcano.POD_TOPOLOGY_TIER_ANNOTATION)
        if mode is None and tier is None:
            continue
        if mode is not None and mode not in ("hard", "soft"):
            raise _Located(
                f"pod {pod.key}: metadata.annotations[{volcano.POD_TOPOLOGY_MODE_ANNOTATION}]: "
                f'Unsupported value: "{mode}": supported values: "hard", "soft"'
            )
        tier_value: int | None = None
        if tier is not None:
            try:
                tier_value = koord.parse_non_negative_int(volcano.POD_TOPOLOGY_TIER_ANNOTATION, tier)
            except InvalidSpecError as exc:
                raise _Located(f"pod {pod.key}: {exc}") from None
        return TopologyConstraint("soft" if mode == "soft" else "hard", tier_value)
    return None


def _merge_gang_groups(drafts: list[_Draft]) -> list[list[_Draft]]:
    """Union the gangs a `groups` annotation lists; a listed gang that does not exist is ignored."""
    parent = {d.key: d.key for d in drafts}

    def find(k: GangKey) -> GangKey:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for d in drafts:
        for other in d.groups:
            ok = koordinator_key(other)
            if ok in parent and ok != d.key:
                a, b = find(d.key), find(ok)
                if a != b:
                    first, second = sorted((a, b), key=natural_key)
                    parent[second] = first
    groups: dict[GangKey, list[_Draft]] = defaultdict(list)
    for d in drafts:
        groups[find(d.key)].append(d)
    return [g if len(g) == 1 else sorted(g, key=lambda d: natural_key(d.key)) for g in groups.values()]


def _finish(
    group: list[_Draft],
    member: MemberFn,
    tiers: dict[str, int],
    tree: TopologyTree | None,
    nvlink_label: str = gpumod.NVLINK_LABEL,
    layers_left_out: str | None = None,
) -> Gang:
    """One gang from its drafts (several for a GangGroup). `layers_left_out`: why the
    ClusterNetworkTopology's layers are unknown, told to a gang that gathers by one."""
    head = group[0]
    error = next((d.error for d in group if d.error), None)
    constraint = next((d.constraint for d in group if d.constraint is not None), None)
    gather = head.gather_spec
    if len(group) > 1:
        error = error or koord.gang_group_spec_conflict([(d.name, d.gather_spec) for d in group])
    members: list[GangPod] = []
    for d in group:
        pods, pod_error = _gang_pods(d.members, member)
        members.extend(pods)
        error = error or pod_error
    if len(members) > 1:
        _rank_order(members)
    subgroups: list[SubGroup] = []
    if gather is not None and error is None:
        try:
            constraint = cons.from_koordinator(gather, tiers)
            subgroups.extend(_pod_count_multiples(gather, tiers, members))
        except InvalidSpecError as exc:
            error = f"gang {head.name}: {exc}" + (f" ({layers_left_out})" if layers_left_out else "")
    slices = _kueue_slice_tiers(head.kueue, tree) if head.kueue is not None and error is None else ()
    for d in group:
        if error is not None:
            break
        try:
            subgroups.extend(_volcano_subgroups(d.volcano_policies, members, tree))
        except InvalidSpecError as exc:
            error = f"PodGroup {d.name}: {exc}"
    pg_prios = [d.pg_priority for d in group if d.pg_priority is not None]
    pending = [m for m in members if not m.bound] or members
    never = any(d.never_preempts for d in group) or any(m.preemption_policy == "Never" for m in pending)
    return Gang(
        key=head.key,
        pods=tuple(members),
        min_member=sum(d.min_member or 0 for d in group),
        priority=min(pg_prios) if pg_prios else min(m.priority for m in pending),
        preemption_policy="Never" if never else "PreemptLowerPriority",
        constraint=constraint,
        subgroups=tuple(subgroups),
        source=head.source,
        scheduler_name=_scheduler_of(members),
        error=error,
        all_or_nothing=len(group) > 1 or head.source in ("job", "kueue"),
        creation=min((d.creation for d in group), default=""),
        schedule_timeout=min((d.timeout for d in group if d.timeout is not None), default=None),
        gpu=gpumod.GpuGang(head.gpu, nvlink_label) if head.gpu is not None else None,
        warnings=tuple(w for d in group for w in d.warnings),
        disruption_min=head.disruption_min,
        kueue_tas=head.kueue is not None,
        slices=slices,
        min_sub_groups=tuple(
            (pol.name or f"policy-{i}", pol.min_sub_groups)
            for d in group
            for i, pol in enumerate(d.volcano_policies)
            if pol.min_sub_groups
        ),
        allocated_hypernode=head.allocated_hypernode,
    )


def _gang_pods(pods: Sequence[Pod], member: MemberFn) -> tuple[list[GangPod], str | None]:
    """The members, and the first error that makes the gang unusable (a bad request or index)."""
    out: list[GangPod] = []
    error: str | None = None
    for pod in pods:
        gp, pod_error = member(pod)
        error = error or pod_error
        out.append(gp)
    return out, error


def gang_pod(pod: Pod, classes: Mapping[str, PriorityClass]) -> tuple[GangPod, str | None]:
    """One member as the placer sees it, and why it makes its gang unusable (None: it does not)."""
    prio, policy = resolve_priority(pod, classes)
    req: dict[str, int] = {}
    rank: int | None = None
    error: str | None = None
    try:
        req = _requests(pod)
        rank = _rank(pod)
    except InvalidSpecError as exc:
        error = f"pod {pod.key}: {exc}"
    req["pods"] = 1
    req = _shared_requests(req)
    # Only pending pods are ever placed: bound ones need no shape.
    shape = "" if pod.bound else _shape(pod, req)
    # Interned: the cache keeps the same string for the pod (`ClusterState.put`), one per pod.
    return GangPod(pod, sys.intern(pod.key), rank, prio, policy, req, shape), error


SHARED_REQUESTS = 4096
"""Distinct requests whose dict members share (`_shared_requests`); past that, it starts afresh."""
_shared: dict[tuple[tuple[str, int], ...], dict[str, int]] = {}


def _shared_requests(req: dict[str, int]) -> dict[str, int]:
    """One dict per distinct requests (their items in the same order), shared by every member
    asking them: `GangPod.requests` is read-only, and a large cluster's pods ask a few shapes
    (a dict of its own cost each pod about 200 bytes)."""
    key = tuple(req.items())
    hit = _shared.get(key)
    if hit is None:
        if len(_shared) >= SHARED_REQUESTS:
            _shared.clear()
        hit = _shared[key] = req
    return hit


_last_requests: tuple[tuple[object, ...], dict[str, int]] | None = None
_last_shape: tuple[tuple[object, ...], dict[str, int], str] | None = None
"""The parts of the last pod read that its requests (its shape) are made of, and what they
made: a gang's pods are read one after another and the pods of one template share those
parts (`translations.expand.parse_pods`); models are replaced, never changed, so the same
objects make the same result."""


def _requests(pod: Pod) -> dict[str, int]:
    """`effective_requests` of the pod, a copy of the last pod's when made of the same parts."""
    global _last_requests
    spec = pod.spec
    parts = (spec.containers, spec.init_containers, spec.overhead, spec.resources, pod.status)
    memo = _last_requests
    if memo is None or not _same(memo[0], parts):
        memo = _last_requests = (parts, effective_requests(spec, pod.status))
    return dict(memo[1])


def _shape(pod: Pod, requests: dict[str, int]) -> str:
    """`placement_shape`, the last pod's when made of the same parts and requests."""
    global _last_shape
    spec = pod.spec
    parts = (
        spec.containers,
        spec.node_selector,
        spec.affinity,
        spec.tolerations,
        spec.topology_spread_constraints,
    )
    memo = _last_shape
    if memo is None or memo[1] != requests or not _same(memo[0], parts):
        memo = _last_shape = (parts, dict(requests), placement_shape(pod, requests))
    return memo[2]


def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """The same objects, place by place (`a` and `b` are made alike: of one length)."""
    return all(map(is_, a, b))


def bound_member(member: GangPod, pod: Pod) -> GangPod:
    """The member `gang_pod` makes of `pod`, the pending pod of `member` bound as it was (the
    same model but for `spec.nodeName`, which no part of a member but its shape reads): what
    a scheduler that just bound it already knows, without reading the pod again. Copied
    field by field, its rank order too (made of its rank and key, which a bind leaves)."""
    bound = object.__new__(GangPod)
    for name in GangPod.__slots__:
        object.__setattr__(bound, name, getattr(member, name))
    object.__setattr__(bound, "pod", pod)
    object.__setattr__(bound, "shape", "")
    return bound


def safe_gang_pod(pod: Pod, classes: Mapping[str, PriorityClass]) -> tuple[GangPod, str | None]:
    """`gang_pod`, never raising: a pod that cannot be read at all (not only a spec error) is a
    member that asks for one pod slot and makes its gang unusable with the failure's text."""
    try:
        return gang_pod(pod, classes)
    except Exception as exc:
        return _bare_member(pod), f"pod {pod.key}: {failure_text(exc)}"


def unusable_gang(key: GangKey, pods: Sequence[Pod], error: str, *, member: MemberFn | None = None) -> Gang:
    """A gang that cannot be scheduled as its objects stand: its pods stay pending with `error`
    (their PodGroup and Events say it) while every other gang schedules. Built from parts that
    cannot fail: members `member` cannot read ask for one pod slot only."""
    members: list[GangPod] = []
    for pod in pods:
        try:
            gp = member(pod)[0] if member is not None else _bare_member(pod)
        except Exception:
            gp = _bare_member(pod)
        members.append(gp)
    source = _SOURCE_OF_DIALECT.get(key.split(":", 1)[0], "none")
    return Gang(
        key=key,
        pods=tuple(members),
        min_member=len(members),
        priority=min((m.priority for m in members), default=0),
        preemption_policy="Never",
        constraint=None,
        source=source,
        scheduler_name=_scheduler_of(members),
        error=error,
    )


def _scheduler_of(members: Sequence[GangPod]) -> str:
    """`Gang.scheduler_name`: the first pending member's, else the first member's."""
    first = next((m for m in members if not m.bound), members[0] if members else None)
    return scheduler_name(first.pod) if first is not None else ""


def _bare_member(pod: Pod) -> GangPod:
    return GangPod(pod, pod.key, None, pod.spec.priority or 0, "Never", {"pods": 1}, shape=pod.key)


def placement_shape(pod: Pod, requests: Mapping[str, int]) -> str:
    """Canonical text of what decides where a pod may go and how much room it takes."""
    spec = pod.spec
    na = spec.affinity.node_affinity if spec.affinity else None
    required = na.required_during_scheduling_ignored_during_execution if na else None
    affinity = json.dumps(required.to_dict(), sort_keys=True) if required is not None else ""
    tolerations = tuple((t.key, t.operator, t.value, t.effect) for t in spec.tolerations or ())
    # Inter-pod terms (pod affinity, spread, host ports) relate a pod to others: part of its shape.
    inter = json.dumps(
        {
            "affinity": spec.affinity.to_dict() if spec.affinity is not None else None,
            "spread": [c.to_dict() for c in spec.topology_spread_constraints or ()],
            "hostPorts": sorted(
                (p.protocol or "TCP", p.host_ip or "", p.host_port)
                for c in spec.containers
                for p in c.ports or ()
                if p.host_port
            ),
        },
        sort_keys=True,
    )
    return repr(
        (sorted(requests.items()), sorted((spec.node_selector or {}).items()), affinity, tolerations, inter)
    )


def _rank(pod: Pod) -> int | None:
    ann = pod.metadata.annotations or {}
    raw = ann.get(koord.NETWORK_TOPOLOGY_INDEX)
    if raw is not None:
        return koord.parse_non_negative_int(koord.NETWORK_TOPOLOGY_INDEX, raw)
    worker = (pod.metadata.labels or {}).get(lwsmod.WORKER_INDEX_LABEL)
    if worker is not None and (rank := bounded_decimal(worker, INT32_MAX)) is not None:
        return rank
    index = gpumod.completion_index(pod)
    if index is not None:
        return koord.parse_non_negative_int(gpumod.COMPLETION_INDEX, index)
    group_index = (pod.metadata.labels or {}).get(kueue.POD_GROUP_POD_INDEX_LABEL)
    if group_index is not None:
        return koord.parse_non_negative_int(kueue.POD_GROUP_POD_INDEX_LABEL, group_index)
    return None


def _safe_rank(pod: Pod) -> int | None:
    try:
        return _rank(pod)
    except InvalidSpecError:
        return None


def _rank_order(members: list[GangPod]) -> None:
    """Sort `members` into rank order (`GangPod.order`). Members that all carry a rank, each
    a different one, are in that order by their ranks alone: sorted by them, without making
    each member's full key (its name's natural key is there only to break a tie)."""
    ranks = [m.rank for m in members]
    if None not in ranks and len(set(ranks)) == len(ranks):
        members.sort(key=attrgetter("rank"))
    else:
        members.sort(key=attrgetter("order"))


def _rank_key(rank: int | None, key: str) -> RankKey:
    """Ranked pods first by rank; unranked after them by name (natural order)."""
    return (0, rank, natural_key(key)) if rank is not None else (1, 0, natural_key(key))


def _pod_count_multiples(
    spec: koord.NetworkTopologyGatherSpec, tiers: dict[str, int], members: Sequence[GangPod]
) -> list[SubGroup]:
    """`podCountMultiple: N` at layer L: every L domain holds a multiple of N of the gang's pods,
    which consecutive ranks in chunks of N, each inside one L domain, satisfy."""
    out: list[SubGroup] = []
    keys = [m.key for m in members]
    for g in spec.gather_strategy:
        n = g.pod_count_multiple
        if n is None or n <= 1:
            continue
        hard = TopologyConstraint("hard", tiers[g.layer])
        for i in range(0, len(keys), n):
            out.append(SubGroup(f"{g.layer}x{n}-{i // n}", tuple(keys[i : i + n]), hard))
    return out


def _volcano_subgroups(
    policies: Sequence[volcano.SubGroupPolicy], members: Sequence[GangPod], tree: TopologyTree | None
) -> list[SubGroup]:
    """Volcano subGroupPolicy: pods matching the selector, one subgroup per value of the
    matchLabelKeys (a pod lacking one of those labels, or with it empty, is no member of the
    policy: it stays with the job, as in Volcano), else chunked `subGroupSize` at a time in
    rank order. A pod joins the first policy it matches. A subgroup without networkTopology
    still counts for `minSubGroups`; it gathers nowhere tighter than its job."""
    out: list[SubGroup] = []
    taken: set[str] = set()
    for i, pol in enumerate(policies):
        field_path = f"spec.subGroupPolicy[{i}].networkTopology"
        constraint = cons.from_volcano(pol.network_topology, tree, field=field_path)
        if constraint is None or constraint.highest_tier is None:
            constraint = TopologyConstraint("soft", None)
        sel = pol.label_selector
        chosen = [
            m
            for m in members
            if m.key not in taken and (sel is None or sel.matches(m.pod.metadata.labels or {}))
        ]
        name = pol.name or f"policy-{i}"
        size = pol.sub_group_size or 1
        if pol.match_label_keys:
            by_value: dict[tuple[str, ...], list[str]] = defaultdict(list)
            for m in chosen:
                labels = m.pod.metadata.labels or {}
                value = tuple(labels.get(k, "") for k in pol.match_label_keys)
                if all(value):
                    by_value[value].append(m.key)
            groups = [(f"{name}/{json.dumps(list(v))}", tuple(keys)) for v, keys in sorted(by_value.items())]
        else:
            flat = [m.key for m in chosen]
            groups = [(f"{name}-{j // size}", tuple(flat[j : j + size])) for j in range(0, len(flat), size)]
        for sub_name, keys in groups:
            taken.update(keys)
            # Without a tier or a minSubGroups, the subgroup asks nothing of the placement.
            if constraint.highest_tier is not None or pol.min_sub_groups:
                out.append(SubGroup(sub_name, keys, constraint, name, size))
    return out
