"""Keep a local cache of one resource in step with the API server, and tell handlers what changed.

The loop, as client-go's reflector runs it:
1. list (all pages) and replace the cache, reporting adds, updates and deletes against the
   previous cache (so a re-list after an outage still reports the deletes it missed);
2. watch from the list's resourceVersion, applying events and remembering each event's (and
   bookmark's) resourceVersion;
3. when the server ends the watch, watch again from the last version; on 410 Gone, re-list;
   on any other failure, back off exponentially with jitter (`LIST_WATCH`, the one `Backoff`
   rule of `controller.placer.backoff`), then re-watch (or re-list when no version is known).
Every `resync_period` each cached object is reported again as an update, so a level-based
reconciler revisits everything even if an event was lost.

Handlers only turn objects into keys for a work queue; they must not block or call the API.

`SharedInformers` holds one informer per resource for the whole process: the webhook's
cluster view, the reconcilers and the scheduler ask it for what they read, and every resource
is listed and watched once however many parts read it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from controller.aiotasks import cancel_and_wait, spawn
from controller.clock import Clock, MonotonicClock
from controller.errors import ControllerError, GoneError, TransportError
from controller.kube import JsonDict, Kube, WatchEvent
from controller.placer.backoff import Backoff
from controller.resources import NODES, PODS, Resource
from translations import collector

log = structlog.get_logger(__name__)

IndexFn = Callable[[JsonDict], Iterable[str]]


def object_key(obj: JsonDict) -> str:
    """`namespace/name`, or `name` for cluster-scoped objects."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


def split_key(key: str) -> tuple[str | None, str]:
    ns, sep, name = key.partition("/")
    return (ns, name) if sep else (None, key)


class EventHandler(Protocol):
    """Reacts to cache changes; implementations only enqueue keys."""

    def on_add(self, obj: JsonDict) -> None: ...

    def on_update(self, old: JsonDict, new: JsonDict) -> None: ...

    def on_delete(self, obj: JsonDict) -> None: ...


@dataclass
class FuncHandler:
    """An EventHandler from one function that receives the (new or deleted) object."""

    fn: Callable[[JsonDict], None]
    on_resync: bool = True
    """Whether resync updates (old is new) reach `fn`."""

    def on_add(self, obj: JsonDict) -> None:
        self.fn(obj)

    def on_update(self, old: JsonDict, new: JsonDict) -> None:
        if old is new and not self.on_resync:
            return
        if old is not new:
            self.fn(old)  # a label change can move the object between keys; tell both
        self.fn(new)

    def on_delete(self, obj: JsonDict) -> None:
        self.fn(obj)


@dataclass
class ChangeHandler:
    """An EventHandler that calls `fn` for every add and delete, and for the updates `relevant`
    admits (what a status heartbeat changes can wake nobody); a resync (old is new) is no
    change."""

    fn: Callable[[], None]
    relevant: Callable[[JsonDict, JsonDict], bool]

    def on_add(self, obj: JsonDict) -> None:
        self.fn()

    def on_update(self, old: JsonDict, new: JsonDict) -> None:
        if old is not new and self.relevant(old, new):
            self.fn()

    def on_delete(self, obj: JsonDict) -> None:
        self.fn()


LIST_WATCH = Backoff(0.5, 30.0, jitter=0.5)
"""Between failed list/watch attempts: 0.5 s doubling to 30 s, each scaled by a random factor
in [0.5, 1] so many informers failing together do not retry in step."""


WATCH_TIMEOUT = 300
"""Seconds a watch asks to last, before jitter (client-go's minWatchTimeout: 5 minutes)."""


class Informer:
    """List+watch one resource into `cache`; see the module docstring."""

    def __init__(
        self,
        kube: Kube,
        resource: Resource,
        *,
        namespace: str | None = None,
        field_selector: str | None = None,
        resync_period: float | None = 300.0,
        backoff: Backoff = LIST_WATCH,
        clock: Clock | None = None,  # None outside tests
        transform: Callable[[JsonDict], JsonDict] | None = None,
    ) -> None:
        self.kube = kube
        self.resource = resource
        self.transform = transform
        """Applied to every listed or watched object before it is cached (client-go's
        SetTransform): drop what no reader needs, so the cache holds lean objects."""
        self.namespace = namespace
        self.field_selector = field_selector
        self.resync_period = resync_period
        self.backoff = backoff
        self.clock = clock or MonotonicClock()
        self.name = str(resource)
        self.cache: dict[str, JsonDict] = {}
        self.resource_version: str = ""
        self.synced = asyncio.Event()
        self.relists = 0
        self._handlers: list[EventHandler] = []
        self._indexers: dict[str, IndexFn] = {}
        self._indices: dict[str, dict[str, set[str]]] = {}
        self._rng = random.Random()
        self._log = log.bind(informer=self.name)

    # --- wiring ----------------------------------------------------------------------

    def add_handler(self, handler: EventHandler) -> None:
        self._handlers.append(handler)
        for obj in self.cache.values():  # a late handler still hears about what is cached
            handler.on_add(obj)

    def add_index(self, name: str, fn: IndexFn) -> None:
        """Maintain `index(name, value)` lookups: fn(obj) gives the values obj is filed under."""
        self._indexers[name] = fn
        idx: dict[str, set[str]] = {}
        for key, obj in self.cache.items():
            for v in fn(obj):
                idx.setdefault(v, set()).add(key)
        self._indices[name] = idx

    def by_index(self, name: str, value: str) -> list[JsonDict]:
        keys = self._indices[name].get(value, set())
        return [self.cache[k] for k in sorted(keys) if k in self.cache]

    def get(self, key: str) -> JsonDict | None:
        return self.cache.get(key)

    def items(self) -> list[JsonDict]:
        return list(self.cache.values())

    # --- cache updates ---------------------------------------------------------------

    def _index_remove(self, key: str, obj: JsonDict) -> None:
        for name, fn in self._indexers.items():
            idx = self._indices[name]
            for v in fn(obj):
                keys = idx.get(v)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del idx[v]

    def _index_add(self, key: str, obj: JsonDict) -> None:
        for name, fn in self._indexers.items():
            idx = self._indices[name]
            for v in fn(obj):
                idx.setdefault(v, set()).add(key)

    def _upsert(self, obj: JsonDict) -> None:
        key = object_key(obj)
        old = self.cache.get(key)
        if old is not None:
            self._index_remove(key, old)
        self.cache[key] = obj
        self._index_add(key, obj)
        for h in self._handlers:
            self._call(h.on_add, obj) if old is None else self._call(h.on_update, old, obj)

    def _remove(self, obj: JsonDict) -> None:
        key = object_key(obj)
        old = self.cache.pop(key, None)
        if old is None:
            return
        self._index_remove(key, old)
        for h in self._handlers:
            self._call(h.on_delete, obj)

    def _replace(self, items: list[JsonDict]) -> None:
        fresh = {object_key(o): o for o in items}
        for key in [k for k in self.cache if k not in fresh]:
            self._remove(self.cache[key])
        for key, obj in fresh.items():
            old = self.cache.get(key)
            if old is not None and _rv(old) == _rv(obj):
                continue  # unchanged since we last saw it
            self._upsert(obj)

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:  # a broken handler must not stop the watch
            self._log.exception("informer.handler_failed")

    def _apply(self, event: WatchEvent) -> None:
        rv = _rv(event.object)
        if rv:
            self.resource_version = rv
        if event.type == "BOOKMARK":
            return
        if self.transform is not None:
            event = WatchEvent(event.type, self.transform(event.object))
        if event.type == "DELETED":
            self._remove(event.object)
        else:
            self._upsert(event.object)

    def resync(self) -> None:
        """Report every cached object again (old is new), as client-go's resync does."""
        for obj in list(self.cache.values()):
            for h in self._handlers:
                self._call(h.on_update, obj, obj)

    # --- the loop --------------------------------------------------------------------

    async def list_once(self) -> None:
        listed = await self.kube.list(
            self.resource,
            namespace=self.namespace,
            field_selector=self.field_selector,
        )
        # One batch of objects that live on (collector.paused's rule): a list of a large
        # cluster would otherwise set off full collections walking every object built so far.
        with collector.paused():
            items = listed.items if self.transform is None else [self.transform(o) for o in listed.items]
            self._replace(items)
        self.resource_version = listed.resource_version
        self.relists += 1
        self.synced.set()

    async def run(self) -> None:
        """Run until cancelled."""
        if self.resync_period:
            resyncer = asyncio.create_task(self._resync_loop(), name=f"resync:{self.name}")
        else:
            resyncer = None
        try:
            await self._list_watch_loop()
        finally:
            if resyncer is not None:
                resyncer.cancel()
                await asyncio.gather(resyncer, return_exceptions=True)

    async def _list_watch_loop(self) -> None:
        failures = 0
        need_list = True
        while True:
            try:
                if need_list:
                    await self.list_once()
                    need_list = False
                    if failures:
                        self._log.info("informer.recovered", after_failures=failures)
                    failures = 0
                async for event in self.kube.watch(
                    self.resource,
                    resource_version=self.resource_version,
                    namespace=self.namespace,
                    field_selector=self.field_selector,
                    timeout_seconds=self._watch_timeout(),
                ):
                    self._apply(event)
                    failures = 0
            except GoneError:
                self._log.info("informer.gone", resource_version=self.resource_version)
                need_list = True
                continue
            except (ControllerError, TransportError) as exc:
                failures += 1
                delay = self.backoff.delay(failures, self._rng)
                self._log.warning(
                    "informer.failed", error=str(exc), attempt=failures, retry_in=round(delay, 3)
                )
                await self.clock.sleep(delay)
                if not self.resource_version:
                    need_list = True

    def _watch_timeout(self) -> int:
        # Spread the watches' end times so many informers do not reconnect in lockstep.
        return int(WATCH_TIMEOUT * (1 + self._rng.random()))

    async def _resync_loop(self) -> None:
        assert self.resync_period
        await self.synced.wait()
        while True:
            await self.clock.sleep(self.resync_period)
            self.resync()


def _rv(obj: JsonDict) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def drop_managed_fields(obj: JsonDict) -> JsonDict:
    """The object without `metadata.managedFields`: server-side apply's bookkeeping, often
    the largest part of a pod or node, which nothing here reads for those kinds."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


LEAN: dict[Resource, Callable[[JsonDict], JsonDict]] = {PODS: drop_managed_fields, NODES: drop_managed_fields}
"""The shared informers' transform per resource: pods and nodes are the bulk of any cache."""


class SharedInformers:
    """One informer per resource for the whole process, run by one root task (`run`).

    A part asks `of(resource)` for what it reads; the first ask creates the informer and
    `run` starts it at once (parts built later, like the leader's, join a running set). The
    same resource is never listed or watched twice.
    """

    def __init__(self, kube: Kube, *, resync_period: float | None, clock: Clock | None = None) -> None:
        self.kube = kube
        self.resync_period = resync_period
        self.clock = clock or MonotonicClock()
        self._by_resource: dict[Resource, Informer] = {}
        self._added = asyncio.Event()

    def of(self, resource: Resource) -> Informer:
        inf = self._by_resource.get(resource)
        if inf is None:
            inf = Informer(
                self.kube,
                resource,
                resync_period=self.resync_period,
                clock=self.clock,
                transform=LEAN.get(resource),
            )
            self._by_resource[resource] = inf
            self._added.set()
        return inf

    def resources(self) -> list[Resource]:
        """What is watched, in the order it was first asked for."""
        return list(self._by_resource)

    def all(self) -> list[Informer]:
        return list(self._by_resource.values())

    def synced(self, resources: Iterable[Resource]) -> bool:
        return all(self.of(r).synced.is_set() for r in resources)

    async def wait_synced(self, resources: Iterable[Resource]) -> None:
        await asyncio.gather(*(self.of(r).synced.wait() for r in resources))

    async def run(self, *, grace: float = 5.0) -> None:
        """Run every informer asked for so far, and each one asked for later, until cancelled."""
        tasks: dict[Resource, asyncio.Task[None]] = {}
        try:
            while True:
                self._added.clear()
                for res, inf in self._by_resource.items():
                    if res not in tasks:
                        tasks[res] = spawn(f"informer:{inf.name}", inf.run())
                added = asyncio.ensure_future(self._added.wait())
                try:
                    done, _ = await asyncio.wait(
                        {added, *tasks.values()}, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    added.cancel()
                for task in done:
                    if task is not added:
                        # An informer retries forever: one that ended has failed (or was cancelled).
                        task.result()
                        raise RuntimeError(f"informer {task.get_name()} stopped")
        finally:
            await cancel_and_wait(list(tasks.values()), grace=grace)
