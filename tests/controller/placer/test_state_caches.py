"""What `ClusterState` keeps from one cycle to the next goes stale when it must, and no later.

Each test changes one object after a cycle has read the kept value, then checks that the next
cycle decides from the new object: it fails if the matching invalidation is taken out.
"""

from __future__ import annotations

from typing import Any

from placer_objects import node, pdb, pod, priority_class

from controller.placer.cluster import ClusterState, Kind
from controller.placer.cycle import CyclePlan, GangTiming, SchedulingCycle
from controller.placer.scenario import cluster_state, load_scenario
from translations.core import PodDisruptionBudget

Obj = dict[str, Any]
SERVED = ("topobridge",)
CLASSES = [priority_class("high", 1000), priority_class("mid", 500), priority_class("low", 100)]


def _running(name: str, node_name: str, cls: str, **kw: Any) -> Obj:
    return pod(name, node_name=node_name, priority_class=cls, scheduler="default-scheduler", **kw)


def _cycle(state: ClusterState) -> CyclePlan:
    return SchedulingCycle(state.view(), served=SERVED, now=0.0, timing=GangTiming()).run()


def test_a_budget_arriving_later_covers_pods_recorded_as_covered_by_none() -> None:
    """The state records "no budget covers this pod" (so preemption does not match every pod
    against every budget); a budget put afterwards must be counted by the next plan."""
    objs = [node("a"), node("b"), *CLASSES]
    objs += [_running("web", "a", "low", labels={"app": "web"}), _running("batch", "b", "mid")]
    state = cluster_state(load_scenario(objs))
    view = state.view()
    assert view.snapshot.budget_hits == {"default/web": (), "default/batch": ()}
    budget = PodDisruptionBudget.parse(pdb("keep-web", {"app": "web"}, allowed=0))
    state.put(Kind.PDB, budget.key, budget)
    new = load_scenario([pod("new", priority_class="high", scheduler="topobridge")]).pods[0]
    state.put(Kind.POD, new.key, new)
    plan = _cycle(state)
    assert [(v.pod, p.plan.cost) for p in plan.preemptions for v in p.plan.victims] == [
        ("default/batch", (0, 500, 1))
    ]


def test_request_rows_are_shared_per_index_and_follow_a_new_resource_axis() -> None:
    """Pods asking the same share one read-only row; a node bringing a new resource builds a
    new index, and the rows are made again on its axis (the GPU counted from then on)."""
    objs = [node("a"), _running("p", "a", "low", gpu="1"), _running("q", "a", "low", gpu="1")]
    state = cluster_state(load_scenario(objs))
    snap = state.view().snapshot
    p, q = snap.pods["default/p"], snap.pods["default/q"]
    assert p.req is q.req and not p.req.flags.writeable
    assert "nvidia.com/gpu" not in snap.index.resources and int(snap.used.sum()) == int((p.req * 2).sum())
    state.put(Kind.NODE, "b", load_scenario([node("b", gpu="8")]).nodes[0])
    snap = state.view().snapshot
    gpu = snap.index.res_pos["nvidia.com/gpu"]
    assert len(snap.pods["default/p"].req) == len(snap.index.resources)
    assert int(snap.used[snap.index.node_pos["a"], gpu]) == 2
