"""`topobridge run`: the controller and the admission webhook server in one process.

Each part can be switched off. Every replica serves the webhook; only the replica holding
the lease reconciles and schedules. SIGTERM (or SIGINT) resolves a stop future: the root
tasks are cancelled, reconcilers finish the key in hand, the lease is released, and the
process exits 0. Losing the lease exits 1, so the pod is restarted with a clean slate.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Coroutine
from typing import Any

import structlog

log = structlog.get_logger("topobridge.run")

EXIT_LEADERSHIP_LOST = 1
EXIT_CONFIG = 2


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run",
        help="run the controller and the admission webhook server",
        description="Run the controller (translations, HyperNodes, fallback gang scheduler) under leader "
        "election, and the admission webhook server, in one process.",
    )
    parts = p.add_argument_group("parts")
    parts.add_argument(
        "--no-controller", dest="controller", action="store_false", help="serve only the webhook"
    )
    parts.add_argument("--no-webhook", dest="webhook", action="store_false", help="run only the controller")
    parts.add_argument(
        "--no-lws",
        dest="lws",
        action="store_false",
        help="do not translate LeaderWorkerSet networkTopology into PodGroups",
    )
    parts.add_argument(
        "--translate-koordinator",
        action="store_true",
        help="translate Koordinator gangs into Volcano PodGroups and pod patches",
    )
    parts.add_argument(
        "--no-hypernodes",
        dest="hypernodes",
        action="store_false",
        help="do not keep HyperNodes in step with the ClusterNetworkTopology",
    )
    parts.add_argument(
        "--no-fallback-scheduler",
        dest="scheduler",
        action="store_false",
        help="never place gangs, even while Volcano is absent",
    )
    parts.add_argument(
        "--scheduler-name",
        action="append",
        default=None,
        metavar="NAME",
        help="schedulerName served by the fallback scheduler (repeatable; default: topobridge)",
    )

    kube = p.add_argument_group("Kubernetes API")
    kube.add_argument(
        "--kubeconfig", default=None, help="default: $KUBECONFIG, ~/.kube/config, or in-cluster"
    )
    kube.add_argument("--context", default=None, help="kubeconfig context")
    kube.add_argument(
        "--kube-api-qps", type=float, default=50.0, help="client-side request rate (default 50)"
    )
    kube.add_argument("--kube-api-burst", type=int, default=100, help="client-side burst (default 100)")
    kube.add_argument(
        "--as",
        dest="as_user",
        default=None,
        metavar="USER",
        help="impersonate USER (e.g. system:serviceaccount:NS:NAME) to run with its RBAC",
    )

    le = p.add_argument_group("leader election")
    le.add_argument(
        "--no-leader-elect",
        dest="leader_elect",
        action="store_false",
        help="lead unconditionally (a single replica only)",
    )
    le.add_argument("--lease-name", default="topobridge-controller")
    le.add_argument("--lease-namespace", default="kube-system")
    le.add_argument("--lease-duration", type=float, default=15.0, help="seconds (default 15)")
    le.add_argument("--renew-deadline", type=float, default=10.0, help="seconds (default 10)")
    le.add_argument("--retry-period", type=float, default=2.0, help="seconds (default 2)")
    le.add_argument(
        "--identity", default="", help="lease holder identity (default: hostname + random suffix)"
    )

    ctl = p.add_argument_group("controller")
    ctl.add_argument("--workers", type=int, default=4, help="workers per reconciler (default 4)")
    ctl.add_argument(
        "--resync-period", type=float, default=300.0, help="seconds between resyncs (default 300)"
    )
    ctl.add_argument("--volcano-namespace", default="volcano-system")
    ctl.add_argument("--volcano-deployment", default="volcano-scheduler")
    ctl.add_argument("--grace", type=float, default=30.0, help="seconds to wind down on SIGTERM (default 30)")

    wh = p.add_argument_group("webhook and metrics")
    wh.add_argument("--webhook-host", default="0.0.0.0")
    wh.add_argument("--webhook-port", type=int, default=9443)
    wh.add_argument("--tls-cert-file", default=None)
    wh.add_argument("--tls-key-file", default=None)
    wh.add_argument("--metrics-host", default="0.0.0.0")
    wh.add_argument("--metrics-port", type=int, default=9090)

    p.add_argument(
        "--print-rbac",
        action="store_true",
        help="print the ClusterRole (+ binding) the controller needs, then exit",
    )
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    if args.print_rbac:
        from controller.rbac import render

        sys.stdout.write(render())
        return 0
    if not args.controller and not args.webhook:
        print("topobridge run: --no-controller and --no-webhook leave nothing to run", file=sys.stderr)
        return EXIT_CONFIG
    from controller.errors import ConfigError, LeadershipLost

    try:
        asyncio.run(run(args))
    except ConfigError as exc:
        print(f"topobridge run: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except LeadershipLost as exc:
        log.error("run.leadership_lost", error=str(exc))
        return EXIT_LEADERSHIP_LOST
    return 0


def controller_options(args: argparse.Namespace) -> Any:
    """ControllerOptions from the flags (raises ConfigError on unusable timings)."""
    from controller.leaderelection import LeaderElectionConfig
    from controller.manager import ControllerOptions
    from controller.volcano import VolcanoDetectionConfig

    le = None
    if args.leader_elect:
        le = LeaderElectionConfig(
            lease_name=args.lease_name,
            lease_namespace=args.lease_namespace,
            identity=args.identity,
            lease_duration=args.lease_duration,
            renew_deadline=args.renew_deadline,
            retry_period=args.retry_period,
        )
    return ControllerOptions(
        reconcile_lws=args.lws,
        translate_koordinator=args.translate_koordinator,
        reconcile_hypernodes=args.hypernodes,
        fallback_scheduler=args.scheduler,
        scheduler_names=tuple(args.scheduler_name or ("topobridge",)),
        volcano=VolcanoDetectionConfig(namespace=args.volcano_namespace, deployment=args.volcano_deployment),
        workers=args.workers,
        resync_period=args.resync_period,
        leader_election=le,
        identity=le.identity if le else (args.identity or "topobridge"),
    )


async def run(args: argparse.Namespace) -> None:
    from controller.aiotasks import install_stop_signals, run_roots
    from controller.errors import ConfigError
    from controller.kube import Kube, KubeSettings

    stop: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    install_stop_signals(stop)
    roots: dict[str, Coroutine[Any, Any, None]] = {}
    kube = None
    try:
        if args.controller:
            options = controller_options(args)  # validates timings before any connection
            settings = KubeSettings(
                qps=args.kube_api_qps, burst=args.kube_api_burst, impersonate=args.as_user
            )
            if options.leader_election is not None:
                # One hung request must not cost leadership (client-go's rule).
                settings.request_timeout = options.leader_election.request_timeout
            kube = await Kube.connect(kubeconfig=args.kubeconfig, context=args.context, settings=settings)
            from controller.manager import Manager

            roots["controller"] = Manager(kube, options).run()
        if args.webhook:
            if kube is None:
                try:
                    kube = await Kube.connect(
                        kubeconfig=args.kubeconfig,
                        context=args.context,
                        settings=KubeSettings(
                            qps=args.kube_api_qps, burst=args.kube_api_burst, impersonate=args.as_user
                        ),
                    )
                except ConfigError as exc:
                    log.warning("webhook.no_cluster_state", error=str(exc))
            roots["webhook"] = _serve_webhook(args, kube)
        elif args.metrics_port is not None:
            roots["metrics"] = _serve_metrics(args.metrics_host, args.metrics_port)
        await run_roots(roots, stop=stop, grace=args.grace)
    finally:
        if kube is not None:
            await kube.close()


async def _serve_webhook(args: argparse.Namespace, kube: Any) -> None:
    """The admission server, its cluster-state view fed by this replica's own watches (every
    replica serves admissions, leader or not)."""
    from prometheus_client import REGISTRY

    from webhooks.metrics import WebhookMetrics
    from webhooks.mutating import MutatingEndpoints
    from webhooks.server import ServerSettings, WebhookServer
    from webhooks.state import InMemoryStateSource

    settings = ServerSettings(
        host=args.webhook_host,
        port=args.webhook_port,
        cert_file=args.tls_cert_file,
        key_file=args.tls_key_file,
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
    )
    state = InMemoryStateSource()
    lws_view = InformerLwsSource(kube)
    # One registry for the whole process: the webhook's /metrics also shows the controller's.
    server = WebhookServer(
        settings, state, metrics=WebhookMetrics(registry=REGISTRY), mutating=MutatingEndpoints(lws_view)
    )
    async with server:
        if kube is None:
            await asyncio.Event().wait()
        await feed_webhook_state(kube, state, lws_view)


class InformerLwsSource:
    """The mutating webhooks' view of LeaderWorkerSets, kept by a watch (no I/O when read)."""

    def __init__(self, kube: Any) -> None:
        from controller.informer import Informer
        from controller.resources import LEADERWORKERSETS

        self.informer = Informer(kube, LEADERWORKERSETS, resync_period=None) if kube is not None else None
        if self.informer is not None:
            self.informer.add_index("namespace", lambda o: [(o.get("metadata") or {}).get("namespace") or ""])

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.informer.get(f"{namespace}/{name}") if self.informer is not None else None

    def names(self, namespace: str) -> list[str]:
        if self.informer is None:
            return []
        return [o["metadata"]["name"] for o in self.informer.by_index("namespace", namespace)]


async def feed_webhook_state(kube: Any, state: Any, lws_view: InformerLwsSource | None = None) -> None:
    """Keep the webhook's ClusterState source in step with HyperNodes, the
    ClusterNetworkTopology, pods (gang indices) and nodes (GPUs per node), and the mutating
    webhooks' LWS view; mark the state synced once all four listed."""
    from controller.aiotasks import cancel_and_wait, spawn
    from controller.informer import Informer
    from controller.resources import CLUSTER_NETWORK_TOPOLOGIES, HYPERNODES, NODES, PODS

    class Feed:
        def on_add(self, obj: dict[str, Any]) -> None:
            state.upsert(obj)

        def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
            if old is not new:
                state.upsert(new)

        def on_delete(self, obj: dict[str, Any]) -> None:
            meta = obj.get("metadata") or {}
            state.delete(obj.get("kind", ""), meta.get("name", ""), meta.get("namespace"))

    informers = [
        Informer(kube, res, resync_period=None)
        for res in (HYPERNODES, CLUSTER_NETWORK_TOPOLOGIES, PODS, NODES)
    ]
    for inf in informers:
        inf.add_handler(Feed())
    tasks = [spawn(f"webhook-state:{inf.name}", inf.run()) for inf in informers]
    if lws_view is not None and lws_view.informer is not None:
        tasks.append(spawn("webhook-lws-view", lws_view.informer.run()))
    try:
        await asyncio.gather(*(inf.synced.wait() for inf in informers))
        state.mark_synced()
        log.info("webhook.state_synced")
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        await cancel_and_wait(tasks, grace=5.0)


async def _serve_metrics(host: str, port: int) -> None:
    """Plain-HTTP /metrics for a controller running without the webhook server."""
    from aiohttp import web
    from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

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
