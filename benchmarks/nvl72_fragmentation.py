"""How many whole NVL72 racks stay free under a stream of mixed GPU jobs, with NVLink cliques in
the tree and without.

The cluster: 3 GB200 NVL72 racks, each 18 nodes of 4 GPUs; GPU Feature Discovery labels each
node `nvidia.com/gpu.clique=<rack ClusterUUID>.<clique>` with two cliques of 9 nodes per rack,
and topograph labels one leaf switch over each rack and one spine over all. The stream (fixed
seed): jobs arrive one at a time, GPU-dialect Indexed Jobs of 1 to 8 pods of 4 GPUs
(`gpu.topology/policy: nvlink` for the multi-pod ones, `max-nodes` the pod count) or single
pods of 1 or 2 GPUs; each runs for a random number of arrivals, then its pods are deleted.

Two variants over the same stream, alternating job by job: `cliques` (the labels above: the
scheduler's tree has the clique and rack tiers) and `flat` (the same nodes without the GFD
and topograph labels: no tree, so the placement ignores racks). Each arrival is one scheduling
cycle of the real `SchedulingCycle` (the timed region: `ClusterState.view()` plus the cycle),
its binds applied to the state.

Printed: per variant, the whole racks free after each arrival (mean and minimum), the jobs
that waited (not placed on arrival), the jobs that straddled racks, and the mean cycle time.

    .venv/bin/python benchmarks/nvl72_fragmentation.py [--jobs 400] [--seed 7]

Last line: `summary: jobs=... whole_racks_cliques=... whole_racks_flat=... straddled_cliques=...
straddled_flat=... waited_cliques=... waited_flat=...`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.placer.cluster import ClusterState, Kind
from controller.placer.cycle import GangTiming, SchedulingCycle
from translations import gpu
from translations.core import Job, Node, Pod

RACKS, NODES_PER_RACK, GPUS = 3, 18, 4
SERVED = ("topobridge",)
Obj = dict[str, Any]


def nodes(labelled: bool) -> list[Obj]:
    out = []
    for r in range(RACKS):
        for i in range(NODES_PER_RACK):
            labels = {"kubernetes.io/hostname": f"gb200-r{r}-n{i}"}
            if labelled:
                labels |= {
                    "nvidia.com/gpu.clique": f"rack-{r}-uuid.{i // 9}",
                    "fabric.topograph.run/tier-0": f"leaf-{r}",
                    "fabric.topograph.run/tier-1": "spine-0",
                }
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": f"gb200-r{r}-n{i}", "labels": labels},
                    "status": {
                        "allocatable": {
                            "cpu": "72",
                            "memory": "480Gi",
                            "pods": "110",
                            "nvidia.com/gpu": str(GPUS),
                        }
                    },
                }
            )
    return out


def job_objects(name: str, pods: int, gpus: int) -> list[Obj]:
    uid = f"uid-{name}"
    annotations = {gpu.POLICY: "nvlink", gpu.MAX_NODES: str(pods)} if pods > 1 else {}
    out: list[Obj] = []
    if pods > 1:
        out.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": name, "namespace": "jobs", "uid": uid, "annotations": annotations},
                "spec": {"parallelism": pods, "completions": pods, "completionMode": "Indexed"},
            }
        )
    for i in range(pods):
        meta: Obj = {
            "name": f"{name}-{i}",
            "namespace": "jobs",
            "labels": {"job-name": name, "controller-uid": uid},
        }
        if pods > 1:
            meta["annotations"] = {**annotations, gpu.COMPLETION_INDEX: str(i)}
            meta["ownerReferences"] = [
                {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid, "controller": True}
            ]
        req = {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": str(gpus)}
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta,
                "spec": {
                    "schedulerName": "topobridge",
                    "containers": [{"name": "c", "resources": {"requests": req}}],
                },
            }
        )
    return out


@dataclass
class Variant:
    name: str
    state: ClusterState = field(default_factory=ClusterState)
    free_racks: list[int] = field(default_factory=list)
    waited: int = 0
    straddled: int = 0
    seconds: list[float] = field(default_factory=list)
    running: dict[str, tuple[int, list[str]]] = field(default_factory=dict)
    """job -> (arrival it ends at, its pod keys)."""

    def put(self, obj: Obj) -> None:
        kind = obj["kind"]
        meta = obj["metadata"]
        key = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]
        model: Any = {"Node": Node, "Pod": Pod, "Job": Job}[kind]
        self.state.put({"Node": Kind.NODE, "Pod": Kind.POD, "Job": Kind.JOB}[kind], key, model.parse(obj))

    def arrive(self, step: int, name: str, objs: list[Obj], ends: int) -> None:
        for o in objs:
            self.put(o)
        keys = [f"jobs/{o['metadata']['name']}" for o in objs if o["kind"] == "Pod"]
        started = time.perf_counter()
        plan = SchedulingCycle(self.state.view(), served=SERVED, now=float(step), timing=GangTiming()).run()
        self.seconds.append(time.perf_counter() - started)
        placed = [(p, n) for b in plan.binds for p, n in b.pods]
        for pod_key, node in placed:
            pod = self.state.pods[pod_key]
            self.state.put(
                Kind.POD,
                pod_key,
                pod.model_copy(update={"spec": pod.spec.model_copy(update={"node_name": node})}),
            )
        mine = [n for p, n in placed if p in keys]
        if len(mine) < len(keys):
            self.waited += 1
            for k in keys:  # a job that cannot start now is not kept waiting: the stream goes on
                self.state.delete(Kind.POD, k)
            return
        if len({n.split("-n")[0] for n in mine}) > 1:
            self.straddled += 1
        self.running[name] = (ends, keys)

    def depart(self, step: int) -> None:
        for name, (ends, keys) in list(self.running.items()):
            if ends <= step:
                for k in keys:
                    self.state.delete(Kind.POD, k)
                del self.running[name]

    def count_free_racks(self) -> None:
        used = {p.spec.node_name.split("-n")[0] for p in self.state.pods.values() if p.spec.node_name}
        self.free_racks.append(sum(1 for r in range(RACKS) if f"gb200-r{r}" not in used))


def main() -> None:
    ap = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--jobs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--life", type=int, default=15, help="longest a job runs, in arrivals (default 15)")
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    variants = [Variant("cliques"), Variant("flat")]
    for v, labelled in zip(variants, (True, False), strict=True):
        for n in nodes(labelled):
            v.put(n)
    for step in range(args.jobs):
        pods, gpus = rnd.choice([(1, 1), (1, 2), (1, 4), (2, 4), (4, 4), (8, 4), (4, 4), (2, 4)])
        life = rnd.randint(2, args.life)
        name = f"j{step}"
        order = variants if step % 2 == 0 else list(reversed(variants))
        for v in order:
            v.depart(step)
            v.arrive(step, name, job_objects(name, pods, gpus), step + life)
            v.count_free_racks()
    figures = []
    for v in variants:
        mean_free = statistics.mean(v.free_racks)
        print(
            f"{v.name:8s} whole racks free: mean {mean_free:.2f}, min {min(v.free_racks)}; "
            f"jobs waited {v.waited}, straddled racks {v.straddled}; "
            f"cycle median {statistics.median(v.seconds) * 1e3:.1f} ms"
        )
        figures += [
            f"whole_racks_{v.name}={mean_free:.2f}",
            f"straddled_{v.name}={v.straddled}",
            f"waited_{v.name}={v.waited}",
        ]
    print(f"summary: jobs={args.jobs} " + " ".join(figures))


if __name__ == "__main__":
    main()
