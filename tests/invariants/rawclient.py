"""A minimal list-and-watch client for the invariant watcher, on aiohttp alone.

The watcher must not share code with what it judges, so it does not use `controller.kube`
or `controller.informer`: this is the whole of what it needs, raw JSON objects by path,
with a relist after `410 Gone` and a reconnect (with backoff) while the API server is
stopped or restarting. JSON is read with the project's bounded-depth parser (a pure function
of `translations`, not of what the watcher judges): a tenant's object nested deeper than any
parser's recursion limit must not stop the watcher.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from translations.jsontext import loads_bounded

Obj = dict[str, Any]


class Gone(Exception):
    """The resourceVersion is too old: list again."""


@dataclass(frozen=True)
class Endpoint:
    """How to reach the API server as cluster admin (a LocalControlPlane has all three)."""

    server: str
    token: str
    ca_file: str


class ApiServer:
    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> ApiServer:
        ctx = ssl.create_default_context(cafile=self.endpoint.ca_file)
        self._session = aiohttp.ClientSession(
            base_url=self.endpoint.server,
            headers={"Authorization": f"Bearer {self.endpoint.token}"},
            connector=aiohttp.TCPConnector(ssl=ctx),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        assert self._session is not None, "use `async with ApiServer(...)`"
        return self._session

    async def list(self, path: str, **params: str) -> tuple[list[Obj], str]:
        async with self.session.get(path, params=params, timeout=aiohttp.ClientTimeout(total=30)) as resp:
            if resp.status == 404:
                return [], ""  # a CRD not installed: nothing to watch
            resp.raise_for_status()
            body = loads_bounded(await resp.read())[0]
        return list(body.get("items") or []), str(body["metadata"].get("resourceVersion") or "")

    async def watch(self, path: str, resource_version: str, **params: str) -> AsyncIterator[tuple[str, Obj]]:
        query = {
            "watch": "true",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": "120",
            **params,
        }
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=150)
        async with self.session.get(path, params=query, timeout=timeout) as resp:
            if resp.status == 410:
                raise Gone(path)
            resp.raise_for_status()
            async for line in resp.content:
                if not line.strip():
                    continue
                event = loads_bounded(line)[0]
                kind, obj = event["type"], event["object"]
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        raise Gone(path)
                    raise aiohttp.ClientError(f"watch {path}: {obj.get('message')}")
                yield kind, obj

    async def follow(
        self,
        path: str,
        on_event: Callable[[str, Obj], Awaitable[None]],
        *,
        on_relist: Callable[[list[Obj]], Awaitable[None]],
        **params: str,
    ) -> None:
        """List then watch `path` forever: `on_relist` gets every full list (the first one,
        and each after `410 Gone` or a lost connection), `on_event` each watch event."""
        backoff = 0.2
        resource_version = ""
        while True:
            try:
                if not resource_version:
                    items, resource_version = await self.list(path, **params)
                    await on_relist(items)
                    if not resource_version:
                        return  # not served
                async for kind, obj in self.watch(path, resource_version, **params):
                    resource_version = str(obj.get("metadata", {}).get("resourceVersion") or resource_version)
                    if kind != "BOOKMARK":
                        await on_event(kind, obj)
                backoff = 0.2
            except Gone:
                resource_version = ""
            except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
                # Stopped, restarting or overloaded: the watch starts over from a fresh list,
                # so nothing that changed meanwhile is missed for good.
                resource_version = ""
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 3.0)
