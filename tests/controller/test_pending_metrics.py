"""The pending-gang gauges (`controller.metrics.track_pending_gangs`): counted and aged when
/metrics is read, and zero once the scheduler stops reporting."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client import REGISTRY

from controller import metrics


@pytest.fixture
def untracked() -> Iterator[None]:
    yield
    metrics.track_pending_gangs(None)


def sample(name: str) -> float | None:
    return REGISTRY.get_sample_value(name)


@pytest.mark.parametrize(
    ("since", "now", "want"),
    [
        pytest.param([], 100.0, 0.0, id="none-waits"),
        pytest.param([40.0], 100.0, 60.0, id="one-gang"),
        pytest.param([90.0, 10.0, 70.0], 100.0, 90.0, id="the-oldest-wins"),
        pytest.param([130.0], 100.0, 0.0, id="backing-off-after-a-timeout"),
        pytest.param([130.0, 95.0], 100.0, 5.0, id="backing-off-beside-a-waiting-gang"),
    ],
)
def test_oldest_wait(since: list[float], now: float, want: float) -> None:
    assert metrics.oldest_wait(since, now) == want


def test_gauges_are_read_at_scrape_time(untracked: None) -> None:
    waiting = {"ns/a": 10.0, "ns/b": 25.0}
    clock = [70.0]
    metrics.track_pending_gangs(waiting.values, clock=lambda: clock[0])
    assert sample("topobridge_pending_gangs") == 2
    assert sample("topobridge_oldest_pending_gang_age_seconds") == 60.0
    clock[0] = 100.0  # no cycle ran: the age still grows
    assert sample("topobridge_oldest_pending_gang_age_seconds") == 90.0
    del waiting["ns/a"]  # placed
    assert sample("topobridge_pending_gangs") == 1
    assert sample("topobridge_oldest_pending_gang_age_seconds") == 75.0


def test_a_stopped_scheduler_reports_no_pending_gang(untracked: None) -> None:
    metrics.track_pending_gangs(lambda: [1.0, 2.0], clock=lambda: 500.0)
    assert sample("topobridge_pending_gangs") == 2
    metrics.track_pending_gangs(None)
    assert sample("topobridge_pending_gangs") == 0
    assert sample("topobridge_oldest_pending_gang_age_seconds") == 0


def by_reason(namespace: str, dialect: str, reason: str) -> float | None:
    labels = {"namespace": namespace, "dialect": dialect, "reason": reason}
    return REGISTRY.get_sample_value("topobridge_pending_gangs_by_reason", labels)


def test_pending_gangs_by_namespace_dialect_and_reason_leave_no_stale_series() -> None:
    metrics.set_pending_by_reason({("a", "volcano", "Unschedulable"): 2, ("b", "job", "SchedulingGated"): 1})
    assert by_reason("a", "volcano", "Unschedulable") == 2
    assert by_reason("b", "job", "SchedulingGated") == 1
    metrics.set_pending_by_reason({("a", "volcano", "WaitingForVictims"): 1})
    assert by_reason("a", "volcano", "WaitingForVictims") == 1
    assert by_reason("a", "volcano", "Unschedulable") is None, "a reason no gang has any more is gone"
    assert by_reason("b", "job", "SchedulingGated") is None
    metrics.set_pending_by_reason({})
    assert by_reason("a", "volcano", "WaitingForVictims") is None
