"""`Scheduled` Events after a bind: one per pod bound, and one for the gang on its PodGroup or
first pod, except for a pod alone, whose own Event says it all (a second one cost a request per
pod that kube-scheduler does not make: 3.02 requests per pod against its 2.01 in
`benchmarks/controller.py`'s plain workload)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from controller.runtime.scheduler import GangScheduler, SchedulerConfig
from tests.controller.placer.placer_objects import node, pod


@dataclass
class _Recorder:
    instance: str = "topobridge-test"
    events: list[tuple[str, str, str]] = field(default_factory=list)

    async def event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self.events.append((obj["metadata"]["name"], reason, message))


def _sched(pods: list[dict[str, Any]]) -> tuple[GangScheduler, _Recorder]:
    recorder = _Recorder()
    sched = GangScheduler(cast(Any, None), cast(Any, None), SchedulerConfig(), recorder=cast(Any, recorder))
    sched.cache.nodes.put(node("n1"))
    for p in pods:
        sched.cache.pods.put(p)
    return sched, recorder


@pytest.mark.parametrize(
    ("pods", "gang", "expected"),
    [
        pytest.param(
            [pod("solo", scheduler="topobridge")],
            "solo",
            [("solo", "Scheduled", "Successfully assigned default/solo to n1")],
            id="a-pod-alone-gets-its-own-event-only",
        ),
        pytest.param(
            [
                pod(f"w-{i}", scheduler="topobridge", labels={"pod-group.scheduling.sigs.k8s.io": "w"})
                for i in range(2)
            ],
            "w",
            [
                ("w-0", "Scheduled", "Successfully assigned default/w-0 to n1"),
                ("w-1", "Scheduled", "Successfully assigned default/w-1 to n1"),
                ("w-0", "Scheduled", "gang default/w: 2 pods bound in cluster"),
            ],
            id="a-gang-without-podgroup-object-gets-one-on-its-first-pod",
        ),
    ],
)
async def test_scheduled_events(
    pods: list[dict[str, Any]], gang: str, expected: list[tuple[str, str, str]]
) -> None:
    sched, recorder = _sched(pods)
    g = next(x for x in sched.cache.state.view().gangs.values() if x.name == f"default/{gang}")
    planned = {m.key: "n1" for m in g.pods}
    await sched._events_scheduled(g, planned, list(planned), "cluster")
    assert recorder.events == expected
