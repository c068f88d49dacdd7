"""An attempt the wall-clock guard stopped is never silent in the live scheduler: the counter
`topobridge_attempt_guard_fired_total` goes up and a warning names the gang and what the guard
did (the verdict says it too: `tests/controller/placer/test_attempt_budget.py`)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import structlog
from prometheus_client import REGISTRY

from controller.placer.cycle import Outcome
from controller.placer.framework import Code, Step
from controller.placer.scenario import load_scenario, prepare
from controller.runtime.scheduler import GangScheduler, SchedulerConfig

WHY = "the attempt's wall-clock guard (2s) stopped the search after 40 of 2000 steps: this plan depends on the machine's load"


NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n0"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"schedulerName": "topobridge", "containers": [{"name": "c", "image": "x"}]},
}


def _fired() -> float:
    return REGISTRY.get_sample_value("topobridge_attempt_guard_fired_total") or 0.0


async def test_a_guard_that_fired_is_counted_and_logged() -> None:
    sc = load_scenario([NODE, POD])
    gang = next(iter(prepare(sc).gangs(sc)))
    sched = GangScheduler(cast(Any, None), cast(Any, None), SchedulerConfig())
    outcome = Outcome(gang.key, Code.WAITING_FOR_VICTIMS, Step.POST_FILTER, "waiting", {}, guarded=WHY)
    before = _fired()
    with structlog.testing.capture_logs() as logs:
        sched._guard_fired(gang, outcome)
        await asyncio.sleep(0)  # the Event job runs (no recorder here: nothing to write)
    assert _fired() == before + 1
    [line] = [entry for entry in logs if entry["event"] == "scheduler.attempt_guard_fired"]
    assert line["gang"] == gang.key and line["why"] == WHY and line["log_level"] == "warning"
