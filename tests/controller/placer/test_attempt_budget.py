"""The attempt budget (`controller.placer.attempt_budget`): a preemption search stops at a step
count, never at a time, so the plan is the same whatever the clock says; the wall-clock guard
stops a search only far past that, and says so.

The case is the slowest attempt known (`worst_cases.worst_attempt`: a gang of three shapes over
four blocks full of lower-priority pods), whose unbounded search takes about a minute of CPU and
evicts 5 pods (`benchmarks/attempt_deadline.py` prints both)."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from worst_cases import GANG, worst_attempt

from controller.placer.attempt_budget import DEFAULT_ATTEMPT_STEPS, AttemptBudget
from controller.placer.budgets import budgets_from
from controller.placer.cycle import CycleOptions, GangTiming, SchedulingCycle
from controller.placer.engine import Verdict, schedule
from controller.placer.explain import explain
from controller.placer.framework import Code
from controller.placer.plugins.default_preemption import NO_VICTIMS_IN_TIME
from controller.placer.scenario import cluster_state, load_scenario, prepare


def _worst() -> tuple[Any, Any, Any]:
    sc = load_scenario(worst_attempt())
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == f"default/{GANG}")
    return sc, prep, gang


def _attempt(budget: AttemptBudget) -> Verdict:
    sc, prep, gang = _worst()
    return schedule(gang, prep.snapshot, budgets=budgets_from(sc.pdbs, prep.snapshot), attempt_budget=budget)


def _ticking(seconds_per_read: float) -> Callable[[], float]:
    ticks = itertools.count()
    return lambda: next(ticks) * seconds_per_read


@dataclass(frozen=True)
class Reference:
    """The default budget's attempt with no guard at all."""

    spent: float
    verdict: Verdict


@pytest.fixture(scope="module")
def reference() -> Reference:
    budget = AttemptBudget(DEFAULT_ATTEMPT_STEPS, math.inf)
    verdict = _attempt(budget)
    return Reference(budget.spent, verdict)


@pytest.mark.parametrize(
    "clock",
    [
        pytest.param(lambda: 0.0, id="a-clock-that-stands-still"),
        pytest.param(time.monotonic, id="the-real-clock"),
        pytest.param(_ticking(1e-4), id="a-slow-machine"),
    ],
)
def test_the_budget_cuts_the_search_at_the_same_step_whatever_the_clock(
    clock: Callable[[], float], reference: Reference
) -> None:
    """Same steps, same plan: where the search stops depends on its input alone (the default
    guard is far above what these steps take, even on the slow machine)."""
    budget = AttemptBudget(DEFAULT_ATTEMPT_STEPS, clock=clock)
    verdict = _attempt(budget)
    assert budget.cut and not budget.guarded
    assert budget.spent == reference.spent
    assert verdict.plan is not None and reference.verdict.plan is not None
    assert verdict.plan.victims == reference.verdict.plan.victims
    assert verdict.plan.nominated == reference.verdict.plan.nominated
    assert verdict.message == reference.verdict.message


def test_a_plan_the_budget_cuts_short_is_valid_and_as_lean_as_the_optimum(reference: Reference) -> None:
    """The default budget stops the search before it proves anything, yet every place's greedy
    incumbent came first: the plan evicts the 5 pods the unbounded search settles on (it evicted
    11 when the first place's search took the whole attempt)."""
    assert reference.verdict.code is Code.WAITING_FOR_VICTIMS
    plan = reference.verdict.plan
    assert plan is not None and not plan.optimal
    assert len(plan.victims) == 5
    assert all(v.pod.startswith("default/low-") for v in plan.victims)
    assert plan.domain.startswith("BlockLayer/block-")
    block = plan.domain.rsplit("-", 1)[1]
    assert len(plan.nominated) == 6 and all(node.startswith(f"n{block}-") for _, node in plan.nominated)


def test_a_budget_spent_before_any_plan_says_so() -> None:
    budget = AttemptBudget(1, math.inf)
    verdict = _attempt(budget)
    assert budget.cut and budget.spent == 0
    assert verdict.code is Code.UNSCHEDULABLE
    assert verdict.message.endswith(f"preemption: {NO_VICTIMS_IN_TIME}.")


def test_the_guard_stops_the_search_and_the_verdict_says_so(reference: Reference) -> None:
    """A clock that moves a second per read: the 2 s guard fires at the third payment, long
    before the steps run out; the search stops there and the verdict names the guard."""
    budget = AttemptBudget(DEFAULT_ATTEMPT_STEPS, 2.0, clock=_ticking(1.0))
    verdict = _attempt(budget)
    assert budget.guarded and not budget.cut and budget.spent < reference.spent
    assert "wall-clock guard (2s) stopped the search" in verdict.message
    assert "depends on the machine's load" in verdict.message


def test_the_cycle_reports_the_guard_on_the_gangs_outcome() -> None:
    """The cycle gives the runner what it counts, logs and records as an Event."""
    sc, _, _ = _worst()
    options = CycleOptions(attempt_guard=2.0, clock=_ticking(1.0))
    cycle = SchedulingCycle(
        cluster_state(sc).view(), served=("topobridge",), now=0.0, timing=GangTiming(), options=options
    )
    plan = cycle.run()
    outcome = plan.outcomes[f"koordinator:default/{GANG}"]
    assert outcome.guarded.startswith("the attempt's wall-clock guard (2s) stopped the search after ")
    assert "wall-clock guard" in outcome.message


def test_the_cycle_gives_each_attempt_a_fresh_budget() -> None:
    options = CycleOptions(attempt_steps=10)
    first = options.budget()
    assert first.pay(10) and not first.pay(1) and first.cut
    second = options.budget()
    assert second.spent == 0 and second.pay(10)


def test_explain_spends_the_attempts_budget_and_says_what_the_cycle_says(reference: Reference) -> None:
    """`explain` runs the cycle's attempt with the same default budget: the same plan, found
    in the same steps, where it once searched without limit (minutes on this case)."""
    sc, prep, gang = _worst()
    budget = AttemptBudget(DEFAULT_ATTEMPT_STEPS, math.inf)
    found = explain(gang, prep.snapshot, budgets_from(sc.pdbs, prep.snapshot), budget)
    assert budget.spent == reference.spent
    assert found.preemption is not None and reference.verdict.plan is not None
    assert [v.pod for v in found.preemption.victims] == [v.pod for v in reference.verdict.plan.victims]
    # The fit error as it stands before the plan's victims are evicted (the clause after it
    # speaks of the state once they terminate).
    assert found.message == f"0/{prep.index.n_nodes} nodes are available: {reference.verdict.reason}."
    assert reference.verdict.message.startswith(found.message)
