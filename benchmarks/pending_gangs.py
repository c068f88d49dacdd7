"""`simulate` with many small pending gangs, with the cycle's queueing hint and without it.

The scenario (tests/controller/placer/test_queueing_hint.py's `chain_scenario`): 4 nodes of
64 CPUs, a chain of `--chain` pods where pod c<k> needs c<k-1> on its node (required pod
affinity) and has the higher priority, so each round binds one more, and `--stuck` Volcano
gangs of two pods of 100 CPUs that fit nowhere.

Timed region: `simulate(load_scenario(objects))`, in two variants run side by side in
alternating order, `--runs` times each:
* `hinted`: the cycle as it is: a gang left unschedulable waits until something it depends
  on changes (`controller.placer.cycle.Unschedulable`);
* `every-round`: `Unschedulable.holds` always false: every pending gang tried every round.
Both must give the same result (checked). Medians of wall and CPU seconds; rounds in which any
gang was attempted (the last, quiet round attempts none when hinted) and attempts.

    .venv/bin/python -m benchmarks.pending_gangs [--chain 64] [--stuck 500] [--runs 1]

Last line: `summary: chain=<n> stuck=<n> hinted_cpu_s=... hinted_wall_s=... hinted_attempts=...
every_round_cpu_s=... every_round_wall_s=... every_round_attempts=... rounds=... same_result=yes`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "controller" / "placer")]

from test_queueing_hint import chain_scenario  # noqa: E402

from controller.placer.cycle import SchedulingCycle, Unschedulable  # noqa: E402
from controller.placer.scenario import load_scenario, simulate  # noqa: E402


def one(objects: list[dict[str, Any]], *, hinted: bool) -> tuple[dict[str, Any], float, float, int, int]:
    """(the result's contract, wall s, CPU s, rounds, attempts)."""
    attempts: Counter[float] = Counter()
    real_attempt, real_holds = SchedulingCycle.attempt, Unschedulable.holds

    def attempt(self: SchedulingCycle, gang: Any) -> Any:
        attempts[self.now] += 1
        return real_attempt(self, gang)

    SchedulingCycle.attempt = attempt  # type: ignore[method-assign]
    if not hinted:
        Unschedulable.holds = lambda *_: False  # type: ignore[method-assign]
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        result = simulate(load_scenario(objects))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        SchedulingCycle.attempt = real_attempt  # type: ignore[method-assign]
        Unschedulable.holds = real_holds  # type: ignore[method-assign]
    return result.contract(), wall, cpu, len(attempts), sum(attempts.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--chain", type=int, default=64)
    parser.add_argument("--stuck", type=int, default=500)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    objects = chain_scenario(args.chain, args.stuck)
    variants = {"hinted": True, "every-round": False}
    runs: dict[str, list[tuple[dict[str, Any], float, float, int, int]]] = {k: [] for k in variants}
    order = list(variants)
    for run in range(args.runs):
        for name in order if run % 2 == 0 else reversed(order):
            runs[name].append(one(objects, hinted=variants[name]))
    figures: dict[str, float] = {}
    for name, samples in runs.items():
        wall = statistics.median(s[1] for s in samples)
        cpu = statistics.median(s[2] for s in samples)
        rounds, attempts = samples[0][3], samples[0][4]
        key = name.replace("-", "_")
        figures |= {f"{key}_cpu_s": cpu, f"{key}_wall_s": wall, f"{key}_attempts": attempts}
        print(f"{name:>11}: wall {wall:6.2f} s  cpu {cpu:6.2f} s  rounds {rounds}  attempts {attempts}")
    same = all(s[0] == runs["hinted"][0][0] for samples in runs.values() for s in samples)
    print(
        f"summary: chain={args.chain} stuck={args.stuck} "
        + " ".join(f"{k}={v:.2f}" if k.endswith("_s") else f"{k}={v:.0f}" for k, v in figures.items())
        + f" rounds={runs['hinted'][0][3]} same_result={'yes' if same else 'no'}"
    )


if __name__ == "__main__":
    main()
