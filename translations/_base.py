"""The base of every model: camelCase aliases, unknown fields kept, one dump format.

Objects read from a cluster may carry fields a newer upstream added; `extra="allow"` keeps
them so that `parse -> dump` is the identity and an update never drops what we do not model.
Field docstrings become the descriptions in the generated CRDs.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from translations.errors import InvalidSpecError

JsonDict = dict[str, Any]


class KubeModel(BaseModel):
    """A slice of a Kubernetes schema that round-trips unknown fields."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        alias_generator=to_camel,
        use_attribute_docstrings=True,
        validate_assignment=False,
        protected_namespaces=(),
    )

    @classmethod
    def parse(cls, raw: Any, *, path: str = "") -> Self:
        """Validate a raw dict at the edge; errors name the first bad field and its value."""
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise invalid_from_pydantic(exc, raw, prefix=path) from None

    def to_dict(self) -> JsonDict:
        """The object as the API server would print it: aliases, only what was set."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


def invalid_from_pydantic(exc: ValidationError, raw: Any, *, prefix: str = "") -> InvalidSpecError:
    err = exc.errors(include_url=False)[0]
    parts = [str(p) for p in err["loc"]]
    field = ".".join(p for p in ([prefix] if prefix else []) + parts)
    value = _dig(raw, err["loc"])
    return InvalidSpecError(field or "<root>", value, f"Invalid value: {_render(value)}: {err['msg']}")


def _dig(raw: Any, loc: tuple[int | str, ...]) -> Any:
    cur = raw
    for key in loc:
        try:
            cur = cur[key]
        except (KeyError, IndexError, TypeError):
            return None
    return cur


def _render(value: Any) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


class OwnerReference(KubeModel):
    """Points at the object that owns this one; the garbage collector follows it."""

    api_version: str
    """API version of the owner."""
    kind: str
    """Kind of the owner."""
    name: str
    """Name of the owner."""
    uid: str
    """UID of the owner."""
    controller: bool | None = None
    """True when the owner is the managing controller."""
    block_owner_deletion: bool | None = None
    """When true, the owner cannot be deleted before this object."""


class ObjectMeta(KubeModel):
    """The metadata every Kubernetes object carries (the parts topobridge reads)."""

    name: str | None = None
    """Object name, unique within its namespace."""
    generate_name: str | None = None
    """Prefix the server uses to generate a unique name."""
    namespace: str | None = None
    """Namespace of the object; empty for cluster-scoped kinds."""
    uid: str | None = None
    """Unique identifier set by the server."""
    resource_version: str | None = None
    """Opaque version for optimistic concurrency."""
    generation: int | None = None
    """Sequence number of the desired state."""
    labels: dict[str, str] | None = None
    """Labels for selection."""
    annotations: dict[str, str] | None = None
    """Annotations: unstructured metadata."""
    owner_references: list[OwnerReference] | None = None
    """Objects this one depends on."""
    finalizers: list[str] | None = None
    """Finalizers that must be cleared before deletion."""
    creation_timestamp: str | None = None
    """When the object was created (RFC 3339)."""
    deletion_timestamp: str | None = None
    """When the object was asked to be deleted (RFC 3339)."""

    def label(self, key: str) -> str | None:
        return (self.labels or {}).get(key)

    def annotation(self, key: str) -> str | None:
        return (self.annotations or {}).get(key)


class LabelSelectorRequirement(KubeModel):
    """One requirement of a label selector."""

    key: str
    """The label key the requirement applies to."""
    operator: str
    """In, NotIn, Exists or DoesNotExist."""
    values: list[str] | None = None
    """Values for In and NotIn; empty for Exists and DoesNotExist."""


class LabelSelector(KubeModel):
    """A Kubernetes label selector; the requirements are ANDed."""

    match_labels: dict[str, str] | None = None
    """Exact label matches."""
    match_expressions: list[LabelSelectorRequirement] | None = None
    """Set-based requirements."""

    def matches(self, labels: dict[str, str]) -> bool:
        for key, value in (self.match_labels or {}).items():
            if labels.get(key) != value:
                return False
        for req in self.match_expressions or []:
            have = key_present = req.key in labels
            val = labels.get(req.key)
            match req.operator:
                case "In":
                    have = key_present and val in (req.values or [])
                case "NotIn":
                    have = not key_present or val not in (req.values or [])
                case "Exists":
                    have = key_present
                case "DoesNotExist":
                    have = not key_present
                case _:
                    return False
            if not have:
                return False
        return True


class TypedObject(KubeModel):
    """apiVersion, kind and metadata: the envelope of every object."""

    api_version: str | None = None
    """Versioned schema of this representation."""
    kind: str | None = None
    """REST resource this object represents."""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    """Standard object metadata."""

    @property
    def name(self) -> str:
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or ""

    @property
    def key(self) -> str:
        """`namespace/name`, or just `name` for cluster-scoped objects."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name
