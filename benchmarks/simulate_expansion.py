"""`topobridge simulate` on an Indexed Job at the documented cap, beside one a tenth its size.

The scenario: 1,000 nodes (64 CPUs, 110 pods each; 10 to a block, 100 to a spine) and one
batch/v1 Indexed Job of `--pods` pods (parallelism = completions; 100 mCPU each), whose template
asks Kueue for a preferred spine, so the Job is one gang of all its pods. The small case is
the same with a tenth of the pods: the per-pod figures of the two say whether the work grows
linearly (`growth` near 1) or faster.

Timed regions, per case:
* `load`: `load_scenario` on the objects as plain dicts (the Job expanded into its pods, each
  checked as the API server would and parsed);
* `simulate`: `simulate` on the loaded scenario (the cluster state built, the cycles run to
  quiescence, every bind applied).
Cases alternate order across `--runs`; the median wall and CPU seconds are printed.

    .venv/bin/python -m benchmarks.simulate_expansion [--pods 100000] [--runs 1]

Last line: `summary: pods=<n> load_cpu_s=... simulate_cpu_s=... total_cpu_s=... total_wall_s=...
small_total_cpu_s=... per_pod_us=... growth=...` (`growth`: CPU per pod of the large case over
the small one's).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

from controller.placer.scenario import load_scenario, simulate

Obj = dict[str, Any]
SPINE = "network.topology.nvidia.com/spine"
BLOCK = "network.topology.nvidia.com/block"


def objects(pods: int, nodes: int = 1_000) -> list[Obj]:
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
        "metadata": {"annotations": {"kueue.x-k8s.io/podset-preferred-topology": SPINE}},
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


def one(pods: int) -> dict[str, float]:
    objs = objects(pods)
    sc, load_wall, load_cpu = timed(lambda: load_scenario(objs))
    result, sim_wall, sim_cpu = timed(lambda: simulate(sc))
    if len(result.bound) != pods:
        raise SystemExit(f"{pods} pods: only {len(result.bound)} bound")
    return {"load_wall": load_wall, "load_cpu": load_cpu, "simulate_wall": sim_wall, "simulate_cpu": sim_cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    cases = {"large": args.pods, "small": max(args.pods // 10, 1)}
    samples: dict[str, list[dict[str, float]]] = {k: [] for k in cases}
    order = list(cases)
    for run in range(args.runs):
        for name in order if run % 2 == 0 else reversed(order):
            samples[name].append(one(cases[name]))
    med: dict[str, dict[str, float]] = {}
    for name, runs in samples.items():
        med[name] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        m = med[name]
        print(
            f"{name:>5}: {cases[name]:>7} pods  load wall {m['load_wall']:6.2f} s cpu {m['load_cpu']:6.2f} s"
            f"  simulate wall {m['simulate_wall']:6.2f} s cpu {m['simulate_cpu']:6.2f} s"
        )
    large, small = med["large"], med["small"]
    total = large["load_cpu"] + large["simulate_cpu"]
    small_total = small["load_cpu"] + small["simulate_cpu"]
    per_pod = total / cases["large"]
    growth = per_pod / (small_total / cases["small"])
    print(
        f"summary: pods={cases['large']} load_cpu_s={large['load_cpu']:.2f} "
        f"simulate_cpu_s={large['simulate_cpu']:.2f} total_cpu_s={total:.2f} "
        f"total_wall_s={large['load_wall'] + large['simulate_wall']:.2f} "
        f"small_total_cpu_s={small_total:.2f} per_pod_us={per_pod * 1e6:.0f} growth={growth:.2f}"
    )


if __name__ == "__main__":
    main()
