"""The admission server's fast JSON path reads and writes what the standard library would:
same values (integers beyond 64 bits stay integers), same acceptance, same error text."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webhooks.admission import MalformedReview, _loads, parse_review, response_body
from webhooks.rules.decision import Decision
from webhooks.rules.fielderrors import ErrorType, FieldError


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types (1 is not 1.0, -0.0 is not 0.0, NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def outcome(body: bytes) -> tuple[str, Any]:
    try:
        return "ok", _loads(body)
    except Exception as exc:
        return "error", (type(exc), str(exc))


def stdlib(body: bytes) -> tuple[str, Any]:
    try:
        return "ok", json.loads(body)
    except Exception as exc:
        return "error", (type(exc), str(exc))


def agree(body: bytes) -> None:
    (got_kind, got), (want_kind, want) = outcome(body), stdlib(body)
    assert got_kind == want_kind, (body, got, want)
    if got_kind == "ok":
        assert same(got, want), (body, got, want)
    else:
        assert got == want, body


@pytest.mark.parametrize(
    "body",
    [
        b'{"tier": 123456789012345678901234567890}',
        b'{"tier": -9223372036854775809}',
        b'{"tier": 18446744073709551616}',
        b'{"tier": 18446744073709551615}',
        b'{"tier": 1e400}',
        b'{"tier": -0}',
        b'{"tier": -0.0}',
        b'{"tier": 1.0}',
        b'{"tier": NaN}',
        b'{"tier": Infinity}',
        b'{"uid": "\\ud800"}',
        b'{"a": 1, "a": 2}',
        b"\xef\xbb\xbf{}",
        '{"a": "é"}'.encode("utf-16"),
        b'{"a": "\xff"}',
        b'{"a": 1} trailing',
        b"",
        b'"' + b"9" * 5000 + b'"',
        b'{"n": ' + b"9" * 5000 + b"}",
    ],
)
def test_edge_cases_read_like_json(body: bytes) -> None:
    agree(body)


@pytest.mark.parametrize("body", [b"[" * 5000, b"[" * 600 + b"1e999999999999999999999" + b"]" * 600])
def test_too_deep_is_a_value_error_where_json_raises_recursion_error(body: bytes) -> None:
    """The one place `_loads` departs from the standard library on purpose: past the nesting it
    reads, it raises a ValueError naming the depth, never a RecursionError."""
    with pytest.raises(ValueError, match=r"^JSON nested \d+ levels deep, more than the 512 levels allowed$"):
        _loads(body)
    review = b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": ' + body
    with pytest.raises(MalformedReview, match="request body is not JSON: JSON nested"):
        parse_review(review)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)
number_tokens = st.from_regex(r"\A-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?\Z")


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans())
def test_any_document_reads_like_json(value: Any, ascii_only: bool) -> None:
    agree(json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"))


@settings(max_examples=300, deadline=None)
@given(number_tokens)
def test_any_number_reads_like_json(token: str) -> None:
    agree(f'{{"n": {token}}}'.encode())


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40))
def test_any_bytes_read_like_json(body: bytes) -> None:
    agree(body)


def review(uid: str, obj: Any) -> bytes:
    doc = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": "CREATE",
            "object": obj,
        },
    }
    return json.dumps(doc).encode()


def test_a_huge_integer_reaches_the_rule_as_an_integer() -> None:
    parsed = parse_review(review("u", {"spec": {"tier": 10**30}}))
    assert parsed.object["spec"]["tier"] == 10**30
    assert type(parsed.object["spec"]["tier"]) is int


def test_malformed_json_gets_the_standard_library_message() -> None:
    with pytest.raises(MalformedReview, match=r"^request body is not JSON: Expecting property name"):
        parse_review(b"{not json")


def test_answer_echoes_any_uid_and_message_as_json_reads_them() -> None:
    weird = "\ud800-é-\u2028"
    parsed = parse_review(review(weird, {"metadata": {"name": "x"}}))
    denied = Decision.of([FieldError(ErrorType.INVALID, "spec.x", "bad: é \ud800")], ["careful: ü"])
    for decision in (Decision(), denied):
        answer = json.loads(response_body(parsed, decision))
        assert answer["response"]["uid"] == weird
        assert answer["response"]["allowed"] is decision.allowed
    answer = json.loads(response_body(parsed, denied))
    assert answer["response"]["warnings"] == ["careful: ü"]
    assert answer["response"]["status"]["details"]["causes"][0]["message"].endswith("bad: é \ud800")


@pytest.mark.parametrize("version", ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"])
@pytest.mark.parametrize("uid", ["3c6b4f1e-0000-4000-8000-000000000001", 'a"b\\c', "\ud800-é"])
def test_plain_allowed_answer_is_the_whole_review_in_the_request_version(version: str, uid: str) -> None:
    body = review(uid, {"metadata": {"name": "x"}}).replace(b"admission.k8s.io/v1", version.encode(), 1)
    answer = json.loads(response_body(parse_review(body), Decision()))
    assert answer == {
        "apiVersion": version,
        "kind": "AdmissionReview",
        "response": {"uid": uid, "allowed": True},
    }
    assert list(answer) == ["apiVersion", "kind", "response"]
