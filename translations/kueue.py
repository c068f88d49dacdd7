"""Kueue's Topology (`kueue.x-k8s.io/v1beta1`, also served as v1beta2; cluster-scoped):
an ordered list of node labels, widest first, that names the network domains; and Kueue's
topology-aware scheduling (TAS) annotations on pod templates.

`label_levels` turns a Topology into the topology tree's levels. `kubernetes.io/hostname`,
allowed only as the lowest level, means "the node itself" and so makes no domain. `LevelOrder`
maps levels to HyperNode tiers: the lowest level above the hostname is tier 1.

`tas_request` is the one reading of a pod template's TAS annotations (`podset-required-topology`,
`-preferred-topology`, `-unconstrained-topology`, `-slice-required-topology` with
`podset-slice-size`, `podset-slice-required-topology-constraints`, `podset-group-name`), with
Kueue's own webhook rules: the admission rule, `topobridge translate` and the controller call it.
Which objects carry them, and so are checked: a batch/v1 Job's pod template, a Pod, a
LeaderWorkerSet's leader and worker templates (Kueue manages all three). A Volcano Job's task
templates are not read: Kueue manages no Volcano Job, so the annotations do nothing there (the
webhook warns; `partitionPolicy` says the same in Volcano).

`gated_by_kueue` is the predicate for pods Kueue places itself (the `kueue.x-k8s.io/topology`
scheduling gate): no other scheduler may touch them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from translations import jsontext
from translations._base import INT32_MAX, KubeModel, TypedObject, raw_annotations_at
from translations.core import Pod
from translations.digits import bounded_decimal
from translations.envelope import label_key_problems
from translations.errors import InvalidSpecError, render_value
from translations.topology import LabelLevel

GROUP = "kueue.x-k8s.io"
API_VERSION = f"{GROUP}/v1beta1"
API_VERSIONS = (API_VERSION, f"{GROUP}/v1beta2")
HOSTNAME_LABEL = "kubernetes.io/hostname"
NODE_LABEL_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"  # optional DNS-1123 prefix
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)


class TopologyLevel(KubeModel):
    """One level of the topology."""

    node_label: str = Field(min_length=1, max_length=316, pattern=NODE_LABEL_PATTERN)
    """The node label whose values name this level's domains, e.g. `cloud.provider.com/topology-rack`."""


class TopologySpec(KubeModel):
    """The levels, widest first."""

    levels: list[TopologyLevel] = Field(min_length=1, max_length=16)
    """1-16 unique levels; `kubernetes.io/hostname` only as the last."""


class Topology(TypedObject):
    """Kueue's description of the cluster's network levels."""

    api_version: str | None = API_VERSION
    kind: str | None = "Topology"
    spec: TopologySpec
    """The levels."""


def label_levels(topology: Topology) -> list[LabelLevel]:
    """The levels bottom-up (tier 1 first), each named after its node label.

    Raises InvalidSpecError for a repeated label or a hostname level that is not the lowest,
    the two rules Kueue's CRD enforces with CEL (which old API servers ignore).
    """
    keys = [level.node_label for level in topology.spec.levels]
    seen: set[str] = set()
    for i, key in enumerate(keys):
        if key in seen:
            raise InvalidSpecError(f"spec.levels[{i}].nodeLabel", key, f'Duplicate value: "{key}"')
        seen.add(key)
        if key == HOSTNAME_LABEL and i != len(keys) - 1:
            raise InvalidSpecError(
                f"spec.levels[{i}].nodeLabel",
                key,
                f'Invalid value: "{key}": the kubernetes.io/hostname label can only be used at the '
                "lowest level of topology",
            )
    domains = [k for k in keys if k != HOSTNAME_LABEL]
    return [LabelLevel(key, (key,)) for key in reversed(domains)]


# --- Topology-aware scheduling (TAS) annotations on pod templates ------------------------------

ANNOTATION_PREFIX = f"{GROUP}/"
REQUIRED_TOPOLOGY = f"{GROUP}/podset-required-topology"
"""All pods of the pod set in one domain of this level (a node label key), or wait."""
PREFERRED_TOPOLOGY = f"{GROUP}/podset-preferred-topology"
"""One domain of this level if it fits, else of each level above."""
UNCONSTRAINED_TOPOLOGY = f"{GROUP}/podset-unconstrained-topology"
"""`true`: TAS places the pods wherever they fit."""
SLICE_REQUIRED_TOPOLOGY = f"{GROUP}/podset-slice-required-topology"
"""Each slice of `podset-slice-size` consecutive ranks in one domain of this level."""
SLICE_SIZE = f"{GROUP}/podset-slice-size"
SLICE_CONSTRAINTS = f"{GROUP}/podset-slice-required-topology-constraints"
"""JSON `[{"topology": level, "size": n}, ...]`, outermost first: nested slices (at most 3)."""
GROUP_NAME = f"{GROUP}/podset-group-name"
"""Pod sets with one group name (two: an LWS leader and its workers) share one domain."""
TAS_ANNOTATIONS = (
    REQUIRED_TOPOLOGY,
    PREFERRED_TOPOLOGY,
    UNCONSTRAINED_TOPOLOGY,
    SLICE_REQUIRED_TOPOLOGY,
    SLICE_SIZE,
    SLICE_CONSTRAINTS,
    GROUP_NAME,
)
POD_GROUP_NAME_LABEL = f"{GROUP}/pod-group-name"
"""Kueue's plain-pod integration: pods with one value form one pod group (one workload)."""
POD_GROUP_TOTAL_COUNT = f"{GROUP}/pod-group-total-count"
"""The pod group's size (its pods carry it)."""
POD_GROUP_POD_INDEX_LABEL = f"{GROUP}/pod-group-pod-index"
"""A pod's rank in its pod group."""
TOPOLOGY_GATE = f"{GROUP}/topology"
"""The scheduling gate Kueue puts on the pods it places with TAS; it lifts it with node selectors."""
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
"""A batch/v1 Job pod's rank: Kueue's slices are consecutive ranks."""
MAX_SLICE_LAYERS = 3

_ONE_OF = (REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY, UNCONSTRAINED_TOPOLOGY)
_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
_GO_BOOLS |= {"0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}
_GO_INT = re.compile(r"^[+-]?[0-9]+\Z")


@dataclass(frozen=True, slots=True)
class SliceLayer:
    """`size` consecutive ranks in one domain of the level `topology`."""

    topology: str
    size: int


@dataclass(frozen=True, slots=True)
class TasRequest:
    """One pod template's TAS annotations, read and checked (`tas_request`)."""

    path: str
    """Where the annotations are, e.g. `spec.template.metadata.annotations`."""
    required: str | None = None
    preferred: str | None = None
    unconstrained: bool = False
    slices: tuple[SliceLayer, ...] = ()
    """Outermost first: the single slice annotation pair, or the multi-layer constraints."""
    multi_layer: bool = False
    """True when `slices` came from `podset-slice-required-topology-constraints`."""
    group_name: str | None = None

    def key_path(self, key: str) -> str:
        return f"{self.path}[{key}]"

    @property
    def level(self) -> str | None:
        """The level the whole pod set gathers in (required or preferred)."""
        return self.required or self.preferred


def has_tas_annotations(annotations: Mapping[str, Any]) -> bool:
    return any(key in annotations for key in TAS_ANNOTATIONS)


def tas_request(
    annotations: Mapping[str, Any], *, path: str, pod_count: int | None = None
) -> tuple[TasRequest | None, list[InvalidSpecError]]:
    """The TAS request of one pod template's annotations, with every problem Kueue's webhook
    finds (`pkg/controller/jobframework/tas_validation.go`, ValidateTASPodSetRequest and, when
    `pod_count` is known, ValidateSliceSizeAnnotationUpperBound). None when no TAS annotation
    is given; the request is only meaningful when there are no problems."""
    values = {k: annotations[k] for k in TAS_ANNOTATIONS if k in annotations}  # seven lookups, on every pod
    if not values:
        return None, []
    key = f"{path}[{{}}]".format
    out = [
        InvalidSpecError(key(k), v, f"Invalid value: {render_value(v)}: must be of type string")
        for k, v in values.items()
        if not isinstance(v, str)
    ]
    if out:
        return None, out
    found = set(values)
    out += _annotation_problems(values, path, key)
    size = _slice_size(values.get(SLICE_SIZE), key(SLICE_SIZE), out)
    out += _slice_pairing_problems(found, key)
    layers = _constraints(values.get(SLICE_CONSTRAINTS), found, key, out)
    if pod_count is not None:
        out += _upper_bounds(values, size, layers, pod_count, key)
    return _request(values, path, size, layers), out


def _annotation_problems(
    values: Mapping[str, str], path: str, key: Callable[[str], str]
) -> list[InvalidSpecError]:
    """One topology annotation at most, label keys where a label key goes, the group name, and
    a boolean where a boolean goes."""
    out: list[InvalidSpecError] = []
    found = set(values)
    if len(found & set(_ONE_OF)) > 1:
        listed = ", ".join(f'"{k}"' for k in _ONE_OF)
        out.append(
            InvalidSpecError(
                path, None, f"Invalid value: must not contain more than one topology annotation: [{listed}]"
            )
        )
    for k in (REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY, SLICE_REQUIRED_TOPOLOGY):
        if k in values:
            out += label_key_problems(values[k], path=key(k))
    group = values.get(GROUP_NAME)
    if group is not None:
        out += _group_name_problems(group, found, key)
    unconstrained = values.get(UNCONSTRAINED_TOPOLOGY)
    if unconstrained is not None and unconstrained not in _GO_BOOLS:
        out.append(
            InvalidSpecError(
                key(UNCONSTRAINED_TOPOLOGY),
                unconstrained,
                f"Invalid value: {render_value(unconstrained)}: must be a boolean value",
            )
        )
    return out


def _slice_pairing_problems(found: set[str], key: Callable[[str], str]) -> list[InvalidSpecError]:
    """A slice's topology and its size come together or not at all."""
    if SLICE_REQUIRED_TOPOLOGY in found and SLICE_SIZE not in found:
        detail = f"Required value: must be set when '{SLICE_REQUIRED_TOPOLOGY}' is specified"
        return [InvalidSpecError(key(SLICE_SIZE), None, detail)]
    if SLICE_SIZE in found and SLICE_REQUIRED_TOPOLOGY not in found:
        detail = f"Forbidden: may not be set when '{SLICE_REQUIRED_TOPOLOGY}' is not specified"
        return [InvalidSpecError(key(SLICE_SIZE), None, detail)]
    return []


def _request(
    values: Mapping[str, str], path: str, size: int | None, layers: tuple[SliceLayer, ...]
) -> TasRequest:
    """The request the annotations make (the multi-layer slices, else the one slice layer)."""
    slices = layers
    if not slices and size and SLICE_REQUIRED_TOPOLOGY in values:
        slices = (SliceLayer(values[SLICE_REQUIRED_TOPOLOGY], size),)
    return TasRequest(
        path=path,
        required=values.get(REQUIRED_TOPOLOGY),
        preferred=values.get(PREFERRED_TOPOLOGY),
        unconstrained=_GO_BOOLS.get(values.get(UNCONSTRAINED_TOPOLOGY) or "", False),
        slices=slices,
        multi_layer=bool(layers),
        group_name=values.get(GROUP_NAME),
    )


def _group_name_problems(group: str, found: set[str], key: Callable[[str], str]) -> list[InvalidSpecError]:
    out = []
    if bounded_decimal(group, 2**64 - 1) is not None:  # Go's ParseUint(s, 10, 64) succeeds
        out.append(
            InvalidSpecError(
                key(GROUP_NAME), group, f"Invalid value: {render_value(group)}: must not be a number"
            )
        )
    for other in (SLICE_SIZE, SLICE_REQUIRED_TOPOLOGY):
        if other in found:
            out.append(
                InvalidSpecError(
                    key(GROUP_NAME), None, f"Forbidden: may not be set when '{other}' is specified"
                )
            )
    if PREFERRED_TOPOLOGY not in found and REQUIRED_TOPOLOGY not in found:
        out.append(
            InvalidSpecError(
                key(GROUP_NAME),
                None,
                f"Forbidden: may not be set when neither '{PREFERRED_TOPOLOGY}' nor '{REQUIRED_TOPOLOGY}' is specified",
            )
        )
    return out


def _slice_size(raw: str | None, path: str, out: list[InvalidSpecError]) -> int | None:
    """Go's ParseInt(raw, 10, 32), then >= 1."""
    if raw is None:
        return None
    value = _go_int32(raw)
    if value is None:
        out.append(
            InvalidSpecError(path, raw, f"Invalid value: {render_value(raw)}: must be a numeric value")
        )
        return None
    if value < 1:
        out.append(
            InvalidSpecError(
                path, raw, f"Invalid value: {render_value(raw)}: must be greater than or equal to 1"
            )
        )
        return None
    return value


def _go_int32(raw: str) -> int | None:
    """Go's strconv.ParseInt(raw, 10, 32): an optional sign and ASCII digits, within int32
    (read digit-bounded: Python's int() refuses more than 4,300 digits with a ValueError)."""
    if not _GO_INT.match(raw):
        return None
    magnitude = bounded_decimal(raw.lstrip("+-"), 2**31)
    if magnitude is None:
        return None
    value = -magnitude if raw.startswith("-") else magnitude
    return value if value <= INT32_MAX else None


def _constraints(
    raw: str | None, found: set[str], key: Callable[[str], str], out: list[InvalidSpecError]
) -> tuple[SliceLayer, ...]:
    """The multi-layer slice constraints (Kueue's TASMultiLayerTopology, on by default)."""
    if raw is None:
        return ()
    path = key(SLICE_CONSTRAINTS)
    for other in (SLICE_REQUIRED_TOPOLOGY, SLICE_SIZE):
        if other in found:
            out.append(InvalidSpecError(path, None, f"Forbidden: may not be set when '{other}' is specified"))
    if GROUP_NAME in found:
        out.append(
            InvalidSpecError(
                key(GROUP_NAME), None, f"Forbidden: may not be set when '{SLICE_CONSTRAINTS}' is specified"
            )
        )
    entries, why = _json_layers(raw)
    if entries is None:
        out.append(
            InvalidSpecError(
                path, raw, f"Invalid value: {render_value(raw)}: must be a valid JSON array: {why}"
            )
        )
        return ()
    if not 1 <= len(entries) <= MAX_SLICE_LAYERS:
        out.append(
            InvalidSpecError(
                path,
                raw,
                f"Invalid value: {render_value(raw)}: must list 1 to {MAX_SLICE_LAYERS} layers, outermost first",
            )
        )
        return ()
    problems = _layer_problems(entries, path)
    out += problems
    return () if problems else entries


def _layer_problems(entries: Sequence[SliceLayer], path: str) -> list[InvalidSpecError]:
    """Each layer a label key and a size of 1 or more, no topology twice, and each size a
    divisor of the one above it."""
    out: list[InvalidSpecError] = []
    seen: dict[str, int] = {}
    for i, layer in enumerate(entries):
        out += label_key_problems(layer.topology, path=f"{path}[{i}].topology")
        if layer.size < 1:
            out.append(
                InvalidSpecError(
                    f"{path}[{i}].size",
                    layer.size,
                    f"Invalid value: {layer.size}: must be greater than or equal to 1",
                )
            )
        if layer.topology in seen:
            shown = f"{layer.topology} (also at index {seen[layer.topology]})"
            out.append(
                InvalidSpecError(f"{path}[{i}].topology", shown, f"Duplicate value: {render_value(shown)}")
            )
        seen.setdefault(layer.topology, i)
    for i in range(len(entries) - 1):
        outer, inner = entries[i].size, entries[i + 1].size
        if inner > 0 and outer % inner:
            out.append(
                InvalidSpecError(
                    f"{path}[{i + 1}].size",
                    inner,
                    f"Invalid value: {inner}: must evenly divide the parent layer size {outer}",
                )
            )
    return out


def _json_layers(raw: str) -> tuple[tuple[SliceLayer, ...] | None, str]:
    """`[{"topology": str, "size": int32}, ...]` as Go's encoding/json reads it into Kueue's type."""
    try:
        jsontext.check_depth(raw)
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} (at offset {exc.pos})"
    except ValueError as exc:  # TooDeep, an integer of more than 4,300 digits
        return None, str(exc)
    except RecursionError:  # the caller's stack was deep already
        return None, "nested too deeply"
    if not isinstance(data, list):
        return None, f"cannot read a JSON {_json_type(data)} as an array"
    layers = []
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            return None, f"item {i}: cannot read a JSON {_json_type(item)} as an object"
        topology, size = item.get("topology", ""), item.get("size", 0)
        if not isinstance(topology, str):
            return None, f"item {i}: topology: cannot read a JSON {_json_type(topology)} as a string"
        if isinstance(size, bool) or not isinstance(size, int) or not -(2**31) <= size <= INT32_MAX:
            return None, f"item {i}: size: cannot read {render_value(size)} as a 32-bit integer"
        layers.append(SliceLayer(topology, size))
    return tuple(layers), ""


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null" if value is None else "number"


def _upper_bounds(
    values: Mapping[str, str],
    size: int | None,
    layers: Sequence[SliceLayer],
    pod_count: int,
    key: Callable[[str], str],
) -> list[InvalidSpecError]:
    """No slice larger than the pod set (Kueue's ValidateSliceSizeAnnotationUpperBound)."""
    out = []
    if size is not None and size > pod_count:
        raw = values[SLICE_SIZE]
        out.append(
            InvalidSpecError(
                key(SLICE_SIZE),
                raw,
                f"Invalid value: {render_value(raw)}: must not be greater than pod set count {pod_count}",
            )
        )
    if layers and layers[0].size > pod_count:
        first = layers[0].size
        out.append(
            InvalidSpecError(
                key(SLICE_CONSTRAINTS),
                first,
                f"Invalid value: {first}: must not be greater than pod set count {pod_count}",
            )
        )
    return out


# --- Kueue levels <-> HyperNode tiers ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LevelOrder:
    """A Kueue Topology's levels as tiers: the lowest level above `kubernetes.io/hostname` is
    tier 1, each wider level one more; `kubernetes.io/hostname` itself is tier 0 (one node)."""

    topology: str
    """The Topology's name, for messages."""
    labels: tuple[str, ...]
    """Node label keys, widest first, as the Topology lists them."""

    @classmethod
    def of(cls, topology: Topology) -> LevelOrder:
        label_levels(topology)  # the Topology's own rules (unique, hostname lowest) first
        return cls(topology.name, tuple(level.node_label for level in topology.spec.levels))

    @property
    def domain_labels(self) -> tuple[str, ...]:
        """The levels that make domains, lowest first (index i is tier i + 1)."""
        return tuple(label for label in reversed(self.labels) if label != HOSTNAME_LABEL)

    def tier_of(self, label: str) -> int | None:
        if label == HOSTNAME_LABEL:
            return 0
        domains = self.domain_labels
        return domains.index(label) + 1 if label in domains else None

    def label_of(self, tier: int) -> str | None:
        if tier == 0:
            return HOSTNAME_LABEL
        domains = self.domain_labels
        return domains[tier - 1] if 1 <= tier <= len(domains) else None

    def describe(self) -> str:
        return f"Topology {self.topology} (levels, widest first: {', '.join(self.labels)})"


def gated_by_kueue(pod: Pod) -> bool:
    """True while the pod carries Kueue's `kueue.x-k8s.io/topology` scheduling gate: Kueue's
    TAS places it (and lifts the gate with node selectors), so no other scheduler may."""
    gates = getattr(pod.spec, "scheduling_gates", None)
    if gates is None:
        gates = (pod.spec.model_extra or {}).get("schedulingGates")
    for gate in gates or ():
        name = gate.get("name") if isinstance(gate, Mapping) else getattr(gate, "name", None)
        if name == TOPOLOGY_GATE:
            return True
    return False


# --- where the annotations are: Kueue's pod sets of each kind it manages -----------------------


@dataclass(frozen=True, slots=True)
class PodSetAnnotations:
    """One pod set of a raw object: where its template's annotations are, and its pod count
    (None when the count is not the object's to say: a Pod's group is counted by Kueue)."""

    name: str
    path: str
    annotations: Mapping[str, Any]
    pod_count: int | None


def pod_sets(obj: Any) -> list[PodSetAnnotations]:
    """The pod sets Kueue makes of a raw batch/v1 Job (one: its template, `parallelism` pods,
    capped by `completions`), Pod (its own annotations) or LeaderWorkerSet (per group: the leader,
    1 pod, and the workers, size - 1; one pod set of `size` without a leaderTemplate)."""
    if not isinstance(obj, dict):
        return []
    kind, api_version = obj.get("kind"), str(obj.get("apiVersion") or "")
    raw_spec = obj.get("spec")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    if kind == "Job" and api_version.startswith("batch/"):
        parallelism, completions = _int_or(spec.get("parallelism"), 1), spec.get("completions")
        count = (
            min(parallelism, completions)
            if isinstance(completions, int) and not isinstance(completions, bool)
            else parallelism
        )
        return [
            PodSetAnnotations(
                "main",
                "spec.template.metadata.annotations",
                raw_annotations_at(obj, ("spec", "template", "metadata")),
                count,
            )
        ]
    if kind == "Pod" and api_version == "v1":
        return [
            PodSetAnnotations("main", "metadata.annotations", raw_annotations_at(obj, ("metadata",)), None)
        ]
    if kind == "LeaderWorkerSet":
        raw_tpl = spec.get("leaderWorkerTemplate")
        tpl: dict[str, Any] = raw_tpl if isinstance(raw_tpl, dict) else {}
        size = _int_or(tpl.get("size"), 1)
        base = "spec.leaderWorkerTemplate"
        workers = PodSetAnnotations(
            "workers",
            f"{base}.workerTemplate.metadata.annotations",
            raw_annotations_at(tpl, ("workerTemplate", "metadata")),
            size - 1 if "leaderTemplate" in tpl else size,
        )
        if "leaderTemplate" not in tpl:
            return [workers]
        leader = PodSetAnnotations(
            "leader",
            f"{base}.leaderTemplate.metadata.annotations",
            raw_annotations_at(tpl, ("leaderTemplate", "metadata")),
            1,
        )
        return [leader, workers]
    return []


def _int_or(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def read_pod_sets(obj: Any) -> list[tuple[PodSetAnnotations, TasRequest, list[InvalidSpecError]]]:
    """`tas_request` of every pod set of `obj` that carries TAS annotations."""
    out = []
    for pod_set in pod_sets(obj):
        request, problems = tas_request(pod_set.annotations, path=pod_set.path, pod_count=pod_set.pod_count)
        if request is not None:
            out.append((pod_set, request, problems))
    return out
