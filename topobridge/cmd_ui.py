"""`topobridge ui [-f FILE [--simulate]] [--host 127.0.0.1] [--port 8401] [--open]`: a local,
read-only web page of the topology tree, why gangs wait, and where a job would land.

The page draws the tree the scheduler uses as an icicle (click a domain to zoom in, the
breadcrumb to zoom out), each domain coloured by its free capacity (GPUs when the cluster has
any, else CPU; memory on request), placed gangs outlined in the domain that holds them, pending
gangs with `topobridge explain`'s answer, the largest free room per tier, and a what-if box:
paste a job (a PodGroup and its pods, or any kind `simulate` expands) and see where
`simulate` would place it, or why not. Large clusters are sent as aggregates; a domain's nodes
are drawn once it is zoomed in to at most 128 of them.

The cluster is read through the kubeconfig (`--kubeconfig`, `--context`) as `kubectl proxy`
would, only with list and watch calls, and the page redraws as it changes (Server-Sent Events).
`-f FILE` (repeatable; `--from FILE` is its older spelling) shows a scenario instead, named as
`simulate`, `explain` and `tree` name one (as `simulate` reads it; with `--simulate`, as the
simulation leaves it), with no watch. `--from-cluster` is the default; what a job would do on
the live cluster is the page's what-if box (or `simulate --from-cluster -f JOB`).

The server listens on 127.0.0.1 and answers only to loopback names. `--host` binds elsewhere,
and only when given explicitly: anyone who can reach that address then reads the cluster
through your credentials (read-only).

Exit status: 0 stopped (Ctrl-C), 2 the cluster or the file could not be read, or the address
could not be bound.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO

from topobridge.inputs import add_snapshot_arguments

EXIT_OK, EXIT_UNREADABLE = 0, 2
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8401


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ui",
        help="a local, read-only web page of the topology, why gangs wait, and what if (127.0.0.1)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_snapshot_arguments(p, old_from=True)
    p.add_argument(
        "--simulate", action="store_true", help="with -f: show the scenario as `simulate` leaves it"
    )
    p.add_argument(
        "--host",
        default=None,
        help=f"address to listen on (default: {DEFAULT_HOST}); an address other than loopback is "
        "used only when given here, and shows the cluster to whoever reaches it",
    )
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"default: {DEFAULT_PORT}; 0: any free port"
    )
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.set_defaults(handler=_handle)


@dataclass(frozen=True)
class Listen:
    """Where the page is served: `host` None is loopback (DEFAULT_HOST); `open_browser` opens it."""

    host: str | None = None
    port: int = DEFAULT_PORT
    open_browser: bool = False


def _handle(args: argparse.Namespace) -> int:
    if args.from_cluster and args.filenames:
        print(
            "error: --from-cluster with -f: the page's what-if box asks what a job would do on the "
            "live cluster (or: topobridge simulate --from-cluster -f JOB)",
            file=sys.stderr,
        )
        return EXIT_UNREADABLE
    return run(
        source=args.filenames or None,
        recursive=args.recursive,
        simulate=args.simulate,
        listen=Listen(args.host, args.port, args.open),
        kubeconfig=args.kubeconfig,
        context=args.context,
        out=sys.stdout,
        err=sys.stderr,
    )


def run(
    *,
    source: str | Sequence[str] | None = None,
    recursive: bool = False,
    simulate: bool = False,
    listen: Listen = Listen(),
    kubeconfig: str | None = None,
    context: str | None = None,
    out: TextIO,
    err: TextIO,
) -> int:
    from topobridge.ui.server import is_loopback

    host, port = listen.host, listen.port
    problem = check_address(host, port, simulate=simulate, source=source)
    if problem:
        print(f"error: {problem}", file=err)
        return EXIT_UNREADABLE
    bind = host if host is not None else DEFAULT_HOST
    if not is_loopback(bind):
        print(
            f"warning: --host {bind}: not a loopback address: whoever reaches it reads the "
            "cluster's view through your credentials (read-only)",
            file=err,
        )
    try:
        src = _source(_files(source), simulate, kubeconfig, context, recursive=recursive)
    except ValueError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_UNREADABLE
    return _serve(src, Listen(bind, port, listen.open_browser), out, err)


def _files(source: str | Sequence[str] | None) -> list[str]:
    return [source] if isinstance(source, str) else list(source or ())


def check_address(host: str | None, port: int, *, simulate: bool, source: str | Sequence[str] | None) -> str:
    """What is wrong with the flags, "" when nothing is."""
    if simulate and not source:
        return "--simulate: needs -f FILE (a live cluster is shown as it is)"
    if not 0 <= port <= 65535:
        return f"--port: Invalid value: {port}: must be between 0 and 65535"
    if host is not None and not host.strip():
        return '--host: Invalid value: "": an address to listen on'
    return ""


def _source(
    files: Sequence[str],
    simulate: bool,
    kubeconfig: str | None,
    context: str | None,
    *,
    recursive: bool = False,
) -> Any:
    from topobridge.ui.server import ClusterSource, FileSource

    if not files:
        return ClusterSource(kubeconfig=kubeconfig, context=context)
    source = ", ".join(files)
    objects, sources = _read(files, recursive=recursive)
    if simulate:
        from topobridge.ui.whatif import settled
        from translations.errors import TopobridgeError

        try:
            objects = [*settled(objects, sources)]
        except TopobridgeError as exc:
            raise ValueError(str(exc)) from None
        return FileSource(objects, f"{source}, after simulate")
    return FileSource(objects, source)


def _read(paths: Sequence[str], *, recursive: bool = False) -> tuple[list[Mapping[str, Any]], list[str]]:
    from topobridge.inputs import read_inputs

    inputs = read_inputs(paths, recursive=recursive)
    if inputs.problems:
        raise ValueError("; ".join(inputs.problems))
    if not inputs.objects:
        raise ValueError(f"{', '.join(paths)}: no objects")
    return [loc.obj for loc in inputs.objects], [loc.source for loc in inputs.objects]


def _serve(src: Any, listen: Listen, out: TextIO, err: TextIO) -> int:
    from controller.errors import ControllerError
    from topobridge import eventloop
    from topobridge.ui.server import serve

    host, port = listen.host or DEFAULT_HOST, listen.port

    def announce(url: str) -> None:
        print(f"serving {url} (read-only; Ctrl-C stops)", file=out, flush=True)
        if listen.open_browser:
            import webbrowser

            webbrowser.open(url)

    async def main() -> bool:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        return await serve(src, host=host, port=port, announce=announce, stop=stop)

    try:
        left_running = eventloop.run(main(), eventloop.default_event_loop())
    except OSError as exc:
        print(f"error: {host}:{port}: cannot listen: {exc.strerror or exc}", file=err)
        return EXIT_UNREADABLE
    except ControllerError as exc:
        print(f"error: reading the cluster failed: {exc}", file=err)
        return EXIT_UNREADABLE
    if left_running:
        _exit_now(out, err)
    return EXIT_OK


def _exit_now(out: TextIO, err: TextIO) -> NoReturn:
    """End the process at once, without the interpreter's finalization: a model computation
    (the first model, a what-if) still runs on the ui's daemon worker thread, and finalization
    stops such a thread wherever it next takes the interpreter back, inside numpy's C++ code
    too, where that unwinding aborts the whole process ("terminate called without an active
    exception", exit -6, on a ui stopped while it read its first snapshot). Nothing is lost:
    the ui writes nothing, and what it printed is flushed first."""
    for stream in (out, err, sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    logging.shutdown()
    os._exit(EXIT_OK)
