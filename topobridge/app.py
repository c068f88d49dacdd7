"""The composition root of `topobridge run`: where the process is built, once.

`run_process(config)` builds, in this order:
1. the API client (`Kube`): the main request budget (`--kube-api-qps/--kube-api-burst`). The
   leader's Events and leader election fork budgets of their own from it (`Manager`);
2. one `SharedInformers` for the whole process: every resource is listed and watched once,
   whoever reads it;
3. the parts, each a named root task: the admission webhook server (every replica), whose
   cluster view reads pods, nodes, HyperNodes, the ClusterNetworkTopology and the Koordinator
   PodGroups the cluster serves (`WEBHOOK_STATE_IF_SERVED`), and whose mutating
   endpoints read LeaderWorkerSets from the shared informers; the controller (`Manager`:
   leader election, then the reconcilers, the scheduler hand-off and the fallback scheduler,
   which ask the same informers for what they read); a plain `/metrics` server when the
   webhook is off; and the informers themselves;
4. `aiotasks.run_roots` supervises them: the first to fail or SIGTERM stops all, with
   `--grace` seconds to wind down.

`topobridge.cmd_run` only turns flags into a `ProcessConfig` and calls `run_process`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from controller.aiotasks import install_stop_signals, run_roots
from controller.errors import ConfigError
from controller.informer import SharedInformers
from controller.kube import JsonDict, Kube, KubeSettings
from controller.manager import ControllerOptions, Manager
from controller.resources import (
    CLUSTER_NETWORK_TOPOLOGIES,
    HYPERNODES,
    LEADERWORKERSETS,
    NODES,
    PODS,
    SIGS_PODGROUPS,
    X_PODGROUPS,
    Resource,
)
from topobridge.eventloop import running_loop_name
from webhooks.metrics import WebhookMetrics
from webhooks.mutating import MutatingEndpoints
from webhooks.server import ServerSettings, WebhookServer
from webhooks.state import InMemoryStateSource

log = structlog.get_logger("topobridge.app")

WEBHOOK_STATE: tuple[Resource, ...] = (HYPERNODES, CLUSTER_NETWORK_TOPOLOGIES, PODS, NODES)
"""What the validating webhook's cluster view is built from (nodes: GPUs per node)."""
WEBHOOK_STATE_IF_SERVED: tuple[Resource, ...] = (SIGS_PODGROUPS, X_PODGROUPS)
"""Read into the view too when the cluster serves them (discovery at start, as for the PDB
versions): the Koordinator gangs declared by PodGroup, so the GangGroup check at admission sees
them. A CRD that is not installed is no gang of that dialect; it must not keep the view from
ever syncing, which an informer of an unserved resource (404, retried forever) would."""
NAMESPACE_INDEX = "namespace"


@dataclass(frozen=True)
class ProcessConfig:
    """Everything `topobridge run` needs, already checked."""

    kube: KubeSettings
    kubeconfig: str | None = None
    context: str | None = None
    controller: ControllerOptions | None = None
    """None: serve only the webhook."""
    webhook: ServerSettings | None = None
    """None: run only the controller (metrics on a plain server)."""
    metrics_host: str = "0.0.0.0"
    metrics_port: int | None = 9090
    grace: float = 30.0
    """Seconds the root tasks get to wind down on SIGTERM."""


async def run_process(config: ProcessConfig) -> None:
    """Build the process (see the module docstring) and run it until SIGTERM or a failure."""
    loop = asyncio.get_running_loop()
    log.info("process.started", event_loop=running_loop_name(loop))
    stop: asyncio.Future[None] = loop.create_future()
    install_stop_signals(stop)
    kube = await connect(config)
    try:
        roots = build_roots(config, kube)
        await run_roots(roots, stop=stop, grace=config.grace)
    finally:
        if kube is not None:
            await kube.close()


async def connect(config: ProcessConfig) -> Kube | None:
    """The process's client; None for a webhook-only process that cannot reach a cluster
    (it then serves without cluster state)."""
    try:
        return await Kube.connect(kubeconfig=config.kubeconfig, context=config.context, settings=config.kube)
    except ConfigError as exc:
        if config.controller is not None:
            raise
        log.warning("webhook.no_cluster_state", error=str(exc))
        return None


def build_roots(
    config: ProcessConfig, kube: Kube | None, *, informers: SharedInformers | None = None
) -> dict[str, Coroutine[Any, Any, None]]:
    """The process's root tasks by name, sharing one set of informers."""
    roots: dict[str, Coroutine[Any, Any, None]] = {}
    if kube is not None and informers is None:
        resync = config.controller.resync_period if config.controller is not None else None
        informers = SharedInformers(kube, resync_period=resync)
    if informers is not None:
        roots["informers"] = informers.run(grace=config.grace)
    if config.webhook is not None:
        roots["webhook"] = serve_webhook(config.webhook, informers)
    elif config.metrics_port is not None:
        roots["metrics"] = serve_metrics(config.metrics_host, config.metrics_port)
    if config.controller is not None:
        assert kube is not None and informers is not None  # connect() raises without a cluster
        roots["controller"] = Manager(kube, config.controller, informers=informers).run()
    return roots


# --- the webhook's view of the cluster -----------------------------------------------------


class InformerLwsSource:
    """The mutating webhooks' view of LeaderWorkerSets: the shared informer, read without I/O."""

    def __init__(self, informers: SharedInformers | None) -> None:
        self.informer = informers.of(LEADERWORKERSETS) if informers is not None else None
        if self.informer is not None:
            self.informer.add_index(
                NAMESPACE_INDEX, lambda o: [(o.get("metadata") or {}).get("namespace") or ""]
            )

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.informer.get(f"{namespace}/{name}") if self.informer is not None else None

    def names(self, namespace: str) -> list[str]:
        if self.informer is None:
            return []
        return [o["metadata"]["name"] for o in self.informer.by_index(NAMESPACE_INDEX, namespace)]


class StateFeed:
    """Informer events -> the webhook's ClusterState source (resyncs change nothing)."""

    def __init__(self, state: InMemoryStateSource) -> None:
        self.state = state

    def on_add(self, obj: JsonDict) -> None:
        self.state.upsert(obj)

    def on_update(self, old: JsonDict, new: JsonDict) -> None:
        if old is not new:
            self.state.upsert(new)

    def on_delete(self, obj: JsonDict) -> None:
        meta = obj.get("metadata") or {}
        self.state.delete(obj.get("kind", ""), meta.get("name", ""), meta.get("namespace"))


async def webhook_state_resources(
    kube: Kube, *, if_served: Sequence[Resource] = WEBHOOK_STATE_IF_SERVED
) -> tuple[Resource, ...]:
    """`WEBHOOK_STATE`, plus those of `if_served` the cluster serves now."""
    served = [res for res in if_served if await kube.serves(res)]
    skipped = [str(res) for res in if_served if res not in served]
    if skipped:
        log.info("webhook.state_kinds_not_served", resources=skipped)
    return (*WEBHOOK_STATE, *served)


async def feed_webhook_state(
    informers: SharedInformers,
    state: InMemoryStateSource,
    *,
    if_served: Sequence[Resource] = WEBHOOK_STATE_IF_SERVED,
) -> None:
    """Attach the webhook's ClusterState source to the shared informers; mark it synced once
    every one of them has listed."""
    resources = await webhook_state_resources(informers.kube, if_served=if_served)
    feed = StateFeed(state)
    for res in resources:
        informers.of(res).add_handler(feed)
    await informers.wait_synced(resources)
    state.mark_synced()
    log.info("webhook.state_synced")


async def serve_webhook(settings: ServerSettings, informers: SharedInformers | None) -> None:
    """The admission server (every replica serves admissions, leader or not)."""
    state = InMemoryStateSource()
    # One registry for the whole process: the webhook's /metrics also shows the controller's.
    server = WebhookServer(
        settings,
        state,
        metrics=WebhookMetrics(registry=REGISTRY),
        mutating=MutatingEndpoints(InformerLwsSource(informers)),
    )
    async with server:
        if informers is not None:
            await feed_webhook_state(informers, state)
        await asyncio.Event().wait()


async def serve_metrics(host: str, port: int) -> None:
    """Plain-HTTP /metrics for a controller running without the webhook server."""

    async def metrics(_request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(REGISTRY), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        log.info("metrics.started", port=port)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
