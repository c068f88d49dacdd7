"""What the API server checks on every object before any rule sees it: `apiVersion` and `kind`
present, a name (or generateName), and names and namespaces in the form Kubernetes requires.

The admission webhook never sees an object that fails these (the API server refuses it first),
but `topobridge validate`, `translate` and `simulate` read files, where nothing has checked
them yet: they call `envelope_problems` (or `name_problems`) so that `nodeC` or a namespace
`NS1` is refused there exactly as `kubectl apply` would refuse it.

Which rule names which kind (apimachinery's `ValidateObjectMeta` with the kind's name function):
* a Namespace's own name is a DNS-1123 label (at most 63 characters);
* every other kind topobridge reads (Pods, Nodes, Jobs, PriorityClasses, PodDisruptionBudgets,
  and every custom resource) is named by a DNS-1123 subdomain (at most 253 characters);
* `metadata.namespace` is a namespace's name, so a DNS-1123 label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from translations._base import (
    DNS1123_LABEL,
    DNS1123_LABEL_MESSAGE,
    DNS1123_SUBDOMAIN,
    DNS1123_SUBDOMAIN_MESSAGE,
)
from translations.errors import InvalidSpecError, render_value

LABEL_MAX, SUBDOMAIN_MAX = 63, 253

LABEL_NAMED_KINDS = frozenset({("", "Namespace")})
"""(group, kind) whose names are DNS-1123 labels; every other kind is named by a subdomain."""

_LABEL = re.compile(DNS1123_LABEL)
_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN)


def dns1123_messages(value: str, *, label: bool) -> list[str]:
    """apimachinery's IsDNS1123Label / IsDNS1123Subdomain: what is wrong, one message each."""
    limit, pattern, message = (
        (LABEL_MAX, _LABEL, DNS1123_LABEL_MESSAGE)
        if label
        else (SUBDOMAIN_MAX, _SUBDOMAIN, DNS1123_SUBDOMAIN_MESSAGE)
    )
    out = [f"must be no more than {limit} characters"] if len(value) > limit else []
    return out + ([] if pattern.match(value) else [message])


def dns1123_problems(value: str, *, path: str, label: bool) -> list[InvalidSpecError]:
    """`dns1123_messages` as field errors (one per message; the value rendered only then)."""
    messages = dns1123_messages(value, label=label)
    if not messages:
        return []
    shown = render_value(value)
    return [InvalidSpecError(path, value, f"Invalid value: {shown}: {m}") for m in messages]


def group_of(api_version: str) -> str:
    """The API group of `group/version` ('' for the core group's `v1`)."""
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def name_problems(raw: Mapping[str, Any], *, require_name: bool = False) -> list[InvalidSpecError]:
    """`metadata.name` (required unless `generateName` is given and `require_name` is off) and
    `metadata.namespace`, checked as the API server checks them for the object's kind."""
    meta = raw.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, Mapping):
        return [
            InvalidSpecError("metadata", meta, f"Invalid value: {render_value(meta)}: must be of type object")
        ]
    kind = (group_of(str(raw.get("apiVersion") or "")), str(raw.get("kind") or ""))
    out: list[InvalidSpecError] = []
    name, generate = meta.get("name"), meta.get("generateName")
    if name is None or name == "":
        if require_name or not generate:
            detail = "name is required" if require_name else "name or generateName is required"
            out.append(InvalidSpecError("metadata.name", None, f"Required value: {detail}"))
    elif not isinstance(name, str):
        out.append(
            InvalidSpecError(
                "metadata.name", name, f"Invalid value: {render_value(name)}: must be of type string"
            )
        )
    else:
        out += dns1123_problems(name, path="metadata.name", label=kind in LABEL_NAMED_KINDS)
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace:
        out += dns1123_problems(namespace, path="metadata.namespace", label=True)
    elif namespace is not None and namespace != "":
        out.append(
            InvalidSpecError(
                "metadata.namespace",
                namespace,
                f"Invalid value: {render_value(namespace)}: must be of type string",
            )
        )
    return out


def envelope_problems(raw: Any, *, require_name: bool = False) -> list[InvalidSpecError]:
    """Every problem of the envelope: `apiVersion` and `kind` given (strings), then
    `name_problems`. An object that is not a mapping is one problem at the root."""
    if not isinstance(raw, Mapping):
        return [
            InvalidSpecError("<root>", raw, f"Invalid value: {render_value(raw)}: must be of type object")
        ]
    out: list[InvalidSpecError] = []
    for key in ("apiVersion", "kind"):
        value = raw.get(key)
        if value is None or value == "":
            out.append(InvalidSpecError(key, None, "Required value"))
        elif not isinstance(value, str):
            out.append(
                InvalidSpecError(key, value, f"Invalid value: {render_value(value)}: must be of type string")
            )
    return out + name_problems(raw, require_name=require_name)


QUALIFIED_NAME_PART = r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
_NAME_PART = re.compile(QUALIFIED_NAME_PART)
_NAME_PART_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


_LABEL_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def label_value_problems(value: str, *, path: str) -> list[InvalidSpecError]:
    """apimachinery's IsValidLabelValue (empty, or at most 63 characters of the qualified-name
    alphabet), one field error per message."""
    messages = [f"must be no more than {LABEL_MAX} characters"] if len(value) > LABEL_MAX else []
    if value and not _NAME_PART.match(value):
        messages.append(_LABEL_VALUE_RULE)
    return _invalid(path, value, messages)


def label_key_problems(value: str, *, path: str) -> list[InvalidSpecError]:
    """apimachinery's IsQualifiedName (a label key: an optional DNS-1123 subdomain prefix and `/`,
    then a name of at most 63 characters), one field error per message."""
    parts = value.split("/")
    if len(parts) > 2:
        detail = f"a qualified name {_NAME_PART_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        return _invalid(path, value, [detail])
    name = parts[-1]
    messages: list[str] = []
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            messages.append("prefix part must be non-empty")
        else:
            messages += ["prefix part " + m for m in dns1123_messages(prefix, label=False)]
    if not name:
        messages.append("name part must be non-empty")
    else:
        if len(name) > LABEL_MAX:
            messages.append(f"name part must be no more than {LABEL_MAX} characters")
        if not _NAME_PART.match(name):
            messages.append(f"name part {_NAME_PART_RULE}")
    return _invalid(path, value, messages)


def _invalid(path: str, value: str, messages: list[str]) -> list[InvalidSpecError]:
    """One `Invalid value` per message; the value is rendered only when there is one (a valid
    label is checked once per pod an expansion makes)."""
    if not messages:
        return []
    shown = render_value(value)
    return [InvalidSpecError(path, value, f"Invalid value: {shown}: {m}") for m in messages]
