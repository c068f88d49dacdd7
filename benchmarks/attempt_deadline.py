"""What the slowest known scheduling attempt costs within its step budget, beside the unbounded
search, and how good the plan the budget cuts short is.

The case (`tests/controller/placer/worst_cases.py`): a gang of three shapes, hard-held to one
block, over blocks of nodes full of lower-priority pods of mixed sizes; the exact preemption
search must try placements of several shapes at every step. Sizes: the default (4 blocks of 4
nodes, 10 pods each: 160 running pods) and `--large` (16 blocks of 8 nodes, 20 pods each: 2,560).

Timed region: one `engine.schedule()` call for the gang on a fresh clone of the snapshot
(prefilter, filter, select, and the whole preemption search), as `cycle.attempt` makes it;
scenario loading and the snapshot are built once, untimed. Two variants, alternating in each
round: `budget` (the default `--attempt-budget` and its default wall-clock guard, as `run` and
`simulate` give every attempt) and `unbounded` (no step limit, no guard: the search runs until
it proves its plan the cheapest; skipped with --large, where it runs for hours). Per variant:
steps spent, wall and CPU seconds (median and max), the plan (victims, whether proven the
cheapest) and whether the guard fired (it must not: the plan would then depend on the load).

    .venv/bin/python benchmarks/attempt_deadline.py [--rounds 2] [--large] [--steps N]

Last line: `summary: pods=... budget_steps=... budget_spent=... budget_s=... budget_max_s=...
budget_cpu_s=... unbounded_spent=... unbounded_s=... unbounded_cpu_s=... victims_budget=...
victims_unbounded=... guard_fired=...`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "controller" / "placer")]

from worst_cases import GANG, worst_attempt  # noqa: E402

from controller.placer.attempt_budget import DEFAULT_ATTEMPT_STEPS, AttemptBudget, unbounded  # noqa: E402
from controller.placer.budgets import budgets_from  # noqa: E402
from controller.placer.engine import schedule  # noqa: E402
from controller.placer.scenario import load_scenario, prepare  # noqa: E402


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    spent: float
    victims: int
    proven: bool
    guarded: bool


def _attempt(prep: Any, sc: Any, gang: Any, budget: AttemptBudget) -> tuple[Run, str]:
    snap = prep.snapshot.clone()
    budgets = budgets_from(sc.pdbs, snap)
    wall, cpu = time.perf_counter(), time.process_time()
    verdict = schedule(gang, snap, budgets=budgets, attempt_budget=budget)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    plan = verdict.plan
    victims = len(plan.victims) if plan is not None else -1
    proven = plan is not None and plan.optimal
    return Run(wall, cpu, budget.spent, victims, proven, budget.guarded), verdict.code.value


def main() -> None:
    ap = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--steps", type=int, default=DEFAULT_ATTEMPT_STEPS, help="the budget variant's steps")
    args = ap.parse_args()
    size = {"blocks": 16, "nodes_per_block": 8, "pods_per_node": 20} if args.large else {}
    sc = load_scenario(worst_attempt(**size))
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == f"default/{GANG}")
    running = sum(1 for p in sc.pods if p.spec.node_name)
    print(f"case: {len(sc.nodes)} nodes, {running} running pods, gang of {len(gang.pods)} in 3 shapes")
    variants: dict[str, Callable[[], AttemptBudget]] = {"budget": lambda: AttemptBudget(args.steps)}
    if not args.large:
        variants["unbounded"] = unbounded
    runs: dict[str, list[Run]] = {k: [] for k in variants}
    for r in range(args.rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for name in order:
            run, code = _attempt(prep, sc, gang, variants[name]())
            runs[name].append(run)
            print(
                f"round {r + 1} {name:9s} steps {run.spent:9.0f} wall {run.wall:8.3f}s cpu {run.cpu:8.3f}s  "
                f"{code}, {run.victims} victims, proven cheapest: {run.proven}, guard fired: {run.guarded}"
            )
    print(_summary(runs, running, args.steps))


def _summary(runs: dict[str, list[Run]], running: int, steps: int) -> str:
    figures = [f"pods={running}", f"budget_steps={steps}"]
    for name, rs in runs.items():
        walls = [r.wall for r in rs]
        cpus = [r.cpu for r in rs]
        print(
            f"{name:9s} steps {rs[-1].spent:.0f}, median wall {statistics.median(walls):.3f}s, "
            f"max {max(walls):.3f}s, median cpu {statistics.median(cpus):.3f}s, {rs[-1].victims} victims"
        )
        figures.append(f"{name}_spent={rs[-1].spent:.0f}")
        figures.append(f"{name}_s={statistics.median(walls):.3f}")
        if name == "budget":
            figures.append(f"budget_max_s={max(walls):.3f}")
        figures.append(f"{name}_cpu_s={statistics.median(cpus):.3f}")
    figures += [f"victims_{k}={rs[-1].victims}" for k, rs in runs.items()]
    figures.append(f"guard_fired={sum(r.guarded for rs in runs.values() for r in rs)}")
    return "summary: " + " ".join(figures)


if __name__ == "__main__":
    main()
