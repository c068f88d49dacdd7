"""`topobridge validate FILE... [--cluster-state FILE]`: the admission rules, offline.

Each FILE holds YAML documents (objects, a `kind: List`, or a list of objects); `-` reads
standard input. Every object of
a kind topobridge validates goes through the same rule the admission webhook runs. Errors and
warnings go to stderr, naming the object; one verdict line per object goes to stdout.
Exit status: 0 all valid, 1 some object invalid, 2 a file could not be read.

`--cluster-state FILE` supplies what the webhook would see in the cluster (HyperNodes, the
ClusterNetworkTopology, Pods), so the checks that need it run too; without it they are skipped.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

import yaml

EXIT_VALID, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "validate",
        help="check topology objects as the admission webhook would",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="YAML file(s) of objects; - for standard input")
    p.add_argument(
        "--cluster-state",
        metavar="FILE",
        help="YAML HyperNodes, ClusterNetworkTopology and Pods standing in for the cluster",
    )
    p.set_defaults(handler=_handle)


class UnreadableError(Exception):
    """A file that cannot be read as Kubernetes objects."""


class _Loader(yaml.SafeLoader):
    """YAML as the API server reads it: timestamps stay strings (JSON has no dates)."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True, slots=True)
class Located:
    """An object and where it came from, for messages."""

    obj: Any
    source: str


def load_objects(path: str, stdin: TextIO | None = None) -> Iterator[Located]:
    """Every object in a YAML file: documents, with `kind: List` (`*List`) and bare YAML lists flattened."""
    try:
        if path == "-":
            text = (stdin or sys.stdin).read()
        else:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UnreadableError(f"{path}: cannot read: {exc}") from None
    try:
        documents = list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        raise UnreadableError(f"{path}: not valid YAML: {exc}") from None
    for n, doc in enumerate(documents, start=1):
        where = f"{path} document {n}"
        if doc is None:
            continue
        if isinstance(doc, list):  # a bare YAML list of objects
            items: list[Any] = doc
        elif (
            isinstance(doc, dict)
            and str(doc.get("kind", "")).endswith("List")
            and isinstance(doc.get("items"), list)
        ):
            items = doc["items"]
        elif isinstance(doc, dict):
            yield Located(doc, where)
            continue
        else:
            raise UnreadableError(f"{where}: not a Kubernetes object (a {type(doc).__name__})")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise UnreadableError(f"{where} item {i}: not a Kubernetes object (a {type(item).__name__})")
            yield Located(item, f"{where} item {i}")


def describe(obj: Any) -> str:
    """`Kind namespace/name` (or `Kind name`) of a raw object, robust to any shape."""
    if not isinstance(obj, dict):
        return f"<{type(obj).__name__}>"
    raw_meta = obj.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    name = meta.get("name") or meta.get("generateName") or "<unnamed>"
    ns = meta.get("namespace")
    kind = obj.get("kind") or "<no kind>"
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def _handle(args: argparse.Namespace) -> int:
    return run(args.files, cluster_state=args.cluster_state, out=sys.stdout, err=sys.stderr)


def run(
    files: list[str], *, cluster_state: str | None, out: TextIO, err: TextIO, stdin: TextIO | None = None
) -> int:
    from webhooks.rules.cluster_state import ClusterState
    from webhooks.rules.registry import validate_object

    state = ClusterState.unknown()
    if cluster_state is not None:
        try:
            state, problems = ClusterState.from_objects(o.obj for o in load_objects(cluster_state, stdin))
        except UnreadableError as exc:
            print(f"error: --cluster-state {exc}", file=err)
            return EXIT_UNREADABLE
        for problem in problems:
            print(f"warning: --cluster-state {cluster_state}: {problem}", file=err)
    try:
        objects = [o for path in files for o in load_objects(path, stdin)]
    except UnreadableError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_UNREADABLE
    invalid = 0
    for located in objects:
        who = describe(located.obj)
        kind, decision = validate_object(located.obj, state)
        if kind is None:
            print(f"skipped {who} ({located.source}): not a kind topobridge validates", file=out)
            continue
        for w in decision.warnings:
            print(f"warning: {who}: {w}", file=err)
        for e in decision.errors:
            print(f"error: {who}: {e}", file=err)
        if decision.allowed:
            print(f"valid {who}", file=out)
        else:
            invalid += 1
            print(f"invalid {who} ({located.source})", file=out)
    return EXIT_INVALID if invalid else EXIT_VALID
