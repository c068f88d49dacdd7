"""`topobridge run`."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="(not yet available)")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    print("topobridge run: not implemented yet", file=sys.stderr)
    return 2
