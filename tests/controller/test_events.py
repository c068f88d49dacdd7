"""Events as client-go's recorder writes them (`controller.reporting.EventRecorder`), on the real
API server, with time moved by hand: a repeat bumps the count, the tenth different message of a
reason is combined, and an object's burst of 25 is refilled by one every five minutes."""

from __future__ import annotations

from controller import metrics
from controller.clock import FakeClock
from controller.kube import JsonDict, Kube
from controller.reporting import COMBINED_PREFIX, SPAM_BURST, SPAM_REFILL_SECONDS, EventRecorder
from controller.resources import EVENTS


def pod_ref(namespace: str, name: str) -> JsonDict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
    }


def _dropped() -> float:
    return metrics.registry().get_sample_value("topobridge_events_dropped_total") or 0.0


async def events_of(kube: Kube, namespace: str, name: str) -> list[JsonDict]:
    found: list[JsonDict] = (
        await kube.list(EVENTS, namespace=namespace, field_selector=f"involvedObject.name={name}")
    ).items
    return sorted(found, key=lambda e: e["metadata"]["creationTimestamp"])


async def test_a_repeated_event_bumps_its_count(admin: Kube, namespace: str) -> None:
    recorder = EventRecorder(admin, clock=FakeClock())
    for _ in range(3):
        await recorder.event(
            pod_ref(namespace, "again"), "Warning", "FailedScheduling", "0/3 nodes are available"
        )
    (event,) = await events_of(admin, namespace, "again")
    assert event["count"] == 3 and event["reason"] == "FailedScheduling" and event["type"] == "Warning"


async def test_the_tenth_different_message_of_a_reason_is_combined(admin: Kube, namespace: str) -> None:
    recorder = EventRecorder(admin, clock=FakeClock())
    for i in range(12):
        await recorder.event(pod_ref(namespace, "similar"), "Warning", "FailedScheduling", f"message {i}")
    events = await events_of(admin, namespace, "similar")
    assert len(events) == 10, [e["message"] for e in events]
    combined = [e for e in events if e["message"].startswith(COMBINED_PREFIX)]
    assert len(combined) == 1
    assert combined[0]["message"] == COMBINED_PREFIX + "message 11" and combined[0]["count"] == 3


async def test_an_objects_burst_is_limited_then_refilled(admin: Kube, namespace: str) -> None:
    clock = FakeClock()
    recorder = EventRecorder(admin, clock=clock)
    dropped = _dropped()
    for i in range(SPAM_BURST + 5):  # a reason each: neither deduplicated nor combined
        await recorder.event(pod_ref(namespace, "spam"), "Normal", f"Reason{i}", "text")
    assert len(await events_of(admin, namespace, "spam")) == SPAM_BURST
    assert _dropped() - dropped == 5
    # Another object has a bucket of its own.
    await recorder.event(pod_ref(namespace, "other"), "Normal", "Reason0", "text")
    assert len(await events_of(admin, namespace, "other")) == 1
    await clock.advance(SPAM_REFILL_SECONDS)
    await recorder.event(pod_ref(namespace, "spam"), "Normal", "Later", "text")
    await recorder.event(pod_ref(namespace, "spam"), "Normal", "TooSoon", "text")
    reasons = {e["reason"] for e in await events_of(admin, namespace, "spam")}
    assert "Later" in reasons and "TooSoon" not in reasons
