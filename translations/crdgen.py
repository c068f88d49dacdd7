"""Turn the pydantic models into CustomResourceDefinitions kube-apiserver 1.20 accepts.

The models are the single source of truth; this module only translates their JSON Schema
into the structural OpenAPI v3 dialect of `apiextensions.k8s.io/v1`:

* `$ref`s are inlined (structural schemas allow none) and `Optional[...]` unions collapse
  to their one non-null member;
* every node carries a `type`, except int-or-string and preserve-unknown-fields nodes;
* integer nodes carry a `format` (declared, else int64); Literal values become `enum`;
* `default`s come only from `json_schema_extra={"default": ...}` on a field, never from
  the Python default (which stays None so a parsed object dumps back what it was given);
* `int | float | str` unions (quantities) become `x-kubernetes-int-or-string` with the
  quantity grammar as pattern; `int | str` unions become plain int-or-string (without
  the optional `anyOf`, which 1.20's OpenAPI publisher cannot handle);
* a field declaring `x-kubernetes-preserve-unknown-fields` is kept opaque (its model's
  properties are not emitted), and free-form maps (`dict[str, object]`) likewise;
* the root `metadata` stays `type: object`, as the API server requires.

The registry `CRDS` holds what the models cannot say: group, names, scope, subresources
and printer columns, matching the upstream CRDs so `kubectl` behaves the same.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import yaml
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from translations import kinds, koordinator, lws, schedplugins, volcano
from translations._base import JsonDict, TypedObject
from translations.errors import TopobridgeError

GENERATE_COMMAND = "topobridge crds"

# Kubernetes' quantity grammar (k8s.io/apimachinery resource.Quantity).
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

# Keys of a JSON Schema node that carry over into the CRD schema unchanged.
_KEPT_KEYS = frozenset(
    {
        "description",
        "type",
        "format",
        "enum",
        "default",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "required",
        "nullable",
    }
)
_ENVELOPE_DESCRIPTIONS = {
    "apiVersion": "Versioned schema of this representation of an object.",
    "kind": "REST resource this object represents, in CamelCase.",
}


class SchemaNotStructuralError(TopobridgeError):
    """A model uses a type the generator cannot express as a structural schema."""

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        super().__init__(f"{path or '<root>'}: {detail}")


# --- Phase 1: pydantic -> JSON Schema, without Python defaults ------------------------------


class _DeclaredDefaultsOnly(GenerateJsonSchema):
    """JSON Schema where `default` comes only from a field's `json_schema_extra`.

    A Python default of None (or a default_factory) is how the models keep `parse -> dump`
    lossless; it says nothing about what the API server should fill in.
    """

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])


def _json_schema(model: type[TypedObject]) -> JsonDict:
    return model.model_json_schema(by_alias=True, mode="validation", schema_generator=_DeclaredDefaultsOnly)


# --- Phase 2: JSON Schema -> structural OpenAPI v3 ---------------------------------------------


def openapi_schema(model: type[TypedObject]) -> JsonDict:
    """The structural `openAPIV3Schema` of a top-level kind."""
    raw = _json_schema(model)
    defs: dict[str, JsonDict] = raw.pop("$defs", {})
    root = _convert(raw, defs, path="")
    props = root.setdefault("properties", {})
    for key, text in _ENVELOPE_DESCRIPTIONS.items():
        props[key] = {"description": text, "type": "string"}
    # The API server owns metadata's schema; a CRD may only say it is an object.
    props["metadata"] = {"type": "object"}
    root["required"] = [r for r in root.get("required", []) if r not in ("apiVersion", "kind", "metadata")]
    if not root["required"]:
        del root["required"]
    _check_structural(root, "")
    return root


def _convert(node: JsonDict, defs: Mapping[str, JsonDict], *, path: str) -> JsonDict:
    node = _resolve(node, defs, path=path)
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return _opaque(node)
    if "const" in node:
        node = {**node, "enum": [node["const"]]}
    out: JsonDict = {k: v for k, v in node.items() if k in _KEPT_KEYS}
    out.update({k: v for k, v in node.items() if k.startswith("x-kubernetes-") and v is not False})
    if out.get("x-kubernetes-int-or-string"):
        # No `anyOf: [integer, string]` beside it: 1.20's OpenAPI publisher rejects anyOf
        # and drops the kind from `kubectl explain`; the flag alone already validates.
        out.pop("type", None)
        return _sorted(out)
    kind = node.get("type")
    if kind is None:
        if node.keys() <= {"description", "title"}:  # `Any` / `object`: any JSON value
            out["x-kubernetes-preserve-unknown-fields"] = True
            return _sorted(out)
        raise SchemaNotStructuralError(path, f"no type in {sorted(node)}")
    if kind == "object":
        _convert_object(node, out, defs, path=path)
    elif kind == "array":
        out["items"] = _convert(node.get("items") or {}, defs, path=f"{path}[*]")
    elif kind == "integer":
        out.setdefault("format", "int64")
    elif kind not in ("string", "number", "boolean"):
        raise SchemaNotStructuralError(path, f"unsupported type {kind!r}")
    _openapi_bounds(node, out)
    return _sorted(out)


def _convert_object(node: JsonDict, out: JsonDict, defs: Mapping[str, JsonDict], *, path: str) -> None:
    """An object's properties, or the schema of its map values, or any fields at all."""
    props = node.get("properties") or {}
    extra = node.get("additionalProperties")
    if props:
        out["properties"] = {
            name: _convert(sub, defs, path=f"{path}.{name}" if path else name) for name, sub in props.items()
        }
    elif isinstance(extra, dict) and extra:
        out["additionalProperties"] = _convert(extra, defs, path=f"{path}[*]")
    elif extra is True or extra == {}:
        out["x-kubernetes-preserve-unknown-fields"] = True


def _openapi_bounds(node: JsonDict, out: JsonDict) -> None:
    """JSON Schema's numeric `exclusiveMinimum` / `exclusiveMaximum` as OpenAPI v3 writes them:
    the bound, and a flag saying it is exclusive."""
    for bound in ("Minimum", "Maximum"):
        value = node.get(f"exclusive{bound}")
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[bound.lower()], out[f"exclusive{bound}"] = value, True


def _resolve(node: JsonDict, defs: Mapping[str, JsonDict], *, path: str) -> JsonDict:
    """Inline `$ref`s and collapse unions; keys on the outer node win (field docs, defaults)."""
    node = dict(node)
    if "$ref" in node:
        target = defs[node.pop("$ref").rsplit("/", 1)[-1]]
        return _resolve({**copy.deepcopy(target), **node}, defs, path=path)
    if "allOf" in node and len(node["allOf"]) == 1:
        inner = node.pop("allOf")[0]
        return _resolve({**_resolve(inner, defs, path=path), **node}, defs, path=path)
    if "anyOf" in node:
        members = [m for m in node.pop("anyOf") if m.get("type") != "null"]
        if len(members) == 1:
            return _resolve({**_resolve(members[0], defs, path=path), **node}, defs, path=path)
        types = {m.get("type") for m in (_resolve(m, defs, path=path) for m in members)}
        if "string" in types and types <= {"integer", "number", "string"} and len(types) > 1:
            merged: JsonDict = {**node, "x-kubernetes-int-or-string": True}
            if "number" in types:  # int | float | str: a resource quantity
                merged.setdefault("pattern", QUANTITY_PATTERN)
            return merged
        raise SchemaNotStructuralError(
            path, f"union of {sorted(str(t) for t in types)} has no structural form"
        )
    return node


def _opaque(node: JsonDict) -> JsonDict:
    out: JsonDict = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if "description" in node:
        out["description"] = node["description"]
    if node.get("type") == "array":
        out = {k: v for k, v in node.items() if k in ("description", "type")}
        out["items"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return _sorted(out)


def _sorted(node: JsonDict) -> JsonDict:
    """Stable key order so the generated YAML diffs cleanly."""
    first = ("description", "type", "format")
    keys = [k for k in first if k in node] + sorted(k for k in node if k not in first)
    return {k: node[k] for k in keys}


def _check_structural(node: JsonDict, path: str) -> None:
    untyped_ok = node.get("x-kubernetes-int-or-string") or node.get("x-kubernetes-preserve-unknown-fields")
    if "type" not in node and not untyped_ok:
        raise SchemaNotStructuralError(path, "node without a type")
    for name, sub in (node.get("properties") or {}).items():
        _check_structural(sub, f"{path}.{name}" if path else name)
    if isinstance(node.get("items"), dict):
        _check_structural(node["items"], f"{path}[*]")
    if isinstance(node.get("additionalProperties"), dict):
        _check_structural(node["additionalProperties"], f"{path}[*]")


# --- Phase 3: the CRD objects ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """One column of `kubectl get`."""

    name: str
    json_path: str
    type: Literal["string", "integer", "number", "boolean", "date"]
    description: str | None = None
    priority: int | None = None

    def to_dict(self) -> JsonDict:
        out: JsonDict = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            out["description"] = self.description
        if self.priority is not None:
            out["priority"] = self.priority
        return out


@dataclass(frozen=True, slots=True)
class ScaleSubresource:
    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str | None = None


@dataclass(frozen=True, slots=True)
class CrdDefinition:
    """Everything about one CRD that its model and its entry in `translations.kinds` do not say."""

    model: type[TypedObject]
    api: kinds.ApiKind
    singular: str
    short_names: tuple[str, ...] = ()
    scale: ScaleSubresource | None = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def group(self) -> str:
        return self.api.group

    @property
    def version(self) -> str:
        return self.api.version

    @property
    def kind(self) -> kinds.KindName:
        return self.api.kind

    @property
    def plural(self) -> str:
        return self.api.plural

    @property
    def scope(self) -> kinds.Scope:
        return self.api.scope

    @property
    def status_subresource(self) -> bool:
        return self.api.status_subresource

    @property
    def name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def filename(self) -> str:
        return f"{self.group}_{self.plural}.yaml"


_AGE = PrinterColumn("Age", ".metadata.creationTimestamp", "date")

CRDS: tuple[CrdDefinition, ...] = (
    CrdDefinition(
        model=lws.LeaderWorkerSet,
        api=kinds.LEADERWORKERSET,
        singular="leaderworkerset",
        short_names=("lws",),
        scale=ScaleSubresource(".spec.replicas", ".status.replicas", ".status.hpaPodSelector"),
        printer_columns=(
            PrinterColumn("Ready", ".status.readyReplicas", "integer", "Number of ready replicas"),
            PrinterColumn("Desired", ".spec.replicas", "integer", "Number of desired replicas"),
            PrinterColumn(
                "Up-to-date", ".status.updatedReplicas", "integer", "Number of up-to-date replicas"
            ),
            _AGE,
        ),
    ),
    CrdDefinition(
        # Volcano writes PodGroup status through the main resource: no status subresource.
        model=volcano.PodGroup,
        api=kinds.VOLCANO_PODGROUP,
        singular="podgroup",
        short_names=("pg", "podgroup-v1beta1"),
        printer_columns=(
            PrinterColumn("STATUS", ".status.phase", "string"),
            PrinterColumn("minMember", ".spec.minMember", "integer"),
            PrinterColumn("RUNNINGS", ".status.running", "integer"),
            PrinterColumn("AGE", ".metadata.creationTimestamp", "date"),
            PrinterColumn("QUEUE", ".spec.queue", "string", priority=1),
        ),
    ),
    CrdDefinition(
        model=volcano.HyperNode,
        api=kinds.HYPERNODE,
        singular="hypernode",
        short_names=("hn",),
        printer_columns=(
            PrinterColumn("Tier", ".spec.tier", "string"),
            PrinterColumn("TierName", ".spec.tierName", "string"),
            PrinterColumn("NodeCount", ".status.nodeCount", "integer"),
            _AGE,
        ),
    ),
    CrdDefinition(
        model=koordinator.ClusterNetworkTopology,
        api=kinds.CLUSTER_NETWORK_TOPOLOGY,
        singular="clusternetworktopology",
    ),
    CrdDefinition(
        model=koordinator.SigsPodGroup,
        api=kinds.SIGS_PODGROUP,
        singular="podgroup",
        # *.k8s.io groups are protected: the API server refuses a CRD without this annotation.
        annotations={
            "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/scheduler-plugins/pull/52"
        },
    ),
    CrdDefinition(
        model=schedplugins.XPodGroup,
        api=kinds.X_PODGROUP,
        singular="podgroup",
        short_names=("pg", "pgs"),
        annotations={
            "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/scheduler-plugins/pull/50"
        },
        printer_columns=(
            PrinterColumn("Phase", ".status.phase", "string", "Current phase of the PodGroup."),
            PrinterColumn(
                "MinMember", ".spec.minMember", "integer", "Pods that must be schedulable together."
            ),
            PrinterColumn("Running", ".status.running", "integer", "Running pods."),
            PrinterColumn("Succeeded", ".status.succeeded", "integer", "Pods that succeeded."),
            PrinterColumn("Failed", ".status.failed", "integer", "Pods that failed."),
            _AGE,
        ),
    ),
)


def custom_resource_definition(crd: CrdDefinition) -> JsonDict:
    """The `apiextensions.k8s.io/v1` CustomResourceDefinition object for one kind."""
    schema = openapi_schema(crd.model)
    names: JsonDict = {
        "kind": crd.kind,
        "listKind": f"{crd.kind}List",
        "plural": crd.plural,
        "singular": crd.singular,
    }
    if crd.short_names:
        names["shortNames"] = list(crd.short_names)
    version: JsonDict = {
        "name": crd.version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
    }
    subresources: JsonDict = {}
    if crd.status_subresource:
        subresources["status"] = {}
    if crd.scale:
        scale: JsonDict = {
            "specReplicasPath": crd.scale.spec_replicas_path,
            "statusReplicasPath": crd.scale.status_replicas_path,
        }
        if crd.scale.label_selector_path:
            scale["labelSelectorPath"] = crd.scale.label_selector_path
        subresources["scale"] = scale
    if subresources:
        version["subresources"] = subresources
    if crd.printer_columns:
        version["additionalPrinterColumns"] = [c.to_dict() for c in crd.printer_columns]
    metadata: JsonDict = {"name": crd.name}
    if crd.annotations:
        metadata["annotations"] = dict(crd.annotations)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": {"group": crd.group, "names": names, "scope": crd.scope, "versions": [version]},
    }


def render(crd: CrdDefinition) -> str:
    """The YAML file for one CRD, with a header saying how it was made."""
    header = (
        f"# Generated from {crd.model.__module__}.{crd.model.__qualname__}: do not edit.\n"
        f"# Regenerate with: {GENERATE_COMMAND}\n"
    )
    body = yaml.safe_dump(
        custom_resource_definition(crd), sort_keys=False, default_flow_style=False, width=1000
    )
    return header + "---\n" + body


def rendered_files() -> dict[str, str]:
    """File name -> content for every CRD topobridge ships."""
    return {crd.filename: render(crd) for crd in CRDS}
