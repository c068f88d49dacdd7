"""A long fuzz run: hostile clusters through the webhook and the scheduler.

Each example is a cluster of API-valid, hostile objects (`tests/strategies/objects.py`) plus an
ordinary healthy gang on nodes of its own. The webhook judges every object it registers a
kind for, against a view built from the cluster; the scheduler's state takes every object
and runs one cycle. A failure is any exception, a gang whose attempt the cycle had to
catch (`Code.ERROR`), a review denied without a field, or the ordinary gang left unbound.
Failures are printed with the seed and example that reproduce them (no shrinking: the run
goes on).

    .venv/bin/python hack/fuzz.py [--minutes 10] [--seed N] [--examples-per-seed 20]

Last line: `summary: seed=<n> scenarios=<n> crashes=<n> slowest_ms=<x> failures=<n> reviews=<n>
cycles=<n> worst_review_ms=<x> worst_cycle_ms=<y>`: `scenarios` are the clusters drawn, `crashes`
the exceptions that escaped a review or the cycle plus the gangs whose attempt the cycle had to
catch, `failures` those and the other failures above, `slowest_ms` the slowest review or cycle.
Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402
from hypothesis.errors import HypothesisWarning  # noqa: E402

from controller.placer.cycle import GangTiming, SchedulingCycle  # noqa: E402
from controller.placer.framework import Code  # noqa: E402
from tests.strategies.feed import placer_state  # noqa: E402
from tests.strategies.objects import OrdinaryGang, hostile_clusters, ordinary_gangs  # noqa: E402
from webhooks.admission import object_with_namespace, parse_review  # noqa: E402
from webhooks.rules import ClusterState, registry  # noqa: E402

SERVED = ("topobridge", "koord-scheduler", "volcano")
Obj = dict[str, Any]


class Run:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []
        self.crashes = 0
        self.worst_review = 0.0
        self.worst_cycle = 0.0

    def fail(self, where: str, what: str) -> None:
        self.failures.append(f"{where}: {what}")
        print(f"FAIL {where}: {what}", flush=True)

    def reviews(self, cluster: list[Obj], where: str) -> None:
        state, _ = ClusterState.from_objects(cluster)
        for obj in cluster:
            kind = registry.for_api_version(obj["apiVersion"], obj["kind"])
            if kind is None:
                continue
            body = json.dumps(_review(kind, obj)).encode()
            started = time.perf_counter()
            try:
                decision = kind.rule(object_with_namespace(parse_review(body)), state)
            except Exception:
                self.crashes += 1
                self.fail(
                    where, f"{kind.kind} {obj['metadata']['name'][:60]}: {traceback.format_exc(limit=3)}"
                )
                continue
            self.worst_review = max(self.worst_review, time.perf_counter() - started)
            self.counts["reviews"] += 1
            if any(not e.field or e.field == "<root>" for e in decision.errors):
                self.fail(where, f"{kind.kind} denied without a field: {decision.message[:200]}")

    def cycle(self, cluster: list[Obj], ordinary: OrdinaryGang, where: str) -> None:
        started = time.perf_counter()
        try:
            state, _ = placer_state([*cluster, *ordinary.objects])
            plan = SchedulingCycle(state.view(), served=SERVED, now=0.0, timing=GangTiming()).run()
        except Exception:
            self.crashes += 1
            self.fail(where, f"scheduling cycle: {_crash()}")
            return
        self.worst_cycle = max(self.worst_cycle, time.perf_counter() - started)
        self.counts["cycles"] += 1
        for outcome in plan.outcomes.values():
            if outcome.code is Code.ERROR:  # the cycle caught it; still a bug in reading the input
                self.crashes += 1
                self.fail(where, f"gang {outcome.gang}: {outcome.message[:300]}")
        bound = {pod for b in plan.binds for pod, _ in b.pods}
        if not set(ordinary.pods) <= bound:
            outcome = plan.outcomes.get(ordinary.gang)
            self.fail(
                where,
                f"ordinary gang {ordinary.gang} not bound: {outcome.message if outcome else 'no outcome'}",
            )


def _crash() -> str:
    """The exception being handled, on one line, with the frame that raised it."""
    exc = sys.exc_info()[1]
    assert exc is not None
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = f"{Path(frame.filename).name}:{frame.lineno} {frame.name}"
    return f"{type(exc).__name__} at {where}: {str(exc)[:200]}"


def _review(kind: registry.Kind, obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    request: Obj = {
        "uid": "00000000-0000-4000-8000-000000000001",
        "kind": {"group": kind.group, "version": kind.versions[0], "kind": kind.kind},
        "resource": {"group": kind.group, "version": kind.versions[0], "resource": kind.resource},
        "operation": "CREATE",
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "object": obj,
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def _one_seed(run: Run, seed: int, examples: int, deadline: float) -> None:
    """`examples` clusters drawn from `seed`; raises TimeoutError past `deadline`."""
    drawn = Counter[str]()

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(hostile_clusters(max_depth=1200), ordinary_gangs())
    def one(cluster: list[Obj], ordinary: OrdinaryGang) -> None:
        drawn["n"] += 1
        where = f"seed {seed} example {drawn['n']}"
        run.counts["examples"] += 1
        run.reviews(cluster, where)
        run.cycle(cluster, ordinary, where)
        if time.monotonic() > deadline:
            raise TimeoutError

    one()


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--examples-per-seed", type=int, default=20)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=HypothesisWarning)  # reprs of 200 KiB annotations
    first = args.seed if args.seed is not None else random.randrange(2**32)
    print(f"seed={first}", flush=True)
    deadline = time.monotonic() + args.minutes * 60
    run = Run()
    current = first
    while time.monotonic() < deadline:
        with contextlib.suppress(TimeoutError):
            _one_seed(run, current, args.examples_per_seed, deadline)
        current += 1
    print(
        f"summary: seed={first} seeds={current - first} scenarios={run.counts['examples']} "
        f"crashes={run.crashes} slowest_ms={max(run.worst_review, run.worst_cycle) * 1e3:.1f} "
        f"failures={len(run.failures)} reviews={run.counts['reviews']} cycles={run.counts['cycles']} "
        f"worst_review_ms={run.worst_review * 1e3:.1f} worst_cycle_ms={run.worst_cycle * 1e3:.1f}"
    )
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
