"""The seed documents' worked examples reproduce exactly, and the preemption guarantees hold."""

from __future__ import annotations

from placer_objects import (
    attempt,
    cnt,
    demo_objects,
    koord_gang,
    members,
    node,
    pod,
    priority_class,
    run,
    spine_block_nodes,
)

from controller.placer.framework import Code, Step

SEED = {
    "spine-0": {"block-0": ["node-0", "node-1", "node-2"], "block-1": ["node-3", "node-4"]},
    "spine-1": {"block-2": ["node-5", "node-6"], "block-3": ["node-7", "node-8"]},
    "spine-2": {"block-4": ["node-9", "node-10", "node-11"]},
}
WAITING_EXAMPLE_2 = (
    "0/12 nodes are available: no candidate topology nodes can accommodate job, desiredOfferSlot: 4, "
    "topology topologyNode SpineLayer/spine-0: 3;topology topologyNode SpineLayer/spine-1: 3;"
    "topology topologyNode SpineLayer/spine-2: 3. "
    "preemption: not eligible due to terminating pod on the nominated node.."
)


def test_example_1_prefer_gather_binpacks_into_spine_1() -> None:
    result = run(demo_objects("example-1"))
    assert result.contract() == {
        "bound": {f"default/training-pod-{i}": f"node-{5 + i}" for i in range(4)},
        "nominated": {},
        "evicted": [],
        "unschedulable": {},
        "gangs": {"koordinator:default/topology-demo-job": {"domain": "SpineLayer/spine-1", "tier": 2}},
    }


def test_example_2_must_gather_preempts_only_pod_5() -> None:
    result = run(demo_objects("example-2"))
    hp = {f"default/hp-training-pod-{i}": f"node-{5 + i}" for i in range(4)}
    assert result.contract() == {
        "bound": hp,
        "nominated": hp,
        "evicted": ["default/low-priority-pod-5"],
        "unschedulable": {},
        "gangs": {"koordinator:default/high-priority-training": {"domain": "SpineLayer/spine-1", "tier": 2}},
    }
    assert result.waiting["koordinator:default/high-priority-training"] == WAITING_EXAMPLE_2
    assert dict(result.conditions["default/low-priority-pod-5"]) == {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "koord-scheduler: preempting to accommodate higher priority pods, "
        "preemptor: default/high-priority-training, triggerpod: default/hp-training-pod-0",
    }
    # The other low-priority pods are untouched.
    assert result.final_pods["default/low-priority-pod-0"] == "node-0"
    assert result.final_pods["default/low-priority-pod-1"] == "node-1"


def test_example_2_engine_steps_plan_then_wait_then_bind() -> None:
    """The engine's own view: a plan (Wait), the waiting message while the victim terminates."""
    objs = demo_objects("example-2")
    first = attempt(objs, "default/high-priority-training")
    assert first.code is Code.WAITING_FOR_VICTIMS and first.step is Step.POST_FILTER
    assert first.plan is not None
    assert [v.pod for v in first.plan.victims] == ["default/low-priority-pod-5"]
    assert first.plan.domain == "SpineLayer/spine-1"
    assert first.plan.cost == (0, 1000, 1)
    assert first.plan.optimal
    assert dict(first.plan.nominated) == {f"default/hp-training-pod-{i}": f"node-{5 + i}" for i in range(4)}
    assert first.message == WAITING_EXAMPLE_2
    # While the victim terminates (deletionTimestamp set) and the gang is nominated, it waits.
    waiting = [dict(o) for o in objs]
    for o in waiting:
        if o["metadata"]["name"] == "low-priority-pod-5":
            o["metadata"]["deletionTimestamp"] = "2025-10-23T07:35:30Z"
        if o["metadata"]["name"].startswith("hp-training-pod-"):
            o["status"] = {"nominatedNodeName": f"node-{5 + int(o['metadata']['name'][-1])}"}
    again = attempt(waiting, "default/high-priority-training")
    assert again.code is Code.WAITING_FOR_VICTIMS and again.plan is None
    assert again.message == WAITING_EXAMPLE_2


def test_job_level_preemption_evicts_both_low_pods() -> None:
    result = run(demo_objects("job-level-preemption"))
    assert result.contract()["evicted"] == ["default/lp-pod-1", "default/lp-pod-2"]
    assert result.contract()["bound"] == {
        "default/hp-worker-1": "cn-beijing.1",
        "default/hp-worker-2": "cn-beijing.2",
    }
    assert result.conditions["default/lp-pod-1"]["message"] == (
        "koord-scheduler: preempting to accommodate higher priority pods, "
        "preemptor: default/hp-training-job, triggerpod: default/hp-worker-1"
    )


def _example_2_with(**changes: object) -> list[dict[str, object]]:
    objs = demo_objects("example-2")
    for o in objs:
        if o["kind"] == "Pod" and o["metadata"]["name"].startswith("hp-"):
            o["spec"].update(changes)
    return objs


def test_preemption_policy_never_evicts_nothing() -> None:
    result = run(_example_2_with(preemptionPolicy="Never"))
    assert result.evicted == [] and result.bound == {}
    msg = result.unschedulable["koordinator:default/high-priority-training"]
    assert msg.endswith("preemption: not eligible due to preemptionPolicy=Never..")


def test_equal_priority_is_never_evicted() -> None:
    result = run(_example_2_with(priorityClassName="low-priority"))
    assert result.evicted == [] and result.bound == {}
    assert "koordinator:default/high-priority-training" in result.unschedulable


def test_infeasible_gang_evicts_nothing() -> None:
    """Six whole-node pods cannot gather in any spine even with every pod gone: no victims."""
    objs = demo_objects("example-2")
    objs = [o for o in objs if not (o["kind"] == "Pod" and o["metadata"]["name"].startswith("hp-"))]
    objs = [o for o in objs if o["kind"] != "PodGroup"]
    objs += [koord_gang("big", 6, gather=[("SpineLayer", "MustGather")])]
    objs += members("big", 6, priority_class="high-priority")
    result = run(objs)
    assert result.evicted == [] and result.bound == {}
    verdict = attempt(objs, "default/big")
    assert verdict.code is Code.UNRESOLVABLE
    assert "desiredOfferSlot: 6" in verdict.message


def test_cheapest_spine_is_the_one_with_the_lowest_priority_victims() -> None:
    """Both spines need one eviction; spine-0 can evict a lower priority than spine-1, so it
    wins although spine-1 would binpack better."""
    objs = [
        *spine_block_nodes(SEED),
        cnt(),
        priority_class("high", 1000000),
        priority_class("mid", 5000),
        priority_class("low", 1000),
    ]
    objs += [pod("a", node_name="node-0", priority_class="low", scheduler="default-scheduler")]
    objs += [pod("b", node_name="node-1", priority_class="mid", scheduler="default-scheduler")]
    objs += [pod("c", node_name="node-5", priority_class="mid", scheduler="default-scheduler")]
    objs += [
        koord_gang("g", 4, gather=[("SpineLayer", "MustGather")]),
        *members("g", 4, priority_class="high"),
    ]
    verdict = attempt(objs, "default/g")
    assert verdict.plan is not None
    assert [v.pod for v in verdict.plan.victims] == ["default/a"]
    assert verdict.plan.domain == "SpineLayer/spine-0"


def test_fewest_victims_when_priorities_tie() -> None:
    """spine-0 needs one eviction, spine-1 two; equal priorities, so spine-0 wins on the count
    although spine-1 would binpack better."""
    objs = [*spine_block_nodes(SEED), cnt(), priority_class("high", 1000000), priority_class("low", 1000)]
    objs += [
        pod(f"x{i}", node_name=n, priority_class="low", scheduler="default-scheduler")
        for i, n in enumerate(["node-0", "node-1", "node-5", "node-6"])
    ]
    objs += [
        koord_gang("g", 4, gather=[("SpineLayer", "MustGather")]),
        *members("g", 4, priority_class="high"),
    ]
    verdict = attempt(objs, "default/g")
    assert verdict.plan is not None
    assert len(verdict.plan.victims) == 1
    assert verdict.plan.domain == "SpineLayer/spine-0"


def test_node_without_pods_allocatable_gets_110() -> None:
    objs = [node("n", cpu="1000", memory="1000Gi", pods=None)]
    objs += [pod(f"p{i}", cpu="1", memory="1Mi", scheduler="topobridge") for i in range(112)]
    result = run(objs)
    assert len(result.bound) == 110
    assert len(result.unschedulable) == 2
