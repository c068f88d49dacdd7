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

Each round runs every scheduler on both workloads; the order rotates from one round and one
workload to the next, so load from elsewhere on the machine falls on all alike. Figures are
medians over the rounds. `--before REF` adds a third scheduler, `before`: topobridge at commit
REF, run from its own tree (`_checkout.export_tree`), so a change is measured against the code
before it in the same run. The client limit (`--qps`/`--burst`, the same for both) is set high so
neither scheduler is client-limited; each run prints requests per pod and the seconds its
requests waited for the limiter, which shows it. Each run also prints the CPU (in cores) of the
scheduler, kube-apiserver and etcd over the timed region, and of everything else on the machine,
names what limited it, and the scheduler's CPU seconds over the timed region per binding (on a
machine shared with other work, pods/s follows the share of a core each process gets; CPU per
pod does not) with the load averages. Verdicts are printed, never asserted. The last line reads:

    summary: nodes=<n> ratio_plain=<median> ratio_gangs=<median> rss_ratio=<x>
             [before_ratio_plain=.. before_ratio_gangs=.. before_rss_ratio=.. cpu_plain_vs_before=..
             cpu_gangs_vs_before=..]

(ratio = topobridge pods/s / kube-scheduler pods/s, per round; rss_ratio = median peak RSS of
topobridge / kube-scheduler; the `before_` fields the same for `--before`'s commit, and
cpu_<workload>_vs_before = median CPU per pod of this commit / of that one.) `--profile DIR` runs
topobridge under cProfile (CPU time) and leaves one stats file per run. Needs kube-scheduler:
`bash hack/install-control-plane.sh --with-scheduler`.

`--takeover` measures a leader takeover instead: `--pods` pods already bound on `--nodes` nodes,
two `topobridge run` replicas under leader election; a fresh leader's start to its first bind
and its RSS; then the leader stopped (SIGTERM: the lease released) and, with a new standby,
killed (SIGKILL: the lease waited out), each time once the standby has gone idle (as one that
has stood by for long), the seconds from then until the standby binds a pod created at that
moment, and the new leader's RSS. With `--before REF` the same on REF's
code, on the same cluster. It ends with `summary: mode=takeover nodes=.. pods=.. lease_s=..
first_bind_s=.. rss_mb=.. takeover_stop_s=.. takeover_kill_s=.. standby_rss_mb=..` (and the
`before_` fields). Every topobridge process runs with its bytecode compiled first (under a
cache prefix in the run's directory), as its image does.

Usage: python benchmarks/controller.py [--nodes 1000] [--pods 2000] [--gang-size 8] [--rounds 3]
       [--qps 5000] [--burst 5000] [--workloads plain,gangs] [--quick] [--before REF]
       [--profile DIR] [--takeover [--lease-duration 15] [--standby-settle 5]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# The repository first: this file would otherwise shadow the `controller` package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _checkout import ROOT, export_tree  # beside this script
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
    rss_bytes,
    spawn,
    topobridge_argv,
)

from controller.errors import NotFoundError, TransportError
from controller.kube import JsonDict, Kube, KubeSettings
from controller.resources import CLUSTER_NETWORK_TOPOLOGIES, LEASES, NODES, PODS, VOLCANO_PODGROUPS
from topobridge.devcluster import LocalControlPlane, default_bin_dir

HARNESS = KubeSettings(qps=5000, burst=5000, connection_pool=64)
SCHEDULERS = ("topobridge", "kube-scheduler")
TAKEOVER_LEASE = "topobridge-bench"
BEFORE = "before"
"""topobridge at the commit `--before` names (its own exported tree), the third scheduler."""
SHORT = {"topobridge": "tb", "kube-scheduler": "ks", BEFORE: "tb0"}
"""Each scheduler's part of a run's namespace name."""
WORKLOADS = ("plain", "gangs")
MiB = 2**20
PROFILED = """
import cProfile, runpy, sys, time
out, sys.argv = sys.argv[1], ["topobridge", *sys.argv[2:]]
profile = cProfile.Profile(time.process_time)  # CPU time: a busy machine's waits left out
profile.enable()
try:
    runpy.run_module("topobridge.cli", run_name="__main__")
finally:
    profile.disable()
    profile.dump_stats(out)
"""
"""`topobridge` under cProfile (`--profile`), timed in CPU seconds."""


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

    @property
    def is_topobridge(self) -> bool:
        return self.scheduler != "kube-scheduler"

    def cpu_ms_per_pod(self) -> float:
        """The scheduler's CPU (user + system) over the timed region, per binding in it: the
        figure a busy machine moves least (its waits for a core are not in it)."""
        if self.span <= 0 or len(self.samples) < 2:
            return float("nan")
        a, b = _sample_at(self.samples, self.binds[0]), _sample_at(self.samples, self.binds[-1])
        return 1000 * (b.scheduler - a.scheduler) / (len(self.binds) - 1)

    def limited_by(self) -> str:
        cores = self.cores()
        ncpu = os.cpu_count() or 1
        if self.span > 0 and self.throttle_seconds > 0.05 * self.span:
            return "the client rate limiter"
        if not cores:
            return "too short to tell"
        if self.is_topobridge and cores["scheduler"] >= 0.85:
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

    before: Path | None = None
    """The exported tree of `--before`'s commit (None without it)."""

    def argv(self, scheduler: str, port: int, ns: str) -> list[str]:
        a = self.args
        if scheduler != "kube-scheduler":
            argv = topobridge_argv(
                self.plane,
                qps=a.qps,
                burst=a.burst,
                metrics_port=port,
                parts=("--no-lws", "--no-hypernodes"),
            )
            if a.profile:  # the same process under cProfile, its stats written when it stops
                module = argv.index("-m")
                argv[module : module + 2] = ["-c", PROFILED, str(Path(a.profile) / f"{ns}.prof")]
            return argv
        return kube_scheduler_argv(
            self.plane, Path(a.bin_dir) / "kube-scheduler", qps=a.qps, burst=a.burst, metrics_port=port
        )

    async def run(self, rnd: int, workload: str, scheduler: str) -> RunResult:
        a = self.args
        ns = f"r{rnd}-{workload}-{SHORT[scheduler]}"
        ours = scheduler != "kube-scheduler"
        gangs = workload == "gangs"
        gang_size = a.gang_size if gangs else 1
        await make_namespace(self.kube, ns)
        await create_workload(
            self.kube,
            ns,
            pods=a.pods,
            gang_size=gang_size,
            scheduler="topobridge" if ours else "default-scheduler",
            gangs=gangs and ours,
        )
        listed = await self.kube.list(PODS, namespace=ns)
        if len(listed.items) != a.pods:
            raise SystemExit(f"{ns}: {len(listed.items)} pods created of {a.pods}")
        binds: dict[str, float] = {}
        watcher = asyncio.ensure_future(watch_binds(self.kube, ns, listed.resource_version, binds, a.pods))
        port = metrics_port()
        # Each topobridge runs from its own tree: `python -m` puts the working directory first
        # on sys.path, ahead of the editable install.
        cwd = self.before if scheduler == BEFORE else ROOT
        proc = spawn(scheduler, self.argv(scheduler, port, ns), self.work / f"{ns}.log", port, cwd=cwd)
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
        if ours:
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
        if gangs and ours:
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
        f"; gangs split across blocks: {r.split_gangs}" if r.workload == "gangs" and r.is_topobridge else ""
    )
    print(
        f"round {r.round} {r.workload:<6} {r.scheduler:<14} {r.pods} pods: {r.rate:7.1f} pods/s "
        f"(per second p50 {pct(per_s, 0.5):.0f}, p90 {pct(per_s, 0.9):.0f}; bind span {r.span:.1f}s; "
        f"start->first bind {r.binds[0] - r.started:.1f}s); {r.requests / r.pods:.2f} requests/pod, "
        f"limiter wait {r.throttle_seconds:.2f}s; peak RSS {r.peak_rss / MiB:.0f} MiB; "
        f"scheduler CPU {r.cpu_ms_per_pod():.2f} ms/pod{extra}",
        flush=True,
    )
    print(f"    CPU cores over the span: {c}; limited by {r.limited_by()}; load {load()}", flush=True)


def load() -> str:
    """The machine's 1/5/15-minute load averages, beside every figure."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def per_round(results: list[RunResult], workload: str, ours: str, rounds: int) -> list[float]:
    """`ours`'s pods/s over kube-scheduler's, per round of `workload`."""
    out = []
    for rnd in range(1, rounds + 1):
        by = {r.scheduler: r for r in results if r.workload == workload and r.round == rnd}
        if ours in by and "kube-scheduler" in by:
            out.append(by[ours].rate / by["kube-scheduler"].rate)
    return out


def print_table(args: argparse.Namespace, results: list[RunResult]) -> None:
    print(
        f"{'workload':<8} {'scheduler':<14} {'pods/s':>8} {'p50/s':>7} {'p90/s':>7} {'req/pod':>8} "
        f"{'wait s':>7} {'RSS MiB':>8} {'CPU ms/pod':>10} {'start s':>8}"
    )
    for workload in args.workloads:
        for scheduler in args.schedulers:
            runs = [r for r in results if r.workload == workload and r.scheduler == scheduler]
            if not runs:
                continue
            print(
                f"{workload:<8} {scheduler:<14} {statistics.median(r.rate for r in runs):8.1f} "
                f"{statistics.median(pct(r.per_second(), 0.5) for r in runs):7.0f} "
                f"{statistics.median(pct(r.per_second(), 0.9) for r in runs):7.0f} "
                f"{statistics.median(r.requests / r.pods for r in runs):8.2f} "
                f"{max(r.throttle_seconds for r in runs):7.2f} "
                f"{statistics.median(r.peak_rss for r in runs) / MiB:8.0f} "
                f"{statistics.median(r.cpu_ms_per_pod() for r in runs):10.2f} "
                f"{statistics.median(r.binds[0] - r.started for r in runs):8.1f}"
            )


def report(args: argparse.Namespace, results: list[RunResult], setup: str) -> None:
    print()
    print(
        f"{args.nodes} nodes, {args.pods} pods per run, gangs of {args.gang_size}, {args.rounds} rounds, "
        f"--kube-api-qps {args.qps:g} --kube-api-burst {args.burst} for all; {setup}"
        + (f"; {BEFORE} = topobridge at {args.before}" if args.before else "")
    )
    print(
        f"machine: {os.cpu_count()} cores shared with other users' runs (the 'others' CPU above; "
        f"load now {load()}); the order alternates between rounds and workloads"
    )
    print_table(args, results)
    ours = ["topobridge", *([BEFORE] if args.before else [])]
    fields: dict[str, str] = {"nodes": str(args.nodes)}
    for who in ours:
        prefix = "" if who == "topobridge" else f"{who}_"
        for workload in args.workloads:
            ratios = per_round(results, workload, who, args.rounds)
            median = f"{statistics.median(ratios):.2f}" if ratios else "nan"
            fields[f"{prefix}ratio_{workload}"] = median
            if ratios:
                print(
                    f"  {workload}: {who} / kube-scheduler per round "
                    f"{', '.join(f'{x:.2f}' for x in ratios)}; median {median} (goal >= 2.00)"
                )
        rss_ratio = _median_ratio(results, who, "kube-scheduler", lambda r: r.peak_rss)
        print(f"  peak RSS {who} / kube-scheduler: {rss_ratio:.2f} (goal <= 1.50)")
        fields[f"{prefix}rss_ratio"] = f"{rss_ratio:.2f}"
    for workload in args.workloads if args.before else ():
        runs = [r for r in results if r.workload == workload]
        cpu = _median_ratio(runs, "topobridge", BEFORE, lambda r: r.cpu_ms_per_pod())
        print(f"  {workload}: scheduler CPU per pod, topobridge / {BEFORE}: {cpu:.2f}")
        fields[f"cpu_{workload}_vs_before"] = f"{cpu:.2f}"
    print("summary: " + " ".join(f"{k}={v}" for k, v in fields.items()))


def _median_ratio(results: list[RunResult], a: str, b: str, figure: Callable[[RunResult], float]) -> float:
    xs = [figure(r) for r in results if r.scheduler == a]
    ys = [figure(r) for r in results if r.scheduler == b]
    return statistics.median(xs) / statistics.median(ys) if xs and ys else float("nan")


# --- a leader takeover ------------------------------------------------------------------------


@dataclass
class Replica:
    """One `topobridge run` replica under leader election."""

    name: str
    proc: Process
    started: float


async def lease_holder(kube: Kube) -> str:
    with contextlib.suppress(NotFoundError):
        lease = await kube.get(LEASES, TAKEOVER_LEASE, namespace="kube-system")
        return str((lease.get("spec") or {}).get("holderIdentity") or "")
    return ""


async def bound_at(kube: Kube, ns: str, timeout: float) -> float:
    """Create a pod for topobridge in the new namespace `ns`; the monotonic time the watch sees
    it bound."""
    await make_namespace(kube, ns)
    created = await kube.create(PODS, pod("probe", ns, "topobridge", None))
    binds: dict[str, float] = {}
    rv = created["metadata"]["resourceVersion"]
    await asyncio.wait_for(watch_binds(kube, ns, rv, binds, 1), timeout)
    return binds["probe"]


@dataclass
class Takeover:
    """Two replicas of one commit's topobridge under leader election; the leader stopped
    (SIGTERM: it releases the lease) or killed (SIGKILL: the standby waits the lease out); the
    time from then until the standby binds a pod created at that moment."""

    plane: LocalControlPlane
    kube: Kube
    args: argparse.Namespace
    work: Path
    code: str
    """"topobridge" (this tree) or BEFORE."""
    tree: Path
    replicas: list[Replica] = field(default_factory=list)

    def start(self, name: str) -> Replica:
        a, port, name = self.args, metrics_port(), f"{SHORT[self.code]}-{name}"
        argv = topobridge_argv(
            self.plane, qps=a.qps, burst=a.burst, metrics_port=port, parts=("--no-lws", "--no-hypernodes")
        )
        argv.remove("--no-leader-elect")
        argv += ["--identity", name, "--lease-name", TAKEOVER_LEASE]
        argv += ["--lease-duration", f"{a.lease_duration:g}"]
        argv += ["--renew-deadline", f"{a.lease_duration * 2 / 3:g}"]
        proc = spawn(name, argv, self.work / f"{name}.log", port, cwd=self.tree)
        replica = Replica(name, proc, time.monotonic())
        self.replicas.append(replica)
        return replica

    async def leader(self, timeout: float) -> Replica:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            holder = await lease_holder(self.kube)
            live = [r for r in self.replicas if r.name == holder and not r.proc.exited()]
            if live:
                return live[0]
            await asyncio.sleep(0.2)
        raise SystemExit(f"no replica took the lease within {timeout:g}s; logs in {self.work}")

    def describe(self, replica: Replica) -> tuple[str, int]:
        rss = rss_bytes(replica.proc.pid)
        return f"RSS {rss / MiB:.0f} MiB (peak {peak_rss_bytes(replica.proc.pid) / MiB:.0f})", rss

    async def run(self) -> tuple[list[str], dict[str, str]]:
        """The lines to print, and this commit's fields of the summary."""
        a, short = self.args, SHORT[self.code]
        first = self.start("replica-1")
        took = await bound_at(self.kube, f"{short}-takeover-0", a.timeout) - first.started
        leader = await self.leader(5)
        text, rss = self.describe(leader)
        lines = [f"{self.code}: a fresh leader, start -> first bind {took:.1f}s; {text}; load {load()}"]
        fields = {"first_bind_s": f"{took:.1f}", "rss_mb": f"{rss / MiB:.0f}"}
        for i, how in enumerate(("stop", "kill"), start=1):
            standby = self.start(f"replica-{i + 1}")
            settled = await settle(standby, a.standby_settle, a.timeout)
            t0 = time.monotonic()
            if how == "stop":
                leader.proc.stop()
            else:
                os.kill(leader.proc.pid, signal.SIGKILL)
                leader.proc.popen.wait()
            gone = time.monotonic() - t0
            took = await bound_at(self.kube, f"{short}-takeover-{i}", a.timeout) - t0
            leader = await self.leader(5)
            if leader is not standby:
                raise SystemExit(f"{leader.name} leads, not the standby {standby.name}")
            text, rss = self.describe(leader)
            why = (
                "SIGTERM, lease released"
                if how == "stop"
                else f"SIGKILL, lease of {a.lease_duration:g}s waited out"
            )
            lines.append(
                f"{self.code}: leader {how} ({why}; it was gone after {gone:.1f}s): the standby "
                f"(idle {settled:.1f}s after its start) bound a new pod {took:.1f}s later; {text}; "
                f"load {load()}"
            )
            fields[f"takeover_{how}_s"] = f"{took:.1f}"
        fields["standby_rss_mb"] = f"{rss / MiB:.0f}"
        for r in self.replicas:
            r.proc.stop()
        prefix = "" if self.code == "topobridge" else f"{self.code}_"
        return lines, {f"{prefix}{k}": v for k, v in fields.items()}


async def settle(replica: Replica, floor: float, timeout: float) -> float:
    """Wait until a new standby has run `floor` seconds and then used under a tenth of a core
    for two seconds (its start, and whatever it does before leading, done: a standby in
    production has stood by for long); the seconds since its start."""
    deadline = replica.started + timeout
    await asyncio.sleep(max(0.0, replica.started + floor - time.monotonic()))
    while time.monotonic() < deadline:
        before = cpu_seconds(replica.proc.pid)
        await asyncio.sleep(2.0)
        if cpu_seconds(replica.proc.pid) - before < 0.2:
            return time.monotonic() - replica.started
    raise SystemExit(f"{replica.name} did not go idle within {timeout:g}s")


async def make_bound_pods(kube: Kube, ns: str, n: int, nodes: int) -> None:
    """`n` pods already bound (spec.nodeName at creation), round robin over the nodes: the
    cluster's running load, which every informer lists and the scheduler's state holds."""
    await make_namespace(kube, ns)

    async def one(i: int) -> None:
        body = pod(f"p{i}", ns, "topobridge", None)
        body["spec"]["nodeName"] = f"bn-{i % nodes}"
        await kube.create(PODS, body)

    await gather_limited((one(i) for i in range(n)), limit=64)


def compile_trees(work: Path, *trees: Path | None) -> None:
    """Bytecode for every tree's packages, under one cache prefix in `work` that every process
    started from here reads: topobridge starts as its image runs it (the image compiles its
    bytecode at build time) rather than compiling each module on every start. The source trees
    are not written to."""
    prefix = work / "pycache"
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)  # inherited by every process spawned
    for tree in trees:
        if tree is not None:
            dirs = [str(tree / d) for d in PACKAGES if (tree / d).is_dir()]
            subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], check=True)


PACKAGES = ("controller", "translations", "topobridge", "webhooks")


async def takeover(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="topobridge-takeover-"))
    before = export_tree(args.before, work / "before") if args.before else None
    compile_trees(work, ROOT, before)
    trees = {"topobridge": ROOT, **({BEFORE: before} if before is not None else {})}
    fields = {"nodes": str(args.nodes), "pods": str(args.pods), "lease_s": f"{args.lease_duration:g}"}
    lines: list[str] = []
    with LocalControlPlane(with_controller_manager=False) as plane:
        kube = await Kube.connect(kubeconfig=plane.kubeconfig, settings=HARNESS)
        try:
            t0 = time.monotonic()
            await make_nodes(kube, args.nodes, cpu="16")
            await make_topology(kube)
            await make_bound_pods(kube, "load", args.pods, args.nodes)
            took = time.monotonic() - t0
            print(
                f"{args.nodes} nodes, {args.pods} bound pods made in {took:.0f}s; logs in {work}", flush=True
            )
            for code in trees:  # the commits one after the other, on the same cluster
                printed, figures = await Takeover(plane, kube, args, work, code, trees[code]).run()
                print("\n".join(printed), flush=True)
                lines += printed
                fields.update(figures)
        finally:
            await kube.close()
    print()
    print("\n".join(lines))
    print("summary: mode=takeover " + " ".join(f"{k}={v}" for k, v in fields.items()))


async def main(args: argparse.Namespace) -> None:
    if args.takeover:
        await takeover(args)
        return
    work = Path(tempfile.mkdtemp(prefix="topobridge-bench-"))
    results: list[RunResult] = []
    before = export_tree(args.before, work / "before") if args.before else None
    compile_trees(work, ROOT, before)
    with LocalControlPlane(with_controller_manager=False) as plane:
        kube = await Kube.connect(kubeconfig=plane.kubeconfig, settings=HARNESS)
        try:
            t0 = time.monotonic()
            await make_nodes(kube, args.nodes, cpu="16")
            await make_topology(kube)
            setup = f"nodes made in {time.monotonic() - t0:.0f}s"
            print(f"{args.nodes} nodes ready ({setup}); logs in {work}", flush=True)
            bench = Bench(plane, kube, args, work, before)
            for rnd in range(1, args.rounds + 1):
                for i, workload in enumerate(args.workloads):
                    for scheduler in turn_order(args.schedulers, rnd + i):
                        result = await bench.run(rnd, workload, scheduler)
                        results.append(result)
                        print_run(result)
        finally:
            await kube.close()
    report(args, results, setup)


def turn_order(schedulers: Sequence[str], turn: int) -> list[str]:
    """The schedulers rotated by `turn`: each goes first, second... in turn (for two, the
    order alternates)."""
    k = turn % len(schedulers)
    return [*schedulers[k:], *schedulers[:k]]


async def make_topology(kube: Kube) -> None:
    """The ClusterNetworkTopology naming the spine and block labels."""
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
    p.add_argument(
        "--takeover",
        action="store_true",
        help="instead: --pods bound pods on --nodes nodes, two replicas under leader election, the "
        "leader stopped then killed; prints the takeover times and the live process's RSS",
    )
    p.add_argument("--lease-duration", type=float, default=15.0, help="with --takeover (default 15)")
    p.add_argument(
        "--standby-settle",
        type=float,
        default=5.0,
        help="with --takeover: seconds a standby runs at least, before it must also go idle (default 5)",
    )
    p.add_argument(
        "--before",
        metavar="REF",
        help=f"also run topobridge at commit REF (its own tree, as scheduler '{BEFORE}'), in the same rotation",
    )
    p.add_argument(
        "--profile",
        metavar="DIR",
        help="run topobridge under cProfile, one DIR/<namespace>.prof per run (its figures then include cProfile's cost)",
    )
    args = p.parse_args(argv)
    if args.quick:
        args.nodes, args.pods, args.rounds = 200, 200, 1
    args.workloads = [w for w in args.workloads.split(",") if w]
    args.schedulers = [*SCHEDULERS, *([BEFORE] if args.before else [])]
    if not set(args.workloads) <= set(WORKLOADS) or not args.workloads:
        p.error(f"--workloads takes a comma-separated subset of {', '.join(WORKLOADS)}")
    if args.pods > args.nodes * 4 and not args.takeover:
        p.error(f"{args.pods} pods do not fit on {args.nodes} nodes (4 pods each)")
    return args


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
