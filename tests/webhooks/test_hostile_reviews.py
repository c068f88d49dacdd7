"""The webhook under the hostile-object generator: every kind it registers is sent generated,
API-valid objects wrapped in AdmissionReviews, against a cluster view built from a generated
hostile cluster. Each review is answered allowed or denied, never with an exception, and every
denial names a field. A few go through the real HTTPS server too.

Fixed examples (`derandomize`), so CI sees the same reviews each run; `hack/fuzz.py` runs the
same generator at length. No timing here: benchmarks/admission_bounds.py prints what the
worst payloads cost.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_server import client_context, post, settle

from tests.strategies import objects as gen
from webhooks.admission import object_with_namespace, parse_review, response_body
from webhooks.rules import KINDS, ClusterState
from webhooks.rules.registry import Kind
from webhooks.server import ServerSettings, WebhookServer
from webhooks.state import InMemoryStateSource

NODES = ("node-1", "node-2", "node-10")
STRATEGIES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "LeaderWorkerSet": gen.leader_worker_sets(),
    "PodGroup.scheduling.volcano.sh": gen.volcano_podgroups(),
    "HyperNode": gen.hypernode_sets(NODES).flatmap(st.sampled_from),
    "ClusterNetworkTopology": gen.cluster_network_topologies(),
    "PodGroup.scheduling.sigs.k8s.io": gen.coscheduling_podgroups().filter(
        lambda o: o["apiVersion"].startswith("scheduling.sigs")
    ),
    "PodGroup.scheduling.x-k8s.io": gen.coscheduling_podgroups().filter(
        lambda o: o["apiVersion"].startswith("scheduling.x-k8s")
    ),
    "Job": gen.jobs(),
    "Pod": gen.pods(NODES),
    "Workload": gen.upstream_workloads(),
    "PodGroup.scheduling.k8s.io": gen.upstream_podgroups(),
    "CompositePodGroup": gen.upstream_composite_podgroups(),
}
SMALL_CLUSTERS = gen.hostile_clusters(max_nodes=3, max_pods=4)
QUIET: dict[str, Any] = {"deadline": None, "suppress_health_check": list(HealthCheck)}


def _key(kind: Kind) -> str:
    return kind.kind if not kind.group or kind.kind != "PodGroup" else f"{kind.kind}.{kind.group}"


def review_body(kind: Kind, obj: dict[str, Any], operation: str) -> bytes:
    meta = obj.get("metadata") or {}
    request: dict[str, Any] = {
        "uid": "00000000-0000-4000-8000-000000000001",
        "kind": {"group": kind.group, "version": kind.versions[0], "kind": kind.kind},
        "resource": {"group": kind.group, "version": kind.versions[0], "resource": kind.resource},
        "operation": operation,
        "name": meta.get("name", ""),
        "object": obj,
        "userInfo": {"username": "tenant"},
    }
    if kind.namespaced:
        request["namespace"] = meta.get("namespace", "default")
    if operation == "UPDATE":
        request["oldObject"] = obj
    return json.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    ).encode()


def answer(kind: Kind, body: bytes, state: ClusterState) -> dict[str, Any]:
    """The server's own path (`WebhookServer._answer` without its metrics and logs), with a
    rule's exception left to fail the test instead of becoming a 500."""
    review = parse_review(body)
    decision = kind.rule(object_with_namespace(review), state)
    for error in decision.errors:
        assert error.field and error.field != "<root>", error
    out: dict[str, Any] = json.loads(response_body(review, decision))
    return out["response"]


def drawn(strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    """`n` fixed examples of `strategy` (the same every run)."""
    out: list[Any] = []

    @settings(max_examples=n, derandomize=True, database=None, phases=[Phase.generate], **QUIET)
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out[:n]


def test_every_registered_kind_has_a_generator() -> None:
    assert {_key(k) for k in KINDS} == set(STRATEGIES)


@pytest.mark.parametrize("kind", KINDS, ids=_key)
def test_each_review_is_answered_and_denials_name_a_field(kind: Kind) -> None:
    @settings(max_examples=15, derandomize=True, database=None, **QUIET)
    @given(STRATEGIES[_key(kind)], SMALL_CLUSTERS, st.sampled_from(kind.operations))
    def check(obj: dict[str, Any], cluster: list[dict[str, Any]], operation: str) -> None:
        state, _ = ClusterState.from_objects(cluster)
        response = answer(kind, review_body(kind, obj, operation), state)
        assert isinstance(response["allowed"], bool)
        if not response["allowed"]:
            causes = response["status"]["details"]["causes"]
            assert causes and all(c["field"] for c in causes)

    check()


async def test_the_real_server_answers_hostile_reviews() -> None:
    """A handful of generated objects per kind over HTTPS: 200 and an answer, never a 500."""
    cluster = drawn(SMALL_CLUSTERS, 1)[0]
    samples = [(kind, obj) for kind in KINDS for obj in drawn(STRATEGIES[_key(kind)], 3)]
    srv = WebhookServer(
        ServerSettings(host="127.0.0.1", port=0, metrics_host="127.0.0.1", metrics_port=0),
        InMemoryStateSource(cluster, synced=True),
    )
    await srv.start()
    try:
        assert srv.ca_bundle is not None
        conn = aiohttp.TCPConnector(ssl=client_context(srv.ca_bundle))
        async with aiohttp.ClientSession(connector=conn, base_url=f"https://127.0.0.1:{srv.port}") as http:
            for kind, obj in samples:
                status, body = await post(http, kind.path, review_body(kind, obj, "CREATE"))
                assert status == 200, (kind.path, body)
                assert isinstance(body["response"]["allowed"], bool)
                if not body["response"]["allowed"]:
                    assert body["response"]["status"]["code"] == 422
    finally:
        await srv.stop()
        await settle()
