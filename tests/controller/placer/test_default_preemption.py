"""The DefaultPreemption plugin owns the wait for its own victims (kube's
`PodEligibleToPreemptOthers`): a gang nominated by an earlier preemption waits while those
victims terminate, and a profile without the plugin never waits for them."""

from __future__ import annotations

from placer_objects import demo_objects

from controller.placer.budgets import budgets_from
from controller.placer.engine import schedule
from controller.placer.framework import Code, Step
from controller.placer.plugins import default_profile
from controller.placer.plugins.default_preemption import NOT_ELIGIBLE_TERMINATING, DefaultPreemption
from controller.placer.scenario import load_scenario, prepare

GANG = "default/high-priority-training"


def _victim_terminating() -> list[dict[str, object]]:
    """The seed's example 2 after its plan: the victim terminating, the gang nominated."""
    objs = [dict(o) for o in demo_objects("example-2")]
    for o in objs:
        name = o["metadata"]["name"]  # type: ignore[index]
        if name == "low-priority-pod-5":
            o["metadata"] = {**o["metadata"], "deletionTimestamp": "2025-10-23T07:35:30Z"}  # type: ignore[dict-item]
        if name.startswith("hp-training-pod-"):
            o["status"] = {"nominatedNodeName": f"node-{5 + int(name[-1])}"}
    return objs


def test_the_plugin_says_the_gang_waits_for_its_terminating_victims() -> None:
    sc = load_scenario(_victim_terminating())
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == GANG)
    status = DefaultPreemption().victims_terminating(gang, prep.snapshot)
    assert status is not None
    assert status.code is Code.WAITING_FOR_VICTIMS
    assert status.reasons == (NOT_ELIGIBLE_TERMINATING,) and status.plugin == "DefaultPreemption"
    # Before the victim terminates (no deletionTimestamp) there is nothing to wait for.
    fresh = load_scenario(demo_objects("example-2"))
    before = prepare(fresh)
    assert (
        DefaultPreemption().victims_terminating(
            next(g for g in before.gangs(fresh) if g.name == GANG), before.snapshot
        )
        is None
    )


def test_the_wait_is_the_plugins_verdict_and_absent_without_it() -> None:
    sc = load_scenario(_victim_terminating())
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == GANG)
    budgets = budgets_from(sc.pdbs, prep.snapshot)
    waits = schedule(gang, prep.snapshot, budgets=budgets)
    assert waits.code is Code.WAITING_FOR_VICTIMS and waits.step is Step.POST_FILTER
    assert waits.plugin == "DefaultPreemption" and waits.plan is None
    # Preemption switched off: no plugin owns a wait, the gang is simply unschedulable.
    off = default_profile(preemption=False)
    plain = schedule(gang, prep.snapshot, budgets=budgets, profile=off)
    assert plain.code is Code.UNSCHEDULABLE
    assert "preemption is switched off." in plain.message
