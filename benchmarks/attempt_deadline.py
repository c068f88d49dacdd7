"""What the slowest known scheduling attempt costs, with and without its deadline.

The case (`tests/controller/placer/worst_cases.py`): a gang of three shapes, hard-held to one
block, over blocks of nodes full of lower-priority pods of mixed sizes; the exact preemption
search must try placements of several shapes at every step. Sizes: the default (4 blocks of 4
nodes, 10 pods each: 160 running pods) and `--large` (16 blocks of 8 nodes, 20 pods each: 2,560).

Timed region: one `engine.schedule()` call for the gang on a fresh clone of the snapshot
(prefilter, filter, select, and the whole preemption search), as `cycle.attempt` makes it;
scenario loading and the snapshot are built once, untimed. Two variants, alternating in each
round: `deadline` (the default `--attempt-deadline`, 0.3 s) and `unbounded` (no deadline: the
search runs to its step budget, as before deadlines existed; skipped with --large, where it
runs for minutes). Reports wall and CPU seconds per variant (median and max), the plan each
found (victims, whether proven cheapest).

    .venv/bin/python benchmarks/attempt_deadline.py [--rounds 3] [--large]

Last line: `summary: pods=... deadline_s=... deadline_max_s=... unbounded_s=... victims_deadline=...
victims_unbounded=...`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "controller" / "placer")]

from worst_cases import GANG, worst_attempt  # noqa: E402

from controller.placer.budgets import budgets_from  # noqa: E402
from controller.placer.deadline import DEFAULT_ATTEMPT_SECONDS, Deadline, never  # noqa: E402
from controller.placer.engine import schedule  # noqa: E402
from controller.placer.scenario import load_scenario, prepare  # noqa: E402


def _attempt(prep: Any, sc: Any, gang: Any, deadline: Deadline) -> tuple[float, float, Any]:
    snap = prep.snapshot.clone()
    budgets = budgets_from(sc.pdbs, snap)
    wall, cpu = time.perf_counter(), time.process_time()
    verdict = schedule(gang, snap, budgets=budgets, deadline=deadline)
    return time.perf_counter() - wall, time.process_time() - cpu, verdict


def main() -> None:
    ap = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--large", action="store_true")
    args = ap.parse_args()
    size = {"blocks": 16, "nodes_per_block": 8, "pods_per_node": 20} if args.large else {}
    sc = load_scenario(worst_attempt(**size))
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == f"default/{GANG}")
    running = sum(1 for p in sc.pods if p.spec.node_name)
    print(f"case: {len(sc.nodes)} nodes, {running} running pods, gang of {len(gang.pods)} in 3 shapes")
    variants = {"deadline": lambda: Deadline.after(DEFAULT_ATTEMPT_SECONDS)}
    if not args.large:
        variants["unbounded"] = never
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
    victims: dict[str, int] = {}
    for r in range(args.rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for name in order:
            wall, cpu, verdict = _attempt(prep, sc, gang, variants[name]())
            times[name].append((wall, cpu))
            plan = verdict.plan
            victims[name] = len(plan.victims) if plan is not None else -1
            proven = plan is not None and plan.optimal
            print(
                f"round {r + 1} {name:9s} wall {wall:7.3f}s cpu {cpu:7.3f}s  {verdict.code.value}, "
                f"{victims[name]} victims, proven cheapest: {proven}"
            )
    figures = []
    for name, ts in times.items():
        walls = [w for w, _ in ts]
        print(
            f"{name:9s} median wall {statistics.median(walls):.3f}s, max {max(walls):.3f}s, "
            f"median cpu {statistics.median(c for _, c in ts):.3f}s"
        )
        figures.append(f"{name}_s={statistics.median(walls):.3f}")
        if name == "deadline":
            figures.append(f"deadline_max_s={max(walls):.3f}")
    figures += [f"victims_{k}={v}" for k, v in victims.items()]
    print(f"summary: pods={running} " + " ".join(figures))


if __name__ == "__main__":
    main()
