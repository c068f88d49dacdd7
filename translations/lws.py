"""LeaderWorkerSet (`leaderworkerset.x-k8s.io/v1`), with the new `spec.networkTopology`.

Upstream LWS has no networkTopology yet (an API server with the upstream CRD prunes it
silently); topobridge's generated CRD carries it, as the LWS+Volcano topology plan adds it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from translations._base import JsonDict, KubeModel, TypedObject
from translations.core import PodTemplateSpec

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
QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"

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


def exclusive_affinity(group_key: str, topology_key: str) -> dict[str, object]:
    """The pod affinity LWS's pod webhook injects for exclusive placement: a group's pods share
    one value of `topology_key` (required affinity to their own group-key) and no other group's
    pod is there (required anti-affinity to every other group-key)."""
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": GROUP_KEY_LABEL, "operator": "In", "values": [group_key]}
                        ]
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
                            {"key": GROUP_KEY_LABEL, "operator": "Exists"},
                            {"key": GROUP_KEY_LABEL, "operator": "NotIn", "values": [group_key]},
                        ]
                    },
                    "topologyKey": topology_key,
                }
            ]
        },
    }
