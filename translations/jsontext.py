"""JSON text in, Python out: orjson's speed with the standard library's meaning, bounded depth.

orjson parses 2-3x faster than `json`, but it refuses some texts `json` accepts (NaN, lone
surrogates, a BOM, UTF-16/32) and reads integers beyond 64 bits as floats. `loads` uses
orjson only where it reads exactly what `json` would, and `json` everywhere else, so what a
text means, and every error message about it, is the standard library's.

Depth is bounded on both paths, and a text nested too deeply is a `TooDeep` (a ValueError),
never a RecursionError: orjson refuses more than 1,024 levels itself; before `json` reads a
text, a vectorised scan measures its nesting and anything deeper than `MAX_DEPTH` is refused,
or, by `loads_bounded`, cut out and marked (`TOO_DEEP`) so the caller can decide per object
what a value it cannot read means (`controller.kube` drops a too-deep `managedFields` entry's
`fieldsV1`, which nothing here reads, and leaves any other such object out).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import numpy as np
import orjson

_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
"""Every digit to `0`, every other byte to a blank: with it, finding a run of digits is a
substring search in C (a regular expression takes ten times longer on a review)."""
_LONG_DIGIT_RUN = b"0" * 19
"""Any integer beyond 64 bits has 19 digits or more; orjson reads such integers as floats."""

MAX_DEPTH = 512
"""Nesting levels `json` is allowed to read: well inside Python's recursion limit (1,000
frames, shared with the caller's stack), far beyond any Kubernetes object's schema (a pod
nests about 12 levels, its managedFields about 20). orjson reads up to 1,024 itself."""

TOO_DEEP = "\x00topobridge:nested-too-deep:" + secrets.token_hex(8)
"""What `loads_bounded` puts where a value nested deeper than `MAX_DEPTH` was: a string no
object holds (a NUL and a per-process nonce), so a tenant cannot forge it."""
_TOO_DEEP_TEXT = json.dumps(TOO_DEEP).encode()


class TooDeep(ValueError):
    """The text nests more than `MAX_DEPTH` levels (or more than the stack allows)."""

    def __init__(self, depth: int) -> None:
        super().__init__(f"JSON nested {depth} levels deep, more than the {MAX_DEPTH} levels allowed")
        self.depth = depth


def loads(text: bytes) -> Any:
    """`json.loads(text)`, faster and bounded: raises ValueError (JSONDecodeError, `TooDeep`,
    UnicodeDecodeError), never RecursionError."""
    return _loads(text, cut=False)[0]


def loads_bounded(text: bytes) -> tuple[Any, bool]:
    """Like `loads`, but a value nested deeper than `MAX_DEPTH` becomes `TOO_DEEP` instead of
    failing the whole text; the flag says whether any did (find them with `too_deep_paths`)."""
    return _loads(text, cut=True)


def check_depth(text: str) -> None:
    """Raise `TooDeep` when `text` nests more than `MAX_DEPTH` levels: for a parser that must
    read a str with the standard library's options (an annotation holding JSON)."""
    depths = _depths(text.encode("utf-8", "surrogatepass"))
    if depths.size and (deepest := int(depths.max())) > MAX_DEPTH:
        raise TooDeep(deepest)


def _loads(text: bytes, *, cut: bool) -> tuple[Any, bool]:
    long_ints = _LONG_DIGIT_RUN in text.translate(_DIGITS_AS_ZERO)
    if not long_ints:
        try:
            return orjson.loads(text), False
        except orjson.JSONDecodeError:
            pass
    depths = _depths(text)
    deepest = int(depths.max()) if depths.size else 0
    was_cut = False
    if deepest > MAX_DEPTH:
        if not cut:
            raise TooDeep(deepest)
        text, was_cut = _cut(text, depths), True
        if not long_ints:
            try:
                return orjson.loads(text), True
            except orjson.JSONDecodeError:
                pass
    try:
        return json.loads(text), was_cut
    except RecursionError:  # the caller's own stack was deep already
        raise TooDeep(deepest) from None


def _depths(text: bytes) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The nesting depth after each byte, counting brackets outside strings only (a quote
    preceded by an odd run of backslashes is inside one). Valid for UTF-8 and UTF-16/32
    alike: no multi-byte character has a byte below 0x80 outside a string."""
    a = np.frombuffer(text, np.uint8)
    quote = a == 0x22
    backslash = a == 0x5C
    if backslash.any():
        at = np.arange(a.size)
        last_other = np.maximum.accumulate(np.where(backslash, -1, at))
        run_before = np.zeros(a.size, np.int64)
        run_before[1:] = at[:-1] - last_other[:-1]
        quote &= (run_before & 1) == 0
    inside = (np.cumsum(quote, dtype=np.int64) & 1).astype(bool)
    step = ((a == 0x7B) | (a == 0x5B)).astype(np.int64) - ((a == 0x7D) | (a == 0x5D))
    step[inside] = 0
    return np.cumsum(step)


def _cut(text: bytes, depths: np.ndarray[Any, np.dtype[np.int64]]) -> bytes:
    """`text` with every value that opens at level MAX_DEPTH + 1 replaced by `TOO_DEEP`."""
    opens = np.flatnonzero((depths == MAX_DEPTH + 1) & (np.diff(depths, prepend=0) == 1))
    closes = np.flatnonzero((depths == MAX_DEPTH) & (np.diff(depths, prepend=0) == -1))
    closes = closes[np.searchsorted(closes, opens[0]) :] if opens.size else closes
    if closes.size < opens.size:  # unbalanced: not JSON; let the parser say where
        return text
    parts, at = [], 0
    for start, end in zip(opens.tolist(), closes[: opens.size].tolist(), strict=True):
        parts += [text[at:start], _TOO_DEEP_TEXT]
        at = end + 1
    parts.append(text[at:])
    return b"".join(parts)


def too_deep_paths(value: Any, prefix: str = "") -> list[str]:
    """Where `loads_bounded` cut a value out of `value`: paths like `metadata.managedFields[0].fieldsV1`
    (an iterative walk: the value is at most `MAX_DEPTH` deep, but the caller's stack may not be)."""
    found: list[str] = []
    stack: list[tuple[str, Any]] = [(prefix, value)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, dict):
            stack.extend((f"{path}.{k}" if path else str(k), sub) for k, sub in reversed(v.items()))
        elif isinstance(v, list):
            stack.extend((f"{path}[{i}]", sub) for i, sub in reversed(list(enumerate(v))))
        elif v == TOO_DEEP:
            found.append(path)
    return found
