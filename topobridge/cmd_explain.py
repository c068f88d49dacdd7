"""`topobridge explain GANG [-n NAMESPACE] [-f JOB.yaml] [--from FILE] [-o text|json|yaml]`: why a
gang waits, and what would let it start, as the scheduling cycle itself answers it.

For each tier from single nodes up: the domain that can hold the most of the gang's pending
pods now, and how many; what stops the rest (the Filter plugins' reasons, resources short, the
tier limit, the GPU rules); whether preemption could help and at what cost (its victims, their
priorities, the PodDisruptionBudgets they touch); and single changes that would let it start
(soft mode, a wider tier, a smaller minMember), each checked by running the cycle again.

The cluster is read through the kubeconfig, read-only (only `list` calls), or from `--from FILE`
(a scenario as `simulate` reads it). `-f JOB.yaml` adds a job not yet submitted (its PodGroup
and pods, as written) and explains it. GANG is NAME, NAMESPACE/NAME or the gang's key
(`volcano:NAMESPACE/NAME`).

Exit status: 0 explained, 1 no such gang, 2 the cluster or a file could not be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from topobridge import output

if TYPE_CHECKING:
    from controller.placer.scenario import Prepared, Scenario

EXIT_OK, EXIT_NO_GANG, EXIT_UNREADABLE = 0, 1, 2
FORMATS = (output.TEXT, output.JSON, output.YAML)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explain",
        help="why a gang waits and what would let it start, from the scheduling cycle itself (read-only)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("gang", nargs="?", default=None, help="NAME, NAMESPACE/NAME or the gang's key")
    p.add_argument("-n", "--namespace", default=None, help="the gang's namespace (default: any)")
    p.add_argument("-f", "--filename", default=None, metavar="JOB.yaml", help="a job not yet submitted")
    p.add_argument(
        "--from", dest="source", default=None, metavar="FILE", help="a scenario file, not the cluster"
    )
    output.add_output_argument(p, formats=FORMATS, default=output.TEXT, says="the explanation as data")
    p.set_defaults(handler=_handle)


@dataclass(frozen=True)
class Cluster:
    """Where the cluster is read from: a scenario file, else the kubeconfig's cluster (read-only)."""

    source: str | None = None
    kubeconfig: str | None = None
    context: str | None = None

    def objects(self) -> list[Mapping[str, Any]]:
        """Its objects; ValueError (the reason) when they cannot be read."""
        if self.source is not None:
            return _read(self.source)
        from topobridge.snapshot_io import SnapshotError, read_cluster

        try:
            return list(read_cluster(kubeconfig=self.kubeconfig, context=self.context))
        except SnapshotError as exc:
            raise ValueError(str(exc)) from None


def _handle(args: argparse.Namespace) -> int:
    return run(
        gang=args.gang,
        namespace=args.namespace,
        filename=args.filename,
        cluster=Cluster(args.source, args.kubeconfig, args.context),
        output_format=args.output,
        out=sys.stdout,
        err=sys.stderr,
    )


def run(
    *,
    gang: str | None,
    namespace: str | None = None,
    filename: str | None = None,
    cluster: Cluster | None = None,
    output_format: str = output.TEXT,
    out: TextIO,
    err: TextIO,
) -> int:
    try:
        objects = (cluster or Cluster()).objects()
        added = _read(filename) if filename else []
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=err)
        return EXIT_UNREADABLE
    from controller.placer.explain import render

    wanted = gang or _first_gang_of(added)
    if wanted is None:
        print("error: name a gang, or give -f JOB.yaml", file=err)
        return EXIT_NO_GANG
    found = explain_objects([*objects, *added], wanted, namespace)
    if found is None:
        print(f"error: no gang {wanted}{f' in namespace {namespace}' if namespace else ''}", file=err)
        return EXIT_NO_GANG
    if output_format == output.JSON:
        output.dump_json(found.to_dict(), out)
    elif output_format == output.YAML:
        output.dump_yaml(found.to_dict(), out)
    else:
        out.write(render(found))
    return EXIT_OK


def explain_objects(objects: Sequence[Mapping[str, Any]], wanted: str, namespace: str | None = None) -> Any:
    """The explanation of gang `wanted` among `objects` (None when no gang has that name)."""
    from controller.placer.scenario import load_scenario, prepare

    sc = load_scenario(objects, lenient=True)
    return explain_prepared(sc, prepare(sc), wanted, namespace)


def explain_prepared(sc: Scenario, prep: Prepared, wanted: str, namespace: str | None = None) -> Any:
    """The same, for a snapshot already read (`topobridge ui` asks one snapshot many times)."""
    from controller.placer.budgets import budgets_from
    from controller.placer.explain import explain

    gang = next((g for g in prep.gangs() if _named(g.key, g.name, wanted, namespace)), None)
    if gang is None:
        return None
    return explain(gang, prep.snapshot, budgets_from(sc.pdbs, prep.snapshot))


def _named(key: str, name: str, wanted: str, namespace: str | None) -> bool:
    ns, short = name.split("/", 1)
    if namespace is not None and ns != namespace:
        return False
    return wanted in (key, name, short)


def _read(path: str) -> list[Mapping[str, Any]]:
    from topobridge.inputs import read_inputs

    inputs = read_inputs([path])
    if inputs.problems:
        raise ValueError("; ".join(inputs.problems))
    return [loc.obj for loc in inputs.objects]


def _first_gang_of(objects: Sequence[Mapping[str, Any]]) -> str | None:
    """The gang a job file names: its PodGroup, else its first pod's gang name."""
    for obj in objects:
        if obj.get("kind") in ("PodGroup", "Job", "LeaderWorkerSet"):
            meta = obj.get("metadata") or {}
            return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
    return None
