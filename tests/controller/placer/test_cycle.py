"""The scheduling cycle's phases and the rules both runners share (pure, no server)."""

from __future__ import annotations

from typing import Any

from placer_objects import cnt, hypernode, koord_gang, members, node, pod, run, spine_block_nodes

from controller.placer.cluster import ClusterState, Kind, topology_tree
from controller.placer.cycle import GangTiming, SchedulingCycle
from controller.placer.framework import Code, Step
from controller.placer.scenario import cluster_state, load_scenario
from translations import hypernodes as hntr
from translations import koordinator_to_volcano as k2v
from translations import volcano
from translations.core import Node

Obj = dict[str, Any]
SERVED = ("koord-scheduler", "topobridge", "volcano")
LAYOUT = {"spine-0": {"block-0": ["n0", "n1"], "block-1": ["n2", "n3"]}}


def _state(objects: list[Obj]) -> ClusterState:
    return cluster_state(load_scenario(objects))


def test_permit_holds_an_assembling_gang_silently_until_the_grace_is_over() -> None:
    state = _state([*spine_block_nodes(LAYOUT), cnt(), koord_gang("gang", 4), *members("gang", 2)])
    timing = GangTiming()
    early = SchedulingCycle(state.view(), served=SERVED, now=100.0, timing=timing, assembly_grace=10.0).run()
    held = early.outcomes["koordinator:default/gang"]
    assert (held.code, held.step, held.report) == (Code.ASSEMBLING, Step.PERMIT, False)
    assert early.waiting == ["koordinator:default/gang"] and not early.binds
    late = SchedulingCycle(state.view(), served=SERVED, now=110.0, timing=timing, assembly_grace=10.0).run()
    told = late.outcomes["koordinator:default/gang"]
    assert told.code is Code.UNRESOLVABLE and told.report
    assert told.message == "gang default/gang has 2 pod(s), fewer than its minMember 4"
    assert set(told.pod_messages) == {"default/gang-0", "default/gang-1"}


def test_reserve_makes_later_gangs_of_the_same_cycle_see_the_room_taken() -> None:
    objects = [
        *spine_block_nodes(LAYOUT),
        cnt(),
        koord_gang("first", 4),
        *members("first", 4, priority=10),
        koord_gang("second", 4),
        *members("second", 4, priority=5),
    ]
    plan = SchedulingCycle(_state(objects).view(), served=SERVED, now=0.0, timing=GangTiming()).run()
    assert [b.gang for b in plan.binds] == ["koordinator:default/first"]
    second = plan.outcomes["koordinator:default/second"]
    assert second.code is Code.UNRESOLVABLE and "4 Insufficient cpu" in second.message
    assert list(plan.outcomes) == [
        "koordinator:default/first",
        "koordinator:default/second",
    ]  # queue order: priority


def test_the_same_inputs_give_the_same_plan() -> None:
    objects = [*spine_block_nodes(LAYOUT), cnt(), koord_gang("g", 3), *members("g", 3, cpu="4")]
    a = SchedulingCycle(_state(objects).view(), served=SERVED, now=0.0, timing=GangTiming()).run()
    b = SchedulingCycle(_state(objects).view(), served=SERVED, now=0.0, timing=GangTiming()).run()
    assert a == b and a.binds


def test_unreserve_gives_the_room_back_and_a_failed_bind_backs_off() -> None:
    objects = [*spine_block_nodes(LAYOUT), cnt(), koord_gang("g", 4), *members("g", 4)]
    view = _state(objects).view()
    free_before = view.snapshot.free().copy()
    cycle = SchedulingCycle(view, served=SERVED, now=0.0, timing=GangTiming())
    gang = cycle.queue()[0]
    cycle.attempt(gang)
    assert cycle.plan.binds and (view.snapshot.free() != free_before).any()
    cycle.unreserve(gang)
    cycle.unreserve(gang)  # idempotent
    assert not cycle.plan.binds and (view.snapshot.free() == free_before).all()
    timing = GangTiming()
    timing.bind_failed("koordinator:default/g", 50.0)
    assert SchedulingCycle(view, served=SERVED, now=50.2, timing=timing).queue() == []
    assert [g.key for g in SchedulingCycle(view, served=SERVED, now=50.6, timing=timing).queue()] == [
        "koordinator:default/g"
    ]


def test_a_bound_pod_asking_for_an_unknown_resource_still_holds_its_cpu() -> None:
    objects = [
        node("n0", cpu="8"),
        pod("odd", cpu="6", node_name="n0", scheduler="other"),
        pod("new", cpu="4"),
        pod("foo", cpu="1"),
    ]
    objects[1]["spec"]["containers"][0]["resources"]["requests"]["example.com/foo"] = "1"
    objects[3]["spec"]["containers"][0]["resources"]["requests"]["example.com/foo"] = "1"
    view = _state(objects).view()
    assert view.snapshot.pods["default/odd"].req[view.index.res_pos["cpu"]] == 6000
    plan = SchedulingCycle(view, served=SERVED, now=0.0, timing=GangTiming()).run()
    assert "1 Insufficient cpu" in plan.outcomes["pod:default/new"].message  # 2 CPU left, not 4
    foo = plan.outcomes["pod:default/foo"]
    assert (foo.code, foo.message) == (
        Code.UNRESOLVABLE,
        "0/1 nodes are available: 1 Insufficient example.com/foo.",
    )


def test_hypernodes_translated_from_the_cnt_leave_the_cnt_in_charge() -> None:
    nodes = [Node.parse(n) for n in spine_block_nodes(LAYOUT)]
    from translations import koordinator as koord

    default = koord.ClusterNetworkTopology.parse(cnt())
    translated = volcano.HyperNode.parse(hypernode("t", 1, [("Node", "n0"), ("Node", "n1")]))
    translated.metadata.labels = {hntr.MANAGED_BY_LABEL: hntr.MANAGED_BY, hntr.SOURCE_LABEL: "koordinator"}
    foreign = volcano.HyperNode.parse(hypernode("f", 1, [("Node", "n2"), ("Node", "n3")]))
    assert topology_tree(nodes, [translated], default).source == topology_tree(nodes, [], default).source
    assert (
        topology_tree(nodes, [translated, foreign], default).source
        != topology_tree(nodes, [], default).source
    )
    assert topology_tree(nodes, [translated], None).source == topology_tree(nodes, [foreign], None).source


def test_an_assumed_pod_is_bound_on_its_node_until_forgotten() -> None:
    state = _state([node("n0", cpu="8"), pod("a", cpu="6")])
    assert state.view().pending == ["pod:default/a"]
    state.assume("default/a", "n0")
    view = state.view()
    assert view.pending == [] and view.snapshot.pods["default/a"].node == 0
    state.forget("default/a")
    assert state.view().pending == ["pod:default/a"] and "default/a" not in state.view().snapshot.pods
    bound = state.pods["default/a"].model_copy(deep=True)
    bound.spec.node_name = "n0"
    state.assume("default/a", "n0")
    state.put(Kind.POD, "default/a", bound)
    assert state.assumed == {}  # the binding is visible now


def test_a_gang_that_waited_its_timeout_lets_go_and_requeues_with_backoff() -> None:
    """scheduleTimeoutSeconds 30: at 30 s the gang expires (nominations released, the plan says
    so), backs off one second, then waits a fresh 30 s; a Koordinator gang without one waits 300 s."""
    timed = koord_gang("timed", 2)
    timed["spec"]["scheduleTimeoutSeconds"] = 30
    objects = [
        *spine_block_nodes(LAYOUT),
        cnt(),
        timed,
        *members("timed", 2, node_selector={"pool": "none"}),
        koord_gang("plain", 2),
        *members("plain", 2, node_selector={"pool": "none"}),
    ]
    state = _state(objects)
    timing = GangTiming()
    first = SchedulingCycle(state.view(), served=SERVED, now=0.0, timing=timing).run()
    assert first.expiries == [] and first.outcomes["koordinator:default/timed"].code is Code.UNRESOLVABLE
    view = state.view()
    fired = SchedulingCycle(view, served=SERVED, now=30.0, timing=timing).run()
    assert [e.gang for e in fired.expiries] == ["koordinator:default/timed"]
    outcome = fired.outcomes["koordinator:default/timed"]
    assert (outcome.code, outcome.step) == (Code.UNSCHEDULABLE, Step.PERMIT)
    assert outcome.message == (
        "gang default/timed waited 30s without starting (timeout 30s): its reservations and "
        "nominations are released; it is tried again in 1s"
    )
    assert outcome.pod_messages["default/timed-0"] == outcome.message
    assert not any(n.gang == "koordinator:default/timed" for n in view.snapshot.nominations.values())
    # Nothing the plain gang depends on changed, and its timeout is not due: it waits.
    assert "koordinator:default/plain" not in fired.outcomes
    backing_off = SchedulingCycle(state.view(), served=SERVED, now=30.5, timing=timing)
    assert [g.key for g in backing_off.queue()] == []
    again = SchedulingCycle(state.view(), served=SERVED, now=31.0, timing=timing).run()
    assert again.expiries == [] and "koordinator:default/timed" in again.outcomes
    later = SchedulingCycle(state.view(), served=SERVED, now=300.0, timing=timing).run()
    assert sorted(e.gang for e in later.expiries) == [
        "koordinator:default/plain",
        "koordinator:default/timed",
    ]
    assert [e.retry_after for e in later.expiries if e.gang == "koordinator:default/timed"] == [2.0]


def test_a_budget_spent_by_an_earlier_gang_of_the_cycle_is_spent_for_the_next() -> None:
    """Two gangs preempt in one cycle; the budget over `web` allows one disruption. The first
    gang takes it; the second must not evict the other `web` pod as if it were still free, but
    pick the dearer victim that breaks no budget."""
    high = {"priority": 1000, "cpu": "8", "memory": "8Gi"}

    def victim(name: str, on: str, priority: int, labels: dict[str, str]) -> Obj:
        return pod(name, node_name=on, priority=priority, scheduler="default-scheduler", labels=labels)

    objects = [
        node("a"),
        node("b"),
        node("c"),
        victim("web-0", "a", 100, {"app": "web"}),
        victim("web-1", "b", 100, {"app": "web"}),
        victim("batch", "c", 500, {"app": "batch"}),
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1},
        },
        koord_gang("first", 1),
        *members("first", 1, **high),
        koord_gang("second", 1),
        *members("second", 1, **high),
    ]
    plan = SchedulingCycle(_state(objects).view(), served=SERVED, now=0.0, timing=GangTiming()).run()
    assert [p.gang for p in plan.preemptions] == ["koordinator:default/first", "koordinator:default/second"]
    first, second = (tuple(v.pod for v in p.plan.victims) for p in plan.preemptions)
    assert first == ("default/web-0",)
    assert second == ("default/batch",), second
    assert plan.preemptions[1].plan.cost[0] == 0


def test_a_koordinator_gang_is_placed_the_same_once_translated_for_volcano() -> None:
    """The controller translates a Koordinator gang for Volcano (a PodGroup, an annotation on
    each member) while the scheduler may be placing it: the translation landing first must not
    change where the gang goes (it did: Volcano's HyperNode-first order chose another node)."""
    small, busy = {"n2": "4"}, {"n0": "500m", "n1": "2500m"}
    nodes = spine_block_nodes(LAYOUT)
    for n in nodes:
        n["status"]["allocatable"]["cpu"] = small.get(n["metadata"]["name"], "8")
    running = [pod(f"on-{n}", cpu=c, memory="1Gi", node_name=n) for n, c in busy.items()]
    gang = koord_gang("gang", 1, gather=[("SpineLayer", "MustGather")])
    pods = members("gang", 2, cpu="1", memory="1Gi")
    before = run([*nodes, cnt(), *running, gang, *pods])

    sc = load_scenario([*nodes, cnt(), gang, *pods])
    (made,) = k2v.translate_all(sc.podgroups.koordinator, sc.pods, cnt=sc.cnt)
    for p in pods:
        patch = next(x for x in made.pod_patches if x.name == p["metadata"]["name"])
        p["metadata"]["annotations"].update(patch.annotations)
        p["metadata"].setdefault("labels", {}).update(patch.labels)
    translated = made.pod_group.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert all(volcano.GROUP_NAME_ANNOTATION in p["metadata"]["annotations"] for p in pods)
    after = run([*nodes, cnt(), *running, gang, translated, *pods])

    assert before.bound == after.bound == {"default/gang-0": "n2", "default/gang-1": "n2"}


def test_added_for_names_only_what_the_gang_just_attempted_added() -> None:
    objects = [*spine_block_nodes(LAYOUT), cnt(), koord_gang("a", 1), *members("a", 1)]
    objects += [koord_gang("big", 1), *members("big", 1, cpu="64")]
    cycle = SchedulingCycle(_state(objects).view(), served=SERVED, now=0.0, timing=GangTiming())
    seen = {}
    for gang in cycle.queue():
        cycle.attempt(gang)
        seen[gang.key] = cycle.plan.added_for(gang.key)
    assert list(seen) == ["koordinator:default/a", "koordinator:default/big"]
    bind, preemption, fired = seen["koordinator:default/a"]
    assert bind is not None and bind.gang == "koordinator:default/a" and preemption is None and fired is None
    assert seen["koordinator:default/big"] == (None, None, None)


def test_a_nominated_gang_takes_its_node_when_what_it_asks_for_is_free() -> None:
    """As kube's NodeResourcesFit: only the resources a pod asks for must fit. Node `a` is short
    of GPUs (a higher-priority pod nominated there waits for a terminating one), yet the
    CPU-only gang nominated to `a` still takes it, not the tighter node `b`."""

    def pending(name: str, priority: int, gpu: str | None, on: str) -> Obj:
        obj = pod(name, cpu="1", memory="1Gi", gpu=gpu, priority=priority, scheduler="default-scheduler")
        obj["status"] = {"nominatedNodeName": on}
        return obj

    going = pod("going", cpu="1", memory="1Gi", gpu="1", node_name="a", priority=700, scheduler="x")
    going["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    objects = [
        node("a", cpu="8", gpu="1"),
        node("b", cpu="1", gpu="1"),
        going,
        pending("gpu-waiter", 1000, "1", "a"),
        koord_gang("cpu", 1),
        *[
            {**m, "status": {"nominatedNodeName": "a"}}
            for m in members("cpu", 1, cpu="1", memory="1Gi", priority=600)
        ],
    ]
    plan = SchedulingCycle(_state(objects).view(), served=SERVED, now=0.0, timing=GangTiming()).run()
    assert [b.pods for b in plan.binds] == [(("default/cpu-0", "a"),)], plan.outcomes
