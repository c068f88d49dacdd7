"""Volcano's PodGroup (`scheduling.volcano.sh/v1beta1`) and HyperNode (`topology.volcano.sh/v1alpha1`).

Field names, enums, minimums and defaults follow upstream. Defaults are declared as
`json_schema_extra` so they reach the generated CRDs, while a parsed object still dumps
exactly what it was given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Literal

from pydantic import ConfigDict, Field

from translations._base import (
    DNS1123_SUBDOMAIN,
    INT32_MAX,
    INT64_MAX,
    KubeModel,
    LabelSelector,
    TypedObject,
    at_most,
)
from translations.errors import InvalidSpecError, render_value
from translations.quantity import Quantity, parse_quantity

PODGROUP_GROUP = "scheduling.volcano.sh"
PODGROUP_API_VERSION = f"{PODGROUP_GROUP}/v1beta1"
HYPERNODE_GROUP = "topology.volcano.sh"
HYPERNODE_API_VERSION = f"{HYPERNODE_GROUP}/v1alpha1"

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
"""A pod joins a Volcano PodGroup through this annotation."""
PREEMPTABLE = "volcano.sh/preemptable"
"""A pod's annotation (read first) or label: `"false"` keeps it from ever being a victim."""
POD_TOPOLOGY_MODE_ANNOTATION = "volcano.sh/network-topology-mode"
POD_TOPOLOGY_TIER_ANNOTATION = "volcano.sh/network-topology-highest-tier"
JOB_ALLOCATED_HYPERNODE_ANNOTATION = "volcano.sh/job-allocated-hypernode"
"""On a PodGroup: the HyperNode Volcano placed the job's running members in (it reads it back,
while that HyperNode exists and a member is allocated, instead of the members' nodes)."""

NetworkTopologyMode = Literal["hard", "soft"]


class NetworkTopologySpec(KubeModel):
    """How tightly a job's pods must gather in the HyperNode tree."""

    model_config = ConfigDict(frozen=True)  # `network_topology` hands one instance to many readers

    mode: NetworkTopologyMode | None = Field(default=None, json_schema_extra={"default": "hard"})
    """`hard`: never exceed the tier limit; `soft`: prefer the lowest tier that fits."""
    highest_tier_allowed: int | None = Field(default=None, ge=0)
    """The widest tier the job may span (1 = the level right above nodes, 0 = one node)."""
    highest_tier_name: str | None = Field(default=None, max_length=253)
    """The widest tier by its HyperNode `tierName`; exclusive with highestTierAllowed."""

    @property
    def effective_mode(self) -> NetworkTopologyMode:
        return self.mode or "hard"


def preemptable(annotations: Mapping[str, str] | None, labels: Mapping[str, str] | None) -> bool:
    """Volcano's `GetPodPreemptable`: the pod's `volcano.sh/preemptable` annotation, else its
    label, read as a Go bool; absent, or not a bool, the pod may be preempted."""
    raw = annotations.get(PREEMPTABLE) if annotations else None
    if raw is None and labels:
        raw = labels.get(PREEMPTABLE)
    return True if raw is None else _GO_BOOLS.get(raw, True)


_GO_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


@lru_cache(maxsize=256)
def network_topology(
    mode: NetworkTopologyMode, highest_tier_allowed: int | None = None, highest_tier_name: str | None = None
) -> NetworkTopologySpec:
    """The spec of checked values (fields left None stay unset, so a dump shows only what
    was given). Built once per value: admission reads one for every LeaderWorkerSet."""
    if highest_tier_allowed is not None:
        return NetworkTopologySpec(mode=mode, highest_tier_allowed=highest_tier_allowed)
    if highest_tier_name is not None:
        return NetworkTopologySpec(mode=mode, highest_tier_name=highest_tier_name)
    return NetworkTopologySpec(mode=mode)


def network_topology_problems(
    *, highest_tier_allowed: int | None, highest_tier_name: str | None, path: str
) -> list[InvalidSpecError]:
    """What Volcano (and LWS's networkTopology, which copies it) refuses in a networkTopology
    that parsed: a tier beyond int64, and a tier given both by number and by name."""
    tier = highest_tier_allowed
    if tier is None:
        return []
    if tier > INT64_MAX:
        return at_most(f"{path}.highestTierAllowed", tier, INT64_MAX)
    if highest_tier_name is not None:
        return [
            InvalidSpecError(
                path,
                highest_tier_name,
                "Forbidden: must not specify 'highestTierAllowed' and 'highestTierName' simultaneously",
            )
        ]
    return []


class SubGroupPolicy(KubeModel):
    """A group of pods inside a job that gathers under its own constraint."""

    name: str | None = Field(default=None, max_length=253)
    """Name of the subgroup policy."""
    network_topology: NetworkTopologySpec | None = None
    """Topology constraint for each subgroup."""
    sub_group_size: int | None = Field(
        default=None, ge=1, json_schema_extra={"default": 1, "format": "int32"}
    )
    """Pods per subgroup."""
    min_sub_groups: int | None = Field(
        default=None, ge=0, json_schema_extra={"default": 0, "format": "int32"}
    )
    """Subgroups that must be schedulable for the job to start."""
    label_selector: LabelSelector | None = None
    """Pods this policy applies to."""
    match_label_keys: list[str] | None = None
    """Pods with equal values for these label keys form one subgroup."""


class PodGroupSpec(KubeModel):
    """Volcano PodGroup spec."""

    min_member: int | None = Field(default=None, ge=0, json_schema_extra={"format": "int32"})
    """Pods that must be schedulable together before any is bound."""
    min_task_member: dict[str, int] | None = Field(
        default=None, json_schema_extra={"additionalProperties": {"type": "integer", "format": "int32"}}
    )
    """Minimum pods per task name."""
    queue: str | None = Field(
        default=None, max_length=253, pattern=DNS1123_SUBDOMAIN, json_schema_extra={"default": "default"}
    )
    """Volcano queue the job is admitted through."""
    priority_class_name: str | None = Field(default=None, max_length=253)
    """Priority of the whole group."""
    min_resources: dict[str, Quantity] | None = None
    """Resources the whole gang needs to start."""
    network_topology: NetworkTopologySpec | None = None
    """Topology constraint of the whole job."""
    sub_group_policy: list[SubGroupPolicy] | None = None
    """Constraints on groups of pods inside the job."""


class PodGroupCondition(KubeModel):
    """One observation of a PodGroup's scheduling state."""

    type: str | None = None
    """Unschedulable or Scheduled."""
    status: str | None = None
    """True, False or Unknown."""
    transition_id: str | None = Field(default=None, alias="transitionID")
    """The scheduling session that produced this condition."""
    last_transition_time: str | None = Field(default=None, json_schema_extra={"format": "date-time"})
    """When the condition last changed."""
    reason: str | None = None
    """Machine-readable reason."""
    message: str | None = None
    """Human-readable explanation."""


class PodGroupStatus(KubeModel):
    """Observed state of a PodGroup."""

    phase: Literal["Pending", "Running", "Unknown", "Inqueue", "Completed"] | None = None
    """Lifecycle phase of the group."""
    conditions: list[PodGroupCondition] | None = None
    """Latest observations."""
    running: int | None = Field(default=None, ge=0, json_schema_extra={"format": "int32"})
    """Running pods."""
    succeeded: int | None = Field(default=None, ge=0, json_schema_extra={"format": "int32"})
    """Succeeded pods."""
    failed: int | None = Field(default=None, ge=0, json_schema_extra={"format": "int32"})
    """Failed pods."""


class PodGroup(TypedObject):
    """A Volcano gang: pods that are scheduled all together or not at all."""

    api_version: str | None = PODGROUP_API_VERSION
    kind: str | None = "PodGroup"
    spec: PodGroupSpec = Field(default_factory=PodGroupSpec)
    """Desired behaviour of the group."""
    status: PodGroupStatus | None = None
    """Observed state of the group."""


class ExactMatch(KubeModel):
    """Selects one member by its exact name."""

    name: str = Field(max_length=253, pattern=DNS1123_SUBDOMAIN)
    """Name of the Node or HyperNode."""


class RegexMatch(KubeModel):
    """Selects members whose name matches a regular expression."""

    pattern: str
    """The regular expression."""


class MemberSelector(KubeModel):
    """How a member is found; exactly one of the three."""

    exact_match: ExactMatch | None = None
    """Match one name."""
    regex_match: RegexMatch | None = None
    """Match names by regular expression."""
    label_match: LabelSelector | None = None
    """Match Nodes by label (Node members only)."""


class MemberSpec(KubeModel):
    """A child of a HyperNode: Nodes or lower HyperNodes."""

    type: Literal["Node", "HyperNode"]
    """Kind of the member."""
    selector: MemberSelector = Field(default_factory=MemberSelector)
    """How the member is selected."""


class HyperNodeSpec(KubeModel):
    """A network domain and its members."""

    tier: int = Field(ge=0)
    """Level in the tree; 1 is the level right above nodes."""
    tier_name: str | None = Field(default=None, max_length=253)
    """Human name of the tier, e.g. `block`."""
    members: list[MemberSpec] | None = Field(default=None, min_length=1)
    """Nodes or HyperNodes inside this domain. Optional in upstream's schema; admission requires it."""

    @property
    def member_list(self) -> list[MemberSpec]:
        return self.members or []


class HyperNodeCondition(KubeModel):
    """A standard condition on a HyperNode."""

    type: str
    """Condition type."""
    status: Literal["True", "False", "Unknown"]
    """Condition status."""
    observed_generation: int | None = Field(default=None, ge=0)
    """Generation the condition was computed for."""
    last_transition_time: str = Field(json_schema_extra={"format": "date-time"})
    """When the condition last changed."""
    reason: str
    """Machine-readable reason."""
    message: str = Field(max_length=32768)
    """Human-readable explanation."""


class HyperNodeStatus(KubeModel):
    """Observed state of a HyperNode."""

    conditions: list[HyperNodeCondition] | None = None
    """Latest observations."""
    node_count: int | None = Field(default=None, ge=0)
    """Nodes under this domain."""


class HyperNode(TypedObject):
    """A Volcano network-topology domain (cluster-scoped)."""

    api_version: str | None = HYPERNODE_API_VERSION
    kind: str | None = "HyperNode"
    spec: HyperNodeSpec
    """Tier and members of the domain."""
    status: HyperNodeStatus | None = None
    """Observed state of the domain."""


# --- the PodGroup's request: read once, for admission, translation and the controller -------


def pod_group_problems(
    spec: PodGroupSpec, *, tier_of_name: Callable[[str], int | None] = lambda _name: None
) -> list[InvalidSpecError]:
    """Every problem of a parsed PodGroup spec: int32 bounds, minResources quantities that
    parse and are not negative, each networkTopology (`network_topology_problems`), subgroup
    names unique, and no subgroup wider than a hard job (a tierName resolved by `tier_of_name`;
    a soft job's tier is a preference that caps nothing, as in Volcano's allocate).

    The one reading of a Volcano PodGroup: the admission rule and the translations call it."""
    out = at_most("spec.minMember", spec.min_member, INT32_MAX)
    for task, count in (spec.min_task_member or {}).items():
        path = f"spec.minTaskMember[{task}]"
        if count < 0:
            out.append(
                InvalidSpecError(path, count, f"Invalid value: {count}: must be greater than or equal to 0")
            )
        out += at_most(path, count, INT32_MAX)
    for resource, quantity in (spec.min_resources or {}).items():
        path = f"spec.minResources[{resource}]"
        try:
            if parse_quantity(quantity, field=path) < 0:
                out.append(
                    InvalidSpecError(
                        path,
                        quantity,
                        f"Invalid value: {render_value(quantity)}: must be greater than or equal to 0",
                    )
                )
        except InvalidSpecError as exc:
            out.extend(exc.all)
    job_tier = hard_cap(
        spec.network_topology, _topology(spec.network_topology, "spec.networkTopology", tier_of_name, out)
    )
    names: set[str] = set()
    for i, sub in enumerate(spec.sub_group_policy or []):
        base = f"spec.subGroupPolicy[{i}]"
        if sub.name is not None:
            if sub.name in names:
                out.append(
                    InvalidSpecError(f"{base}.name", sub.name, f"Duplicate value: {render_value(sub.name)}")
                )
            names.add(sub.name)
        out += at_most(f"{base}.subGroupSize", sub.sub_group_size, INT32_MAX)
        out += at_most(f"{base}.minSubGroups", sub.min_sub_groups, INT32_MAX)
        out += subgroup_topology_problems(
            sub.network_topology, f"{base}.networkTopology", job_tier, tier_of_name=tier_of_name
        )
    return out


def subgroup_topology_problems(
    nt: NetworkTopologySpec | None,
    path: str,
    job_tier: int | None,
    *,
    tier_of_name: Callable[[str], int | None],
) -> list[InvalidSpecError]:
    """One subgroup's networkTopology (a PodGroup's subGroupPolicy entry, a Volcano Job's
    partition): `network_topology_problems`, and no wider than its job's tier `job_tier`."""
    out: list[InvalidSpecError] = []
    sub_tier = _topology(nt, path, tier_of_name, out)
    if nt is None or job_tier is None or sub_tier is None or sub_tier <= job_tier:
        return out
    if nt.highest_tier_allowed is not None:
        out.append(
            InvalidSpecError(
                f"{path}.highestTierAllowed",
                sub_tier,
                f"Invalid value: {sub_tier}: must be less than or equal to the job's tier "
                f"(spec.networkTopology: {job_tier})",
            )
        )
    else:
        out.append(
            InvalidSpecError(
                f"{path}.highestTierName",
                nt.highest_tier_name,
                f"Invalid value: {render_value(nt.highest_tier_name)}: names tier {sub_tier}, above the "
                f"job's tier (spec.networkTopology: {job_tier})",
            )
        )
    return out


def hard_cap(nt: NetworkTopologySpec | None, tier: int | None) -> int | None:
    """The tier a job's networkTopology caps its subgroups (partitions) at: its tier when hard;
    None when soft (Volcano turns a soft job into one bounded by the whole cluster, and bounds
    its subgroups by that) or when it has none."""
    return tier if nt is not None and nt.effective_mode == "hard" else None


def job_topology_tier(
    nt: NetworkTopologySpec | None,
    path: str,
    tier_of_name: Callable[[str], int | None],
    out: list[InvalidSpecError],
) -> int | None:
    """Check a job's networkTopology into `out`; its tier (by number or resolved name) when sound."""
    return _topology(nt, path, tier_of_name, out)


def _topology(
    nt: NetworkTopologySpec | None,
    path: str,
    tier_of_name: Callable[[str], int | None],
    out: list[InvalidSpecError],
) -> int | None:
    """Check one networkTopology; its tier (by number or resolved name) when it is sound."""
    if nt is None:
        return None
    problems = network_topology_problems(
        highest_tier_allowed=nt.highest_tier_allowed, highest_tier_name=nt.highest_tier_name, path=path
    )
    out.extend(problems)
    if problems:
        return None
    if nt.highest_tier_allowed is not None:
        return nt.highest_tier_allowed
    return tier_of_name(nt.highest_tier_name) if nt.highest_tier_name is not None else None
