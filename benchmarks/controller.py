"""Controller benchmarks against the real local API server (kube-apiserver v1.20.2 + etcd).

1. LWS convergence: N LeaderWorkerSets with networkTopology and their leader pods exist;
   `topobridge run` starts; time until every group's PodGroup carries the topology.
2. Binding throughput: G gangs x P pods pending on a cluster of M nodes (spine/block
   labels, a ClusterNetworkTopology, each gang `MustGather` to its block's tier via a Volcano
   PodGroup with networkTopology hard tier 1). The scheduler process starts; time until every
   pod is bound. The same pods (without gangs) are then bound by the real kube-scheduler
   v1.20.2 at the same client QPS/burst. Goal: topobridge pods/s >= kube-scheduler pods/s.

Both schedulers run as separate processes. Each is started, proven up and synced by
binding one probe pod, then all pods are created at once (by a client with no rate limit);
pods/s counts from the first create to the last binding. Start-up to ready is printed
beside it (a Python process starts slower than a Go one).

Usage: python benchmarks/controller.py [--lws 1000] [--gangs 200] [--gang-size 8]
       [--nodes 1000] [--qps 50] [--burst 100] [--skip-lws] [--skip-bind]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from controller.errors import NotFoundError  # noqa: E402
from controller.kube import JsonDict, Kube, KubeSettings  # noqa: E402
from controller.resources import (  # noqa: E402
    CLUSTER_NETWORK_TOPOLOGIES,
    LEADERWORKERSETS,
    NODES,
    PODS,
    VOLCANO_PODGROUPS,
    Resource,
)
from topobridge.devcluster import LocalControlPlane, default_bin_dir  # noqa: E402

NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
SPINE = "network.topology.nvidia.com/spine"
BLOCK = "network.topology.nvidia.com/block"
HARNESS = KubeSettings(qps=2000, burst=2000, connection_pool=64)


async def gather_limited(coros: list[Any], limit: int = 48) -> list[Any]:
    sem = asyncio.Semaphore(limit)

    async def one(c: Any) -> Any:
        async with sem:
            return await c

    return await asyncio.gather(*(one(c) for c in coros))


async def make_namespace(kube: Kube, name: str) -> None:
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


async def make_nodes(
    kube: Kube, n: int, *, cpu: str, per_block: int = 10, blocks_per_spine: int = 10
) -> None:
    async def one(i: int) -> None:
        block, spine = i // per_block, i // (per_block * blocks_per_spine)
        name = f"bn-{i}"
        alloc = {"cpu": cpu, "memory": "256Gi", "pods": "110"}
        await kube.create(
            NODES,
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {"kubernetes.io/hostname": name, SPINE: f"s{spine}", BLOCK: f"b{block}"},
                },
            },
        )
        await kube.merge_patch(
            NODES,
            name,
            {
                "status": {
                    "allocatable": alloc,
                    "capacity": alloc,
                    "conditions": [
                        {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "benchmark"}
                    ],
                }
            },
            subresource="status",
        )
        await kube.merge_patch(NODES, name, {"spec": {"taints": None}})  # admission's not-ready taint

    await gather_limited([one(i) for i in range(n)])


def spawn(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ},
        )


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def topobridge_argv(plane: LocalControlPlane, qps: float, burst: int, *parts: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "topobridge.cli",
        "--log-level",
        "warning",
        "--log-format",
        "json",
        "run",
        "--no-webhook",
        "--no-leader-elect",
        "--kubeconfig",
        plane.kubeconfig,
        "--metrics-port",
        "0",
        "--kube-api-qps",
        str(qps),
        "--kube-api-burst",
        str(burst),
        *parts,
    ]


# --- 1. LWS convergence --------------------------------------------------------------------------


async def bench_lws(plane: LocalControlPlane, kube: Kube, n: int, qps: float, burst: int, work: Path) -> None:
    ns = "bench-lws"
    await make_namespace(kube, ns)
    rev = "b3nch"
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
    await gather_limited([one(i) for i in range(n)])
    created = time.perf_counter() - t0
    proc = spawn(
        topobridge_argv(plane, qps, burst, "--no-hypernodes", "--no-fallback-scheduler"), work / "lws.log"
    )
    started = time.perf_counter()
    try:
        while True:
            pgs = (await kube.list(VOLCANO_PODGROUPS, namespace=ns)).items
            done = sum(1 for pg in pgs if (pg.get("spec") or {}).get("networkTopology"))
            if done >= n:
                break
            if proc.poll() is not None:
                raise SystemExit(f"topobridge exited early; see {work / 'lws.log'}")
            await asyncio.sleep(0.5)
        took = time.perf_counter() - started
    finally:
        stop(proc)
    print(
        f"LWS -> PodGroups: {n} LeaderWorkerSets (+{n} leader pods) created in {created:.1f}s; "
        f"topobridge converged all {n} PodGroups {took:.1f}s after start "
        f"({n / took:.1f} LWS/s at --kube-api-qps {qps:g})"
    )


# --- 2. binding throughput -----------------------------------------------------------------------


async def create_pods(
    kube: Kube, ns: str, gangs: int, size: int, *, scheduler: str, with_gangs: bool
) -> None:
    async def gang(g: int) -> None:
        name = f"g{g}"
        if with_gangs:
            await kube.create(
                VOLCANO_PODGROUPS,
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": name, "namespace": ns},
                    "spec": {"minMember": size, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
                },
            )
        for i in range(size):
            meta: JsonDict = {"name": f"{name}-{i}", "namespace": ns}
            if with_gangs:
                meta["annotations"] = {"scheduling.k8s.io/group-name": name}
            await kube.create(
                PODS,
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": meta,
                    "spec": {
                        "schedulerName": scheduler,
                        "terminationGracePeriodSeconds": 0,
                        "containers": [
                            {
                                "name": "c",
                                "image": "x",
                                "resources": {"requests": {"cpu": "4", "memory": "1Gi"}},
                            }
                        ],
                    },
                },
            )

    await gather_limited([gang(g) for g in range(gangs)], limit=24)


async def wait_bound(
    kube: Kube, ns: str, total: int, proc: subprocess.Popen[bytes], log: Path
) -> tuple[float, float]:
    """Seconds from now until every pod is bound; and the first-to-last binding span."""
    started = time.perf_counter()
    first: float | None = None
    while True:
        pods = (await kube.list(PODS, namespace=ns)).items
        bound = sum(1 for p in pods if p["spec"].get("nodeName"))
        now = time.perf_counter()
        if bound and first is None:
            first = now
        if bound >= total:
            return now - started, now - (first or started)
        if proc.poll() is not None:
            raise SystemExit(f"scheduler exited early; see {log}")
        if now - started > 900:
            raise SystemExit(f"only {bound}/{total} bound after 900s; see {log}")
        await asyncio.sleep(0.2)


async def clear_namespace(kube: Kube, ns: str) -> None:
    pods = (await kube.list(PODS, namespace=ns)).items

    async def rm(p: JsonDict) -> None:
        with contextlib.suppress(NotFoundError):
            await kube.delete(PODS, p["metadata"]["name"], namespace=ns, grace_period_seconds=0)

    await gather_limited([rm(p) for p in pods])
    while (await kube.list(PODS, namespace=ns)).items:
        await asyncio.sleep(0.5)


async def probe_ready(
    kube: Kube, ns: str, *, scheduler: str, gang: bool, proc: subprocess.Popen[bytes], log: Path
) -> float:
    """Create one probe pod (a gang of one for topobridge) and wait until the scheduler binds
    it: the scheduler is up and synced. Returns the seconds since the call."""
    started = time.perf_counter()
    meta: JsonDict = {"name": "probe", "namespace": ns}
    if gang:
        await kube.create(
            VOLCANO_PODGROUPS,
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "probe", "namespace": ns},
                "spec": {"minMember": 1},
            },
        )
        meta["annotations"] = {"scheduling.k8s.io/group-name": "probe"}
    await kube.create(
        PODS,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {
                "schedulerName": scheduler,
                "terminationGracePeriodSeconds": 0,
                "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}],
            },
        },
    )
    while not (await kube.get(PODS, "probe", namespace=ns))["spec"].get("nodeName"):
        if proc.poll() is not None:
            raise SystemExit(f"scheduler exited early; see {log}")
        await asyncio.sleep(0.1)
    return time.perf_counter() - started


async def run_scheduler(
    kube: Kube, args: argparse.Namespace, *, ns: str, argv: list[str], log: Path, scheduler: str, gangs: bool
) -> tuple[float, float, float]:
    """Start the scheduler, wait until it binds a probe, then create every pod at once and time
    them to bound. Returns (ready seconds, seconds to bind all, first-to-last binding span)."""
    await make_namespace(kube, ns)
    proc = spawn(argv, log)
    try:
        ready = await probe_ready(kube, ns, scheduler=scheduler, gang=gangs, proc=proc, log=log)
        creating = asyncio.ensure_future(
            create_pods(kube, ns, args.gangs, args.gang_size, scheduler=scheduler, with_gangs=gangs)
        )
        took, span = await wait_bound(kube, ns, args.gangs * args.gang_size + 1, proc, log)
        await creating
        return ready, took, span
    finally:
        stop(proc)


async def bench_bind(plane: LocalControlPlane, kube: Kube, args: argparse.Namespace, work: Path) -> None:
    total = args.gangs * args.gang_size
    await make_nodes(kube, args.nodes, cpu="16")
    levels = [
        {"labelKey": [SPINE], "topologyLayer": "SpineLayer"},
        {"labelKey": [BLOCK], "parentTopologyLayer": "SpineLayer", "topologyLayer": "BlockLayer"},
        {"parentTopologyLayer": "BlockLayer", "topologyLayer": "NodeTopologyLayer"},
    ]
    await kube.create(
        CLUSTER_NETWORK_TOPOLOGIES,
        {
            "apiVersion": "scheduling.koordinator.sh/v1alpha1",
            "kind": "ClusterNetworkTopology",
            "metadata": {"name": "default"},
            "spec": {"networkTopologySpec": levels},
        },
    )

    # kube-scheduler: the same pods, no gangs, no topology.
    ks_argv = [
        str(Path(args.bin_dir) / "kube-scheduler"),
        f"--kubeconfig={plane.kubeconfig}",
        "--leader-elect=false",
        "--port=0",
        "--secure-port=0",
        f"--kube-api-qps={args.qps:g}",
        f"--kube-api-burst={args.burst}",
        "--logtostderr=true",
        "--v=0",
    ]
    ks_ready, ks_total, ks_span = await run_scheduler(
        kube,
        args,
        ns="bench-ks",
        argv=ks_argv,
        log=work / "kube-scheduler.log",
        scheduler="default-scheduler",
        gangs=False,
    )
    await clear_namespace(kube, "bench-ks")

    # topobridge: gangs with a hard tier-1 (block) constraint each.
    tb_argv = topobridge_argv(plane, args.qps, args.burst, "--no-lws", "--no-hypernodes")
    tb_ready, tb_total, tb_span = await run_scheduler(
        kube,
        args,
        ns="bench-tb",
        argv=tb_argv,
        log=work / "topobridge.log",
        scheduler="topobridge",
        gangs=True,
    )
    pods = [
        p for p in (await kube.list(PODS, namespace="bench-tb")).items if p["metadata"]["name"] != "probe"
    ]
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"][BLOCK] for n in (await kube.list(NODES)).items}
    blocks: dict[str, set[str]] = {}
    for p in pods:
        g = p["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
        blocks.setdefault(g, set()).add(nodes[p["spec"]["nodeName"]])
    split = sum(1 for b in blocks.values() if len(b) > 1)

    tb_rate, ks_rate = total / tb_total, total / ks_total
    print(
        f"binding {args.gangs} gangs x {args.gang_size} pods = {total} pods on {args.nodes} nodes, "
        f"--kube-api-qps {args.qps:g} --kube-api-burst {args.burst}; schedulers running and synced, "
        f"then every pod created at once:"
    )
    print(
        f"  kube-scheduler v1.20.2 (no gangs):  {ks_total:6.1f}s first create->all bound = "
        f"{ks_rate:6.1f} pods/s (bind span {ks_span:.1f}s; start->ready {ks_ready:.1f}s)"
    )
    print(
        f"  topobridge (gangs, hard tier 1):    {tb_total:6.1f}s first create->all bound = "
        f"{tb_rate:6.1f} pods/s (bind span {tb_span:.1f}s; start->ready {tb_ready:.1f}s); "
        f"gangs split across blocks: {split}"
    )
    print(f"  ratio topobridge / kube-scheduler: {tb_rate / ks_rate:.2f} (goal >= 1.00)")


async def main(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="topobridge-bench-"))
    with LocalControlPlane(with_controller_manager=False) as plane:
        kube = await Kube.connect(kubeconfig=plane.kubeconfig, settings=HARNESS)
        try:
            if not args.skip_lws:
                await bench_lws(plane, kube, args.lws, args.qps, args.burst, work)
            if not args.skip_bind:
                await bench_bind(plane, kube, args, work)
        finally:
            await kube.close()
    print(f"(process logs in {work})")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lws", type=int, default=1000)
    p.add_argument("--gangs", type=int, default=200)
    p.add_argument("--gang-size", type=int, default=8)
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--qps", type=float, default=50.0)
    p.add_argument("--burst", type=int, default=100)
    p.add_argument("--bin-dir", default=str(default_bin_dir()))
    p.add_argument("--skip-lws", action="store_true")
    p.add_argument("--skip-bind", action="store_true")
    asyncio.run(main(p.parse_args()))
