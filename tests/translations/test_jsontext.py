"""`translations.jsontext.loads` reads what `json.loads` reads, including the texts orjson
would read differently (integers beyond 64 bits) or refuse (NaN, a BOM)."""

from __future__ import annotations

import json

import pytest

from translations.jsontext import loads

TEXTS = {
    "object": b'{"a": [1, 2.5, "x", null, true], "b": {"c": "\\u00e9"}}',
    "int64 max": b'{"n": 9223372036854775807}',
    "beyond 64 bits": b'{"n": 123456789012345678901234567890}',
    "negative beyond 64 bits": b'{"n": -99999999999999999999}',
    "NaN": b'{"n": NaN}',
    "BOM": b'\xef\xbb\xbf{"a": 1}'.decode("utf-8-sig").encode(),
}


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_reads_what_json_reads(text: bytes) -> None:
    got, want = loads(text), json.loads(text)
    assert repr(got) == repr(want)  # repr: NaN != NaN, and 1 == 1.0 would hide a float


def test_big_integers_stay_integers() -> None:
    assert loads(b'{"n": 123456789012345678901234567890}')["n"] == 123456789012345678901234567890


@pytest.mark.parametrize("text", [b"{", b'{"a": }', b"[1,]"])
def test_refuses_what_json_refuses(text: bytes) -> None:
    with pytest.raises(ValueError):
        loads(text)
