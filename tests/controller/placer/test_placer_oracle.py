"""The engine against the brute-force oracle on random small clusters.

Each example builds Kubernetes objects, runs them through the real scenario loader, gang
discovery and engine, and asks the oracle the same question. Asserted on every example:
feasibility agrees (and the engine settles on the lowest feasible tier), placements respect
capacity, filters and the hard constraint, no gang is placed partially, and when the gang does
not fit the engine's preemption plan exists exactly when one does and is as cheap as the
cheapest (PDB violations, highest victim priority, victim count), with a valid victim set.
The counts are asserted at the end, so a shrunken run cannot pass quietly. Every example is
fixed: the sets `derandomize` draws, and one set drawn from a fixed seed unless
TOPOBRIDGE_ORACLE_SEED=<seed> names another (`hack/explore.py` tries fresh ones; `tests/replay.py`).
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from oracle import cheapest_preemption, cost, valid_victims
from oracle_checks import check_assignment, compare
from placer_cases import Case, cases
from replay import ORACLE, seed_or

from controller.placer import preempt
from controller.placer.budgets import budgets_from
from controller.placer.engine import demand_of, schedule
from controller.placer.framework import Code

SETTINGS = settings(
    max_examples=1000,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _run(case: Case, stats: Counter[str], *, exact_shapes: bool) -> None:
    sc, prep, gang = case.prepared()
    demand = demand_of(gang, prep.snapshot)
    verdict = schedule(gang, prep.snapshot, budgets=budgets_from(sc.pdbs, prep.snapshot))
    stats["examples"] += 1
    stats[f"kind:{demand.kind}"] += 1
    compare(case.oracle(), verdict, stats, exact=demand.exact, never=case.never, exact_shapes=exact_shapes)


def test_engine_agrees_with_oracle_on_random_clusters() -> None:
    stats: Counter[str] = Counter()

    @SETTINGS
    @given(case=cases())
    def check(case: Case) -> None:
        _run(case, stats, exact_shapes=True)

    check()
    print("placement/preemption vs oracle:", dict(sorted(stats.items())))
    assert stats["examples"] >= 1000
    assert stats["placed"] >= 200 and stats["preempted"] >= 40 and stats["not placed"] >= 100


GATE_SEED = 1913
SEED = seed_or(ORACLE, GATE_SEED)
"""The seeded run's seed (see the module docstring)."""


def test_engine_agrees_with_oracle_on_a_seed() -> None:
    """The examples `SEED` draws from crowded clusters, for gangs of any priority;
    TOPOBRIDGE_ORACLE_SEED=<seed> draws another seed's."""
    stats: Counter[str] = Counter()
    print(f"oracle seed: {ORACLE}={SEED}")

    @seed(SEED)
    @settings(SETTINGS, derandomize=False, max_examples=300)
    @given(case=cases(crowded=True), high=st.booleans())
    def check(case: Case, high: bool) -> None:
        if high:
            case.priority, case.never = 5000, False
        _run(case, stats, exact_shapes=True)

    check()
    print(f"seed {SEED} vs oracle:", dict(sorted(stats.items())))
    many = sum(v for k, v in stats.items() if k.startswith("victims:") and int(k.split(":")[1]) >= 3)
    print(f"figures: preemption plans compared={stats['preempted']}, with >= 3 victims={many}")
    assert stats["examples"] >= 300
    # The gate's draw is known to cover preemption; another seed's may draw fewer plans, which is
    # no defect (every example it drew was still compared with the oracle above).
    if SEED == GATE_SEED:
        assert stats["preempted"] >= 20


def test_preemption_agrees_with_oracle_on_crowded_clusters() -> None:
    """Busy clusters and high-priority gangs: most examples exercise the preemptor."""
    stats: Counter[str] = Counter()

    @SETTINGS
    @given(case=cases(crowded=True))
    def check(case: Case) -> None:
        case.priority = 5000
        case.never = False
        _run(case, stats, exact_shapes=True)

    check()
    print("crowded preemption vs oracle:", dict(sorted(stats.items())))
    assert stats["examples"] >= 1000
    assert stats["preempted"] >= 150


def test_mixed_shapes_are_sound() -> None:
    """Three or more shapes are placed greedily: never wrong, and rarely short of the oracle."""
    stats: Counter[str] = Counter()

    @settings(SETTINGS, max_examples=300)
    @given(case=cases(shapes=("mixed",)))
    def check(case: Case) -> None:
        _run(case, stats, exact_shapes=False)

    check()
    print("mixed shapes vs oracle:", dict(sorted(stats.items())))
    assert stats["examples"] >= 300


def test_big_place_heuristic_is_valid_and_counted_against_the_optimum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The vectorised heuristic big places use, forced onto small ones: its plans are always
    valid and exist exactly when a plan exists; how often it also finds the cheapest is counted
    (it claims no optimality: `optimal` is False)."""
    monkeypatch.setattr(preempt, "EXACT_UNITS", 0)
    stats: Counter[str] = Counter()

    @settings(SETTINGS, max_examples=600)
    @given(case=cases(crowded=True, shapes=("uniform",)))
    def check(case: Case) -> None:
        case.priority = 5000
        case.never = False
        sc, prep, gang = case.prepared()
        verdict = schedule(gang, prep.snapshot, budgets=budgets_from(sc.pdbs, prep.snapshot))
        stats["examples"] += 1
        if verdict.code is Code.SUCCESS:
            return
        oc = case.oracle()
        best = cheapest_preemption(oc)
        plan = verdict.plan
        assert (plan is None) == (best is None), (verdict.message, best)
        if plan is None or best is None:
            return
        victims = frozenset(v.pod for v in plan.victims)
        assert valid_victims(oc, victims)
        assert cost(oc, victims) == plan.cost
        check_assignment(oc, victims, dict(plan.nominated))
        assert plan.cost >= best[0]
        stats["preempted"] += 1
        stats["cheapest" if plan.cost == best[0] else "dearer"] += 1

    check()
    print("big-place heuristic vs oracle:", dict(sorted(stats.items())))
    assert stats["examples"] >= 600 and stats["preempted"] >= 100
