"""One HyperNode parent resolution (`translations.topology.ParentClaims`): the scheduler's tree
(`from_hypernodes`) and admission's view of the cluster (`ClusterState.ancestors`, which the
HyperNode rule's cycle check walks) put every HyperNode under the same parent, also where they
used to differ: a child claimed by two parents (the lower tier wins, then the first name, where
admission took the first name), a parent that selects by regexMatch, and a cycle (cut where the
tree cuts it, where admission walked round it)."""

from __future__ import annotations

from typing import Any

import pytest

from translations.topology import DomainId, ParentClaims, TopologyTree, from_hypernodes
from translations.volcano import HyperNode
from webhooks.rules import ClusterState

Obj = dict[str, Any]


def _hn(name: str, tier: int, *members: Obj) -> Obj:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "members": list(members) or [_exact("Node", f"{name}-node")]},
    }


def _exact(kind: str, name: str) -> Obj:
    return {"type": kind, "selector": {"exactMatch": {"name": name}}}


def _regex(pattern: str) -> Obj:
    return {"type": "HyperNode", "selector": {"regexMatch": {"pattern": pattern}}}


def _labels(labels: dict[str, str]) -> Obj:
    return {"type": "HyperNode", "selector": {"labelMatch": {"matchLabels": labels}}}


def _tree_ancestors(tree: TopologyTree, name: str) -> list[str]:
    out: list[str] = []
    parent = tree.domains[DomainId(name)].parent
    while parent is not None:
        out.append(parent)
        parent = tree.domains[parent].parent
    return out


CASES = [
    pytest.param(
        [
            _hn("a-spine", 3, _exact("HyperNode", "leaf")),
            _hn("b-block", 2, _exact("HyperNode", "leaf")),
            _hn("leaf", 1),
        ],
        {"leaf": ["b-block"], "a-spine": [], "b-block": []},
        id="two-parents-the-lower-tier-wins-over-the-first-name",
    ),
    pytest.param(
        [_hn("e-spine", 3, _exact("HyperNode", "leaf")), _hn("r-block", 2, _regex("^leaf$")), _hn("leaf", 1)],
        {"leaf": ["r-block"], "e-spine": [], "r-block": []},
        id="a-regex-parent-of-lower-tier-wins-over-an-exact-one",
    ),
    pytest.param(
        [_hn("a", 2, _exact("HyperNode", "b")), _hn("b", 1, _exact("HyperNode", "a"))],
        {"a": ["b"], "b": []},
        id="a-cycle-is-cut-where-the-tree-cuts-it",
    ),
    pytest.param(
        [_hn("x-spine", 2, _exact("HyperNode", "leaf")), _hn("y-spine", 2, _regex("leaf")), _hn("leaf", 1)],
        {"leaf": ["x-spine"], "x-spine": [], "y-spine": []},
        id="same-tier-the-first-name-wins",
    ),
    pytest.param(
        [_hn("top", 3, _exact("HyperNode", "mid")), _hn("mid", 2, _regex("^low")), _hn("low-0", 1)],
        {"low-0": ["mid", "top"], "mid": ["top"], "top": []},
        id="a-chain",
    ),
    pytest.param(
        [_hn("spine", 2, _labels({"rack": "r0"})), _hn("leaf", 1)],
        {"leaf": [], "spine": []},
        id="label-members-select-no-hypernode",
    ),
]


@pytest.mark.parametrize(("objects", "ancestors"), CASES)
def test_admission_and_the_tree_put_each_hypernode_under_one_parent(
    objects: list[Obj], ancestors: dict[str, list[str]]
) -> None:
    state, problems = ClusterState.from_objects(objects)
    assert problems == []
    tree = from_hypernodes([HyperNode.parse(o) for o in objects], [])
    for name, expected in ancestors.items():
        assert _tree_ancestors(tree, name) == expected, name
        assert state.ancestors(name) == expected, name


def test_a_claim_warns_of_a_second_parent_and_of_a_repeat_whatever_the_order() -> None:
    forward, backward = ParentClaims("hypernode"), ParentClaims("hypernode")
    for claims, order in ((forward, ((3, "a"), (2, "b"))), (backward, ((2, "b"), (3, "a")))):
        for tier, parent in order:
            claims.claim("leaf", parent, tier)
        claims.claim("leaf", "b", 2, index=1)
        assert claims.parent == {"leaf": "b"}
    assert forward.warnings == [
        "hypernode leaf has two parents (b, a); kept b",
        "hypernode leaf is selected twice by hypernode b (members[0] and members[1]); counted once",
    ]
    assert backward.warnings == forward.warnings


def test_a_hypernode_being_admitted_has_the_parent_that_names_it() -> None:
    """Not yet in view, it is still a child of the HyperNodes that list it (the cycle check
    walks up from it)."""
    state, _ = ClusterState.from_objects(
        [_hn("spine", 3, _exact("HyperNode", "new")), _hn("block", 2, _exact("HyperNode", "new"))]
    )
    assert state.ancestors("new") == ["block"]
