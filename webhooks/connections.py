"""Bounds on the admission server's connections, below HTTP: how long a client may take to
finish the TLS handshake and send its first request's headers, how long an idle keep-alive
connection stays open, and how many connections one process holds at once.

Without them a client that connects and then sends nothing, or sends half a header and
stops, keeps a socket, a TLS session and a handler for as long as it likes; enough of them
exhaust the process's file descriptors while `/healthz` still answers.

* `header_timeout`: the TLS handshake must finish within it (asyncio's handshake timeout),
  and the first request's headers (up to the blank line) must arrive within it after that.
  The timer is ours (`_Guard`): it watches the bytes for the end of the headers and closes
  the connection when they do not come in time.
* `keepalive_timeout`: aiohttp's keep-alive timer, armed when the connection opens and again
  after each response. It closes the connection unless a *complete* request has arrived, so
  it also bounds the headers of every later request on the connection.
* `max_connections`: a connection beyond it is answered `503 Service Unavailable` with
  `Connection: close` before any request is read. The API server retries elsewhere (another
  replica or worker) or later; the process keeps serving the connections it has.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, cast

from aiohttp import web

OVER_CAP = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: 32\r\nConnection: close\r\n\r\ntoo many connections; try again\n"
)
END_OF_HEADERS = b"\r\n\r\n"

Closed = Literal["header-timeout", "over-cap"]


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """How long a connection may idle or dawdle, and how many one process holds."""

    header_timeout: float = 10.0
    """Seconds for the TLS handshake, then as many again for the first request's headers."""
    keepalive_timeout: float = 30.0
    """Seconds an idle keep-alive connection waits for its next complete request."""
    max_connections: int = 1000
    """Open connections at most; the next one is answered 503 and closed."""

    def __post_init__(self) -> None:
        if self.header_timeout <= 0 or self.keepalive_timeout <= 0 or self.max_connections < 1:
            raise ValueError(
                "connection limits need header_timeout > 0, keepalive_timeout > 0 and "
                f"max_connections >= 1, got {self.header_timeout}, {self.keepalive_timeout}, "
                f"{self.max_connections}"
            )


class _Guard(asyncio.Protocol):
    """Stands between the transport and aiohttp's handler: counts the connection, refuses it
    over the cap, and closes it when the first request's headers do not arrive in time."""

    def __init__(self, site: GuardedSite, handler: asyncio.Protocol) -> None:
        self._site = site
        self._handler = handler
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._tail = b""
        self._counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, whichever loop made it: uvloop's do not subclass asyncio's.
        transport = cast(asyncio.Transport, transport)
        self._transport = transport
        site = self._site
        if site.open_connections >= site.limits.max_connections:
            site.on_closed("over-cap")
            transport.write(OVER_CAP)
            transport.close()
            return
        site.open_connections += 1
        self._counted = True
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(site.limits.header_timeout, self._headers_late)
        self._handler.connection_made(transport)

    def _headers_late(self) -> None:
        self._timer = None
        if self._transport is not None:
            self._site.on_closed("header-timeout")
            self._transport.abort()

    def data_received(self, data: bytes) -> None:
        if not self._counted:
            return  # refused: whatever it sends is dropped
        if self._timer is not None:
            if END_OF_HEADERS in self._tail + data:
                self._timer.cancel()
                self._timer = None
                self._tail = b""
            else:
                self._tail = data[-3:]
        self._handler.data_received(data)

    def eof_received(self) -> bool | None:
        return self._handler.eof_received() if self._counted else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._transport = None
        if self._counted:
            self._counted = False
            self._site.open_connections -= 1
            self._handler.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._counted:
            self._handler.pause_writing()

    def resume_writing(self) -> None:
        if self._counted:
            self._handler.resume_writing()


class GuardedSite(web.BaseSite):
    """aiohttp's SockSite with the limits above on every connection it accepts."""

    __slots__ = ("_name", "_sock", "limits", "on_closed", "open_connections")

    def __init__(
        self,
        runner: web.BaseRunner,
        sock: socket.socket,
        *,
        limits: ConnectionLimits,
        ssl_context: ssl.SSLContext | None = None,
        backlog: int = 1024,
        on_closed: Callable[[Closed], None] = lambda _why: None,
    ) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=backlog)
        self._sock = sock
        host, port = sock.getsockname()[:2]
        self._name = f"{'https' if ssl_context else 'http'}://{host}:{port}"
        self.limits = limits
        self.on_closed = on_closed
        """Called with why whenever the guard closes a connection."""
        self.open_connections = 0

    @property
    def name(self) -> str:
        return self._name

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _Guard(self, server()),
            sock=self._sock,
            ssl=self._ssl_context,
            backlog=self._backlog,
            ssl_handshake_timeout=self.limits.header_timeout if self._ssl_context else None,
        )
