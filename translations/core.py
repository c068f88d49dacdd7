"""Lean typed views of core Kubernetes objects: Pod, Node, Job, PriorityClass, PodDisruptionBudget.

One way across the project: pure code and the controller both read Pods and Nodes through
these models (the controller turns API responses into plain dicts first). Only what
scheduling and translation need is typed; everything else rides along as extra fields.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal

from pydantic import Field

from translations._base import KubeModel, LabelSelector, TypedObject
from translations.errors import InvalidSpecError
from translations.quantity import Quantity, is_binary, saturate, scheduler_units, to_scheduler_units
from translations.workload import PodSchedulingGroup, PodWorkloadReference

ResourceList = dict[str, Quantity]


class ResourceRequirements(KubeModel):
    """Compute resources of one container."""

    requests: ResourceList | None = None
    """Minimum resources the container needs."""
    limits: ResourceList | None = None
    """Maximum resources the container may use."""


class ContainerPort(KubeModel):
    container_port: int = 0
    host_port: int | None = None
    """Claimed on the node when set and non-zero (NodePorts)."""
    host_ip: str | None = Field(default=None, alias="hostIP")
    protocol: str | None = None


class Container(KubeModel):
    """A container; only its name, resources and host ports matter here."""

    name: str = ""
    """Container name."""
    resources: ResourceRequirements | None = None
    ports: list[ContainerPort] | None = None
    """Requested and limited compute resources."""
    restart_policy: str | None = None
    """`Always` on an init container makes it a sidecar (Kubernetes >= 1.28)."""


class Toleration(KubeModel):
    """Lets a pod land on nodes with a matching taint."""

    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class Taint(KubeModel):
    """Repels pods that do not tolerate it."""

    key: str
    value: str | None = None
    effect: str
    time_added: str | None = None


class NodeSelectorRequirement(KubeModel):
    key: str
    operator: str
    values: list[str] | None = None


class NodeSelectorTerm(KubeModel):
    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


class NodeSelector(KubeModel):
    node_selector_terms: list[NodeSelectorTerm] = Field(default_factory=list)


class PreferredSchedulingTerm(KubeModel):
    """A node selector term the scheduler favours by `weight` (1-100) when a node matches it."""

    weight: int = 0
    preference: NodeSelectorTerm = Field(default_factory=NodeSelectorTerm)


class NodeAffinity(KubeModel):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = None


class PodAffinityTerm(KubeModel):
    """Pods (selected by labels, in some namespaces) that share, or must not share, a value of
    the node label `topologyKey` with this pod."""

    label_selector: LabelSelector | None = None
    """Null selects no pod."""
    namespaces: list[str] | None = None
    namespace_selector: LabelSelector | None = None
    """Null (with no `namespaces`) means this pod's namespace; `{}` means every namespace."""
    topology_key: str = ""
    match_label_keys: list[str] | None = None
    mismatch_label_keys: list[str] | None = None


class WeightedPodAffinityTerm(KubeModel):
    weight: int = 0
    pod_affinity_term: PodAffinityTerm = Field(default_factory=PodAffinityTerm)


class PodAffinity(KubeModel):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None


class Affinity(KubeModel):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None
    """Same shape as `pod_affinity`, opposite meaning."""


class TopologySpreadConstraint(KubeModel):
    max_skew: int = 1
    topology_key: str = ""
    when_unsatisfiable: str = "DoNotSchedule"
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    """Honor (default): only nodes the pod's node selector/affinity allow count."""
    node_taints_policy: str | None = None
    """Ignore (default): tainted nodes count too."""
    match_label_keys: list[str] | None = None


class PodSchedulingGate(KubeModel):
    """While a pod lists any, it is not schedulable (Kubernetes >= 1.27, GA 1.30)."""

    name: str = ""


class PodResourceClaim(KubeModel):
    """A DRA claim the pod uses (`resourceClaimName` or `resourceClaimTemplateName`; GA 1.34)."""

    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodSpec(KubeModel):
    """The parts of a pod spec that decide where it may run."""

    node_name: str | None = None
    scheduler_name: str | None = None
    priority: int | None = None
    priority_class_name: str | None = None
    preemption_policy: str | None = None
    node_selector: dict[str, str] | None = None
    affinity: Affinity | None = None
    tolerations: list[Toleration] | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    containers: list[Container] = Field(default_factory=list)
    init_containers: list[Container] | None = None
    overhead: ResourceList | None = None
    termination_grace_period_seconds: int | None = None
    scheduling_gates: list[PodSchedulingGate] | None = None
    resource_claims: list[PodResourceClaim] | None = None
    workload_ref: PodWorkloadReference | None = None
    """Kubernetes 1.35: the Workload group the pod belongs to (`translations.workload`)."""
    scheduling_group: PodSchedulingGroup | None = None
    """Kubernetes 1.36+: the `scheduling.k8s.io` PodGroup the pod belongs to."""
    resources: ResourceRequirements | None = None
    """Pod-level resources (beta 1.34): when they name a resource, they are the pod's request
    for it, whatever its containers ask."""


class PodCondition(KubeModel):
    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None
    last_probe_time: str | None = None


class ContainerStatus(KubeModel):
    name: str = ""
    allocated_resources: ResourceList | None = None
    """What the kubelet allocated to a running container (in-place resize, 1.33+); while a
    resize is pending it may differ from the spec's request."""


class PodStatus(KubeModel):
    phase: str | None = None
    conditions: list[PodCondition] | None = None
    nominated_node_name: str | None = None
    container_statuses: list[ContainerStatus] | None = None
    start_time: str | None = None
    """RFC 3339, set by the kubelet when it accepts the pod; preemption spares the
    earlier-started of two equal victims, as kube-scheduler does."""


class PodTemplateSpec(KubeModel):
    """A pod template: metadata plus spec."""

    metadata: dict[str, object] | None = None
    spec: PodSpec = Field(default_factory=PodSpec)


class Pod(TypedObject):
    api_version: str | None = "v1"
    kind: str | None = "Pod"
    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus | None = None

    @property
    def bound(self) -> bool:
        return bool(self.spec.node_name)

    @property
    def terminal(self) -> bool:
        return (self.status.phase if self.status else None) in ("Succeeded", "Failed")


def effective_requests(spec: PodSpec, status: PodStatus | None = None) -> dict[str, int]:
    """A pod's request as kube-scheduler computes it, in scheduler units.

    Per container a limit stands in for a missing request; the pod needs the larger of the
    sum over regular containers (plus sidecars) and the largest single init container, plus
    the pod overhead. Pod-level `spec.resources` replace the containers' sum for what they
    name; a container whose `status` shows more allocated than its spec asks (an in-place
    resize under way) counts the larger. Sums saturate at the scheduler-unit bound, as each quantity does
    (`translations.quantity`): a pod's request never exceeds it.
    """
    # Plain dicts and module-level helpers: this runs for every pod admitted and every pod
    # in every scheduling cycle, where defaultdicts and a closure per call cost more than
    # the quantities themselves.
    containers = spec.containers
    allocated = _allocated(status)
    if (
        len(containers) == 1
        and not spec.init_containers
        and not spec.overhead
        and spec.resources is None
        and not allocated
    ):
        # Most pods: one container's request is the pod's, with no sums to make.
        return {k: v for k, v in _container_units(containers[0], "containers", 0).items() if v}
    total = _containers_sum(containers, allocated)
    if spec.init_containers:
        _with_init_containers(total, spec.init_containers)
    if spec.resources is not None:
        # Pod-level resources replace the containers' sum for the resources they name.
        total.update(_container_units(Container(resources=spec.resources), "resources", -1))
    for name, q in (spec.overhead or {}).items():
        total[name] = total.get(name, 0) + to_scheduler_units(name, q, field=f"spec.overhead[{name}]")
    return {k: saturate(v) for k, v in total.items() if v}


def _containers_sum(
    containers: Sequence[Container], allocated: Mapping[str, Mapping[str, int]]
) -> dict[str, int]:
    """The regular containers' requests added up; a resize in flight counts the larger of the
    spec and what `status` shows allocated."""
    total: dict[str, int] = {}
    for i, c in enumerate(containers):
        units = _container_units(c, "containers", i)
        for name, v in allocated.get(c.name, {}).items():
            units[name] = max(units.get(name, 0), v)
        for name, v in units.items():
            total[name] = total.get(name, 0) + v
    return total


def _with_init_containers(total: dict[str, int], init_containers: Sequence[Container]) -> None:
    """Add the sidecars (init containers that keep running) to `total`, then raise it to the
    peak any init container needs while it runs beside the sidecars started before it."""
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for i, c in enumerate(init_containers):
        req = _container_units(c, "initContainers", i)
        if c.restart_policy == "Always":
            for name, v in req.items():
                sidecars[name] = sidecars.get(name, 0) + v
            for name in req:
                init_peak[name] = max(init_peak.get(name, 0), sidecars[name])
        else:
            for name, v in req.items():
                init_peak[name] = max(init_peak.get(name, 0), v + sidecars.get(name, 0))
    for name, v in sidecars.items():
        total[name] = total.get(name, 0) + v
    for name, v in init_peak.items():
        total[name] = max(total.get(name, 0), v)


def binary_formats(template: PodTemplateSpec) -> dict[str, bool]:
    """Per resource, whether the first quantity written for it uses a power-of-two suffix:
    Kubernetes keeps the first operand's format when it adds quantities."""
    out: dict[str, bool] = {}
    spec = template.spec

    def see(items: Mapping[str, Quantity] | None) -> None:
        for name, q in (items or {}).items():
            out.setdefault(name, is_binary(q))

    for c in [*spec.containers, *(spec.init_containers or [])]:
        if c.resources is not None:
            see(c.resources.requests)
            see(c.resources.limits)
    see(spec.overhead)
    return out


def _allocated(status: PodStatus | None) -> dict[str, dict[str, int]]:
    """Per container, what the kubelet allocated (in-place resize), in scheduler units; a
    quantity that cannot be read is left out (the spec's request still counts)."""
    out: dict[str, dict[str, int]] = {}
    for cs in (status.container_statuses or []) if status is not None else []:
        units: dict[str, int] = {}
        for name, q in (cs.allocated_resources or {}).items():
            try:
                units[name] = scheduler_units(name, q)
            except InvalidSpecError:
                continue
        if units:
            out[cs.name] = units
    return out


def _container_units(c: Container, where: str, i: int) -> dict[str, int]:
    """One container's requests in scheduler units, a limit standing in for a missing request."""
    res = c.resources
    if res is None:
        return {}
    requests, limits = res.requests, res.limits
    merged: dict[str, Quantity] = {**limits, **requests} if requests and limits else requests or limits or {}
    units: dict[str, int] = {}
    for name, q in merged.items():
        try:
            units[name] = scheduler_units(name, q)
        except InvalidSpecError as exc:  # the field's path is only spelled out when it is needed
            field = "requests" if requests and name in requests else "limits"
            path = f"spec.{where}[{i}].resources" if i >= 0 else f"spec.{where}"
            raise InvalidSpecError(f"{path}.{field}[{name}]", q, exc.detail) from None
    return units


class NodeSpec(KubeModel):
    unschedulable: bool | None = None
    taints: list[Taint] | None = None


class NodeStatus(KubeModel):
    allocatable: ResourceList | None = None
    capacity: ResourceList | None = None
    conditions: list[dict[str, object]] | None = None


class Node(TypedObject):
    api_version: str | None = "v1"
    kind: str | None = "Node"
    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus | None = None

    DEFAULT_MAX_PODS: ClassVar[int] = 110

    def allocatable(self) -> dict[str, int]:
        """Allocatable in scheduler units; a node that states no `pods` gets 110."""
        st = self.status or NodeStatus()
        raw = st.allocatable if st.allocatable is not None else (st.capacity or {})
        return dict(_allocatable_units(tuple(raw.items()), self.DEFAULT_MAX_PODS))


@functools.lru_cache(maxsize=1024)
def _allocatable_units(raw: tuple[tuple[str, Quantity], ...], max_pods: int) -> Mapping[str, int]:
    """`Node.allocatable` of one stated allocatable, read once for every node that states it
    (a cluster's nodes come in a few shapes; read-only: the caller copies it)."""
    out = {name: to_scheduler_units(name, q, field=f"status.allocatable[{name}]") for name, q in raw}
    out.setdefault("pods", max_pods)
    return out


class JobSpec(KubeModel):
    """The parts of a batch/v1 Job spec that make its pods a gang."""

    parallelism: int | None = None
    """Pods running at once (the API server defaults it to 1)."""
    completions: int | None = None
    """Successful pods the Job needs; None: any one success ends it."""
    completion_mode: str | None = None
    """`Indexed` (Kubernetes >= 1.21): each pod carries its completion index."""
    suspend: bool | None = None
    """True: the Job controller creates no pods (Kueue suspends the Jobs it queues)."""
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class Job(TypedObject):
    api_version: str | None = "batch/v1"
    kind: str | None = "Job"
    spec: JobSpec = Field(default_factory=JobSpec)

    @property
    def gang_size(self) -> int:
        """Pods that run at once: parallelism, never more than completions."""
        parallelism = self.spec.parallelism if self.spec.parallelism is not None else 1
        if self.spec.completions is not None:
            return min(parallelism, self.spec.completions)
        return parallelism


class Namespace(TypedObject):
    """Only its labels matter here: a pod affinity term's `namespaceSelector` selects by them."""

    api_version: str | None = "v1"
    kind: str | None = "Namespace"


class PriorityClass(TypedObject):
    api_version: str | None = "scheduling.k8s.io/v1"
    kind: str | None = "PriorityClass"
    value: int = 0
    global_default: bool | None = None
    preemption_policy: Literal["PreemptLowerPriority", "Never"] | None = None
    description: str | None = None


class PodDisruptionBudgetSpec(KubeModel):
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None


class PodDisruptionBudgetStatus(KubeModel):
    disruptions_allowed: int | None = None
    current_healthy: int | None = None
    desired_healthy: int | None = None
    expected_pods: int | None = None


class PodDisruptionBudget(TypedObject):
    api_version: str | None = "policy/v1"
    kind: str | None = "PodDisruptionBudget"
    spec: PodDisruptionBudgetSpec = Field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus | None = None
