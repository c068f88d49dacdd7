"""Kubernetes' own gang API (`scheduling.k8s.io`): Workload, PodGroup and CompositePodGroup.

One model per served shape, and the API server's own validation of each (KEP-4671 and its
follow-ups; `pkg/apis/scheduling/validation` and the declarative rules of
`staging/src/k8s.io/api/scheduling`):

* 1.35 `v1alpha1`: `Workload` with `spec.podGroups[]` (`policy`); pods link by
  `spec.workloadRef` {name, podGroup, podGroupReplicaKey}.
* 1.36 `v1alpha2`: `Workload.spec.podGroupTemplates[]` and `PodGroup` (`podGroupTemplateRef`,
  `disruptionMode` a string `Pod` | `PodGroup`); pods link by `spec.schedulingGroup.podGroupName`.
* 1.37 `v1beta1` (and `v1alpha3`, which adds `CompositePodGroup`): `PodGroup.spec.workloadRef`,
  `disruptionMode` a one-of `{single: {}}` | `{all: {}}`, `preemptionPolicy`; a Workload holds
  `podGroupTemplates` or `compositePodGroupTemplates`.

`problems` and `update_problems` are the one reading of these rules: the admission rule
(`webhooks.rules.workload`), `validate`, the translations and gang discovery call them.
`Group` is what every version says about one pod group, in one shape, for the translations and
the scheduler. Each refusal names the field path as the API server does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, model_validator

from translations._base import KubeModel, TypedObject
from translations.envelope import dns1123_problems, label_key_problems
from translations.errors import InvalidSpecError, render_value

GROUP = "scheduling.k8s.io"
V1ALPHA1, V1ALPHA2, V1ALPHA3, V1BETA1 = "v1alpha1", "v1alpha2", "v1alpha3", "v1beta1"
VERSIONS = (V1BETA1, V1ALPHA3, V1ALPHA2, V1ALPHA1)
"""Every version topobridge reads, newest first."""
KUBERNETES_VERSIONS: dict[str, str] = {"1.35": V1ALPHA1, "1.36": V1ALPHA2, "1.37": V1BETA1}
"""The version each Kubernetes release serves (`translate --to upstream --kubernetes-version`)."""
MAX_TEMPLATES = 8
MAX_TOPOLOGY = 1
MAX_RESOURCE_CLAIMS = 4
MAX_TREE_DEPTH = 4
HIGHEST_USER_PRIORITY = 1_000_000_000
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
V1ALPHA2_DISRUPTION_MODES = ("Pod", "PodGroup")


# --- the shapes every version shares ------------------------------------------------------------


class BasicSchedulingPolicy(KubeModel):
    """Pods scheduled one by one, as any pod (a topology key still keeps them together)."""


class GangSchedulingPolicy(KubeModel):
    """All or nothing: at least `minCount` pods placed at once."""

    min_count: int | None = None
    """Pods that must be schedulable together; at least 1 (mutable from v1beta1)."""


class SchedulingPolicy(KubeModel):
    """Exactly one of `basic` or `gang`."""

    basic: BasicSchedulingPolicy | None = None
    """Standard scheduling."""
    gang: GangSchedulingPolicy | None = None
    """All-or-nothing scheduling."""


class TopologyConstraint(KubeModel):
    """Every pod of one group on nodes sharing one value of the label `key`."""

    key: str | None = None
    """A node label key, e.g. `topology.kubernetes.io/rack`."""


class SchedulingConstraints(KubeModel):
    """Constraints on where one group instance lands."""

    topology: list[TopologyConstraint] | None = None
    """At most one topology constraint."""


class PodGroupResourceClaim(KubeModel):
    """A ResourceClaim shared by the group's pods (exactly one of the two references)."""

    name: str | None = None
    """The claim's name inside the group (a DNS label)."""
    resource_claim_name: str | None = None
    """A ResourceClaim in the group's namespace."""
    resource_claim_template_name: str | None = None
    """A ResourceClaimTemplate in the group's namespace."""


class Empty(KubeModel):
    """A one-of member whose presence is the choice."""


class DisruptionMode(KubeModel):
    """v1beta1: exactly one of `single` (the default) or `all`."""

    single: Empty | None = None
    """Members can be disrupted one at a time."""
    all: Empty | None = None
    """The group is disrupted whole or not at all."""


class TypedLocalObjectReference(KubeModel):
    """The object that controls a Workload (a Job, a LeaderWorkerSet)."""

    api_group: str | None = None
    """Its API group (a DNS subdomain; empty for the core group)."""
    kind: str | None = None
    """Its kind."""
    name: str | None = None
    """Its name."""


# --- v1alpha1 (Kubernetes 1.35) ------------------------------------------------------------------


class PodGroupV1alpha1(KubeModel):
    """One group of a v1alpha1 Workload."""

    name: str | None = None
    """The group's name inside the Workload (a DNS label)."""
    policy: SchedulingPolicy = Field(default_factory=SchedulingPolicy)
    """basic or gang."""


class WorkloadSpecV1alpha1(KubeModel):
    controller_ref: TypedLocalObjectReference | None = None
    """The controlling object (immutable)."""
    pod_groups: list[PodGroupV1alpha1] | None = None
    """1 to 8 groups, keyed by name; immutable."""


class WorkloadV1alpha1(TypedObject):
    """`scheduling.k8s.io/v1alpha1` Workload (Kubernetes 1.35)."""

    api_version: str | None = f"{GROUP}/{V1ALPHA1}"
    kind: str | None = "Workload"
    spec: WorkloadSpecV1alpha1 = Field(default_factory=WorkloadSpecV1alpha1)
    """The groups."""


# --- v1alpha2 (Kubernetes 1.36) ------------------------------------------------------------------


class PodGroupFieldsV1alpha2(KubeModel):
    """What a v1alpha2 template and PodGroup both say."""

    scheduling_policy: SchedulingPolicy = Field(default_factory=SchedulingPolicy)
    """basic or gang."""
    scheduling_constraints: SchedulingConstraints | None = None
    """At most one topology key."""
    resource_claims: list[PodGroupResourceClaim] | None = None
    """At most 4 shared claims."""
    disruption_mode: str | None = None
    """`Pod` or `PodGroup`."""
    priority_class_name: str | None = None
    """The group's priority class."""
    priority: int | None = None
    """The group's priority (at most 1e9)."""


class PodGroupTemplateV1alpha2(PodGroupFieldsV1alpha2):
    name: str | None = None
    """The template's name (a DNS label)."""


class WorkloadSpecV1alpha2(KubeModel):
    controller_ref: TypedLocalObjectReference | None = None
    """The controlling object (immutable)."""
    pod_group_templates: list[PodGroupTemplateV1alpha2] | None = None
    """1 to 8 templates, keyed by name; immutable."""


class WorkloadV1alpha2(TypedObject):
    """`scheduling.k8s.io/v1alpha2` Workload (Kubernetes 1.36)."""

    api_version: str | None = f"{GROUP}/{V1ALPHA2}"
    kind: str | None = "Workload"
    spec: WorkloadSpecV1alpha2 = Field(default_factory=WorkloadSpecV1alpha2)
    """The templates."""


class WorkloadTemplateRefV1alpha2(KubeModel):
    workload_name: str | None = None
    """The Workload."""
    pod_group_template_name: str | None = None
    """The template inside it."""


class PodGroupTemplateRefV1alpha2(KubeModel):
    workload: WorkloadTemplateRefV1alpha2 | None = None
    """The template the group was made from."""


class PodGroupSpecV1alpha2(PodGroupFieldsV1alpha2):
    pod_group_template_ref: PodGroupTemplateRefV1alpha2 | None = None
    """The template the group was made from (optional, immutable)."""


class Condition(KubeModel):
    """A metav1.Condition."""

    type: str | None = None
    status: str | None = None
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None
    observed_generation: int | None = None


class PodGroupStatus(KubeModel):
    conditions: list[Condition] | None = None
    """`PodGroupScheduled` (v1alpha2) or `PodGroupInitiallyScheduled`, `DisruptionTarget`."""


class PodGroupV1alpha2(TypedObject):
    """`scheduling.k8s.io/v1alpha2` PodGroup (Kubernetes 1.36)."""

    api_version: str | None = f"{GROUP}/{V1ALPHA2}"
    kind: str | None = "PodGroup"
    spec: PodGroupSpecV1alpha2 = Field(default_factory=PodGroupSpecV1alpha2)
    """The group."""
    status: PodGroupStatus | None = None
    """Conditions."""


# --- v1beta1 and v1alpha3 (Kubernetes 1.37) ----------------------------------------------------


class PodGroupFields(KubeModel):
    """What a v1beta1 template and PodGroup both say."""

    scheduling_policy: SchedulingPolicy = Field(default_factory=SchedulingPolicy)
    """basic (immutable) or gang (cannot be added or removed; minCount mutable)."""
    scheduling_constraints: SchedulingConstraints | None = None
    """At most one topology key (immutable)."""
    resource_claims: list[PodGroupResourceClaim] | None = None
    """At most 4 shared claims (immutable)."""
    disruption_mode: DisruptionMode | None = None
    """`{single: {}}` (default) or `{all: {}}` (immutable)."""
    priority_class_name: str | None = None
    """The group's priority class (immutable)."""
    priority: int | None = None
    """The group's priority, at most 1e9 (immutable)."""
    preemption_policy: str | None = None
    """`PreemptLowerPriority` or `Never` (immutable)."""


class PodGroupTemplate(PodGroupFields):
    name: str | None = None
    """The template's name (a DNS label)."""


class CompositeGangPolicy(KubeModel):
    min_group_count: int | None = None
    """Child groups that must be schedulable together; at least 1."""


class CompositeSchedulingPolicy(KubeModel):
    """Exactly one of `basic` or `gang`, over child groups."""

    basic: Empty | None = None
    """Children scheduled independently."""
    gang: CompositeGangPolicy | None = None
    """All children or none."""


class CompositeFields(KubeModel):
    scheduling_policy: CompositeSchedulingPolicy = Field(default_factory=CompositeSchedulingPolicy)
    """basic or gang over the children."""
    scheduling_constraints: SchedulingConstraints | None = None
    """At most one topology key for the whole composite."""
    disruption_mode: DisruptionMode | None = None
    """single or all."""
    priority_class_name: str | None = None
    """The composite's priority class."""
    priority: int | None = None
    """The composite's priority (at most 1e9)."""
    preemption_policy: str | None = None
    """`PreemptLowerPriority` or `Never`."""


class CompositePodGroupTemplate(CompositeFields):
    name: str | None = None
    """The template's name (a DNS label)."""
    pod_group_templates: list[PodGroupTemplate] | None = None
    """Child PodGroup templates (at most 8)."""
    composite_pod_group_templates: list[CompositePodGroupTemplate] | None = None
    """Child composite templates (at most 8; the tree at most 4 deep)."""


class WorkloadSpec(KubeModel):
    controller_ref: TypedLocalObjectReference | None = None
    """The controlling object (immutable)."""
    pod_group_templates: list[PodGroupTemplate] | None = None
    """At most 8 templates; none added or removed after creation."""
    composite_pod_group_templates: list[CompositePodGroupTemplate] | None = None
    """At most 8 composite templates (alpha); exclusive with podGroupTemplates."""


class Workload(TypedObject):
    """`scheduling.k8s.io/v1beta1` (or `v1alpha3`) Workload (Kubernetes 1.37)."""

    api_version: str | None = f"{GROUP}/{V1BETA1}"
    kind: str | None = "Workload"
    spec: WorkloadSpec = Field(default_factory=WorkloadSpec)
    """The templates."""


class WorkloadReference(KubeModel):
    workload_name: str | None = None
    """The Workload (a DNS subdomain)."""
    template_name: str | None = None
    """The template inside it (a DNS label)."""


class PodGroupSpec(PodGroupFields):
    parent_composite_pod_group_name: str | None = None
    """The CompositePodGroup above this group (alpha; needs workloadRef)."""
    workload_ref: WorkloadReference | None = None
    """The template the group was made from (optional, immutable)."""


class PodGroup(TypedObject):
    """`scheduling.k8s.io/v1beta1` (or `v1alpha3`) PodGroup (Kubernetes 1.37)."""

    api_version: str | None = f"{GROUP}/{V1BETA1}"
    kind: str | None = "PodGroup"
    spec: PodGroupSpec = Field(default_factory=PodGroupSpec)
    """The group."""
    status: PodGroupStatus | None = None
    """Conditions."""


def v1alpha2_as_v1beta1(raw: Any) -> Any:
    """A v1alpha2 PodGroup (1.36) in v1beta1's shape: `podGroupTemplateRef.workload` becomes
    `workloadRef`, `disruptionMode` `Pod`/`PodGroup` becomes `{single: {}}`/`{all: {}}` (any other
    value is left for the parse to refuse). Anything else comes back as it is."""
    if not isinstance(raw, dict) or not str(raw.get("apiVersion") or "").endswith(f"/{V1ALPHA2}"):
        return raw
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        return raw
    spec = dict(spec)
    ref = spec.pop("podGroupTemplateRef", None)
    wl = ref.get("workload") if isinstance(ref, dict) else None
    if isinstance(wl, dict):
        spec["workloadRef"] = {
            "workloadName": wl.get("workloadName"),
            "templateName": wl.get("podGroupTemplateName"),
        }
    mode = spec.get("disruptionMode")
    if mode in V1ALPHA2_DISRUPTION_MODES:
        spec["disruptionMode"] = {"all": {}} if mode == "PodGroup" else {"single": {}}
    return {**raw, "spec": spec}


class ServedPodGroup(PodGroup):
    """The PodGroup the scheduler reads, from whichever version the cluster serves: v1beta1 and
    v1alpha3 as they are, 1.36's v1alpha2 in their shape (`v1alpha2_as_v1beta1`). Never
    written back; admission and `translate` read each version by its own model."""

    @model_validator(mode="before")
    @classmethod
    def _from_v1alpha2(cls, data: Any) -> Any:
        return v1alpha2_as_v1beta1(data)


class CompositePodGroupSpec(CompositeFields):
    parent_composite_pod_group_name: str | None = None
    """The CompositePodGroup above this one."""
    workload_ref: WorkloadReference | None = None
    """The template the composite was made from."""


class CompositePodGroup(TypedObject):
    """`scheduling.k8s.io/v1alpha3` CompositePodGroup (Kubernetes 1.37, alpha)."""

    api_version: str | None = f"{GROUP}/{V1ALPHA3}"
    kind: str | None = "CompositePodGroup"
    spec: CompositePodGroupSpec = Field(default_factory=CompositePodGroupSpec)
    """The composite."""
    status: PodGroupStatus | None = None
    """Conditions."""


# --- the pod's side ------------------------------------------------------------------------------


class PodWorkloadReference(KubeModel):
    """v1alpha1 (1.35): the Workload group a pod belongs to."""

    name: str | None = None
    """The Workload (a DNS subdomain)."""
    pod_group: str | None = None
    """The group inside it (a DNS label)."""
    pod_group_replica_key: str | None = None
    """Optional: each key is its own gang (a DNS label)."""


class PodSchedulingGroup(KubeModel):
    """v1alpha2 and later (1.36+): the PodGroup a pod belongs to."""

    pod_group_name: str | None = None
    """The PodGroup in the pod's namespace."""


AnyWorkload = WorkloadV1alpha1 | WorkloadV1alpha2 | Workload
AnyPodGroup = PodGroupV1alpha2 | PodGroup
AnyObject = AnyWorkload | AnyPodGroup | CompositePodGroup
Kind = Literal["Workload", "PodGroup", "CompositePodGroup"]

_MODELS: dict[tuple[str, str], type[AnyObject]] = {
    (V1ALPHA1, "Workload"): WorkloadV1alpha1,
    (V1ALPHA2, "Workload"): WorkloadV1alpha2,
    (V1ALPHA2, "PodGroup"): PodGroupV1alpha2,
    (V1ALPHA3, "Workload"): Workload,
    (V1ALPHA3, "PodGroup"): PodGroup,
    (V1ALPHA3, "CompositePodGroup"): CompositePodGroup,
    (V1BETA1, "Workload"): Workload,
    (V1BETA1, "PodGroup"): PodGroup,
}
"""The model of each (version, kind) Kubernetes serves."""


def model_for(api_version: str, kind: str) -> type[AnyObject] | None:
    """The model of a `scheduling.k8s.io` object, or None for a version or kind no release serves."""
    group, _, version = api_version.rpartition("/")
    return _MODELS.get((version, kind)) if group == GROUP else None


def served_pairs() -> tuple[tuple[str, str], ...]:
    """(version, kind) of every shape, newest version first."""
    return tuple(_MODELS)


# --- validation ----------------------------------------------------------------------------------

Problems = list[InvalidSpecError]


def _required(path: str) -> InvalidSpecError:
    return InvalidSpecError(path, None, "Required value")


def _too_many(path: str, n: int, most: int) -> InvalidSpecError:
    return InvalidSpecError(
        path, n, f"Too many: {n}: must have at most {most} item{'s' if most != 1 else ''}"
    )


def _forbidden(path: str, detail: str) -> InvalidSpecError:
    return InvalidSpecError(path, None, f"Forbidden: {detail}")


def _immutable(path: str, value: Any) -> InvalidSpecError:
    return InvalidSpecError(path, value, f"Invalid value: {render_value(value)}: field is immutable")


def _name(value: str | None, path: str, *, label: bool, required: bool = True) -> Problems:
    """A DNS label (`k8s-short-name`) or subdomain (`k8s-long-name`); "" counts as missing."""
    if not value:
        return [_required(path)] if required else []
    return dns1123_problems(value, path=path, label=label)


def _path_segment(value: str | None, path: str) -> Problems:
    """apimachinery's IsPathSegmentName: no `/` or `%`, not `.` or `..`."""
    if not value:
        return [_required(path)]
    if value in (".", ".."):
        return [InvalidSpecError(path, value, f"Invalid value: {render_value(value)}: may not be '{value}'")]
    bad = [c for c in ("/", "%") if c in value]
    return [
        InvalidSpecError(path, value, f"Invalid value: {render_value(value)}: may not contain '{c}'")
        for c in bad
    ]


def _controller_ref(ref: TypedLocalObjectReference | None, path: str) -> Problems:
    if ref is None:
        return []
    out = _name(ref.api_group, f"{path}.apiGroup", label=False, required=False)
    return out + _path_segment(ref.kind, f"{path}.kind") + _path_segment(ref.name, f"{path}.name")


def _one_of(path: str, members: Sequence[tuple[str, object]]) -> tuple[str | None, Problems]:
    """A union: the member set, or the API server's refusal of none or several."""
    names = [f"`{n}`" for n, _ in members]
    chosen = [f"`{n}`" for n, v in members if v is not None]
    listed = ", ".join(names)
    if not chosen:
        return None, [InvalidSpecError(path, "", f'Invalid value: "": must specify one of: {listed}')]
    if len(chosen) > 1:
        value = "{" + ", ".join(chosen) + "}"
        detail = f"exactly one of {listed} is required, but multiple fields are set"
        return None, [InvalidSpecError(path, value, f"Invalid value: {render_value(value)}: {detail}")]
    return chosen[0].strip("`"), []


def _positive(value: int | None, path: str) -> Problems:
    """`+k8s:required` and `+k8s:minimum=1`: 0 or unset is missing, below it is invalid."""
    if not value:
        return [_required(path)]
    if value < 0:
        return [InvalidSpecError(path, value, f"Invalid value: {value}: must be greater than or equal to 1")]
    return []


def policy_problems(policy: SchedulingPolicy, path: str) -> Problems:
    """Exactly one of basic and gang; a gang's minCount >= 1."""
    chosen, out = _one_of(path, [("basic", policy.basic), ("gang", policy.gang)])
    if chosen == "gang" and policy.gang is not None:
        out += _positive(policy.gang.min_count, f"{path}.gang.minCount")
    return out


def constraints_problems(constraints: SchedulingConstraints | None, path: str) -> Problems:
    """At most one topology constraint, and its key a label key."""
    if constraints is None:
        return []
    topology = constraints.topology or []
    if len(topology) > MAX_TOPOLOGY:
        return [_too_many(f"{path}.topology", len(topology), MAX_TOPOLOGY)]
    out: Problems = []
    for i, item in enumerate(topology):
        where = f"{path}.topology[{i}].key"
        out += label_key_problems(item.key, path=where) if item.key else [_required(where)]
    return out


def _claims_problems(claims: Sequence[PodGroupResourceClaim] | None, path: str) -> Problems:
    items = list(claims or [])
    if len(items) > MAX_RESOURCE_CLAIMS:
        return [_too_many(path, len(items), MAX_RESOURCE_CLAIMS)]
    out: Problems = []
    seen: set[str] = set()
    for i, c in enumerate(items):
        where = f"{path}[{i}]"
        out += _name(c.name, f"{where}.name", label=True)
        if c.name and c.name in seen:
            out.append(InvalidSpecError(f"{where}.name", c.name, f"Duplicate value: {render_value(c.name)}"))
        seen.add(c.name or "")
        refs = [
            ("resourceClaimName", c.resource_claim_name),
            ("resourceClaimTemplateName", c.resource_claim_template_name),
        ]
        _, union = _one_of(where, refs)
        out += union
        for field, value in refs:
            if value:
                out += _name(value, f"{where}.{field}", label=False)
    return out


def _priority_problems(fields: Any, path: str) -> Problems:
    out = _name(fields.priority_class_name, f"{path}.priorityClassName", label=False, required=False)
    priority = fields.priority
    if priority is not None and priority > HIGHEST_USER_PRIORITY:
        out.append(
            InvalidSpecError(
                f"{path}.priority",
                priority,
                f"Invalid value: {priority}: must be less than or equal to {HIGHEST_USER_PRIORITY}",
            )
        )
    policy = getattr(fields, "preemption_policy", None)
    if policy is not None and policy not in PREEMPTION_POLICIES:
        shown = ", ".join(f'"{p}"' for p in PREEMPTION_POLICIES)
        out.append(
            InvalidSpecError(
                f"{path}.preemptionPolicy",
                policy,
                f"Unsupported value: {render_value(policy)}: supported values: {shown}",
            )
        )
    return out


def _disruption_problems(mode: DisruptionMode | str | None, path: str) -> Problems:
    if mode is None:
        return []
    if isinstance(mode, str):
        if mode in V1ALPHA2_DISRUPTION_MODES:
            return []
        shown = ", ".join(f'"{m}"' for m in V1ALPHA2_DISRUPTION_MODES)
        return [
            InvalidSpecError(
                path, mode, f"Unsupported value: {render_value(mode)}: supported values: {shown}"
            )
        ]
    return _one_of(path, [("single", mode.single), ("all", mode.all)])[1]


def group_fields_problems(fields: PodGroupFields | PodGroupFieldsV1alpha2, path: str) -> Problems:
    """What a PodGroup and a template both carry."""
    return (
        policy_problems(fields.scheduling_policy, f"{path}.schedulingPolicy")
        + constraints_problems(fields.scheduling_constraints, f"{path}.schedulingConstraints")
        + _claims_problems(fields.resource_claims, f"{path}.resourceClaims")
        + _disruption_problems(fields.disruption_mode, f"{path}.disruptionMode")
        + _priority_problems(fields, path)
    )


def _named_list(items: Sequence[Any], path: str, check: Callable[[Any, str], Problems]) -> Problems:
    """A list keyed by `name` (a DNS label): at most 8 items, unique names, each checked."""
    if len(items) > MAX_TEMPLATES:
        return [_too_many(path, len(items), MAX_TEMPLATES)]
    out: Problems = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        where = f"{path}[{i}]"
        out += _name(item.name, f"{where}.name", label=True)
        if item.name and item.name in seen:
            out.append(InvalidSpecError(where, item.name, f"Duplicate value: {render_value(item.name)}"))
        seen.add(item.name or "")
        out += check(item, where)
    return out


def _composite_problems(t: CompositePodGroupTemplate, path: str, depth: int = 1) -> Problems:
    if depth > MAX_TREE_DEPTH:
        return [_forbidden(path, f"the tree of templates may be at most {MAX_TREE_DEPTH} deep")]
    chosen, out = _one_of(
        f"{path}.schedulingPolicy", [("basic", t.scheduling_policy.basic), ("gang", t.scheduling_policy.gang)]
    )
    if chosen == "gang" and t.scheduling_policy.gang is not None:
        out += _positive(
            t.scheduling_policy.gang.min_group_count, f"{path}.schedulingPolicy.gang.minGroupCount"
        )
    out += constraints_problems(t.scheduling_constraints, f"{path}.schedulingConstraints")
    out += _disruption_problems(t.disruption_mode, f"{path}.disruptionMode") + _priority_problems(t, path)
    pods, composites = t.pod_group_templates or [], t.composite_pod_group_templates or []
    if not pods and not composites:
        out.append(_required(f"{path}.podGroupTemplates"))
    out += _named_list(pods, f"{path}.podGroupTemplates", group_fields_problems)
    out += _named_list(
        composites, f"{path}.compositePodGroupTemplates", lambda c, p: _composite_problems(c, p, depth + 1)
    )
    return out


def workload_problems(w: AnyWorkload) -> Problems:
    """A Workload of any version, as the API server validates it on create."""
    spec = w.spec
    out = _controller_ref(spec.controller_ref, "spec.controllerRef")
    if isinstance(spec, WorkloadSpecV1alpha1):
        groups = spec.pod_groups or []
        if not groups:
            return [*out, _required("spec.podGroups")]
        return out + _named_list(
            groups, "spec.podGroups", lambda g, p: policy_problems(g.policy, f"{p}.policy")
        )
    if isinstance(spec, WorkloadSpecV1alpha2):
        templates = spec.pod_group_templates or []
        if not templates:
            return [*out, _required("spec.podGroupTemplates")]
        return out + _named_list(templates, "spec.podGroupTemplates", group_fields_problems)
    plain, composite = spec.pod_group_templates, spec.composite_pod_group_templates
    _, union = _one_of(
        "spec", [("podGroupTemplates", plain or None), ("compositePodGroupTemplates", composite or None)]
    )
    out += union
    out += _named_list(plain or [], "spec.podGroupTemplates", group_fields_problems)
    out += _named_list(composite or [], "spec.compositePodGroupTemplates", _composite_problems)
    return out


def pod_group_problems(pg: AnyPodGroup) -> Problems:
    """A PodGroup of any version, as the API server validates it on create."""
    spec = pg.spec
    out: Problems = []
    if isinstance(spec, PodGroupSpecV1alpha2):
        ref = spec.pod_group_template_ref
        if ref is not None:
            if ref.workload is None:
                out.append(
                    InvalidSpecError(
                        "spec.podGroupTemplateRef", "", 'Invalid value: "": must specify one of: `workload`'
                    )
                )
            else:
                where = "spec.podGroupTemplateRef.workload"
                out += _name(ref.workload.workload_name, f"{where}.workloadName", label=True)
                out += _name(
                    ref.workload.pod_group_template_name, f"{where}.podGroupTemplateName", label=True
                )
        return out + group_fields_problems(spec, "spec")
    out += _workload_ref_problems(spec.workload_ref, spec.parent_composite_pod_group_name)
    return out + group_fields_problems(spec, "spec")


def _workload_ref_problems(ref: WorkloadReference | None, parent: str | None) -> Problems:
    out: Problems = []
    if ref is not None:
        out += _name(ref.workload_name, "spec.workloadRef.workloadName", label=False)
        out += _name(ref.template_name, "spec.workloadRef.templateName", label=True)
    if parent is not None:
        out += _name(parent, "spec.parentCompositePodGroupName", label=False)
        if ref is None:
            out.append(_required("spec.workloadRef"))
    return out


def composite_problems(c: CompositePodGroup) -> Problems:
    """A CompositePodGroup (v1alpha3), as the API server validates it on create."""
    spec = c.spec
    out = _workload_ref_problems(spec.workload_ref, spec.parent_composite_pod_group_name)
    chosen, union = _one_of(
        "spec.schedulingPolicy",
        [("basic", spec.scheduling_policy.basic), ("gang", spec.scheduling_policy.gang)],
    )
    out += union
    if chosen == "gang" and spec.scheduling_policy.gang is not None:
        out += _positive(
            spec.scheduling_policy.gang.min_group_count, "spec.schedulingPolicy.gang.minGroupCount"
        )
    out += constraints_problems(spec.scheduling_constraints, "spec.schedulingConstraints")
    return (
        out
        + _disruption_problems(spec.disruption_mode, "spec.disruptionMode")
        + _priority_problems(spec, "spec")
    )


def problems(obj: AnyObject) -> Problems:
    """Every problem the API server finds creating `obj`."""
    if isinstance(obj, CompositePodGroup):
        return composite_problems(obj)
    if isinstance(obj, PodGroupV1alpha2 | PodGroup):
        return pod_group_problems(obj)
    return workload_problems(obj)


def pod_problems(workload_ref: PodWorkloadReference | None, group: PodSchedulingGroup | None) -> Problems:
    """The pod's links to its group: `spec.workloadRef` (1.35) and `spec.schedulingGroup` (1.36+)."""
    out: Problems = []
    if workload_ref is not None:
        out += _name(workload_ref.name, "spec.workloadRef.name", label=False)
        out += _name(workload_ref.pod_group, "spec.workloadRef.podGroup", label=True)
        out += _name(
            workload_ref.pod_group_replica_key,
            "spec.workloadRef.podGroupReplicaKey",
            label=True,
            required=False,
        )
    if group is not None:
        out += _name(group.pod_group_name, "spec.schedulingGroup.podGroupName", label=False)
    return out


# --- updates -------------------------------------------------------------------------------------


def _dump(model: KubeModel | None) -> Any:
    return model.to_dict() if model is not None else None


def _unchanged(new: Any, old: Any, path: str, fields: tuple[str, ...]) -> Problems:
    """Each of `fields` (Python names) as it was; a change is refused naming its JSON path."""
    out: Problems = []
    for name in fields:
        a, b = getattr(new, name), getattr(old, name)
        da = _dump(a) if isinstance(a, KubeModel) else [_dump(x) for x in a] if isinstance(a, list) else a
        db = _dump(b) if isinstance(b, KubeModel) else [_dump(x) for x in b] if isinstance(b, list) else b
        if da != db:
            alias = type(new).model_fields[name].alias or name
            out.append(_immutable(f"{path}.{alias}" if path else alias, da))
    return out


_V1BETA1_FIXED = (
    "scheduling_constraints",
    "resource_claims",
    "disruption_mode",
    "priority_class_name",
    "priority",
    "preemption_policy",
)


def _policy_update(new: SchedulingPolicy, old: SchedulingPolicy, path: str) -> Problems:
    """v1beta1: basic is immutable; gang cannot be set or unset; gang.minCount may change."""
    out: Problems = []
    if (new.basic is None) != (old.basic is None):
        out.append(_immutable(f"{path}.basic", _dump(new.basic)))
    if new.gang is not None and old.gang is None:
        out.append(_forbidden(f"{path}.gang", "field cannot be set once created"))
    if new.gang is None and old.gang is not None:
        out.append(_forbidden(f"{path}.gang", "field cannot be cleared once set"))
    return out


def _templates_update(
    new: Sequence[PodGroupTemplate], old: Sequence[PodGroupTemplate], path: str
) -> Problems:
    """v1beta1: no template added or removed; each keeps all but gang.minCount."""
    before = {t.name: t for t in old}
    after = {t.name: t for t in new}
    out: Problems = []
    if set(after) - set(before):
        out.append(_forbidden(path, "items cannot be added"))
    if set(before) - set(after):
        out.append(_forbidden(path, "items cannot be removed"))
    for i, t in enumerate(new):
        prior = before.get(t.name)
        if prior is not None:
            where = f"{path}[{i}]"
            out += _unchanged(t, prior, where, _V1BETA1_FIXED)
            out += _policy_update(t.scheduling_policy, prior.scheduling_policy, f"{where}.schedulingPolicy")
    return out


def update_problems(new: AnyObject, old: AnyObject) -> Problems:
    """What the API server refuses in an update from `old` to `new` (same version): the
    create checks of `new`, then each immutable field that changed."""
    out = problems(new)
    if type(new) is not type(old):
        return [*out, _forbidden("apiVersion", "an update may not change the object's version")]
    fields: tuple[str, ...]
    if isinstance(new, WorkloadV1alpha1 | WorkloadV1alpha2) and isinstance(
        old, WorkloadV1alpha1 | WorkloadV1alpha2
    ):
        fields = (
            ("controller_ref", "pod_groups")
            if isinstance(new, WorkloadV1alpha1)
            else ("controller_ref", "pod_group_templates")
        )
        return out + _unchanged(new.spec, old.spec, "spec", fields)
    if isinstance(new, Workload) and isinstance(old, Workload):
        out += _unchanged(new.spec, old.spec, "spec", ("controller_ref", "composite_pod_group_templates"))
        return out + _templates_update(
            new.spec.pod_group_templates or [], old.spec.pod_group_templates or [], "spec.podGroupTemplates"
        )
    if isinstance(new, PodGroupV1alpha2) and isinstance(old, PodGroupV1alpha2):
        fields = ("pod_group_template_ref", "scheduling_policy", *_V1BETA1_FIXED[:-1])
        return out + _unchanged(new.spec, old.spec, "spec", fields)
    if isinstance(new, PodGroup) and isinstance(old, PodGroup):
        out += _unchanged(
            new.spec, old.spec, "spec", ("parent_composite_pod_group_name", "workload_ref", *_V1BETA1_FIXED)
        )
        return out + _policy_update(
            new.spec.scheduling_policy, old.spec.scheduling_policy, "spec.schedulingPolicy"
        )
    if isinstance(new, CompositePodGroup) and isinstance(old, CompositePodGroup):
        fields = (
            "parent_composite_pod_group_name",
            "workload_ref",
            "scheduling_constraints",
            "disruption_mode",
            "priority_class_name",
            "priority",
            "preemption_policy",
        )
        return out + _unchanged(new.spec, old.spec, "spec", fields)
    return out


# --- one reading for the translations and the scheduler ----------------------------------------


@dataclass(frozen=True, slots=True)
class Group:
    """What any version says about one pod group, in one shape."""

    namespace: str
    name: str
    """The PodGroup's name (v1alpha1: `<workload>/<podGroup>`)."""
    min_count: int | None
    """None: a basic group (no all-or-nothing)."""
    topology_key: str | None
    priority_class_name: str | None = None
    priority: int | None = None
    preemption_policy: str | None = None
    disruption_all: bool = False
    """`disruptionMode` `all` (v1beta1) or `PodGroup` (v1alpha2): disrupted whole."""
    resource_claims: int = 0
    workload: str | None = None
    template: str | None = None
    parent: str | None = None
    """The CompositePodGroup above it."""

    @property
    def gang(self) -> bool:
        return self.min_count is not None


def _key_of(constraints: SchedulingConstraints | None) -> str | None:
    topology = (constraints.topology or []) if constraints is not None else []
    return topology[0].key if topology else None


def _min_count(policy: SchedulingPolicy) -> int | None:
    return policy.gang.min_count if policy.gang is not None else None


def group_of(pg: AnyPodGroup) -> Group:
    """The PodGroup (any version) as a `Group`."""
    spec = pg.spec
    base = Group(
        namespace=pg.namespace,
        name=pg.name,
        min_count=_min_count(spec.scheduling_policy),
        topology_key=_key_of(spec.scheduling_constraints),
        priority_class_name=spec.priority_class_name,
        priority=spec.priority,
        resource_claims=len(spec.resource_claims or []),
    )
    if isinstance(spec, PodGroupSpecV1alpha2):
        ref = spec.pod_group_template_ref.workload if spec.pod_group_template_ref else None
        return dataclasses.replace(
            base,
            disruption_all=spec.disruption_mode == "PodGroup",
            workload=ref.workload_name if ref else None,
            template=ref.pod_group_template_name if ref else None,
        )
    ref2 = spec.workload_ref
    return dataclasses.replace(
        base,
        preemption_policy=spec.preemption_policy,
        disruption_all=spec.disruption_mode is not None and spec.disruption_mode.all is not None,
        workload=ref2.workload_name if ref2 else None,
        template=ref2.template_name if ref2 else None,
        parent=spec.parent_composite_pod_group_name,
    )


def v1alpha1_groups(w: WorkloadV1alpha1) -> dict[str, Group]:
    """The groups of a 1.35 Workload, by their name inside it (each replica key is its own gang:
    the caller names it)."""
    return {
        g.name or "": Group(w.namespace, f"{w.name}/{g.name}", _min_count(g.policy), None, workload=w.name)
        for g in w.spec.pod_groups or []
    }
