"""`translations.jsontext.loads` reads what `json.loads` reads, including the texts orjson
would read differently (integers beyond 64 bits) or refuse (NaN, a BOM)."""

from __future__ import annotations

import json

import pytest

from translations.jsontext import MAX_DEPTH, TOO_DEEP, TooDeep, loads, loads_bounded, too_deep_paths

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


def _nested(depth: int, inner: bytes = b"1") -> bytes:
    return b'{"a":' * depth + inner + b"}" * depth


@pytest.mark.parametrize("depth", [1_100, 5_000, 100_000])
@pytest.mark.parametrize("long_int", [False, True], ids=["plain", "with a 30-digit integer"])
def test_too_deep_is_a_value_error_never_a_recursion_error(depth: int, long_int: bool) -> None:
    """orjson refuses beyond 1,024 levels; the standard library then raised RecursionError,
    which the read path's `except ValueError` let through and which ended the informer."""
    inner = b"123456789012345678901234567890" if long_int else b"1"
    with pytest.raises(TooDeep, match=r"nested .* levels deep"):
        loads(_nested(depth, inner))


def test_depth_within_the_limit_still_reads_with_the_standard_library() -> None:
    text = _nested(MAX_DEPTH - 1, b"123456789012345678901234567890")
    value = loads(text)
    for _ in range(MAX_DEPTH - 1):
        value = value["a"]
    assert value == 123456789012345678901234567890


def test_brackets_inside_strings_do_not_count() -> None:
    text = b'{"s": "' + b"[{" * 3000 + b'\\"\\\\", "t": ["]]]]"]}'
    assert loads(text) == json.loads(text)


def test_bounded_cuts_each_too_deep_value_and_keeps_the_rest() -> None:
    deep = _nested(2_000)
    text = (
        b'{"items": [{"metadata": {"name": "ok"}}, {"metadata": {"name": "deep", "managedFields": [{"manager": "m", "fieldsV1": '
        + deep
        + b"}]}}]}"
    )
    value, cut = loads_bounded(text)
    assert cut
    assert value["items"][0] == {"metadata": {"name": "ok"}}
    assert value["items"][1]["metadata"]["name"] == "deep"
    paths = too_deep_paths(value)
    assert len(paths) == 1
    assert paths[0].startswith("items[1].metadata.managedFields[0].fieldsV1.a.a")
    assert paths[0].count(".a") == MAX_DEPTH - 6  # the top, items, [1], metadata, managedFields, [0]


def test_bounded_reads_an_ordinary_text_uncut() -> None:
    assert loads_bounded(b'{"a": [1, {"b": 2}]}') == ({"a": [1, {"b": 2}]}, False)


def test_a_forged_marker_is_not_the_marker() -> None:
    """The marker carries a per-process nonce: a tenant's string that looks like it is none."""
    forged = TOO_DEEP.split(":")[0] + ":nested-too-deep:0000000000000000"
    assert too_deep_paths(loads(json.dumps({"a": forged}).encode())) == []
