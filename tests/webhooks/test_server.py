"""The admission server over real HTTPS on loopback: reviews in both versions, refusals with
reasons, limits, metrics, health, and certificate rotation without restart."""

from __future__ import annotations

import asyncio
import io
import json
import ssl
import threading
import warnings
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from webhook_corpus import CLUSTER_OBJECTS, lws, pod

from webhooks.metrics import WebhookMetrics
from webhooks.mutating import MutatingEndpoints
from webhooks.rules import registry
from webhooks.rules.registry import Kind
from webhooks.server import ServerSettings, WebhookServer
from webhooks.state import InMemoryStateSource
from webhooks.tls import generate_self_signed

A = "gang.scheduling.koordinator.sh/"


def review(
    obj: Any,
    *,
    version: str = "admission.k8s.io/v1",
    group: str = "leaderworkerset.x-k8s.io",
    kind: str = "LeaderWorkerSet",
    operation: str = "CREATE",
    namespace: str = "default",
) -> dict[str, Any]:
    return {
        "apiVersion": version,
        "kind": "AdmissionReview",
        "request": {
            "uid": "3c6b4f1e-0000-4000-8000-000000000001",
            "kind": {"group": group, "version": "v1", "kind": kind},
            "resource": {"group": group, "version": "v1", "resource": "x"},
            "operation": operation,
            "namespace": namespace,
            "name": "train",
            "object": obj,
            "userInfo": {"username": "admin"},
        },
    }


async def settle() -> None:
    """Let connections the server closed on its own (413, 408) finish their TLS goodbye."""
    for _ in range(50):
        if not [
            t for t in asyncio.all_tasks() if "RequestHandler.start" in repr(t.get_coro()) and not t.done()
        ]:
            return
        await asyncio.sleep(0.01)


def client_context(ca_pem: bytes) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=ca_pem.decode())
    return ctx


@pytest.fixture
async def server() -> AsyncIterator[WebhookServer]:
    settings = ServerSettings(
        host="127.0.0.1", port=0, metrics_host="127.0.0.1", metrics_port=0, read_timeout=0.5
    )
    srv = WebhookServer(settings, InMemoryStateSource(CLUSTER_OBJECTS, synced=True))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()
        await settle()


@pytest.fixture
async def http(server: WebhookServer) -> AsyncIterator[aiohttp.ClientSession]:
    assert server.ca_bundle is not None
    conn = aiohttp.TCPConnector(ssl=client_context(server.ca_bundle))
    async with aiohttp.ClientSession(connector=conn, base_url=f"https://127.0.0.1:{server.port}") as s:
        yield s


async def post(http: aiohttp.ClientSession, path: str, body: Any) -> tuple[int, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with http.post(path, data=io.BytesIO(data), headers={"Content-Type": "application/json"}) as r:
        text = await r.text()
        try:
            return r.status, json.loads(text)
        except ValueError:
            return r.status, text


async def test_denies_with_every_field_error(http: aiohttp.ClientSession) -> None:
    status, body = await post(http, "/validate/leaderworkersets", review(lws({"mode": "hrad"}, size=0)))
    assert status == 200
    assert body["apiVersion"] == "admission.k8s.io/v1"
    resp = body["response"]
    assert resp["uid"] == "3c6b4f1e-0000-4000-8000-000000000001"
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 422
    assert resp["status"]["reason"] == "Invalid"
    assert resp["status"]["message"] == (
        "[spec.leaderWorkerTemplate.size: Invalid value: 0: must be greater than or equal to 1, "
        'spec.networkTopology.mode: Unsupported value: "hrad": supported values: "hard", "soft"]'
    ) or resp["status"]["message"] == (
        'spec.networkTopology.mode: Unsupported value: "hrad": supported values: "hard", "soft"'
    )
    causes = resp["status"]["details"]["causes"]
    assert {
        "reason": "FieldValueNotSupported",
        "field": "spec.networkTopology.mode",
        "message": 'Unsupported value: "hrad": supported values: "hard", "soft"',
    } in causes


async def test_allows_with_warnings_in_v1beta1(http: aiohttp.ClientSession) -> None:
    status, body = await post(
        http,
        "/validate/leaderworkersets",
        review(lws({"mode": "hard", "highestTierAllowed": 0}), version="admission.k8s.io/v1beta1"),
    )
    assert status == 200
    assert body["apiVersion"] == "admission.k8s.io/v1beta1"
    assert body["response"]["allowed"] is True
    assert body["response"]["warnings"] == [
        "spec.networkTopology.highestTierAllowed: 0 confines every pod of the gang to a single node"
    ]
    assert "status" not in body["response"]


async def test_cluster_state_reaches_the_rules(http: aiohttp.ClientSession) -> None:
    obj = pod({f"{A}network-topology-index": "1"})
    del obj["metadata"]["namespace"]  # the request's namespace stands in, as on a create
    status, body = await post(http, "/validate/pods", review(obj, group="", kind="Pod"))
    assert status == 200
    assert body["response"]["warnings"] == [
        f"metadata.annotations[{A}network-topology-index]: "
        "index 1 is already held by pod default/worker-1 of gang default/train"
    ]


async def test_delete_is_allowed_without_an_object(http: aiohttp.ClientSession) -> None:
    status, body = await post(
        http,
        "/validate/hypernodes",
        review(None, group="topology.volcano.sh", kind="HyperNode", operation="DELETE"),
    )
    assert (status, body["response"]["allowed"]) == (200, True)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "malformed AdmissionReview: request body is not JSON: Expecting property name"),
        (b"\xff\xfe", "malformed AdmissionReview: request body is not JSON"),
        (b"[]", "malformed AdmissionReview: request body is not a JSON object"),
        (b"", "malformed AdmissionReview: request body is not JSON"),
        (
            json.dumps({"kind": "AdmissionReview", "apiVersion": "v1"}).encode(),
            "malformed AdmissionReview: apiVersion must be one of "
            "admission.k8s.io/v1, admission.k8s.io/v1beta1",
        ),
        (
            json.dumps({"kind": "Review", "apiVersion": "admission.k8s.io/v1"}).encode(),
            'malformed AdmissionReview: kind must be AdmissionReview, not "Review"',
        ),
        (
            json.dumps({**review({}), "request": None}).encode(),
            "malformed AdmissionReview: request must be an object",
        ),
        (
            json.dumps({**review({}), "request": {**review({})["request"], "uid": ""}}).encode(),
            "malformed AdmissionReview: request.uid must be a non-empty string",
        ),
        (
            json.dumps({**review({}), "request": {**review({})["request"], "operation": "PATCH"}}).encode(),
            "malformed AdmissionReview: request.operation must be one of CREATE, UPDATE, DELETE, CONNECT",
        ),
        (
            json.dumps(review("not an object")).encode(),
            "malformed AdmissionReview: request.object must be an object for CREATE",
        ),
        (
            json.dumps(review({}, group="", kind="Pod")).encode(),
            "/validate/leaderworkersets validates LeaderWorkerSet.leaderworkerset.x-k8s.io, not Pod.core",
        ),
        (b"[" * 100_000, "malformed AdmissionReview: request body is not JSON"),
    ],
    ids=[
        "not-json",
        "not-utf8",
        "array",
        "empty",
        "wrong-api-version",
        "wrong-kind",
        "request-null",
        "uid-empty",
        "operation-unknown",
        "object-not-object",
        "kind-mismatch",
        "deep-nesting",
    ],
)
async def test_malformed_review_is_a_400_with_reason(
    http: aiohttp.ClientSession, server: WebhookServer, body: bytes, reason: str
) -> None:
    status, text = await post(http, "/validate/leaderworkersets", body)
    assert status == 400
    assert isinstance(text, str) and text.startswith(reason)


async def test_body_over_3_mib_is_413(http: aiohttp.ClientSession) -> None:
    status, text = await post(http, "/validate/leaderworkersets", b" " * (3 * 1024 * 1024 + 1))
    assert status == 413
    assert "exceeds the limit of 3145728" in text


async def test_chunked_body_over_3_mib_is_413(http: aiohttp.ClientSession) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(4):
            yield b" " * (1024 * 1024)

    async with http.post("/validate/leaderworkersets", data=chunks()) as r:
        assert r.status == 413


async def test_chunked_body_over_the_limit_that_came_with_its_headers_is_413() -> None:
    # One TLS write: headers and the whole chunked body reach the server together, so the
    # handler takes the body from the buffer (no Content-Length to refuse it by) and must
    # still apply the cap.
    srv = WebhookServer(ServerSettings(host="127.0.0.1", port=0, metrics_port=None, max_request_bytes=1024))
    async with srv:
        assert srv.ca_bundle is not None
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", srv.port, ssl=client_context(srv.ca_bundle), server_hostname="127.0.0.1"
        )
        body = b" " * 2048
        writer.write(
            b"POST /validate/leaderworkersets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            + f"{len(body):x}\r\n".encode()
            + body
            + b"\r\n0\r\n\r\n"
        )
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(4096), timeout=5)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"request body exceeds the limit of 1024 bytes" in answer


async def test_body_just_under_the_limit_is_answered(http: aiohttp.ClientSession) -> None:
    obj = lws({"mode": "hard"})
    obj["metadata"]["annotations"] = {"big": "x" * (3 * 1024 * 1024 - 2000)}
    status, body = await post(http, "/validate/leaderworkersets", review(obj))
    assert (status, body["response"]["allowed"]) == (200, True)


async def test_slow_body_times_out_with_408(server: WebhookServer) -> None:
    assert server.ca_bundle is not None
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", server.port, ssl=client_context(server.ca_bundle), server_hostname="127.0.0.1"
    )
    writer.write(b'POST /validate/hypernodes HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"kind"')
    await writer.drain()
    status_line = await asyncio.wait_for(reader.readline(), timeout=5)
    writer.close()
    assert status_line.startswith(b"HTTP/1.1 408")


async def test_refuses_plain_http_and_old_tls(server: WebhookServer) -> None:
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.ClientError):
            await s.get(f"http://127.0.0.1:{server.port}/healthz")
    assert server.ca_bundle is not None
    old = client_context(server.ca_bundle)
    with warnings.catch_warnings():  # the deprecated versions are the point of this test
        warnings.simplefilter("ignore", DeprecationWarning)
        old.minimum_version = ssl.TLSVersion.TLSv1
        old.maximum_version = ssl.TLSVersion.TLSv1_1
    with pytest.raises((ssl.SSLError, ConnectionError)):
        await asyncio.open_connection("127.0.0.1", server.port, ssl=old, server_hostname="127.0.0.1")


async def test_health_and_metrics(http: aiohttp.ClientSession, server: WebhookServer) -> None:
    async with http.get("/healthz") as r:
        assert (r.status, await r.text()) == (200, "ok\n")
    async with http.get("/readyz") as r:
        assert (r.status, await r.text()) == (200, "ok; cluster state synced\n")
    await post(http, "/validate/leaderworkersets", review(lws({"mode": "hrad"})))
    await post(http, "/validate/leaderworkersets", review(lws({"highestTierAllowed": 0})))
    await post(http, "/validate/leaderworkersets", b"nope")
    metrics_url = f"http://127.0.0.1:{server.metrics_port}/metrics"
    async with aiohttp.ClientSession() as plain, plain.get(metrics_url) as r:
        assert r.status == 200
        text = await r.text()
    kind = 'kind="leaderworkersets.leaderworkerset.x-k8s.io"'
    assert f'topobridge_webhook_requests_total{{{kind},operation="CREATE",outcome="denied"}} 1.0' in text
    assert f'topobridge_webhook_requests_total{{{kind},operation="CREATE",outcome="allowed"}} 1.0' in text
    assert f"topobridge_webhook_denials_total{{{kind}}} 1.0" in text
    assert f"topobridge_webhook_warnings_total{{{kind}}} 1.0" in text
    assert 'topobridge_webhook_rejected_requests_total{status="400"} 1.0' in text
    assert f"topobridge_webhook_request_duration_seconds_count{{{kind}}} 2.0" in text


async def test_unknown_paths_and_methods_are_refused_as_a_router_would(
    http: aiohttp.ClientSession,
) -> None:
    async with http.post("/validate/deployments", data=b"{}") as r:
        assert (r.status, await r.text()) == (404, "404: Not Found")
    async with http.get("/validate/leaderworkersets") as r:
        assert (r.status, r.headers["Allow"]) == (405, "POST")
    async with http.post("/healthz", data=b"") as r:
        assert (r.status, r.headers["Allow"]) == (405, "GET,HEAD")
    async with http.head("/readyz") as r:
        assert r.status == 200


async def test_expect_100_continue_gets_its_interim_answer(http: aiohttp.ClientSession) -> None:
    data = json.dumps(review(lws({"highestTierAllowed": 1}))).encode()
    async with http.post("/validate/leaderworkersets", data=data, expect100=True) as r:
        assert r.status == 200
        assert (await r.json())["response"]["allowed"] is True
    headers = {"Expect": "something-else"}
    async with http.post("/validate/leaderworkersets", data=data, headers=headers) as r:
        assert (r.status, await r.text()) == (417, "Unknown Expect: something-else")


async def test_unsynced_state_skips_cluster_checks() -> None:
    srv = WebhookServer(
        ServerSettings(host="127.0.0.1", port=0, metrics_port=None), InMemoryStateSource(CLUSTER_OBJECTS)
    )
    async with srv:
        assert srv.ca_bundle is not None
        conn = aiohttp.TCPConnector(ssl=client_context(srv.ca_bundle))
        async with aiohttp.ClientSession(connector=conn, base_url=f"https://127.0.0.1:{srv.port}") as s:
            _, body = await post(s, "/validate/leaderworkersets", review(lws({"highestTierAllowed": 5})))
            assert body["response"] == {"uid": "3c6b4f1e-0000-4000-8000-000000000001", "allowed": True}
            async with s.get("/readyz") as r:
                assert await r.text() == "ok; cluster state not synced (cluster checks skipped)\n"


async def test_a_failing_rule_still_gets_an_answer() -> None:
    def broken(_obj: Any, _state: Any) -> Any:
        raise RuntimeError("bug")

    real = registry.for_path("/validate/hypernodes")
    assert real is not None
    kind = Kind(real.group, real.versions, real.kind, real.resource, real.namespaced, real.path, broken)
    srv = WebhookServer(
        ServerSettings(host="127.0.0.1", port=0, metrics_port=None, kinds=[kind]), metrics=WebhookMetrics()
    )
    async with srv:
        assert srv.ca_bundle is not None
        conn = aiohttp.TCPConnector(ssl=client_context(srv.ca_bundle))
        async with aiohttp.ClientSession(connector=conn, base_url=f"https://127.0.0.1:{srv.port}") as s:
            status, body = await post(
                s, "/validate/hypernodes", review({}, group="topology.volcano.sh", kind="HyperNode")
            )
    assert status == 200
    assert body["response"]["allowed"] is False
    assert body["response"]["status"]["code"] == 500
    assert body["response"]["status"]["message"] == "<root>: Internal error: the validating rule failed"


async def test_certificate_rotation_without_restart(tmp_path: Any) -> None:
    first, second = generate_self_signed(["127.0.0.1"]), generate_self_signed(["127.0.0.1"])
    cert, key = first.write(tmp_path)
    srv = WebhookServer(
        ServerSettings(
            host="127.0.0.1",
            port=0,
            metrics_port=None,
            cert_file=str(cert),
            key_file=str(key),
            reload_interval=0.05,
        )
    )

    async def healthz(ca: bytes) -> int:
        conn = aiohttp.TCPConnector(ssl=client_context(ca), force_close=True)
        async with (
            aiohttp.ClientSession(connector=conn) as s,
            s.get(f"https://127.0.0.1:{srv.port}/healthz") as r,
        ):
            return r.status

    async with srv:
        assert srv.ca_bundle is None  # files given: nothing made up
        assert await healthz(first.ca_pem) == 200
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await healthz(second.ca_pem)
        key.write_bytes(b"half-written")  # a rotation in progress must not break serving
        await asyncio.sleep(0.2)
        assert await healthz(first.ca_pem) == 200
        second.write(tmp_path)
        assert srv.certificate is not None
        for _ in range(100):
            if srv.certificate.reloads:
                break
            await asyncio.sleep(0.05)
        assert srv.certificate.reloads == 1
        assert await healthz(second.ca_pem) == 200
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await healthz(first.ca_pem)


def test_state_source_rebuilds_only_when_facts_change() -> None:
    source = InMemoryStateSource(CLUSTER_OBJECTS)
    assert not source.snapshot().known  # not synced: no view at all
    source.mark_synced()
    first = source.snapshot()
    assert first.known and first.gang_indices["default/train"][0] == ("default/worker-0",)
    running = {**CLUSTER_OBJECTS[5], "status": {"phase": "Running"}}
    assert source.upsert(running) is None
    assert source.snapshot() is first  # a status update changes no fact
    source.upsert({**CLUSTER_OBJECTS[5], "status": {"phase": "Succeeded"}})
    assert 0 not in source.snapshot().gang_indices["default/train"]  # finished pods hold no index
    source.delete("HyperNode", "spine-0")
    assert source.snapshot().parents_of("block-0") == ()
    source.delete("ClusterNetworkTopology", "default")
    assert source.snapshot().cnt_layers is None
    assert source.upsert(
        {"kind": "HyperNode", "apiVersion": "topology.volcano.sh/v1alpha1", "metadata": {"name": "x"}}
    ) == ("HyperNode x left out: spec: Required value")
    assert source.replace([]) == [] and source.snapshot().hypernodes == {}


async def test_large_reviews_are_judged_off_the_event_loop() -> None:
    """A big object may keep a rule busy (hundreds of regexes in one HyperNode): it runs on a
    worker thread so the loop that answers /healthz and renews the lease stays free."""
    threads: list[int] = []
    real = registry.for_path("/validate/hypernodes")
    assert real is not None

    def recording(obj: Any, state: Any) -> Any:
        threads.append(threading.get_ident())
        return real.rule(obj, state)

    kind = Kind(real.group, real.versions, real.kind, real.resource, real.namespaced, real.path, recording)
    srv = WebhookServer(ServerSettings(host="127.0.0.1", port=0, metrics_port=None, kinds=[kind]))
    small = {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "b"}}
    small["spec"] = {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "n"}}}]}
    large = json.loads(json.dumps(small))
    large["metadata"]["annotations"] = {"padding": "x" * srv.settings.offload_bytes}
    async with srv:
        assert srv.ca_bundle is not None
        conn = aiohttp.TCPConnector(ssl=client_context(srv.ca_bundle))
        async with aiohttp.ClientSession(connector=conn, base_url=f"https://127.0.0.1:{srv.port}") as s:
            for obj in (small, large):
                status, body = await post(
                    s, "/validate/hypernodes", review(obj, group="topology.volcano.sh", kind="HyperNode")
                )
                assert (status, body["response"]["allowed"]) == (200, True)
    loop_thread = threading.get_ident()
    assert threads[0] == loop_thread
    assert threads[1] != loop_thread


async def test_mutating_endpoints_share_the_handler_and_refuse_malformed_objects() -> None:
    """`/mutate/v1/pods` with `metadata.labels: ["a"]` once answered 500 with a traceback."""

    class NoLws:
        def get(self, namespace: str, name: str) -> dict[str, Any] | None:
            return None

        def names(self, namespace: str) -> list[str]:
            return []

    metrics = WebhookMetrics()
    srv = WebhookServer(
        ServerSettings(host="127.0.0.1", port=0, metrics_port=None, max_request_bytes=64 * 1024),
        metrics=metrics,
        mutating=MutatingEndpoints(NoLws()),
    )
    bad_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": ["a"]}}
    async with srv:
        assert srv.ca_bundle is not None
        conn = aiohttp.TCPConnector(ssl=client_context(srv.ca_bundle))
        async with aiohttp.ClientSession(connector=conn, base_url=f"https://127.0.0.1:{srv.port}") as s:
            status, body = await post(s, "/mutate/v1/pods", review(bad_pod, group="", kind="Pod"))
            too_big, _ = await post(s, "/mutate/v1/pods", b"x" * (65 * 1024))
    assert status == 200
    assert body["response"]["allowed"] is False
    assert body["response"]["status"]["code"] == 422
    assert (
        body["response"]["status"]["message"]
        == 'metadata.labels: Invalid value: ["a"]: must be of type object'
    )
    assert too_big == 413, "one size cap for both kinds of webhook"
    rendered = metrics.render().decode()
    assert (
        'topobridge_webhook_requests_total{kind="pods/mutate",operation="CREATE",outcome="denied"} 1.0'
        in rendered
    )


async def test_an_update_is_judged_against_the_stored_object(http: aiohttp.ClientSession) -> None:
    """A `scheduling.k8s.io` PodGroup's immutable fields: the rule sees `oldObject` on UPDATE."""

    def pod_group(min_count: int, key: str) -> dict[str, Any]:
        return {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "train", "namespace": "default"},
            "spec": {
                "schedulingPolicy": {"gang": {"minCount": min_count}},
                "schedulingConstraints": {"topology": [{"key": key}]},
            },
        }

    def update(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
        doc = review(new, group="scheduling.k8s.io", kind="PodGroup", operation="UPDATE")
        doc["request"]["oldObject"] = old
        return doc

    old = pod_group(4, "rack")
    _, scaled = await post(http, "/validate/k8s-podgroups", update(pod_group(8, "rack"), old))
    assert scaled["response"]["allowed"] is True
    _, moved = await post(http, "/validate/k8s-podgroups", update(pod_group(4, "block"), old))
    assert moved["response"]["allowed"] is False
    assert moved["response"]["status"]["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.schedulingConstraints",
            "message": 'Invalid value: {"topology":[{"key":"block"}]}: field is immutable',
        }
    ]
