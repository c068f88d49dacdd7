"""Resource quantities: exact parsing, scheduler units, canonical rendering, errors naming the field."""

from __future__ import annotations

from decimal import Decimal

import pytest

from translations.core import PodSpec, effective_requests
from translations.errors import InvalidSpecError
from translations.quantity import format_quantity, parse_quantity, to_scheduler_units


@pytest.mark.parametrize(
    ("raw", "exact"),
    [
        ("1", Decimal(1)),
        ("500m", Decimal("0.5")),
        ("32Gi", Decimal(32 * 2**30)),
        ("1Ki", Decimal(1024)),
        ("2k", Decimal(2000)),
        ("1e3", Decimal(1000)),
        ("1.5E-3", Decimal("0.0015")),
        ("+0.25", Decimal("0.25")),
        (".5", Decimal("0.5")),
        ("100n", Decimal("1E-7")),
        ("3u", Decimal("0.000003")),
        ("1M", Decimal(10**6)),
        ("1Ei", Decimal(2**60)),
        (8, Decimal(8)),
        (0.25, Decimal("0.25")),
    ],
)
def test_parse(raw: str | int | float, exact: Decimal) -> None:
    assert parse_quantity(raw) == exact


@pytest.mark.parametrize(
    "raw", ["", "Gi", "1.5.5", "1 Gi", " 1", "1Gib", "ten", "1e", "--1", True, float("nan"), None]
)
def test_parse_refuses_naming_the_field(raw: object) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        parse_quantity(raw, field="spec.minResources[cpu]")  # type: ignore[arg-type]
    assert caught.value.field_path == "spec.minResources[cpu]"
    assert str(caught.value).startswith("spec.minResources[cpu]: Invalid value")


@pytest.mark.parametrize(
    ("resource", "raw", "units"),
    [
        ("cpu", "500m", 500),
        ("cpu", "2", 2000),
        ("cpu", 0.1, 100),
        ("cpu", "1u", 1),  # below a millicore rounds up, as kube-scheduler does
        ("memory", "1Gi", 2**30),
        ("memory", "1.5", 2),
        ("nvidia.com/gpu", 8, 8),
        ("pods", "110", 110),
    ],
)
def test_scheduler_units(resource: str, raw: str | int | float, units: int) -> None:
    assert to_scheduler_units(resource, raw) == units


@pytest.mark.parametrize(
    ("value", "binary", "text"),
    [
        (Decimal(8), False, "8"),
        (Decimal("0.5"), False, "500m"),
        (Decimal(2000), False, "2k"),
        (Decimal(128 * 2**30), True, "128Gi"),
        (Decimal(1000), True, "1k"),  # not a power-of-1024 multiple: DecimalSI
        (Decimal("0.0000001"), False, "100n"),
        (Decimal(-3), False, "-3"),
    ],
)
def test_format_is_canonical(value: Decimal, binary: bool, text: str) -> None:
    assert format_quantity(value, binary=binary) == text
    assert parse_quantity(text) == value


def test_effective_requests_add_sidecars_to_every_later_init_container() -> None:
    # kube-scheduler: regular containers plus sidecars, against each init container plus the
    # sidecars started before it (a sidecar runs on); the overhead on top.
    spec = PodSpec.model_validate(
        {
            "containers": [{"name": "app", "resources": {"requests": {"cpu": "300m"}}}],
            "initContainers": [
                {"name": "a", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
                {"name": "b", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
                {"name": "c", "restartPolicy": "Always", "resources": {"requests": {"cpu": "200m"}}},
                {"name": "d", "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}}},
            ],
            "overhead": {"cpu": "50m"},
        }
    )
    # cpu: max(300 + 100 + 200, 1000 + 100, 500 + 300) + 50; memory: the larger init container
    assert effective_requests(spec) == {"cpu": 1150, "memory": 2 * 2**30}


def test_a_request_wins_over_its_limit_and_a_limit_stands_in_for_a_missing_one() -> None:
    spec = PodSpec.model_validate(
        {
            "containers": [
                {
                    "name": "a",
                    "resources": {
                        "requests": {"cpu": "500m"},
                        "limits": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "1"},
                    },
                },
                {"name": "b", "resources": {"requests": {"cpu": "1"}}},
                {"name": "c", "resources": {"limits": {"memory": "1Gi"}}},
            ]
        }
    )
    assert effective_requests(spec) == {"cpu": 1500, "memory": 2 * 2**30, "nvidia.com/gpu": 1}


@pytest.mark.parametrize(
    ("resources", "path"),
    [
        ({"limits": {"x": "1q"}}, "spec.initContainers[0].resources.limits[x]"),
        ({"requests": {"x": "1q"}, "limits": {"x": "2"}}, "spec.initContainers[0].resources.requests[x]"),
        ({"requests": {"cpu": "1"}, "limits": {"x": "1q"}}, "spec.initContainers[0].resources.limits[x]"),
    ],
    ids=["limit", "request-over-a-good-limit", "limit-beside-a-request"],
)
def test_effective_requests_name_the_container_and_field_of_a_bad_quantity(
    resources: dict[str, dict[str, str]], path: str
) -> None:
    spec = PodSpec.model_validate(
        {"containers": [{"name": "a"}], "initContainers": [{"name": "b", "resources": resources}]}
    )
    with pytest.raises(InvalidSpecError) as exc:
        effective_requests(spec)
    assert exc.value.field_path == path
    assert exc.value.value == "1q"
