"""`topobridge simulate [SCENARIO] [--output json|text] [--scheduler-names LIST] [--from-cluster]`

Runs the fallback placer and preemptor on a snapshot until nothing changes: preemption evicts,
then the gang is placed. SCENARIO is multi-document YAML or a `kind: List` of plain objects as
`kubectl get -o yaml` prints them (`-` reads standard input): Nodes, bound Pods (spec.nodeName),
pending Pods, PodGroups (scheduling.volcano.sh, scheduling.sigs.k8s.io, scheduling.x-k8s.io),
HyperNodes or a ClusterNetworkTopology `default`, PriorityClasses, PodDisruptionBudgets.
Pending pods are placed when their schedulerName is served; a pod without a gang is a gang of one.

--output json prints one object, keys sorted:
  bound          {"ns/pod": "node"}  the final node of every pod placed in this run
  nominated      {"ns/pod": "node"}  nominations made while victims terminated
  evicted        ["ns/pod"]          preemption victims
  unschedulable  {"ns/gang": "message"}  gangs still pending at the end, with the reason
  gangs          {"ns/gang": {"domain": D, "tier": N}}  each gang placed in this run: the lowest
                 domain holding it (HyperNode name, `<Layer>/<value>`, the node at tier 0,
                 `cluster` above every domain)
--output text (the default on a terminal) draws the topology tree with what landed where and
what was evicted, then the events of the run.

Without SCENARIO: the built-in demo, the 12-node spine/block cluster of Koordinator's
network-topology guide through its Example 1 and Example 2 (`--demo NAME` runs one scenario,
in either output; names: example-1, example-2, job-level-preemption).
--from-cluster reads the snapshot from the current kubeconfig, read-only: a dry run.

Exit status: 0 when the scenario was read (whatever got placed), 2 when it could not be.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from importlib import resources
from typing import Any, TextIO

from controller.placer.scenario import DEFAULT_SCHEDULERS, SimulationResult, load_scenario, simulate
from controller.placer.snapshot import CLUSTER, ClusterIndex
from topobridge.cmd_validate import UnreadableError, load_objects
from translations.errors import TopobridgeError
from translations.topology import natural_key

EXIT_OK, EXIT_UNREADABLE = 0, 2
DEMOS = ("example-1", "example-2", "job-level-preemption")
DEFAULT_DEMO = ("example-1", "example-2")
LARGE = 64
"""Above this many nodes the text tree shows only nodes where something happened."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "simulate",
        help="place and preempt gangs on a snapshot (a file, the demo, or the live cluster, read-only)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "scenario", nargs="?", metavar="SCENARIO", help="YAML file of objects; - for standard input"
    )
    p.add_argument(
        "--output",
        "-o",
        choices=("json", "text"),
        default=None,
        help="default: text on a terminal, else json",
    )
    p.add_argument(
        "--scheduler-names",
        default=",".join(DEFAULT_SCHEDULERS),
        metavar="LIST",
        help=f"schedulerNames whose pods are placed (default: {','.join(DEFAULT_SCHEDULERS)})",
    )
    p.add_argument("--demo", choices=DEMOS, default=None, help="run one built-in demo scenario")
    p.add_argument(
        "--from-cluster", action="store_true", help="read the snapshot from the current kubeconfig"
    )
    p.add_argument(
        "--kubeconfig", default=None, help="with --from-cluster: kubeconfig path (default: $KUBECONFIG)"
    )
    p.add_argument("--context", default=None, help="with --from-cluster: kubeconfig context")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(
        args.scenario,
        output=args.output,
        scheduler_names=args.scheduler_names,
        demo=args.demo,
        from_cluster=args.from_cluster,
        kubeconfig=args.kubeconfig,
        context=args.context,
        out=sys.stdout,
        err=sys.stderr,
    )


def run(
    scenario: str | None,
    *,
    output: str | None = None,
    scheduler_names: str = ",".join(DEFAULT_SCHEDULERS),
    demo: str | None = None,
    from_cluster: bool = False,
    kubeconfig: str | None = None,
    context: str | None = None,
    out: TextIO,
    err: TextIO,
    stdin: TextIO | None = None,
) -> int:
    served = tuple(s.strip() for s in scheduler_names.split(",") if s.strip())
    if not served:
        print("error: --scheduler-names: Required value: at least one schedulerName", file=err)
        return EXIT_UNREADABLE
    given = [scenario is not None, demo is not None, from_cluster]
    if sum(given) > 1:
        print("error: give one of SCENARIO, --demo and --from-cluster", file=err)
        return EXIT_UNREADABLE
    fmt = output or ("text" if out.isatty() else "json")
    if scenario is None and demo is None and not from_cluster:
        if fmt == "json":
            print(
                "error: the built-in demo runs several scenarios and --output json prints one object: "
                f"pick one with --demo NAME ({', '.join(DEMOS)})",
                file=err,
            )
            return EXIT_UNREADABLE
        names: Sequence[str] = DEFAULT_DEMO
    else:
        names = [demo] if demo is not None else []
    runs: list[tuple[str, SimulationResult]] = []
    try:
        if names:
            for name in names:
                runs.append((f"demo {name}", _simulate(*_demo_objects(name), served)))
        elif from_cluster:
            from topobridge.snapshot_io import SnapshotError, read_cluster

            try:
                objects = read_cluster(kubeconfig=kubeconfig, context=context)
            except SnapshotError as exc:
                print(f"error: --from-cluster: {exc}", file=err)
                return EXIT_UNREADABLE
            sources = [f"cluster object {i + 1}" for i in range(len(objects))]
            runs.append(
                (
                    "the current cluster",
                    simulate(load_scenario(objects, sources=sources, lenient=True), schedulers=served),
                )
            )
        else:
            assert scenario is not None
            located = list(load_objects(scenario, stdin))
            objects = [loc.obj for loc in located]
            runs.append((scenario, _simulate(objects, [loc.source for loc in located], served)))
    except UnreadableError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_UNREADABLE
    except TopobridgeError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_UNREADABLE
    for title, result in runs:
        for warning in result.warnings:
            print(f"warning: {warning}", file=err)
        if fmt == "json":
            json.dump(result.contract(), out, sort_keys=True)
            out.write("\n")
        else:
            out.write(render_text(title, result))
    return EXIT_OK


def _demo_objects(name: str) -> tuple[list[Any], list[str]]:
    ref = resources.files("controller.placer") / "demo" / f"{name}.yaml"
    with resources.as_file(ref) as path:
        located = list(load_objects(str(path)))
    return [loc.obj for loc in located], [loc.source.replace(str(path), f"{name}.yaml", 1) for loc in located]


def _simulate(objects: list[Any], sources: list[str] | None, served: Sequence[str]) -> SimulationResult:
    return simulate(load_scenario(objects, sources=sources), schedulers=served)


# --- text output --------------------------------------------------------------------------------


def render_text(title: str, result: SimulationResult) -> str:
    """The topology tree with what landed where and what was evicted, then the run's events."""
    index = result.index
    assert index is not None
    lines = [f"== {title}: {index.n_nodes} node(s), {_topology_line(index)}", ""]
    placed = {p: n for p, n in result.bound.items()}
    evicted_on: dict[str, list[str]] = {}
    for pod in result.evicted:
        node = result.initial_pods.get(pod)
        if node is not None:
            evicted_on.setdefault(node, []).append(pod)
    running_on: dict[str, list[str]] = {}
    for pod, node in result.final_pods.items():
        if pod not in placed:
            running_on.setdefault(node, []).append(pod)
    placed_on: dict[str, list[str]] = {}
    for pod, node in placed.items():
        placed_on.setdefault(node, []).append(pod)
    touched = set(placed_on) | set(evicted_on)
    show_all = index.n_nodes <= LARGE
    width = max((len(n) for n in index.node_names), default=0)

    def node_line(v: int) -> str | None:
        name = index.node_names[v]
        if not show_all and name not in touched:
            return None
        parts = [f"{name.ljust(width)}  {_usage(index, result, v)}"]
        parts += [f"+ {p}" for p in sorted(placed_on.get(name, []), key=natural_key)]
        parts += [f"x {p}" for p in sorted(evicted_on.get(name, []), key=natural_key)]
        parts += [f". {p}" for p in sorted(running_on.get(name, []), key=natural_key)]
        return "   ".join(parts)

    def children(d: int | None) -> list[tuple[str, int]]:
        if d is None:
            kids = [("domain", r) for r in index.roots]
            kids += [("node", v) for v in range(*index.loose)]
            return kids
        kids = [("node", v) for v in range(int(index.dom_start[d]), int(index.dom_direct_end[d]))]
        return kids + [("domain", c) for c in index.dom_children[d]]

    def walk(d: int | None, prefix: str) -> None:
        kids = children(d)
        shown: list[tuple[str, str, int]] = []
        hidden = 0
        for kind, i in kids:
            if kind == "node":
                text = node_line(i)
                if text is None:
                    hidden += 1
                    continue
                shown.append((kind, text, i))
            else:
                shown.append((kind, index.domain_label(i), i))
        if hidden:
            shown.append(("note", f"({hidden} more node(s), nothing changed)", -1))
        for j, (kind, text, i) in enumerate(shown):
            last = j == len(shown) - 1
            lines.append(f"{prefix}{'└── ' if last else '├── '}{text}")
            if kind == "domain":
                walk(i, prefix + ("    " if last else "│   "))

    lines.append(CLUSTER)
    walk(None, "")
    lines += ["", "legend: + placed in this run   x evicted (preemption victim)   . running, untouched", ""]
    if result.events:
        lines.append("events:")
        for e in result.events:
            when = f"round {e.round}" if e.round else "end"
            lines.append(f"  {when:8s} {e.gang}  {e.what}: {e.message}")
        lines.append("")
    summary = (
        f"result: {len(result.bound)} bound, {len(result.nominated)} nominated, "
        f"{len(result.evicted)} evicted, {len(result.unschedulable)} unschedulable"
    )
    lines.append(summary)
    for gang, (domain, tier) in sorted(result.gangs.items(), key=lambda kv: natural_key(kv[0])):
        lines.append(f"  {gang} -> {domain} (tier {tier})")
    for gang, message in sorted(result.unschedulable.items(), key=lambda kv: natural_key(kv[0])):
        lines.append(f"  {gang} unschedulable: {message}")
    return "\n".join(lines) + "\n\n"


def _topology_line(index: ClusterIndex) -> str:
    tree = index.tree
    if tree.source == "none" or not index.n_domains:
        return "no topology (every node on its own)"
    names = [tree.tier_names.get(t, f"tier {t}") for t in sorted(index.tiers, reverse=True)]
    source = {
        "hypernode": "HyperNodes",
        "koordinator": "ClusterNetworkTopology default",
        "labels": "node labels",
    }
    return f"topology from {source.get(tree.source, tree.source)}: {' > '.join(names)}"


def _usage(index: ClusterIndex, result: SimulationResult, v: int) -> str:
    used = result.final_used
    parts = []
    for r, unit, scale in (("cpu", "", 1000), ("memory", "Gi", 2**30), ("nvidia.com/gpu", " gpu", 1)):
        pos = index.res_pos.get(r)
        if pos is None:
            continue
        alloc = int(index.alloc[v, pos])
        if r == "nvidia.com/gpu" and alloc == 0:
            continue
        u = int(used[v, pos]) if used is not None else 0
        label = {"cpu": "cpu ", "memory": "mem ", "nvidia.com/gpu": ""}[r]
        parts.append(f"{label}{_num(u / scale)}/{_num(alloc / scale)}{unit}")
    return " ".join(parts)


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:.1f}"
