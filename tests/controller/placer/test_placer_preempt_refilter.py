"""Preemption as kube-scheduler decides it: victims found by running Filter again with them gone
(anti-affinity, host ports), elastic gangs, kube's order of candidates, and the messages that
name the real blocker and why each victim is taken."""

from __future__ import annotations

import dataclasses
from typing import Any

from placer_objects import attempt, node, pod, priority_class, run, volcano_gang

from controller.placer.explain import explain, render
from controller.placer.framework import Code, Step
from controller.placer.scenario import load_scenario, prepare

CLASSES = [priority_class("high", 1000), priority_class("mid", 500), priority_class("low", 100)]
FOO_EXISTS = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}


def running(name: str, node_name: str, cls: str = "low", *, cpu: str = "1", **kw: Any) -> dict[str, Any]:
    return pod(
        name,
        cpu=cpu,
        memory="1Gi",
        node_name=node_name,
        priority_class=cls,
        scheduler="default-scheduler",
        **kw,
    )


def pending(name: str, cls: str = "high", **kw: Any) -> dict[str, Any]:
    return pod(name, cpu="1", memory="1Gi", priority_class=cls, scheduler="topobridge", **kw)


def anti(selector: dict[str, Any]) -> dict[str, Any]:
    term = {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def with_host_port(obj: dict[str, Any], port: int) -> dict[str, Any]:
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port, "protocol": "TCP"}]
    return obj


def test_a_pod_whose_anti_affinity_keeps_the_preemptor_out_is_evicted() -> None:
    # kube's own table: room is plentiful, only the bound pod's anti-affinity is in the way.
    objs = [node("a"), *CLASSES, running("blocker", "a", affinity=anti(FOO_EXISTS))]
    objs.append(pending("new", labels={"foo": "x"}))
    verdict = attempt(objs, "default/new")
    assert verdict.code is Code.WAITING_FOR_VICTIMS and verdict.step is Step.POST_FILTER
    assert verdict.plan is not None and [v.pod for v in verdict.plan.victims] == ["default/blocker"]
    result = run(objs)
    assert result.evicted == ["default/blocker"]
    assert result.bound == {"default/new": "a"}


def test_a_pod_holding_the_host_port_is_evicted_and_its_neighbour_stays() -> None:
    objs = [node("a"), *CLASSES, with_host_port(running("holder", "a"), 8080), running("neighbour", "a")]
    objs.append(with_host_port(pending("new"), 8080))
    result = run(objs)
    assert result.evicted == ["default/holder"]
    assert result.bound == {"default/new": "a"}


def test_a_blocker_of_equal_priority_is_no_victim_and_the_pod_stays_unresolvable() -> None:
    objs = [node("a"), *CLASSES, running("blocker", "a", cls="high", affinity=anti(FOO_EXISTS))]
    objs.append(pending("new", labels={"foo": "x"}))
    verdict = attempt(objs, "default/new")
    assert verdict.code is Code.UNRESOLVABLE and verdict.step is Step.FILTER
    assert "didn't satisfy existing pods anti-affinity rules" in verdict.message


def test_an_elastic_gang_gets_room_for_the_most_members_lower_priorities_allow() -> None:
    objs = [*(node(n, cpu="1") for n in ("n1", "n2", "n3", "n4")), *CLASSES, volcano_gang("job", 1)]
    objs += [
        running("low-1", "n1"),
        running("low-2", "n2"),
        running("high-3", "n3", "high"),
        running("high-4", "n4", "high"),
    ]
    objs += [
        pending(f"job-{i}", "mid", annotations={"scheduling.k8s.io/group-name": "job"}) for i in range(3)
    ]
    result = run(objs)
    assert sorted(result.evicted) == ["default/low-1", "default/low-2"]
    assert sorted(result.bound) == ["default/job-0", "default/job-1"]
    assert sorted(result.final_pods[k] for k in ("default/job-0", "default/job-1")) == ["n1", "n2"]


def _victims(objs: list[dict[str, Any]]) -> list[str]:
    verdict = attempt(objs, "default/new")
    assert verdict.plan is not None, verdict.message
    return [v.pod for v in verdict.plan.victims]


def test_equal_highest_priorities_are_broken_by_the_smaller_sum_of_victim_priorities() -> None:
    objs = [node("a", cpu="2"), node("b", cpu="2"), *CLASSES]
    objs += [
        running("a-1", "a", "mid"),
        running("a-2", "a", "mid"),
        running("b-1", "b", "mid"),
        running("b-2", "b"),
    ]
    objs.append(pod("new", cpu="2", memory="1Gi", priority_class="high", scheduler="topobridge"))
    assert _victims(objs) == ["default/b-1", "default/b-2"]


def test_equal_victims_are_broken_by_the_later_start_of_the_highest_priority_ones() -> None:
    def started(obj: dict[str, Any], second: int) -> dict[str, Any]:
        obj["status"] = {"startTime": f"2026-01-01T00:00:{second:02d}Z"}
        return obj

    objs = [
        node("a"),
        node("b"),
        *CLASSES,
        pod("new", cpu="8", priority_class="high", scheduler="topobridge"),
    ]
    objs += [started(running("a-1", "a", cpu="8"), 1), started(running("b-1", "b", cpu="8"), 2)]
    # kube keeps the pod that has run longer: b-1 started later, so b is the candidate.
    assert _victims(objs) == ["default/b-1"]


def test_the_message_names_a_spread_between_members_that_keeps_the_gang_out() -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "x"}},
    }
    objs = [node("n1"), node("n2"), volcano_gang("job", 2), running("filler", "n2", cpu="8")]
    for i in range(2):
        member = pending(
            f"job-{i}", "low", labels={"app": "x"}, annotations={"scheduling.k8s.io/group-name": "job"}
        )
        member["spec"]["topologySpreadConstraints"] = [spread]
        objs.append(member)
    verdict = attempt(objs, "volcano:default/job")
    # Room on n1 holds both members; only their own spread (one per node at most apart) does not.
    assert "desiredOfferSlot: 2, offerSlot: 2" in verdict.message
    assert "pod topology spread over kubernetes.io/hostname (maxSkew 1)" in verdict.message


def test_explain_says_why_each_victim_is_taken() -> None:
    objs = [
        node("a"),
        *CLASSES,
        running("blocker", "a", affinity=anti(FOO_EXISTS)),
        running("filler", "a", cpu="7"),
    ]
    objs.append(
        pod("new", cpu="2", memory="1Gi", priority_class="high", scheduler="topobridge", labels={"foo": "x"})
    )
    sc = load_scenario(objs)
    prep = prepare(sc)
    gang = next(g for g in prep.discovered if g.key.endswith("/new"))
    got = explain(gang, prep.snapshot)
    assert got.preemption is not None and got.preemption.possible
    whys = {v.pod: v.why for v in got.preemption.victims}
    assert whys == {
        "default/blocker": "keeps the gang out: node(s) didn't satisfy existing pods anti-affinity rules",
        "default/filler": "holds room the gang needs",
    }
    assert "default/blocker on a (priority 100, gang pod:default/blocker): keeps the gang out" in render(got)


def test_a_trial_undoes_evictions_and_leaves_the_journal_as_it_was() -> None:
    objs = [node("a"), node("b"), *CLASSES, running("x", "a"), running("y", "b"), running("z", "b")]
    snap = prepare(load_scenario(objs)).snapshot
    used = snap.used.copy()
    mark = snap.savepoint()
    with snap.trial():
        snap.evict_many(["default/x", "default/y"])
        assert sorted(snap.pods) == ["default/z"]
        assert (snap.used.sum(axis=0) < used.sum(axis=0)).any()
    assert sorted(snap.pods) == ["default/x", "default/y", "default/z"]
    assert (snap.used == used).all()
    assert snap.savepoint() == mark  # the trial left no entry behind


def test_a_place_too_big_to_reprieve_pod_by_pod_is_planned_by_room_and_checked() -> None:
    # 100 lower-priority pods with terms (toward someone else) fill the node: too many to put
    # back one by one, so the room search plans it, and the filters confirm the plan.
    other = {"matchLabels": {"app": "other"}}
    objs = [node("a", cpu="100", memory="200Gi", pods="200"), *CLASSES]
    objs += [running(f"p{i}", "a", affinity=anti(other)) for i in range(100)]
    objs.append(pod("new", cpu="2", memory="1Gi", priority_class="high", scheduler="topobridge"))
    verdict = attempt(objs, "default/new")
    assert verdict.code is Code.WAITING_FOR_VICTIMS, verdict.message
    assert verdict.plan is not None and len(verdict.plan.victims) == 2
    assert verdict.plan.nominated == (("default/new", "a"),)


def test_a_refilter_run_is_priced_by_the_bound_pods_with_terms_it_reads() -> None:
    from controller.placer.preempt import refilter_steps

    assert refilter_steps(500, 2000) == refilter_steps(500) + 200


def test_no_budget_for_the_reprieve_still_gives_a_checked_plan() -> None:
    """Every bound pod's anti-affinity excludes the preemptor: the by-room plan (one pod frees
    the room) fails the check, so every eligible pod of its node goes (`_whole_place`). The
    budget pays for no reprieve here, and is left for that search."""
    from controller.placer.attempt_budget import AttemptBudget
    from controller.placer.engine import schedule

    web = {"matchLabels": {"app": "web"}}
    objs = [node("a", cpu="2"), node("b", cpu="2"), *CLASSES]
    objs += [running(f"{n}-{i}", n, affinity=anti(web)) for n in ("a", "b") for i in (1, 2)]
    objs.append(pending("new", labels={"app": "web"}))
    sc = load_scenario(objs)
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == "default/new")
    verdict = schedule(gang, prep.snapshot, attempt_budget=AttemptBudget(steps=3, guard=float("inf")))
    assert verdict.code is Code.WAITING_FOR_VICTIMS, verdict.message
    assert verdict.plan is not None and not verdict.plan.optimal
    assert [v.pod for v in verdict.plan.victims] == ["default/a-1", "default/a-2"]


def test_a_pod_with_terms_that_cannot_keep_the_gang_out_changes_no_plan() -> None:
    """Only what could keep the gang out sends it down the re-filtered path: a lower-priority pod
    on another node holding a host port, or whose anti-affinity selects no member, leaves the
    plan as it is without them (before, either one turned a 4-victim plan into a 5-victim one)."""
    pool = {"pool": "a"}
    objs = [node("n0", cpu="4", labels=pool), node("n1", cpu="8", labels=pool), node("far", cpu="8")]
    objs += [*CLASSES, volcano_gang("job", 3)]
    for i, (host, cpu) in enumerate(
        [("n0", "2"), ("n1", "1"), ("n0", "1"), ("n1", "1"), ("n1", "500m"), ("n0", "1"), ("n1", "500m")]
    ):
        objs.append(running(f"low-{i}", host, cpu=cpu))
    for i, cpu in enumerate(("4", "3", "3")):
        member = pending(
            f"job-{i}", "mid", annotations={"scheduling.k8s.io/group-name": "job"}, node_selector=pool
        )
        member["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
        objs.append(member)
    plain = run(objs)
    assert len(plain.evicted) == 4 and len(plain.bound) == 3, plain
    port_elsewhere = with_host_port(running("port-holder", "far", cpu="100m"), 8080)
    anti_other = running("anti-other", "far", cpu="100m", affinity=anti(FOO_EXISTS))
    for extra in (port_elsewhere, anti_other):
        got = run([*objs, extra])
        assert (got.evicted, got.bound) == (plain.evicted, plain.bound), extra["metadata"]["name"]


class _Runs:
    """A PreFilter plugin that records how many pods the filters count as bound each time they
    run (in preemption's best case, every pod the gang may evict is left out)."""

    name = "RunCounter"

    def __init__(self) -> None:
        self.bound: list[int] = []

    def pre_filter(self, state: Any, gang: Any, pods: Any, snap: Any) -> Any:
        from controller.placer.framework import Status, without_lower
        from controller.placer.preempt import may_go

        lower = without_lower(state)
        self.bound.append(sum(1 for p in snap.pods.values() if lower is None or not may_go(p, lower)))
        return Status()


def _counted(objs: list[dict[str, Any]], steps: float) -> tuple[Any, list[int]]:
    """An attempt for `default/new` with a step budget of `steps`, and the bound pods each run
    of the filters saw."""
    from controller.placer.attempt_budget import AttemptBudget
    from controller.placer.engine import schedule
    from controller.placer.framework import default_profile

    runs = _Runs()
    shared = default_profile()  # one profile serves every cycle: counted on a copy of it
    profile = dataclasses.replace(shared, pre_filter=[*shared.pre_filter, runs])
    sc = load_scenario(objs)
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == "default/new")
    budget = AttemptBudget(steps=steps, guard=float("inf"))
    return schedule(gang, prep.snapshot, attempt_budget=budget, profile=profile), runs.bound


def test_the_filters_run_once_with_every_lower_priority_gone() -> None:
    """No node passes Filter; whether eviction may help (the Filter step) and whether the gang
    fits with every lower priority gone (PostFilter) is one question: one run answers both
    (before, two runs worked it out twice)."""
    web = {"matchLabels": {"app": "web"}}
    objs = [node("a", cpu="2"), node("b", cpu="2"), *CLASSES]
    objs += [running(f"{n}-{i}", n, affinity=anti(web)) for n in ("a", "b") for i in (1, 2)]
    objs.append(pending("new", labels={"app": "web"}))
    verdict, bound = _counted(objs, 2_000)
    assert verdict.code is Code.WAITING_FOR_VICTIMS, verdict.message
    assert bound[0] == 4 and bound.count(0) == 1, bound


def test_a_plan_taking_every_lower_priority_pod_is_checked_by_the_run_already_made() -> None:
    """The budget pays for no reprieve; the search by room takes the one lower-priority pod,
    so its check asks what the run with every lower priority gone answered: no run again
    (before, that state was worked out three times)."""
    objs = [node("a", cpu="2"), *CLASSES, running("blocker", "a", affinity=anti(FOO_EXISTS))]
    objs.append(pending("new", labels={"foo": "x"}))
    verdict, bound = _counted(objs, 3)
    assert verdict.code is Code.WAITING_FOR_VICTIMS, verdict.message
    assert verdict.plan is not None and [v.pod for v in verdict.plan.victims] == ["default/blocker"]
    assert bound == [1, 0], bound
