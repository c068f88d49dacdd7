"""The `topobridge ui` server: an aiohttp app over one source of objects, read-only.

Sources:
* `FileSource`: a scenario file read once (`--from FILE`; with `--simulate`, the objects as
  `simulate` leaves them, `whatif.settled`). No watch, no updates.
* `ClusterSource`: the cluster through the user's kubeconfig, as `kubectl proxy` would reach
  it: one `controller.informer.Informer` (list, then watch) per kind `snapshot_io` reads, only
  the kinds the server serves, pods without the terminal ones. Nothing is ever written.

`Ui` holds the current `model.Model` and its version. Each change an informer reports (an add,
a delete, or an update the scheduler itself would act on: `relevant_update`) is recorded as
(before, after); after `SETTLE` seconds without another change (a burst of events is one
step) the model is brought up to date off the event loop: the changes applied to it
(`model.update`: the scheduler's incremental state, what the page draws recomputed as array
sums), or, for what cannot be applied so, built again, and then not again before as long as
that build took. Every model computation runs on one worker thread (the model is never read
and changed at once; a daemon thread, so a stop never waits for a what-if still running
there); each page listening on `/api/events` (Server-Sent Events) is told the new version,
and fetches what it draws again.

Routes: `/` and `/static/*` (the page, shipped in the package), `/api/view`, `/api/tree?id=`,
`/api/gangs?list=pending|placed&q=&offset=&limit=` (one page of a list, searched),
`/api/explain?gang=`, `POST /api/whatif` (the job's text), `/api/whatif/progress` (the
running what-if's step and seconds), `/api/events`. Bound to loopback,
the server answers only requests whose Host header names a loopback address (no DNS
rebinding), and a what-if only from its own page (Origin).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from importlib import resources
from ipaddress import ip_address
from typing import Any, Protocol, TypeVar

import structlog
from aiohttp import web

from topobridge.ui import model as view_model
from topobridge.ui import whatif
from translations.errors import failure_text

log = structlog.get_logger(__name__)

SETTLE = 0.1
"""Seconds without a change before the model is rebuilt."""
KEEPALIVE = 15.0
STATIC = {"app.js": "text/javascript", "style.css": "text/css", "index.html": "text/html"}
LOOPBACK_NAMES = ("localhost",)
T = TypeVar("T")


class Source(Protocol):
    label: str
    live: bool

    async def start(self, changed: Callable[[view_model.Change], None]) -> None: ...

    def objects(self) -> list[Mapping[str, Any]]: ...

    async def stop(self) -> None: ...


class FileSource:
    """Objects read once from a file (`--from FILE`)."""

    live = False

    def __init__(self, objects: list[Mapping[str, Any]], label: str) -> None:
        self._objects = objects
        self.label = label

    async def start(self, changed: Callable[[view_model.Change], None]) -> None:
        del changed  # a file does not change under the page

    def objects(self) -> list[Mapping[str, Any]]:
        return self._objects

    async def stop(self) -> None:
        return None


class ClusterSource:
    """The cluster, listed and watched through the user's kubeconfig (read-only)."""

    live = True

    def __init__(self, *, kubeconfig: str | None, context: str | None) -> None:
        self.kubeconfig, self.context = kubeconfig, context
        self.label = f"cluster (context {context})" if context else "cluster (current context)"
        self._informers: list[Any] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._kube: Any = None

    async def start(self, changed: Callable[[view_model.Change], None]) -> None:
        from controller.errors import ControllerError
        from controller.informer import Informer, drop_managed_fields
        from controller.kube import Kube
        from controller.resources import PODS
        from topobridge.snapshot_io import NOT_TERMINAL

        self._kube = await Kube.connect(kubeconfig=self.kubeconfig, context=self.context)
        for api, res in (await self._served()).items():
            inf = Informer(
                self._kube,
                res,
                field_selector=NOT_TERMINAL if res is PODS else None,
                resync_period=None,
                transform=drop_managed_fields,
            )
            inf.add_handler(Recorder(changed, relevant_update(api)))
            self._informers.append(inf)
        self._tasks = [asyncio.create_task(i.run(), name=f"ui-informer:{i.name}") for i in self._informers]
        synced = asyncio.ensure_future(asyncio.gather(*(i.synced.wait() for i in self._informers)))
        done, _ = await asyncio.wait({synced, *self._tasks}, return_when=asyncio.FIRST_COMPLETED)
        if synced not in done:  # an informer retries forever: one that ended has failed
            synced.cancel()
            for task in done:
                task.result()
            raise ControllerError(f"{next(iter(done)).get_name()} stopped")

    async def _served(self) -> dict[Any, Any]:
        """The kinds `snapshot_io` reads, each at the version this server serves (the
        scheduler's one table through discovery; a CRD not installed is left out)."""
        from controller.resources import served_resources

        assert self._kube is not None
        return dict(await served_resources(self._kube.serves))

    def objects(self) -> list[Mapping[str, Any]]:
        return [obj for inf in self._informers for obj in inf.cache.values()]

    async def stop(self) -> None:
        from controller.aiotasks import cancel_and_wait

        await cancel_and_wait(self._tasks, grace=5.0)
        if self._kube is not None:
            await self._kube.close()


@dataclass(frozen=True)
class Recorder:
    """An informer's EventHandler that hands each change on as (before, after): every add and
    delete, and the updates `relevant` admits (a resync, old is new, is no change)."""

    record: Callable[[view_model.Change], None]
    relevant: Callable[[dict[str, Any], dict[str, Any]], bool]

    def on_add(self, obj: dict[str, Any]) -> None:
        self.record((None, obj))

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        if old is not new and self.relevant(old, new):
            self.record((old, new))

    def on_delete(self, obj: dict[str, Any]) -> None:
        self.record((obj, None))


def relevant_update(api: Any) -> Callable[[dict[str, Any], dict[str, Any]], bool]:
    """Which updates of kind `api` can change what the page draws: the scheduler's own rule
    (`controller.runtime.cache.CHANGED`, what wakes a cycle), since the page draws the
    scheduler's view; every update of a kind that rule does not name."""
    from controller.placer.cluster import Kind
    from controller.runtime.cache import CHANGED

    return CHANGED.get(Kind(api), lambda _old, _new: True)


class Ui:
    """The current model, its version, and the pages listening for a new one."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.model: view_model.Model | None = None
        self.objects: list[Mapping[str, Any]] = []
        self.version = 0
        self.build_ms = 0.0
        self.update_ms = 0.0
        self.progress = whatif.Progress()
        self.changes: list[view_model.Change] = []
        """What the informers reported since the model was last brought up to date."""
        self.error = ""
        self.listeners: set[asyncio.Queue[int | None]] = set()
        self._stale = asyncio.Event()
        self._worker = Worker("ui-model")

    async def compute(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on the model's one worker thread."""
        return await asyncio.wrap_future(self._worker.submit(fn, *args))

    def changed(self, change: view_model.Change) -> None:
        self.changes.append(change)
        self._stale.set()

    async def refresh(self) -> bool:
        """Bring the model up to date with the changes reported: applied to it when it can
        take them (`model.update`), else built again from the objects (then True)."""
        if self.model is None:
            await self.rebuild()
            return True
        changes, self.changes = self.changes, []
        if not changes:  # a rebuild since has read them
            return False
        objects = list(self.source.objects())
        started = time.perf_counter()
        try:
            applied = await self.compute(view_model.update, self.model, changes)
        except Exception:  # a bug: the model may be half-changed, so it is built again
            log.exception("ui.update_failed")
            applied = False
        if not applied:
            await self.rebuild()
            return True
        self.objects, self.error = objects, ""
        self.update_ms = (time.perf_counter() - started) * 1000
        self.version += 1
        log.info("ui.model_updated", version=self.version, changes=len(changes), ms=round(self.update_ms))
        self._tell()
        return False

    async def rebuild(self) -> None:
        objects = list(self.source.objects())
        self.changes = []  # the objects hold them (the first list's adds among them)
        self._stale.clear()
        started = time.perf_counter()
        try:
            self.model = await self.compute(partial(view_model.build, objects, source=self.source.label))
        except Exception as exc:  # a snapshot the model cannot read: say so on the page
            log.exception("ui.build_failed")
            self.error = f"the snapshot could not be drawn: {failure_text(exc)}"
        else:
            self.objects, self.error = objects, ""
            self.build_ms = (time.perf_counter() - started) * 1000
            self.version += 1
            log.info("ui.model_built", version=self.version, objects=len(objects), ms=round(self.build_ms))
        self._tell()

    def _tell(self) -> None:
        for q in self.listeners:
            q.put_nowait(self.version)

    async def follow(self) -> None:
        """Bring the model up to date after each burst of changes, until cancelled; after a
        whole rebuild, wait as long as it took before the next, so a busy large cluster spends
        at most half its time on rebuilds."""
        while True:
            await self._stale.wait()
            await asyncio.sleep(SETTLE)
            self._stale.clear()
            if await self.refresh():
                await asyncio.sleep(self.build_ms / 1000)

    def close(self) -> bool:
        """Listeners told to go, the worker shut down; whether a call is still running on it."""
        for q in self.listeners:
            q.put_nowait(None)
        return self._worker.shutdown()


class Worker:
    """One daemon thread running calls in turn. A call cannot be interrupted (a what-if is the
    scheduler's own loop), so the thread is a daemon: a process told to stop leaves a call still
    running behind (ThreadPoolExecutor's threads are joined at interpreter exit, which kept a
    stopped ui alive for as long as a what-if ran)."""

    def __init__(self, name: str) -> None:
        self._calls: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = queue.SimpleQueue()
        self._running = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        self._calls.put((future, partial(fn, *args)))
        return future

    def _run(self) -> None:
        while (call := self._calls.get()) is not None:
            future, fn = call
            if not future.set_running_or_notify_cancel():
                continue
            self._running = True
            try:
                result = fn()
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)
            finally:
                self._running = False

    def shutdown(self) -> bool:
        """Calls not started are cancelled; the one running finishes unwatched. Whether a call
        is still running (`serve` says so to the process that must end without it)."""
        while True:
            try:
                call = self._calls.get_nowait()
            except queue.Empty:
                break
            if call is not None:
                call[0].cancel()
        self._calls.put(None)
        return self._running


# --- the app ------------------------------------------------------------------------------------

UI_KEY = web.AppKey("ui", Ui)
LOOPBACK_KEY = web.AppKey("loopback", bool)


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1, or `localhost`."""
    name = host.strip("[]")
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ip_address(name).is_loopback
    except ValueError:
        return False


def make_app(ui: Ui, *, loopback: bool) -> web.Application:
    app = web.Application(middlewares=[_guard], client_max_size=whatif.MAX_TEXT + 1024)
    app[UI_KEY] = ui
    app[LOOPBACK_KEY] = loopback
    app.router.add_get("/", _index)
    app.router.add_get("/static/{name}", _static)
    app.router.add_get("/api/view", _view)
    app.router.add_get("/api/tree", _tree)
    app.router.add_get("/api/gangs", _gangs)
    app.router.add_get("/api/explain", _explain)
    app.router.add_post("/api/whatif", _whatif)
    app.router.add_get("/api/whatif/progress", _whatif_progress)
    app.router.add_get("/api/events", _events)
    app.on_shutdown.append(_close_streams)
    return app


@web.middleware
async def _guard(request: web.Request, handler: Any) -> web.StreamResponse:
    if request.app[LOOPBACK_KEY]:
        host = request.host.rsplit(":", 1)[0] if not request.host.endswith("]") else request.host
        if not is_loopback(host):
            return _error(421, f"Host {request.host!r}: this server answers only to a loopback name")
    if request.method == "POST":
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{request.scheme}://{request.host}":
            return _error(403, f"Origin {origin!r}: what-ifs are asked from this server's own page")
    response: web.StreamResponse = await handler(request)
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def _asset(name: str) -> str:
    return resources.files("topobridge.ui").joinpath("static", name).read_text(encoding="utf-8")


async def _index(request: web.Request) -> web.Response:
    return web.Response(text=_asset("index.html"), content_type="text/html")


async def _static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in STATIC:
        return _error(404, f"no asset {name!r}")
    return web.Response(text=_asset(name), content_type=STATIC[name])


def _model(request: web.Request) -> view_model.Model | web.Response:
    ui = request.app[UI_KEY]
    if ui.model is None:
        return _error(503, ui.error or "reading the snapshot: the page updates when it is ready")
    return ui.model


async def _view(request: web.Request) -> web.Response:
    ui = request.app[UI_KEY]
    m = _model(request)
    if isinstance(m, web.Response):
        return m
    data = await ui.compute(view_model.page, m)
    data.update(version=ui.version, live=ui.source.live, buildMs=round(ui.build_ms), error=ui.error)
    return _json(data)


async def _tree(request: web.Request) -> web.Response:
    ui = request.app[UI_KEY]
    m = _model(request)
    if isinstance(m, web.Response):
        return m
    ident = request.query.get("id", "")
    data = await ui.compute(view_model.subtree, m, ident)
    if data is None:
        return _error(404, f"id {ident!r}: no such domain")
    data["version"] = ui.version
    return _json(data)


async def _gangs(request: web.Request) -> web.Response:
    ui = request.app[UI_KEY]
    m = _model(request)
    if isinstance(m, web.Response):
        return m
    which = request.query.get("list", "pending")
    if which not in ("pending", "placed"):
        return _error(400, f"list {which!r}: one of pending, placed")
    numbers: dict[str, int] = {}
    for name, default in (("offset", 0), ("limit", view_model.GANGS_SHOWN)):
        raw = request.query.get(name, str(default))
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 9):
            return _error(400, f"{name} {raw!r}: a whole number")
        numbers[name] = int(raw)
    query = request.query.get("q", "")[:200]
    data = await ui.compute(view_model.gangs, m, which, query, numbers["offset"], numbers["limit"])
    data["version"] = ui.version
    return _json(data)


async def _explain(request: web.Request) -> web.Response:
    ui = request.app[UI_KEY]
    m = _model(request)
    if isinstance(m, web.Response):
        return m
    gang = request.query.get("gang", "")
    try:
        data = await ui.compute(view_model.explanation, m, gang)
    except Exception as exc:  # a bug: say so, never the exception's own text
        log.exception("ui.explain_failed", gang=gang)
        return _error(500, f"gang {gang!r}: {failure_text(exc)}")
    if data is None:
        return _error(404, f"gang {gang!r}: no such gang")
    return _json(data)


async def _whatif(request: web.Request) -> web.Response:
    ui = request.app[UI_KEY]
    m = _model(request)
    if isinstance(m, web.Response):
        return m
    text = await request.text()
    progress = ui.progress = whatif.Progress()  # what the page polls: the last what-if asked
    try:
        data = await ui.compute(partial(whatif.what_if, progress=progress), ui.objects, text)
    except Exception as exc:  # a bug: say so, never the exception's own text
        log.exception("ui.whatif_failed")
        data = {"error": f"{whatif.PASTED}: {failure_text(exc)}"}
    finally:
        progress.done()
    data["version"] = ui.version
    return _json(data, status=400 if "error" in data else 200)


async def _whatif_progress(request: web.Request) -> web.Response:
    """Where the last what-if is: its step, and the seconds since it was asked."""
    return _json(request.app[UI_KEY].progress.to_dict())


async def _events(request: web.Request) -> web.StreamResponse:
    ui = request.app[UI_KEY]
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"})
    await resp.prepare(request)
    queue: asyncio.Queue[int | None] = asyncio.Queue()
    ui.listeners.add(queue)
    try:
        await resp.write(
            f"retry: 2000\nevent: hello\ndata: {json.dumps({'version': ui.version})}\n\n".encode()
        )
        async for version in _versions(queue):
            if version is None:
                await resp.write(b": keep-alive\n\n")
                continue
            await resp.write(f"event: changed\ndata: {json.dumps({'version': version})}\n\n".encode())
    except ConnectionResetError:  # the page went away
        pass
    finally:
        ui.listeners.discard(queue)
    return resp


async def _versions(queue: asyncio.Queue[int | None]) -> AsyncIterator[int | None]:
    """New versions as they come; None every KEEPALIVE seconds; ends when the server closes."""
    while True:
        try:
            version = await asyncio.wait_for(queue.get(), KEEPALIVE)
        except TimeoutError:
            yield None
            continue
        if version is None:
            return
        yield version


async def _close_streams(app: web.Application) -> None:
    app[UI_KEY].close()


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        text=json.dumps(data, separators=(",", ":")), status=status, content_type="application/json"
    )


# --- running ------------------------------------------------------------------------------------


async def _follow(ui: Ui) -> None:
    """The first model, then (a live source) one after each burst of changes."""
    await ui.rebuild()
    if ui.source.live:
        await ui.follow()
    else:
        await asyncio.Event().wait()


async def _until_stopped(work: Awaitable[None], stop: asyncio.Event) -> bool:
    """Await `work` unless `stop` is set first (then cancel it): whether it finished."""
    task = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return False
    task.result()
    return True


async def serve(
    source: Source,
    *,
    host: str,
    port: int,
    announce: Callable[[str], None],
    stop: asyncio.Event,
) -> bool:
    """Serve until `stop` is set: read the source, then answer pages and follow changes.
    Whether a model computation was left running on the worker thread: the process must then
    end without the interpreter's finalization (`cmd_ui`), which would stop that daemon thread
    wherever it is, inside numpy's C++ code too, and abort the process."""
    ui = Ui(source)
    left_running = False
    runner = web.AppRunner(make_app(ui, loopback=is_loopback(host)), shutdown_timeout=2.0, access_log=None)
    follower: asyncio.Task[None] | None = None
    try:
        # A cluster that cannot be read fails before anything is served; a stop while it is
        # still being read (an API server that never answers) ends the wait.
        if not await _until_stopped(source.start(ui.changed), stop):
            return False  # nothing was given to the worker yet
        await runner.setup()
        await web.TCPSite(runner, host, port).start()
        bound = runner.addresses[0]
        shown = f"[{bound[0]}]" if ":" in str(bound[0]) else str(bound[0])
        announce(f"http://{shown}:{bound[1]}/")
        # Every state ends on `stop`: the first model may take seconds on a large cluster.
        follower = asyncio.create_task(_follow(ui), name="ui-follow")
        await _until_stopped(follower, stop)
    finally:
        if follower is not None:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower
        left_running = ui.close()
        await runner.cleanup()
        await source.stop()
    return left_running
