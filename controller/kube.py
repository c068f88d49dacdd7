"""The one I/O seam to the Kubernetes API: generic verbs over `Resource`s, plain dicts in and out.

Built on kubernetes_asyncio's ApiClient (kubeconfig or in-cluster credentials, TLS, token
refresh) but only its transport is used: every call goes through `_request`, which maps
ApiException and aiohttp errors to `controller.errors` at the boundary, applies the
client-side QPS limit, enforces a per-request timeout, and records (group, resource, verb)
so the generated ClusterRole can be checked against what the code really calls.

Objects come back as plain dicts; pure code parses them once with the `translations` models.

Write verbs:
* `create`, `replace` (PUT, optimistic through metadata.resourceVersion), `delete`.
* `merge_patch`: `application/merge-patch+json` (lists are replaced whole), for CRDs and status.
* `strategic_patch`: `application/strategic-merge-patch+json`, for built-in kinds whose lists
  merge by key (a pod's status.conditions merge by `type`).
* `apply`: server-side apply (`application/apply-patch+yaml`, `fieldManager`, `force`);
  beta and on by default since Kubernetes 1.16, GA in 1.22, so fine on 1.20.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args
from urllib.parse import urlencode

import aiohttp
import orjson
import structlog

from controller import metrics
from controller.errors import (
    ConfigError,
    GoneError,
    NotFoundError,
    TransportError,
    UnreadableObjectError,
    api_error,
)
from controller.kubeclient import ApiClient, ApiException, Configuration
from controller.kubeclient import config as k8s_config
from controller.resources import PODS, Resource
from controller.workqueue import BucketRateLimiter
from translations import jsontext

log = structlog.get_logger(__name__)

JsonDict = dict[str, Any]
FIELD_MANAGER = "topobridge"
Verb = Literal["get", "list", "watch", "create", "update", "patch", "delete"]

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One kind of call the code made: what RBAC must allow."""

    group: str
    resource: str
    """Plural, with `/subresource` when one was used."""
    verb: Verb


@dataclass(frozen=True, slots=True)
class ObjectList:
    """A complete (all pages) list and the resourceVersion to watch from."""

    items: list[JsonDict]
    resource_version: str


EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]
_EVENT_TYPES = get_args(EventType)


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: EventType
    object: JsonDict


def _watch_event(line: bytes, res: Resource, path: str) -> WatchEvent | None:
    """One line of a watch as an event; an ERROR event is raised (GoneError when the version
    it started from is too old). An object nested too deeply to read is settled by `readable`:
    trimmed, or reported DELETED (it leaves every cache); None when it was never cached."""
    try:
        event, cut = jsontext.loads_bounded(line)
    except (ValueError, RecursionError, MemoryError) as exc:
        raise TransportError(f"WATCH {path}: undecodable event: {_short(exc)}") from None
    if not isinstance(event, dict):
        raise TransportError(f"WATCH {path}: an event is a JSON object, not {line[:80]!r}")
    etype = event.get("type")
    obj = event.get("object") or {}
    if etype == "ERROR":
        err = api_error(int(obj.get("code") or 500), obj)
        if err.status == 410 or isinstance(err, GoneError):
            raise GoneError(err.message, status=410, reason=err.reason or "Expired")
        raise err
    if etype not in _EVENT_TYPES or not isinstance(obj, dict):
        raise TransportError(f"WATCH {path}: an event of type {str(etype)[:40]!r}, not one of {_EVENT_TYPES}")
    obj.setdefault("apiVersion", res.api_version)
    obj.setdefault("kind", res.kind)
    if cut and not readable(obj, res.plural):
        if etype == "ADDED":
            return None
        return WatchEvent(type="DELETED", object=_identity(obj))
    return WatchEvent(type=cast(EventType, etype), object=obj)


def _settle(doc: JsonDict, res: Resource | None, where: str) -> None:
    """An answer `jsontext.loads_bounded` cut a too-deep value out of: a list's unreadable items
    are left out; a single unreadable object raises UnreadableObjectError."""
    plural = res.plural if res is not None else where
    items = doc.get("items")
    objects = [o for o in items if isinstance(o, dict)] if isinstance(items, list) else [doc]
    if res is not None:
        for obj in objects:  # list items come without kind; a log line names it
            obj.setdefault("kind", res.kind)
    if isinstance(items, list):
        doc["items"] = [o for o in items if not isinstance(o, dict) or readable(o, plural)]
    elif not readable(doc, plural):
        raise UnreadableObjectError(
            f"{where}: {_object_name(doc)} nests a value deeper than {jsontext.MAX_DEPTH} levels,"
            " more than topobridge reads"
        )


def readable(obj: JsonDict, resource: str) -> bool:
    """Whether an object `jsontext.loads_bounded` may have cut a too-deep value out of can be used.

    A managedFields entry's `fieldsV1` (server-side apply's free-form field set, which a client
    can fill with anything) is dropped: nothing here reads it, so the object is kept. A value cut
    anywhere else leaves the object out: a half-read object would be read wrong. Either way
    the object and the field are logged and counted."""
    paths = jsontext.too_deep_paths(obj)
    if not paths:
        return True
    entries = (obj.get("metadata") or {}).get("managedFields")
    elsewhere = []
    for path in paths:
        entry = _MANAGED_FIELDS_SET.match(path)
        if entry is not None and isinstance(entries, list) and isinstance(entries[int(entry[1])], dict):
            entries[int(entry[1])].pop("fieldsV1", None)
        else:
            elsewhere.append(path)
    outcome = "left_out" if elsewhere else "trimmed"
    metrics.OBJECTS_UNREADABLE.labels(resource, outcome).inc()
    log.warning(
        "kube.object_unreadable",
        resource=resource,
        object=_object_name(obj),
        field=_shown_path((elsewhere or paths)[0]),
        outcome=outcome,
        reason=f"a value nested deeper than {jsontext.MAX_DEPTH} levels",
    )
    return not elsewhere


_MANAGED_FIELDS_SET = re.compile(r"metadata\.managedFields\[([0-9]+)\]\.fieldsV1(?:[.\[]|\Z)")


def _shown_path(path: str) -> str:
    """A path as a log line shows it: its start, where it is (the rest repeats)."""
    return path if len(path) <= 160 else f"{path[:160]}... ({len(path)} characters)"


def _identity(obj: JsonDict) -> JsonDict:
    """What a DELETED event needs of an object: kind and metadata's identity."""
    meta = obj.get("metadata") or {}
    keep = ("name", "namespace", "uid", "resourceVersion")
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: meta[k] for k in keep if isinstance(meta.get(k), str)},
    }


def _object_name(obj: JsonDict) -> str:
    meta = obj.get("metadata") or {}
    ns, name = meta.get("namespace"), meta.get("name")
    return f"{obj.get('kind')} {ns}/{name}" if ns else f"{obj.get('kind')} {name}"


def _short(exc: BaseException) -> str:
    """An exception as one line a user can read (a RecursionError's text says nothing)."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, MemoryError):
        return "too large to hold in memory"
    return str(exc)[:200]


@dataclass
class KubeSettings:
    """How the client talks to the API server."""

    request_timeout: float = 30.0
    """Seconds one request may take; leader election lowers it below the renew deadline."""
    qps: float = 50.0
    """Client-side request rate (kube-scheduler's default), watches excluded."""
    burst: int = 100
    """Requests that may go out at once before the rate applies."""
    connection_pool: int = 64
    """Open connections at most; every watch holds one."""
    impersonate: str | None = None
    """Act as this user (e.g. a ServiceAccount) so RBAC is checked as for the deployment."""


@dataclass
class Kube:
    """Async Kubernetes client: generic verbs, typed errors, plain dicts."""

    api: Any
    """kubernetes_asyncio ApiClient."""
    settings: KubeSettings = field(default_factory=KubeSettings)
    calls: set[CallRecord] = field(default_factory=set)
    """Every (group, resource, verb) used so far (feeds the RBAC coverage test)."""
    owns_api: bool = True

    def __post_init__(self) -> None:
        self._throttle: BucketRateLimiter[None] = BucketRateLimiter(self.settings.qps, self.settings.burst)

    # --- construction ----------------------------------------------------------------

    @classmethod
    async def connect(
        cls,
        *,
        kubeconfig: str | None = None,
        context: str | None = None,
        settings: KubeSettings | None = None,
    ) -> Kube:
        """From a kubeconfig file (the argument, then $KUBECONFIG, then ~/.kube/config), or
        in-cluster credentials when running in a pod and no kubeconfig is given."""
        settings = settings or KubeSettings()
        conf = Configuration()
        path = kubeconfig or os.environ.get("KUBECONFIG")
        in_cluster = path is None and "KUBERNETES_SERVICE_HOST" in os.environ
        if not in_cluster:
            _require_kubeconfig(path)
        try:
            if in_cluster:
                k8s_config.load_incluster_config(client_configuration=conf)  # type: ignore[no-untyped-call]
            else:
                await k8s_config.load_kube_config(
                    config_file=path, context=context, client_configuration=conf, persist_config=False
                )
        except (k8s_config.ConfigException, OSError) as exc:
            where = "in-cluster service account" if in_cluster else f"kubeconfig {path or '~/.kube/config'}"
            raise ConfigError(f"cannot load the {where}: {exc}") from exc
        conf.connection_pool_maxsize = settings.connection_pool
        api = ApiClient(configuration=conf)
        _env_lookups_only_for_proxies(api)
        return cls(api=api, settings=settings)

    @classmethod
    def from_api_client(cls, api: Any, *, settings: KubeSettings | None = None) -> Kube:
        """Wrap an ApiClient someone else owns (closing this Kube leaves it open)."""
        return cls(api=api, settings=settings or KubeSettings(), owns_api=False)

    def fork(self, *, settings: KubeSettings) -> Kube:
        """A client with the same credentials and its own connections and request budget
        (kube-scheduler gives leader election a client of its own the same way): requests
        queued on this one never delay the fork's. Close it separately."""
        conf = self.api.configuration
        conf_copy = copy.copy(conf)
        conf_copy.connection_pool_maxsize = settings.connection_pool
        return type(self)(api=ApiClient(configuration=conf_copy), settings=settings)

    async def close(self) -> None:
        if self.owns_api:
            await self.api.close()

    async def __aenter__(self) -> Kube:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- the transport ---------------------------------------------------------------

    def _record(self, res: Resource, verb: Verb, subresource: str | None) -> None:
        self.calls.add(
            CallRecord(res.group, f"{res.plural}/{subresource}" if subresource else res.plural, verb)
        )

    async def _request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int | bool] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
        res: Resource | None = None,
    ) -> JsonDict:
        """One call; the answer parsed with bounded depth. When `res` names what comes back, an
        object (or a list's item) nested too deeply is settled by `readable`: a list leaves it
        out, a single object raises UnreadableObjectError."""
        delay = self._throttle.when(None)
        if delay > 0:
            metrics.KUBE_THROTTLE.inc(delay)
            await asyncio.sleep(delay)
        metrics.KUBE_REQUESTS.labels(method).inc()
        headers = {"Accept": "application/json", "Content-Type": content_type}
        if self.settings.impersonate:
            headers["Impersonate-User"] = self.settings.impersonate
        try:
            status, raw = await self._send(method, path, query, body, headers, timeout)
        except ApiException as exc:  # kubernetes_asyncio's type stops here
            raise api_error(exc.status or 0, exc.body, fallback_reason=exc.reason or "") from exc
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise TransportError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        if not 200 <= status <= 299:
            raise api_error(status, raw)
        if not raw:
            return {}
        try:
            out, cut = jsontext.loads_bounded(raw)
        except (ValueError, RecursionError, MemoryError) as exc:
            raise TransportError(f"{method} {path}: response is not JSON: {_short(exc)}") from None
        if not isinstance(out, dict):
            raise TransportError(f"{method} {path}: response is not a JSON object: {raw[:80]!r}")
        if cut:
            _settle(out, res, f"{method} {path}")
        return out

    async def _send(
        self,
        method: str,
        path: str,
        query: Mapping[str, str | int | bool] | None,
        body: Any,
        headers: dict[str, str],
        timeout: float | None,
    ) -> tuple[int, bytes]:
        """One request on kubernetes_asyncio's aiohttp session, without its ApiClient.call_api:
        that path re-walks the body to "sanitize" it, encodes it with the standard library and
        templates the URL, a large share of a binding's CPU. Credentials are the same: the
        bearer token through the configuration (its refresh hook included), client
        certificates through the session's TLS context."""
        conf = self.api.configuration
        for auth in (await conf.auth_settings()).values():
            if auth["in"] == "header" and auth["value"]:
                headers[auth["key"]] = auth["value"]
        url = conf.host + path
        if query:
            url += "?" + urlencode([(k, _qv(v)) for k, v in query.items()])
        rest = self.api.rest_client
        extra: dict[str, Any] = {}
        if rest.proxy:
            extra["proxy"], extra["proxy_headers"] = rest.proxy, rest.proxy_headers
        if rest.server_hostname:
            extra["server_hostname"] = rest.server_hostname
        async with rest.pool_manager.request(
            method,
            url,
            data=None if body is None else _dumps(body),
            headers={**self.api.default_headers, **headers},
            timeout=aiohttp.ClientTimeout(total=timeout or self.settings.request_timeout),
            **extra,
        ) as resp:
            return resp.status, await resp.read()

    # --- discovery -------------------------------------------------------------------

    async def serves(self, res: Resource) -> bool:
        """Whether the server serves `res` at its version. Discovery is open to every
        authenticated user (system:discovery), so this needs no RBAC rule."""
        path = f"/apis/{res.group}/{res.version}" if res.group else f"/api/{res.version}"
        try:
            doc = await self._request("GET", path)
        except NotFoundError:
            return False
        return any(r.get("name") == res.plural for r in doc.get("resources") or [])

    async def first_served(self, candidates: Sequence[Resource]) -> Resource:
        """The first of `candidates` (one kind at several versions, newest first) the server
        serves; the last one when none answers, so its informer reports the problem."""
        for res in candidates:
            if await self.serves(res):
                return res
        return candidates[-1]

    # --- reads -----------------------------------------------------------------------

    async def get(
        self, res: Resource, name: str, *, namespace: str | None = None, subresource: str | None = None
    ) -> JsonDict:
        self._record(res, "get", subresource)
        return await self._request(
            "GET", res.path(namespace=namespace, name=name, subresource=subresource), res=res
        )

    async def list(
        self,
        res: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
    ) -> ObjectList:
        """All pages; a GoneError mid-pagination (expired continue token) propagates."""
        self._record(res, "list", None)
        items: list[JsonDict] = []
        query: dict[str, str | int | bool] = {"limit": page_size}
        if label_selector:
            query["labelSelector"] = label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        path = res.path(namespace=namespace)
        while True:
            page = await self._request("GET", path, query=query, res=res)
            kind = res.kind
            for item in page.get("items") or []:
                # Lists omit each item's apiVersion/kind; put them back so items look like GETs.
                item.setdefault("apiVersion", res.api_version)
                item.setdefault("kind", kind)
                items.append(item)
            meta = page.get("metadata") or {}
            cont = meta.get("continue")
            if not cont:
                return ObjectList(items=items, resource_version=str(meta.get("resourceVersion", "")))
            query["continue"] = cont

    async def watch(
        self,
        res: Resource,
        *,
        resource_version: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int = 300,
    ) -> AsyncIterator[WatchEvent]:
        """Events after `resource_version` until the server ends the watch (about
        `timeout_seconds`). Raises GoneError when the version is too old (re-list)."""
        self._record(res, "watch", None)
        query: list[tuple[str, str]] = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", resource_version),
            ("timeoutSeconds", str(timeout_seconds)),
        ]
        if label_selector:
            query.append(("labelSelector", label_selector))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        path = res.path(namespace=namespace)
        resp = await self._open_watch(path, query, timeout_seconds)
        async with resp:
            if resp.status != 200:
                raise api_error(resp.status, await resp.read())
            async for line in _lines(resp.content, path):
                event = _watch_event(line, res, path) if line else None
                if event is not None:
                    yield event

    async def _open_watch(self, path: str, query: Sequence[tuple[str, str]], timeout_seconds: int) -> Any:
        """The watch's streaming response (not read yet)."""
        headers = {"Accept": "application/json"}
        if self.settings.impersonate:
            headers["Impersonate-User"] = self.settings.impersonate
        # No total timeout: the server ends the watch; a silent connection is cut by sock_read.
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self.settings.request_timeout, sock_read=timeout_seconds + 30
        )
        try:
            return await self.api.call_api(
                path,
                "GET",
                query_params=query,
                header_params=headers,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _request_timeout=timeout,
            )
        except ApiException as exc:
            raise api_error(exc.status or 0, exc.body, fallback_reason=exc.reason or "") from exc
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise TransportError(f"WATCH {path}: {type(exc).__name__}: {exc}") from exc

    # --- writes ----------------------------------------------------------------------

    async def create(
        self,
        res: Resource,
        body: JsonDict,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        name: str | None = None,
        dry_run: bool = False,
    ) -> JsonDict:
        """POST `body`; with `dry_run` admission (webhooks included) judges it and nothing is stored."""
        self._record(res, "create", subresource)
        ns = namespace or (body.get("metadata") or {}).get("namespace")
        return await self._request(
            "POST",
            res.path(namespace=ns, name=name, subresource=subresource),
            query={"dryRun": "All"} if dry_run else None,
            body=body,
            res=res,
        )

    async def replace(self, res: Resource, body: JsonDict, *, subresource: str | None = None) -> JsonDict:
        """PUT the whole object; the server rejects it with ConflictError if
        metadata.resourceVersion is stale (optimistic concurrency)."""
        self._record(res, "update", subresource)
        meta = body.get("metadata") or {}
        return await self._request(
            "PUT",
            res.path(namespace=meta.get("namespace"), name=meta["name"], subresource=subresource),
            body=body,
            res=res,
        )

    async def merge_patch(
        self,
        res: Resource,
        name: str,
        patch: JsonDict,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> JsonDict:
        return await self._patch(res, name, patch, MERGE_PATCH, namespace=namespace, subresource=subresource)

    async def strategic_patch(
        self,
        res: Resource,
        name: str,
        patch: JsonDict,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
    ) -> JsonDict:
        """Only for built-in kinds: lists with a merge key merge element-wise."""
        if res.group not in ("", "apps", "coordination.k8s.io", "scheduling.k8s.io"):
            raise ValueError(f"strategic merge patch is not supported for {res}; use merge_patch or apply")
        return await self._patch(
            res, name, patch, STRATEGIC_PATCH, namespace=namespace, subresource=subresource
        )

    async def _patch(
        self,
        res: Resource,
        name: str,
        patch: JsonDict,
        content_type: str,
        *,
        namespace: str | None,
        subresource: str | None,
    ) -> JsonDict:
        self._record(res, "patch", subresource)
        return await self._request(
            "PATCH",
            res.path(namespace=namespace, name=name, subresource=subresource),
            body=patch,
            content_type=content_type,
            res=res,
        )

    async def apply(
        self,
        res: Resource,
        body: JsonDict,
        *,
        field_manager: str = FIELD_MANAGER,
        force: bool = True,
        subresource: str | None = None,
    ) -> JsonDict:
        """Server-side apply: the server merges `body` as the fields `field_manager` owns,
        creating the object when missing; `force` takes over fields others set."""
        self._record(res, "patch", subresource)
        meta = body.get("metadata") or {}
        body = {"apiVersion": res.api_version, "kind": res.kind, **body}
        return await self._request(
            "PATCH",
            res.path(namespace=meta.get("namespace"), name=meta["name"], subresource=subresource),
            query={"fieldManager": field_manager, "force": force},
            body=body,
            content_type=APPLY_PATCH,
            res=res,
        )

    async def delete(
        self,
        res: Resource,
        name: str,
        *,
        namespace: str | None = None,
        grace_period_seconds: int | None = None,
        uid: str | None = None,
        propagation: str | None = None,
    ) -> JsonDict:
        """Delete; `uid` is a precondition (ConflictError when the object under that name is
        another one by now)."""
        self._record(res, "delete", None)
        opts: JsonDict = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace_period_seconds is not None:
            opts["gracePeriodSeconds"] = grace_period_seconds
        if uid:
            opts["preconditions"] = {"uid": uid}
        if propagation:
            opts["propagationPolicy"] = propagation
        return await self._request("DELETE", res.path(namespace=namespace, name=name), body=opts)

    # --- pods ------------------------------------------------------------------------

    async def bind(
        self,
        *,
        namespace: str,
        pod: str,
        node: str,
        pod_uid: str | None = None,
        annotations: dict[str, str] | None = None,
    ) -> None:
        """Bind through the `pods/binding` subresource, as a scheduler does. The API server
        copies the Binding's `annotations` onto the pod in the same write as `nodeName`."""
        meta: JsonDict = {"name": pod, "namespace": namespace}
        if pod_uid:
            meta["uid"] = pod_uid
        if annotations:
            meta["annotations"] = annotations
        binding: JsonDict = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": meta,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        await self.create(PODS, binding, namespace=namespace, name=pod, subresource="binding")

    async def patch_pod_status(self, *, namespace: str, pod: str, patch: JsonDict) -> JsonDict:
        """Strategic merge on pods/status: conditions merge by type, other fields stay."""
        return await self.strategic_patch(
            PODS, pod, {"status": patch}, namespace=namespace, subresource="status"
        )

    async def set_pod_condition(self, *, namespace: str, pod: str, condition: JsonDict) -> JsonDict:
        return await self.patch_pod_status(namespace=namespace, pod=pod, patch={"conditions": [condition]})


MAX_EVENT_BYTES = 64 << 20
"""The longest watch event read: an object is at most 1.5 MiB in etcd, and its JSON at most
six times that (every byte escaped as `\\u00XX`), far under this."""


async def _lines(content: Any, path: str) -> AsyncIterator[bytes]:
    """A watch's events, one per line, stripped. aiohttp's own `readline` refuses a line over
    128 KiB (a pod with large annotations) with an error outside its ClientError tree."""
    buf = bytearray()
    while True:
        try:
            chunk = await content.readany()
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise TransportError(f"WATCH {path}: {type(exc).__name__}: {exc}") from exc
        if not chunk:
            if buf.strip():
                yield bytes(buf).strip()
            return
        searched = len(buf)
        buf += chunk
        while (end := buf.find(b"\n", searched)) >= 0:
            yield bytes(buf[:end]).strip()
            del buf[: end + 1]
            searched = 0
        if len(buf) > MAX_EVENT_BYTES:
            raise TransportError(f"WATCH {path}: an event longer than {MAX_EVENT_BYTES} bytes")


PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def _env_lookups_only_for_proxies(api: Any) -> None:
    """kubernetes_asyncio opens its aiohttp session with `trust_env=True`, so every request
    looks up ~/.netrc in a worker thread and the proxy variables in another: two thread hops
    per call, a large share of a binding's CPU. Credentials come from the kubeconfig, never
    from netrc, so the lookups stay on only when a proxy variable is set (aiohttp reads proxies
    from the environment only then)."""
    if not any(os.environ.get(v) for v in PROXY_VARIABLES):
        api.rest_client.pool_manager._trust_env = False  # no public setter in aiohttp


def _dumps(body: Any) -> bytes:
    """A request body as JSON (YAML's superset, so apply patches too)."""
    try:
        return orjson.dumps(body)
    except TypeError:  # what orjson cannot write (a lone surrogate, an int beyond 64 bits)
        return json.dumps(body).encode()


def _qv(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _require_kubeconfig(path: str | None) -> None:
    """A missing kubeconfig said plainly, before the client library logs its own guess
    (`Config not found`) and then fails on the empty config it fell back to."""
    candidates = path.split(os.pathsep) if path else [os.path.expanduser("~/.kube/config")]
    if any(os.path.isfile(c) for c in candidates if c):
        return
    shown = path or "~/.kube/config"
    hint = "" if path else " (no --kubeconfig, no $KUBECONFIG, not in a pod)"
    raise ConfigError(f"cannot load the kubeconfig {shown}: no such file{hint}")
