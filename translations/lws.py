"""LeaderWorkerSet (`leaderworkerset.x-k8s.io/v1`), with the new `spec.networkTopology`.

Upstream LWS has no networkTopology yet (an API server with the upstream CRD prunes it
silently); topobridge's generated CRD carries it, as the LWS+Volcano topology plan adds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple, cast

from pydantic import Field

from translations import volcano
from translations._base import INT32_MAX, JsonDict, KubeModel, TypedObject, at_most
from translations.core import PodTemplateSpec, effective_requests
from translations.errors import InvalidSpecError, render_value

GROUP = "leaderworkerset.x-k8s.io"
API_VERSION = f"{GROUP}/v1"

LABEL_PREFIX = "leaderworkerset.sigs.k8s.io/"
NAME_LABEL = LABEL_PREFIX + "name"
GROUP_INDEX_LABEL = LABEL_PREFIX + "group-index"
WORKER_INDEX_LABEL = LABEL_PREFIX + "worker-index"
GROUP_KEY_LABEL = LABEL_PREFIX + "group-key"
SUBGROUP_INDEX_LABEL = LABEL_PREFIX + "subgroup-index"
SUBGROUP_KEY_LABEL = LABEL_PREFIX + "subgroup-key"
REVISION_LABEL = LABEL_PREFIX + "template-revision-hash"
SIZE_ANNOTATION = LABEL_PREFIX + "size"
LEADER_NAME_ANNOTATION = LABEL_PREFIX + "leader-name"
SUBGROUP_SIZE_ANNOTATION = LABEL_PREFIX + "subgroup-size"
EXCLUSIVE_TOPOLOGY_ANNOTATION = LABEL_PREFIX + "exclusive-topology"
"""On a LeaderWorkerSet: a node label key; LWS gives each group one value of it to itself."""
SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION = LABEL_PREFIX + "subgroup-exclusive-topology"
"""The same for each subgroup (keyed on `subgroup-key`)."""
SUBGROUP_POLICY_TYPE_ANNOTATION = LABEL_PREFIX + "subgroup-policy-type"
SUBDOMAIN_POLICY_ANNOTATION = LABEL_PREFIX + "subdomainPolicy"
QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
SUBGROUP_MODE_ANNOTATION = "topobridge.io/subgroup-network-topology-mode"
SUBGROUP_TIER_ANNOTATION = "topobridge.io/subgroup-network-topology-highest-tier"
"""Each subgroup's topology: upstream LWS has no field for it, and an annotation survives an
API server that prunes unknown fields."""

_EMBEDDED: JsonDict = {"x-kubernetes-preserve-unknown-fields": True, "x-kubernetes-embedded-resource": False}


class NetworkTopology(KubeModel):
    """Where each group's pods must gather (the LWS+Volcano topology plan)."""

    mode: Literal["hard", "soft"] | None = None
    """`hard`: the group must stay within the tier; `soft`: prefer it. Unset means hard."""
    highest_tier_allowed: int | None = Field(default=None, ge=0)
    """The widest HyperNode tier a group may span; 0 means every pod on one node."""
    highest_tier_name: str | None = Field(default=None, max_length=253)
    """The widest tier by HyperNode tierName; exclusive with highestTierAllowed."""


class SubGroupPolicy(KubeModel):
    """Splits each group into subgroups of pods that gather more tightly."""

    sub_group_policy_type: Literal["LeaderWorker", "LeaderExcluded"] | None = Field(
        default=None, json_schema_extra={"default": "LeaderWorker"}
    )
    """Whether the leader belongs to the first subgroup (LeaderWorker) or to none."""
    sub_group_size: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Pods per subgroup."""


class PersistentVolumeClaimRetentionPolicy(KubeModel):
    """What happens to claims from volumeClaimTemplates."""

    when_deleted: str | None = None
    """Retain or Delete when the LWS is deleted."""
    when_scaled: str | None = None
    """Retain or Delete when the LWS is scaled down."""


class LeaderWorkerTemplate(KubeModel):
    """The shape of every group: a leader and size-1 workers."""

    leader_template: PodTemplateSpec | None = Field(default=None, json_schema_extra=_EMBEDDED)
    """Pod template of the leader; the worker template when unset."""
    worker_template: PodTemplateSpec = Field(json_schema_extra=_EMBEDDED)
    """Pod template of the workers."""
    size: int | None = Field(default=None, json_schema_extra={"default": 1, "format": "int32"})
    """Pods per group, the leader included."""
    restart_policy: (
        Literal["Default", "RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"] | None
    ) = Field(default=None, json_schema_extra={"default": "RecreateGroupOnPodRestart"})
    """What a group does when one of its pods restarts."""
    sub_group_policy: SubGroupPolicy | None = None
    """How each group splits into subgroups."""
    volume_claim_templates: list[dict[str, object]] | None = Field(
        default=None,
        json_schema_extra={"items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    )
    """PersistentVolumeClaims each pod gets."""
    persistent_volume_claim_retention_policy: PersistentVolumeClaimRetentionPolicy | None = None
    """Lifecycle of the claims from volumeClaimTemplates."""

    @property
    def effective_size(self) -> int:
        return 1 if self.size is None else self.size


class RollingUpdateConfiguration(KubeModel):
    """Bounds of a rolling update."""

    partition: int | None = Field(default=None, json_schema_extra={"default": 0, "format": "int32"})
    """Groups with an index below this are not updated."""
    max_unavailable: int | str | None = Field(
        default=None, json_schema_extra={"x-kubernetes-int-or-string": True, "default": 1}
    )
    """Groups that may be unavailable during the update."""
    max_surge: int | str | None = Field(
        default=None, json_schema_extra={"x-kubernetes-int-or-string": True, "default": 0}
    )
    """Extra groups that may exist during the update."""


class RolloutStrategy(KubeModel):
    """How template changes roll out."""

    type: Literal["RollingUpdate"] = Field(json_schema_extra={"default": "RollingUpdate"})
    """The strategy; only RollingUpdate exists."""
    rolling_update_configuration: RollingUpdateConfiguration | None = None
    """Parameters of the rolling update."""


class NetworkConfig(KubeModel):
    """Pod DNS layout."""

    subdomain_policy: Literal["Shared", "UniquePerReplica"]
    """One headless service for all groups, or one per group."""


class LeaderWorkerSetSpec(KubeModel):
    """Desired state of a LeaderWorkerSet."""

    replicas: int | None = Field(default=None, ge=0, json_schema_extra={"default": 1, "format": "int32"})
    """Number of groups."""
    leader_worker_template: LeaderWorkerTemplate
    """Template of every group."""
    rollout_strategy: RolloutStrategy | None = None
    """How updates roll out."""
    startup_policy: Literal["LeaderCreated", "LeaderReady"] | None = Field(
        default=None, json_schema_extra={"default": "LeaderCreated"}
    )
    """Create workers with the leader, or only once the leader is ready."""
    network_config: NetworkConfig | None = None
    """Pod DNS layout."""
    network_topology: NetworkTopology | None = None
    """Where each group must gather in the network topology."""


class LeaderWorkerSetStatus(KubeModel):
    """Observed state of a LeaderWorkerSet."""

    conditions: list[dict[str, object]] | None = Field(
        default=None,
        json_schema_extra={"items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    )
    """Latest observations."""
    ready_replicas: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Groups whose pods are all ready."""
    updated_replicas: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Groups on the latest revision."""
    replicas: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Groups that exist."""
    hpa_pod_selector: str | None = None
    """Selector for the HorizontalPodAutoscaler."""
    observed_generation: int | None = None
    """Generation the status reflects."""


class LeaderWorkerSet(TypedObject):
    """A set of leader+workers groups, each one gang."""

    api_version: str | None = API_VERSION
    kind: str | None = "LeaderWorkerSet"
    spec: LeaderWorkerSetSpec
    """Desired state."""
    status: LeaderWorkerSetStatus | None = None
    """Observed state."""

    @property
    def size(self) -> int:
        return self.spec.leader_worker_template.effective_size


def exclusive_affinity(
    group_key: str, topology_key: str, *, label: str = GROUP_KEY_LABEL
) -> dict[str, object]:
    """The pod affinity LWS's pod webhook injects for exclusive placement: a group's pods share
    one value of `topology_key` (required affinity to their own group-key) and no other group's
    pod is there (required anti-affinity to every other group-key). `label` is `SUBGROUP_KEY_LABEL`
    for a subgroup's exclusive placement."""
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [{"key": label, "operator": "In", "values": [group_key]}]
                    },
                    "topologyKey": topology_key,
                }
            ]
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": label, "operator": "Exists"},
                            {"key": label, "operator": "NotIn", "values": [group_key]},
                        ]
                    },
                    "topologyKey": topology_key,
                }
            ]
        },
    }


# --- the topology request: read once, for admission, translation and the controller ---------


class TopologyRequest(NamedTuple):
    """What one LeaderWorkerSet asks of the network topology and of its gangs.

    A NamedTuple, not a frozen dataclass, for the same reason as `webhooks.admission.Review`:
    admission reads one per LeaderWorkerSet it is sent.
    """

    network_topology: volcano.NetworkTopologySpec | None
    """Each group's constraint, mode filled in (`hard` when unset): from spec.networkTopology,
    else from the Volcano annotations; None when neither is given."""
    from_annotations: bool
    """True when `network_topology` comes from the Volcano annotations."""
    overridden_annotations: volcano.NetworkTopologySpec | None
    """The Volcano annotations' constraint when spec.networkTopology also gives one (it wins)."""
    subgroup_size: int | None
    """Pods per subgroup; None: the groups do not split."""
    subgroup_count: int | None
    """Subgroups per group, as LWS counts them."""
    subgroup_topology: volcano.NetworkTopologySpec | None
    """Each subgroup's constraint, from the `topobridge.io/subgroup-*` annotations."""
    queue: str | None
    """Volcano queue, from the `scheduling.volcano.sh/queue-name` annotation."""


def topology_request(lws: LeaderWorkerSet) -> tuple[TopologyRequest, list[InvalidSpecError]]:
    """Read what `lws` asks for, with every problem found (empty when it can be honoured).

    The one reading of an LWS's topology: the admission rule, `topobridge translate` and the
    controller all call it, so what is admitted is exactly what can be translated.
    """
    problems: list[InvalidSpecError] = []
    annotations = lws.metadata.annotations or {}
    subgroup_count = _group_shape(lws.spec, problems)
    from_spec = _spec_topology(lws.spec.network_topology, problems)
    from_annotations, subgroup, queue = _read_annotations(annotations, problems)
    _template_requests(lws.spec.leader_worker_template, problems)
    policy = lws.spec.leader_worker_template.sub_group_policy
    if subgroup is not None and policy is None:
        key = (
            SUBGROUP_MODE_ANNOTATION if SUBGROUP_MODE_ANNOTATION in annotations else SUBGROUP_TIER_ANNOTATION
        )
        problems.append(
            InvalidSpecError(
                annotation_path(key),
                annotations[key],
                f"Invalid value: {render_value(annotations[key])}: a subgroup topology needs "
                f"{TEMPLATE_PATH}.subGroupPolicy.subGroupSize",
            )
        )
    job = from_spec if from_spec is not None else from_annotations
    if subgroup is not None and job is not None:
        sub_tier, job_tier = subgroup.highest_tier_allowed, job.highest_tier_allowed
        if sub_tier is not None and job_tier is not None and sub_tier > job_tier:
            problems.append(
                InvalidSpecError(
                    annotation_path(SUBGROUP_TIER_ANNOTATION),
                    annotations[SUBGROUP_TIER_ANNOTATION],
                    f'Invalid value: "{sub_tier}": a subgroup may not span a wider tier than its group '
                    f"({job_tier})",
                )
            )
    has_subgroups = policy is not None and subgroup_count is not None
    request = TopologyRequest(
        network_topology=job,
        from_annotations=from_spec is None and from_annotations is not None,
        overridden_annotations=from_annotations if from_spec is not None else None,
        subgroup_size=policy.sub_group_size if has_subgroups and policy is not None else None,
        subgroup_count=subgroup_count if has_subgroups else None,
        subgroup_topology=subgroup if has_subgroups else None,
        queue=queue,
    )
    return request, problems


def read_topology_request(
    raw: Any, *, keep_unknown: bool = True
) -> tuple[LeaderWorkerSet | None, TopologyRequest | None, list[InvalidSpecError]]:
    """`topology_request` of a raw object, parsed as strictly as the API server's schema check.

    An object that does not parse still gets its annotations read, so every problem comes
    back at once rather than in rounds. `keep_unknown=False` (admission, which never writes
    the object back) drops the fields no model names; the problems are the same either way.
    """
    if not isinstance(raw, dict):
        return (
            None,
            None,
            [InvalidSpecError("<root>", raw, f"Invalid value: {render_value(raw)}: must be of type object")],
        )
    try:
        lws = LeaderWorkerSet.parse(raw, strict=True, keep_unknown=keep_unknown)
    except InvalidSpecError as exc:
        problems = list(exc.all)
        annotations = _raw_annotations(raw)
        if annotations is not None and not any(
            p.field_path.startswith("metadata.annotations") for p in problems
        ):
            _read_annotations(annotations, problems)
        return None, None, problems
    request, problems = topology_request(lws)
    return lws, request, problems


def annotation_path(key: str) -> str:
    return f"metadata.annotations[{key}]"


TEMPLATE_PATH = "spec.leaderWorkerTemplate"
_DECIMAL = re.compile(r"^(0|[1-9][0-9]{0,9})\Z")
_MODES: tuple[volcano.NetworkTopologyMode, ...] = ("hard", "soft")


def _raw_annotations(raw: JsonDict) -> dict[str, str] | None:
    meta = raw.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(annotations, dict):
        return None
    return {k: v for k, v in annotations.items() if isinstance(k, str) and isinstance(v, str)}


def _read_annotations(
    annotations: Mapping[str, str], problems: list[InvalidSpecError]
) -> tuple[volcano.NetworkTopologySpec | None, volcano.NetworkTopologySpec | None, str | None]:
    """(job topology, subgroup topology, queue) from the annotations."""
    if not annotations:
        return None, None, None
    job = _annotation_topology(
        annotations, volcano.POD_TOPOLOGY_MODE_ANNOTATION, volcano.POD_TOPOLOGY_TIER_ANNOTATION, problems
    )
    subgroup = _annotation_topology(annotations, SUBGROUP_MODE_ANNOTATION, SUBGROUP_TIER_ANNOTATION, problems)
    queue = annotations.get(QUEUE_ANNOTATION)
    if queue is not None:
        try:
            volcano.PodGroupSpec.parse({"queue": queue}, strict=True)
        except InvalidSpecError as exc:
            problems.append(InvalidSpecError(annotation_path(QUEUE_ANNOTATION), queue, exc.detail))
            queue = None
    return job, subgroup, queue


def _annotation_topology(
    annotations: Mapping[str, str], mode_key: str, tier_key: str, problems: list[InvalidSpecError]
) -> volcano.NetworkTopologySpec | None:
    mode, tier = annotations.get(mode_key), annotations.get(tier_key)
    if mode is None and tier is None:
        return None
    bad = False
    if mode is not None and mode not in _MODES:
        problems.append(
            InvalidSpecError(
                annotation_path(mode_key),
                mode,
                f'Unsupported value: {render_value(mode)}: supported values: "hard", "soft"',
            )
        )
        bad = True
    if tier is not None and (not _DECIMAL.match(tier) or int(tier) > INT32_MAX):
        problems.append(
            InvalidSpecError(
                annotation_path(tier_key),
                tier,
                f"Invalid value: {render_value(tier)}: must be a non-negative decimal integer",
            )
        )
        bad = True
    if bad:
        return None
    return volcano.network_topology(
        cast(volcano.NetworkTopologyMode, mode or "hard"), None if tier is None else int(tier)
    )


def _spec_topology(
    nt: NetworkTopology | None, problems: list[InvalidSpecError]
) -> volcano.NetworkTopologySpec | None:
    if nt is None:
        return None
    tier, name = nt.highest_tier_allowed, nt.highest_tier_name
    found = volcano.network_topology_problems(
        highest_tier_allowed=tier, highest_tier_name=name, path="spec.networkTopology"
    )
    if found:
        problems.extend(found)
        return None
    # Built, not parsed: `nt` passed the same field checks when the LeaderWorkerSet parsed.
    return volcano.network_topology(nt.mode or "hard", tier, name)


def _group_shape(spec: LeaderWorkerSetSpec, problems: list[InvalidSpecError]) -> int | None:
    """The group shape LWS's own webhook enforces; returns the subgroups per group (None
    without subgroups or when the shape is wrong): the size (`_group_size`), then the
    subgroup policy (`_subgroups_per_group`)."""
    size = _group_size(spec, problems)
    policy = spec.leader_worker_template.sub_group_policy
    if size is None or policy is None:
        return None
    return _subgroups_per_group(policy, size, problems)


def _group_size(spec: LeaderWorkerSetSpec, problems: list[InvalidSpecError]) -> int | None:
    """The pods per group, None when the size itself is out of range; replicas times size
    must stay within int32 too."""
    # Every admitted LeaderWorkerSet comes through here: paths and messages are spelled out
    # only for a shape that is wrong.
    size = spec.leader_worker_template.effective_size
    replicas = spec.replicas
    replicas_ok = replicas is None or replicas <= INT32_MAX
    if not replicas_ok:
        problems += at_most("spec.replicas", replicas, INT32_MAX)
    if size < 1:
        problems.append(
            InvalidSpecError(
                f"{TEMPLATE_PATH}.size", size, f"Invalid value: {size}: must be greater than or equal to 1"
            )
        )
        return None
    if size > INT32_MAX:
        problems += at_most(f"{TEMPLATE_PATH}.size", size, INT32_MAX)
        return None
    if replicas_ok and (1 if replicas is None else replicas) * size > INT32_MAX:
        problems.append(
            InvalidSpecError(
                "spec.replicas",
                replicas,
                f"Invalid value: {replicas}: the product of replicas and size must not exceed {INT32_MAX}",
            )
        )
    return size


def _subgroups_per_group(policy: SubGroupPolicy, size: int, problems: list[InvalidSpecError]) -> int | None:
    """Subgroups per group under `policy` (LeaderExcluded: the workers alone divide into
    subgroups; otherwise the group, with or without its leader), None when none divides."""
    sub = policy.sub_group_size
    if sub is None:
        problems.append(
            InvalidSpecError(
                _SUBGROUP_SIZE_PATH, None, "Required value: must be set when subGroupPolicy is given"
            )
        )
        return None
    if 1 <= sub <= size:
        if policy.sub_group_policy_type == "LeaderExcluded":
            if not (size - 1) % sub:
                return (size - 1) // sub
            detail = f"size-1 ({size - 1}) must be divisible by subGroupSize with LeaderExcluded"
        elif (size - 1) % sub == 0:
            return max((size - 1) // sub, 1)
        elif size % sub == 0:
            return size // sub
        else:
            detail = f"size ({size}) or size-1 ({size - 1}) must be divisible by subGroupSize"
    elif sub < 1:
        detail = "must be greater than or equal to 1"
    else:
        detail = f"must not be larger than size ({size})"
    problems.append(InvalidSpecError(_SUBGROUP_SIZE_PATH, sub, f"Invalid value: {sub}: {detail}"))
    return None


_SUBGROUP_SIZE_PATH = f"{TEMPLATE_PATH}.subGroupPolicy.subGroupSize"


def _template_requests(tpl: LeaderWorkerTemplate, problems: list[InvalidSpecError]) -> None:
    """Every quantity the gang's minResources adds up must parse."""
    templates = (("leaderTemplate", tpl.leader_template), ("workerTemplate", tpl.worker_template))
    for name, template in templates:
        if template is None:
            continue
        try:
            effective_requests(template.spec)
        except InvalidSpecError as exc:
            problems.extend(
                InvalidSpecError(f"{TEMPLATE_PATH}.{name}.{p.field_path}", p.value, p.detail) for p in exc.all
            )
