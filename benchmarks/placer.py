"""What one scheduling cycle of the fallback scheduler costs, measured whole.

The cluster: 4 tiers (datacenter > spine > block > NVLink accelerator domain of 8 nodes; 64
nodes per block, 512 per spine, 2,048 per datacenter), nodes of 64 CPU / 512 Gi / 8 GPU, and
5 running pods per node (50,000 at 10,000 nodes) of random shapes and priorities, labelled
`app: svc-<k>` (500 apps, 50 of them under a PodDisruptionBudget), one in ten of them members of 8-pod training gangs (a
`scheduling.sigs.k8s.io` PodGroup, minMember 8) laid over an accelerator domain. Every object
is a parsed model in a `ClusterState`, as the live cache holds them.

Timed regions (each one `ClusterState.view()` + `SchedulingCycle.run()`, i.e. from "the cache
holds the change" to "the plan is ready"; nothing else):
* cold cycle: the first cycle after the whole cluster and a pending 1,024-pod gang were loaded,
  split in two: cold start, the first `view()` (the tree and index built, every gang discovered,
  every aggregate and budget count), and the first `run()` on it (placing that gang: the
  filters' and scores' per-index memos are built here);
* cycle: a pending 1,024-pod gang (1 GPU each, hard at the spine tier) has just arrived in the
  cache (its pods and PodGroup put, untimed); the cycle discovers it, places it, plans its binds.
  Goal <= 20 ms median;
* steady: one pod changed since the last cycle (a training gang lost a member and its
  replacement is pending); the cycle re-discovers that gang and places the replacement next to
  its 7 bound members. Goal <= 5 ms median;
* preemption: 50 PodDisruptionBudgets (half with a reported `disruptionsAllowed`, half
  counted over the pods, minAvailable as numbers and percentages), and a pending 1,024-pod
  gang (2 GPU each, hard at the spine tier, priority above every running pod) that fits
  nowhere without evictions has just arrived; the snapshot is the state's, brought up to date
  as for any cycle (the previous plan's reservations rolled back, the gang discovered); the
  bound pods' arrays preemption reads are patched from the pods that changed since, not
  rebuilt. Goal <= 100 ms median. The line says whether the vectorised heuristic (not the
  exact search) chose the victims, and what building those arrays afresh over every bound
  pod costs (`arrays`: `pod_arrays` with the budget coverage they carry, timed on its own,
  outside the cycle).
"Before" is the same cycle on the full rebuild (`view(full=True)`: index, discovery and every
aggregate from the objects), the path every cycle took before the snapshot was incremental;
the two alternate, in one run, on the same state, for the first --before-runs rounds (0: the
full rebuild is not timed, and its figures read `-`). Each region is reported as wall time and
as process CPU time (medians, `cpu` beside each), since the machine it runs on may be shared.

Growth: a table with every figure above (and the RSS) for each of --sizes, each size but
--nodes measured in a process of its own (default 1k, 10k, 20k and 65k nodes, the last with
325,000 pods: the largest clusters GKE and EKS run; a few GB of RSS and minutes to build).

Another commit: `--before REF` measures every size of the table on the commit REF too (its tree
exported with `git archive`, its own copy of this script run on its own code, a process per
row), the two rows of a size measured one after the other, which goes first alternating from
one size to the next; the `code` column says which (`this`: the working tree).

Memory: the process's resident set holding the cluster, beside the state's own estimate of
its aggregates (`ClusterState.estimate_bytes`, the parsed models not counted).

    .venv/bin/python benchmarks/placer.py [--nodes 10000] [--runs 15] [--before-runs 3]
        [--sizes 1000,10000,20000,65000] [--quick] [--before REF]

The run ends with one line: `summary: nodes=... pods=... gang=1024 cold_ms=... cycle_ms=...
steady_ms=... preempt_ms=... rss_mb=...`, each time with its `_cpu_ms` beside it (the figures
at --nodes).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The repository first: benchmarks/controller.py would otherwise shadow the `controller` package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _checkout import export_tree  # beside this script
from _topology import cluster_network_topology, topology_labels  # beside this script

from controller.placer.cluster import ClusterState, ClusterView, Kind
from controller.placer.columns import pod_arrays
from controller.placer.cycle import CyclePlan, GangTiming, SchedulingCycle
from translations import koordinator as koord
from translations.core import Node, Pod, PodDisruptionBudget
from translations.gangs import gang_name

GANG_SIZE = 1024
PODS_PER_NODE = 5
APPS = 500
PDBS = 50
GOALS = {"cycle_ms": 20.0, "steady_ms": 5.0, "preempt_ms": 100.0}
SERVED = ("topobridge",)
GANG_LABEL = koord.SIGS_POD_GROUP_LABEL


def _pod(
    name: str,
    namespace: str,
    *,
    cpu: int,
    mem_gi: int,
    gpu: int,
    priority: int,
    labels: dict[str, str],
    node: str | None,
) -> Pod:
    req = {"cpu": f"{cpu}m", "memory": f"{mem_gi}Gi"}
    if gpu:
        req["nvidia.com/gpu"] = str(gpu)
    spec: dict[str, Any] = {
        "schedulerName": "topobridge",
        "priority": priority,
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": req}}],
    }
    if node is not None:
        spec["nodeName"] = node
    return Pod.parse(
        {
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": labels,
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": spec,
        }
    )


def _podgroup(name: str, namespace: str, min_member: int, *, tier: str | None = None) -> koord.SigsPodGroup:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "creationTimestamp": "2026-01-01T00:00:00Z"}
    if tier is not None:
        spec = {"gatherStrategy": [{"layer": tier, "strategy": "MustGather"}]}
        meta["annotations"] = {koord.NETWORK_TOPOLOGY_SPEC: json.dumps(spec)}
    return koord.SigsPodGroup.parse({"metadata": meta, "spec": {"minMember": min_member}})


def build_state(n_nodes: int, seed: int = 7) -> tuple[ClusterState, list[str]]:
    """The cluster above in a ClusterState; returns it and the keys of one training gang's pods."""
    rng = random.Random(seed)
    state = ClusterState()
    cnt = cluster_network_topology()
    state.put(Kind.CNT, cnt.name, cnt)
    for i in range(n_nodes):
        labels = {**topology_labels(i), "kubernetes.io/hostname": f"node-{i}"}
        node = Node.parse(
            {
                "metadata": {"name": f"node-{i}", "labels": labels},
                "status": {
                    "allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}
                },
            }
        )
        state.put(Kind.NODE, node.name, node)
    a_gang: list[str] = []
    gangs_made = 0
    for accel in range(n_nodes // 8):
        first = accel * 8
        # Half the accelerator domains host an 8-pod training gang, one member per node.
        gang = ""
        if rng.random() < 0.5:
            gang = f"job-{gangs_made}"
            gangs_made += 1
            pg = _podgroup(gang, "train", 8)
            state.put(Kind.SIGS_PODGROUP, pg.key, pg)
            prio = rng.choice((100, 200, 300))
        for v in range(first, first + 8):
            gpus_left = 8
            for j in range(PODS_PER_NODE):
                in_gang = bool(gang) and j == 0
                gpu = 1 if in_gang else min(gpus_left, rng.choice((0, 1, 1, 1, 2)))
                gpus_left -= gpu
                labels = {GANG_LABEL: gang} if in_gang else {"app": f"svc-{rng.randrange(APPS)}"}
                p = _pod(
                    f"{gang}-{v - first}" if in_gang else f"p-{v}-{j}",
                    "train" if in_gang else "svc",
                    cpu=rng.choice((2000, 4000, 8000)),
                    mem_gi=rng.choice((8, 16, 32)),
                    gpu=gpu,
                    priority=prio if in_gang else rng.choice((100, 200, 300)),
                    labels=labels,
                    node=f"node-{v}",
                )
                state.put(Kind.POD, p.key, p)
                if in_gang and gangs_made == 1:
                    a_gang.append(p.key)
    for k in range(PDBS):
        spec: dict[str, Any] = {"selector": {"matchLabels": {"app": f"svc-{k}"}}}
        spec["minAvailable"] = f"{50 + k % 5 * 10}%" if k % 4 else 3
        raw: dict[str, Any] = {"metadata": {"name": f"pdb-{k}", "namespace": "svc"}, "spec": spec}
        if k % 2:
            raw["status"] = {"disruptionsAllowed": k % 3}
        pdb = PodDisruptionBudget.parse(raw)
        state.put(Kind.PDB, pdb.key, pdb)
    return state, a_gang


def gang_pods(name: str, *, gpus: int, priority: int) -> tuple[koord.SigsPodGroup, list[Pod]]:
    pg = _podgroup(name, "bench", GANG_SIZE, tier="SpineLayer")
    pods = [
        _pod(
            f"{name}-{i}",
            "bench",
            cpu=4000,
            mem_gi=16,
            gpu=gpus,
            priority=priority,
            labels={GANG_LABEL: name},
            node=None,
        )
        for i in range(GANG_SIZE)
    ]
    for i, p in enumerate(pods):
        p.metadata.annotations = {koord.NETWORK_TOPOLOGY_INDEX: str(i)}
    return pg, pods


def arrive(state: ClusterState, pg: koord.SigsPodGroup, pods: list[Pod]) -> None:
    state.put(Kind.SIGS_PODGROUP, pg.key, pg)
    for p in pods:
        state.put(Kind.POD, p.key, p)


def leave(state: ClusterState, pg: koord.SigsPodGroup, pods: list[Pod]) -> None:
    for p in pods:
        state.delete(Kind.POD, p.key)
    state.delete(Kind.SIGS_PODGROUP, pg.key)


def cycle(state: ClusterState, *, full: bool = False) -> tuple[CyclePlan, ClusterView]:
    """The timed unit: snapshot update, then the whole cycle."""
    view = state.view(full=full)
    plan = SchedulingCycle(view, served=SERVED, now=0.0, timing=GangTiming()).run()
    return plan, view


WALL: dict[str, list[float]] = {}
CPU: dict[str, list[float]] = {}
"""Region -> wall and process CPU seconds of each timed run (on a shared, loaded machine CPU
time says what the region costs, wall time what it took)."""


def timed(fn: Callable[[], Any], region: str) -> Any:
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    WALL.setdefault(region, []).append(time.perf_counter() - t0)
    CPU.setdefault(region, []).append(time.process_time() - c0)
    return out


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


REGIONS = (
    "cold",
    "cold_run",
    "cycle",
    "cycle_full",
    "steady",
    "steady_full",
    "preempt",
    "arrays",
)


def _ms(xs: list[float]) -> float | None:
    """The median in ms; None for a region not timed (`--before-runs 0`)."""
    return statistics.median(xs) * 1e3 if xs else None


def _f(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _order(run: int, before_runs: int) -> tuple[bool, ...]:
    """Which paths run in round `run` (True: the full rebuild): both, alternating which goes
    first, for the first `before_runs` rounds; the incremental path alone after that."""
    if run >= before_runs:
        return (False,)
    return (False, True) if run % 2 == 0 else (True, False)


def _cold(state: ClusterState) -> tuple[CyclePlan, str]:
    """The first cycle, its view (`cold`) and its run (`cold_run`) timed apart."""
    view = timed(state.view, "cold")
    plan = timed(SchedulingCycle(view, served=SERVED, now=0.0, timing=GangTiming()).run, "cold_run")
    assert plan.binds and gang_name(plan.binds[0].gang) == "bench/place", plan.outcomes
    return plan, f"{plan.binds[0].domain} (tier {plan.binds[0].tier})"


def _replace_member(state: ClusterState, member: Pod, node: str | None) -> None:
    state.put(
        Kind.POD,
        member.key,
        member.model_copy(update={"spec": member.spec.model_copy(update={"node_name": node})}),
    )


def measure(n_nodes: int, runs: int, preempt_runs: int, before_runs: int) -> dict[str, Any]:
    gc.collect()
    WALL.clear()
    CPU.clear()
    rss0 = rss_mb()
    state, member_keys = build_state(n_nodes)
    place_pg, place_pods = gang_pods("place", gpus=1, priority=1000)
    arrive(state, place_pg, place_pods)
    _, placed_in = _cold(state)
    n_pods = sum(1 for p in state.pods.values() if p.spec.node_name and p.namespace != "bench")
    rss = rss_mb()
    estimate = state.estimate_bytes() / 2**20

    # cycle: the gang arrives again and again; incremental and full rebuild alternate.
    for r in range(runs):
        for is_full in _order(r, before_runs):
            leave(state, place_pg, place_pods)
            state.view()
            arrive(state, place_pg, place_pods)
            plan, _ = timed(lambda f=is_full: cycle(state, full=f), "cycle_full" if is_full else "cycle")  # type: ignore[misc]
            assert plan.binds, plan.outcomes
    leave(state, place_pg, place_pods)

    # steady: one training gang member replaced.
    member = state.pods[member_keys[0]]
    state.view()
    for r in range(runs):
        for is_full in _order(r, before_runs):
            state.delete(Kind.POD, member.key)
            _replace_member(state, member, None)
            plan, _ = timed(lambda f=is_full: cycle(state, full=f), "steady_full" if is_full else "steady")  # type: ignore[misc]
            assert plan.binds and plan.binds[0].pods[0][0] == member.key, plan.outcomes
            _replace_member(state, member, plan.binds[0].pods[0][1])

    # preemption, on the state's snapshot brought up to date.
    pre_pg, pre_pods = gang_pods("preempt", gpus=2, priority=1000)
    snap = state.view().snapshot
    timed(lambda: pod_arrays(snap.pods, len(snap.index.resources), snap.budget_hits), "arrays")
    pplan = None
    for _ in range(preempt_runs):
        arrive(state, pre_pg, pre_pods)
        plan, _ = timed(lambda: cycle(state), "preempt")
        assert plan.preemptions, plan.outcomes
        pplan = plan.preemptions[0].plan
        leave(state, pre_pg, pre_pods)
    assert pplan is not None
    return {
        "nodes": n_nodes,
        "pods": n_pods,
        **{f"{k}_ms": _ms(WALL.get(k, [])) for k in REGIONS},
        **{f"{k}_cpu_ms": _ms(CPU.get(k, [])) for k in REGIONS},
        "placed_in": placed_in,
        "victims": len(pplan.victims),
        "plan_domain": pplan.domain,
        "heuristic": not pplan.optimal,
        "rss_mb": rss - rss0,
        "rss_total_mb": rss,
        "estimate_mb": estimate,
    }


def _measure_apart(size: int, args: argparse.Namespace, script: str = __file__) -> dict[str, Any]:
    """One size's figures from a fresh process: its RSS is then its own (memory an earlier,
    bigger cluster freed is not always given back to the system). `script`: this benchmark as
    another commit has it (`--before`), run on that commit's code."""
    cmd = [sys.executable, script, "--row", "--nodes", str(size), "--runs", str(args.runs)]
    cmd += ["--preempt-runs", str(args.preempt_runs), "--before-runs", str(args.before_runs)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    row: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return row


def _export(ref: str, into: Path) -> str:
    """The repository's tree at `ref` written under `into` (`_checkout.export_tree`); the path
    of this benchmark in it."""
    return str(export_tree(ref, into) / "benchmarks" / "placer.py")


def _rows(
    turn: int, size: int, r: dict[str, Any], args: argparse.Namespace, before: str | None
) -> list[tuple[str, dict[str, Any]]]:
    """The table's rows for one size, labelled by the code measured: this tree's and, with
    `--before`, the other commit's (`before`: its copy of this script), each from a process of
    its own, which goes first alternating from one size (`turn`) to the next."""
    order = ["this", "before"] if before is None or turn % 2 == 0 else ["before", "this"]
    rows: list[tuple[str, dict[str, Any]]] = []
    for which in order:
        if which == "this":
            rows.append(("this", r if size == args.nodes else _measure_apart(size, args)))
        elif before is not None:
            rows.append((args.before, _measure_apart(size, args, before)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--preempt-runs", type=int, default=5)
    ap.add_argument("--before-runs", type=int, default=3, help="full-rebuild runs (alternating)")
    ap.add_argument("--sizes", default="1000,10000,20000,65000")
    ap.add_argument("--quick", action="store_true", help="1,000 nodes, 5 runs, sizes 1000 only")
    ap.add_argument(
        "--before",
        metavar="REF",
        help="also measure every size of the table on the commit REF (git archive), alternating",
    )
    ap.add_argument(
        "--row", action="store_true", help="print one size's figures as JSON (the growth table's)"
    )
    args = ap.parse_args()
    if args.quick:
        args.nodes, args.runs, args.preempt_runs, args.before_runs, args.sizes = 1000, 5, 3, 2, "1000"
    r = measure(args.nodes, args.runs, args.preempt_runs, args.before_runs)
    if args.row:
        print(json.dumps(r))
        return
    runs = {"cycle": args.runs, "steady": args.runs, "preempt": args.preempt_runs}
    print(f"cluster: {r['nodes']} nodes, 4 tiers, {r['pods']} running pods, {PDBS} PodDisruptionBudgets")
    print(f"gang: {GANG_SIZE} pods, hard at the spine tier; placed in {r['placed_in']}")
    print(f"{'':19}{'wall ms':>9} {'cpu ms':>9}")

    def line(label: str, key: str, note: str) -> None:
        print(f"{label:19}{_f(r[key + '_ms']):>9} {_f(r[key + '_cpu_ms']):>9}  {note}")

    line("cold start:", "cold", "first view(): tree, index, every gang discovered, every aggregate")
    line("cold first run:", "cold_run", "first run() on it: the 1,024-pod gang placed, per-index memos built")
    for key, label in (("cycle", "cycle:"), ("steady", "steady cycle:")):
        line(label, key, f"median of {runs[key]}, goal <= {GOALS[key + '_ms']:.0f} ms")
        line("  before:", key + "_full", f"the full rebuild, median of {args.before_runs} (alternating)")
    line(
        "preemption:",
        "preempt",
        f"median of {args.preempt_runs}, goal <= {GOALS['preempt_ms']:.0f} ms; {r['victims']} victims in"
        f" {r['plan_domain']}, chosen by {'the vectorised heuristic' if r['heuristic'] else 'the exact search'}",
    )
    line(
        "  arrays afresh:",
        "arrays",
        "the pod arrays preemption reads, built over every bound pod (not in a cycle)",
    )
    print(
        f"memory:            {r['rss_mb']:9.1f} MB  RSS grown holding the cluster ({r['rss_total_mb']:.0f} MB total);"
        f" the state's estimate of its aggregates: {r['estimate_mb']:.1f} MB"
    )
    for clock, suffix in (("wall", "_ms"), ("cpu", "_cpu_ms")):
        met = all(r[k.removesuffix("_ms") + suffix] <= v for k, v in GOALS.items())
        print(f"goals met ({clock} time): {'yes' if met else 'NO'}")
    print()
    before = _export(args.before, Path(tempfile.mkdtemp(prefix="placer-before-"))) if args.before else None
    header: tuple[str, ...] = ("code", "nodes", "pods", "cold ms", "cpu", "cycle ms", "cpu", "before", "cpu")
    header += ("steady ms", "cpu", "before", "cpu", "preempt ms", "cpu", "heur.", "arrays", "cpu", "rss MB")
    widths = (8, 7, 7, 9, 8, 9, 7, 9, 8, 10, 7, 9, 8, 11, 7, 6, 7, 7, 8)
    print(" ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    sizes = [int(s) for s in args.sizes.split(",") if s]
    for code, g in (row for turn, size in enumerate(sizes) for row in _rows(turn, size, r, args, before)):
        row = (
            code[:8],
            g["nodes"],
            g["pods"],
            _f(g["cold_ms"], 1),
            _f(g["cold_cpu_ms"], 1),
            _f(g["cycle_ms"]),
            _f(g["cycle_cpu_ms"]),
            _f(g["cycle_full_ms"], 1),
            _f(g["cycle_full_cpu_ms"], 1),
            _f(g["steady_ms"]),
            _f(g["steady_cpu_ms"]),
            _f(g["steady_full_ms"], 1),
            _f(g["steady_full_cpu_ms"], 1),
            _f(g["preempt_ms"], 1),
            _f(g["preempt_cpu_ms"], 1),
            "yes" if g["heuristic"] else "no",
            _f(g["arrays_ms"], 1),
            _f(g["arrays_cpu_ms"], 1),
            f"{g['rss_mb']:.0f}",
        )
        print(" ".join(str(v).rjust(w) for v, w in zip(row, widths, strict=True)))
    if before is not None:  # the exported tree: <tmp>/benchmarks/placer.py
        shutil.rmtree(Path(before).parents[1], ignore_errors=True)
    figures = " ".join(
        f"{k}_ms={_f(r[k + '_ms'])} {k}_cpu_ms={_f(r[k + '_cpu_ms'])}"
        for k in ("cold", "cycle", "steady", "preempt")
    )
    print(f"summary: nodes={r['nodes']} pods={r['pods']} gang={GANG_SIZE} {figures} rss_mb={r['rss_mb']:.0f}")


if __name__ == "__main__":
    main()
