"""The real scheduling cycle against the brute-force oracle, on wider random clusters.

Each example (`placer_wide_cases`) is loaded into a `ClusterState` and run through one
`SchedulingCycle`: its queue must be kube's order, and each gang's verdict, taken on the
snapshot as the earlier gangs of the cycle left it, is checked against the oracle asked on the
same state (`oracle_checks.compare`). The oracle's state then follows the cycle's reservation:
a placed gang's pods are bound; a preemption's victims are terminating (no longer victims,
still holding room, spending their budgets) and its pods nominated (holding room against the
gangs after it). Terminating pods, other schedulers' nominations, gangs an earlier cycle
nominated (they wait while a lower-priority victim terminates on their nodes, then take those
nodes if they still fit), members already bound (a hard constraint must then hold them too),
and budgets from minAvailable / maxUnavailable as numbers and percentages are all in the cases.

Two sets of examples run every time: the fixed set (`derandomize`), and the set one seed
draws: 2979530757, the seed that found the cycle refusing nodes short of a GPU its pods do
not ask for, unless TOPOBRIDGE_ORACLE_SEED=<seed> names another (`hack/explore.py` tries
fresh ones and prints that line for each failure; `tests/replay.py`). Disagreements found on
other seeds are the explicit cases in `FOUND`. Each run prints one `figures:` line, and asserts
those counts, so a run that shrank cannot pass quietly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from oracle import (
    OracleBudget,
    OracleCase,
    OracleNomination,
    OraclePod,
    fits_on,
    nominated_to,
    waits_for_victims,
)
from oracle_checks import check_assignment, compare
from placer_wide_cases import SERVED, PendingGang, WideCase, WideGang, WideNode, WidePod
from placer_wide_strategy import wide_cases
from replay import ORACLE, seed_or

from controller.placer.cycle import GangTiming, SchedulingCycle
from controller.placer.engine import Verdict, demand_of, schedule
from controller.placer.framework import Code
from controller.placer.scenario import cluster_state, load_scenario

SETTINGS = settings(
    max_examples=600,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
SEED = seed_or(ORACLE, 2979530757)
"""The seeded run's seed (see the module docstring)."""


@dataclass
class OracleState:
    """The oracle's picture of the cluster as the cycle's reservations so far leave it."""

    case: WideCase
    bound: list[OraclePod]
    nominations: list[OracleNomination]
    budgets: list[OracleBudget]
    spent: set[str] = field(default_factory=set)
    """Apps whose budgets this cycle's plans have taken disruptions from."""

    def ask(self, pg: PendingGang) -> OracleCase:
        return OracleCase(
            nodes=self.case.oracle_nodes(),
            domains=self.case.oracle_domains(),
            bound=self.bound,
            gang=pg.pods,
            mode=pg.mode,
            tier=pg.tier,
            priority=pg.priority,
            gang_min=self.case.gang_min(),
            budgets=self.budgets,
            anchors=pg.anchors,
            node_domains=pg.node_domains,
            key=pg.key,
            nominations=self.nominations,
        )

    def placed(self, pg: PendingGang, pods: Sequence[tuple[str, str]]) -> None:
        """The gang's pods are bound where the engine put them."""
        req = {p.key: p.req for p in pg.pods}
        self.bound = [*self.bound, *(OraclePod(k, req[k], pg.priority, n, pg.key) for k, n in pods)]
        self.nominations = [n for n in self.nominations if n.gang != pg.key]

    def preempted(
        self, pg: PendingGang, victims: frozenset[str], nominated: Sequence[tuple[str, str]]
    ) -> dict[str, int]:
        """Victims terminate (a reported budget loses what they cover), the gang's pods are
        nominated. Returns the victims each budget's app covers."""
        covered = {b.selector["app"]: 0 for b in self.budgets}
        for p in self.bound:
            if p.key in victims and p.labels.get("app") in covered:
                covered[p.labels["app"]] += 1
        self.budgets = [
            b if b.allowed is None else replace(b, allowed=max(0, b.allowed - covered[b.selector["app"]]))
            for b in self.budgets
        ]
        self.bound = [replace(p, terminating=True) if p.key in victims else p for p in self.bound]
        req = {p.key: p.req for p in pg.pods}
        self.nominations = [
            *(n for n in self.nominations if n.gang != pg.key),
            *(OracleNomination(n, req[k], pg.priority, pg.key, k) for k, n in nominated),
        ]
        return covered


def _nominated(oc: OracleCase, verdict: Verdict, stats: Counter[str]) -> bool:
    """A gang an earlier cycle nominated: it waits while a lower-priority victim still
    terminates on its nodes, then takes its nominated nodes when they still hold it (True:
    checked here). Otherwise it is scheduled as any gang (False)."""
    if waits_for_victims(oc):
        assert (
            verdict.code is Code.WAITING_FOR_VICTIMS and verdict.plan is None and verdict.placement is None
        ), verdict.message
        stats["nominated gangs waiting for victims"] += 1
        return True
    nominated = nominated_to(oc)
    if nominated and fits_on(oc, nominated):
        assert verdict.code is Code.SUCCESS and verdict.placement is not None, verdict.message
        assert dict(verdict.placement.pods) == nominated
        check_assignment(oc, frozenset(), nominated)
        stats["placed on nominated nodes"] += 1
        return True
    stats["nominated gangs scheduled afresh"] += bool(nominated)
    return False


def _run(case: WideCase, stats: Counter[str]) -> None:
    view = cluster_state(load_scenario(case.objects())).view()
    cycle = SchedulingCycle(view, served=SERVED, now=0.0, timing=GangTiming(), assembly_grace=0.0)
    queue = cycle.queue()
    assert [g.key for g in queue] == case.queue_order()
    state = OracleState(case, case.oracle_bound(), case.oracle_nominations(), case.oracle_budgets())
    asked = case.pending_gangs()
    stats["cases"] += 1
    stats.update(k for k, v in case.figures().items() if v)
    for turn, gang in enumerate(queue):
        pg = asked[gang.key]
        stats["gangs compared"] += 1
        stats["gangs after an earlier one reserved"] += turn > 0 and bool(
            cycle.plan.binds or cycle.plan.preemptions
        )
        stats["gangs with members bound"] += bool(pg.anchors)
        stats["nominations holding room"] += any(
            n.priority >= pg.priority for n in state.nominations if n.gang != pg.key
        )
        # The engine's verdict on the cycle's snapshot as it stands, then the cycle's own attempt.
        verdict = schedule(cycle.options.shape(gang), cycle.snapshot, budgets=cycle.budgets)
        outcome = cycle.attempt(gang)
        assert outcome.code is verdict.code or (
            verdict.plan is not None and outcome.code is Code.WAITING_FOR_VICTIMS
        )
        oc = state.ask(pg)
        if _nominated(oc, verdict, stats):
            assert verdict.placement is None or cycle.plan.binds[-1].pods == verdict.placement.pods
            if verdict.placement is not None:
                state.placed(pg, verdict.placement.pods)
            continue
        exact = demand_of(gang, view.snapshot).exact
        got = compare(oc, verdict, stats, exact=exact, never=pg.never, exact_shapes=True)
        if got.outcome == "placed":
            assert verdict.placement is not None and cycle.plan.binds[-1].pods == verdict.placement.pods
            stats["placed with members bound"] += bool(pg.anchors)
            state.placed(pg, verdict.placement.pods)
        elif got.outcome == "preempted":
            assert verdict.plan is not None and cycle.plan.preemptions[-1].plan == verdict.plan
            stats["plans with >= 3 victims"] += len(got.victims) >= 3
            stats["plans with terminating pods around"] += any(p.terminating for p in state.bound)
            stats["plans breaking a budget"] += verdict.plan.cost[0] > 0
            stats["plans after an earlier plan"] += len(cycle.plan.preemptions) > 1
            covered = state.preempted(pg, got.victims, verdict.plan.nominated)
            stats["plans spending a budget"] += any(covered.values())
            stats["plans spending a budget spent earlier"] += any(covered[a] for a in state.spent)
            state.spent |= {a for a, n in covered.items() if n}


FIGURES = {
    "cases": "cases",
    "gangs": "gangs compared",
    "placed": "placed",
    "preemption_plans": "preempted",
    "plans_3plus_victims": "plans with >= 3 victims",
    "bound_member_gangs": "gangs with members bound",
    "placed_beside_bound": "placed with members bound",
    "multi_gang_cases": ">= 2 pending gangs",
    "after_earlier_reservation": "gangs after an earlier one reserved",
    "plans_after_earlier_plan": "plans after an earlier plan",
    "nominations_holding_room": "nominations holding room",
    "nominated_gangs_waiting": "nominated gangs waiting for victims",
    "placed_on_nominated_nodes": "placed on nominated nodes",
    "nominated_gangs_afresh": "nominated gangs scheduled afresh",
    "terminating_cases": "terminating pods",
    "plans_beside_terminating": "plans with terminating pods around",
    "four_level_cases": "4-level trees",
    "over_8_nodes": "> 8 nodes",
    "percentage_pdb_cases": "percentage PDBs",
    "min_available_cases": "minAvailable PDBs",
    "max_unavailable_cases": "maxUnavailable PDBs",
    "plans_spending_budgets": "plans spending a budget",
    "plans_on_a_budget_spent_this_cycle": "plans spending a budget spent earlier",
    "plans_breaking_budgets": "plans breaking a budget",
}
"""The `figures:` line: its names -> the counts they print."""
COMMON = (
    "preempted",
    "placed",
    "gangs with members bound",
    "placed with members bound",
    ">= 2 pending gangs",
    "gangs after an earlier one reserved",
    "nominations holding room",
    "terminating pods",
    "plans with terminating pods around",
    "4-level trees",
    "> 8 nodes",
    "percentage PDBs",
    "minAvailable PDBs",
    "maxUnavailable PDBs",
    "plans spending a budget",
)
"""Counts that show the wider cases ran: tens to hundreds on every seed tried."""
RARER = (
    "nominated gangs waiting for victims",  # 9 to 93 on 39 fresh seeds of 41; 0 and 1 on two
    "placed on nominated nodes",
    "plans after an earlier plan",
    "plans spending a budget spent earlier",
    "plans with >= 3 victims",
)
"""Tens on the fixed set, none on some seeds: asserted on the fixed set only."""


def _report(stats: Counter[str], cases: int, *, floor: int, keys: tuple[str, ...]) -> None:
    """Print the figures line, then assert every count in `keys` reached `floor`."""
    print("figures: " + " ".join(f"{name}={stats[key]}" for name, key in FIGURES.items()))
    assert stats["cases"] >= cases
    for key in keys:
        assert stats[key] >= floor, (key, stats[key])


def test_cycle_agrees_with_oracle_on_wide_clusters() -> None:
    stats: Counter[str] = Counter()

    @SETTINGS
    @given(case=st.one_of(wide_cases(), wide_cases(crowded=True), wide_cases(crowded=True)))
    def check(case: WideCase) -> None:
        _run(case, stats)

    check()
    print("cycle vs oracle (fixed):", dict(sorted(stats.items())))
    _report(stats, 600, floor=15, keys=COMMON + RARER)


def test_cycle_agrees_with_oracle_on_a_seed() -> None:
    """The examples `SEED` draws; TOPOBRIDGE_ORACLE_SEED=<seed> draws another seed's."""
    stats: Counter[str] = Counter()
    print(f"oracle seed: {ORACLE}={SEED}")

    @seed(SEED)
    @settings(SETTINGS, derandomize=False, max_examples=300)
    @given(case=st.one_of(wide_cases(), wide_cases(crowded=True), wide_cases(crowded=True)))
    def check(case: WideCase) -> None:
        _run(case, stats)

    check()
    print(f"cycle vs oracle (seed {SEED}):", dict(sorted(stats.items())))
    _report(stats, 300, floor=1, keys=COMMON)


def _one_gpu_node(cpu: int, running: list[WidePod]) -> WideCase:
    """One node with a GPU a higher-priority nomination holds while its victim terminates (the
    GPU is overcommitted until then), and a pending gang of a CPU-only leader and worker."""
    gpu_victim = WidePod("run-0", 500, 1, 1, priority=0, node="node-0", terminating=True)
    holder = WidePod("nom-0", 500, 1, 1, priority=1000, nominated="node-0")
    gang = WideGang(
        name="gang-0",
        dialect="volcano",
        pods=[WidePod("gang-0-0", 250, 1, 0, 100), WidePod("gang-0-1", 500, 1, 0, 100)],
        priority=100,
        never=False,
        mode=None,
        tier=None,
        created=0,
    )
    return WideCase(
        depth=0,
        render="cnt",
        nodes=[WideNode("node-0", (0, 0, 0), cpu=cpu, mem=8, gpu=1, pods=110, zone="a")],
        running=[gpu_victim, *running, holder],
        bound_gangs={},
        pdbs=[],
        gangs=[gang],
    )


FOUND = {
    # TOPOBRIDGE_ORACLE_SEED=2979530757, reduced: the gang fits on what it asks for (CPU,
    # memory, pods); the GPU it does not ask for is overcommitted by the nomination.
    "placed-beside-an-overcommitted-gpu": _one_gpu_node(4, []),
    # The same seed, reduced: evicting run-1 frees the CPU the gang needs.
    "preempted-beside-an-overcommitted-gpu": _one_gpu_node(
        2, [WidePod("run-1", 1000, 1, 0, priority=0, node="node-0")]
    ),
}
"""Disagreements fresh seeds found, reduced by hand to the objects that decide them."""


@pytest.mark.parametrize("case", FOUND.values(), ids=FOUND.keys())
def test_cycle_agrees_with_oracle_on_found_cases(case: WideCase) -> None:
    stats: Counter[str] = Counter()
    _run(case, stats)
    assert stats["placed"] + stats["preempted"] == 1, stats
