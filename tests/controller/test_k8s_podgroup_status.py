"""kube-scheduler's conditions on Kubernetes' own PodGroup, written by the status writer
(`controller.runtime.status`). The dev control plane (v1.20) serves no `scheduling.k8s.io`
PodGroup, so these run on the writer with a recording client.

The condition rows are kube's `pkg/scheduler/schedule_one_podgroup_test.go`
TestSubmitPodGroupAlgorithmResult (the condition each case expects), named
`kube:TestSubmitPodGroupAlgorithmResult/<case>`; the cases that differ only in the pods' results
under one group verdict are one row per verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from controller.placer.cycle import GangTiming, SchedulingCycle
from controller.resources import K8S_PODGROUPS
from controller.runtime.cache import ClusterCache
from controller.runtime.status import (
    DISRUPTION_TARGET,
    INITIALLY_SCHEDULED,
    PODGROUP_SCHEDULED,
    SCHEDULED,
    UNSCHEDULABLE,
    StatusWriter,
    pod_group_conditions,
)
from translations import workload

SUBMIT = "kube:TestSubmitPodGroupAlgorithmResult"
NOW = "2026-07-24T00:00:00Z"
EARLIER = "2026-07-23T00:00:00Z"


def pod_group(
    version: str = "v1beta1", *, conditions: list[dict[str, Any]] | None = None, mode: str = "single"
) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": 2}}}
    if version == "v1alpha2":
        spec["disruptionMode"] = "PodGroup" if mode == "all" else "Pod"
    else:
        spec["disruptionMode"] = {mode: {}}
    obj: dict[str, Any] = {
        "apiVersion": f"scheduling.k8s.io/{version}",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "default", "uid": "pg-1", "generation": 3},
        "spec": spec,
    }
    if conditions is not None:
        obj["status"] = {"conditions": conditions}
    return obj


SCHEDULED_BEFORE = {
    "type": INITIALLY_SCHEDULED,
    "status": "True",
    "reason": "Scheduled",
    "message": "All pods scheduled",
    "lastTransitionTime": EARLIER,
}


@pytest.mark.parametrize(
    ("existing", "status", "reason", "message", "want"),
    [
        pytest.param(
            None, True, "Scheduled", "", ("True", "Scheduled", ""), id=f"{SUBMIT}/All pods feasible"
        ),
        pytest.param(
            None,
            False,
            "Unschedulable",
            "not enough capacity for the gang",
            ("False", "Unschedulable", "not enough capacity for the gang"),
            id=f"{SUBMIT}/All pods feasible, but podGroup unschedulable",
        ),
        pytest.param(
            None, True, "Scheduled", "", ("True", "Scheduled", ""), id=f"{SUBMIT}/One unschedulable"
        ),
        pytest.param(
            None,
            False,
            "Unschedulable",
            "waiting for preemption to complete",
            ("False", "Unschedulable", "waiting for preemption to complete"),
            id=f"{SUBMIT}/All pods require preemption",
        ),
        pytest.param(
            None,
            False,
            "Unschedulable",
            "0/3 nodes are available: insufficient cpu",
            ("False", "Unschedulable", "0/3 nodes are available: insufficient cpu"),
            id=f"{SUBMIT}/All pods unschedulable",
        ),
        pytest.param(
            None,
            False,
            "SchedulerError",
            "plugin returned error",
            ("False", "SchedulerError", "plugin returned error"),
            id=f"{SUBMIT}/Error for one pod",
        ),
        pytest.param(
            [SCHEDULED_BEFORE],
            True,
            "Scheduled",
            "3 pods bound",
            None,
            id=f"{SUBMIT}/Already Scheduled, successful cycle keeps condition",
        ),
        pytest.param(
            [SCHEDULED_BEFORE],
            False,
            "Unschedulable",
            "extra pods could not be placed",
            None,
            id=f"{SUBMIT}/Already Scheduled, rejected cycle does not regress condition",
        ),
        pytest.param(
            [SCHEDULED_BEFORE],
            False,
            "SchedulerError",
            "",
            None,
            id=f"{SUBMIT}/Already Scheduled, error cycle does not regress condition",
        ),
    ],
)
def test_kube_submit_conditions(
    existing: list[dict[str, Any]] | None,
    status: bool,
    reason: str,
    message: str,
    want: tuple[str, str, str] | None,
) -> None:
    pg = workload.ServedPodGroup.parse(pod_group(conditions=existing))
    got = pod_group_conditions(
        pg, type_=INITIALLY_SCHEDULED, status=status, reason=reason, message=message, now=NOW
    )
    if want is None:
        assert got is None  # nothing written: the condition stays as it was
        return
    assert got is not None
    (cond,) = got
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (INITIALLY_SCHEDULED, *want)
    assert cond["observedGeneration"] == 3


def test_transition_time_moves_only_with_the_status() -> None:
    waiting = {
        "type": INITIALLY_SCHEDULED,
        "status": "False",
        "reason": "Unschedulable",
        "message": "a",
        "lastTransitionTime": EARLIER,
    }
    other = {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "x",
        "lastTransitionTime": EARLIER,
    }
    pg = workload.ServedPodGroup.parse(pod_group(conditions=[other, waiting]))
    got = pod_group_conditions(
        pg, type_=INITIALLY_SCHEDULED, status=False, reason="Unschedulable", message="b", now=NOW
    )
    assert got is not None
    assert [c["type"] for c in got] == [DISRUPTION_TARGET, INITIALLY_SCHEDULED]
    assert (got[1]["message"], got[1]["lastTransitionTime"]) == ("b", EARLIER)
    assert (
        pod_group_conditions(
            pg, type_=INITIALLY_SCHEDULED, status=False, reason="Unschedulable", message="a", now=NOW
        )
        is None
    )
    flipped = pod_group_conditions(
        pg, type_=INITIALLY_SCHEDULED, status=True, reason="Scheduled", message="", now=NOW
    )
    assert flipped is not None and flipped[1]["lastTransitionTime"] == NOW


@dataclass
class RecordingKube:
    patches: list[tuple[str, str, dict[str, Any], str | None]] = field(default_factory=list)

    async def merge_patch(
        self,
        res: Any,
        name: str,
        body: dict[str, Any],
        *,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        self.patches.append(
            (f"{res.group}/{res.version}/{res.plural}", f"{namespace}/{name}", body, subresource)
        )
        return {}


def member(name: str, *, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "topobridge",
        "schedulingGroup": {"podGroupName": "pg"},
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def writer(version: str, bound: int, *, mode: str = "single") -> tuple[StatusWriter, RecordingKube, Any]:
    kube = RecordingKube()
    cache = ClusterCache()
    cache.nodes.put(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}},
        }
    )
    cache.k8s_pgs.put(pod_group(version, mode=mode))
    for i in range(2):
        cache.pods.put(member(f"p{i}", node="n1" if i < bound else None))
    cycle = SchedulingCycle(cache.state.view(), served=("topobridge",), now=0.0, timing=GangTiming())
    gang = cycle.view.gangs.get("upstream:default/pg")
    assert gang is not None
    return StatusWriter(kube, cache), kube, gang  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("version", "type_"),
    [("v1beta1", INITIALLY_SCHEDULED), ("v1alpha3", INITIALLY_SCHEDULED), ("v1alpha2", PODGROUP_SCHEDULED)],
)
async def test_writer_marks_the_pod_group_at_its_version(version: str, type_: str) -> None:
    status, kube, gang = writer(version, 0)
    await status.pod_group(
        gang, phase="Pending", condition=UNSCHEDULABLE, reason="NotEnoughResources", message="no room"
    )
    await status.pod_group(
        gang, phase="Pending", condition=UNSCHEDULABLE, reason="NotEnoughResources", message="no room"
    )
    assert len(kube.patches) == 1  # the same verdict twice is written once
    res, key, body, sub = kube.patches[0]
    assert (res, key, sub) == (f"scheduling.k8s.io/{version}/podgroups", "default/pg", "status")
    (cond,) = body["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        type_,
        "False",
        "Unschedulable",
        "no room",
    )


async def test_writer_says_scheduler_error_and_scheduled() -> None:
    status, kube, gang = writer("v1beta1", 0)
    await status.pod_group(
        gang, phase="Pending", condition=UNSCHEDULABLE, reason="SchedulingError", message="boom"
    )
    await status.pod_group(gang, phase="Running", condition=SCHEDULED, reason="ready", message="2 pods bound")
    assert [p[2]["status"]["conditions"][0]["reason"] for p in kube.patches] == [
        "SchedulerError",
        "Scheduled",
    ]


async def test_a_running_gang_with_waiting_extras_is_not_marked_unschedulable() -> None:
    status, kube, gang = writer("v1beta1", 2)
    await status.pod_group(
        gang, phase="Pending", condition=UNSCHEDULABLE, reason="NotEnoughResources", message="x"
    )
    assert kube.patches == []


async def test_a_1_35_workload_group_has_no_pod_group_to_mark() -> None:
    status, kube, gang = writer("v1beta1", 0)
    status.cache.k8s_pgs.items.clear()
    await status.pod_group(
        gang, phase="Pending", condition=UNSCHEDULABLE, reason="NotEnoughResources", message="x"
    )
    assert kube.patches == []


@pytest.mark.parametrize(("mode", "marked"), [("all", True), ("single", False)])
async def test_disruption_target_on_a_group_taken_whole(mode: str, marked: bool) -> None:
    status, kube, _ = writer("v1beta1", 2, mode=mode)
    victims = [status.cache.pods.items["default/p0"], status.cache.pods.items["default/p1"], None]
    await status.pod_groups_disrupted(victims, "preempted by default/high")
    if not marked:
        assert kube.patches == []
        return
    (patch,) = kube.patches
    (cond,) = patch[2]["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == (
        DISRUPTION_TARGET,
        "True",
        "PreemptionByScheduler",
    )
    assert patch[0] == f"{K8S_PODGROUPS.group}/{K8S_PODGROUPS.version}/podgroups"
