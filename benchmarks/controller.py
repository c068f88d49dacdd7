"""Scheduler throughput: topobridge's fallback scheduler against the real kube-scheduler v1.20.2,
measured the way kube-scheduler's scheduler_perf measures it.

The cluster: the local control plane (etcd + kube-apiserver v1.20.2, no controller-manager, no
kubelet) with `--nodes` Ready nodes (API objects only; 16 CPUs each, 10 to a block, 10 blocks
to a spine) and a ClusterNetworkTopology naming the spine and block labels.

Two workloads of `--pods` pods (4 CPUs, 1 GiB each, so a node takes 4):
* plain: bare pods. kube-scheduler schedules them one by one; topobridge as gangs of one.
* gangs: the same pods in groups of `--gang-size`. topobridge gets them as Volcano PodGroups
  (minMember = gang size, networkTopology hard, highest tier 1: the whole gang in one block);
  kube-scheduler gets the same pods without any group (it has no gangs).

One run = one scheduler on one workload, in a fresh namespace:
1. every pod (and PodGroup) is created while no scheduler serves them;
2. the harness starts watching the namespace's pods, then starts the scheduler process
   (fresh each run, so each run pays its own informer sync, outside the timed region);
3. the timed region runs **from the first binding the watch sees to the last** (scheduler_perf's
   throughput collector): pods/s = (pods - 1) / that span, and the per-second samples are the
   bindings in each whole second after the first one (p50/p90 printed, as scheduler_perf does);
4. the process's /metrics is read (client requests and the client rate limiter's wait), its peak
   RSS (VmHWM) noted, the process stopped, and the pods deleted.

Each round runs both schedulers on both workloads; the order alternates from one round and one
workload to the next, so load from elsewhere on the machine falls on both alike. Figures are
medians over the rounds. The client limit (`--qps`/`--burst`, the same for both) is set high so
neither scheduler is client-limited; each run prints requests per pod and the seconds its
requests waited for the limiter, which shows it. Each run also prints the CPU (in cores) of the
scheduler, kube-apiserver and etcd over the timed region, and of everything else on the machine,
and names what limited it. Verdicts are printed, never asserted. The last line reads:

    summary: nodes=<n> ratio_plain=<median> ratio_gangs=<median> rss_ratio=<x>

(ratio = topobridge pods/s / kube-scheduler pods/s, per round; rss_ratio = median peak RSS of
topobridge / kube-scheduler.) Needs kube-scheduler: `bash hack/install-control-plane.sh
--with-scheduler`.

Usage: python benchmarks/controller.py [--nodes 1000] [--pods 2000] [--gang-size 8] [--rounds 3]
       [--qps 5000] [--burst 5000] [--workloads plain,gangs] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# The repository first: this file would otherwise shadow the `controller` package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _cluster import (
    BLOCK,
    SPINE,
    Process,
    any_value,
    control_plane_pids,
    cpu_seconds,
    gather_limited,
    kube_scheduler_argv,
    machine_busy_seconds,
    make_namespace,
    make_nodes,
    metrics_port,
    peak_rss_bytes,
    spawn,
    topobridge_argv,
)

from controller.errors import NotFoundError, TransportError
from controller.kube import JsonDict, Kube, KubeSettings
from controller.resources import CLUSTER_NETWORK_TOPOLOGIES, NODES, PODS, VOLCANO_PODGROUPS
from topobridge.devcluster import LocalControlPlane, default_bin_dir

HARNESS = KubeSettings(qps=5000, burst=5000, connection_pool=64)
SCHEDULERS = ("topobridge", "kube-scheduler")
WORKLOADS = ("plain", "gangs")
MiB = 2**20


@dataclass(frozen=True)
class Sample:
    """CPU seconds so far of the processes that matter, at one moment."""

    at: float
    scheduler: float
    apiserver: float
    etcd: float
    harness: float
    machine: float


@dataclass
class RunResult:
    round: int
    workload: str
    scheduler: str
    pods: int
    binds: list[float]
    """Monotonic time the watch saw each pod bound, sorted."""
    started: float
    requests: float
    throttle_seconds: float
    peak_rss: int
    samples: list[Sample] = field(default_factory=list)
    split_gangs: int = 0

    @property
    def span(self) -> float:
        return self.binds[-1] - self.binds[0] if len(self.binds) > 1 else 0.0

    @property
    def rate(self) -> float:
        """Pods/s from the first binding to the last."""
        return (len(self.binds) - 1) / self.span if self.span > 0 else float("nan")

    def per_second(self) -> list[int]:
        """Bindings in each whole second after the first one (the last partial second dropped)."""
        if self.span < 1:
            return [round(self.rate)] if self.span > 0 else []
        first, whole = self.binds[0], int(self.span)
        counts = [0] * whole
        for t in self.binds:
            k = int(t - first)
            if k < whole:
                counts[k] += 1
        return counts

    def cores(self) -> dict[str, float]:
        """CPU cores used over the timed region, by process (interpolated between samples)."""
        if self.span <= 0 or len(self.samples) < 2:
            return {}
        a, b = _sample_at(self.samples, self.binds[0]), _sample_at(self.samples, self.binds[-1])
        wall = max(b.at - a.at, 1e-9)
        out = {
            "scheduler": (b.scheduler - a.scheduler) / wall,
            "apiserver": (b.apiserver - a.apiserver) / wall,
            "etcd": (b.etcd - a.etcd) / wall,
            "harness": (b.harness - a.harness) / wall,
            "machine": (b.machine - a.machine) / wall,
        }
        out["others"] = max(
            0.0, out["machine"] - sum(out[k] for k in ("scheduler", "apiserver", "etcd", "harness"))
        )
        return out

    def limited_by(self) -> str:
        cores = self.cores()
        ncpu = os.cpu_count() or 1
        if self.span > 0 and self.throttle_seconds > 0.05 * self.span:
            return "the client rate limiter"
        if not cores:
            return "too short to tell"
        if self.scheduler == "topobridge" and cores["scheduler"] >= 0.85:
            return "the scheduler's CPU (one Python thread)"
        if cores["machine"] >= 0.9 * ncpu:
            return f"the machine's CPU ({cores['machine']:.2f} of {ncpu} cores busy)"
        return "latency (no CPU saturated, no limiter wait)"


def _sample_at(samples: list[Sample], t: float) -> Sample:
    """The sample nearest to `t` (samples are 0.25 s apart)."""
    return min(samples, key=lambda s: abs(s.at - t))


# --- the workloads -----------------------------------------------------------------------------


def pod(name: str, ns: str, scheduler: str, group: str | None) -> JsonDict:
    meta: JsonDict = {"name": name, "namespace": ns}
    if group is not None:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "schedulerName": scheduler,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "c", "image": "x", "resources": {"requests": {"cpu": "4", "memory": "1Gi"}}}
            ],
        },
    }


async def create_workload(
    kube: Kube, ns: str, *, pods: int, gang_size: int, scheduler: str, gangs: bool
) -> None:
    """`pods` pods in groups of `gang_size`; with `gangs`, each group is a Volcano PodGroup
    that must sit in one block (hard, tier 1)."""

    async def group(g: int) -> None:
        name = f"g{g}"
        size = min(gang_size, pods - g * gang_size)
        if gangs:
            await kube.create(
                VOLCANO_PODGROUPS,
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": name, "namespace": ns},
                    "spec": {"minMember": size, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
                },
            )
        await asyncio.gather(
            *(
                kube.create(PODS, pod(f"{name}-{i}", ns, scheduler, name if gangs else None))
                for i in range(size)
            )
        )

    await gather_limited(
        (group(g) for g in range(math.ceil(pods / gang_size))), limit=max(1, 64 // gang_size)
    )


async def clear_namespace(kube: Kube, ns: str) -> None:
    """Delete the run's pods and PodGroups (grace 0: no kubelet) and wait until they are gone."""

    async def rm(resource: object, name: str) -> None:
        with contextlib.suppress(NotFoundError):
            await kube.delete(resource, name, namespace=ns, grace_period_seconds=0)  # type: ignore[arg-type]

    for res in (PODS, VOLCANO_PODGROUPS):
        items = (await kube.list(res, namespace=ns)).items
        await gather_limited((rm(res, o["metadata"]["name"]) for o in items), limit=64)
    while (await kube.list(PODS, namespace=ns)).items:
        await asyncio.sleep(0.5)


# --- one run -----------------------------------------------------------------------------------


async def watch_binds(
    kube: Kube, ns: str, resource_version: str, binds: dict[str, float], total: int
) -> None:
    """Record when each pod of `ns` is first seen bound; return once `total` are."""
    rv = resource_version
    while len(binds) < total:
        try:
            async for event in kube.watch(PODS, namespace=ns, resource_version=rv, timeout_seconds=600):
                now = time.monotonic()
                obj = event.object
                rv = obj.get("metadata", {}).get("resourceVersion", rv)
                name = obj.get("metadata", {}).get("name", "")
                if event.type != "DELETED" and obj.get("spec", {}).get("nodeName") and name not in binds:
                    binds[name] = now
                    if len(binds) >= total:
                        return
        except TransportError:
            await asyncio.sleep(0.1)


async def sample_cpu(proc: Process, pids: dict[str, int], out: list[Sample]) -> None:
    while True:
        out.append(
            Sample(
                at=time.monotonic(),
                scheduler=cpu_seconds(proc.pid),
                apiserver=cpu_seconds(pids["kube-apiserver"]),
                etcd=cpu_seconds(pids["etcd"]),
                harness=sum(os.times()[:2]),
                machine=machine_busy_seconds(),
            )
        )
        await asyncio.sleep(0.25)


@dataclass
class Bench:
    plane: LocalControlPlane
    kube: Kube
    args: argparse.Namespace
    work: Path

    def argv(self, scheduler: str, port: int) -> list[str]:
        a = self.args
        if scheduler == "topobridge":
            return topobridge_argv(
                self.plane,
                qps=a.qps,
                burst=a.burst,
                metrics_port=port,
                parts=("--no-lws", "--no-hypernodes"),
            )
        return kube_scheduler_argv(
            self.plane, Path(a.bin_dir) / "kube-scheduler", qps=a.qps, burst=a.burst, metrics_port=port
        )

    async def run(self, rnd: int, workload: str, scheduler: str) -> RunResult:
        a = self.args
        ns = f"r{rnd}-{workload}-{'tb' if scheduler == 'topobridge' else 'ks'}"
        gangs = workload == "gangs"
        gang_size = a.gang_size if gangs else 1
        await make_namespace(self.kube, ns)
        await create_workload(
            self.kube,
            ns,
            pods=a.pods,
            gang_size=gang_size,
            scheduler="topobridge" if scheduler == "topobridge" else "default-scheduler",
            gangs=gangs and scheduler == "topobridge",
        )
        listed = await self.kube.list(PODS, namespace=ns)
        if len(listed.items) != a.pods:
            raise SystemExit(f"{ns}: {len(listed.items)} pods created of {a.pods}")
        binds: dict[str, float] = {}
        watcher = asyncio.ensure_future(watch_binds(self.kube, ns, listed.resource_version, binds, a.pods))
        port = metrics_port()
        proc = spawn(scheduler, self.argv(scheduler, port), self.work / f"{ns}.log", port)
        started = time.monotonic()
        samples: list[Sample] = []
        sampler = asyncio.ensure_future(sample_cpu(proc, control_plane_pids(self.plane), samples))
        try:
            deadline = started + a.timeout
            while not watcher.done():
                if proc.exited():
                    raise SystemExit(f"{scheduler} exited early; see {proc.log}")
                if time.monotonic() > deadline:
                    raise SystemExit(
                        f"{ns}: only {len(binds)}/{a.pods} bound after {a.timeout:g}s; see {proc.log}"
                    )
                await asyncio.wait({watcher}, timeout=0.5)
            await asyncio.sleep(0.3)  # one more CPU sample past the last binding
            series = proc.metrics()
            rss = peak_rss_bytes(proc.pid)
        finally:
            sampler.cancel()
            watcher.cancel()
            await asyncio.gather(sampler, watcher, return_exceptions=True)
            proc.stop()
        if scheduler == "topobridge":
            requests = any_value(series, "topobridge_kube_requests_total")
            throttle = any_value(series, "topobridge_kube_client_throttle_seconds_total")
        else:
            requests = any_value(series, "rest_client_requests_total")
            throttle = any_value(series, "rest_client_rate_limiter_duration_seconds_sum")
        result = RunResult(
            rnd,
            workload,
            scheduler,
            a.pods,
            sorted(binds.values()),
            started,
            requests,
            throttle,
            rss,
            samples,
        )
        if gangs and scheduler == "topobridge":
            result.split_gangs = await self.split_gangs(ns)
        await clear_namespace(self.kube, ns)
        return result

    async def split_gangs(self, ns: str) -> int:
        """Gangs whose pods landed in more than one block (must be 0: the constraint is hard)."""
        nodes = {
            n["metadata"]["name"]: n["metadata"]["labels"][BLOCK] for n in (await self.kube.list(NODES)).items
        }
        blocks: dict[str, set[str]] = {}
        for p in (await self.kube.list(PODS, namespace=ns)).items:
            group = p["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
            blocks.setdefault(group, set()).add(nodes[p["spec"]["nodeName"]])
        return sum(1 for b in blocks.values() if len(b) > 1)


# --- the report --------------------------------------------------------------------------------


def pct(values: list[int], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def print_run(r: RunResult) -> None:
    per_s = r.per_second()
    cores = r.cores()
    c = "  ".join(f"{k} {v:.2f}" for k, v in cores.items())
    extra = (
        f"; gangs split across blocks: {r.split_gangs}"
        if r.workload == "gangs" and r.scheduler == "topobridge"
        else ""
    )
    print(
        f"round {r.round} {r.workload:<6} {r.scheduler:<14} {r.pods} pods: {r.rate:7.1f} pods/s "
        f"(per second p50 {pct(per_s, 0.5):.0f}, p90 {pct(per_s, 0.9):.0f}; bind span {r.span:.1f}s; "
        f"start->first bind {r.binds[0] - r.started:.1f}s); {r.requests / r.pods:.2f} requests/pod, "
        f"limiter wait {r.throttle_seconds:.2f}s; peak RSS {r.peak_rss / MiB:.0f} MiB{extra}",
        flush=True,
    )
    print(f"    CPU cores over the span: {c}; limited by {r.limited_by()}", flush=True)


def report(args: argparse.Namespace, results: list[RunResult], setup: str) -> None:
    print()
    print(
        f"{args.nodes} nodes, {args.pods} pods per run, gangs of {args.gang_size}, {args.rounds} rounds, "
        f"--kube-api-qps {args.qps:g} --kube-api-burst {args.burst} for both; {setup}"
    )
    print(
        f"machine: {os.cpu_count()} cores shared with other users' runs (the 'others' CPU above); "
        "the order alternates between rounds and workloads"
    )
    print(
        f"{'workload':<8} {'scheduler':<14} {'pods/s':>8} {'p50/s':>7} {'p90/s':>7} {'req/pod':>8} {'wait s':>7} {'RSS MiB':>8}"
    )
    ratios: dict[str, list[float]] = {}
    rss: dict[str, list[int]] = {s: [] for s in SCHEDULERS}
    for workload in args.workloads:
        for scheduler in SCHEDULERS:
            runs = [r for r in results if r.workload == workload and r.scheduler == scheduler]
            if not runs:
                continue
            rss[scheduler] += [r.peak_rss for r in runs]
            print(
                f"{workload:<8} {scheduler:<14} {statistics.median(r.rate for r in runs):8.1f} "
                f"{statistics.median(pct(r.per_second(), 0.5) for r in runs):7.0f} "
                f"{statistics.median(pct(r.per_second(), 0.9) for r in runs):7.0f} "
                f"{statistics.median(r.requests / r.pods for r in runs):8.2f} "
                f"{max(r.throttle_seconds for r in runs):7.2f} "
                f"{statistics.median(r.peak_rss for r in runs) / MiB:8.0f}"
            )
        per_round = []
        for rnd in range(1, args.rounds + 1):
            by = {r.scheduler: r for r in results if r.workload == workload and r.round == rnd}
            if len(by) == 2:
                per_round.append(by["topobridge"].rate / by["kube-scheduler"].rate)
        ratios[workload] = per_round
        if per_round:
            print(
                f"  {workload}: topobridge / kube-scheduler per round "
                f"{', '.join(f'{x:.2f}' for x in per_round)}; median {statistics.median(per_round):.2f} (goal >= 1.00)"
            )
    rss_ratio = (
        statistics.median(rss["topobridge"]) / statistics.median(rss["kube-scheduler"])
        if rss["topobridge"] and rss["kube-scheduler"]
        else float("nan")
    )
    print(f"  peak RSS topobridge / kube-scheduler: {rss_ratio:.2f} (goal <= 1.50)")

    def med(w: str) -> str:
        return f"{statistics.median(ratios[w]):.2f}" if ratios.get(w) else "nan"

    print(
        f"summary: nodes={args.nodes} ratio_plain={med('plain')} ratio_gangs={med('gangs')} rss_ratio={rss_ratio:.2f}"
    )


async def main(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="topobridge-bench-"))
    results: list[RunResult] = []
    with LocalControlPlane(with_controller_manager=False) as plane:
        kube = await Kube.connect(kubeconfig=plane.kubeconfig, settings=HARNESS)
        try:
            t0 = time.monotonic()
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
            setup = f"nodes made in {time.monotonic() - t0:.0f}s"
            print(f"{args.nodes} nodes ready ({setup}); logs in {work}", flush=True)
            bench = Bench(plane, kube, args, work)
            for rnd in range(1, args.rounds + 1):
                for i, workload in enumerate(args.workloads):
                    order = SCHEDULERS if (rnd + i) % 2 else tuple(reversed(SCHEDULERS))
                    for scheduler in order:
                        result = await bench.run(rnd, workload, scheduler)
                        results.append(result)
                        print_run(result)
        finally:
            await kube.close()
    report(args, results, setup)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--pods", type=int, default=2000, help="pods per run (default 2000)")
    p.add_argument("--gang-size", type=int, default=8)
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    p.add_argument("--qps", type=float, default=5000.0, help="client QPS of both schedulers (default 5000)")
    p.add_argument("--burst", type=int, default=5000, help="client burst of both schedulers (default 5000)")
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated: plain, gangs")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds one run may take to bind all")
    p.add_argument("--bin-dir", default=str(default_bin_dir()))
    p.add_argument("--quick", action="store_true", help="200 nodes, 200 pods, 1 round: a smoke run")
    args = p.parse_args(argv)
    if args.quick:
        args.nodes, args.pods, args.rounds = 200, 200, 1
    args.workloads = [w for w in args.workloads.split(",") if w]
    if not set(args.workloads) <= set(WORKLOADS) or not args.workloads:
        p.error(f"--workloads takes a comma-separated subset of {', '.join(WORKLOADS)}")
    if args.pods > args.nodes * 4:
        p.error(f"{args.pods} pods do not fit on {args.nodes} nodes (4 pods each)")
    return args


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
