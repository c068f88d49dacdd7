"""Kubernetes field errors: the types apimachinery's `field.Error` knows, rendered the same way.

`spec.networkTopology.mode: Unsupported value: "hrad": supported values: "hard", "soft"`

A FieldError keeps its type (the StatusCause reason the API server reports, e.g.
`FieldValueInvalid`), the field path, the bad value and the rendered body. Errors raised by
the shared parsers in `translations` (InvalidSpecError) convert without loss: their detail
already is such a body.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from translations.errors import InvalidSpecError, render_value


class ErrorType(enum.Enum):
    """apimachinery's ErrorType: value is the machine reason, label the text in messages."""

    NOT_FOUND = ("FieldValueNotFound", "Not found")
    REQUIRED = ("FieldValueRequired", "Required value")
    DUPLICATE = ("FieldValueDuplicate", "Duplicate value")
    INVALID = ("FieldValueInvalid", "Invalid value")
    NOT_SUPPORTED = ("FieldValueNotSupported", "Unsupported value")
    FORBIDDEN = ("FieldValueForbidden", "Forbidden")
    TOO_LONG = ("FieldValueTooLong", "Too long")
    TOO_MANY = ("FieldValueTooMany", "Too many")

    @property
    def reason(self) -> str:
        return self.value[0]

    @property
    def label(self) -> str:
        return self.value[1]


_VALUE_SHOWN = {
    ErrorType.NOT_FOUND,
    ErrorType.DUPLICATE,
    ErrorType.INVALID,
    ErrorType.NOT_SUPPORTED,
    ErrorType.TOO_MANY,
}


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem with one field of an object."""

    type: ErrorType
    field: str
    body: str
    """Everything after `<field>: `, e.g. `Invalid value: -1: must be greater than or equal to 0`."""
    bad_value: Any = None

    def __str__(self) -> str:
        return f"{self.field}: {self.body}"


def _make(kind: ErrorType, field: str, value: Any, detail: str) -> FieldError:
    body = kind.label
    if kind in _VALUE_SHOWN:
        body += f": {render_value(value)}"
    if detail:
        body += f": {detail}"
    return FieldError(kind, field, body, value)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    """A malformed value (bad format, out of range)."""
    return _make(ErrorType.INVALID, field, value, detail)


def not_supported(field: str, value: Any, supported: Sequence[str]) -> FieldError:
    """A value outside an enumeration."""
    listed = ", ".join(render_value(str(s)) for s in supported)
    return _make(ErrorType.NOT_SUPPORTED, field, value, f"supported values: {listed}" if supported else "")


def required(field: str, detail: str = "") -> FieldError:
    """A value that must be given (also: an empty string or list where one is needed)."""
    return _make(ErrorType.REQUIRED, field, None, detail)


def forbidden(field: str, detail: str) -> FieldError:
    """A well-formed value that is not allowed here or in this combination."""
    return _make(ErrorType.FORBIDDEN, field, None, detail)


def duplicate(field: str, value: Any) -> FieldError:
    """A value that must be unique appears again."""
    return _make(ErrorType.DUPLICATE, field, value, "")


def not_found(field: str, value: Any, detail: str = "") -> FieldError:
    """A reference to something that does not exist."""
    return _make(ErrorType.NOT_FOUND, field, value, detail)


def too_long(field: str, max_chars: int) -> FieldError:
    """A string over its length limit (the value is not echoed)."""
    return _make(ErrorType.TOO_LONG, field, None, f"may not be more than {max_chars} characters")


def from_spec_error(exc: InvalidSpecError) -> FieldError:
    """The shared parsers' error as a FieldError; the type is read off the detail's opening words."""
    kind = next((k for k in ErrorType if exc.detail.startswith(k.label)), ErrorType.INVALID)
    return FieldError(kind, exc.field_path, exc.detail, exc.value)


def from_spec_errors(exc: InvalidSpecError) -> list[FieldError]:
    """Every problem an InvalidSpecError carries (itself and `.more`)."""
    return [from_spec_error(e) for e in exc.all]


def aggregate(errors: Iterable[FieldError | str]) -> str:
    """One message for many errors, as apimachinery's aggregate prints it: `[a, b]` (one: `a`)."""
    texts = list(dict.fromkeys(str(e) for e in errors))
    if len(texts) == 1:
        return texts[0]
    return "[" + ", ".join(texts) + "]"
