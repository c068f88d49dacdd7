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
