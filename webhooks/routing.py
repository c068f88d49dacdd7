"""The admission port's routes: a table of (method, path) -> handler on aiohttp's low-level
server, without an `Application`.

An admission server has a dozen fixed paths and no middleware, sub-app or signal, yet an
`Application` resolves every request through its router, builds match info and runs its
middleware chain and response signals: about a sixth of the CPU of a whole HTTPS answer
on a review (measured with `benchmarks/webhook.py`'s endpoint). Here a request is one dict
lookup away from its handler. Requests for other paths get 404, other methods on a known
path 405 with `Allow`, and `Expect: 100-continue` its interim answer, as aiohttp's router
gives them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import HttpVersion11, web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestHandler

Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]


async def _expect(request: web.BaseRequest) -> web.Response | None:
    """`Expect: 100-continue` (curl sends it before a body over 1 KiB) gets its interim
    answer, as aiohttp's router gives it; any other expectation 417."""
    expect = request.headers["Expect"]
    if request.version != HttpVersion11:
        return None
    if expect.lower() != "100-continue":
        return web.Response(status=417, text=f"Unknown Expect: {expect}")
    await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    request.writer.output_size = 0  # the body of the answer has not started yet
    return None


class Routes:
    """Handlers by method and exact path; `server()` serves them."""

    def __init__(self, table: Mapping[tuple[str, str], Handler]) -> None:
        self._table = dict(table)
        self._allowed: dict[str, list[str]] = {}
        for method, path in self._table:
            self._allowed.setdefault(path, []).append(method)

    def dispatch(self, request: web.BaseRequest) -> Awaitable[web.StreamResponse]:
        """The answer to `request`, to await. A plain function: a request for a known path
        awaits its handler's coroutine directly, one coroutine frame fewer to make and to
        pass through on every resumption (a review's handler resumes twice)."""
        handler = self._table.get((request.method, request.path))
        if handler is not None:
            if "Expect" in request.headers:
                return self._after_expect(request, handler)
            return handler(request)
        return self._unrouted(request)

    async def _after_expect(self, request: web.BaseRequest, handler: Handler) -> web.StreamResponse:
        refused = await _expect(request)
        return refused if refused is not None else await handler(request)

    async def _unrouted(self, request: web.BaseRequest) -> web.StreamResponse:
        allowed = self._allowed.get(request.path)
        if allowed is None:
            return web.Response(status=404, text="404: Not Found")
        return web.Response(
            status=405, text="405: Method Not Allowed", headers={"Allow": ",".join(sorted(allowed))}
        )

    def server(self, *, client_max_size: int, keepalive_timeout: float) -> web.Server:
        """The low-level server: bodies capped at `client_max_size` (413 from `read()`
        beyond), no access log, no lingering read after a refused body."""
        loop = asyncio.get_running_loop()

        def request(
            message: RawRequestMessage,
            payload: StreamReader,
            protocol: RequestHandler,
            writer: AbstractStreamWriter,
            task: asyncio.Task[None],
        ) -> web.BaseRequest:
            return web.BaseRequest(
                message, payload, protocol, writer, task, loop, client_max_size=client_max_size
            )

        return web.Server(
            self.dispatch,
            request_factory=request,
            access_log=None,
            lingering_time=0,
            keepalive_timeout=keepalive_timeout,
        )
