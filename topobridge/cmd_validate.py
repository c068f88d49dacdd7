"""`topobridge validate [-f] FILE... [-R] [-o text|json|yaml|name] [--cluster-state FILE]`

Checks LWS, Volcano (PodGroups, HyperNodes, Jobs), Koordinator, Kueue TAS, GPU-dialect and
Kubernetes' own gang API (`scheduling.k8s.io` Workload, PodGroup, CompositePodGroup) objects with
the same rules the admission webhook runs.
FILE is a file of YAML or JSON documents (objects, a `kind: List`, or a list of objects), a
directory (its .yaml, .yml and .json files; -R for subdirectories too) or - for standard input;
give them as arguments or with -f, as kubectl takes them. Every file is read and reported: one
that cannot be read does not stop the others.

Output (stdout), one verdict per object:
  text (default)  `valid Kind ns/name`, `invalid Kind ns/name (where)`, `skipped ...`
  json, yaml      {"results": [{"object", "source", "verdict", "errors", "warnings"}],
                   "unreadable": ["file: why"]}
  name            `kind.group/name` of every valid object
Errors and warnings always go to stderr too, naming the object and the field.

Every object, whatever its kind, is first checked as the API server checks it: `apiVersion` and
`kind` given, a name (or generateName), names and namespaces in Kubernetes' form (`nodeC` and a
namespace `NS1` are refused, naming `metadata.name` / `metadata.namespace`).

Exit status: 0 all valid, 1 some object invalid, 2 a file could not be read or held no objects.

`--cluster-state FILE` supplies what the webhook would see in the cluster (HyperNodes, the
ClusterNetworkTopology, Pods), so the checks that need it run too; without it they are skipped.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from topobridge import output
from topobridge.inputs import (
    Inputs,
    Located,
    UnreadableError,
    add_filename_arguments,
    describe,
    load_objects,
    paths_of,
    read_reporting,
)

__all__ = [
    "EXIT_INVALID",
    "EXIT_UNREADABLE",
    "EXIT_VALID",
    "Located",
    "UnreadableError",
    "load_objects",
    "run",
]

EXIT_VALID, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2
FORMATS = (output.TEXT, output.JSON, output.YAML, output.NAME)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "validate",
        help="check topology objects as the admission webhook would",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_filename_arguments(p)
    output.add_output_argument(p, formats=FORMATS, default=output.TEXT, says="one verdict per object")
    p.add_argument(
        "--cluster-state",
        metavar="FILE",
        help="YAML HyperNodes, ClusterNetworkTopology and Pods standing in for the cluster",
    )
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(
        paths_of(args),
        recursive=args.recursive,
        output_format=args.output,
        cluster_state=args.cluster_state,
        out=sys.stdout,
        err=sys.stderr,
    )


@dataclass
class Verdict:
    """What validate says about one object."""

    located: Located
    verdict: str
    """valid, invalid, or skipped (not a kind topobridge validates)."""
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def who(self) -> str:
        return describe(self.located.obj)

    def to_dict(self) -> dict[str, Any]:
        return {
            "object": self.who,
            "source": self.located.source,
            "verdict": self.verdict,
            "errors": self.errors,
            "warnings": self.warnings,
        }

    def text(self) -> str:
        if self.verdict == "valid":
            return f"valid {self.who}"
        return f"{self.verdict} {self.who} ({self.located.source})" + (
            ": not a kind topobridge validates" if self.verdict == "skipped" else ""
        )


def run(
    files: list[str],
    *,
    cluster_state: str | None,
    out: TextIO,
    err: TextIO,
    stdin: TextIO | None = None,
    recursive: bool = False,
    output_format: str = output.TEXT,
) -> int:
    from webhooks.rules.cluster_state import ClusterState

    state = ClusterState.unknown()
    if cluster_state is not None:
        try:
            state, problems = ClusterState.from_objects(o.obj for o in load_objects(cluster_state, stdin))
        except UnreadableError as exc:
            print(f"error: --cluster-state {exc}", file=err)
            return EXIT_UNREADABLE
        for problem in problems:
            print(f"warning: --cluster-state {cluster_state}: {problem}", file=err)
    inputs = read_reporting("validate", files, err=err, recursive=recursive, stdin=stdin)
    if inputs is None:
        return EXIT_UNREADABLE
    verdicts = check(inputs, state)
    for v in verdicts:
        for w in v.warnings:
            print(f"warning: {v.who}: {w}", file=err)
        for e in v.errors:
            print(f"error: {v.who}: {e}", file=err)
    _print(verdicts, inputs, output_format, out)
    if inputs.problems:
        return EXIT_UNREADABLE
    return EXIT_INVALID if any(v.verdict == "invalid" for v in verdicts) else EXIT_VALID


def check(inputs: Inputs, state: Any) -> list[Verdict]:
    """Every object through what the API server checks first (`translations.envelope`: apiVersion,
    kind, name and namespace, for every kind), then the admission rule for its kind."""
    from translations.envelope import envelope_problems
    from webhooks.rules.registry import validate_object

    verdicts = []
    for located in inputs.objects:
        envelope = [f"{p.field_path}: {p.detail}" for p in envelope_problems(located.obj)]
        kind, decision = validate_object(located.obj, state)
        if kind is None and not envelope:
            verdicts.append(Verdict(located, "skipped"))
            continue
        errors = [*envelope, *(str(e) for e in decision.errors)]
        verdicts.append(
            Verdict(
                located,
                "invalid" if errors else "valid",
                errors=errors,
                warnings=[str(w) for w in decision.warnings],
            )
        )
    return verdicts


def _print(verdicts: list[Verdict], inputs: Inputs, fmt: str, out: TextIO) -> None:
    if fmt == output.NAME:
        output.write_objects([v.located.obj for v in verdicts if v.verdict == "valid"], fmt, out)
    elif fmt in (output.JSON, output.YAML):
        doc = {"results": [v.to_dict() for v in verdicts], "unreadable": inputs.problems}
        (output.dump_json if fmt == output.JSON else output.dump_yaml)(doc, out)
    else:
        for v in verdicts:
            print(v.text(), file=out)
