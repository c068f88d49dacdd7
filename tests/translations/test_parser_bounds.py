"""Parsers read what Go's strconv and encoding/json read, within bounds, and refuse the rest
naming the field and the value; never a Python exception. Each case once escaped as a
traceback (validate, the webhook's 500, simulate, translate) or read a value Go refuses:
a 4,301-digit number (Python's int() refuses more than 4,300 digits with a ValueError), `²`
(`str.isdigit()` is true, `int()` refuses it), 5,000 `[` (RecursionError in json.loads),
Unicode digits in a Go duration, a trailing newline (a regular expression's `$` allows it)."""

from __future__ import annotations

import pytest

from translations import koordinator as koord
from translations import kueue
from translations.core import Job, Pod
from translations.digits import bounded_decimal
from translations.errors import InvalidSpecError
from translations.expand import expand_job

HUGE = "1" * 4_301
ANN = "metadata.annotations"


def _kueue(**annotations: str) -> list[str]:
    values = {kueue.REQUIRED_TOPOLOGY: "cloud.provider.com/rack", **annotations}
    _, problems = kueue.tas_request(values, path=ANN)
    return [str(p) for p in problems]


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("0", 0),
        ("007", 7),
        ("2147483647", 2147483647),
        ("2147483648", None),
        (HUGE, None),
        ("²", None),
        ("\u0661", None),
        ("1_0", None),
        (" 1", None),
        ("1\n", None),
        ("", None),
        ("-1", None),
        ("+1", None),
    ],
)
def test_bounded_decimal_reads_ascii_digits_within_the_bound_only(raw: str, value: int | None) -> None:
    assert bounded_decimal(raw, 2**31 - 1) == value


@pytest.mark.parametrize("raw", [HUGE, "²", "5\n", "٣", "1_0"])
def test_kueue_slice_size_refuses_what_go_parse_int_refuses(raw: str) -> None:
    problems = _kueue(**{kueue.SLICE_REQUIRED_TOPOLOGY: "cloud.provider.com/rack", kueue.SLICE_SIZE: raw})
    field = f"{ANN}[{kueue.SLICE_SIZE}]"
    assert any(p.startswith(f"{field}: Invalid value: ") and "must be a numeric value" in p for p in problems)


def test_kueue_group_name_of_a_unicode_digit_is_a_name_not_a_number() -> None:
    """`²` is no number to Go's ParseUint: the group name is accepted as a name."""
    problems = _kueue(**{kueue.GROUP_NAME: "²"})
    assert not any("must not be a number" in p for p in problems)
    assert any("must not be a number" in p for p in _kueue(**{kueue.GROUP_NAME: "42"}))


@pytest.mark.parametrize("raw", ["[" * 5_000, "[" * 600 + "]" * 600])
def test_kueue_slice_constraints_nested_too_deeply_are_refused_naming_the_field(raw: str) -> None:
    problems = _kueue(**{kueue.SLICE_CONSTRAINTS: raw})
    field = f"{ANN}[{kueue.SLICE_CONSTRAINTS}]"
    mine = [p for p in problems if p.startswith(field)]
    assert mine and all("RecursionError" not in p and "recursion" not in p for p in mine)
    assert any("nested" in p for p in mine), mine


@pytest.mark.parametrize("raw", ["\u0661\u0660s", "10s\n", "²s"])
def test_koordinator_waiting_time_takes_ascii_digits_only(raw: str) -> None:
    with pytest.raises(InvalidSpecError) as exc:
        koord.parse_duration(koord.GANG_WAITING_TIME, raw)
    assert str(exc.value).startswith(koord.annotation_path(koord.GANG_WAITING_TIME))
    assert koord.parse_duration(koord.GANG_WAITING_TIME, "1m30s") == 90.0


@pytest.mark.parametrize("raw", ["7\n", HUGE])
def test_koordinator_integers_refuse_a_trailing_newline_and_huge_runs(raw: str) -> None:
    with pytest.raises(InvalidSpecError):
        koord.parse_non_negative_int(koord.NETWORK_TOPOLOGY_INDEX, raw)


@pytest.mark.parametrize("index", [HUGE, "2147483648", "²"])
def test_a_completion_index_out_of_bounds_is_refused_naming_the_pod_and_the_annotation(index: str) -> None:
    job = Job.parse(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "default", "uid": "u1"},
            "spec": {
                "completionMode": "Indexed",
                "completions": 4,
                "parallelism": 4,
                "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
            },
        }
    )
    pod = Pod.parse(
        {
            "metadata": {
                "name": "j-0-abcde",
                "namespace": "default",
                "labels": {"batch.kubernetes.io/controller-uid": "u1"},
                "annotations": {"batch.kubernetes.io/job-completion-index": index},
            },
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        }
    )
    with pytest.raises(InvalidSpecError) as exc:
        expand_job(job, pods=[pod])
    text = str(exc.value)
    assert text.startswith(
        "Pod default/j-0-abcde: metadata.annotations[batch.kubernetes.io/job-completion-index]"
    )
    assert "at most 2147483647" in text


@pytest.mark.parametrize(("index", "patched"), [("²", False), ("1" * 4_301, False), ("3", True)])
def test_the_lws_pod_mutation_reads_an_ascii_group_index_only(index: str, patched: bool) -> None:
    """`²` passed `str.isdigit()` and `int()` then raised: the mutating webhook answered 500."""
    from test_lws_to_volcano import lws

    from translations import lws_admission
    from translations.lws import LeaderWorkerSet

    spec = LeaderWorkerSet.parse(lws())
    labels = {
        "leaderworkerset.sigs.k8s.io/name": spec.name,
        "leaderworkerset.sigs.k8s.io/group-index": index,
        "leaderworkerset.sigs.k8s.io/template-revision-hash": "abc",
    }
    pod = {"metadata": {"name": "p", "namespace": "default", "labels": labels}}
    patch = lws_admission.pod_group_name_patch(pod, spec)
    assert bool(patch) is patched
    if patched:
        assert "lws-hard-topology-3-abc" in str(patch)
