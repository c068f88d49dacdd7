"""The informer's list+watch loop: resourceVersion bookkeeping, re-list on 410 Gone (reporting
the deletes it missed), backoff on failures, resync, indexes.

The client is the seam faked here (a scripted list/watch); the real API server drives the
informers in every integration test.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from controller.clock import FakeClock
from controller.errors import GoneError, TransportError
from controller.informer import Backoff, Informer, SharedInformers, drop_managed_fields
from controller.kube import JsonDict, ObjectList, WatchEvent
from controller.resources import PODS, VOLCANO_PODGROUPS


def pod(name: str, rv: int, **labels: str) -> JsonDict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv), "labels": labels},
    }


class ScriptedKube:
    """Answers list() from `lists` and watch() from `watches`, one script entry per call.
    A watch script is a list of WatchEvents and exceptions; an exception is raised in place."""

    def __init__(self, lists: list[Any], watches: list[list[Any]]) -> None:
        self.lists = lists
        self.watches = watches
        self.watch_versions: list[str] = []
        self.list_calls = 0
        self.done = asyncio.Event()

    async def list(self, res: Any, **kw: Any) -> ObjectList:
        self.list_calls += 1
        item = self.lists.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    async def watch(self, res: Any, *, resource_version: str, **kw: Any) -> AsyncIterator[WatchEvent]:
        self.watch_versions.append(resource_version)
        if not self.watches:
            self.done.set()
            await asyncio.Event().wait()
        for step in self.watches.pop(0):
            if isinstance(step, BaseException):
                raise step
            yield step


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def on_add(self, obj: JsonDict) -> None:
        self.seen.append(("add", obj["metadata"]["name"]))

    def on_update(self, old: JsonDict, new: JsonDict) -> None:
        self.seen.append(("resync" if old is new else "update", new["metadata"]["name"]))

    def on_delete(self, obj: JsonDict) -> None:
        self.seen.append(("delete", obj["metadata"]["name"]))


async def run_until_done(inf: Informer, kube: ScriptedKube, clock: FakeClock | None = None) -> None:
    task = asyncio.ensure_future(inf.run())
    try:
        for _ in range(200):
            if kube.done.is_set():
                break
            if clock is not None:
                await clock.advance(1.0)
            else:
                await asyncio.sleep(0)
        assert kube.done.is_set(), "script not consumed"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_watch_follows_versions_and_relists_on_gone() -> None:
    kube = ScriptedKube(
        lists=[
            ObjectList([pod("a", 10), pod("b", 11)], "11"),
            ObjectList([pod("a", 14), pod("c", 15)], "15"),
        ],  # after Gone: b vanished, a changed, c appeared
        watches=[
            [
                WatchEvent("MODIFIED", pod("a", 12)),
                WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": "13"}}),
            ],
            [GoneError("too old resource version", status=410)],
        ],
    )
    inf = Informer(kube, PODS, resync_period=None)  # type: ignore[arg-type]
    rec = Recorder()
    inf.add_handler(rec)
    await run_until_done(inf, kube)
    assert kube.watch_versions == ["11", "13", "15"], (
        "watch from the list, then from the last event or bookmark"
    )
    assert rec.seen == [
        ("add", "a"),
        ("add", "b"),
        ("update", "a"),
        ("delete", "b"),
        ("update", "a"),
        ("add", "c"),
    ]
    assert set(inf.cache) == {"ns/a", "ns/c"} and inf.relists == 2


async def test_failures_back_off_and_recover() -> None:
    clock = FakeClock()
    kube = ScriptedKube(
        lists=[TransportError("refused"), TransportError("refused"), ObjectList([pod("a", 1)], "1")],
        watches=[[TransportError("reset")], []],
    )
    inf = Informer(
        kube,
        PODS,
        resync_period=None,
        clock=clock,  # type: ignore[arg-type]
        backoff=Backoff(initial=1.0, maximum=8.0, jitter=0.0),
    )
    await run_until_done(inf, kube, clock)
    assert kube.list_calls == 3 and inf.synced.is_set()
    # reset -> re-watch from "1" (no re-list); a watch the server ends -> watch again from "1"
    assert kube.watch_versions == ["1", "1", "1"]


def test_backoff_is_capped_and_jittered() -> None:
    b = Backoff(initial=0.5, maximum=30.0, factor=2.0, jitter=0.5)
    rng = random.Random(1)
    delays = [b.delay(i, rng) for i in range(12)]
    assert all(0.25 <= d <= 0.5 for d in delays[:1])
    assert max(delays) <= 30.0 and delays[-1] >= 15.0
    assert len({round(d, 6) for d in delays}) == len(delays), "jitter spreads retries"


async def test_resync_reports_cached_objects_again() -> None:
    clock = FakeClock()
    kube = ScriptedKube(lists=[ObjectList([pod("a", 1)], "1")], watches=[])
    inf = Informer(kube, PODS, resync_period=5.0, clock=clock)  # type: ignore[arg-type]
    rec = Recorder()
    inf.add_handler(rec)
    task = asyncio.ensure_future(inf.run())
    try:
        await clock.advance(0)
        await clock.advance(5.0)
        await clock.advance(5.0)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert rec.seen == [("add", "a"), ("resync", "a"), ("resync", "a")]


async def test_indexes_follow_label_changes() -> None:
    kube = ScriptedKube(
        lists=[ObjectList([pod("a", 1, team="x"), pod("b", 2, team="x")], "2")],
        watches=[
            [WatchEvent("MODIFIED", pod("a", 3, team="y")), WatchEvent("DELETED", pod("b", 4, team="x"))]
        ],
    )
    inf = Informer(kube, PODS, resync_period=None)  # type: ignore[arg-type]
    inf.add_index("team", lambda o: [o["metadata"]["labels"]["team"]])
    await run_until_done(inf, kube)
    assert [o["metadata"]["name"] for o in inf.by_index("team", "y")] == ["a"]
    assert inf.by_index("team", "x") == []


@pytest.mark.parametrize("bad", ["handler raises"])
async def test_a_failing_handler_does_not_stop_the_watch(bad: str) -> None:
    kube = ScriptedKube(lists=[ObjectList([pod("a", 1)], "1")], watches=[[WatchEvent("ADDED", pod("b", 2))]])
    inf = Informer(kube, PODS, resync_period=None)  # type: ignore[arg-type]

    class Boom(Recorder):
        def on_add(self, obj: JsonDict) -> None:
            raise RuntimeError(bad)

    inf.add_handler(Boom())
    await run_until_done(inf, kube)
    assert set(inf.cache) == {"ns/a", "ns/b"}


def with_managed_fields(obj: JsonDict) -> JsonDict:
    obj["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {}}]
    return obj


async def test_shared_pod_and_node_informers_cache_lean_objects() -> None:
    kube = ScriptedKube(
        lists=[ObjectList([with_managed_fields(pod("a", 10))], "10") for _ in range(2)],
        watches=[[WatchEvent("MODIFIED", with_managed_fields(pod("a", 11)))]],
    )
    shared = SharedInformers(kube, resync_period=None)  # type: ignore[arg-type]
    pods, groups = shared.of(PODS), shared.of(VOLCANO_PODGROUPS)
    assert pods.transform is drop_managed_fields and groups.transform is None
    await run_until_done(pods, kube)
    cached = pods.cache["ns/a"]
    assert cached["metadata"]["resourceVersion"] == "11" and "managedFields" not in cached["metadata"]
    await groups.list_once()  # PodGroups keep theirs: the LWS reconciler reads its field manager
    assert "managedFields" in groups.cache["ns/a"]["metadata"]
