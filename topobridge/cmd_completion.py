"""`topobridge completion bash|zsh`: a shell completion script on stdout.

    source <(topobridge completion bash)          # bash, this shell
    topobridge completion zsh > "${fpath[1]}/_topobridge"   # zsh, every shell

The script is generated from the same parser the command runs with (shtab), so every
subcommand, flag and choice completes, and FILE arguments complete file names.
"""

from __future__ import annotations

import argparse
import sys

SHELLS = ("bash", "zsh")
FILE_ARGUMENTS = frozenset({"files", "filenames", "scenario", "cluster_state", "kubeconfig", "chart_dir"})
"""Destinations whose values are paths: they complete file names."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "completion",
        help="print a bash or zsh completion script",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("shell", choices=SHELLS)
    p.set_defaults(handler=_handle)


def script(shell: str) -> str:
    # shtab walks argparse's own structures, so the script cannot drift from the parser; a
    # hand-written generator would have to learn zsh's _arguments syntax to do the same.
    import shtab

    from topobridge.cli import build_parser

    parser = build_parser()
    _complete_files(parser, shtab.FILE)
    text: str = shtab.complete(parser, shell=shell)
    return text


def _complete_files(parser: argparse.ArgumentParser, how: object) -> None:
    for action in parser._actions:
        if action.dest in FILE_ARGUMENTS:
            action.complete = how  # type: ignore[attr-defined]
        if isinstance(action, argparse._SubParsersAction):
            for child in set(action.choices.values()):
                _complete_files(child, how)


def _handle(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.shell))
    return 0
