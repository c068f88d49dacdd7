"""`topobridge dev-cluster`."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("dev-cluster", help="(not yet available)")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    print("topobridge dev-cluster: not implemented yet", file=sys.stderr)
    return 2
