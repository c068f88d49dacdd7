"""What keeps a cycle's cost from growing with the cluster gives the answers the plain way gives.

Each shortcut is checked against the computation it stands in for, on inputs made to hit its
edges (ties on every key, limits around the sizes where it switches to the plain way); what a
view keeps from the last (budgets, where links may be) follows every change; the garbage
collector a view holds off is back on however the view ends.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placer_objects import koord_gang, node, pdb, pod

from controller.placer.cluster import ClusterState, ClusterView, Kind
from controller.placer.snapshot import I64, SortKey, lexsort_first
from translations.core import Node, Pod, PodDisruptionBudget
from translations.koordinator import SIGS_POD_GROUP_LABEL, SigsPodGroup


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    n=st.integers(0, 400),
    n_keys=st.integers(1, 5),
    spread=st.integers(1, 6),
    limit=st.one_of(st.none(), st.integers(0, 80)),
    seed=st.integers(0, 2**16),
    unique_last=st.booleans(),
)
def test_lexsort_first_is_the_head_of_a_full_lexsort(
    n: int, n_keys: int, spread: int, limit: int | None, seed: int, unique_last: bool
) -> None:
    rng = np.random.default_rng(seed)
    keys = [rng.integers(-spread, spread, n).astype(np.int64) for _ in range(n_keys)]
    if unique_last:  # the last tie-break unique, as name ranks are; else full ties keep index order
        keys.insert(0, rng.permutation(n).astype(np.int64))
    lazy: list[SortKey] = [keys[0], *(_asked(k) for k in keys[1:])]  # worked out when asked
    assert lexsort_first(lazy, limit, n).tolist() == np.lexsort(keys)[:limit].tolist()


def _asked(key: I64) -> SortKey:
    def values(positions: I64) -> I64:
        return key[positions]

    return values


def test_a_view_holds_the_collector_off_only_while_it_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    state = ClusterState()
    seen: list[bool] = []
    build = ClusterState._view

    def spy(self: ClusterState, full: bool) -> ClusterView:
        seen.append(gc.isenabled())
        return build(self, full)

    monkeypatch.setattr(ClusterState, "_view", spy)
    assert gc.isenabled()
    state.view()
    assert seen == [False] and gc.isenabled()

    def fail(self: ClusterState, full: bool) -> ClusterView:
        raise RuntimeError("half-way")

    monkeypatch.setattr(ClusterState, "_view", fail)
    with pytest.raises(RuntimeError):
        state.view()
    assert gc.isenabled()  # back on after a view that raised

    monkeypatch.setattr(ClusterState, "_view", spy)
    gc.disable()
    try:
        state.view()
        assert not gc.isenabled()  # a caller that holds it off keeps it off
    finally:
        gc.enable()


def test_podgroup_links_are_found_as_their_annotation_comes_and_goes() -> None:
    """Links are looked for only on PodGroups known to carry a `groups` annotation: that index
    follows the PodGroup as it gains, loses and drops it, and the gangs stay as a full rebuild
    finds them."""
    state = ClusterState()
    state.put(Kind.NODE, "a", Node.parse(node("a")))
    for name, gang in (("x0", "x"), ("x1", "x"), ("y0", "y")):
        p = Pod.parse(pod(name, labels={SIGS_POD_GROUP_LABEL: gang}))
        state.put(Kind.POD, p.key, p)
    state.put(Kind.SIGS_PODGROUP, "default/y", SigsPodGroup.parse(koord_gang("y", 1)))
    steps: list[tuple[Kind, str, int | None, dict[str, int]]] = [
        (Kind.SIGS_PODGROUP, "x", 3, {"koordinator:default/x": 3}),
        (Kind.SIGS_PODGROUP, "x", None, {"koordinator:default/x": 2, "koordinator:default/y": 1}),
        (Kind.SIGS_PODGROUP, "x", 3, {"koordinator:default/x": 3}),
        (Kind.SIGS_PODGROUP, "x", -1, {"koordinator:default/x": 2, "koordinator:default/y": 1}),
    ]
    for kind, name, linked, expected in steps:
        key = f"default/{name}"
        if linked == -1:
            state.delete(kind, key)
        else:
            groups = ["default/x", "default/y"] if linked is not None else None
            state.put(kind, key, SigsPodGroup.parse(koord_gang(name, 1, groups=groups)))
        seen = {k: len(g.pods) for k, g in state.view().gangs.items()}
        assert seen == expected
        assert seen == {k: len(g.pods) for k, g in state.view(full=True).gangs.items()}


def test_the_budgets_a_view_keeps_follow_their_pods_and_their_status() -> None:
    """A view hands on the budgets the last one worked out until a covered pod or a budget
    changes: each such change shows in the next view, a status update called irrelevant too."""
    state = ClusterState()
    state.put(Kind.NODE, "a", Node.parse(node("a")))
    for name in ("web-0", "web-1"):
        p = Pod.parse(pod(name, node_name="a", labels={"app": "web"}))
        state.put(Kind.POD, p.key, p)
    budget = PodDisruptionBudget.parse(pdb("web", {"app": "web"}, min_available=1))
    state.put(Kind.PDB, budget.key, budget)
    assert [(b.key, b.allowed) for b in state.view().budgets] == [("default/web", 1)]
    assert [(b.key, b.allowed) for b in state.view().budgets] == [("default/web", 1)]
    third = Pod.parse(pod("web-2", node_name="a", labels={"app": "web"}))
    state.put(Kind.POD, third.key, third)
    assert [b.allowed for b in state.view().budgets] == [2]
    state.delete(Kind.POD, "default/web-0")
    state.delete(Kind.POD, "default/web-1")
    assert [b.allowed for b in state.view().budgets] == [0]
    reported = PodDisruptionBudget.parse(pdb("web", {"app": "web"}, min_available=1, allowed=5))
    state.put(Kind.PDB, reported.key, reported, relevant=False)
    assert [b.allowed for b in state.view().budgets] == [5]
