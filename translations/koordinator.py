"""Koordinator's network topology and gang dialect.

* ClusterNetworkTopology (`scheduling.koordinator.sh/v1alpha1`, cluster-scoped; only the
  object named `default` is read by Koordinator).
* PodGroup (`scheduling.sigs.k8s.io/v1alpha1`), the coscheduling group Koordinator bundles.
* The gang annotations, each with a typed parser. Koordinator itself silently replaces a
  bad value with a default; these parsers raise InvalidSpecError naming the annotation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

import jsonschema
from pydantic import Field

from translations._base import KubeModel, TypedObject
from translations.errors import InvalidSpecError
from translations.quantity import Quantity

GROUP = "scheduling.koordinator.sh"
CNT_API_VERSION = f"{GROUP}/v1alpha1"
CNT_DEFAULT_NAME = "default"
NODE_LAYER = "NodeTopologyLayer"
CLUSTER_LAYER = "ClusterTopologyLayer"

SIGS_GROUP = "scheduling.sigs.k8s.io"
SIGS_API_VERSION = f"{SIGS_GROUP}/v1alpha1"
SIGS_POD_GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io"

GANG_PREFIX = "gang.scheduling.koordinator.sh/"
GANG_NAME = GANG_PREFIX + "name"
GANG_MIN_AVAILABLE = GANG_PREFIX + "min-available"
GANG_TOTAL_NUMBER = GANG_PREFIX + "total-number"
GANG_MODE = GANG_PREFIX + "mode"
GANG_WAITING_TIME = GANG_PREFIX + "waiting-time"
GANG_GROUPS = GANG_PREFIX + "groups"
GANG_MATCH_POLICY = GANG_PREFIX + "match-policy"
NETWORK_TOPOLOGY_SPEC = GANG_PREFIX + "network-topology-spec"
NETWORK_TOPOLOGY_INDEX = GANG_PREFIX + "network-topology-index"

GANG_MODES = ("Strict", "NonStrict")
MATCH_POLICIES = ("once-satisfied", "only-waiting", "waiting-and-running")
GATHER_STRATEGIES = ("MustGather", "PreferGather")


# --- ClusterNetworkTopology -------------------------------------------------------------


class NetworkTopologyLayerSpec(KubeModel):
    """One layer of the cluster's network tree."""

    topology_layer: str
    """Name of this layer, e.g. `BlockLayer`; `NodeTopologyLayer` is the leaf layer."""
    parent_topology_layer: str | None = None
    """The layer directly above; unset for the top layer (under the implicit cluster root)."""
    label_key: list[str] | None = None
    """Node label keys whose values name this layer's domains."""


class ClusterNetworkTopologySpec(KubeModel):
    """The layers of the network tree, any order."""

    network_topology_spec: list[NetworkTopologyLayerSpec]
    """Layers, chained by parentTopologyLayer up from NodeTopologyLayer."""


class TopologyInfo(KubeModel):
    """Names one domain: its layer and its label value."""

    topology_layer: str
    """Layer of the domain."""
    topology_name: str
    """Label value naming the domain; empty for the cluster root."""


class DetailStatus(KubeModel):
    """One domain in the observed tree."""

    topology_info: TopologyInfo
    """The domain."""
    parent_topology_info: TopologyInfo | None = None
    """Its parent domain."""
    child_topology_layer: str | None = None
    """Layer of its children."""
    child_topology_names: list[str] | None = None
    """Names of its children (none when the children are nodes)."""
    node_num: int = Field(json_schema_extra={"format": "int32"})
    """Nodes under the domain."""


class ClusterNetworkTopologyStatus(KubeModel):
    """The tree as observed from node labels."""

    detail_status: list[DetailStatus] | None = None
    """Every domain, top-down."""


class ClusterNetworkTopology(TypedObject):
    """Koordinator's description of the cluster's network layers."""

    api_version: str | None = CNT_API_VERSION
    kind: str | None = "ClusterNetworkTopology"
    spec: ClusterNetworkTopologySpec
    """Layer definitions."""
    status: ClusterNetworkTopologyStatus | None = None
    """Observed tree."""

    def layers_bottom_up(self) -> list[NetworkTopologyLayerSpec]:
        """The layers from just above nodes to the top, following parentTopologyLayer.

        Raises InvalidSpecError when the layers do not form one chain from NodeTopologyLayer.
        """
        by_name: dict[str, NetworkTopologyLayerSpec] = {}
        for i, layer in enumerate(self.spec.network_topology_spec):
            if layer.topology_layer in by_name:
                raise InvalidSpecError(
                    f"spec.networkTopologySpec[{i}].topologyLayer", layer.topology_layer,
                    f'Duplicate value: "{layer.topology_layer}"',
                )
            by_name[layer.topology_layer] = layer
        if NODE_LAYER not in by_name:
            raise InvalidSpecError("spec.networkTopologySpec", None, f'Required value: a layer named "{NODE_LAYER}"')
        chain: list[NetworkTopologyLayerSpec] = []
        seen = {NODE_LAYER}
        parent = by_name[NODE_LAYER].parent_topology_layer
        while parent:
            if parent in seen:
                raise InvalidSpecError("spec.networkTopologySpec", parent, f'Invalid value: "{parent}": layers form a cycle')
            if parent not in by_name:
                raise InvalidSpecError(
                    "spec.networkTopologySpec", parent, f'Not found: "{parent}": parentTopologyLayer names no layer'
                )
            seen.add(parent)
            chain.append(by_name[parent])
            parent = by_name[parent].parent_topology_layer
        orphans = sorted(set(by_name) - seen)
        if orphans:
            raise InvalidSpecError(
                "spec.networkTopologySpec", orphans,
                f"Invalid value: {json.dumps(orphans)}: layers not on the chain up from {NODE_LAYER}",
            )
        return chain


# --- PodGroup scheduling.sigs.k8s.io/v1alpha1 ---------------------------------------------


class SigsPodGroupSpec(KubeModel):
    """Coscheduling PodGroup spec."""

    min_member: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Pods that must be schedulable together."""
    min_resources: dict[str, Quantity] | None = None
    """Resources the whole gang needs."""
    schedule_timeout_seconds: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """How long a gang waits for all its pods."""


class SigsPodGroupStatus(KubeModel):
    """Coscheduling PodGroup status."""

    phase: str | None = None
    """Lifecycle phase."""
    occupied_by: str | None = None
    """Owner of the pods."""
    scheduled: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Scheduled pods."""
    running: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Running pods."""
    succeeded: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Succeeded pods."""
    failed: int | None = Field(default=None, json_schema_extra={"format": "int32"})
    """Failed pods."""
    schedule_start_time: str | None = Field(default=None, json_schema_extra={"format": "date-time"})
    """When scheduling began."""


class SigsPodGroup(TypedObject):
    """PodGroup of the coscheduling plugin Koordinator ships."""

    api_version: str | None = SIGS_API_VERSION
    kind: str | None = "PodGroup"
    spec: SigsPodGroupSpec = Field(default_factory=SigsPodGroupSpec)
    """Desired gang."""
    status: SigsPodGroupStatus | None = None
    """Observed gang."""


# --- Gang annotations ---------------------------------------------------------------------

GatherStrategyName = Literal["MustGather", "PreferGather"]

NETWORK_TOPOLOGY_SPEC_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "gatherStrategy": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "layer": {"type": "string", "minLength": 1},
                    "strategy": {"enum": list(GATHER_STRATEGIES)},
                    "podCountMultiple": {"type": "integer", "minimum": 1},
                },
                "required": ["layer", "strategy"],
            },
        },
    },
    "required": ["gatherStrategy"],
}
_SPEC_VALIDATOR = jsonschema.Draft202012Validator(NETWORK_TOPOLOGY_SPEC_SCHEMA)


@dataclass(frozen=True, slots=True)
class GatherStrategy:
    layer: str
    strategy: GatherStrategyName
    pod_count_multiple: int | None = None


@dataclass(frozen=True, slots=True)
class NetworkTopologyGatherSpec:
    """The parsed `network-topology-spec` annotation."""

    gather_strategy: tuple[GatherStrategy, ...]

    def to_annotation(self) -> str:
        items: list[dict[str, Any]] = []
        for g in self.gather_strategy:
            item: dict[str, Any] = {"layer": g.layer, "strategy": g.strategy}
            if g.pod_count_multiple is not None:
                item["podCountMultiple"] = g.pod_count_multiple
            items.append(item)
        return json.dumps({"gatherStrategy": items}, separators=(",", ":"))


def annotation_path(key: str) -> str:
    return f"metadata.annotations[{key}]"


def _json_path(error: jsonschema.ValidationError) -> str:
    out = ""
    for p in error.absolute_path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def parse_network_topology_spec(raw: str) -> NetworkTopologyGatherSpec:
    """Parse and check the `network-topology-spec` annotation (JSON Schema, then duplicates)."""
    field = annotation_path(NETWORK_TOPOLOGY_SPEC)
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise InvalidSpecError(field, raw, f"Invalid value: {_quote(raw)}: not valid JSON: {detail}") from None
    errors = sorted(_SPEC_VALIDATOR.iter_errors(data), key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        err = errors[0]
        raise InvalidSpecError(
            field + _json_path(err), err.instance, f"Invalid value: {_render(err.instance)}: {err.message}"
        )
    strategies: list[GatherStrategy] = []
    seen: set[str] = set()
    for i, item in enumerate(data["gatherStrategy"]):
        if item["layer"] in seen:
            raise InvalidSpecError(
                f"{field}.gatherStrategy[{i}].layer", item["layer"], f"Duplicate value: {_render(item['layer'])}"
            )
        seen.add(item["layer"])
        strategies.append(GatherStrategy(item["layer"], item["strategy"], item.get("podCountMultiple")))
    return NetworkTopologyGatherSpec(tuple(strategies))


_DECIMAL = re.compile(r"^(0|[1-9][0-9]*)$")


def parse_non_negative_int(key: str, raw: str) -> int:
    """A decimal integer annotation (index, min-available, total-number)."""
    if not _DECIMAL.match(raw) or len(raw) > 10 or int(raw) > 2**31 - 1:
        raise InvalidSpecError(
            annotation_path(key), raw, f"Invalid value: {_quote(raw)}: must be a non-negative decimal integer (at most 2147483647)"
        )
    return int(raw)


def parse_groups(raw: str) -> tuple[str, ...]:
    """The `groups` annotation: a JSON array of "namespace/name" strings."""
    field = annotation_path(GANG_GROUPS)
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        raise InvalidSpecError(field, raw, f"Invalid value: {_quote(raw)}: not a JSON array") from None
    if not isinstance(data, list):
        raise InvalidSpecError(field, raw, f"Invalid value: {_quote(raw)}: must be a JSON array of \"namespace/name\" strings")
    out: list[str] = []
    for i, item in enumerate(data):
        if not isinstance(item, str) or not _GANG_ID.match(item):
            raise InvalidSpecError(
                f"{field}[{i}]", item, f'Invalid value: {_render(item)}: must be "namespace/name"'
            )
        out.append(item)
    return tuple(out)


_GANG_ID = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_DURATION = re.compile(r"^(?:0|(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))*$")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(key: str, raw: str) -> float:
    """A Go duration (`300s`, `1h30m`) in seconds."""
    if not raw or not _DURATION.match(raw):
        raise InvalidSpecError(
            annotation_path(key), raw, f'Invalid value: {_quote(raw)}: must be a duration such as "300s" or "1h30m"'
        )
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", raw):
        total += float(number) * _UNIT_SECONDS[unit]
    return total


def parse_enum(key: str, raw: str, allowed: tuple[str, ...]) -> str:
    if raw not in allowed:
        supported = ", ".join(f'"{a}"' for a in allowed)
        raise InvalidSpecError(annotation_path(key), raw, f"Unsupported value: {_quote(raw)}: supported values: {supported}")
    return raw


@dataclass(frozen=True, slots=True)
class GangAnnotations:
    """Every gang annotation of one Pod or PodGroup, parsed; None where absent."""

    name: str | None = None
    min_available: int | None = None
    total_number: int | None = None
    mode: str | None = None
    waiting_time_seconds: float | None = None
    groups: tuple[str, ...] | None = None
    match_policy: str | None = None
    network_topology: NetworkTopologyGatherSpec | None = None
    network_topology_index: int | None = None


def parse_gang_annotations(annotations: dict[str, str] | None) -> GangAnnotations:
    """Parse all gang annotations; the first malformed one raises InvalidSpecError."""
    a = annotations or {}
    min_available = parse_non_negative_int(GANG_MIN_AVAILABLE, a[GANG_MIN_AVAILABLE]) if GANG_MIN_AVAILABLE in a else None
    total = parse_non_negative_int(GANG_TOTAL_NUMBER, a[GANG_TOTAL_NUMBER]) if GANG_TOTAL_NUMBER in a else None
    if min_available is not None and total is not None and total < min_available:
        raise InvalidSpecError(
            annotation_path(GANG_TOTAL_NUMBER), a[GANG_TOTAL_NUMBER],
            f'Invalid value: "{a[GANG_TOTAL_NUMBER]}": must be greater than or equal to {GANG_MIN_AVAILABLE} ({min_available})',
        )
    return GangAnnotations(
        name=a.get(GANG_NAME),
        min_available=min_available,
        total_number=total,
        mode=parse_enum(GANG_MODE, a[GANG_MODE], GANG_MODES) if GANG_MODE in a else None,
        waiting_time_seconds=parse_duration(GANG_WAITING_TIME, a[GANG_WAITING_TIME]) if GANG_WAITING_TIME in a else None,
        groups=parse_groups(a[GANG_GROUPS]) if GANG_GROUPS in a else None,
        match_policy=parse_enum(GANG_MATCH_POLICY, a[GANG_MATCH_POLICY], MATCH_POLICIES) if GANG_MATCH_POLICY in a else None,
        network_topology=parse_network_topology_spec(a[NETWORK_TOPOLOGY_SPEC]) if NETWORK_TOPOLOGY_SPEC in a else None,
        network_topology_index=(
            parse_non_negative_int(NETWORK_TOPOLOGY_INDEX, a[NETWORK_TOPOLOGY_INDEX]) if NETWORK_TOPOLOGY_INDEX in a else None
        ),
    )


def _quote(raw: str) -> str:
    return json.dumps(raw if len(raw) <= 120 else raw[:117] + "...", ensure_ascii=False)


def _render(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."
