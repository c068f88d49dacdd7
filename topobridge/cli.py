"""The `topobridge` command. Each subcommand lives in its own `cmd_*` module exposing
`register(subparsers)`; the module is imported only when its subcommand runs would be nicer,
but argparse needs the parsers up front, so registration is cheap and imports are deferred
inside each command's handler.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from topobridge import __version__, logs

SUBCOMMANDS = (
    "validate",
    "translate",
    "simulate",
    "run",
    "crds",
    "manifests",
    "dev_cluster",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="topobridge",
        description="Validate, translate, place and preempt topology-aware gangs across LWS, Koordinator and Volcano.",
    )
    parser.add_argument("--version", action="version", version=f"topobridge {__version__}")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.add_argument("--log-format", choices=["json", "console"], default=None, help="default: console on a terminal")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"topobridge.cmd_{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logs.configure(level=args.log_level, json_output=None if args.log_format is None else args.log_format == "json")
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
