"""One rule for "a pending pod we serve" (`translations.serving`), and every part that asks
agrees with it on a table of pods: the live scheduler's quick check for work (`has_work`), its
hand-off Events (`_tell_pending`), the PodGroup status pass (`reconcile_pod_groups`, which
asks only whose pod it is) and the cycle's queue (`SchedulingCycle.queue`, through
`Gang.served_by`). No server: the parts run on a cache fed by hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from controller.placer.cycle import GangTiming, SchedulingCycle
from controller.runtime.scheduler import GangScheduler, SchedulerConfig, _tell_pending
from translations.core import Pod
from translations.serving import DEFAULT_SCHEDULER_NAME, is_pending, scheduler_name, serves

NS, POD, GROUP = "team", "worker-0", "train"
KEY = f"{NS}/{POD}"
GANG = f"volcano:{NS}/{GROUP}"


def _pod(
    *,
    scheduler: str | None = "topobridge",
    node: str | None = None,
    phase: str | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": POD,
        "namespace": NS,
        "uid": "u-1",
        "annotations": {"scheduling.k8s.io/group-name": GROUP},
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    if node is not None:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
}
PODGROUP = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": GROUP, "namespace": NS, "uid": "pg-1"},
    "spec": {"minMember": 1},
    "status": {"phase": "Unknown"},  # what no member count makes true: the status pass corrects it
}
TOPOBRIDGE = ("topobridge",)
WITH_DEFAULT = ("topobridge", DEFAULT_SCHEDULER_NAME)

CASES = [
    pytest.param(_pod(), TOPOBRIDGE, False, True, id="pending-ours"),
    pytest.param(_pod(scheduler="volcano"), TOPOBRIDGE, False, False, id="pending-another-schedulers"),
    pytest.param(_pod(scheduler=None), WITH_DEFAULT, False, True, id="no-name-default-scheduler-served"),
    pytest.param(_pod(scheduler=None), TOPOBRIDGE, False, False, id="no-name-default-scheduler-not-served"),
    pytest.param(_pod(scheduler=""), WITH_DEFAULT, False, True, id="empty-name-is-default-scheduler"),
    pytest.param(_pod(node="n1"), TOPOBRIDGE, False, False, id="bound"),
    pytest.param(_pod(phase="Succeeded"), TOPOBRIDGE, False, False, id="succeeded"),
    pytest.param(_pod(phase="Failed"), TOPOBRIDGE, False, False, id="failed"),
    pytest.param(_pod(deleting=True), TOPOBRIDGE, False, False, id="being-deleted"),
    pytest.param(_pod(), TOPOBRIDGE, True, False, id="assumed"),
]


@dataclass
class _Recorder:
    instance: str = "test"
    events: list[tuple[str, str]] = field(default_factory=list)

    async def event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self.events.append((obj["metadata"]["name"], reason))


@dataclass
class _StatusKube:
    patched: list[str] = field(default_factory=list)

    async def merge_patch(self, res: Any, name: str, body: Any, *, namespace: str | None = None) -> None:
        self.patched.append(f"{namespace}/{name}")


def _scheduler(raw: dict[str, Any], served: tuple[str, ...], assumed: bool) -> GangScheduler:
    sched = GangScheduler(
        cast(Any, None),
        cast(Any, _StatusKube()),
        SchedulerConfig(scheduler_names=served),
        served_names=lambda: served,
    )
    sched.cache.nodes.put(NODE)
    sched.cache.volcano_pgs.put(PODGROUP)
    sched.cache.pods.put(raw)
    if assumed:
        sched.cache.assume(KEY, "n1")
    return sched


@pytest.mark.parametrize(("raw", "served", "assumed", "expected"), CASES)
async def test_every_part_that_asks_agrees_with_the_one_rule(
    raw: dict[str, Any], served: tuple[str, ...], assumed: bool, expected: bool
) -> None:
    pod = Pod.parse(raw)
    assert serves(pod, served, assumed={KEY} if assumed else ()) is expected
    sched = _scheduler(raw, served, assumed)

    assert sched.has_work() is expected

    recorder = _Recorder()
    for name in served:
        await _tell_pending(sched, cast(Any, recorder), name, "test")
    assert bool(recorder.events) is expected

    cycle = SchedulingCycle(sched.cache.state.view(), served=served, now=0.0, timing=GangTiming())
    assert (GANG in [g.key for g in cycle.queue()]) is expected
    gang = cycle.view.gangs.get(GANG)
    if gang is not None:
        assert gang.scheduler_name == scheduler_name(pod)

    # The status pass asks only whose pod it is (bound members count too); a gang being bound
    # is its bind job's to report.
    await sched.status.reconcile_pod_groups(served)
    written = f"{NS}/{GROUP}" in cast(_StatusKube, sched.status_kube).patched
    assert written is (scheduler_name(pod) in served and not assumed)


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        pytest.param(_pod(scheduler=None), DEFAULT_SCHEDULER_NAME, id="missing"),
        pytest.param(_pod(scheduler=""), DEFAULT_SCHEDULER_NAME, id="empty"),
        pytest.param(_pod(scheduler="volcano"), "volcano", id="named"),
    ],
)
def test_a_pod_without_a_scheduler_name_is_the_default_schedulers(raw: dict[str, Any], name: str) -> None:
    assert scheduler_name(Pod.parse(raw)) == name


def test_pending_needs_every_condition() -> None:
    assert is_pending(Pod.parse(_pod()))
    assert not is_pending(Pod.parse(_pod()), assumed={KEY})
    assert not is_pending(Pod.parse(_pod(node="n1")))
    assert not is_pending(Pod.parse(_pod(deleting=True)))
