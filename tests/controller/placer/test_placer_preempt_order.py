"""The gang-level order of kube's workload-aware preemption (`MoreImportantVictim`,
pkg/scheduler/framework/preemption/util.go) inside one place: higher priority is protected
first; at equal priority a group taken whole (a PodGroup with `disruptionMode: all`) is
protected before a lone pod; then the pod that started earlier. By room and with the filters
run again alike."""

from __future__ import annotations

from typing import Any

from placer_objects import Obj, attempt, node, pod, priority_class

CLASSES = [priority_class("high", 1000), priority_class("low", 100)]


def whole_group(name: str, size: int, node_name: str, mode: str = "all") -> list[Obj]:
    group: Obj = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": size}}, "disruptionMode": {mode: {}}},
    }
    out = [group]
    for i in range(size):
        member = lone(f"{name}-{i}", node_name)
        member["spec"]["schedulingGroup"] = {"podGroupName": name}
        out.append(member)
    return out


def lone(name: str, node_name: str, *, started: int | None = None, **kw: Any) -> Obj:
    obj = pod(
        name, cpu="1", memory="1Gi", node_name=node_name, priority_class="low", scheduler="topobridge", **kw
    )
    if started is not None:
        obj["status"] = {"startTime": f"2026-01-01T00:00:{started:02d}Z"}
    return obj


def new(cpu: str, **kw: Any) -> Obj:
    return pod("new", cpu=cpu, memory="1Gi", priority_class="high", scheduler="topobridge", **kw)


def victims(objs: list[Obj]) -> list[str]:
    verdict = attempt(objs, "default/new")
    assert verdict.plan is not None, verdict.message
    return [v.pod for v in verdict.plan.victims]


def test_lone_pods_go_before_a_whole_group_of_equal_priority_and_size() -> None:
    # Two lone pods or the group of two: as many pods, the same priority; kube keeps the group.
    objs = [node("a", cpu="4"), *CLASSES, *whole_group("a-group", 2, "a"), lone("z-1", "a"), lone("z-2", "a")]
    objs.append(new("2"))
    assert victims(objs) == ["default/z-1", "default/z-2"]


def test_of_two_equal_lone_pods_the_later_started_goes() -> None:
    objs = [node("a", cpu="2"), *CLASSES, lone("a-early", "a", started=1), lone("b-late", "a", started=2)]
    objs.append(new("1"))
    assert victims(objs) == ["default/b-late"]


NOTHING = {"matchExpressions": [{"key": "nothing", "operator": "Exists"}]}
READS_BOUND_PODS = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": NOTHING, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}
"""An anti-affinity that excludes no node but makes the filters read bound pods (the
refiltered path)."""


def test_with_the_filters_run_again_the_group_is_put_back_before_the_lone_pod() -> None:
    # The reprieve puts the group back first (kube's order), so the lone pod is the victim,
    # though it started earlier.
    affinity = READS_BOUND_PODS
    objs = [node("a", cpu="3"), *CLASSES, lone("a-lone", "a", started=1), *whole_group("b-group", 2, "a")]
    objs.append(new("1", affinity=affinity))
    assert victims(objs) == ["default/a-lone"]


def test_with_the_filters_run_again_a_single_mode_group_gives_up_one_member() -> None:
    # `disruptionMode: single`: each member is a victim of its own, even below minCount; the
    # group is not taken whole for one pod's room.
    objs = [node("a", cpu="3"), *CLASSES, *whole_group("g", 3, "a", mode="single")]
    objs.append(new("1", affinity=READS_BOUND_PODS))
    assert len(victims(objs)) == 1
