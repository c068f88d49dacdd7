"""Property tests: no JSON value, however wrong, makes a rule raise.

Random JSON values go into every rule; so do valid corpus objects with one random part
replaced or removed, pods with random gang annotations, and cluster views built from random
objects. A rule must return a Decision whose texts are strings, and that Decision must
serialise to an AdmissionResponse.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webhook_corpus import CASES, CLUSTER_OBJECTS, A

from webhooks.rules import KINDS, ClusterState, Decision, registry
from webhooks.rules.decision import ALLOW

EXAMPLES = 400

# Text includes lone surrogates and controls: json.loads produces both from "\ud800" and "\u0000".
text = st.text(st.characters(codec=None, categories=None), max_size=40) | st.sampled_from(
    [
        "",
        "hard",
        "soft",
        "MustGather",
        "NodeTopologyLayer",
        "BlockLayer",
        "default/train",
        "1",
        "-1",
        "1e999",
        "{}",
        "[]",
    ]
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | text
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(text, inner, max_size=5),
    max_leaves=30,
)

STATES = st.sampled_from(
    [
        ClusterState.unknown(),
        ClusterState.build(),
        ClusterState.from_objects(CLUSTER_OBJECTS)[0],
    ]
)
VALID = [c.obj for c in CASES if not c.errors and isinstance(c.obj, dict)]


def _check(decision: Decision) -> None:
    assert isinstance(decision, Decision)
    assert all(isinstance(w, str) for w in decision.warnings)
    assert isinstance(decision.message, str)
    assert decision.allowed == (not decision.errors)
    response = {
        "uid": "u",
        "allowed": decision.allowed,
        "warnings": list(decision.warnings),
        "status": {
            "message": decision.message,
            "details": {
                "causes": [
                    {"field": e.field, "message": e.body, "reason": e.type.reason} for e in decision.errors
                ]
            },
        },
    }
    json.dumps(response)  # ASCII-escaped: lone surrogates survive
    for e in decision.errors:
        assert len(e.body) < 2000, "bad values must be cut short in messages"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values, kind=st.sampled_from(KINDS), state=STATES)
def test_any_json_value(value: Any, kind: registry.Kind, state: ClusterState) -> None:
    _check(kind.rule(value, state))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values, kind=st.sampled_from(KINDS), state=STATES, meta=json_values)
def test_any_spec_and_metadata(value: Any, kind: registry.Kind, state: ClusterState, meta: Any) -> None:
    obj = {
        "apiVersion": f"{kind.group}/{kind.versions[0]}".lstrip("/"),
        "kind": kind.kind,
        "metadata": meta,
        "spec": value,
    }
    _check(kind.rule(obj, state))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@settings(max_examples=EXAMPLES * 2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), base=st.sampled_from(VALID), state=STATES)
def test_mutated_valid_objects(data: st.DataObject, base: dict[str, Any], state: ClusterState) -> None:
    obj = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(obj)[1:] or [()]))
        if not path:
            break
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(json_values)
    entry = registry.for_api_version(str(base["apiVersion"]), str(base["kind"]))
    assert entry is not None
    _check(entry.rule(obj, state))


GANG_KEYS = [
    f"{A}{k}"
    for k in (
        "name",
        "min-available",
        "total-number",
        "mode",
        "waiting-time",
        "groups",
        "match-policy",
        "network-topology-spec",
        "network-topology-index",
    )
]
annotation_text = (
    text
    | json_values.map(lambda v: json.dumps(v, allow_nan=True))
    | st.builds(
        lambda items: json.dumps({"gatherStrategy": items}),
        st.lists(
            st.dictionaries(
                st.sampled_from(["layer", "strategy", "podCountMultiple", "x"]), json_values, max_size=4
            ),
            max_size=4,
        ),
    )
)


@settings(max_examples=EXAMPLES * 2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    annotations=st.dictionaries(st.sampled_from(GANG_KEYS), annotation_text, max_size=6),
    labels=st.dictionaries(
        st.sampled_from(["pod-group.scheduling.sigs.k8s.io", "scheduling.x-k8s.io/pod-group"]),
        text,
        max_size=2,
    ),
    kind=st.sampled_from(
        [k for k in KINDS if k.group in ("", "scheduling.sigs.k8s.io", "scheduling.x-k8s.io")]
    ),
    state=STATES,
)
def test_random_gang_annotations(
    annotations: dict[str, str], labels: dict[str, str], kind: registry.Kind, state: ClusterState
) -> None:
    obj = {
        "apiVersion": f"{kind.group}/{kind.versions[0]}".lstrip("/"),
        "kind": kind.kind,
        "metadata": {"name": "p", "namespace": "default", "annotations": annotations, "labels": labels},
    }
    _check(kind.rule(obj, state))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), extra=st.lists(json_values, max_size=4), kind=st.sampled_from(KINDS))
def test_cluster_state_from_random_objects(
    data: st.DataObject, extra: list[Any], kind: registry.Kind
) -> None:
    objects: list[Any] = copy.deepcopy(CLUSTER_OBJECTS)
    for obj in objects:
        if data.draw(st.booleans()):
            obj["spec"] = data.draw(json_values)
    state, problems = ClusterState.from_objects([*objects, *extra])
    assert all(isinstance(p, str) for p in problems)
    _ = (state.max_tier, state.tier_names, [state.ancestors(n) for n in state.hypernodes])
    for case in CASES:
        if (
            isinstance(case.obj, dict)
            and registry.for_api_version(str(case.obj.get("apiVersion")), str(case.obj.get("kind"))) is kind
        ):
            _check(kind.rule(case.obj, state))
            break


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(value=json_values)
def test_objects_of_other_kinds_are_not_ours(value: Any) -> None:
    entry, decision = registry.validate_object(value, ClusterState.unknown())
    if entry is None:
        assert decision == ALLOW
