"""The typed parsers of Koordinator's gang annotations: values, and errors naming the annotation."""

from __future__ import annotations

import json

import pytest

from translations import koordinator as k
from translations.errors import InvalidSpecError


def _path(key: str) -> str:
    return f"metadata.annotations[{key}]"


# --- network-topology-spec ------------------------------------------------------------------------


def test_network_topology_spec_parses_and_renders_back() -> None:
    raw = json.dumps(
        {
            "gatherStrategy": [
                {"layer": "BlockLayer", "strategy": "MustGather", "podCountMultiple": 4},
                {"layer": "SpineLayer", "strategy": "PreferGather"},
            ]
        }
    )
    spec = k.parse_network_topology_spec(raw)
    assert spec.gather_strategy == (
        k.GatherStrategy("BlockLayer", "MustGather", 4),
        k.GatherStrategy("SpineLayer", "PreferGather", None),
    )
    assert k.parse_network_topology_spec(spec.to_annotation()) == spec
    assert json.loads(spec.to_annotation()) == json.loads(raw)


@pytest.mark.parametrize(
    ("raw", "field", "phrase"),
    [
        pytest.param("{not json", "", "not valid JSON", id="not-json"),
        pytest.param("{}", ".gatherStrategy", "Required value", id="missing-gatherStrategy"),
        pytest.param(
            '{"gatherStrategy":[{"layer":"BlockLayer","strategy":"MustGathr"}]}',
            ".gatherStrategy[0].strategy",
            'Unsupported value: "MustGathr": supported values: "MustGather", "PreferGather"',
            id="strategy-enum",
        ),
        pytest.param(
            '{"gatherStrategy":[{"layer":"BlockLayer","strategy":"MustGather","podCountMultiple":0}]}',
            ".gatherStrategy[0].podCountMultiple",
            "Invalid value: 0",
            id="podCountMultiple-minimum",
        ),
        pytest.param(
            '{"gatherStrategy":[{"layer":"BlockLayer","strategy":"MustGather","podCountMultiple":2.0}]}',
            ".gatherStrategy[0].podCountMultiple",
            "integer",
            id="podCountMultiple-float",
        ),
        pytest.param(
            '{"gatherStrategy":[{"strategy":"MustGather"}]}',
            ".gatherStrategy[0].layer",
            "Required value",
            id="layer-required",
        ),
        pytest.param(
            '{"gatherStrategy":[{"layer":"B","strategy":"MustGather"},{"layer":"B","strategy":"PreferGather"}]}',
            ".gatherStrategy[1].layer",
            'Duplicate value: "B"',
            id="duplicate-layer",
        ),
        pytest.param(
            '{"gatherStrategy":[{"layer":"B","strategy":"MustGather","x":NaN}]}',
            "",
            "not valid JSON",
            id="nan",
        ),
    ],
)
def test_network_topology_spec_errors_name_the_field(raw: str, field: str, phrase: str) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        k.parse_network_topology_spec(raw)
    err = caught.value
    assert err.field_path == _path(k.NETWORK_TOPOLOGY_SPEC) + field
    assert phrase in str(err)
    assert str(err).startswith(err.field_path + ": ")


# --- the scalar annotations -----------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "value"), [("0", 0), ("7", 7), ("2147483647", 2**31 - 1)])
def test_non_negative_int(raw: str, value: int) -> None:
    assert k.parse_non_negative_int(k.NETWORK_TOPOLOGY_INDEX, raw) == value


@pytest.mark.parametrize("raw", ["-1", "01", "1.0", "", " 3", "2147483648", "seven", "1e3"])
def test_non_negative_int_refuses(raw: str) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        k.parse_non_negative_int(k.NETWORK_TOPOLOGY_INDEX, raw)
    assert caught.value.field_path == _path(k.NETWORK_TOPOLOGY_INDEX)
    assert caught.value.value == raw


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [("300s", 300.0), ("1h30m", 5400.0), ("1.5s", 1.5), ("0", 0.0), ("250ms", 0.25), ("2m0.5s", 120.5)],
)
def test_duration(raw: str, seconds: float) -> None:
    assert k.parse_duration(k.GANG_WAITING_TIME, raw) == pytest.approx(seconds)


@pytest.mark.parametrize("raw", ["", "300", "5 m", "-1s", "1d", "s", "1h-30m"])
def test_duration_refuses(raw: str) -> None:
    with pytest.raises(InvalidSpecError, match="duration") as caught:
        k.parse_duration(k.GANG_WAITING_TIME, raw)
    assert caught.value.field_path == _path(k.GANG_WAITING_TIME)


def test_groups() -> None:
    assert k.parse_groups('["team-a/gang-1","team-b/gang.2"]') == ("team-a/gang-1", "team-b/gang.2")


@pytest.mark.parametrize(
    ("raw", "field_suffix"),
    [
        ('"team-a/gang"', ""),
        ("[1]", "[0]"),
        ('["no-slash"]', "[0]"),
        ('["ok/one","Bad/Case"]', "[1]"),
        ("[", ""),
    ],
)
def test_groups_refuses(raw: str, field_suffix: str) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        k.parse_groups(raw)
    assert caught.value.field_path == _path(k.GANG_GROUPS) + field_suffix


def test_enum_annotations_list_the_supported_values() -> None:
    with pytest.raises(InvalidSpecError) as caught:
        k.parse_enum(k.GANG_MODE, "strict", k.GANG_MODES)
    assert str(caught.value) == (
        f'{_path(k.GANG_MODE)}: Unsupported value: "strict": supported values: "Strict", "NonStrict"'
    )


# --- all annotations together -----------------------------------------------------------------------


def test_every_gang_annotation_parsed() -> None:
    parsed = k.parse_gang_annotations(
        {
            k.GANG_NAME: "gang-a",
            k.GANG_MIN_AVAILABLE: "4",
            k.GANG_TOTAL_NUMBER: "6",
            k.GANG_MODE: "NonStrict",
            k.GANG_WAITING_TIME: "10m",
            k.GANG_GROUPS: '["team-a/gang-a","team-a/gang-b"]',
            k.GANG_MATCH_POLICY: "waiting-and-running",
            k.NETWORK_TOPOLOGY_SPEC: '{"gatherStrategy":[{"layer":"BlockLayer","strategy":"MustGather"}]}',
            k.NETWORK_TOPOLOGY_INDEX: "3",
            "unrelated/annotation": "ignored",
        }
    )
    assert parsed == k.GangAnnotations(
        name="gang-a",
        min_available=4,
        total_number=6,
        mode="NonStrict",
        waiting_time_seconds=600.0,
        groups=("team-a/gang-a", "team-a/gang-b"),
        match_policy="waiting-and-running",
        network_topology=k.NetworkTopologyGatherSpec((k.GatherStrategy("BlockLayer", "MustGather"),)),
        network_topology_index=3,
    )


def test_absent_annotations_are_none() -> None:
    assert k.parse_gang_annotations(None) == k.GangAnnotations()
    assert k.parse_gang_annotations({"other": "x"}) == k.GangAnnotations()


def test_total_number_below_min_available_is_refused() -> None:
    with pytest.raises(InvalidSpecError) as caught:
        k.parse_gang_annotations({k.GANG_MIN_AVAILABLE: "4", k.GANG_TOTAL_NUMBER: "2"})
    assert caught.value.field_path == _path(k.GANG_TOTAL_NUMBER)
    assert "must be greater than or equal to" in str(caught.value)


def test_every_bad_annotation_is_reported_at_once() -> None:
    _, problems = k.check_gang_annotations(
        {
            k.GANG_MODE: "Loose",
            k.GANG_WAITING_TIME: "forever",
            k.NETWORK_TOPOLOGY_INDEX: "-1",
        }
    )
    assert {p.field_path for p in problems} == {
        _path(k.GANG_MODE),
        _path(k.GANG_WAITING_TIME),
        _path(k.NETWORK_TOPOLOGY_INDEX),
    }


def test_one_gang_group_rule_for_admission_and_placement() -> None:
    """Admission/translation and the placer word the same finding: the members whose spec
    differs (none counts as a spec) and nobody else."""
    block = k.NetworkTopologyGatherSpec((k.GatherStrategy("BlockLayer", "MustGather"),))
    spine = k.NetworkTopologyGatherSpec((k.GatherStrategy("SpineLayer", "MustGather"),))
    known = {"ns/a": block, "ns/b": spine, "ns/c": None, "ns/d": block}
    group = ["ns/a", "ns/b", "ns/c", "ns/d", "ns/unknown"]
    assert k.differing_group_members("ns/a", block, group, known) == ["ns/b", "ns/c"]
    problems = k.differing_group_specs("ns/a", block, group, known)
    assert [p.detail.split("on GangGroup member ")[1].split(";")[0] for p in problems] == ["ns/b", "ns/c"]
    placer = k.gang_group_spec_conflict(list(known.items()))
    assert placer is not None and "member ns/a has" in placer and "but ns/b has" in placer
    assert k.gang_group_spec_conflict([("ns/a", block), ("ns/d", block)]) is None
    assert k.gang_group_spec_conflict([("ns/a", None), ("ns/c", None)]) is None
