"""Koordinator's network topology and gang dialect.

* ClusterNetworkTopology (`scheduling.koordinator.sh/v1alpha1`, cluster-scoped; only the
  object named `default` is read by Koordinator).
* PodGroup (`scheduling.sigs.k8s.io/v1alpha1`), the coscheduling group Koordinator bundles.
* The gang annotations, each with a typed parser. Koordinator itself silently replaces a
  bad value with a default; these parsers raise InvalidSpecError naming the annotation.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import jsonschema
from pydantic import Field

from translations import jsontext
from translations._base import (
    DNS1123_SUBDOMAIN,
    DNS1123_SUBDOMAIN_MESSAGE,
    INT32_MAX,
    KubeModel,
    TypedObject,
    at_most,
)
from translations.errors import InvalidSpecError, raise_all, render_value
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


_LAYERS = "spec.networkTopologySpec"


def _layer_names(layers: Sequence[NetworkTopologyLayerSpec], out: list[InvalidSpecError]) -> dict[str, int]:
    """Layer name -> its position; a missing, reserved or repeated name goes to `out` instead."""
    by_name: dict[str, int] = {}
    for i, layer in enumerate(layers):
        name, here = layer.topology_layer, f"{_LAYERS}[{i}].topologyLayer"
        if not name:
            out.append(InvalidSpecError(here, name, "Required value"))
        elif name == CLUSTER_LAYER:
            out.append(
                InvalidSpecError(
                    here,
                    name,
                    f"Invalid value: {render_value(name)}: is the implicit root of the tree and cannot be declared",
                )
            )
        elif name in by_name:
            out.append(InvalidSpecError(here, name, f"Duplicate value: {render_value(name)}"))
        else:
            by_name[name] = i
    return by_name


def _chain_up(
    layers: Sequence[NetworkTopologyLayerSpec], by_name: Mapping[str, int], out: list[InvalidSpecError]
) -> list[str] | None:
    """The layers from the node layer up to the cluster root, following parentTopologyLayer;
    None (the reason in `out`) when the chain runs into a cycle or a layer no one declares."""
    seen = [NODE_LAYER]
    while True:
        i = by_name[seen[-1]]
        parent = layers[i].parent_topology_layer
        here = f"{_LAYERS}[{i}].parentTopologyLayer"
        if not parent or parent == CLUSTER_LAYER:
            return seen
        if parent in seen:
            cycle = " -> ".join([*seen[seen.index(parent) :], parent])
            detail = f"Invalid value: {render_value(parent)}: layers form a cycle: {cycle}"
            out.append(InvalidSpecError(here, parent, detail))
            return None
        if parent not in by_name:
            detail = f"Not found: {render_value(parent)}: no layer has this topologyLayer"
            out.append(InvalidSpecError(here, parent, detail))
            return None
        seen.append(parent)


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

        Raises InvalidSpecError (every problem, first one raised) when the layers do not
        form one chain from NodeTopologyLayer.
        """
        problems = self.chain_problems()
        if problems:
            raise InvalidSpecError(
                problems[0].field_path, problems[0].value, problems[0].detail, more=problems[1:]
            )
        by_name = {layer.topology_layer: layer for layer in self.spec.network_topology_spec}
        chain: list[NetworkTopologyLayerSpec] = []
        parent = by_name[NODE_LAYER].parent_topology_layer
        while parent and parent != CLUSTER_LAYER:
            chain.append(by_name[parent])
            parent = by_name[parent].parent_topology_layer
        return chain

    def chain_problems(self) -> list[InvalidSpecError]:
        """Why the layers are not one chain up from NodeTopologyLayer (empty when they are).

        A top layer may name `ClusterTopologyLayer` as its parent or leave the parent unset:
        both end the chain at the implicit cluster root. Names first (`_layer_names`), then the
        walk up from the node layer (`_chain_up`), then the layers it never reached.
        """
        layers = self.spec.network_topology_spec
        out: list[InvalidSpecError] = []
        by_name = _layer_names(layers, out)
        if NODE_LAYER not in by_name:
            out.append(InvalidSpecError(_LAYERS, None, f'Required value: a layer named "{NODE_LAYER}"'))
            return out
        seen = _chain_up(layers, by_name, out)
        if seen is None:
            return out
        for name, i in by_name.items():
            if name not in seen:
                out.append(
                    InvalidSpecError(
                        f"{_LAYERS}[{i}].topologyLayer",
                        name,
                        f"Invalid value: {render_value(name)}: not on the parentTopologyLayer chain up from {NODE_LAYER}",
                    )
                )
        return out

    def problems(self) -> list[InvalidSpecError]:
        """Everything Koordinator needs of the object: the chain, and a node label key for
        every layer above the nodes (without one no node can be placed in that layer)."""
        out = self.chain_problems()
        for i, layer in enumerate(self.spec.network_topology_spec):
            if layer.topology_layer == NODE_LAYER:
                continue
            here = f"spec.networkTopologySpec[{i}].labelKey"
            if not layer.label_key:
                out.append(
                    InvalidSpecError(
                        here,
                        layer.label_key,
                        f"Required value: every layer above {NODE_LAYER} needs a node label key",
                    )
                )
            for j, key in enumerate(layer.label_key or []):
                if not key:
                    out.append(InvalidSpecError(f"{here}[{j}]", key, "Required value"))
        return out


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
                    "podCountMultiple": {"type": "integer", "minimum": 1, "maximum": 2**31 - 1},
                },
                "required": ["layer", "strategy"],
            },
        },
    },
    "required": ["gatherStrategy"],
}
# Koordinator decodes the annotation with Go's encoding/json: 2.0 does not fit an int there,
# although JSON Schema calls it an integer.
_STRICT_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, v: isinstance(v, int) and not isinstance(v, bool)
)
_SPEC_VALIDATOR = jsonschema.validators.extend(  # type: ignore[no-untyped-call]  # untyped in the stubs
    jsonschema.Draft202012Validator, type_checker=_STRICT_TYPES
)(NETWORK_TOPOLOGY_SPEC_SCHEMA)


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


def topology_spec_text(spec: NetworkTopologyGatherSpec | None) -> str:
    return spec.to_annotation() if spec is not None else "none"


def gang_group_spec_conflict(
    members: Sequence[tuple[str, NetworkTopologyGatherSpec | None]],
) -> str | None:
    """The placer's wording of `differing_group_members` for a whole GangGroup: the first
    member whose spec differs from the first member's, both named with their specs; None when
    every member carries the same spec (all none included)."""
    if not members:
        return None
    first_id, first_spec = members[0]
    specs = dict(members)
    other_id = next(iter(differing_group_members(first_id, first_spec, [m for m, _ in members], specs)), None)
    if other_id is None:
        return None
    return (
        f"GangGroup {', '.join(m for m, _ in members)}: member {first_id} has "
        f"network-topology-spec {topology_spec_text(first_spec)} but {other_id} has "
        f"{topology_spec_text(specs[other_id])}; every member of a GangGroup must carry the same spec"
    )


def annotation_path(key: str) -> str:
    return f"metadata.annotations[{key}]"


def _json_path(error: jsonschema.ValidationError) -> str:
    out = ""
    for p in error.absolute_path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _load_json(field: str, raw: str) -> tuple[Any, InvalidSpecError | None]:
    """JSON as Go reads it: no NaN or Infinity; numbers too long to handle are refused."""
    try:
        jsontext.check_depth(raw)
        return json.loads(raw, parse_constant=_no_constant), None
    except json.JSONDecodeError as exc:
        detail = f"{exc.msg} (at offset {exc.pos})"
    except RecursionError:  # the caller's stack was deep already
        detail = "nested too deeply"
    except ValueError as exc:  # TooDeep, an integer of more than 4,300 digits, NaN
        detail = str(exc)
    return None, InvalidSpecError(field, raw, f"Invalid value: {render_value(raw)}: not valid JSON: {detail}")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _schema_problem(field: str, err: jsonschema.ValidationError) -> list[InvalidSpecError]:
    here, value, shown = field + _json_path(err), err.instance, render_value(err.instance)
    match err.validator:
        case "type":
            return [
                InvalidSpecError(
                    here, value, f"Invalid value: {shown}: must be of type {err.validator_value}"
                )
            ]
        case "enum":
            supported = ", ".join(render_value(v) for v in cast(list[Any], err.validator_value))
            return [
                InvalidSpecError(here, value, f"Unsupported value: {shown}: supported values: {supported}")
            ]
        case "required":
            return [
                InvalidSpecError(f"{here}.{prop}", None, "Required value")
                for prop in cast(list[str], err.validator_value)
                if isinstance(value, dict) and prop not in value
            ]
        case "minLength":
            return [InvalidSpecError(here, value, "Required value")]
        case "minimum":
            return [
                InvalidSpecError(
                    here,
                    value,
                    f"Invalid value: {shown}: must be greater than or equal to {err.validator_value}",
                )
            ]
        case "maximum":
            return [
                InvalidSpecError(
                    here,
                    value,
                    f"Invalid value: {shown}: must be less than or equal to {err.validator_value}",
                )
            ]
    return [InvalidSpecError(here, value, f"Invalid value: {shown}: {err.message}")]


def check_network_topology_spec(raw: str) -> tuple[NetworkTopologyGatherSpec | None, list[InvalidSpecError]]:
    """The `network-topology-spec` annotation parsed, or every reason it cannot be (JSON,
    then the JSON Schema, then duplicate layers)."""
    # Every pod of a gang carries the same spec: remember short ones (JSON Schema is slow).
    if len(raw) <= 4096:
        spec, problems = _check_network_topology_spec_cached(raw)
        return spec, list(problems)
    return _check_network_topology_spec(raw)


@functools.lru_cache(maxsize=512)
def _check_network_topology_spec_cached(
    raw: str,
) -> tuple[NetworkTopologyGatherSpec | None, tuple[InvalidSpecError, ...]]:
    spec, problems = _check_network_topology_spec(raw)
    return spec, tuple(problems)


def _check_network_topology_spec(raw: str) -> tuple[NetworkTopologyGatherSpec | None, list[InvalidSpecError]]:
    field = annotation_path(NETWORK_TOPOLOGY_SPEC)
    data, bad_json = _load_json(field, raw)
    if bad_json is not None:
        return None, [bad_json]
    items = data.get("gatherStrategy") if isinstance(data, dict) else None
    # Before the JSON Schema, whose cost grows with every item.
    if isinstance(items, list) and (
        too_many := _too_many(f"{field}.gatherStrategy", items, MAX_GATHER_STRATEGIES)
    ):
        return None, too_many
    problems: list[InvalidSpecError] = []
    seen_places: set[str] = set()
    # One problem per place; a wrong type says more than the bounds it then also breaks.
    by_place = sorted(
        _SPEC_VALIDATOR.iter_errors(data),
        key=lambda e: (list(map(str, e.absolute_path)), e.validator != "type", e.message),
    )
    for err in by_place:
        for p in _schema_problem(field, err):
            if p.field_path not in seen_places:
                seen_places.add(p.field_path)
                problems.append(p)
    layers_seen: set[str] = set()
    for i, item in enumerate(items if isinstance(items, list) else []):
        layer = item.get("layer") if isinstance(item, dict) else None
        if isinstance(layer, str) and layer:
            if layer in layers_seen:
                problems.append(
                    InvalidSpecError(
                        f"{field}.gatherStrategy[{i}].layer", layer, f"Duplicate value: {render_value(layer)}"
                    )
                )
            layers_seen.add(layer)
    if problems:
        return None, problems
    assert isinstance(items, list)
    return NetworkTopologyGatherSpec(
        tuple(GatherStrategy(g["layer"], g["strategy"], g.get("podCountMultiple")) for g in items)
    ), []


def parse_network_topology_spec(raw: str) -> NetworkTopologyGatherSpec:
    """Parse and check the `network-topology-spec` annotation; raises every problem at once."""
    spec, problems = check_network_topology_spec(raw)
    raise_all(problems)
    assert spec is not None
    return spec


_DECIMAL = re.compile(r"^(0|[1-9][0-9]*)\Z")


def parse_non_negative_int(key: str, raw: str) -> int:
    """A decimal integer annotation (index, min-available, total-number)."""
    if not _DECIMAL.match(raw) or len(raw) > 10 or int(raw) > 2**31 - 1:
        raise InvalidSpecError(
            annotation_path(key),
            raw,
            f"Invalid value: {render_value(raw)}: must be a non-negative decimal integer (at most 2147483647)",
        )
    return int(raw)


def parse_groups(raw: str) -> tuple[str, ...]:
    """The `groups` annotation: a JSON array of at most MAX_GANG_GROUP_MEMBERS distinct
    "namespace/name" strings. Linear in its length."""
    field = annotation_path(GANG_GROUPS)
    data, bad_json = _load_json(field, raw)
    if bad_json is not None:
        raise bad_json
    if not isinstance(data, list):
        raise InvalidSpecError(
            field,
            raw,
            f'Invalid value: {render_value(raw)}: must be a JSON array of "namespace/name" strings',
        )
    raise_all(_too_many(field, data, MAX_GANG_GROUP_MEMBERS))
    seen: set[str] = set()
    problems: list[InvalidSpecError] = []
    for i, item in enumerate(data):
        if not isinstance(item, str) or not _GANG_ID.match(item):
            problems.append(
                InvalidSpecError(
                    f"{field}[{i}]", item, f'Invalid value: {render_value(item)}: must be "namespace/name"'
                )
            )
        elif item in seen:
            problems.append(InvalidSpecError(f"{field}[{i}]", item, f"Duplicate value: {render_value(item)}"))
        else:
            seen.add(item)
    raise_all(problems[:MAX_REPORTED_PROBLEMS])
    return tuple(dict.fromkeys(data))


MAX_GANG_GROUP_MEMBERS = 1024
"""Gangs one `groups` annotation may list (a GangGroup of a thousand gangs is already far
beyond any job; the bound keeps admission and the scheduler's reading of it cheap)."""
MAX_GATHER_STRATEGIES = 16
"""Entries of `network-topology-spec.gatherStrategy` (one per layer; clusters have a handful)."""
MAX_REPORTED_PROBLEMS = 20
"""Problems reported per annotation: enough to fix, little enough to read."""


def _too_many(field: str, items: list[Any], maximum: int) -> list[InvalidSpecError]:
    if len(items) > maximum:
        return [
            InvalidSpecError(field, len(items), f"Too many: {len(items)}: must have at most {maximum} items")
        ]
    return []


_GANG_ID = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?\Z")
_DURATION_UNITS = r"(?:ns|us|µs|μs|ms|s|m|h)"
_DURATION = re.compile(rf"^(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+){_DURATION_UNITS})+)\Z")
"""Go's time.ParseDuration: ASCII digits only (a `\\d` would take any script's)."""
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_MAX_DURATION_SECONDS = (2**63 - 1) / 1e9  # Go's time.Duration is int64 nanoseconds


def parse_duration(key: str, raw: str) -> float:
    """A non-negative Go duration (`300s`, `1h30m`) in seconds."""
    if not raw or not _DURATION.match(raw):
        raise InvalidSpecError(
            annotation_path(key),
            raw,
            f'Invalid value: {render_value(raw)}: must be a duration such as "300s" or "1h30m"',
        )
    total = 0.0
    for number, unit in re.findall(rf"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)({_DURATION_UNITS})", raw):
        total += float(number) * _UNIT_SECONDS[unit]
    if total > _MAX_DURATION_SECONDS:
        raise InvalidSpecError(
            annotation_path(key),
            raw,
            f"Invalid value: {render_value(raw)}: must be at most 2562047h47m16.854775807s",
        )
    return total


def parse_enum(key: str, raw: str, allowed: tuple[str, ...]) -> str:
    if raw not in allowed:
        supported = ", ".join(f'"{a}"' for a in allowed)
        raise InvalidSpecError(
            annotation_path(key),
            raw,
            f"Unsupported value: {render_value(raw)}: supported values: {supported}",
        )
    return raw


def parse_gang_name(raw: str) -> str:
    """The gang (PodGroup) name: a DNS-1123 subdomain, as every PodGroup name is."""
    if not raw:
        raise InvalidSpecError(annotation_path(GANG_NAME), raw, "Required value")
    if len(raw) > 253:
        raise InvalidSpecError(
            annotation_path(GANG_NAME), raw, "Too long: may not be more than 253 characters"
        )
    if not re.match(DNS1123_SUBDOMAIN, raw):
        raise InvalidSpecError(
            annotation_path(GANG_NAME),
            raw,
            f"Invalid value: {render_value(raw)}: {DNS1123_SUBDOMAIN_MESSAGE}",
        )
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


def check_gang_annotations(
    annotations: dict[str, str] | None,
) -> tuple[GangAnnotations, list[InvalidSpecError]]:
    """Parse every gang annotation; a malformed one is None in the result and its problems
    are listed (all of them, in annotation order)."""
    a = annotations or {}
    problems: list[InvalidSpecError] = []
    parsed: dict[str, Any] = {}
    # Only the keys present are parsed: a pod usually carries two or three of the nine.
    for key, field, parse in _GANG_PARSERS:
        if key not in a:
            continue
        try:
            parsed[field] = parse(a[key])
        except InvalidSpecError as exc:
            problems.extend(exc.all)
            continue
        if key == GANG_TOTAL_NUMBER:
            min_available, total = parsed.get("min_available"), parsed[field]
            if min_available is not None and total < min_available:
                problems.append(
                    InvalidSpecError(
                        annotation_path(GANG_TOTAL_NUMBER),
                        a[GANG_TOTAL_NUMBER],
                        f'Invalid value: "{a[GANG_TOTAL_NUMBER]}": must be greater than or equal to {GANG_MIN_AVAILABLE} ({min_available})',
                    )
                )
                del parsed[field]
    return GangAnnotations(**parsed), problems


_GANG_PARSERS: tuple[tuple[str, str, Callable[[str], Any]], ...] = (
    (GANG_NAME, "name", parse_gang_name),
    (GANG_MIN_AVAILABLE, "min_available", functools.partial(parse_non_negative_int, GANG_MIN_AVAILABLE)),
    (GANG_TOTAL_NUMBER, "total_number", functools.partial(parse_non_negative_int, GANG_TOTAL_NUMBER)),
    (GANG_MODE, "mode", lambda raw: parse_enum(GANG_MODE, raw, GANG_MODES)),
    (GANG_WAITING_TIME, "waiting_time_seconds", functools.partial(parse_duration, GANG_WAITING_TIME)),
    (GANG_GROUPS, "groups", parse_groups),
    (GANG_MATCH_POLICY, "match_policy", lambda raw: parse_enum(GANG_MATCH_POLICY, raw, MATCH_POLICIES)),
    (NETWORK_TOPOLOGY_SPEC, "network_topology", parse_network_topology_spec),
    (
        NETWORK_TOPOLOGY_INDEX,
        "network_topology_index",
        functools.partial(parse_non_negative_int, NETWORK_TOPOLOGY_INDEX),
    ),
)
"""Each gang annotation, the GangAnnotations field it fills and its parser, in the order
their problems are reported."""


def parse_gang_annotations(annotations: dict[str, str] | None) -> GangAnnotations:
    """Parse all gang annotations; raises InvalidSpecError with every problem (first one raised)."""
    parsed, problems = check_gang_annotations(annotations)
    raise_all(problems)
    return parsed


# --- the gang request: read once, for admission, translation and the controller ------------


def gang_request(
    annotations: Mapping[str, str] | None, *, gang: str | None
) -> tuple[GangAnnotations, list[InvalidSpecError]]:
    """What one Pod or PodGroup of gang `gang` (`namespace/name`; None: it names none) asks
    through its gang annotations, with every problem: each annotation's own, and a `groups`
    list that leaves the gang itself out.

    The one reading of the gang annotations: the admission rule, `topobridge translate` and
    the controller all call it."""
    parsed, problems = check_gang_annotations(dict(annotations) if annotations is not None else None)
    if parsed.groups is not None and gang is not None and gang not in parsed.groups:
        raw = (annotations or {})[GANG_GROUPS]
        problems.append(
            InvalidSpecError(
                annotation_path(GANG_GROUPS),
                raw,
                f"Invalid value: {render_value(raw)}: must include this gang {render_value(gang)}",
            )
        )
    return parsed, problems


def pod_group_spec_problems(
    *, min_member: int | None, schedule_timeout_seconds: int | None
) -> list[InvalidSpecError]:
    """The integers of a coscheduling PodGroup spec, as the Go that reads them bounds them."""
    out: list[InvalidSpecError] = []
    for path, value in (
        ("spec.minMember", min_member),
        ("spec.scheduleTimeoutSeconds", schedule_timeout_seconds),
    ):
        if value is not None and value < 0:
            out.append(
                InvalidSpecError(path, value, f"Invalid value: {value}: must be greater than or equal to 0")
            )
        else:
            out += at_most(path, value, INT32_MAX)
    return out


def unknown_layer_problems(
    spec: NetworkTopologyGatherSpec, layers: Collection[str]
) -> list[InvalidSpecError]:
    """Gather layers that ClusterNetworkTopology `default` (whose layers are `layers`) lacks."""
    missing = [(i, g.layer) for i, g in enumerate(spec.gather_strategy) if g.layer not in layers]
    if not missing:  # the common case; rendering the layer list costs a fifth of a pod review
        return []
    field = annotation_path(NETWORK_TOPOLOGY_SPEC)
    known = ", ".join(render_value(n) for n in sorted(set(layers) - {CLUSTER_LAYER}))
    return [
        InvalidSpecError(
            f"{field}.gatherStrategy[{i}].layer",
            layer,
            f'Not found: {render_value(layer)}: no such layer in ClusterNetworkTopology "default" (layers: {known})',
        )
        for i, layer in missing
    ]


def differing_group_members(
    gang: str,
    spec: NetworkTopologyGatherSpec | None,
    groups: Iterable[str],
    known: Mapping[str, NetworkTopologyGatherSpec | None],
) -> list[str]:
    """The one GangGroup rule: a GangGroup gathers as one, so every member gang must carry the
    same network-topology-spec (none included).

    `gang` (`namespace/name`) carries `spec` and lists `groups`; `known` holds the specs of
    the gangs whose spec is known (None: known to carry none). The known members whose spec
    differs, sorted. Admission, translation (`differing_group_specs`) and placement
    (`gang_group_spec_conflict`) word what this finds for their readers."""
    return [m for m in sorted(set(groups)) if m != gang and m in known and known[m] != spec]


def differing_group_specs(
    gang: str,
    spec: NetworkTopologyGatherSpec | None,
    groups: Iterable[str],
    known: Mapping[str, NetworkTopologyGatherSpec | None],
) -> list[InvalidSpecError]:
    """`differing_group_members` as field errors on the gang's own annotation: one per
    differing member, naming both specs (the webhook, with its cluster view, and the
    translation)."""
    mine = topology_spec_text(spec)
    return [
        InvalidSpecError(
            annotation_path(NETWORK_TOPOLOGY_SPEC),
            mine,
            f"Invalid value: {render_value(mine)}: differs from {topology_spec_text(known[member])} on GangGroup member "
            f"{member}; every member of a GangGroup must carry the same network-topology-spec",
        )
        for member in differing_group_members(gang, spec, groups, known)
    ]
