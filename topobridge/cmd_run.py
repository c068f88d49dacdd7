"""`topobridge run`: the controller and the admission webhook server in one process.

Each part can be switched off. Every replica serves the webhook; only the replica holding
the lease reconciles and schedules. SIGTERM (or SIGINT) resolves a stop future: the root
tasks are cancelled, reconcilers finish the key in hand, the lease is released, and the
process exits 0. Losing the lease exits 1, so the pod is restarted with a clean slate.

This module only turns flags into a `topobridge.app.ProcessConfig`; `topobridge.app` builds
the process.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

import structlog

from controller.placer.attempt_budget import DEFAULT_ATTEMPT_STEPS, DEFAULT_GUARD_SECONDS
from topobridge import eventloop
from topobridge.eventloop import EVENT_LOOPS, default_event_loop
from translations.gpu import NVLINK_LABEL

if TYPE_CHECKING:
    from controller.manager import ControllerOptions
    from topobridge.app import ProcessConfig
    from webhooks.server import ServerSettings

log = structlog.get_logger("topobridge.run")

EXIT_LEADERSHIP_LOST = 1
EXIT_CONFIG = 2


def add_attempt_budget_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--attempt-budget` and its guard `--attempt-deadline`, as `run` and `simulate` both take
    them (the same cycle, the same limits)."""
    parser.add_argument(
        "--attempt-budget",
        type=int,
        default=DEFAULT_ATTEMPT_STEPS,
        metavar="STEPS",
        help="search steps one gang's scheduling attempt may spend looking for a preemption plan "
        "before it takes the best plan found so far, or waits for a later cycle; counted in work, "
        f"not time, so a plan is the same whatever the load (default {DEFAULT_ATTEMPT_STEPS})",
    )
    parser.add_argument(
        "--attempt-deadline",
        type=float,
        default=DEFAULT_GUARD_SECONDS,
        metavar="SECONDS",
        help="wall-clock guard on one attempt's search, far above what its steps cost; when it "
        "stops a search first, the verdict, a log line, an Event and the metric "
        f"topobridge_attempt_guard_fired_total say so (default {DEFAULT_GUARD_SECONDS:g})",
    )


def attempt_budget_problem(steps: int, seconds: float) -> str | None:
    """Why `steps` and `seconds` cannot limit an attempt, or None."""
    if steps < 1:
        return f"--attempt-budget {steps}: must be a positive number of steps"
    if not 0 < seconds < float("inf"):
        return f"--attempt-deadline {seconds}: must be a positive number of seconds"
    return None


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
        help="never place gangs, whichever other schedulers are absent",
    )
    parts.add_argument(
        "--scheduler-name",
        action="append",
        default=None,
        metavar="NAME",
        help="schedulerName served by the fallback scheduler (repeatable; default: topobridge), "
        "each only while no other scheduler of that name runs",
    )
    parts.add_argument(
        "--handoff",
        action="append",
        default=None,
        metavar="NAME=KIND:NAMESPACE/OBJECT",
        help="how to tell that another scheduler serving NAME runs: KIND lease (its leader-election "
        "Lease is renewed) or deployment (it has a ready replica); repeatable. Defaults: "
        "koord-scheduler=lease:koordinator-system/koord-scheduler, "
        "volcano=deployment:VOLCANO_NAMESPACE/VOLCANO_DEPLOYMENT",
    )
    parts.add_argument(
        "--enable-preemption",
        choices=("true", "false"),
        default="true",
        help="evict lower-priority gangs to make room (Koordinator coscheduling's enablePreemption; "
        "default true)",
    )
    parts.add_argument(
        "--topology-aware",
        choices=("true", "false"),
        default="true",
        help="honour gangs' network-topology constraints (Koordinator coscheduling's "
        "awareNetworkTopology; default true); false places gangs whole, anywhere",
    )
    add_attempt_budget_arguments(parts)
    parts.add_argument(
        "--gpu-nvlink-label",
        default=NVLINK_LABEL,
        metavar="KEY",
        help="node label saying a node's GPUs are NVLink-connected, for GPU gangs that require NVLink "
        f"(any value but empty, false or 0; default: {NVLINK_LABEL})",
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
    ctl.add_argument(
        "--volcano-namespace", default="volcano-system", help="where Volcano's scheduler Deployment is"
    )
    ctl.add_argument(
        "--volcano-deployment", default="volcano-scheduler", help="Volcano's scheduler Deployment"
    )
    ctl.add_argument("--grace", type=float, default=30.0, help="seconds to wind down on SIGTERM (default 30)")
    ctl.add_argument(
        "--event-loop",
        choices=EVENT_LOOPS,
        default=default_event_loop(),
        help="the process's event loop; webhook workers run on the same (default: uvloop where installed)",
    )

    wh = p.add_argument_group("webhook and metrics")
    wh.add_argument("--webhook-host", default="0.0.0.0")
    wh.add_argument("--webhook-port", type=int, default=9443)
    wh.add_argument("--tls-cert-file", default=None)
    wh.add_argument("--tls-key-file", default=None)
    wh.add_argument("--metrics-host", default="0.0.0.0")
    wh.add_argument("--metrics-port", type=int, default=9090)
    wh.add_argument(
        "--webhook-workers",
        type=int,
        default=1,
        metavar="N",
        help="processes serving the webhook port (SO_REUSEPORT): this one and N-1 workers (default 1)",
    )
    wh.add_argument(
        "--webhook-header-timeout",
        type=float,
        default=10.0,
        help="seconds for a connection's TLS handshake, and again for its first request's headers (default 10)",
    )
    wh.add_argument(
        "--webhook-keepalive-timeout",
        type=float,
        default=30.0,
        help="seconds an idle keep-alive connection stays open (default 30)",
    )
    wh.add_argument(
        "--webhook-max-connections",
        type=int,
        default=1000,
        help="open connections per process at most; beyond, 503 (default 1000)",
    )
    wh.add_argument("--webhook-worker", action="store_true", help=argparse.SUPPRESS)  # set on workers

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
    if args.webhook_workers < 1 or (args.webhook_workers > 1 and (not args.webhook or not args.webhook_port)):
        print(
            "topobridge run: --webhook-workers needs N >= 1, the webhook on and a fixed --webhook-port",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    from controller.errors import ConfigError, LeadershipLost
    from topobridge.app import run_process

    try:
        config = process_config(args)
        eventloop.run(with_workers(run_process(config), args, config.webhook), args.event_loop)
    except (ConfigError, eventloop.EventLoopUnavailable) as exc:
        print(f"topobridge run: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except LeadershipLost as exc:
        log.error("run.leadership_lost", error=str(exc))
        return EXIT_LEADERSHIP_LOST
    return 0


def process_config(args: argparse.Namespace) -> ProcessConfig:
    """The ProcessConfig the flags describe (raises ConfigError on unusable settings, before
    any connection is made)."""
    from controller.kube import KubeSettings
    from topobridge.app import ProcessConfig
    from webhooks.connections import ConnectionLimits
    from webhooks.server import ServerSettings

    webhook = None
    if args.webhook:
        cert_file, key_file = args.tls_cert_file, args.tls_key_file
        if args.webhook_workers > 1 and not (cert_file or key_file):
            # Every process must present the same certificate: make it once, here.
            from webhooks.tls import generate_self_signed

            cert_path, key_path = generate_self_signed(list(ServerSettings.self_signed_hosts)).write()
            cert_file, key_file = str(cert_path), str(key_path)
        webhook = ServerSettings(
            host=args.webhook_host,
            port=args.webhook_port,
            cert_file=cert_file,
            key_file=key_file,
            metrics_host=args.metrics_host,
            metrics_port=None if args.webhook_worker else args.metrics_port,
            connections=ConnectionLimits(
                header_timeout=args.webhook_header_timeout,
                keepalive_timeout=args.webhook_keepalive_timeout,
                max_connections=args.webhook_max_connections,
            ),
            reuse_port=args.webhook_worker or args.webhook_workers > 1,
        )
    return ProcessConfig(
        kube=KubeSettings(qps=args.kube_api_qps, burst=args.kube_api_burst, impersonate=args.as_user),
        kubeconfig=args.kubeconfig,
        context=args.context,
        controller=controller_options(args) if args.controller else None,
        webhook=webhook,
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
        grace=args.grace,
    )


def controller_options(args: argparse.Namespace) -> ControllerOptions:
    """ControllerOptions from the flags (raises ConfigError on unusable timings or rules)."""
    from controller.errors import ConfigError
    from controller.handoff import HandOffConfig, PresenceRule, default_rules
    from controller.leaderelection import LeaderElectionConfig
    from controller.manager import ControllerOptions

    problem = attempt_budget_problem(args.attempt_budget, args.attempt_deadline)
    if problem is not None:
        raise ConfigError(problem)
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
    rules = default_rules(
        volcano_namespace=args.volcano_namespace, volcano_deployment=args.volcano_deployment
    )
    rules += tuple(PresenceRule.parse(text) for text in args.handoff or ())
    return ControllerOptions(
        reconcile_lws=args.lws,
        translate_koordinator=args.translate_koordinator,
        reconcile_hypernodes=args.hypernodes,
        fallback_scheduler=args.scheduler,
        handoff=HandOffConfig(scheduler_names=tuple(args.scheduler_name or ("topobridge",)), rules=rules),
        workers=args.workers,
        resync_period=args.resync_period,
        leader_election=le,
        identity=le.identity if le else (args.identity or "topobridge"),
        grace=args.grace,
        scheduler_tuning={
            "enable_preemption": args.enable_preemption == "true",
            "topology_aware": args.topology_aware == "true",
            "attempt_steps": args.attempt_budget,
            "attempt_guard": args.attempt_deadline,
            "gpu_nvlink_label": args.gpu_nvlink_label,
        },
    )


async def with_workers(
    main: Coroutine[Any, Any, None], args: argparse.Namespace, webhook: ServerSettings | None
) -> None:
    """Run `main` (the process) beside its webhook workers, if any; stop them when it ends."""
    if webhook is None or args.webhook_workers < 2:
        await main
        return
    from topobridge.workers import WorkerPool

    pool = WorkerPool(worker_argv(args, webhook), args.webhook_workers - 1)
    workers = asyncio.create_task(pool.run(), name="webhook-workers")
    try:
        await main
    finally:
        workers.cancel()
        await asyncio.gather(workers, return_exceptions=True)


def worker_argv(args: argparse.Namespace, webhook: ServerSettings) -> list[str]:
    """`topobridge run` as one more webhook process on the same port, with this one's settings."""
    argv = [sys.executable, "-m", "topobridge.cli", "--log-level", args.log_level]
    if args.log_format:
        argv += ["--log-format", args.log_format]
    argv += ["run", "--no-controller", "--webhook-worker", "--webhook-host", webhook.host]
    argv += ["--webhook-port", str(webhook.port), "--event-loop", args.event_loop]
    argv += ["--kube-api-qps", f"{args.kube_api_qps:g}"]
    argv += ["--kube-api-burst", str(args.kube_api_burst)]
    argv += ["--webhook-header-timeout", f"{webhook.connections.header_timeout:g}"]
    argv += ["--webhook-keepalive-timeout", f"{webhook.connections.keepalive_timeout:g}"]
    argv += ["--webhook-max-connections", str(webhook.connections.max_connections)]
    for flag, value in (
        ("--tls-cert-file", webhook.cert_file),
        ("--tls-key-file", webhook.key_file),
        ("--kubeconfig", args.kubeconfig),
        ("--context", args.context),
        ("--as", args.as_user),
    ):
        if value:
            argv += [flag, value]
    return argv
