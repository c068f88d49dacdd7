"""`topobridge ui`'s server over a scenario file: every route, the guards (loopback Host, the
page's own Origin for a what-if), the Server-Sent Events a page redraws on, and the page's
assets: shipped as package data, fetching nothing from elsewhere."""

from __future__ import annotations

import asyncio
import fnmatch
import io
import re
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from ui_objects import demo, job

from topobridge.ui.server import (
    STATIC,
    FileSource,
    Recorder,
    Ui,
    is_loopback,
    make_app,
    relevant_update,
    serve,
)
from topobridge.ui.whatif import MAX_TEXT
from translations import kinds

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "topobridge" / "ui" / "static"
GANG = "koordinator:default/high-priority-training"


@pytest.fixture
async def served() -> AsyncIterator[tuple[TestClient[Any, Any], Ui]]:
    ui = Ui(FileSource(demo("example-2"), "example-2.yaml"))
    await ui.rebuild()
    client: TestClient[Any, Any] = TestClient(TestServer(make_app(ui, loopback=True), host="127.0.0.1"))
    await client.start_server()
    try:
        yield client, ui
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        pytest.param("/", 200, 'src="static/app.js"', id="the-page"),
        pytest.param("/static/app.js", 200, "EventSource", id="the-script"),
        pytest.param("/static/style.css", 200, "--gang", id="the-style"),
        pytest.param("/static/secrets.txt", 404, "no asset 'secrets.txt'", id="no-other-file"),
        pytest.param("/api/view", 200, '"counts":{"nodes":12', id="the-view"),
        pytest.param("/api/tree?id=SpineLayer/spine-1", 200, '"id":"BlockLayer/block-3"', id="a-zoom"),
        pytest.param("/api/tree?id=nowhere", 404, "id 'nowhere': no such domain", id="no-such-domain"),
        pytest.param(f"/api/explain?gang={GANG}", 200, '"code":"WaitingForVictims"', id="an-explanation"),
        pytest.param(
            "/api/gangs?list=pending&q=HIGH-priority",
            200,
            f'"matched":1,"offset":0,"items":[{{"gang":"{GANG}"',
            id="a-search",
        ),
        pytest.param(
            "/api/gangs?list=pending&q=nothing-like-it", 200, '"matched":0,', id="a-search-without-match"
        ),
        pytest.param(
            "/api/gangs?list=placed&offset=5", 200, '"total":0,"matched":0,"offset":0', id="past-the-end"
        ),
        pytest.param(
            "/api/gangs?list=elsewhere", 400, "list 'elsewhere': one of pending, placed", id="no-such-list"
        ),
        pytest.param("/api/gangs?list=pending&limit=-1", 400, "limit '-1': a whole number", id="a-bad-limit"),
        pytest.param("/api/whatif/progress", 200, '"running":false', id="no-what-if-running"),
        pytest.param(
            "/api/explain?gang=default/ghost", 404, "gang 'default/ghost': no such gang", id="no-such-gang"
        ),
    ],
)
async def test_routes(served: tuple[TestClient[Any, Any], Ui], path: str, status: int, says: str) -> None:
    client, _ = served
    resp = await client.get(path)
    assert resp.status == status
    assert says in await resp.text()
    assert resp.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    ("body", "status", "key"),
    [
        pytest.param(job(2, "4"), 200, "gangs", id="a-job"),
        pytest.param("key: [unclosed", 400, "error", id="not-yaml"),
        pytest.param("x" * (MAX_TEXT + 1), 400, "error", id="too-long"),
    ],
)
async def test_a_what_if(served: tuple[TestClient[Any, Any], Ui], body: str, status: int, key: str) -> None:
    client, _ = served
    resp = await client.post("/api/whatif", data=io.BytesIO(body.encode()))
    assert resp.status == status
    data = await resp.json()
    assert key in data and data["version"] == 1


def _deep_pod(levels: int) -> str:
    """A pod as `kubectl get -o json` prints one the API server stored with a `fieldsV1` nested
    `levels` deep (written by hand: `json.dumps` recurses once per level)."""
    fields = '{"f:a": ' * levels + "{}" + "}" * levels
    managed = (
        f'{{"manager": "tenant", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {fields}}}'
    )
    meta = f'{{"name": "deep", "namespace": "whatif", "managedFields": [{managed}]}}'
    pod = f'{{"apiVersion": "v1", "kind": "Pod", "metadata": {meta}, "spec": {{"containers": []}}}}'
    return f'{{"apiVersion": "v1", "kind": "List", "items": [{pod}]}}'


@pytest.mark.parametrize("levels", [600, 1_025])
async def test_a_what_if_nested_past_the_reader_names_the_field(
    served: tuple[TestClient[Any, Any], Ui], levels: int
) -> None:
    """Found by hack/livefuzz.py pasting a stored pod: Python's JSON reader raised RecursionError
    (600 levels pass orjson, which the reader does not use), and the answer was "an unexpected
    RecursionError inside topobridge"."""
    client, _ = served
    resp = await client.post("/api/whatif", data=io.BytesIO(_deep_pod(levels).encode()))
    assert resp.status == 400
    assert (await resp.json())["error"] == (
        "the pasted job: items[0].metadata.managedFields[0].fieldsV1: Invalid value: "
        f"JSON nested {levels + 7} levels deep, more than the 512 levels allowed"
    )


@pytest.mark.parametrize(
    ("headers", "method", "status", "says"),
    [
        pytest.param(
            {"Host": "attacker.example:8401"}, "GET", 421, "answers only to a loopback name", id="rebinding"
        ),
        pytest.param({"Host": "localhost:8401"}, "GET", 200, "", id="localhost"),
        pytest.param({"Host": "[::1]:8401"}, "GET", 200, "", id="ipv6-loopback"),
        pytest.param({"Origin": "http://attacker.example"}, "POST", 403, "own page", id="foreign-origin"),
    ],
)
async def test_the_guards(
    served: tuple[TestClient[Any, Any], Ui], headers: dict[str, str], method: str, status: int, says: str
) -> None:
    client, _ = served
    path = "/api/whatif" if method == "POST" else "/api/view"
    resp = await client.request(method, path, headers=headers, data=job(2, "4") if method == "POST" else None)
    assert resp.status == status
    assert says in await resp.text()


async def test_a_page_hears_of_each_new_model(served: tuple[TestClient[Any, Any], Ui]) -> None:
    client, ui = served
    resp = await client.get("/api/events")
    assert resp.headers["Content-Type"] == "text/event-stream"
    hello = await _event(resp)
    assert hello == ("hello", '{"version": 1}')
    await ui.rebuild()
    assert await _event(resp) == ("changed", '{"version": 2}')
    resp.close()


async def _event(resp: Any) -> tuple[str, str]:
    fields: dict[str, str] = {}
    while True:
        line = (await asyncio.wait_for(resp.content.readline(), 10)).decode().rstrip("\n")
        if not line and "event" in fields:
            return fields["event"], fields["data"]
        name, _, value = line.partition(": ")
        fields[name] = value


async def test_before_the_first_model_the_page_is_told_to_wait() -> None:
    ui = Ui(FileSource([], "nothing"))
    client: TestClient[Any, Any] = TestClient(TestServer(make_app(ui, loopback=True), host="127.0.0.1"))
    await client.start_server()
    try:
        resp = await client.get("/api/view")
        assert resp.status == 503
        assert "the page updates when it is ready" in (await resp.json())["error"]
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        pytest.param("127.0.0.1", True, id="ipv4"),
        pytest.param("127.1.2.3", True, id="ipv4-range"),
        pytest.param("[::1]", True, id="ipv6"),
        pytest.param("localhost", True, id="name"),
        pytest.param("0.0.0.0", False, id="every-address"),
        pytest.param("192.0.2.7", False, id="an-address"),
        pytest.param("localhost.attacker.example", False, id="a-lookalike"),
    ],
)
def test_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def _node(heartbeat: str, *, labels: dict[str, str] | None = None, cpu: str = "8") -> dict[str, Any]:
    return {
        "metadata": {"name": "n1", "resourceVersion": heartbeat, "labels": labels or {}},
        "status": {
            "allocatable": {"cpu": cpu},
            "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": heartbeat}],
        },
    }


def _podgroup(phase: str) -> dict[str, Any]:
    return {"metadata": {"name": "g", "namespace": "default"}, "status": {"phase": phase}}


@pytest.mark.parametrize(
    ("api", "old", "new", "wakes"),
    [
        pytest.param(kinds.NODE, _node("t1"), _node("t2"), False, id="a-node-heartbeat"),
        pytest.param(kinds.NODE, _node("t1"), _node("t2", labels={"rack": "r1"}), True, id="a-node-label"),
        pytest.param(kinds.NODE, _node("t1"), _node("t2", cpu="4"), True, id="a-node-allocatable"),
        pytest.param(
            kinds.VOLCANO_PODGROUP, _podgroup("Pending"), _podgroup("Running"), True, id="a-podgroup-status"
        ),
    ],
)
def test_the_page_is_rebuilt_only_for_what_the_scheduler_would_act_on(
    api: kinds.ApiKind, old: dict[str, Any], new: dict[str, Any], wakes: bool
) -> None:
    woken: list[Any] = []
    handler = Recorder(woken.append, relevant_update(api))
    handler.on_update(old, new)
    assert woken == ([(old, new)] if wakes else [])
    handler.on_update(new, new)  # a resync
    handler.on_add(new)
    handler.on_delete(new)
    assert woken[-2:] == [(None, new), (new, None)] and len(woken) == int(wakes) + 2


def test_every_asset_is_package_data_and_fetches_nothing_from_elsewhere() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    shipped = patterns["topobridge.ui"]
    files = sorted(p.name for p in ASSETS.iterdir())
    assert files == sorted(STATIC)
    for name in files:
        assert any(fnmatch.fnmatch(f"static/{name}", pat) for pat in shipped), name
        text = (ASSETS / name).read_text()
        urls = set(re.findall(r"(?:https?:)?//[\w.-]+\.\w+[^\s\"'`)]*", text))
        assert urls <= {"http://www.w3.org/2000/svg"}, (name, urls)


class _NeverSynced:
    """A cluster whose informers never finish their first list (an API server that hangs, or
    one whose every list fails and is retried)."""

    label, live = "hanging cluster", True

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.stopped = False

    async def start(self, changed: Any) -> None:
        self.started.set()
        await asyncio.Event().wait()

    def objects(self) -> list[Any]:
        return []

    async def stop(self) -> None:
        self.stopped = True


async def test_a_stop_while_the_cluster_is_still_read_ends_the_ui() -> None:
    """Before, `serve` awaited the first list before it looked at `stop`: SIGTERM was ignored
    until the cluster answered, which a cluster the ui cannot read never does."""
    source = _NeverSynced()
    stop = asyncio.Event()
    served = asyncio.create_task(
        serve(source, host="127.0.0.1", port=0, announce=lambda _url: None, stop=stop)
    )
    await asyncio.wait_for(source.started.wait(), 5)
    stop.set()
    await asyncio.wait_for(served, 5)
    assert source.stopped


async def test_a_change_is_applied_to_the_model_and_the_page_told() -> None:
    objects = demo("example-2")
    ui = Ui(FileSource(objects, "example-2.yaml"))
    await ui.rebuild()
    old = next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == "low-priority-pod-5")
    objects.remove(old)
    ui.changed((old, None))
    listener: asyncio.Queue[int | None] = asyncio.Queue()
    ui.listeners.add(listener)
    assert await ui.refresh() is False  # applied, not rebuilt
    assert listener.get_nowait() == ui.version == 2
    assert ui.model is not None and "default/low-priority-pod-5" not in ui.model.pod_rows
    assert all(o is not old for o in ui.objects)  # the what-if reads the objects after the change


async def test_changes_a_rebuild_has_read_are_not_applied_again() -> None:
    """A live source reports its first list as adds: the first build reads them all, and the
    follower must not build again for them (before: a second whole build at start)."""
    objects = demo("example-2")
    ui = Ui(FileSource(objects, "example-2.yaml"))
    for obj in objects:
        ui.changed((None, obj))
    await ui.rebuild()
    assert ui.version == 1 and ui.changes == []
    assert await ui.refresh() is False and ui.version == 1
