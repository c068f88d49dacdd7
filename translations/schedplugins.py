"""scheduler-plugins' PodGroup (`scheduling.x-k8s.io/v1alpha1`), joined by a pod label."""

from __future__ import annotations

from pydantic import Field

from translations._base import KubeModel, TypedObject
from translations.quantity import Quantity

GROUP = "scheduling.x-k8s.io"
API_VERSION = f"{GROUP}/v1alpha1"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


class XPodGroupSpec(KubeModel):
    """scheduler-plugins PodGroup spec."""

    min_member: int | None = Field(default=None, ge=1, json_schema_extra={"format": "int32"})
    """Pods that must be schedulable together."""
    min_resources: dict[str, Quantity] | None = None
    """Resources the whole gang needs."""
    schedule_timeout_seconds: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """How long a gang waits for all its pods."""


class XPodGroupStatus(KubeModel):
    """scheduler-plugins PodGroup status."""

    phase: str | None = None
    """Lifecycle phase."""
    occupied_by: str | None = None
    """Owner of the pods."""
    running: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Running pods."""
    succeeded: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Succeeded pods."""
    failed: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Failed pods."""
    schedule_start_time: str | None = Field(default=None, json_schema_extra={"format": "date-time"})
    """When scheduling began."""


class XPodGroup(TypedObject):
    """PodGroup of the scheduler-plugins coscheduling plugin."""

    api_version: str | None = API_VERSION
    kind: str | None = "PodGroup"
    spec: XPodGroupSpec = Field(default_factory=XPodGroupSpec)
    """Desired gang."""
    status: XPodGroupStatus | None = None
    """Observed gang."""
