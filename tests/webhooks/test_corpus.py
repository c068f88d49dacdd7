"""Every corpus object gets exactly the verdict written down for it."""

from __future__ import annotations

import pytest
from webhook_corpus import CASES, CLUSTER_OBJECTS, Case

from webhooks.rules import ClusterState, registry

STATES: dict[str, ClusterState] = {
    "none": ClusterState.unknown(),
    "empty": ClusterState.build(),
    "cluster": ClusterState.from_objects(CLUSTER_OBJECTS)[0],
}


def _rule(case: Case) -> registry.Rule:
    obj = case.obj
    if isinstance(obj, dict):
        entry = registry.for_api_version(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        assert entry is not None, f"{case.id}: no rule for this kind"
        return entry.rule
    # Not even an object: route by the case's name, as the server routes by URL path.
    prefix = case.id.split("-", 1)[0]
    return {
        "lws": registry.for_path("/validate/leaderworkersets"),
        "hn": registry.for_path("/validate/hypernodes"),
    }[prefix].rule  # type: ignore[union-attr]


def test_corpus_is_big_and_ids_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 150
    assert sum(1 for c in CASES if c.errors) >= 75
    assert sum(1 for c in CASES if not c.errors) >= 50


def test_cluster_state_builds_cleanly() -> None:
    state, problems = ClusterState.from_objects(CLUSTER_OBJECTS)
    assert problems == []
    assert state.max_tier == 2
    assert state.parents_of("block-0") == ("spine-0",)
    assert state.cnt_layers == {"SpineLayer", "BlockLayer", "NodeTopologyLayer", "ClusterTopologyLayer"}
    assert state.gang_indices["default/train"] == {0: ("default/worker-0",), 1: ("default/worker-1",)}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case: Case) -> None:
    decision = _rule(case)(case.obj, STATES[case.state])
    assert [str(e) for e in decision.errors] == case.errors
    assert list(decision.warnings) == case.warnings
    assert decision.allowed == (not case.errors)
