"""LeaderWorkerSet convergence against the real local API server (kube-apiserver v1.20.2 + etcd).

N LeaderWorkerSets with networkTopology and their leader pods exist; `topobridge run` starts
(controller only: no webhook, no fallback scheduler, no HyperNodes). The timed region runs
from the process's start until every group's Volcano PodGroup carries the topology, so it
includes the process start-up and the informers' first lists. Printed, never asserted.

Usage: python benchmarks/lws.py [--lws 1000] [--qps 50] [--burst 100]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

# The repository first: benchmarks/controller.py would otherwise shadow the `controller` package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _cluster import gather_limited, make_namespace, metrics_port, spawn, topobridge_argv

from controller.kube import Kube, KubeSettings
from controller.resources import LEADERWORKERSETS, PODS, VOLCANO_PODGROUPS
from topobridge.devcluster import LocalControlPlane

HARNESS = KubeSettings(qps=2000, burst=2000, connection_pool=64)


async def bench_lws(plane: LocalControlPlane, kube: Kube, args: argparse.Namespace, work: Path) -> None:
    n, ns, rev = args.lws, "bench-lws", "b3nch"
    await make_namespace(kube, ns)
    container = {"name": "m", "image": "x", "resources": {"requests": {"cpu": "1"}}}

    async def one(i: int) -> None:
        lws = await kube.create(
            LEADERWORKERSETS,
            {
                "apiVersion": "leaderworkerset.x-k8s.io/v1",
                "kind": "LeaderWorkerSet",
                "metadata": {"name": f"lws-{i}", "namespace": ns},
                "spec": {
                    "replicas": 1,
                    "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                    "leaderWorkerTemplate": {
                        "size": 4,
                        "workerTemplate": {"spec": {"containers": [container]}},
                    },
                },
            },
        )
        await kube.create(
            PODS,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"lws-{i}-0",
                    "namespace": ns,
                    "labels": {
                        "leaderworkerset.sigs.k8s.io/name": f"lws-{i}",
                        "leaderworkerset.sigs.k8s.io/group-index": "0",
                        "leaderworkerset.sigs.k8s.io/worker-index": "0",
                        "leaderworkerset.sigs.k8s.io/template-revision-hash": rev,
                    },
                    "ownerReferences": [
                        {
                            "apiVersion": "leaderworkerset.x-k8s.io/v1",
                            "kind": "LeaderWorkerSet",
                            "name": f"lws-{i}",
                            "uid": lws["metadata"]["uid"],
                            "controller": True,
                        }
                    ],
                },
                "spec": {"schedulerName": "volcano", "containers": [container]},
            },
        )

    t0 = time.perf_counter()
    await gather_limited(one(i) for i in range(n))
    created = time.perf_counter() - t0
    argv = topobridge_argv(
        plane,
        qps=args.qps,
        burst=args.burst,
        metrics_port=metrics_port(),
        parts=("--no-hypernodes", "--no-fallback-scheduler"),
    )
    proc = spawn("topobridge", argv, work / "lws.log", 0)
    started = time.perf_counter()
    try:
        while True:
            pgs = (await kube.list(VOLCANO_PODGROUPS, namespace=ns)).items
            done = sum(1 for pg in pgs if (pg.get("spec") or {}).get("networkTopology"))
            if done >= n:
                break
            if proc.exited():
                raise SystemExit(f"topobridge exited early; see {proc.log}")
            await asyncio.sleep(0.5)
        took = time.perf_counter() - started
    finally:
        proc.stop()
    print(
        f"LWS -> PodGroups: {n} LeaderWorkerSets (+{n} leader pods) created in {created:.1f}s; "
        f"topobridge converged all {n} PodGroups {took:.1f}s after start "
        f"({n / took:.1f} LWS/s at --kube-api-qps {args.qps:g})"
    )
    print(f"summary: lws={n} seconds={took:.1f} lws_per_s={n / took:.1f}")


async def main(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="topobridge-bench-"))
    with LocalControlPlane(with_controller_manager=False) as plane:
        kube = await Kube.connect(kubeconfig=plane.kubeconfig, settings=HARNESS)
        try:
            await bench_lws(plane, kube, args, work)
        finally:
            await kube.close()
    print(f"(process logs in {work})", file=sys.stderr)


if __name__ == "__main__":
    p = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--lws", type=int, default=1000)
    p.add_argument("--qps", type=float, default=50.0)
    p.add_argument("--burst", type=int, default=100)
    asyncio.run(main(p.parse_args()))
