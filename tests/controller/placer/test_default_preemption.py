"""The DefaultPreemption plugin owns the wait for its own victims (kube's
`PodEligibleToPreemptOthers`): a gang nominated by an earlier preemption waits while those
victims terminate, and a profile without the plugin never waits for them."""

from __future__ import annotations

from typing import Any

from placer_objects import Obj, attempt, demo_objects, node, pod, priority_class, run

from controller.placer.budgets import budgets_from
from controller.placer.engine import schedule
from controller.placer.framework import Code, Step
from controller.placer.plugins import default_profile
from controller.placer.plugins.default_preemption import NOT_ELIGIBLE_TERMINATING, DefaultPreemption
from controller.placer.scenario import load_scenario, prepare
from controller.runtime import messages
from translations import volcano

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


def _low(name: str, **kw: Any) -> Obj:
    return pod(
        name, cpu="1", memory="1Gi", node_name="a", priority_class="low", scheduler="default-scheduler", **kw
    )


def test_volcano_preemptable_false_keeps_a_pod_from_ever_being_a_victim() -> None:
    """Volcano's `volcano.sh/preemptable: "false"` (annotation first, then label): such a pod is
    no candidate; the other one goes, and with only such pods in the way nothing helps."""
    classes = [priority_class("high", 1000), priority_class("low", 100)]
    new = pod("new", cpu="1", memory="1Gi", priority_class="high", scheduler="topobridge")
    keep = {"volcano.sh/preemptable": "false"}
    objs = [node("a", cpu="2"), *classes, _low("a-kept", labels=keep), _low("b-taken"), new]
    assert run(objs).evicted == ["default/b-taken"]
    # The annotation wins over the label.
    objs = [
        node("a", cpu="2"),
        *classes,
        _low("a-kept", annotations=keep, labels={"volcano.sh/preemptable": "true"}),
    ]
    objs += [_low("b-kept", labels=keep), new]
    verdict = attempt(objs, "default/new")
    assert verdict.plan is None and verdict.code is Code.UNRESOLVABLE
    assert run(objs).evicted == []


def test_volcano_preemptable_reads_as_go_parses_a_bool() -> None:
    assert volcano.preemptable(None, None)
    assert not volcano.preemptable({"volcano.sh/preemptable": "F"}, None)
    assert not volcano.preemptable(None, {"volcano.sh/preemptable": "0"})
    assert volcano.preemptable({"volcano.sh/preemptable": "TRUE"}, {"volcano.sh/preemptable": "false"})
    assert volcano.preemptable(None, {"volcano.sh/preemptable": "maybe"})


def test_a_preempting_gang_is_told_which_pods_go_and_why_those_first() -> None:
    """The plan's clause (`PreemptionPlan.describe`) leads the Preempting condition, so the cap
    never cuts it: the victims by name with priority and node, the count past three, and why
    that set."""
    objs = [node("a", cpu="4"), priority_class("high", 1000), priority_class("low", 100)]
    objs += [pod(f"low-{i}", cpu="1", node_name="a", priority_class="low", scheduler="x") for i in range(4)]
    objs.append(pod("new", cpu="4", priority_class="high", scheduler="topobridge"))
    verdict = attempt(objs, "default/new")
    assert verdict.plan is not None
    clause = verdict.plan.describe()
    assert clause == (
        "preempting 4 lower-priority pod(s) in a: default/low-0 (priority 100) on a, "
        "default/low-1 (priority 100) on a, default/low-2 (priority 100) on a and 1 more; "
        "the cheapest set that lets the whole gang fit there (no PodDisruptionBudget broken, "
        "highest victim priority 100, fewest pods)"
    )
    listing = ";".join(f"topology topologyNode AcceleratorLayer/nvl-{i}: {i % 7}" for i in range(20000))
    long = f"0/160000 nodes are available: {listing}. preemption: {NOT_ELIGIBLE_TERMINATING}."
    told = messages.preempting_message(long, clause)
    assert told.startswith(clause + ". 0/160000 nodes are available: ")
    assert len(told) <= messages.LIMIT
