"""`topobridge dev-cluster up|down|status`: a local control plane that outlives the command.

`up` starts etcd + kube-apiserver + kube-controller-manager (and kube-scheduler with
`--with-scheduler`) detached, installs the CRDs, records PIDs and paths in
~/.cache/topobridge/dev-cluster/state.json and prints the kubeconfig path on stdout, so
`export KUBECONFIG=$(topobridge dev-cluster up)` works. `down` stops every recorded
process by PID and removes the directories; `status` reports what runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from topobridge.devcluster import LocalControlPlane

log = structlog.get_logger(__name__)


def state_dir() -> Path:
    from topobridge.devcluster import cache_root

    return cache_root() / "dev-cluster"


def state_file() -> Path:
    return state_dir() / "state.json"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "dev-cluster",
        help="start or stop a local control plane (etcd + kube-apiserver) with the CRDs installed",
        description="A real local Kubernetes control plane for trying topobridge. Binaries come from "
        "`bash hack/install-control-plane.sh`.",
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    up = actions.add_parser("up", help="start it (detached) and print the KUBECONFIG path")
    up.add_argument("--with-scheduler", action="store_true", help="also run kube-scheduler")
    up.add_argument("--no-controller-manager", action="store_true", help="skip kube-controller-manager")
    up.add_argument(
        "--crds-dir", type=Path, default=None, help="CRDs to install (default: the repository's crds/)"
    )
    actions.add_parser("down", help="stop every process it started and remove its files")
    actions.add_parser("status", help="say whether it runs, with PIDs and memory")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    handlers = {"up": _up, "down": _down, "status": _status}
    return handlers[args.action](args)


def _load() -> LocalControlPlane | None:
    from topobridge.devcluster import ControlPlaneState, LocalControlPlane

    path = state_file()
    if not path.is_file():
        return None
    try:
        state = ControlPlaneState.from_json(path.read_text())
    except (ValueError, TypeError, KeyError) as exc:
        log.warning("dev_cluster.state_unreadable", path=str(path), error=str(exc))
        return None
    return LocalControlPlane.attach(state)


def _up(args: argparse.Namespace) -> int:
    from topobridge.devcluster import DEFAULT_CRDS_DIR, ControlPlaneError, LocalControlPlane

    existing = _load()
    if existing is not None:
        alive = existing.alive()
        if alive and all(alive.values()):
            log.info("dev_cluster.already_running", server=existing.server, kubeconfig=existing.kubeconfig)
            print(existing.kubeconfig)
            return 0
        log.info("dev_cluster.cleaning_stale", processes=alive)
        existing.stop()
        state_file().unlink(missing_ok=True)

    plane = LocalControlPlane(
        work_dir=state_dir() / "run",
        crds_dir=args.crds_dir or DEFAULT_CRDS_DIR,
        with_controller_manager=not args.no_controller_manager,
        with_scheduler=args.with_scheduler,
        detach=True,
    )
    try:
        state = plane.start()
    except ControlPlaneError as exc:
        print(f"topobridge dev-cluster up: {exc}", file=sys.stderr)
        return 1
    state_dir().mkdir(parents=True, exist_ok=True)
    state_file().write_text(state.to_json())
    log.info(
        "dev_cluster.up",
        server=state.server,
        kubeconfig=state.kubeconfig,
        startup_seconds=round(state.startup_seconds, 2),
        rss_mb=round(plane.rss_bytes() / 2**20),
        processes={p["name"]: p["pid"] for p in state.processes},
    )
    print(state.kubeconfig)
    return 0


def _down(args: argparse.Namespace) -> int:
    plane = _load()
    if plane is None:
        log.info("dev_cluster.not_running")
        return 0
    pids = {p.name: p.pid for p in plane.processes}
    plane.stop()
    state_file().unlink(missing_ok=True)
    log.info("dev_cluster.down", stopped=pids)
    return 0


def _status(args: argparse.Namespace) -> int:
    plane = _load()
    if plane is None:
        print("dev-cluster: not running")
        return 3
    alive = plane.alive()
    running = bool(alive) and all(alive.values())
    print(f"dev-cluster: {'running' if running else 'degraded'}")
    print(f"  server:     {plane.server}")
    print(f"  kubeconfig: {plane.kubeconfig}")
    print(f"  uptime:     {time.time() - plane.started_at:.0f}s (started in {plane.startup_seconds:.1f}s)")
    print(f"  memory:     {plane.rss_bytes() / 2**20:.0f} MiB RSS")
    for proc in plane.processes:
        print(f"  {proc.name:<24} pid {proc.pid:<8} {'alive' if alive[proc.name] else 'GONE'}")
    return 0 if running else 1
