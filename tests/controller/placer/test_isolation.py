"""No object stops the cycle: a gang whose attempt raises is that gang's `Error`, a bad object
while the view is built is left out with a warning (a slow preemption search stops at the
attempt's budget: `test_attempt_budget.py`). Each case runs the real cycle; the failures are
injected at the seams the placer owns (its engine call, its discovery call)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from placer_objects import Obj, cnt, koord_gang, members, node, pod, run, spine_block_nodes

from controller.placer import cluster as cluster_mod
from controller.placer import cycle as cycle_mod
from controller.placer.cycle import GangTiming, SchedulingCycle
from controller.placer.framework import Code
from controller.placer.plugins import gpu_topology
from controller.placer.scenario import cluster_state, load_scenario

SERVED = ("koord-scheduler", "topobridge")
LAYOUT = {"spine-0": {"block-0": ["n0", "n1"], "block-1": ["n2", "n3"]}}


def _two_gangs() -> list[Obj]:
    return [
        *spine_block_nodes(LAYOUT),
        cnt(),
        koord_gang("bad", 2),
        *members("bad", 2, cpu="2", priority=10),
        koord_gang("good", 2),
        *members("good", 2, cpu="2", priority=5),
    ]


class Boom(RuntimeError):
    pass


def test_a_gang_whose_attempt_raises_is_its_own_error_and_the_next_gang_is_placed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = cycle_mod.schedule

    def schedule_or_fail(gang: Any, *args: Any, **kw: Any) -> Any:
        if gang.name == "default/bad":
            raise Boom("x" * 5000)  # a huge text: the message quotes none of it
        return real(gang, *args, **kw)

    monkeypatch.setattr(cycle_mod, "schedule", schedule_or_fail)
    view = cluster_state(load_scenario(_two_gangs())).view()
    timing = GangTiming()
    plan = SchedulingCycle(view, served=SERVED, now=100.0, timing=timing).run()
    bad = plan.outcomes["koordinator:default/bad"]
    assert bad.code is Code.ERROR and isinstance(bad.exception, Boom)
    assert bad.message == (
        "scheduling gang default/bad failed at PreFilter: an unexpected Boom inside topobridge (a bug"
        " to report); retrying in 1s"
    )  # not the exception's own text: a user can act on none of it
    assert "Traceback" not in bad.message
    assert set(bad.pod_messages) == {"default/bad-0", "default/bad-1"}
    assert [b.gang for b in plan.binds] == ["koordinator:default/good"]
    # It backs off (1 s, then 2 s) while the others are attempted.
    queued = SchedulingCycle(
        cluster_state(load_scenario(_two_gangs())).view(), served=SERVED, now=100.5, timing=timing
    )
    assert "koordinator:default/bad" not in [g.key for g in queued.queue()]
    assert timing.errors == {"koordinator:default/bad": 1}


def test_what_a_failing_attempt_reserved_is_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure comes after the gang was reserved (at permit): its room and its place in the
    plan are given back, so the next gang sees the cluster as if it had never been attempted."""

    def annotate_or_fail(gang: Any, *args: Any, **kw: Any) -> Any:
        if gang.name == "default/bad":
            raise Boom("after reserve")
        return {}

    monkeypatch.setattr(gpu_topology, "rank_annotations", annotate_or_fail)
    objects = [node("n0", cpu="4"), pod("bad", cpu="3", scheduler="topobridge", priority=10)]
    objects += [pod("good", cpu="3", scheduler="topobridge", priority=5)]
    view = cluster_state(load_scenario(objects)).view()
    free = view.snapshot.free().copy()
    cycle = SchedulingCycle(view, served=SERVED, now=0.0, timing=GangTiming())
    first, second = cycle.queue()
    assert cycle.attempt(first).code is Code.ERROR
    assert not cycle.plan.binds and np.array_equal(view.snapshot.free(), free)
    assert cycle.attempt(second).code is Code.SUCCESS
    assert [b.pods for b in cycle.plan.binds] == [(("default/good", "n0"),)]


def test_a_gang_discovery_cannot_read_is_left_out_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery raising for the batch of changed gangs: each is discovered on its own, the one
    that still fails becomes an unusable gang with the failure as its reason, and the others
    are placed."""
    real = cluster_mod.discover_gangs

    def discover_or_fail(pods: Any, **kw: Any) -> Any:
        pods = list(pods)
        if any(p.name.startswith("bad-") for p in pods):
            raise Boom("cannot read it")
        return real(pods, **kw)

    monkeypatch.setattr(cluster_mod, "discover_gangs", discover_or_fail)
    view = cluster_state(load_scenario(_two_gangs())).view()
    bad = view.gangs["koordinator:default/bad"]
    internal = "an unexpected Boom inside topobridge (a bug to report)"
    assert bad.error == internal and len(bad.pods) == 2
    assert f"gang discovery failed, {internal}: discovered one key at a time" in view.warnings
    plan = SchedulingCycle(view, served=SERVED, now=0.0, timing=GangTiming()).run()
    assert [b.gang for b in plan.binds] == ["koordinator:default/good"]
    assert plan.outcomes["koordinator:default/bad"].code is Code.UNRESOLVABLE
    assert plan.outcomes["koordinator:default/bad"].message == internal


def test_a_pending_pod_being_deleted_is_never_placed() -> None:
    doomed = pod("doomed", cpu="1", scheduler="topobridge")
    doomed["metadata"]["deletionTimestamp"] = "2026-11-26T00:00:00Z"
    result = run([node("n0"), doomed, pod("kept", cpu="1", scheduler="topobridge")])
    assert result.bound == {"default/kept": "n0"}


def test_a_volcano_podgroup_and_a_koordinator_gang_of_one_name_are_placed_apart() -> None:
    """Before gang keys carried their dialect, these six pods were one gang of two minMembers."""
    objects: list[Obj] = [node("n0", cpu="4"), node("n1", cpu="4"), koord_gang("x", 3)]
    objects += members("x", 3, cpu="1", memory="1Gi")
    objects.append(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "x", "namespace": "default"},
            "spec": {"minMember": 3},
        }
    )
    objects += [
        pod(
            f"v{i}",
            cpu="1",
            memory="1Gi",
            annotations={"scheduling.k8s.io/group-name": "x"},
            scheduler="topobridge",
        )
        for i in range(3)
    ]
    result = run(objects)
    assert sorted(result.gangs) == ["koordinator:default/x", "volcano:default/x"]
    assert len(result.bound) == 6
