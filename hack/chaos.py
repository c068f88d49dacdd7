"""The long chaos run: `tests/invariants/chaos.py` for 10+ minutes, with the invariant watcher on.

Usage: python hack/chaos.py [--seed N] [--minutes 12] [--max-cycles N] [--disrupt-every 40] [--keep]

It brings its own private control plane (etcd, kube-apiserver, kube-controller-manager from
`~/.cache/topobridge/k8s-v1.20.2/`, built by `bash hack/install-control-plane.sh`) and two
`topobridge run` replicas with the default lease (15 s duration, 10 s renew deadline, 2 s
retry). Progress every 100 cycles; the violations, if any, each on a line; the last line is

    summary: seed=<n> cycles=<n> faults=<n> <fault kind>=<n>... gangs=<n> violations=<n>

where `cycles` counts chaos actions (one per cycle, module doc of tests/invariants/chaos.py),
`faults` the injected faults (per-request bind and eviction faults from the replicas' logs,
plus API-server stops and restarts and replica kills), `gangs` the gangs seen bound to at least
minMember, and `violations` what the watcher recorded. Exit status 1 when any violation was
recorded (the work directory with every log is kept then).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "invariants"))

from chaos import ChaosOptions, ChaosReport, ChaosRun  # noqa: E402

_shown = 0


def progress(report: ChaosReport, watcher: Any) -> None:
    global _shown
    for v in watcher.violations[_shown:]:
        print(f"violation (cycle ~{report.cycles}): {v}", flush=True)
    _shown = len(watcher.violations)
    print(
        f"cycles={report.cycles} gangs_created={report.gangs_created} placed={len(watcher.placed)} "
        f"bindings={watcher.counts['bindings']} violations={len(watcher.violations)}",
        flush=True,
    )


async def _run(run: ChaosRun) -> ChaosReport:
    # SIGINT/SIGTERM end the cycles early; the quiet phase, the verdict and the cleanup still run.
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, run.stopping.set)
    return await run.run(progress=progress)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=None, help="default: random (printed)")
    p.add_argument("--minutes", type=float, default=12.0, help="minutes of cycles (default 12)")
    p.add_argument("--max-cycles", type=int, default=1_000_000)
    p.add_argument("--disrupt-every", type=float, default=40.0, help="mean seconds between disruptions")
    p.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"chaos: seed={seed} minutes={args.minutes}", flush=True)
    options = ChaosOptions(
        seed=seed,
        duration=args.minutes * 60,
        max_cycles=args.max_cycles,
        disrupt_every=args.disrupt_every,
        keep=args.keep,
    )
    report = asyncio.run(_run(ChaosRun(options)))
    for line in report.violations:
        print(f"violation: {line}")
    print(f"takeovers (s): {[round(t, 1) for t in report.takeovers]}")
    print(f"actions: {dict(sorted(report.actions.items()))}")
    if report.violations or options.keep:
        print(f"logs: {report.work_dir}")
    print(report.summary(), flush=True)
    return 1 if report.violations else 0


if __name__ == "__main__":
    sys.exit(main())
