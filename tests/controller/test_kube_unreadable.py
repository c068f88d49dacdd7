"""Objects the API server stores but topobridge cannot read whole: a value nested deeper than
`translations.jsontext.MAX_DEPTH` (a pod's `managedFields[].fieldsV1` can nest 10,000 levels).
Before, the standard library's parser raised RecursionError, which the read path did not
catch: the informer task ended and with it `topobridge run`. Now a too-deep `fieldsV1` is
dropped and the object kept; a too-deep value anywhere else leaves that object out; the
others are read as before, and each is logged and counted."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from prometheus_client import REGISTRY

from controller.errors import UnreadableObjectError
from controller.informer import Informer
from controller.kube import JsonDict, Kube
from controller.resources import PODS, VOLCANO_PODGROUPS

DEEP = b'{"f:a":' * 1_100 + b"{}" + b"}" * 1_100


def _pod(name: str, *, fields_v1: bytes = b"{}") -> bytes:
    return (
        b'{"metadata": {"name": "' + name.encode() + b'", "namespace": "ns", "resourceVersion": "1",'
        b' "managedFields": [{"manager": "tenant", "operation": "Update", "fieldsV1": ' + fields_v1 + b"}]},"
        b' "spec": {"schedulerName": "topobridge", "containers": [{"name": "c", "image": "i"}]}}'
    )


def _podgroup(name: str, *, extra: bytes = b"{}") -> bytes:
    return (
        b'{"metadata": {"name": "'
        + name.encode()
        + b'", "namespace": "ns"}, "spec": {"minMember": 1, "x": '
        + extra
        + b"}}"
    )


def _list(items: Sequence[bytes]) -> bytes:
    return b'{"kind": "List", "metadata": {"resourceVersion": "7"}, "items": [' + b", ".join(items) + b"]}"


def _event(etype: str, obj: bytes) -> bytes:
    return b'{"type": "' + etype.encode() + b'", "object": ' + obj + b"}\n"


class _Content:
    def __init__(self, data: bytes, chunk: int) -> None:
        self.data, self.chunk = data, chunk

    async def readany(self) -> bytes:
        out, self.data = self.data[: self.chunk], self.data[self.chunk :]
        return out


class _WatchResponse:
    status = 200

    def __init__(self, data: bytes, chunk: int) -> None:
        self.content = _Content(data, chunk)

    async def __aenter__(self) -> _WatchResponse:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


class CannedKube(Kube):
    """Answers every request with `answer` and every watch with `stream`, as the API server would."""

    def __init__(self, answer: bytes, stream: bytes = b"", chunk: int = 4096) -> None:
        super().__init__(api=None, owns_api=False)
        self.answer, self.stream, self.chunk = answer, stream, chunk

    async def _send(self, *args: Any) -> tuple[int, bytes]:
        return 200, self.answer

    async def _open_watch(self, *args: Any) -> Any:
        return _WatchResponse(self.stream, self.chunk)


def _counted(resource: str, outcome: str) -> float:
    labels = {"resource": resource, "outcome": outcome}
    return REGISTRY.get_sample_value("topobridge_objects_unreadable_total", labels) or 0.0


async def test_a_list_keeps_a_pod_whose_fields_v1_is_too_deep_without_it() -> None:
    before = _counted("pods", "trimmed")
    kube = CannedKube(_list([_pod("a"), _pod("deep", fields_v1=DEEP), _pod("b")]))
    listed = await kube.list(PODS)
    names = [p["metadata"]["name"] for p in listed.items]
    assert names == ["a", "deep", "b"]
    deep = listed.items[1]
    assert deep["metadata"]["managedFields"] == [{"manager": "tenant", "operation": "Update"}]
    assert deep["spec"]["schedulerName"] == "topobridge"
    assert listed.items[0]["metadata"]["managedFields"][0]["fieldsV1"] == {}
    assert _counted("pods", "trimmed") == before + 1


async def test_a_list_leaves_out_an_object_too_deep_anywhere_else() -> None:
    before = _counted("podgroups", "left_out")
    kube = CannedKube(_list([_podgroup("a"), _podgroup("deep", extra=DEEP), _podgroup("b")]))
    listed = await kube.list(VOLCANO_PODGROUPS)
    assert [p["metadata"]["name"] for p in listed.items] == ["a", "b"]
    assert listed.resource_version == "7"
    assert _counted("podgroups", "left_out") == before + 1


async def test_a_get_of_an_object_too_deep_names_it() -> None:
    kube = CannedKube(_podgroup("deep", extra=DEEP))
    with pytest.raises(UnreadableObjectError, match="PodGroup ns/deep nests a value deeper than 512 levels"):
        await kube.get(VOLCANO_PODGROUPS, "deep", namespace="ns")


async def test_a_watch_trims_reports_deleted_and_reads_on() -> None:
    stream = b"".join(
        [
            _event("ADDED", _pod("deep", fields_v1=DEEP)),
            _event("ADDED", _podgroup("never-cached", extra=DEEP)),
            _event("MODIFIED", _podgroup("was-cached", extra=DEEP)),
            _event("ADDED", _podgroup("after")),
        ]
    )
    kube = CannedKube(b"{}", stream, chunk=1000)  # events split across chunks
    got = [(e.type, e.object["metadata"]["name"]) async for e in kube.watch(PODS, resource_version="1")]
    assert got == [("ADDED", "deep"), ("DELETED", "was-cached"), ("ADDED", "after")]


async def test_a_watch_reads_an_event_longer_than_aiohttps_line_limit() -> None:
    """aiohttp's `readline` refused a line over 128 KiB (a pod with 250 KB of annotations) with
    an error outside the ClientError tree: the informer ended."""
    big: JsonDict = {"metadata": {"name": "big", "annotations": {"a": "x" * 250_000}}}
    kube = CannedKube(b"{}", _event("ADDED", json.dumps(big).encode()), chunk=65536)
    got = [e.object async for e in kube.watch(PODS, resource_version="1")]
    assert got[0]["metadata"]["annotations"]["a"] == "x" * 250_000


async def test_the_informer_caches_around_the_unreadable_object() -> None:
    kube = CannedKube(
        _list([_podgroup("a"), _podgroup("deep", extra=DEEP), _pod("deep-pod", fields_v1=DEEP)])
    )
    inf = Informer(kube, VOLCANO_PODGROUPS, resync_period=None)
    await inf.list_once()
    assert sorted(inf.cache) == ["ns/a", "ns/deep-pod"]
    assert inf.synced.is_set()
