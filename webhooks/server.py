"""The admission server: HTTPS only (TLS 1.2+), one path per validated kind, plus /healthz
and /readyz; Prometheus /metrics on a separate plain-HTTP port.

It only parses, calls the rule, and serialises (kopf's split between the webhook function
and the server). A malformed review is the caller's error: HTTP 400 with the reason. Bodies
are capped (3 MiB by default, the API server's own request limit: 413 beyond) and must
arrive within `read_timeout` (408), so no request can hang a handler. Below HTTP, every
connection is bounded too (`webhooks.connections`): the TLS handshake and the first headers
must come in time, idle keep-alive connections close, and a process holds at most
`max_connections` at once. With `reuse_port`, several processes serve one port
(SO_REUSEPORT): the kernel spreads new connections across them. The admission port's paths
are a table on aiohttp's low-level server (`webhooks.routing`), not an Application. The
reviews read while the event loop takes two passes are answered back to back
(`webhooks.turns`), which keeps the CPU caches on the rules rather than on TLS in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import socket
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web

from webhooks.admission import MalformedReview, Review, object_with_namespace, parse_review, response_body
from webhooks.connections import Closed, ConnectionLimits, GuardedSite
from webhooks.metrics import CONTENT_TYPE, WebhookMetrics
from webhooks.mutating import MutatingEndpoints
from webhooks.routing import Handler, Routes
from webhooks.rules.decision import Decision
from webhooks.rules.fielderrors import ErrorType, FieldError
from webhooks.rules.registry import KINDS, MUTATING_KINDS, Kind, MutatingKind
from webhooks.state import ClusterStateSource, InMemoryStateSource
from webhooks.tls import ReloadingCertificate, generate_self_signed
from webhooks.turns import TurnBatch

log = structlog.get_logger("topobridge.webhooks")

MAX_REQUEST_BYTES = 3 * 1024 * 1024


@dataclass
class ServerSettings:
    """How the admission server listens and where its certificate comes from."""

    host: str = "0.0.0.0"
    port: int = 9443
    """HTTPS port of the webhooks (0: any free port)."""
    metrics_host: str = "0.0.0.0"
    metrics_port: int | None = 9090
    """Plain-HTTP port of /metrics (0: any free port; None: no metrics listener)."""
    cert_file: str | None = None
    key_file: str | None = None
    """Serving pair; when both are unset a CA and a certificate are made at start-up."""
    self_signed_hosts: Sequence[str] = ("localhost", "127.0.0.1")
    """SANs of a made-up certificate, e.g. `topobridge-webhook.topobridge-system.svc`."""
    reload_interval: float = 10.0
    """Seconds between checks of the certificate files for rotation."""
    max_request_bytes: int = MAX_REQUEST_BYTES
    read_timeout: float = 10.0
    """Seconds a client may take to send its body."""
    offload_bytes: int = 64 * 1024
    """Reviews larger than this are judged on a worker thread, off the event loop."""
    kinds: Sequence[Kind] = field(default_factory=lambda: KINDS)
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)
    """Handshake/header and keep-alive timeouts, and the cap on open connections."""
    reuse_port: bool = False
    """Set SO_REUSEPORT, so other processes (webhook workers) can listen on the same port."""


class WebhookServer:
    """Runs the HTTPS admission app and the metrics app until stopped."""

    def __init__(
        self,
        settings: ServerSettings,
        state: ClusterStateSource | None = None,
        *,
        metrics: WebhookMetrics | None = None,
        mutating: MutatingEndpoints | None = None,
    ) -> None:
        self.settings = settings
        self.mutating = mutating
        """Mutating endpoints for LWS gangs (webhooks.mutating), served beside the validators."""
        self.state: ClusterStateSource = state if state is not None else InMemoryStateSource()
        self.metrics = metrics or WebhookMetrics()
        self.ca_bundle: bytes | None = None
        """PEM CA of a certificate made at start-up (for the webhook configuration's caBundle)."""
        self.certificate: ReloadingCertificate | None = None
        self.port = settings.port
        self.metrics_port = settings.metrics_port
        self._runners: list[web.BaseRunner] = []
        self._watch: asyncio.Task[None] | None = None
        self._ready = False
        self._batch = TurnBatch(self._answer)

    # --- apps ------------------------------------------------------------------------------

    def admission_routes(self) -> Routes:
        """The webhooks and the probes, served without an aiohttp Application (`routing`)."""
        table: dict[tuple[str, str], Handler] = {}
        for kind in self.settings.kinds:
            table["POST", kind.path] = self._handler(kind)
        if self.mutating is not None:
            for mutating in MUTATING_KINDS:
                table["POST", mutating.path] = self._handler(mutating)
        for method in ("GET", "HEAD"):
            table[method, "/healthz"] = self._healthz
            table[method, "/readyz"] = self._readyz
        return Routes(table)

    def metrics_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        return app

    # --- lifecycle ----------------------------------------------------------------------------

    def load_certificate(self) -> ssl.SSLContext:
        s = self.settings
        if s.cert_file and s.key_file:
            cert, key = Path(s.cert_file), Path(s.key_file)
        elif s.cert_file or s.key_file:
            raise ValueError(
                "give both cert_file and key_file, or neither (a certificate is then made at start-up)"
            )
        else:
            made = generate_self_signed(list(s.self_signed_hosts))
            cert, key = made.write()
            self.ca_bundle = made.ca_pem
            log.info("tls.self_signed", hosts=list(s.self_signed_hosts))
        self.certificate = ReloadingCertificate(cert, key)
        return self.certificate.context

    async def start(self) -> None:
        ctx = self.load_certificate()
        keepalive = self.settings.connections.keepalive_timeout
        admission = self.admission_routes().server(
            client_max_size=self.settings.max_request_bytes, keepalive_timeout=keepalive
        )
        self.port = await self._serve(
            web.ServerRunner(admission, handle_signals=False, shutdown_timeout=5),
            self.settings.host,
            self.settings.port,
            ctx,
            reuse_port=self.settings.reuse_port,
        )
        if self.settings.metrics_port is not None:
            # lingering_time=0: after refusing a body we do not keep reading the rest of it.
            metrics = web.AppRunner(
                self.metrics_app(),
                access_log=None,
                handle_signals=False,
                lingering_time=0,
                shutdown_timeout=5,
                keepalive_timeout=keepalive,
            )
            self.metrics_port = await self._serve(
                metrics, self.settings.metrics_host, self.settings.metrics_port, None
            )
        if self.settings.cert_file and self.certificate is not None:
            self._watch = asyncio.create_task(
                self.certificate.watch(self.settings.reload_interval), name="webhook-certificate-watch"
            )
        # Start-up objects live as long as the process: keep the collector from rescanning them.
        gc.collect()
        gc.freeze()
        self._ready = True
        log.info("webhook.started", port=self.port, metrics_port=self.metrics_port)

    async def _serve(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        ctx: ssl.SSLContext | None,
        *,
        reuse_port: bool = False,
    ) -> int:
        limits = self.settings.connections
        await runner.setup()
        self._runners.append(runner)
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(1024)
        sock.setblocking(False)
        await GuardedSite(runner, sock, limits=limits, ssl_context=ctx, on_closed=self._closed).start()
        bound: int = sock.getsockname()[1]
        return bound

    def _closed(self, why: Closed) -> None:
        self.metrics.connections_closed.labels(why).inc()

    async def stop(self) -> None:
        self._ready = False
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
            self._watch = None
        for runner in reversed(self._runners):
            await runner.cleanup()
        self._runners.clear()

    async def __aenter__(self) -> WebhookServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- handlers ---------------------------------------------------------------------------

    def _handler(self, kind: Kind | MutatingKind) -> Callable[[web.BaseRequest], Awaitable[web.Response]]:
        # A partial, not a wrapping coroutine: one coroutine per request instead of two.
        return functools.partial(self._admit, kind)

    def _refuse(self, status: int, reason: str) -> web.Response:
        self.metrics.rejected.labels(str(status)).inc()
        log.warning("admission.refused", status=status, reason=reason)
        return web.Response(status=status, text=reason + "\n")

    async def _admit(self, kind: Kind | MutatingKind, request: web.BaseRequest) -> web.Response:
        started = time.perf_counter()
        limit = self.settings.max_request_bytes
        if request.content_length is not None and request.content_length > limit:
            return self._refuse(
                413, f"request body of {request.content_length} bytes exceeds the limit of {limit}"
            )
        try:
            if request.content.is_eof():
                # The whole body came with the headers: take it as it lies in the buffer, with
                # no timer to arm and none of `read()`'s awaits and copies.
                body = request.content.read_nowait()
                if len(body) > limit:  # chunked: no Content-Length to refuse it by above
                    raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=len(body))
            else:
                async with asyncio.timeout(self.settings.read_timeout):
                    body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return self._refuse(413, f"request body exceeds the limit of {limit} bytes")
        except TimeoutError:
            return self._refuse(408, f"request body not received within {self.settings.read_timeout:g}s")
        if len(body) > self.settings.offload_bytes:
            # A large object can take a rule long enough to matter (hundreds of regexes in one
            # HyperNode): judge it on a worker thread so this loop keeps answering /healthz
            # and renewing the lease.
            return await asyncio.to_thread(self._answer, kind, body, started)
        return await self._batch(kind, body, started)

    def _answer(self, kind: Kind | MutatingKind, body: bytes, started: float) -> web.Response:
        """The answer to one review's body: parsed, judged, recorded and logged."""
        try:
            review = parse_review(body)
        except MalformedReview as exc:
            return self._refuse(400, f"malformed AdmissionReview: {exc}")
        if (review.group, review.kind) != (kind.group, kind.kind):
            verb = "mutates" if isinstance(kind, MutatingKind) else "validates"
            return self._refuse(
                400,
                f"{kind.path} {verb} {kind.kind}.{kind.group or 'core'}, "
                f"not {review.kind}.{review.group or 'core'}",
            )
        if review.operation not in kind.operations:
            decision, code = Decision(), 200
        else:
            decision, code = self._decide(kind, review)
        body_out = response_body(review, decision, code=code)
        self._record(kind, review.operation, decision, time.perf_counter() - started)
        if decision.patch or not decision.allowed:
            detail: dict[str, Any] = (
                {"message": decision.message} if not decision.allowed else {"ops": len(decision.patch or ())}
            )
            log.info(
                "admission.denied" if not decision.allowed else "admission.mutated",
                kind=kind.kind,
                namespace=review.namespace,
                name=review.name,
                uid=review.uid,
                **detail,
            )
        return web.Response(body=body_out, content_type="application/json")

    def _decide(self, kind: Kind | MutatingKind, review: Review) -> tuple[Decision, int]:
        try:
            obj = object_with_namespace(review)
            if isinstance(kind, MutatingKind):
                if self.mutating is None:
                    return Decision(), 200
                return kind.rule(obj, self.state.snapshot(), self.mutating.lws), 422
            if (
                review.operation == "UPDATE"
                and kind.update_rule is not None
                and review.old_object is not None
            ):
                return kind.update_rule(obj, review.old_object, self.state.snapshot()), 422
            return kind.rule(obj, self.state.snapshot()), 422
        except Exception:  # a bug of ours must still get an answer, not a dropped connection
            log.exception(
                "admission.rule_failed", kind=kind.kind, namespace=review.namespace, name=review.name
            )
            if isinstance(kind, MutatingKind):  # mutation never blocks a create
                return Decision.of(
                    warnings=["topobridge: the mutating rule failed; object admitted unchanged"]
                ), 200
            failed = FieldError(ErrorType.INVALID, "<root>", "Internal error: the validating rule failed")
            return Decision.of([failed]), 500

    def _record(self, kind: Kind | MutatingKind, operation: str, decision: Decision, seconds: float) -> None:
        answers = self.metrics.answers
        answers.record(
            answers.series(kind.display, operation, decision.allowed), len(decision.warnings), seconds
        )

    async def _healthz(self, _request: web.BaseRequest) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, _request: web.BaseRequest) -> web.Response:
        state = "synced" if self.state.synced else "not synced (cluster checks skipped)"
        if not self._ready:
            return web.Response(status=503, text=f"not serving yet; cluster state {state}\n")
        return web.Response(text=f"ok; cluster state {state}\n")

    async def _metrics(self, _request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE})
