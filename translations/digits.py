"""Digit strings as Go's strconv reads them: ASCII digits only, bounded before conversion.

Python's `str.isdigit()` is true for `²` and the Arabic-Indic digits (which `int()` then refuses or reads), its
`int()` takes `_`, blanks and other scripts' digits, and refuses more than 4,300 digits with a
ValueError; a regular expression's `$` matches before a trailing newline. Each parser here
reads only what Go's would, and never hands `int()` more digits than its bound has.
"""

from __future__ import annotations

import re

ASCII_DIGITS = re.compile(r"[0-9]+")
"""Use with `fullmatch`: `[0-9]`, never `\\d` (any script's digits)."""


def ascii_digits(text: str) -> bool:
    """Whether `text` is one or more ASCII digits, nothing else."""
    return text.isascii() and text.isdigit()


def bounded_decimal(text: str, maximum: int) -> int | None:
    """The value of an ASCII digit string (leading zeros allowed) when at most `maximum`;
    None when `text` is not such a string or is larger, however many digits it has."""
    if not ascii_digits(text):
        return None
    significant = text.lstrip("0") or "0"
    if len(significant) > len(str(maximum)):
        return None
    value = int(significant)
    return value if value <= maximum else None
