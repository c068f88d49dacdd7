"""Errors raised by pure code.

* TopobridgeError
  + InvalidSpecError        a user's object is malformed (.field_path, .value)
    - NotExpressibleError   valid, but the target dialect cannot say it (.target)
  + MissingInputError       a translation needs an object or value it was not given (.needed)
  + ScenarioError           an input file could not be read as Kubernetes objects

Pure code raises only these. Failures of I/O (the API server, the network, configuration)
have their own root, `controller.errors.ControllerError`, which is not a TopobridgeError:
`except TopobridgeError` means "the input is wrong", never "the call failed".
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

MAX_RENDERED = 120
"""Longest rendering of a bad value in a message; a 3 MiB annotation must not echo back whole."""


class TopobridgeError(Exception):
    """Base class of the errors pure code raises about its input."""


class InvalidSpecError(TopobridgeError):
    """An object cannot be used as given; the message names the field and the value.

    `detail` reads like the body of a Kubernetes field error (`Invalid value: 3: must be ...`,
    `Unsupported value: ...`, `Required value`, ...). `more` carries further problems found
    in the same pass, so a validator can report them all at once.
    """

    def __init__(
        self, field_path: str, value: Any, detail: str, *, more: Sequence[InvalidSpecError] = ()
    ) -> None:
        self.field_path = field_path
        self.value = value
        self.detail = detail
        self.more = tuple(more)
        # Every problem in the message, as apimachinery aggregates field errors: `[a, b]`.
        texts = [f"{field_path}: {detail}", *(f"{m.field_path}: {m.detail}" for m in self.more)]
        super().__init__(texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]")

    @property
    def all(self) -> tuple[InvalidSpecError, ...]:
        """This problem and every further one found with it."""
        return (self, *self.more)


def raise_all(problems: Sequence[InvalidSpecError]) -> None:
    """Raise every problem at once (the first, the rest in `.more`); nothing when empty."""
    if problems:
        first = problems[0]
        raise InvalidSpecError(first.field_path, first.value, first.detail, more=[*first.more, *problems[1:]])


class NotExpressibleError(InvalidSpecError):
    """The source is valid but the target dialect has no way to express it."""

    def __init__(self, field_path: str, value: Any, detail: str, *, target: str) -> None:
        self.target = target
        super().__init__(field_path, value, f"not expressible in {target}: {detail}")


class MissingInputError(TopobridgeError):
    """A translation needs context it was not given (a leader pod, a member PodGroup, the layers)."""

    def __init__(self, subject: str, needed: str, hint: str) -> None:
        self.subject = subject
        self.needed = needed
        self.hint = hint
        super().__init__(f"{subject}: needs {needed}: {hint}")


class ScenarioError(TopobridgeError):
    """An input document is not a Kubernetes object or list of them."""


# --- rendering bad values the way Kubernetes' field errors do -------------------------------


def render_value(value: Any) -> str:
    """A bad value as apimachinery's field.Error prints it: strings Go-quoted, numbers and
    booleans bare, anything else as compact JSON; long renderings are cut at MAX_RENDERED."""
    if isinstance(value, str):
        if len(value) > MAX_RENDERED:
            value = value[: MAX_RENDERED - 3] + "..."
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        text = str(value) if value.bit_length() < 400 else f"{str(value)[: MAX_RENDERED - 3]}..."
    elif isinstance(value, float):
        text = go_float(value)
    else:
        try:
            text = _go_json(value)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    return text if len(text) <= MAX_RENDERED else text[: MAX_RENDERED - 3] + "..."


def go_quote(text: str) -> str:
    """Go's strconv.Quote: printable runes kept, everything else escaped."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'  # nothing to escape: the common case, without a loop per character
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_float(value: float) -> str:
    """Go's %v for a float64: shortest digits, exponent form below 1e-4 and from 1e6."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exp = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exp, int)
    mantissa = "".join(map(str, digits))
    point = len(mantissa) + exp  # position of the decimal point in the digit string
    x = point - 1
    if x < -4 or x >= 6:
        body = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
        body += f"e{'-' if x < 0 else '+'}{abs(x):02d}"
    elif point <= 0:
        body = "0." + "0" * -point + mantissa
    elif point >= len(mantissa):
        body = mantissa + "0" * (point - len(mantissa))
    else:
        body = mantissa[:point] + "." + mantissa[point:]
    return ("-" if sign else "") + body


def _go_json(value: Any) -> str:
    """encoding/json as Go writes it: sorted keys, no spaces, <, > and & escaped."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


FAILURE_TEXT_LIMIT = 300
"""Characters of an exception's text a status or a warning quotes (a hostile object can make
the text huge; the log keeps the whole exception)."""


def failure_text(exc: BaseException, limit: int = FAILURE_TEXT_LIMIT) -> str:
    """An exception as one line a status, a condition or a page can quote, never a traceback:
    a TopobridgeError's own text (it names the object and the field), cut at `limit`
    characters; for any other exception only that it happened. Python's own texts ("Exceeds
    the limit (4300 digits) for integer string conversion", "maximum recursion depth
    exceeded") say nothing a user can act on; the log keeps the exception whole."""
    if isinstance(exc, TopobridgeError):
        text = " ".join(str(exc).split())
        return text if len(text) <= limit else text[:limit] + "..."
    return f"an unexpected {type(exc).__name__} inside topobridge (a bug to report)"


NAME_SHOWN = 80
"""Characters of a name a message quotes before it cuts it (names from annotations are unbounded)."""


def shown_name(name: str, limit: int = NAME_SHOWN) -> str:
    """`name` as a message quotes it: whole when short, else its start and its length, so the
    reason after it still fits in a condition (`1111...1111 (4301 characters)`)."""
    if len(name) <= limit:
        return name
    return f"{name[: limit // 2]}...{name[-8:]} ({len(name)} characters)"
