"""Connection limits of the real admission server, probed with raw sockets on loopback: a client
that never finishes its TLS handshake, sends nothing, sends half a header, or idles after an
answer is disconnected; the connection beyond the cap is answered 503; one that behaves is
answered. The waits below only bound how long a broken server could hang the test."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncIterator

import pytest
from webhook_corpus import CLUSTER_OBJECTS

from topobridge import eventloop
from topobridge.eventloop import running_loop_name
from webhooks.connections import ConnectionLimits
from webhooks.server import ServerSettings, WebhookServer
from webhooks.state import InMemoryStateSource

LIMITS = ConnectionLimits(header_timeout=0.3, keepalive_timeout=0.6, max_connections=3)
HANG = 20.0
"""Seconds after which a connection still open counts as held forever."""


@contextlib.asynccontextmanager
async def serving(limits: ConnectionLimits) -> AsyncIterator[WebhookServer]:
    settings = ServerSettings(host="127.0.0.1", port=0, metrics_port=None, connections=limits)
    srv = WebhookServer(settings, InMemoryStateSource(CLUSTER_OBJECTS, synced=True))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


@pytest.fixture
async def server() -> AsyncIterator[WebhookServer]:
    async with serving(LIMITS) as srv:
        yield srv


async def tls(server: WebhookServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    assert server.ca_bundle is not None
    ctx = ssl.create_default_context(cadata=server.ca_bundle.decode())
    return await asyncio.open_connection("127.0.0.1", server.port, ssl=ctx, server_hostname="127.0.0.1")


async def closed_by_server(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection (fails if it never does)."""
    try:
        return await asyncio.wait_for(reader.read(), timeout=HANG)
    except (ConnectionResetError, ssl.SSLError):
        return b""


async def response(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One HTTP response: (status line, body)."""
    status = await asyncio.wait_for(reader.readline(), timeout=HANG)
    length = 0
    while (line := await asyncio.wait_for(reader.readline(), timeout=HANG)) != b"\r\n":
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return status, await asyncio.wait_for(reader.readexactly(length), timeout=HANG)


def closed_count(server: WebhookServer, reason: str) -> float:
    value = server.metrics.registry.get_sample_value(
        "topobridge_webhook_connections_closed_total", {"reason": reason}
    )
    return value or 0.0


async def test_a_silent_connection_is_closed_after_the_handshake(server: WebhookServer) -> None:
    reader, writer = await tls(server)
    assert await closed_by_server(reader) == b""
    writer.close()
    assert closed_count(server, "header-timeout") == 1


async def test_half_a_header_is_closed(server: WebhookServer) -> None:
    reader, writer = await tls(server)
    writer.write(b"POST /validate/pods HTTP/1.1\r\nHost: x\r\nContent-Le")
    await writer.drain()
    assert await closed_by_server(reader) == b""
    writer.close()
    assert closed_count(server, "header-timeout") == 1


async def test_a_tcp_connection_without_a_handshake_is_closed(server: WebhookServer) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    assert await closed_by_server(reader) == b""
    writer.close()


async def test_an_idle_keepalive_connection_is_closed_after_its_answer(server: WebhookServer) -> None:
    reader, writer = await tls(server)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    answer = await closed_by_server(reader)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok\n")
    writer.close()
    assert closed_count(server, "header-timeout") == 0  # the answer was given: keep-alive closed it


async def test_a_request_in_time_is_answered_on_a_kept_alive_connection(server: WebhookServer) -> None:
    reader, writer = await tls(server)
    body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}).encode()
    for _ in range(2):
        writer.write(
            b"POST /validate/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        status, reason = await response(reader)
        assert status.startswith(b"HTTP/1.1 400")  # malformed review: answered, not dropped
        assert b"malformed AdmissionReview" in reason
    writer.close()


async def test_the_connection_beyond_the_cap_gets_503_and_the_others_stay() -> None:
    # Kept-alive connections stay open long enough here for the cap to be reached.
    async with serving(
        ConnectionLimits(header_timeout=HANG, keepalive_timeout=HANG, max_connections=3)
    ) as server:
        await fill_to_the_cap(server, 3)


async def fill_to_the_cap(server: WebhookServer, cap: int) -> None:
    held = [await tls(server) for _ in range(cap)]
    for _, w in held:  # each sends a request line so none is closed for silence meanwhile
        w.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        await w.drain()
    for r, _ in held:
        assert (await response(r))[0].startswith(b"HTTP/1.1 200")
    reader, writer = await tls(server)
    answer = await closed_by_server(reader)
    assert answer.startswith(b"HTTP/1.1 503") and b"Connection: close" in answer
    writer.close()
    assert closed_count(server, "over-cap") == 1
    for r, w in held:  # still served
        w.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        await w.drain()
        assert (await response(r))[0].startswith(b"HTTP/1.1 200")
        w.close()


async def test_limits_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="max_connections >= 1"):
        ConnectionLimits(max_connections=0)


def test_the_limits_hold_and_reviews_are_answered_on_uvloop() -> None:
    """`topobridge run` serves on uvloop (topobridge.eventloop), whose transports are not
    asyncio's: the guard must count, time out and refuse connections there too."""

    async def scenario() -> None:
        assert running_loop_name(asyncio.get_running_loop()) == "uvloop"
        async with serving(LIMITS) as server:
            await test_half_a_header_is_closed(server)
            await test_a_request_in_time_is_answered_on_a_kept_alive_connection(server)
        async with serving(
            ConnectionLimits(header_timeout=HANG, keepalive_timeout=HANG, max_connections=2)
        ) as server:
            await fill_to_the_cap(server, 2)

    eventloop.run(scenario(), "uvloop")
