"""What keeps a cycle's cost from growing with the cluster gives the answers the plain way gives.

Each shortcut is checked against the computation it stands in for, on inputs made to hit its
edges (ties on every key, limits around the sizes where it switches to the plain way); the
garbage collector a view holds off is back on however the view ends.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.placer.cluster import ClusterState, ClusterView
from controller.placer.snapshot import I64, SortKey, lexsort_first


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
