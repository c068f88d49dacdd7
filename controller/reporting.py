"""Tell users, on their own objects, what topobridge did: core/v1 Events and status conditions.

Events are best effort (a failure is logged, never fails a reconcile) and correlated as
client-go's EventCorrelator does it, in its order:
1. aggregate: the tenth distinct message of one (object, type, reason) within ten minutes, and
   every one after it, goes to one Event whose message is `(combined from similar events): `
   and the latest text;
2. dedupe: the same (object, type, reason, message) within ten minutes bumps the existing
   Event's count (and lastTimestamp) instead of creating another;
3. spam filter: each object has a bucket of 25 Events, refilled by one every five minutes;
   what finds it empty is dropped (counted in `topobridge_events_dropped_total`).
Reconcilers emit Events only when they change something or their verdict changes, so periodic
resyncs do not spam.

Conditions are upserted by type into `status.conditions` with a JSON merge patch that
carries the resourceVersion read, so a concurrent writer's conditions are never clobbered
(a conflict is retried by the caller's work queue).
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import structlog

from controller import metrics
from controller.clock import Clock, MonotonicClock
from controller.errors import ControllerError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import EVENTS, Resource

log = structlog.get_logger(__name__)

COMPONENT = "topobridge"
EventType = Literal["Normal", "Warning"]
_AGGREGATE_WINDOW = 600.0
_CACHE_SIZE = 4096
_MESSAGE_LIMIT = 1024
SIMILAR_MAX = 10
"""Distinct messages of one (object, type, reason) in the window before they are combined."""
COMBINED_PREFIX = "(combined from similar events): "
SPAM_BURST = 25
"""Events an object may get at once (client-go's defaultSpamBurst)."""
SPAM_REFILL_SECONDS = 300.0
"""One more Event per object every this many seconds (client-go's defaultSpamQPS, 1/300)."""


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def object_reference(obj: JsonDict) -> JsonDict:
    meta = obj.get("metadata") or {}
    ref = {
        "apiVersion": obj.get("apiVersion", ""),
        "kind": obj.get("kind", ""),
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "resourceVersion": meta.get("resourceVersion", ""),
    }
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    return ref


@dataclass
class _Seen:
    name: str
    namespace: str
    count: int
    at: float


@dataclass
class _Similar:
    since: float
    messages: set[str]


@dataclass
class _Bucket:
    tokens: float
    at: float

    def take(self, now: float) -> bool:
        self.tokens = min(float(SPAM_BURST), self.tokens + (now - self.at) / SPAM_REFILL_SECONDS)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


class EventRecorder:
    """Writes core/v1 Events about objects, aggregating repeats."""

    def __init__(self, kube: Kube, *, instance: str = "", clock: Clock | None = None) -> None:
        self.kube = kube
        self.instance = instance
        self.clock = clock or MonotonicClock()
        self._seen: OrderedDict[tuple[str, str, str, str], _Seen] = OrderedDict()
        self._similar: OrderedDict[tuple[str, str, str], _Similar] = OrderedDict()
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def _aggregate(self, subject: str, type_: str, reason: str, message: str, now: float) -> tuple[str, str]:
        """(the message to write, the message part of its dedupe key): step 1 of the module doc."""
        key = (subject, type_, reason)
        similar = self._similar.get(key)
        if similar is None or now - similar.since >= _AGGREGATE_WINDOW:
            similar = self._similar[key] = _Similar(now, set())
        self._similar.move_to_end(key)
        while len(self._similar) > _CACHE_SIZE:
            self._similar.popitem(last=False)
        similar.messages.add(message)
        if len(similar.messages) >= SIMILAR_MAX:
            return COMBINED_PREFIX + message, COMBINED_PREFIX
        return message, message

    def _allowed(self, subject: str, now: float) -> bool:
        """Step 3 of the module doc: a token from the object's bucket."""
        bucket = self._buckets.get(subject)
        if bucket is None:
            bucket = self._buckets[subject] = _Bucket(float(SPAM_BURST), now)
        self._buckets.move_to_end(subject)
        while len(self._buckets) > _CACHE_SIZE:
            self._buckets.popitem(last=False)
        return bucket.take(now)

    async def event(self, obj: JsonDict, type_: EventType, reason: str, message: str) -> None:
        ref = object_reference(obj)
        message = message if len(message) <= _MESSAGE_LIMIT else message[: _MESSAGE_LIMIT - 3] + "..."
        # Events about cluster-scoped objects live in `default`, as client-go files them.
        namespace = ref.get("namespace") or "default"
        subject = str(ref["uid"] or ref["name"])
        now = self.clock.now()
        message, dedupe = self._aggregate(subject, type_, reason, message, now)
        if not self._allowed(subject, now):
            metrics.EVENTS_DROPPED.inc()
            return
        key = (subject, type_, reason, dedupe)
        stamp = now_rfc3339()
        try:
            seen = self._seen.get(key)
            if seen is not None and now - seen.at < _AGGREGATE_WINDOW:
                try:
                    await self.kube.merge_patch(
                        EVENTS,
                        seen.name,
                        {"count": seen.count + 1, "lastTimestamp": stamp, "message": message},
                        namespace=seen.namespace,
                    )
                    seen.count += 1
                    seen.at = now
                    self._seen.move_to_end(key)
                    return
                except NotFoundError:
                    pass  # expired on the server: create a fresh one
            name = f"{ref['name']}.{secrets.token_hex(8)}"
            body: JsonDict = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": ref,
                "reason": reason,
                "message": message,
                "type": type_,
                "source": {"component": COMPONENT},
                "firstTimestamp": stamp,
                "lastTimestamp": stamp,
                "count": 1,
                "reportingComponent": COMPONENT,
                "reportingInstance": self.instance or COMPONENT,
            }
            await self.kube.create(EVENTS, body, namespace=namespace)
            self._seen[key] = _Seen(name, namespace, 1, now)
            while len(self._seen) > _CACHE_SIZE:
                self._seen.popitem(last=False)
        except ControllerError as exc:
            log.warning(
                "event.failed",
                object=f"{ref['kind']} {ref.get('namespace', '')}/{ref['name']}",
                reason=reason,
                error=str(exc),
            )


def find_condition(obj: JsonDict, type_: str) -> JsonDict | None:
    for cond in ((obj.get("status") or {}).get("conditions")) or []:
        if isinstance(cond, dict) and cond.get("type") == type_:
            return cond
    return None


def condition(
    type_: str, status: bool, reason: str, message: str, *, generation: int | None = None
) -> JsonDict:
    out: JsonDict = {
        "type": type_,
        "status": "True" if status else "False",
        "reason": reason,
        "message": message[: _MESSAGE_LIMIT * 8],
        "lastTransitionTime": now_rfc3339(),
    }
    if generation is not None:
        out["observedGeneration"] = generation
    return out


def same_condition(a: JsonDict | None, b: JsonDict) -> bool:
    if a is None:
        return False
    return all(a.get(k) == b.get(k) for k in ("status", "reason", "message", "observedGeneration"))


async def upsert_condition(kube: Kube, res: Resource, obj: JsonDict, cond: JsonDict) -> bool:
    """Put `cond` into obj's status.conditions (by type). False when nothing changed."""
    old = find_condition(obj, cond["type"])
    if same_condition(old, cond):
        return False
    if old is not None and old.get("status") == cond["status"]:
        cond = {**cond, "lastTransitionTime": old.get("lastTransitionTime", cond["lastTransitionTime"])}
    conditions: list[Any] = [
        c
        for c in ((obj.get("status") or {}).get("conditions") or [])
        if not (isinstance(c, dict) and c.get("type") == cond["type"])
    ]
    conditions.append(cond)
    meta = obj.get("metadata") or {}
    patch = {
        "metadata": {"resourceVersion": meta.get("resourceVersion")},
        "status": {"conditions": conditions},
    }
    await kube.merge_patch(
        res,
        meta["name"],
        patch,
        namespace=meta.get("namespace"),
        subresource="status" if res.status_subresource else None,
    )
    return True
