"""`translations.compact`: compacted models read, dump, copy and change as parsed ones do, and
models parsed alike share their bookkeeping and their string maps' text."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from translations import compact as compact_mod
from translations.compact import SharedEmpty, SharedNames, compact
from translations.core import Pod


def _raw(name: str, node: str = "node-1") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "svc", "labels": {"app": "svc-" + str(7)}},
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "".join(["2", "000m"])}}}
            ],
        },
    }


def _pair() -> tuple[Pod, Pod]:
    a, b = Pod.parse(_raw("a")), Pod.parse(_raw("b"))
    compact(a)
    compact(b)
    return a, b


def test_dump_and_equality_unchanged() -> None:
    parsed = Pod.parse(_raw("a"))
    before = parsed.to_dict()
    compacted = Pod.parse(_raw("a"))
    compact(compacted)
    assert compacted.to_dict() == before
    assert compacted == parsed
    assert compacted.model_dump(exclude_unset=True) == parsed.model_dump(exclude_unset=True)


def test_alike_models_share_names_unknowns_and_text() -> None:
    a, b = _pair()
    assert type(a.metadata.__pydantic_fields_set__) is SharedNames
    assert a.metadata.__pydantic_fields_set__ is b.metadata.__pydantic_fields_set__
    assert type(a.spec.__pydantic_extra__) is SharedEmpty
    assert a.spec.__pydantic_extra__ is b.spec.__pydantic_extra__
    assert a.spec.containers[0].model_extra == {"image": "busybox"}  # kept unknowns stay its own
    labels_a, labels_b = a.metadata.labels or {}, b.metadata.labels or {}
    assert labels_a["app"] is labels_b["app"]
    req_a = a.spec.containers[0].resources.requests  # type: ignore[union-attr]
    req_b = b.spec.containers[0].resources.requests  # type: ignore[union-attr]
    assert req_a is not None and req_b is not None and req_a["cpu"] is req_b["cpu"]


def test_assignment_changes_only_the_model_assigned() -> None:
    a, b = _pair()
    a.metadata.annotations = {"k": "v"}
    a.metadata.newer_field = 1  # an unknown field, as a newer upstream adds
    assert "annotations" in a.metadata.model_fields_set
    assert "annotations" not in b.metadata.model_fields_set
    assert a.metadata.model_extra == {"newer_field": 1}
    assert b.metadata.model_extra == {}
    assert "annotations" not in b.to_dict()["metadata"]


def test_copies_are_their_own() -> None:
    a, b = _pair()
    moved = a.model_copy(update={"spec": a.spec.model_copy(update={"node_name": "node-2"})})
    assert moved.spec.node_name == "node-2" and a.spec.node_name == "node-1"
    assert type(moved.spec.__pydantic_fields_set__) is set
    shallow = copy.copy(b)  # its sub-models are b's: only its own names are its own
    shallow.status = None
    assert "status" in shallow.model_fields_set and "status" not in b.model_fields_set
    for twin in (copy.deepcopy(b), pickle.loads(pickle.dumps(b))):
        assert twin == b
        twin.metadata.annotations = {"k": "v"}
        assert "annotations" not in b.metadata.model_fields_set


def test_shared_bookkeeping_refuses_change_in_place() -> None:
    a, b = _pair()
    with pytest.raises(TypeError, match="shared"):
        a.metadata.__pydantic_fields_set__.add("annotations")
    with pytest.raises(TypeError, match="shared"):
        a.spec.__pydantic_extra__["x"] = 1  # type: ignore[index]
    assert "annotations" not in b.metadata.model_fields_set
    assert b.spec.model_extra == {}


def test_compact_twice_is_compact_once() -> None:
    a, _ = _pair()
    names, labels = a.metadata.__pydantic_fields_set__, a.metadata.labels
    compact(a)
    assert a.metadata.__pydantic_fields_set__ is names and a.metadata.labels is labels


def test_a_compacted_part_is_not_walked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model replaced with one new part shares the rest, compacted already: compacting it
    shares the bookkeeping of the two new models only (the pod and its spec, on a bind)."""
    a, _ = _pair()
    moved = a.replaced(spec=a.spec.replaced(node_name="node-2"))
    shared: list[object] = []
    real = compact_mod._share
    monkeypatch.setattr(compact_mod, "_share", lambda model: shared.append(model) or real(model))
    compact(moved)
    assert shared == [moved, moved.spec]
    assert type(moved.spec.__pydantic_fields_set__) is SharedNames
    assert moved.spec.containers[0] is a.spec.containers[0]
    compact(moved)
    assert len(shared) == 2
