"""JSON text in, Python out: orjson's speed with the standard library's meaning.

orjson parses 2-3x faster than `json`, but it refuses some texts `json` accepts (NaN, lone
surrogates, a BOM, UTF-16/32) and reads integers beyond 64 bits as floats. `loads` uses
orjson only where it reads exactly what `json` would, and `json` everywhere else, so what a
text means, and every error message about it, is the standard library's.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
"""Every digit to `0`, every other byte to a blank: with it, finding a run of digits is a
substring search in C (a regular expression takes ten times longer on a review)."""
_LONG_DIGIT_RUN = b"0" * 19
"""Any integer beyond 64 bits has 19 digits or more; orjson reads such integers as floats."""


def loads(text: bytes) -> Any:
    """`json.loads(text)`, faster; raises what `json.loads` raises."""
    if _LONG_DIGIT_RUN not in text.translate(_DIGITS_AS_ZERO):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)
