"""The work a cycle does for a gang that just arrived, counted in calls (its time is measured in
benchmarks/placer.py: a 1,024-pod gang at 10,000 and 65,000 nodes).

Discovering the gang sorts its members into rank order, and reserving its placement makes a
record per placed pod. Both are per member; what each member costs must not include work that
is the same for every member (a request row per pod of one shape) or that only breaks ties no
member has (each member's name made into a natural sort key when every rank differs).
"""

from __future__ import annotations

from typing import Any

import pytest
from placer_objects import cnt, counting, koord_gang, members, pod, spine_block_nodes

from controller.placer import cycle as cycle_mod
from controller.placer.cluster import ClusterState, Kind
from controller.placer.cycle import GangTiming, SchedulingCycle
from controller.placer.scenario import cluster_state, load_scenario
from translations import gangs
from translations.core import Pod

Obj = dict[str, Any]
SERVED = ("koord-scheduler",)
LAYOUT = {"spine-0": {"block-0": ["n0", "n1", "n2", "n3"], "block-1": ["n4", "n5", "n6", "n7"]}}
GANG = "koordinator:default/train"
SIZE = 16


def _state(extra: list[Obj] | None = None) -> ClusterState:
    objects = [
        *spine_block_nodes(LAYOUT, cpu="16"),
        cnt(),
        koord_gang("train", SIZE),
        *members("train", SIZE, cpu="2", memory="1Gi"),
        *(extra or []),
    ]
    return cluster_state(load_scenario(objects))


def test_reserve_reads_one_request_row_per_shape_not_per_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    state = _state()
    rows = counting(monkeypatch, cycle_mod, "request_vector")
    plan = SchedulingCycle(state.view(), served=SERVED, now=0.0, timing=GangTiming()).run()
    assert [b.gang for b in plan.binds] == [GANG] and len(plan.binds[0].pods) == SIZE
    assert len(rows) == 1  # every member asks the same: one row for the sixteen


def test_the_records_reserve_makes_are_the_ones_the_state_makes_from_the_binds() -> None:
    state = _state()
    view = state.view()
    plan = SchedulingCycle(view, served=SERVED, now=0.0, timing=GangTiming()).run()
    reserved = {key: view.snapshot.pods[key] for key, _ in plan.binds[0].pods}
    for key, node in plan.binds[0].pods:
        stored = state.pods[key]
        bound = stored.model_copy(update={"spec": stored.spec.model_copy(update={"node_name": node})})
        state.put(Kind.POD, key, bound)
    seen = state.view().snapshot.pods
    for key, record in reserved.items():
        assert record == seen[key], key
        assert record.req.tolist() == seen[key].req.tolist()


def _ranked(ranks: list[int | None]) -> list[Pod]:
    out = []
    for i, rank in enumerate(ranks):
        raw = pod(f"m-{i}", labels={"pod-group.scheduling.sigs.k8s.io": "g"}, index=rank)
        out.append(Pod.parse(raw))
    return out


def test_members_of_distinct_ranks_are_ordered_without_their_names_sort_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = counting(monkeypatch, gangs, "_rank_key")
    ranks: list[int | None] = [5, 3, 11, 0, 7, 1]
    (gang,) = gangs.discover_gangs(_ranked(ranks))
    assert [m.rank for m in gang.pods] == sorted(r for r in ranks if r is not None)
    assert keys == []


@pytest.mark.parametrize(
    "ranks",
    [
        [2, None, 2, 0, None],  # a tie, and unranked members after the ranked ones
        [None, None, None],
        [1, 1],
    ],
)
def test_members_with_tied_or_missing_ranks_keep_rank_then_name_order(ranks: list[int | None]) -> None:
    pods = _ranked(ranks)
    (gang,) = gangs.discover_gangs(list(reversed(pods)))
    expected = sorted(pods, key=lambda p: gangs._rank_key(gangs._rank(p), p.key))
    assert [m.key for m in gang.pods] == [p.key for p in expected]
