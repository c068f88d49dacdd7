"""Every list an annotation can carry is bounded and a too-long list is refused naming the
field; HyperNode regex patterns and their compiled cache are bounded too (a 60k-member
`groups` annotation once stalled the process, 1 MB regexes once filled 1 GB of memory)."""

from __future__ import annotations

import json

import pytest

from translations import goregex
from translations import koordinator as koord
from translations.errors import InvalidSpecError
from webhooks.rules import ClusterState, registry

GROUPS = koord.annotation_path(koord.GANG_GROUPS)
SPEC = koord.annotation_path(koord.NETWORK_TOPOLOGY_SPEC)


def _groups(n: int) -> str:
    return json.dumps([f"default/gang-{i}" for i in range(n)])


def test_groups_at_the_bound_parse_and_one_more_is_refused_naming_the_field() -> None:
    limit = koord.MAX_GANG_GROUP_MEMBERS
    assert len(koord.parse_groups(_groups(limit))) == limit
    with pytest.raises(InvalidSpecError) as exc:
        koord.parse_groups(_groups(60_000))
    assert str(exc.value) == f"{GROUPS}: Too many: 60000: must have at most {limit} items"


def test_a_pod_with_sixty_thousand_groups_is_denied_with_the_field_named() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "w",
            "namespace": "default",
            "annotations": {koord.GANG_NAME: "gang-0", koord.GANG_GROUPS: _groups(60_000)},
        },
    }
    _, decision = registry.validate_object(pod, ClusterState.unknown())
    assert [str(e) for e in decision.errors] == [
        f"{GROUPS}: Too many: 60000: must have at most {koord.MAX_GANG_GROUP_MEMBERS} items"
    ]


def test_duplicates_are_found_in_one_pass_and_reported_within_a_bound() -> None:
    raw = json.dumps(["default/a"] * koord.MAX_GANG_GROUP_MEMBERS)
    with pytest.raises(InvalidSpecError) as exc:
        koord.parse_groups(raw)
    problems = exc.value.all
    assert len(problems) == koord.MAX_REPORTED_PROBLEMS
    assert problems[0].field_path == f"{GROUPS}[1]"
    assert problems[0].detail == 'Duplicate value: "default/a"'


def test_a_long_gather_strategy_is_refused_before_the_schema_runs() -> None:
    items = [{"layer": f"L{i}", "strategy": "MustGather"} for i in range(10_000)]
    spec, problems = koord.check_network_topology_spec(json.dumps({"gatherStrategy": items}))
    assert spec is None
    assert [str(p) for p in problems] == [
        f"{SPEC}.gatherStrategy: Too many: 10000: must have at most {koord.MAX_GATHER_STRATEGIES} items"
    ]


def test_a_pattern_beyond_the_limit_is_refused_and_never_cached() -> None:
    before = goregex.cached_patterns()
    with pytest.raises(goregex.PatternTooLongError):
        goregex.compile_go_regex("a" * (goregex.MAX_PATTERN_LENGTH + 1))
    assert goregex.regex_matches("a" * (goregex.MAX_PATTERN_LENGTH + 1), ["aaa"]) == []
    assert goregex.cached_patterns() == before


def test_the_compiled_pattern_cache_stays_within_its_bound() -> None:
    width = goregex.MAX_PATTERN_LENGTH // 12
    for i in range(goregex.MAX_CACHED_PATTERNS * 3):
        pattern = "^(" + "|".join(f"n{i}-{j:05d}" for j in range(width)) + ")$"
        assert len(pattern) <= goregex.MAX_PATTERN_LENGTH
        assert goregex.regex_matches(pattern, [f"n{i}-00001", "other"]) == [f"n{i}-00001"]
    assert goregex.cached_patterns() == goregex.MAX_CACHED_PATTERNS


def test_a_hypernode_with_a_too_long_pattern_is_denied_naming_the_field() -> None:
    hn = {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "block-0"},
        "spec": {
            "tier": 1,
            "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "x" * 1_300_000}}}],
        },
    }
    _, decision = registry.validate_object(hn, ClusterState.unknown())
    assert [str(e) for e in decision.errors] == [
        "spec.members[0].selector.regexMatch.pattern: Too long: may not be more than "
        f"{goregex.MAX_PATTERN_LENGTH} characters"
    ]


def _hypernode(patterns: list[str]) -> dict[str, object]:
    members = [{"type": "Node", "selector": {"regexMatch": {"pattern": p}}} for p in patterns]
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "s0"},
        "spec": {"tier": 1, "members": members},
    }


def test_a_hypernode_beyond_the_regex_characters_bound_is_denied_with_the_field_named() -> None:
    """690 patterns of 4 KiB once cost seconds of compiling at admission: refused unread."""
    width = goregex.MAX_PATTERN_LENGTH
    count = goregex.MAX_PATTERN_CHARS_PER_HYPERNODE // width
    # Distinct patterns of the longest allowed length; one more crosses the bound.
    at_bound = [f"n{i:04d}" + "x" * (width - 5) for i in range(count)]
    _, decision = registry.validate_object(_hypernode(at_bound), ClusterState.unknown())
    assert list(decision.errors) == []
    over = [*at_bound, "n9999"]
    total = count * width + 5
    _, decision = registry.validate_object(_hypernode(over), ClusterState.unknown())
    assert [str(e) for e in decision.errors] == [
        f"spec.members: Forbidden: regexMatch patterns total {total} characters; "
        f"at most {goregex.MAX_PATTERN_CHARS_PER_HYPERNODE} are allowed per HyperNode"
    ]
    # Refused before compiling: an invalid pattern among them is not even read.
    _, decision = registry.validate_object(_hypernode([*over[:-1], "("]), ClusterState.unknown())
    assert [e.field for e in decision.errors] == ["spec.members"]
