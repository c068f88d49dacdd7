"""Numeric toleration operators (KEP-5471, kube's `TaintTolerationComparisonOperators`): `Lt`
and `Gt` compare the taint's value with the toleration's as Go's int64, and with the gate off
such a toleration tolerates nothing."""

from __future__ import annotations

import pytest

from controller.placer.plugins.taint_toleration import parse_int64, pod_tolerations, tolerates
from translations.core import PodSpec


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("950", 950),
        ("+5", 5),
        ("-3", -3),
        ("007", 7),
        ("-0", 0),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("9223372036854775808", None),  # out of range: Go's ParseInt errs
        ("", None),
        (" 5", None),
        ("5_0", None),
        ("1e3", None),
        ("0x10", None),
        ("high", None),
        ("\u0663", None),  # a Unicode digit Python's int() would take
    ],
)
def test_values_parse_as_go_int64(text: str, want: int | None) -> None:
    assert parse_int64(text) == want


SLA = "node.kubernetes.io/sla"


@pytest.mark.parametrize(
    ("op", "mine", "taint_value", "want"),
    [
        ("Gt", "750", "950", True),
        ("Gt", "950", "800", False),
        ("Gt", "950", "950", False),
        ("Lt", "950", "800", True),
        ("Lt", "800", "950", False),
        ("Lt", "800", "800", False),
        ("Gt", "950", "high", False),
        ("Lt", "many", "5", False),
        ("Gt", "-10", "-3", True),
        ("Lt", "+10", "009", True),
    ],
)
def test_lt_and_gt_compare_the_taint_value_with_the_toleration_value(
    op: str, mine: str, taint_value: str, want: bool
) -> None:
    assert tolerates([(SLA, op, mine, "NoSchedule")], (SLA, taint_value, "NoSchedule")) is want


def test_lt_and_gt_need_the_key_and_the_effect() -> None:
    assert not tolerates([(SLA, "Gt", "1", "NoSchedule")], ("other", "5", "NoSchedule"))
    assert not tolerates([("", "Gt", "1", "")], (SLA, "5", "NoSchedule"))
    assert not tolerates([(SLA, "Gt", "1", "NoExecute")], (SLA, "5", "NoSchedule"))
    assert tolerates([(SLA, "Gt", "1", "")], (SLA, "5", "NoExecute"))


def test_with_the_gate_off_a_numeric_toleration_tolerates_nothing() -> None:
    spec = PodSpec.model_validate(
        {
            "containers": [{"name": "c", "image": "x"}],
            "tolerations": [
                {"key": SLA, "operator": "Gt", "value": "750", "effect": "NoSchedule"},
                {"key": "dedicated", "operator": "Equal", "value": "a", "effect": "NoSchedule"},
            ],
        }
    )
    on = pod_tolerations(spec)
    off = pod_tolerations(spec, comparison_operators=False)
    assert tolerates(on, (SLA, "950", "NoSchedule"))
    assert not tolerates(off, (SLA, "950", "NoSchedule"))
    assert tolerates(off, ("dedicated", "a", "NoSchedule"))
