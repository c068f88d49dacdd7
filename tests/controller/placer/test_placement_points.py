"""The placement extension points (PlacementGenerate, PlacementScore, PlacementFeasible) and
the runner's bookkeeping around every point: the topology rules answer through the profile,
not from inside the selection; an error is reported at the point that raised it; Unreserve
runs on every rollback. Each case runs the real cycle or attempt; failures are injected at a
plugin of the default profile."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
from placer_objects import (
    Obj,
    cnt,
    hypernode,
    koord_gang,
    members,
    node,
    pod,
    spine_block_nodes,
    volcano_gang,
)

from controller.placer.cycle import CycleOptions, GangTiming, SchedulingCycle
from controller.placer.demand import Chosen, Level, OfferCounts
from controller.placer.engine import demand_of, schedule
from controller.placer.filtering import shape_classes
from controller.placer.framework import I64, Code, CycleState, PermitInput, PlacementRequest, default_profile
from controller.placer.plugins import gpu_topology
from controller.placer.plugins.coscheduling import Coscheduling
from controller.placer.plugins.gpu_topology import Gpu
from controller.placer.plugins.network_topology import NODE_PLACES, NetworkTopology
from controller.placer.plugins.node_resources_fit import NodeResourcesFit
from controller.placer.plugins.taint_toleration import TaintToleration
from controller.placer.scenario import cluster_state, load_scenario, prepare

SERVED = ("koord-scheduler", "topobridge")
PLACER = Path(__file__).resolve().parents[3] / "controller" / "placer"


class Boom(RuntimeError):
    pass


def _boom(*args: Any, **kw: Any) -> Any:
    raise Boom("injected")


def _gang_of_two() -> list[Obj]:
    layout = {"spine-0": {"block-0": ["n0", "n1"], "block-1": ["n2", "n3"]}}
    return [*spine_block_nodes(layout), cnt(), koord_gang("job", 2), *members("job", 2, cpu="2")]


def _outcome(objects: list[Obj]) -> Any:
    view = cluster_state(load_scenario(objects)).view()
    plan = SchedulingCycle(view, served=SERVED, now=0.0, timing=GangTiming()).run()
    return plan.outcomes["koordinator:default/job"]


def test_a_score_plugin_that_raises_is_reported_at_score(monkeypatch: pytest.MonkeyPatch) -> None:
    """Score never stamped its step: the error read "failed at Filter"."""
    monkeypatch.setattr(TaintToleration, "score", _boom)
    out = _outcome(_gang_of_two())
    assert out.code is Code.ERROR
    assert out.message.startswith("scheduling gang default/job failed at Score:")


def test_a_placement_generate_plugin_that_raises_is_reported_at_its_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The levels are NetworkTopology's PlacementGenerate; they used to be the selection's own."""
    monkeypatch.setattr(NetworkTopology, "generate", _boom)
    out = _outcome(_gang_of_two())
    assert out.code is Code.ERROR
    assert out.message.startswith("scheduling gang default/job failed at PlacementGenerate:")


def test_unreserve_runs_when_an_attempt_is_rolled_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure comes at Reserve, after the gang was placed: every Reserve plugin's Unreserve
    runs (it was never called)."""
    undone: list[str] = []
    monkeypatch.setattr(gpu_topology, "rank_annotations", _boom)
    monkeypatch.setattr(Gpu, "unreserve", lambda self, gang: undone.append(gang.key))
    out = _outcome(_gang_of_two())
    assert out.code is Code.ERROR and "failed at Reserve" in out.message
    assert undone == ["koordinator:default/job"]


class _SingleNodesOnly:
    """A PlacementGenerate plugin of the test's own: only single nodes are candidates."""

    name: ClassVar[str] = "SingleNodesOnly"

    def generate(self, request: PlacementRequest, parent: Sequence[Level]) -> list[Level]:
        return [lv for lv in parent if lv == 0]

    def node_set(self, request: PlacementRequest, free: I64, levels: Sequence[Level]) -> Chosen | None:
        return None

    def unplaced(self, request: PlacementRequest, offers: OfferCounts) -> str | None:
        return None


def test_the_levels_a_gang_is_tried_at_come_from_the_profile() -> None:
    """Two pods, two nodes with room for one each: the default profile places the gang across
    both; a profile whose PlacementGenerate allows single nodes only finds no place."""
    objects = [node("a", cpu="3"), node("b", cpu="3")]
    objects += [pod(f"p{i}", cpu="2", scheduler="topobridge") for i in range(2)]
    objects = [*objects, koord_gang("job", 2)]
    for p in objects[2:4]:
        p["metadata"].setdefault("labels", {})["pod-group.scheduling.sigs.k8s.io"] = "job"
    sc = load_scenario(objects)
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == "default/job")
    base = default_profile()
    assert schedule(gang, prep.snapshot, profile=base).code is Code.SUCCESS
    narrow = replace(base, placement_generate=[_SingleNodesOnly(), *base.placement_generate])
    assert schedule(gang, prep.snapshot, profile=narrow).code is not Code.SUCCESS


def _placer_imports(module: str) -> set[str]:
    tree = ast.parse((PLACER / f"{module}.py").read_text())
    found: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("controller.placer."):
            found.add(n.module.removeprefix("controller.placer.").split(".")[0])
    return found


@pytest.mark.parametrize("module", ["cycle", "engine", "filtering", "select"])
def test_the_runner_names_no_plugin(module: str) -> None:
    """The import-linter contracts, as a test of the commit: the runner reaches the plugins only
    through the framework (the selection used to import the levels and the GPU rules, the
    engine the tiers and the GPU dialect's words)."""
    got = _placer_imports(module)
    assert "plugins" not in got or module == "engine"  # engine: DefaultPreemption's wait, moving
    if module != "filtering":  # filtering carries the GPU dialect's rules as data (GpuRules)
        assert not got & {"tiers", "gpu"}


def _never_fits() -> list[Obj]:
    layout = {"spine-0": {"block-0": ["n0", "n1"]}}
    return [
        *spine_block_nodes(layout),
        cnt(),
        koord_gang("job", 2),
        *members("job", 2, node_selector={"pool": "x"}),
    ]


def test_coscheduling_permit_decides_the_gang_timeout() -> None:
    """The timeout used to be the cycle's own check; it is Coscheduling's Permit answer now."""
    sc = load_scenario(_never_fits())
    gang = next(g for g in prepare(sc).gangs(sc) if g.name == "default/job")
    early = Coscheduling().permit(
        PermitInput(gang, now=399.0, first_seen=100.0, failures=0, assembly_grace=0.0)
    )
    assert early.expiry is None and early.status.ok
    late = Coscheduling().permit(
        PermitInput(gang, now=400.0, first_seen=100.0, failures=2, assembly_grace=0.0)
    )
    assert late.expiry is not None and late.expiry.retry_after == 4.0
    assert late.status.code is Code.UNSCHEDULABLE and late.status.plugin == "Coscheduling"


def _expiries(now: float) -> list[str]:
    timing = GangTiming()
    timing.first_seen["koordinator:default/job"] = 100.0
    view = cluster_state(load_scenario(_never_fits())).view()
    plan = SchedulingCycle(view, served=SERVED, now=now, timing=timing).run()
    return [e.gang for e in plan.expiries]


def test_a_profile_without_permit_plugins_never_times_a_gang_out(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _expiries(400.0) == ["koordinator:default/job"]
    no_permit = replace(default_profile(), permit=[])
    monkeypatch.setattr(CycleOptions, "profile", property(lambda self: no_permit))
    assert _expiries(400.0) == []


def test_node_resources_fit_says_too_many_pods_as_kube_does() -> None:
    """A node whose pod count is full: kube's NodeResourcesFit says "Too many pods" (the
    message said "Insufficient pods"), and its FilterRoom answers the node is out for that."""
    objects = [
        node("a", pods="1"),
        pod("old", cpu="1", memory="1Gi", node_name="a"),
        pod("new", cpu="1", memory="1Gi", scheduler="topobridge"),
    ]
    sc = load_scenario(objects)
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == "default/new")
    verdict = schedule(gang, prep.snapshot)
    assert verdict.code is not Code.SUCCESS
    assert "1 Too many pods" in verdict.message and "Insufficient pods" not in verdict.message
    state = CycleState()
    (cls,), _ = shape_classes(gang.pending, prep.snapshot)
    cuts = NodeResourcesFit().room(state, cls, prep.snapshot, prep.snapshot.free())
    assert [(reason, ok.tolist()) for reason, ok in cuts if not ok.all()] == [("Too many pods", [False])]


def test_a_volcano_gang_above_tier_zero_is_never_given_a_lone_node_by_network_topology() -> None:
    """Volcano chooses a HyperNode first: that rule was the runner's (filtering), it is
    NetworkTopology's now (PreFilter writes it, PlacementGenerate reads it)."""
    nodes = [node("n0"), node("n1")]
    hns = [hypernode("r0", 1, [("Node", "n0"), ("Node", "n1")])]
    objects = [
        *nodes,
        *hns,
        volcano_gang("job", 1, mode="hard", tier=1),
        *members("job", 1, dialect="volcano", cpu="1"),
    ]
    sc = load_scenario(objects)
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == "default/job")
    state = CycleState()
    assert NetworkTopology().pre_filter(state, gang, gang.pending, prep.snapshot).ok
    assert state.read(NODE_PLACES) is False
    demand = demand_of(gang, prep.snapshot)
    assert demand.placing.levels(demand, prep.snapshot.index) == [1]
    verdict = schedule(gang, prep.snapshot)
    assert verdict.placement is not None and verdict.placement.chosen_tier == 1
