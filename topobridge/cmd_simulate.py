"""`topobridge simulate [[-f] SCENARIO...] [-o text|json|yaml] [--scheduler-names LIST] [--from-cluster [-f JOB]]`

Runs the fallback placer and preemptor on a snapshot until nothing changes: preemption evicts,
then the gang is placed. SCENARIO is YAML or JSON documents or a `kind: List` of plain objects as
`kubectl get -o yaml` prints them (`-` reads standard input; several files or a directory, with
-R for subdirectories, make one snapshot together): Nodes, bound Pods (spec.nodeName),
pending Pods, PodGroups (scheduling.volcano.sh, scheduling.sigs.k8s.io, scheduling.x-k8s.io),
HyperNodes or a ClusterNetworkTopology `default`, PriorityClasses, PodDisruptionBudgets.
Pending pods are placed when their schedulerName is served; a pod without a gang is a gang of one.
LeaderWorkerSets, Volcano Jobs and batch/v1 Jobs are taken as written: each becomes the pods (and
Volcano PodGroups) its controllers would create, less the pods the input already holds.

-o json prints one object on one line, keys sorted (-o yaml: the same object as YAML):
  bound          {"ns/pod": "node"}  the final node of every pod placed in this run
  nominated      {"ns/pod": "node"}  nominations made while victims terminated
  evicted        ["ns/pod"]          preemption victims
  unschedulable  {"ns/gang": "message"}  gangs still pending at the end, with the reason
  gangs          {"ns/gang": {"domain": D, "tier": N}}  each gang placed in this run: the lowest
                 domain holding it (HyperNode name, `<Layer>/<value>`, the node at tier 0,
                 `cluster` above every domain)
  expanded       {"Kind ns/name": {"pods": [...], "podGroups": [...], "present": [...], "notes": [...]}}
                 only when the input had jobs to expand: the pods made, the PodGroups they join,
                 the pods already in the input, what stood in for what only a controller knows
-o text (the default, wherever stdout goes) draws the topology tree with what landed where and
what was evicted, then one line per expanded job, then the events of the run.

Without SCENARIO: the built-in demo, the 12-node spine/block cluster of Koordinator's
network-topology guide through its Example 1 and Example 2 (`--demo NAME` runs one scenario,
in either output; names: example-1, example-2, job-level-preemption).
--from-cluster reads the snapshot from the current kubeconfig, read-only: a dry run; with
SCENARIO (`simulate --from-cluster -f job.yaml`), a job not yet submitted is added to it: what
would happen if it were submitted now (the ui's what-if; the job is read strictly, and a pod
the cluster already holds is an error). `-f FILE` names a scenario file as `explain`, `ui` and
`tree` name one.

Exit status: 0 when the scenario was read (whatever got placed), 2 when it could not be.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, TextIO

from controller.placer.attempt_budget import DEFAULT_ATTEMPT_STEPS, DEFAULT_GUARD_SECONDS
from controller.placer.cycle import CycleOptions
from controller.placer.scenario import DEFAULT_SCHEDULERS, Scenario, SimulationResult, load_scenario, simulate
from controller.placer.snapshot import ClusterIndex
from topobridge import output as printing
from topobridge.cmd_run import add_attempt_budget_arguments, attempt_budget_problem
from topobridge.inputs import (
    ClusterUnreadable,
    Snapshot,
    add_filename_arguments,
    add_snapshot_arguments,
    load_objects,
    paths_of,
    read_reporting,
)
from topobridge.treeview import amounts, draw, topology_line
from translations.errors import TopobridgeError
from translations.topology import natural_key

EXIT_OK, EXIT_UNREADABLE = 0, 2
FORMATS = (printing.TEXT, printing.JSON, printing.YAML)
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
    add_filename_arguments(p, what="scenario objects (together: one snapshot)")
    printing.add_output_argument(
        p, formats=FORMATS, default=printing.TEXT, says="json/yaml: the result object described above"
    )
    add_scheduler_names_argument(p)
    add_attempt_budget_arguments(p)
    p.add_argument("--demo", choices=DEMOS, default=None, help="run one built-in demo scenario")
    add_snapshot_arguments(p, files=False)
    p.add_argument(
        "--kubeconfig", default=None, help="with --from-cluster: kubeconfig path (default: $KUBECONFIG)"
    )
    p.add_argument("--context", default=None, help="with --from-cluster: kubeconfig context")
    p.set_defaults(handler=_handle)


def add_scheduler_names_argument(p: argparse.ArgumentParser) -> None:
    """`--scheduler-names LIST`: the pods the simulated scheduler serves (`simulate`, `explain`)."""
    p.add_argument(
        "--scheduler-names",
        default=",".join(DEFAULT_SCHEDULERS),
        metavar="LIST",
        help=f"schedulerNames whose pods are placed (default: {','.join(DEFAULT_SCHEDULERS)})",
    )


@dataclass(frozen=True)
class Source:
    """Where the snapshot comes from: files (`-`: standard input), one built-in demo, or the
    current cluster; none of them, the built-in demo's default scenarios."""

    scenario: str | Sequence[str] | None = None
    recursive: bool = False
    demo: str | None = None
    from_cluster: bool = False
    kubeconfig: str | None = None
    context: str | None = None

    def problem(self, fmt: str) -> str | None:
        """Why the source cannot be read with output `fmt`, or None."""
        given = [self.scenario is not None, self.demo is not None, self.from_cluster]
        if self.demo is not None and sum(given) > 1:
            return "give one of SCENARIO, --demo and --from-cluster (--from-cluster takes -f JOB)"
        if not any(given) and fmt != "text":
            return (
                f"the built-in demo runs several scenarios and -o {fmt} prints one object: "
                f"pick one with --demo NAME ({', '.join(DEMOS)})"
            )
        return None

    @property
    def demos(self) -> Sequence[str]:
        """The demo scenarios it names (every default one when no source is given)."""
        if self.demo is not None:
            return [self.demo]
        return DEFAULT_DEMO if self.scenario is None and not self.from_cluster else []

    @property
    def paths(self) -> list[str]:
        return [self.scenario] if isinstance(self.scenario, str) else list(self.scenario or ())


def _handle(args: argparse.Namespace) -> int:
    source = Source(
        paths_of(args) or None,
        recursive=args.recursive,
        demo=args.demo,
        from_cluster=args.from_cluster,
        kubeconfig=args.kubeconfig,
        context=args.context,
    )
    return run(
        source,
        output=args.output,
        scheduler_names=args.scheduler_names,
        attempt_budget=args.attempt_budget,
        attempt_deadline=args.attempt_deadline,
        out=sys.stdout,
        err=sys.stderr,
    )


def run(
    source: Source,
    *,
    output: str = "text",
    scheduler_names: str = ",".join(DEFAULT_SCHEDULERS),
    attempt_budget: int = DEFAULT_ATTEMPT_STEPS,
    attempt_deadline: float = DEFAULT_GUARD_SECONDS,
    out: TextIO,
    err: TextIO,
    stdin: TextIO | None = None,
) -> int:
    """Read the source, simulate each scenario in it, print the results (see the module doc)."""
    served = tuple(s.strip() for s in scheduler_names.split(",") if s.strip())
    if not served:
        print("error: --scheduler-names: Required value: at least one schedulerName", file=err)
        return EXIT_UNREADABLE
    budget_problem = attempt_budget_problem(attempt_budget, attempt_deadline)
    if budget_problem is not None:
        print(f"error: {budget_problem}", file=err)
        return EXIT_UNREADABLE
    problem = source.problem(output)
    if problem is not None:
        print(f"error: {problem}", file=err)
        return EXIT_UNREADABLE
    try:
        runs = _simulations(
            source,
            Served(served, CycleOptions(attempt_steps=attempt_budget, attempt_guard=attempt_deadline)),
            err,
            stdin,
        )
    except TopobridgeError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_UNREADABLE
    if runs is None:
        return EXIT_UNREADABLE
    for title, result in runs:
        for warning in result.warnings:
            print(f"warning: {warning}", file=err)
        if output == printing.JSON:
            printing.dump_json(result.contract(), out, indent=None, sort_keys=True)
        elif output == printing.YAML:
            printing.dump_yaml(result.contract(), out)
        else:
            out.write(render_text(title, result))
    return EXIT_OK


@dataclass(frozen=True)
class Served:
    """Which pods the simulated scheduler places, and the options its cycle runs with (as `run`'s)."""

    schedulers: Sequence[str]
    options: CycleOptions


def _simulations(
    source: Source, served: Served, err: TextIO, stdin: TextIO | None
) -> list[tuple[str, SimulationResult]] | None:
    """Each scenario of the source, titled, simulated; None when it could not be read (the
    reason printed on `err`)."""
    if source.demos:
        return [(f"demo {name}", _simulate(*_demo_objects(name), served)) for name in source.demos]
    if source.from_cluster:
        return _on_cluster(source, served, err, stdin)
    paths = source.paths
    inputs = read_reporting("simulate", paths, err=err, recursive=source.recursive, stdin=stdin)
    if inputs is None or inputs.problems:  # one snapshot: every file counts
        return None
    objects = [loc.obj for loc in inputs.objects]
    title = ", ".join("standard input" if p == "-" else p for p in paths)
    return [(title, _simulate(objects, [loc.source for loc in inputs.objects], served))]


def _on_cluster(
    source: Source, served: Served, err: TextIO, stdin: TextIO | None
) -> list[tuple[str, SimulationResult]] | None:
    """The live cluster, read-only; with files, a job not yet submitted added to it, read as
    the ui's what-if reads a pasted one (`whatif.with_job`)."""
    snapshot = Snapshot(
        source.paths,
        recursive=source.recursive,
        from_cluster=True,
        kubeconfig=source.kubeconfig,
        context=source.context,
    )
    try:
        cluster, sources, job, job_sources = snapshot.read("simulate", stdin=stdin)
    except ClusterUnreadable as exc:
        print(f"error: --from-cluster: {exc}", file=err)
        return None
    except ValueError as exc:
        print(f"error: {exc}", file=err)
        return None
    if not job:
        return [("the current cluster", _run(load_scenario(cluster, sources=sources, lenient=True), served))]
    from topobridge.ui.whatif import JobError, with_job

    try:
        _, scenario = with_job(cluster, job, job_sources)
    except JobError as exc:
        print(f"error: {exc}", file=err)
        return None
    shown = ", ".join("standard input" if p == "-" else p for p in snapshot.files)
    return [(f"the current cluster, with {shown}", _run(scenario, served))]


def _demo_objects(name: str) -> tuple[list[Any], list[str]]:
    ref = resources.files("controller.placer") / "demo" / f"{name}.yaml"
    with resources.as_file(ref) as path:
        located = list(load_objects(str(path)))
    return [loc.obj for loc in located], [loc.source.replace(str(path), f"{name}.yaml", 1) for loc in located]


def _simulate(objects: list[Any], sources: list[str] | None, served: Served) -> SimulationResult:
    return _run(load_scenario(objects, sources=sources), served)


def _run(scenario: Scenario, served: Served) -> SimulationResult:
    return simulate(scenario, schedulers=served.schedulers, options=served.options)


# --- text output --------------------------------------------------------------------------------


def render_text(title: str, result: SimulationResult) -> str:
    """The topology tree with what landed where and what was evicted, the expanded jobs, then
    the run's events."""
    index = result.index
    assert index is not None
    lines = [f"== {title}: {index.n_nodes} node(s), {topology_line(index)}", ""]
    placed_on, evicted_on, running_on = _pods_by_node(result)
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

    lines += draw(index, node_text=node_line, hidden_note="({n} more node(s), nothing changed)")
    lines += [
        "",
        "legend: + placed in this run   x evicted (preemption victim)   . running, untouched   "
        "cpu/mem: requested/allocatable after the run",
        "",
    ]
    return "\n".join(lines + expansion_lines(result) + _outcome_lines(result)) + "\n\n"


def _pods_by_node(
    result: SimulationResult,
) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, list[str]]]:
    """Per node: the pods placed in this run, the pods evicted, the pods left running."""
    placed = dict(result.bound)
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
    return placed_on, evicted_on, running_on


def _outcome_lines(result: SimulationResult) -> list[str]:
    """The run's events by round, then the counts, where each gang went and why others did not."""
    lines: list[str] = []
    if result.events:
        lines.append("events:")
        for e in result.events:
            when = f"round {e.round}" if e.round else "end"
            lines.append(f"  {when:8s} {e.gang}  {e.what}: {e.message}")
        lines.append("")
    lines.append(
        f"result: {len(result.bound)} bound, {len(result.nominated)} nominated, "
        f"{len(result.evicted)} evicted, {len(result.unschedulable)} unschedulable"
    )
    for gang, (domain, tier) in sorted(result.gangs.items(), key=lambda kv: natural_key(kv[0])):
        lines.append(f"  {gang} -> {domain} (tier {tier})")
    for gang, message in sorted(result.unschedulable.items(), key=lambda kv: natural_key(kv[0])):
        lines.append(f"  {gang} unschedulable: {message}")
    return lines


def expansion_lines(result: SimulationResult) -> list[str]:
    """One line per expanded job, its notes indented below it (nothing when none was)."""
    if not result.expansions:
        return []
    lines = ["expanded (what the jobs' controllers would create):"]
    for expansion in result.expansions:
        lines.append(f"  {expansion.line()}")
        lines += [f"    {note}" for note in expansion.notes]
    return [*lines, ""]


def _usage(index: ClusterIndex, result: SimulationResult, v: int) -> str:
    """Requested/allocatable of the node at the end of the run."""
    used = result.final_used
    return amounts(
        index,
        {r: int(used[v, p]) if used is not None else 0 for r, p in index.res_pos.items()},
        {r: int(index.alloc[v, p]) for r, p in index.res_pos.items()},
    )
