"""The base of every model: camelCase aliases, unknown fields kept, one dump format.

Objects read from a cluster may carry fields a newer upstream added; `extra="allow"` keeps
them so that `parse -> dump` is the identity and an update never drops what we do not model.
Field docstrings become the descriptions in the generated CRDs.
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from typing import Annotated, Any, Self, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from translations.errors import InvalidSpecError, render_value

JsonDict = dict[str, Any]

DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS1123_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
"""Kubernetes' own wording for a name that is not a DNS-1123 subdomain."""
DNS1123_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS1123_LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
"""Kubernetes' own wording for a name that is not a DNS-1123 label (the two spaces after the
first example are apimachinery's)."""
_PATTERN_MESSAGES = {DNS1123_SUBDOMAIN: DNS1123_SUBDOMAIN_MESSAGE, DNS1123_LABEL: DNS1123_LABEL_MESSAGE}

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def bounded_int(digits: str, cap: int) -> int:
    """The value of a string of ASCII digits, at most `cap`, without `int()` of a long string
    (Python refuses more than 4,300 digits; the API server takes any number): leading zeros
    are dropped, and a string longer than `cap`'s digits is `cap`."""
    significant = digits.lstrip("0")
    if len(significant) > len(str(cap)):
        return cap
    return min(int(significant or "0"), cap)


def at_most(path: str, value: int | None, maximum: int) -> list[InvalidSpecError]:
    """Integers beyond int32/int64 parse in Python but not in the Go that reads them."""
    if value is not None and value > maximum:
        return [
            InvalidSpecError(path, value, f"Invalid value: {value}: must be less than or equal to {maximum}")
        ]
    return []


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
    def parse(cls, raw: Any, *, path: str = "", strict: bool = False, keep_unknown: bool = True) -> Self:
        """Validate a raw dict at the edge; errors name the bad field and its value.

        The raised InvalidSpecError is the first problem; `.more` holds the rest. `strict`
        refuses what the API server's schema check refuses (`"2"` or `2.0` for an integer,
        `1` for a string); leave it off for objects that already passed the API server.
        `keep_unknown=False` drops the fields no model names instead of copying them into
        each model for a dump: no verdict depends on them (they are never checked), and a
        reading that is never written back, like admission's, does not need the copies.

        A raw object names its fields as the API server does, by their JSON names only: a
        Python name (`highest_tier_allowed`) is one more unknown field, not a second spelling.
        (Code that builds a model from Python names calls the constructor.)
        """
        try:
            # The validator itself: `model_validate` adds only argument checks on top.
            parsed: Self = cls.__pydantic_validator__.validate_python(
                raw, strict=strict, extra=None if keep_unknown else "ignore", by_name=False
            )
            return parsed
        except ValidationError as exc:
            raise invalid_from_pydantic(exc, raw, prefix=path, model=cls) from None

    def to_dict(self) -> JsonDict:
        """The object as the API server would print it: aliases, only what was set."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")

    def replaced(self, **fields: Any) -> Self:
        """A shallow copy with `fields` (Python names; unknown ones as extra fields) set and
        not validated: what `model_copy(update=fields)` makes, at half its cost (it copies
        each part generically). Models are replaced, never changed: the parts are shared."""
        cls = type(self)
        known = cls.__pydantic_fields__
        declared = {k: v for k, v in fields.items() if k in known}
        extra = self.__pydantic_extra__
        if len(declared) < len(fields):
            extra = {**(extra or {}), **{k: v for k, v in fields.items() if k not in known}}
        elif extra is not None:
            extra = dict(extra)
        private = self.__pydantic_private__
        copy = cls.__new__(cls)
        object.__setattr__(copy, "__dict__", {**self.__dict__, **declared})
        object.__setattr__(copy, "__pydantic_extra__", extra)
        object.__setattr__(copy, "__pydantic_fields_set__", self.__pydantic_fields_set__ | fields.keys())
        object.__setattr__(copy, "__pydantic_private__", dict(private) if private is not None else None)
        return copy

    def __setattr__(self, name: str, value: Any) -> None:
        # A model whose bookkeeping `translations.compact` shares with others gets its own
        # before it changes (pydantic records the name in both in place).
        if type(self.__pydantic_fields_set__) is not set:
            object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        extra = self.__pydantic_extra__
        if extra is not None and type(extra) is not dict:
            object.__setattr__(self, "__pydantic_extra__", dict(extra))
        super().__setattr__(name, value)


def invalid_from_pydantic(
    exc: ValidationError, raw: Any, *, prefix: str = "", model: type[BaseModel] | None = None
) -> InvalidSpecError:
    """Every problem pydantic found, as Kubernetes-style field errors (first one raised, rest in `.more`)."""
    problems = spec_errors_from_pydantic(exc, raw, prefix=prefix, model=model)
    return InvalidSpecError(problems[0].field_path, problems[0].value, problems[0].detail, more=problems[1:])


def spec_errors_from_pydantic(
    exc: ValidationError, raw: Any, *, prefix: str = "", model: type[BaseModel] | None = None
) -> list[InvalidSpecError]:
    # A union (`int | str`) fails once per member at the same place; group by place first.
    by_place: dict[str, list[tuple[ErrorDetails, Any]]] = {}
    for err in exc.errors(include_url=False):
        path, keys = _field_path(model, err["loc"], prefix)
        by_place.setdefault(path, []).append((err, _dig(raw, keys)))
    return [_one_problem(path, errs) for path, errs in by_place.items()]


_TYPE_NAMES = {
    "int_type": "integer",
    "int_parsing": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "float_parsing": "number",
    "finite_number": "number",
    "string_type": "string",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "list_type": "array",
    "tuple_type": "array",
    "none_required": "null",
}
_TYPE_ORDER = {name: i for i, name in enumerate(dict.fromkeys(_TYPE_NAMES.values()))}
"""Type names in messages come in this order, whatever the order of a union's members."""


def _one_problem(path: str, errs: list[tuple[ErrorDetails, Any]]) -> InvalidSpecError:
    value = errs[0][1]
    type_errors = [e for e, _ in errs if e["type"] in _TYPE_NAMES]
    others = [e for e, _ in errs if e["type"] not in _TYPE_NAMES]
    if not others:
        names = sorted({_TYPE_NAMES[e["type"]] for e in type_errors}, key=_TYPE_ORDER.__getitem__)
        wanted = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        return InvalidSpecError(
            path, value, f"Invalid value: {render_value(value)}: must be of type {wanted}"
        )
    return InvalidSpecError(path, value, _detail(others[0], value))


_BOUNDS: Mapping[str, tuple[str, str]] = {
    "greater_than_equal": ("ge", "greater than or equal to"),
    "greater_than": ("gt", "greater than"),
    "less_than_equal": ("le", "less than or equal to"),
    "less_than": ("lt", "less than"),
}
"""pydantic's bound errors: the context key holding the bound, and the bound in kube's words."""


def _detail(err: ErrorDetails, value: Any) -> str:
    """One pydantic error in the API server's words (`Invalid value: ...: must be ...`)."""
    kind, ctx = err["type"], err.get("ctx") or {}
    shown = render_value(value)
    if kind in _BOUNDS:
        key, words = _BOUNDS[kind]
        return f"Invalid value: {shown}: must be {words} {ctx[key]}"
    match kind:
        case "missing":
            return "Required value"
        case "literal_error":
            allowed = re.findall(r"'((?:[^'\\]|\\.)*)'", str(ctx.get("expected", "")))
            return f"Unsupported value: {shown}: supported values: " + ", ".join(f'"{a}"' for a in allowed)
        case "string_too_long" | "string_too_short" | "too_short" | "too_long":
            return _length_detail(kind, ctx, shown)
        case "string_pattern_mismatch":
            pattern = str(ctx.get("pattern", ""))
            return f"Invalid value: {shown}: " + _PATTERN_MESSAGES.get(
                pattern, f"must match the regular expression '{pattern}'"
            )
    return f"Invalid value: {shown}: {err['msg']}"


def _length_detail(kind: str, ctx: Mapping[str, Any], shown: str) -> str:
    """A string or list too long or too short, as the API server says it."""
    match kind:
        case "string_too_long":
            return f"Too long: may not be more than {_counted(ctx['max_length'], 'character')}"
        case "string_too_short":
            n = ctx["min_length"]
            return "Required value" if n == 1 else f"Invalid value: {shown}: must be at least {n} characters"
        case "too_short":
            return f"Required value: must have at least {_counted(ctx['min_length'], 'item')}"
    return (
        f"Too many: {ctx.get('actual_length', '')}: must have at most {_counted(ctx['max_length'], 'item')}"
    )


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _field_path(
    model: type[BaseModel] | None, loc: tuple[int | str, ...], prefix: str
) -> tuple[str, list[int | str]]:
    """pydantic's loc as a Kubernetes field path (`spec.minResources[cpu]`, `members[0]`), and
    the keys that lead to the value in the raw input (union member tags dropped)."""
    path = prefix
    keys: list[int | str] = []
    ann: Any = model
    for item in loc:
        ann = _unwrap(ann)
        if _is_union(ann):  # the item names the union member that failed, not a key
            ann = None
            continue
        keys.append(item)
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            field = next((f for name, f in ann.model_fields.items() if item in (name, f.alias)), None)
            path += f".{item}" if path else str(item)
            ann = field.annotation if field is not None else None
        elif get_origin(ann) is dict or (ann is None and isinstance(item, str) and not _IDENT.match(item)):
            path += f"[{item}]"
            ann = get_args(ann)[1] if get_origin(ann) is dict else None
        elif isinstance(item, int):
            path += f"[{item}]"
            args = get_args(ann)
            ann = args[0] if args else None
        else:
            path += f".{item}" if path else str(item)
            ann = None
    return path or "<root>", keys


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")


def _unwrap(ann: Any) -> Any:
    while True:
        if get_origin(ann) is Annotated:
            ann = get_args(ann)[0]
        elif _is_union(ann):
            members = [a for a in get_args(ann) if a is not type(None)]
            if len(members) != 1:
                return ann
            ann = members[0]
        else:
            return ann


def _is_union(ann: Any) -> bool:
    origin = get_origin(ann)
    return origin is Union or origin is types.UnionType


def _dig(raw: Any, keys: list[int | str]) -> Any:
    cur = raw
    for key in keys:
        try:
            cur = cur[key]
        except (KeyError, IndexError, TypeError):
            return None
    return cur


def raw_annotations_at(obj: Any, path: tuple[str, ...]) -> dict[str, Any]:
    """The annotations of the metadata at `path` (e.g. `("spec", "template", "metadata")`) in a raw
    object, `{}` wherever the shape is not what Kubernetes writes (the parsers say what is wrong)."""
    cur: Any = obj
    for key in path:
        cur = cur.get(key) if isinstance(cur, dict) else None
    annotations = cur.get("annotations") if isinstance(cur, dict) else None
    return annotations if isinstance(annotations, dict) else {}


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
        # The metadata read once, not through `namespace` and `name`: discovery asks it of
        # every member of a gang, twice, in each cycle that gang changed.
        meta = self.metadata
        namespace, name = meta.namespace, meta.name or ""
        return f"{namespace}/{name}" if namespace else name
