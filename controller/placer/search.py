"""Exact victim search for one candidate place: depth-first branch and bound over eviction units.

Units are what is evicted together: a whole gang (a lone pod is a gang of one), or one member of
a gang while the gang keeps its minMember. The cost of a set is lexicographic (PodDisruptionBudget
violations, highest victim priority, victim pods). The search starts from a greedy incumbent
(the lowest priority threshold whose pods, all gone, let the gang fit; then reprieve units while
it still fits, kube-scheduler's way) and prunes on: cost so far (monotone in every component);
a relaxation bound (pods still needed for the place's free capacity, on nodes some class may use,
to reach the gang's total request); and feasibility with every undecided unit gone. A node budget
per place and the attempt's step budget (`attempt_budget`: every fit check and every node is
paid for, at a price that follows its cost) bound the work; `Found.exhausted` says when either
ran out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from controller.placer.attempt_budget import NODE_STEPS, AttemptBudget, unbounded
from controller.placer.demand import GangDemand
from controller.placer.offer import fits_rows
from controller.placer.select import Where, place_in
from controller.placer.snapshot import I64, Bool, ClusterIndex, PodArrays, Snapshot
from translations.topology import NaturalKey, natural_key

Cost = tuple[int, int, int]
"""(PDB violations, highest victim priority, victim pods): smaller is better."""
NO_VICTIM = -(2**62)
"""The highest priority of no victim at all: below every real one."""
SEARCH_BUDGET = 20_000
"""Branch-and-bound nodes per place before settling for the best plan found."""
MIXED_STEPS_PER_POD = 3
"""Steps one member costs in a fit check that places the gang member by member (a shape the
vectorised checks do not cover): measured against the uniform shape's incremental check."""


def violations(hits: Mapping[int, int], allowed: Sequence[int]) -> int:
    """PodDisruptionBudget violations: per budget (index into `allowed`), the victims it covers
    (`hits`) past the disruptions it allows."""
    return sum(max(0, c - allowed[b]) for b, c in hits.items())


@dataclass
class Unit:
    """Pods that are evicted together: a whole gang, or one member of a gang with slack."""

    pods: tuple[int, ...]
    """Indexes into the snapshot's pod arrays."""
    priority: int
    gang: str
    whole: bool
    budget_hits: tuple[int, ...]
    """Budget indexes, once per covered pod."""


@dataclass
class Problem:
    """One candidate place: its node range and the units that touch it, in search order."""

    where: Where
    lo: int
    hi: int
    units: list[Unit] = field(default_factory=list)
    slack: dict[str, int] = field(default_factory=dict)
    """Gang -> how many members may go alone."""


class Fit:
    """Does the gang fit in one place under a changing set of evictions? Incremental for the
    uniform shape, a vectorised check for the leader shape, a placement attempt otherwise."""

    def __init__(self, demand: GangDemand, free: I64, prob: Problem, index: ClusterIndex) -> None:
        self.demand = demand
        self.index = index
        self.where = prob.where
        self.lo, self.hi = prob.lo, prob.hi
        self.free = free.copy()
        self.uniform = demand.exact and demand.kind == "uniform"
        self.masks = tuple(c.mask[self.lo : self.hi] for c in demand.classes)
        self.steps = fit_steps(demand)
        """What one `fits()` costs, in the attempt budget's steps."""
        if self.uniform:
            cls = demand.classes[0]
            self.cols = np.flatnonzero(cls.req)
            self.rq = cls.req[self.cols]
            self.slots = self._slots(self.free[self.lo : self.hi], self.masks[0])
            self.total = int(self.slots.sum())

    def _slots(self, rows: I64, mask: Bool) -> I64:
        s: I64 = (np.maximum(rows[:, self.cols], 0) // self.rq).min(axis=1)
        s[~mask] = 0
        np.minimum(s, self.demand.n, out=s)
        return s

    def apply(self, nodes: I64, reqs: I64, sign: int) -> None:
        if len(nodes) == 1:
            self._apply_one(int(nodes[0]), reqs[0], sign)
            return
        np.add.at(self.free, nodes, reqs if sign > 0 else -reqs)
        if self.uniform:
            inside = nodes[(nodes >= self.lo) & (nodes < self.hi)]
            if len(inside):
                rows = np.unique(inside)
                new = self._slots(self.free[rows], self.masks[0][rows - self.lo])
                self.total += int(new.sum() - self.slots[rows - self.lo].sum())
                self.slots[rows - self.lo] = new

    def _apply_one(self, node: int, req: I64, sign: int) -> None:
        row = self.free[node]
        if sign > 0:
            row += req
        else:
            row -= req
        if self.uniform and self.lo <= node < self.hi:
            local = node - self.lo
            new = 0
            if self.masks[0][local]:
                new = min(int((np.maximum(row[self.cols], 0) // self.rq).min()), self.demand.n)
            self.total += new - int(self.slots[local])
            self.slots[local] = new

    def fits(self) -> bool:
        if self.uniform:
            return self.total >= self.demand.n
        if self.demand.exact:
            return fits_rows(self.free[self.lo : self.hi], self.demand, self.masks)
        return place_in(self.where, self.demand, self.free, self.index) is not None


def fit_steps(demand: GangDemand) -> int:
    """What one fit check costs in steps: the uniform shape's is incremental (one step), the
    leader shape's a vectorised check (two), any other a placement attempt, member by member."""
    if demand.exact and demand.kind == "uniform":
        return 1
    if demand.exact:
        return 2
    return MIXED_STEPS_PER_POD * max(demand.n, 1)


def build_problem(
    where: Where,
    snap: Snapshot,
    arrays: PodArrays,
    eligible: Bool,
    pod_budgets: Mapping[int, tuple[int, ...]],
    reach: Bool,
) -> Problem:
    """The units touching `where`, grouped per gang (its whole unit first, then lone members),
    gangs in order of priority, then name: the order the search decides them in. A unit must
    hold a pod of `reach` (eligible, on a node the gang may use) inside `where`; a whole gang
    takes its eligible members wherever they run."""
    lo, hi = where.range(snap.index)
    prob = Problem(where=where, lo=lo, hi=hi)
    pos = arrays.position
    inside = np.flatnonzero(reach & (arrays.node >= lo) & (arrays.node < hi))
    by_gang: dict[str, list[int]] = {}
    for i in inside:
        by_gang.setdefault(snap.pods[arrays.keys[int(i)]].gang, []).append(int(i))

    def unit(pods: tuple[int, ...], gang: str, whole: bool) -> Unit:
        hits = tuple(b for p in pods for b in pod_budgets.get(p, ()))
        return Unit(pods, int(arrays.priority[list(pods)].max()), gang, whole, hits)

    groups: list[tuple[tuple[int, int, NaturalKey], list[Unit]]] = []
    for gang, here in by_gang.items():
        members = tuple(sorted(pos[k] for k in snap.gang_pods(gang) if not snap.pods[k].terminating))
        slack = max(0, len(members) - snap.gang_min.get(gang, 1))
        prob.slack[gang] = slack
        units: list[Unit] = []
        if all(bool(eligible[m]) for m in members):
            units.append(unit(members, gang, True))
        if slack > 0:
            units += [
                unit((m,), gang, False) for m in sorted(here, key=lambda i: natural_key(arrays.keys[i]))
            ]
        if units:
            groups.append(((min(u.priority for u in units), -len(here), natural_key(gang)), units))
    for _, units in sorted(groups, key=lambda g: g[0]):
        prob.units.extend(units)
    return prob


def pods_of(prob: Problem, chosen: Sequence[int]) -> list[int]:
    return sorted({i for u in chosen for i in prob.units[u].pods})


def apply_units(free: I64, prob: Problem, chosen: Sequence[int], arrays: PodArrays, sign: int) -> None:
    pods = pods_of(prob, chosen)
    if pods:
        idx = np.asarray(pods, dtype=np.int64)
        np.add.at(free, arrays.node[idx], arrays.req[idx] if sign > 0 else -arrays.req[idx])


# --- exact search ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """How far the search in one place may go."""

    nodes: int = SEARCH_BUDGET
    """Branch-and-bound nodes before settling for the best plan found (0: the greedy alone)."""
    bound: Cost | None = None
    """The cheapest plan found elsewhere: a dearer one here is not worth finding."""
    budget: AttemptBudget = field(default_factory=unbounded)
    """The attempt's steps, shared by every place it searches."""


@dataclass(frozen=True)
class _Taken:
    """The units a branch of the search has decided to evict so far, and what they cost."""

    units: tuple[int, ...] = ()
    hits: Mapping[int, int] = field(default_factory=dict)
    """Budget -> the victims it covers so far."""
    pods: int = 0
    top: int = NO_VICTIM
    """The highest victim priority so far."""

    def plus(self, k: int, unit: Unit) -> _Taken:
        hits = dict(self.hits)
        for b in unit.budget_hits:
            hits[b] = hits.get(b, 0) + 1
        return _Taken((*self.units, k), hits, self.pods + len(unit.pods), max(self.top, unit.priority))

    def cost(self, allowed: Sequence[int]) -> Cost:
        return (violations(self.hits, allowed), self.top, self.pods)


@dataclass
class Found:
    cost: Cost | None = None
    chosen: list[int] | None = None
    visited: int = 0
    exhausted: bool = False
    """True when the node budget ran out before the search finished."""


class Search:
    """Depth-first branch and bound over the units of one place, lexicographic cost."""

    def __init__(
        self,
        prob: Problem,
        demand: GangDemand,
        free: I64,
        snap: Snapshot,
        allowed: Sequence[int],
        limits: Limits,
    ) -> None:
        index, arrays = snap.index, snap.arrays()
        self.prob = prob
        self.budget = limits.budget
        self.demand = demand
        self.arrays = arrays
        self.allowed = list(allowed)
        self.budget_nodes = limits.nodes
        self.node_steps = NODE_STEPS + 2 * fit_steps(demand)
        """What one node costs: the bound, and up to two fit checks (the branch, the pool)."""
        self.found = Found()
        self.outer_bound = limits.bound
        self.fit = Fit(demand, free, prob, index)
        units = prob.units
        self.u_nodes = [arrays.node[list(u.pods)] for u in units]
        self.u_reqs = [arrays.req[list(u.pods)] for u in units]
        self.whole_in: set[str] = set()
        """Gangs the current branch evicts whole."""
        self.members_in: dict[str, int] = {}
        """Gang -> members the current branch evicts alone."""
        # Relaxation data: what each unit frees on usable nodes of the place, per resource.
        lo, hi = prob.lo, prob.hi
        union = np.zeros(index.n_nodes, dtype=np.bool_)
        for c in demand.classes:
            union |= c.mask
        usable = (arrays.node >= lo) & (arrays.node < hi) & union[arrays.node]
        self.need_total = demand.total_request()
        self.cols = np.flatnonzero(self.need_total)
        self.u_amount = np.zeros((len(units), len(self.cols)), dtype=np.float64)
        for k, u in enumerate(units):
            idx = np.asarray(u.pods, dtype=np.int64)
            ok = usable[idx]
            if ok.any():
                self.u_amount[k] = arrays.req[idx[ok]][:, self.cols].sum(axis=0)
        self.u_size = np.asarray([len(u.pods) for u in units], dtype=np.float64)
        self.base_free = np.maximum(free[lo:hi], 0)
        self.union_rows = union[lo:hi]

    # -- cost bookkeeping --
    def run(self, incumbent: Found | None = None) -> Found:
        """The greedy incumbent (or `incumbent`, this place's, found before), then the exact search."""
        if incumbent is None:
            self._greedy()
        else:
            self.found = Found(incumbent.cost, incumbent.chosen)
        if self.budget_nodes <= 0:
            self.found.exhausted = True
            return self.found
        n = len(self.prob.units)
        self.state_in = [False] * n
        self.state_out = [False] * n
        self.pool = Fit(self.demand, self.fit.free, self.prob, self.fit.index)
        # The pool holds every unit not excluded: start with all of them applied.
        self.pool_count = self._pool_counts()
        for i in self.pool_count:
            self.pool.apply(self.arrays.node[[i]], self.arrays.req[[i]], +1)
        if not self.pool.fits():
            return self.found
        self._dfs(0, _Taken())
        return self.found

    def _pool_counts(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for u in self.prob.units:
            for i in u.pods:
                counts[i] = counts.get(i, 0) + 1
        return counts

    def _better(self, cost: Cost) -> bool:
        if self.found.cost is not None and cost >= self.found.cost:
            return False
        return not (self.outer_bound is not None and cost > self.outer_bound)

    def _record(self, chosen: list[int], cost: Cost) -> None:
        if self._better(cost):
            self.found.cost = cost
            self.found.chosen = list(chosen)

    def _cost_of(self, chosen: Sequence[int]) -> Cost:
        pods = pods_of(self.prob, chosen)
        hits = Counter(b for u in chosen for b in self.prob.units[u].budget_hits)
        top = max((int(self.arrays.priority[i]) for i in pods), default=NO_VICTIM)
        return (violations(hits, self.allowed), top, len(pods))

    # -- greedy incumbent: lowest priority threshold that fits, then reprieve --
    def _greedy(self) -> None:
        """The incumbent: the lowest priority threshold whose units, all evicted, let the gang
        fit, then a reprieve of every unit it does not need. Budgets come first in the cost, so
        a first pass takes only units that keep every budget within what it allows, at each
        threshold; only when no threshold fits that way may the second pass break budgets."""
        for within_budgets in (True, False):
            if self._greedy_pass(within_budgets):
                return

    def _greedy_pass(self, within_budgets: bool) -> bool:
        """One pass of `_greedy`; True when it recorded a plan or the budget stopped it."""
        units = self.prob.units
        fit = self.fit
        for q in sorted({u.priority for u in units}):
            if not self.budget.pay(fit.steps):
                return True  # no incumbent: the caller says the search was cut short
            pool = self._pool(q, within_budgets)
            for k in pool:
                fit.apply(self.u_nodes[k], self.u_reqs[k], +1)
            if not fit.fits():
                for k in pool:
                    fit.apply(self.u_nodes[k], self.u_reqs[k], -1)
                continue
            # Reprieve: units that add budget violations first, then the highest priority, then
            # those that free the least for the pods they cost (the plan keeps the big ones).
            order = sorted(pool, key=lambda k: self._reprieve_key(k))
            kept = set(pool)
            for k in order:
                if not self.budget.pay(fit.steps):
                    break  # what is kept still fits: a valid plan, if not the leanest
                fit.apply(self.u_nodes[k], self.u_reqs[k], -1)
                if fit.fits():
                    kept.discard(k)
                else:
                    fit.apply(self.u_nodes[k], self.u_reqs[k], +1)
            chosen = sorted(kept)
            self._record(chosen, self._cost_of(chosen))
            for k in chosen:
                fit.apply(self.u_nodes[k], self.u_reqs[k], -1)
            return True
        return False

    def _reprieve_key(self, k: int) -> tuple[bool, int, float, int]:
        """Reprieve order: budget-breaking first, then highest priority, then the most pods per
        share of the gang's request the unit frees on nodes it may use (none freed: first)."""
        u = self.prob.units[k]
        share = float((self.u_amount[k] / np.maximum(self.need_total[self.cols], 1)).sum())
        return (not u.budget_hits, -u.priority, -len(u.pods) / share if share > 0 else -math.inf, -k)

    def _pool(self, q: int, within_budgets: bool) -> list[int]:
        """The units a threshold `q` evicts: whole gangs, or up to their slack lone members,
        of priority <= q; `within_budgets`: only while every budget still allows them."""
        pool: list[int] = []
        taken_members: dict[str, int] = {}
        whole_in: set[str] = set()
        spent: dict[int, int] = {}
        for k, u in enumerate(self.prob.units):
            if u.priority > q:
                continue
            lone_ok = u.gang not in whole_in and taken_members.get(u.gang, 0) < self.prob.slack.get(u.gang, 0)
            if not (u.whole or lone_ok):
                continue
            if within_budgets and u.budget_hits:
                more = Counter(u.budget_hits)
                if any(spent.get(b, 0) + n > self.allowed[b] for b, n in more.items()):
                    continue
                for b, n in more.items():
                    spent[b] = spent.get(b, 0) + n
            pool.append(k)
            if u.whole:
                whole_in.add(u.gang)
            else:
                taken_members[u.gang] = taken_members.get(u.gang, 0) + 1
        return pool

    def _needed(self, excluded: list[bool], chosen_free_rows: I64) -> int:
        """Relaxation: pods still to evict so the place's total free capacity (on nodes some
        class may use) reaches the gang's total request; a lower bound on any completion."""
        have = np.where(self.union_rows[:, None], np.maximum(chosen_free_rows, 0), 0)[:, self.cols].sum(
            axis=0
        )
        short = self.need_total[self.cols] - have
        if (short <= 0).all():
            return 0
        avail = ~np.asarray(excluded, dtype=np.bool_) & ~np.asarray(self.state_in, dtype=np.bool_)
        best = 0
        for r in np.flatnonzero(short > 0):
            amt = self.u_amount[avail, r]
            size = self.u_size[avail]
            if amt.sum() < short[r]:
                return 1 << 30
            ratio = np.where(size > 0, amt / size, 0.0)
            order = np.argsort(-ratio, kind="stable")
            cum = np.cumsum(amt[order])
            k = int(np.searchsorted(cum, short[r]))
            before = cum[k - 1] if k > 0 else 0.0
            pods = float(size[order][:k].sum()) + (short[r] - before) / ratio[order][k]
            best = max(best, math.ceil(pods - 1e-9))
        return best

    def _dfs(self, i: int, taken: _Taken) -> None:
        """Decide unit `i` and the ones after it: include it (when its gang allows), then
        exclude it; a branch ends where the gang fits or no completion can beat the best."""
        if self.found.visited >= self.budget_nodes or not self.budget.pay(self.node_steps):
            self.found.exhausted = True
            return
        self.found.visited += 1
        cost = taken.cost(self.allowed)
        if self.fit.fits():
            self._record(list(taken.units), cost)
            return
        units = self.prob.units
        if i >= len(units) or not self.pool.fits() or not self._promising(i, cost):
            return
        if self._may_include(units[i]):
            self._include(i, taken)
        # Exclude: the unit's pods leave the pool unless another undecided unit still offers them.
        gone = self._exclude(i)
        self._dfs(i + 1, taken)
        self._restore(i, gone)

    def _promising(self, i: int, cost: Cost) -> bool:
        """Can some completion of this branch, deciding units from `i` on, beat the best plan?"""
        pdb, top, pods = cost
        lowest_next = min(u.priority for u in self.prob.units[i:])
        need = self._needed(self.state_out, self.fit.free[self.prob.lo : self.prob.hi])
        return self._better((pdb, max(top, lowest_next), pods + max(need, 1)))

    def _may_include(self, u: Unit) -> bool:
        """A gang goes whole or keeps minMember: no member alone once it goes whole, and no
        more members alone than its slack."""
        if u.gang in self.whole_in:
            return False
        return u.whole or self.members_in.get(u.gang, 0) < self.prob.slack.get(u.gang, 0)

    def _include(self, i: int, taken: _Taken) -> None:
        u = self.prob.units[i]
        self.state_in[i] = True
        self.fit.apply(self.u_nodes[i], self.u_reqs[i], +1)
        if u.whole:
            self.whole_in.add(u.gang)
        else:
            self.members_in[u.gang] = self.members_in.get(u.gang, 0) + 1
        self._dfs(i + 1, taken.plus(i, u))
        if u.whole:
            self.whole_in.discard(u.gang)
        else:
            self.members_in[u.gang] -= 1
        self.fit.apply(self.u_nodes[i], self.u_reqs[i], -1)
        self.state_in[i] = False

    def _exclude(self, i: int) -> list[int]:
        self.state_out[i] = True
        gone: list[int] = []
        for p in self.prob.units[i].pods:
            self.pool_count[p] -= 1
            if self.pool_count[p] == 0:
                gone.append(p)
        if gone:
            idx = np.asarray(gone, dtype=np.int64)
            self.pool.apply(self.arrays.node[idx], self.arrays.req[idx], -1)
        return gone

    def _restore(self, i: int, gone: list[int]) -> None:
        self.state_out[i] = False
        for p in self.prob.units[i].pods:
            self.pool_count[p] += 1
        if gone:
            idx = np.asarray(gone, dtype=np.int64)
            self.pool.apply(self.arrays.node[idx], self.arrays.req[idx], +1)
