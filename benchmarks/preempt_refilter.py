"""The worst refiltered preemption one attempt can meet at --nodes nodes, this checkout beside
another (the tree before a change).

The cluster: --nodes nodes of 64 CPU, each full with 4 running pods of 16 CPU at low priority,
each pod with a required pod anti-affinity term on `kubernetes.io/hostname` selecting
`app: web`. The pending pod is one `app: web` pod of 8 CPU at high priority and no topology
constraint: every node is excluded by its own pods' anti-affinity, no node has room, so
preemption runs the filters again with candidate victims gone (kube's SelectVictimsOnNode),
node by node, and every one of a node's pods must go: no place reaches the best rank a place
could have, so the dry run goes on until the attempt's step budget (the default) or its
candidate limit stops it. That is the dearest shape the refiltered path admits: the most runs
of the filters per place, each over every node and every bound pod's terms.

Timed region: one `engine.schedule` call for the pending pod (PreFilter, Filter, PostFilter
with the preemption plan), the median of --runs, each with a fresh attempt budget; loading the
scenario and building the snapshot are not timed. Wall time and process CPU time side by side.
With --baseline DIR (another checkout of the repository), or --before REF (the commit REF's
tree exported with `git archive` into a temporary directory), the same measurement runs there
too, in a process of its own per round, alternating which goes first. Goal: <= 100 ms.

    .venv/bin/python benchmarks/preempt_refilter.py [--nodes 10000] [--runs 5] [--rounds 2]
        [--baseline DIR | --before REF]

Last line: `summary: nodes=... attempt_ms=... attempt_cpu_ms=... victims=... [baseline_ms=...
baseline_cpu_ms=...]` (medians over rounds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _checkout import export_tree  # beside this script

ROOT = Path(__file__).resolve().parents[1]
PODS_PER_NODE = 4
TERM = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}


def objects(n_nodes: int) -> list[dict[str, Any]]:
    classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
        for n, v in (("high", 1000), ("low", 100))
    ]
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
        }
        for i in range(n_nodes)
    ]
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [TERM]}}
    bound = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"b{j}", "namespace": "default", "labels": {"app": f"svc{j % 50}"}},
            "spec": {
                "nodeName": f"n{j % n_nodes}",
                "priorityClassName": "low",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "16"}}}],
                "affinity": anti,
            },
        }
        for j in range(n_nodes * PODS_PER_NODE)
    ]
    pending = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "new", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "schedulerName": "topobridge",
            "priorityClassName": "high",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "8"}}}],
        },
    }
    return [*classes, *nodes, *bound, pending]


def measure(n_nodes: int, runs: int) -> dict[str, float]:
    """Medians of one attempt for the pending pod (see the module docstring)."""
    from controller.placer.attempt_budget import AttemptBudget
    from controller.placer.engine import schedule
    from controller.placer.scenario import load_scenario, prepare

    prep = prepare(load_scenario(objects(n_nodes)))
    gang = next(g for g in prep.discovered if g.pending)
    wall, cpu, victims = [], [], 0
    for _ in range(runs):
        budget = AttemptBudget(guard=float("inf"))
        w0, c0 = time.perf_counter(), time.process_time()
        verdict = schedule(gang, prep.snapshot, attempt_budget=budget)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
        victims = len(verdict.plan.victims) if verdict.plan is not None else 0
    return {
        "attempt_ms": statistics.median(wall) * 1e3,
        "attempt_cpu_ms": statistics.median(cpu) * 1e3,
        "victims": victims,
    }


def _in(checkout: Path, args: argparse.Namespace) -> dict[str, float]:
    """`measure` in a process of its own, with `checkout` first on the path."""
    cmd = [sys.executable, __file__, "--one", "--nodes", str(args.nodes), "--runs", str(args.runs)]
    env = {**os.environ, "TOPOBRIDGE_ROOT": str(checkout)}
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    got: dict[str, float] = json.loads(out.stdout.splitlines()[-1])
    return got


def main() -> None:
    ap = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout to measure beside this one")
    ap.add_argument("--before", default=None, metavar="REF", help="a commit to measure beside this one")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.nodes, args.runs)))
        return
    if args.before is not None:
        with tempfile.TemporaryDirectory() as tmp:
            args.baseline = export_tree(args.before, Path(tmp))
            compare(args)
        return
    compare(args)


def compare(args: argparse.Namespace) -> None:
    """This checkout's rounds, beside the baseline's when there is one (see the docstring)."""
    mine: list[dict[str, float]] = []
    base: list[dict[str, float]] = []
    for r in range(args.rounds):
        order = [(ROOT, mine), (args.baseline, base)] if args.baseline else [(ROOT, mine)]
        for checkout, into in order if r % 2 == 0 else reversed(order):
            into.append(_in(checkout, args))
            got = into[-1]
            print(
                f"round {r}: {checkout}: {got['attempt_ms']:.1f} ms (cpu {got['attempt_cpu_ms']:.1f} ms), "
                f"{got['victims']:.0f} victims",
                flush=True,
            )

    def med(xs: list[dict[str, float]], k: str) -> float:
        return statistics.median(x[k] for x in xs)

    line = (
        f"summary: nodes={args.nodes} attempt_ms={med(mine, 'attempt_ms'):.1f} "
        f"attempt_cpu_ms={med(mine, 'attempt_cpu_ms'):.1f} victims={med(mine, 'victims'):.0f}"
    )
    if base:
        line += (
            f" baseline_ms={med(base, 'attempt_ms'):.1f} baseline_cpu_ms={med(base, 'attempt_cpu_ms'):.1f}"
        )
    print(line)


if __name__ == "__main__":
    # The checkout measured first on the path (benchmarks/controller.py would otherwise shadow
    # the `controller` package).
    sys.path.insert(0, os.environ.get("TOPOBRIDGE_ROOT", str(ROOT)))
    main()
