"""Mutating admission endpoints for LeaderWorkerSet gangs (JSONPatch responses).

* `POST /mutate/scheduling.volcano.sh/v1beta1/podgroups`: a PodGroup created for an LWS
  group (LWS's own Volcano provider makes it) gets the LWS's `networkTopology` and
  `subGroupPolicy` before Volcano ever sees it.
* `POST /mutate/v1/pods`: an LWS pod without `scheduling.k8s.io/group-name` gets its group's
  PodGroup name.

The patches come from `translations.lws_admission` (pure); this module only parses the
review, looks the LeaderWorkerSet up in a local view kept by the process's watches (no API
call while admitting), and answers. Mutation never blocks a create: an LWS that is unknown,
asks for no topology, or cannot be translated leaves the object unchanged (the last with a
warning); only a malformed review is refused (HTTP 400). Register the webhooks with
`failurePolicy: Ignore`: the controller converges the same fields a moment later anyway.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

import structlog
from aiohttp import web

from translations import lws as lwsmod
from translations import lws_admission
from translations.errors import TopobridgeError
from webhooks.admission import MalformedReview, Review, object_with_namespace, parse_review

log = structlog.get_logger("topobridge.webhooks.mutating")

PODGROUP_PATH = "/mutate/scheduling.volcano.sh/v1beta1/podgroups"
POD_PATH = "/mutate/v1/pods"
MAX_REQUEST_BYTES = 3 * 1024 * 1024


class LwsSource(Protocol):
    """The LeaderWorkerSets this process has seen (kept by a watch, read without I/O)."""

    def get(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def names(self, namespace: str) -> Iterable[str]: ...


def response(review: Review, patch: list[dict[str, Any]], warnings: list[str]) -> bytes:
    body: dict[str, Any] = {"uid": review.uid, "allowed": True}
    if patch:
        body["patchType"] = "JSONPatch"
        body["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
    if warnings:
        body["warnings"] = warnings
    return json.dumps(
        {"apiVersion": review.api_version, "kind": "AdmissionReview", "response": body}
    ).encode()


class MutatingEndpoints:
    def __init__(self, lws: LwsSource, *, max_request_bytes: int = MAX_REQUEST_BYTES) -> None:
        self.lws = lws
        self.max_request_bytes = max_request_bytes

    def register(self, app: web.Application) -> None:
        app.router.add_post(
            PODGROUP_PATH, self._handler(("scheduling.volcano.sh", "PodGroup"), self.mutate_podgroup)
        )
        app.router.add_post(POD_PATH, self._handler(("", "Pod"), self.mutate_pod))

    def _lws(self, namespace: str, name: str) -> lwsmod.LeaderWorkerSet | None:
        raw = self.lws.get(namespace, name)
        if raw is None:
            return None
        try:
            return lwsmod.LeaderWorkerSet.parse(raw)
        except TopobridgeError:
            return None

    def mutate_podgroup(self, review: Review) -> tuple[list[dict[str, Any]], list[str]]:
        pg = object_with_namespace(review)
        ns = review.namespace or (pg.get("metadata") or {}).get("namespace") or ""
        name = lws_admission.lws_name_of_podgroup(pg, self.lws.names(ns))
        lws = self._lws(ns, name) if name else None
        if lws is None:
            return [], []
        try:
            return lws_admission.podgroup_topology_patch(pg, lws), []
        except TopobridgeError as exc:
            return [], [
                f"topobridge: LeaderWorkerSet {ns}/{lws.name}: {exc}; PodGroup admitted without topology"
            ]

    def mutate_pod(self, review: Review) -> tuple[list[dict[str, Any]], list[str]]:
        pod = object_with_namespace(review)
        meta = pod.get("metadata") or {}
        name = (meta.get("labels") or {}).get(lwsmod.NAME_LABEL)
        ns = review.namespace or meta.get("namespace") or ""
        lws = self._lws(ns, name) if name else None
        if lws is None:
            return [], []
        try:
            if not lws_admission.topology_fields(lws):
                return [], []  # LWS alone decides about gangs that ask for no topology
        except TopobridgeError:
            return [], []
        return lws_admission.pod_group_name_patch(pod, lws), []

    def _handler(
        self, kind: tuple[str, str], decide: Callable[[Review], tuple[list[dict[str, Any]], list[str]]]
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handle(request: web.Request) -> web.Response:
            if request.content_length is not None and request.content_length > self.max_request_bytes:
                return web.Response(status=413, text="request body too large\n")
            try:
                review = parse_review(await request.read())
            except MalformedReview as exc:
                return web.Response(status=400, text=f"malformed AdmissionReview: {exc}\n")
            if (review.group, review.kind) != kind:
                return web.Response(status=400, text=f"this endpoint mutates {kind[1]}, not {review.kind}\n")
            patch: list[dict[str, Any]] = []
            warnings: list[str] = []
            if review.operation == "CREATE" and isinstance(review.object, dict):
                patch, warnings = decide(review)
            if patch:
                log.info(
                    "admission.mutated",
                    kind=review.kind,
                    namespace=review.namespace,
                    name=review.name or (review.object.get("metadata") or {}).get("generateName"),
                    ops=len(patch),
                )
            return web.Response(body=response(review, patch, warnings), content_type="application/json")

        return handle
