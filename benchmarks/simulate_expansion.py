"""`topobridge simulate` on an Indexed Job at the documented cap, beside one a tenth its size.

The scenario: 1,000 nodes (64 CPUs, 110 pods each; 10 to a block, 100 to a spine) and one
batch/v1 Indexed Job of `--pods` pods (parallelism = completions; 100 mCPU each), whose template
asks Kueue for a preferred spine, so the Job is one gang of all its pods; with `--lone` the
template asks for nothing, so each pod is a gang of its own, scheduled alone (the cycle's
opportunistic batching places the pods alike from one Filter and Score pass). The small case is
the same with a tenth of the pods: the per-pod figures of the two say whether the work grows
linearly (`growth` near 1) or faster.

Timed regions, per case:
* `load`: `load_scenario` on the objects as plain dicts (the Job expanded into its pods, each
  checked as the API server would and parsed);
* `simulate`: `simulate` on the loaded scenario (the cluster state built, the cycles run to
  quiescence, every bind applied).
Each case runs in a process of its own (`--one`), so its peak RSS (`rss MB`, the whole
process: interpreter, objects, the state and the result) is its own. `--before REF` measures the
same cases on the commit REF too (its tree exported by `git archive`, this script run on it), in
the same run; the two codes alternate which goes first from one run to the next, as the cases
do. The median wall and CPU seconds of `--runs` are printed.

    .venv/bin/python -m benchmarks.simulate_expansion [--pods 100000] [--runs 1] [--before REF] [--lone]

Last line: `summary: case=<gang|lone> pods=<n> load_cpu_s=... simulate_cpu_s=... total_cpu_s=... total_wall_s=...
rss_mb=... small_total_cpu_s=... per_pod_us=... growth=...` (`growth`: CPU per pod of the large
case over the small one's), and with `--before` the same commit's `before_total_cpu_s`,
`before_total_wall_s`, `before_rss_mb` and `cpu_speedup` (its total CPU over this tree's).
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.placer.scenario import load_scenario, simulate

Obj = dict[str, Any]
SPINE = "network.topology.nvidia.com/spine"
BLOCK = "network.topology.nvidia.com/block"


def objects(pods: int, nodes: int = 1_000, *, lone: bool = False) -> list[Obj]:
    alloc = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    out: list[Obj] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"n{i}",
                "labels": {"kubernetes.io/hostname": f"n{i}", SPINE: f"s{i // 100}", BLOCK: f"b{i // 10}"},
            },
            "status": {"allocatable": alloc, "capacity": alloc},
        }
        for i in range(nodes)
    ]
    template = {
        "metadata": {"annotations": {} if lone else {"kueue.x-k8s.io/podset-preferred-topology": SPINE}},
        "spec": {
            "schedulerName": "topobridge",
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}],
        },
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {"completionMode": "Indexed", "parallelism": pods, "completions": pods, "template": template},
    }
    return [*out, job]


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def one(pods: int, lone: bool) -> dict[str, float]:
    """One case in this process: the two timed regions, and the process's peak RSS."""
    objs = objects(pods, lone=lone)
    sc, load_wall, load_cpu = timed(lambda: load_scenario(objs))
    result, sim_wall, sim_cpu = timed(lambda: simulate(sc))
    if len(result.bound) != pods:
        raise SystemExit(f"{pods} pods: only {len(result.bound)} bound")
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "load_wall": load_wall,
        "load_cpu": load_cpu,
        "simulate_wall": sim_wall,
        "simulate_cpu": sim_cpu,
        "rss_mb": rss_mb,
    }


def apart(pods: int, tree: str, lone: bool) -> dict[str, float]:
    """One case in a fresh process importing the code of `tree` (this repository or an
    exported commit): its root goes first on the import path (`-P`: not this script's folder,
    whose `controller.py` would hide the package)."""
    env = {**os.environ, "PYTHONPATH": tree}
    cmd = [sys.executable, "-P", str(Path(__file__).resolve()), "--one", str(pods)]
    cmd += ["--lone"] if lone else []
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, cwd=tree)
    row: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return row


def export(ref: str) -> str:
    """The repository's tree at `ref`, written to a temporary directory (`git archive`)."""
    repo = Path(__file__).resolve().parents[1]
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", ref], check=True, capture_output=True
    ).stdout
    into = tempfile.mkdtemp(prefix="simulate-expansion-before-")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def totals(large: dict[str, float], small: dict[str, float], pods: int, small_pods: int) -> dict[str, float]:
    total = large["load_cpu"] + large["simulate_cpu"]
    small_total = small["load_cpu"] + small["simulate_cpu"]
    return {
        "total_cpu": total,
        "total_wall": large["load_wall"] + large["simulate_wall"],
        "small_total_cpu": small_total,
        "per_pod_us": total / pods * 1e6,
        "growth": (total / pods) / (small_total / small_pods),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--before", metavar="REF", help="measure the commit REF too, side by side")
    parser.add_argument("--lone", action="store_true", help="a Job of lone pods: each its own gang")
    parser.add_argument("--one", type=int, metavar="PODS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.lone)))
        return
    repo = str(Path(__file__).resolve().parents[1])
    trees = {"this": repo}
    if args.before:
        trees[args.before] = export(args.before)
    cases = {"large": args.pods, "small": max(args.pods // 10, 1)}
    samples: dict[tuple[str, str], list[dict[str, float]]] = {(c, k): [] for c in trees for k in cases}
    jobs = [(code, name) for name in cases for code in trees]
    try:
        for run in range(args.runs):
            for code, name in jobs if run % 2 == 0 else reversed(jobs):
                samples[code, name].append(apart(cases[name], trees[code], args.lone))
    finally:
        if args.before:
            shutil.rmtree(trees[args.before], ignore_errors=True)
    med = {key: medians(runs) for key, runs in samples.items()}
    for (code, name), m in med.items():
        print(
            f"{code:>8} {name:>5}: {cases[name]:>7} pods  load wall {m['load_wall']:6.2f} s cpu"
            f" {m['load_cpu']:6.2f} s  simulate wall {m['simulate_wall']:6.2f} s cpu {m['simulate_cpu']:6.2f} s"
            f"  rss {m['rss_mb']:7.0f} MB"
        )
    large, small = med["this", "large"], med["this", "small"]
    t = totals(large, small, cases["large"], cases["small"])
    line = (
        f"summary: case={'lone' if args.lone else 'gang'} pods={cases['large']} load_cpu_s={large['load_cpu']:.2f} "
        f"simulate_cpu_s={large['simulate_cpu']:.2f} total_cpu_s={t['total_cpu']:.2f} "
        f"total_wall_s={t['total_wall']:.2f} rss_mb={large['rss_mb']:.0f} "
        f"small_total_cpu_s={t['small_total_cpu']:.2f} per_pod_us={t['per_pod_us']:.0f} growth={t['growth']:.2f}"
    )
    if args.before:
        b = totals(med[args.before, "large"], med[args.before, "small"], cases["large"], cases["small"])
        line += (
            f" before_total_cpu_s={b['total_cpu']:.2f} before_total_wall_s={b['total_wall']:.2f}"
            f" before_rss_mb={med[args.before, 'large']['rss_mb']:.0f}"
            f" cpu_speedup={b['total_cpu'] / t['total_cpu']:.2f}"
        )
    print(line)


if __name__ == "__main__":
    main()
