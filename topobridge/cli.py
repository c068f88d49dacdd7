"""The `topobridge` command. Each subcommand lives in its own `cmd_*` module exposing
`register(subparsers)`; registration is cheap and each handler imports what it needs.

Global flags (`--log-level`, `--log-format`, `--kubeconfig`, `--context`) are accepted before
or after the subcommand, as kubectl's are: every subparser gets them with a suppressed default,
so a flag given after the subcommand wins and one given before is not reset by it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from topobridge import __version__, logs

SUBCOMMANDS = (
    "validate",
    "translate",
    "simulate",
    "tree",
    "explain",
    "ui",
    "run",
    "crds",
    "manifests",
    "dev_cluster",
    "completion",
)
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("json", "console")
GLOBAL_FLAGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--log-level", {"default": "info", "choices": LOG_LEVELS, "help": "default: info"}),
    (
        "--log-format",
        {"default": None, "choices": LOG_FORMATS, "help": "default: console on a terminal, else json"},
    ),
    ("--kubeconfig", {"default": None, "help": "kubeconfig file (default: $KUBECONFIG, ~/.kube/config)"}),
    ("--context", {"default": None, "help": "kubeconfig context (default: the current one)"}),
)


@cache
def version_text() -> str:
    """`topobridge 0.1.0 (commit 1a2b3c4)`: the commit from $TOPOBRIDGE_COMMIT (set by image
    builds), else from the git checkout the package runs from, else left out."""
    commit = os.environ.get("TOPOBRIDGE_COMMIT", "").strip()
    if not commit:
        root = Path(__file__).resolve().parent.parent
        if (root / ".git").exists():
            try:
                commit = subprocess.run(
                    ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                    check=False,
                ).stdout.strip()
            except OSError:
                commit = ""
    return f"topobridge {__version__}" + (f" (commit {commit})" if commit else "")


class _Version(argparse.Action):
    """--version, computing the text only when asked (git runs only then)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any, **__: Any) -> None:
        print(version_text())
        parser.exit()


class Parser(argparse.ArgumentParser):
    """argparse without prefix matching: `simulate --from FILE` is an error, never taken for
    `--from-cluster`. Subcommands' parsers are of the parser's own class, so this holds for
    every one of them, nested ones too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = Parser(
        prog="topobridge",
        description="Validate, translate, place and preempt topology-aware gangs across LWS, Koordinator and Volcano.",
    )
    parser.add_argument("--version", action=_Version, help="print the version (and git commit) and exit")
    for flag, options in GLOBAL_FLAGS:
        parser.add_argument(flag, **options)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"topobridge.cmd_{name}")
        module.register(sub)
    _share_global_flags(sub)
    return parser


def _share_global_flags(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Every subparser (nested ones too) accepts the global flags; none sets their default."""
    for parser in set(sub.choices.values()):
        for flag, options in GLOBAL_FLAGS:
            own = parser._option_string_actions.get(flag)
            if own is not None:  # the subcommand documents it in its own words
                own.default = argparse.SUPPRESS
                continue
            parser.add_argument(flag, **{**options, "default": argparse.SUPPRESS})
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _share_global_flags(action)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logs.configure(
        level=args.log_level, json_output=None if args.log_format is None else args.log_format == "json"
    )
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `topobridge ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
