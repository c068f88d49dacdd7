"""What bound pods' inter-pod terms cost one attempt's Filter and Score, this checkout beside
another.

The cluster: --nodes nodes (hostname and one of 20 zones each) and --pods bound pods spread over
them, each with a required pod anti-affinity term and a preferred one (weight 5), both on
`kubernetes.io/hostname` and both selecting `app: web`; the pending pod is one `app: web` pod, so
every bound pod's two terms select it: Filter's "existing pods anti-affinity" and Score's
symmetric half each read all of them.

Timed region: one `engine.demand_of` call (PreFilter, then `filtering.build_demand`: every Filter
and Score plugin for the pending pod), the median of --runs; loading the scenario and building
the snapshot are not timed. With --baseline DIR (another checkout of the repository, e.g. a
`git worktree`), the same measurement runs there too, in a process of its own per round,
alternating which goes first.

    .venv/bin/python benchmarks/interpod_terms.py [--nodes 2000] [--pods 10000] [--runs 7]
        [--rounds 3] [--baseline DIR]

Last line: `summary: nodes=... pods=... demand_ms=... baseline_ms=...` (medians over rounds;
baseline_ms is absent without --baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TERM = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}


def objects(n_nodes: int, n_pods: int) -> list[dict[str, Any]]:
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"n{i}",
                "labels": {"kubernetes.io/hostname": f"n{i}", "zone": f"z{i % 20}"},
            },
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}},
        }
        for i in range(n_nodes)
    ]
    affinity = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [TERM],
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": TERM}],
        }
    }
    bound = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"b{j}", "namespace": "default", "labels": {"app": f"svc{j % 50}"}},
            "spec": {
                "nodeName": f"n{j % n_nodes}",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                "affinity": affinity,
            },
        }
        for j in range(n_pods)
    ]
    pending = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "new", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "schedulerName": "topobridge",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        },
    }
    return [*nodes, *bound, pending]


def measure(n_nodes: int, n_pods: int, runs: int) -> float:
    """Median milliseconds of one `demand_of` for the pending pod (see the module docstring)."""
    from controller.placer.engine import demand_of
    from controller.placer.scenario import load_scenario, prepare

    prep = prepare(load_scenario(objects(n_nodes, n_pods)))
    gang = next(g for g in prep.discovered if g.pending)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        demand_of(gang, prep.snapshot)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _in(checkout: Path, args: argparse.Namespace) -> float:
    """`measure` in a process of its own, with `checkout` first on the path."""
    cmd = [sys.executable, __file__, "--one", "--nodes", str(args.nodes), "--pods", str(args.pods)]
    cmd += ["--runs", str(args.runs)]
    out = subprocess.run(
        cmd, check=True, capture_output=True, text=True, env={**os.environ, "TOPOBRIDGE_ROOT": str(checkout)}
    )
    return float(json.loads(out.stdout.splitlines()[-1])["demand_ms"])


def main() -> None:
    ap = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--pods", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout to measure beside this one")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps({"demand_ms": measure(args.nodes, args.pods, args.runs)}))
        return
    mine: list[float] = []
    base: list[float] = []
    for r in range(args.rounds):
        order = [(ROOT, mine), (args.baseline, base)] if args.baseline else [(ROOT, mine)]
        for checkout, into in order if r % 2 == 0 else reversed(order):
            into.append(_in(checkout, args))
            print(f"round {r}: {checkout}: {into[-1]:.1f} ms", flush=True)
    line = f"summary: nodes={args.nodes} pods={args.pods} demand_ms={statistics.median(mine):.1f}"
    if base:
        line += f" baseline_ms={statistics.median(base):.1f}"
    print(line)


if __name__ == "__main__":
    # The checkout measured first on the path (benchmarks/controller.py would otherwise shadow
    # the `controller` package).
    sys.path.insert(0, os.environ.get("TOPOBRIDGE_ROOT", str(ROOT)))
    main()
