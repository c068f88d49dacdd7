"""Job-level preemption: free room for a whole gang by evicting lower-priority pods, or nothing.

Rules (the seed's job-level preemption, with a topology):
* Only a gang that cannot be placed now, whose policy is not `Never`, preempts; a soft or
  unconstrained gang only when it cannot be placed anywhere (never just to gather better).
* Victims are bound, not yet terminating pods of strictly lower priority.
* A victim in a gang takes its whole gang along, unless the gang keeps at least minMember
  pods: a set S is valid iff for each gang G, |S n G| <= bound(G) - minMember(G) or G c S
  (and then every member of G is of lower priority).
* Plans are evaluated per candidate domain under the gang's own constraint: hard at tier T,
  the domains of the widest tier <= T (single nodes at T = 0, plus nodes outside every such
  domain); soft or none, the whole cluster. The gang must fit inside the domain after the
  evictions, so a plan never trades the constraint for room.
* Within a domain the victim set minimises, in order: PodDisruptionBudget violations
  (sum over budgets of max(0, victims it covers - disruptions it allows)), the highest victim
  priority, the number of victim pods. Across domains the same, then binpack: the fewest slots
  left over if every eligible pod in the domain were gone (the domain closest to the gang's
  size), then left over after the plan, then name.

Search, per domain: a cheap vectorised pre-check (does the gang fit with every eligible pod
gone?), a greedy incumbent (lowest priority threshold that fits, then reprieve units while it
still fits, kube-scheduler's way), then an exact depth-first branch and bound over eviction
units with three prunes: cost so far (monotone in every component), a relaxation bound on the
pods still needed per resource, and feasibility with every undecided unit gone. Domains are
visited in order of a lower bound, and skipped once they cannot beat the best plan. The search
has a node budget; `PreemptionPlan.optimal` says whether it finished (it always does on small
clusters, which the oracle tests check).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from controller.placer.demand import GangDemand
from controller.placer.offer import evaluate, fits_rows
from controller.placer.select import Placement, Where, hard_limit_tier, place_in, select
from controller.placer.snapshot import I64, Bool, ClusterIndex, PodArrays, Snapshot
from translations._base import LabelSelector
from translations.core import PodDisruptionBudget
from translations.topology import natural_key

SEARCH_BUDGET = 20_000
"""Branch-and-bound nodes per domain before settling for the best plan found."""

Cost = tuple[int, int, int]
"""(PDB violations, highest victim priority, victim pods): smaller is better."""
PlanKey = tuple[Cost, int, int, tuple[tuple[int, int | str], ...]]
"""Cost, then leftover slots with every eligible pod gone, after the plan, then name."""

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_REASON = "PreemptionByScheduler"


@dataclass(frozen=True)
class Budget:
    """A PodDisruptionBudget reduced to what preemption counts."""

    key: str
    namespace: str
    selector: LabelSelector | None
    allowed: int

    def covers(self, namespace: str, labels: Mapping[str, str]) -> bool:
        # policy/v1: a null selector selects nothing, an empty one every pod of the namespace.
        return (
            namespace == self.namespace and self.selector is not None and self.selector.matches(dict(labels))
        )


def budgets_from(pdbs: Sequence[PodDisruptionBudget], snap: Snapshot) -> list[Budget]:
    """Disruptions each budget still allows: `status.disruptionsAllowed` when reported, else
    computed from minAvailable / maxUnavailable over the pods it covers in the snapshot."""
    out: list[Budget] = []
    for pdb in sorted(pdbs, key=lambda p: natural_key(p.key)):
        b = Budget(pdb.key, pdb.namespace, pdb.spec.selector, 0)
        if pdb.status is not None and pdb.status.disruptions_allowed is not None:
            allowed = pdb.status.disruptions_allowed
        else:
            healthy = sum(
                1 for p in snap.pods.values() if not p.terminating and b.covers(p.namespace, p.labels)
            )
            if pdb.spec.min_available is not None:
                allowed = healthy - _scaled(pdb.spec.min_available, healthy)
            elif pdb.spec.max_unavailable is not None:
                allowed = _scaled(pdb.spec.max_unavailable, healthy)
            else:
                allowed = healthy
        out.append(Budget(b.key, b.namespace, b.selector, max(0, allowed)))
    return out


def _scaled(value: int | str, total: int) -> int:
    if isinstance(value, int):
        return value
    text = value.strip()
    if text.endswith("%") and text[:-1].isdigit():
        return math.ceil(int(text[:-1]) * total / 100)
    return int(text) if text.isdigit() else 0


@dataclass(frozen=True)
class Victim:
    pod: str
    node: str
    priority: int
    gang: str
    condition: Mapping[str, str]
    """The `DisruptionTarget` pod condition to set before deleting it (time left to the caller)."""


@dataclass(frozen=True)
class PreemptionPlan:
    """Evict `victims`, then the gang goes to `nominated` (pod key -> node) inside `domain`."""

    gang: str
    domain: str
    tier: int
    victims: tuple[Victim, ...]
    nominated: tuple[tuple[str, str], ...]
    cost: Cost
    optimal: bool
    """False when the search budget ran out: the plan is valid, maybe not the cheapest."""
    domains_searched: int = 0


# --- units ---------------------------------------------------------------------------------------


@dataclass
class _Unit:
    """Pods that are evicted together: a whole gang, or one member of a gang with slack."""

    pods: tuple[int, ...]
    """Indexes into the snapshot's pod arrays."""
    priority: int
    gang: str
    whole: bool
    budget_hits: tuple[int, ...]
    """Budget indexes, once per covered pod."""


@dataclass
class _Problem:
    """One candidate place: its node range and the units that touch it, in search order."""

    where: Where
    lo: int
    hi: int
    units: list[_Unit] = field(default_factory=list)
    slack: dict[str, int] = field(default_factory=dict)
    """Gang -> how many members may go alone."""


class _Fit:
    """Does the gang fit in one place under a changing set of evictions? Incremental for the
    uniform shape, a vectorised check for the leader shape, a placement attempt otherwise."""

    def __init__(self, demand: GangDemand, free: I64, prob: _Problem, index: ClusterIndex) -> None:
        self.demand = demand
        self.index = index
        self.where = prob.where
        self.lo, self.hi = prob.lo, prob.hi
        self.free = free.copy()
        self.uniform = demand.exact and demand.kind == "uniform"
        self.masks = tuple(c.mask[self.lo : self.hi] for c in demand.classes)
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
        np.add.at(self.free, nodes, reqs if sign > 0 else -reqs)
        if self.uniform:
            inside = nodes[(nodes >= self.lo) & (nodes < self.hi)]
            if len(inside):
                rows = np.unique(inside)
                new = self._slots(self.free[rows], self.masks[0][rows - self.lo])
                self.total += int(new.sum() - self.slots[rows - self.lo].sum())
                self.slots[rows - self.lo] = new

    def fits(self) -> bool:
        if self.uniform:
            return self.total >= self.demand.n
        if self.demand.exact:
            return fits_rows(self.free[self.lo : self.hi], self.demand, self.masks)
        return place_in(self.where, self.demand, self.free, self.index) is not None


# --- planning -------------------------------------------------------------------------------------


def plan_preemption(
    demand: GangDemand,
    snap: Snapshot,
    free: I64,
    budgets: Sequence[Budget],
    *,
    scheduler: str,
    budget_nodes: int = SEARCH_BUDGET,
) -> PreemptionPlan | None:
    """The cheapest plan that lets the whole gang fit, or None when no eviction set does."""
    index = snap.index
    arrays = snap.arrays()
    eligible = (arrays.priority < demand.priority) & ~arrays.terminating
    if not eligible.any():
        return None
    # With every eligible pod gone, which candidate places could hold the gang at all?
    optimistic = free.copy()
    np.add.at(optimistic, arrays.node[eligible], arrays.req[eligible])
    places = _candidate_places(demand, index, optimistic)
    pod_budgets = _pod_budgets(snap, arrays, eligible, budgets)
    allowed = [b.allowed for b in budgets]
    best: tuple[PlanKey, _Problem, list[int], bool] | None = None
    searched = 0
    for where, opt_leftover in places:
        prob = _problem(where, snap, arrays, eligible, pod_budgets)
        if not prob.units:
            continue
        lowest = min(u.priority for u in prob.units)
        if best is not None and ((0, lowest, 1), opt_leftover) > (best[0][0], best[0][1]):
            continue
        searched += 1
        bound = best[0][0] if best is not None else None
        found = _Search(prob, demand, free, index, arrays, allowed, budget_nodes, bound).run()
        if found.chosen is None or found.cost is None:
            continue
        after = free.copy()
        _apply(after, prob, found.chosen, arrays, +1)
        key: PlanKey = (
            found.cost,
            opt_leftover,
            _leftover(where, demand, after, index),
            natural_key(where.label(index)),
        )
        if best is None or key < best[0]:
            best = (key, prob, found.chosen, not found.exhausted)
    if best is None:
        return None
    key, prob, chosen, optimal = best
    after = free.copy()
    _apply(after, prob, chosen, arrays, +1)
    placement = _nominate(prob.where, demand, after, index)
    if placement is None:  # the search checked this very fit; only a `mixed` gang can get here
        return None
    victims_idx = sorted(
        {i for u in chosen for i in prob.units[u].pods}, key=lambda i: natural_key(arrays.keys[i])
    )
    message = (
        f"{scheduler}: preempting to accommodate higher priority pods, "
        f"preemptor: {demand.key}, triggerpod: {demand.pods[0].key}"
    )
    condition = {"type": DISRUPTION_TARGET, "status": "True", "reason": PREEMPTION_REASON, "message": message}
    victims = tuple(
        Victim(
            pod=arrays.keys[i],
            node=index.node_names[int(arrays.node[i])],
            priority=int(arrays.priority[i]),
            gang=snap.pods[arrays.keys[i]].gang,
            condition=condition,
        )
        for i in victims_idx
    )
    cost = key[0]
    return PreemptionPlan(
        gang=demand.key,
        domain=prob.where.label(index),
        tier=prob.where.tier(index),
        victims=victims,
        nominated=tuple(
            (demand.pods[pos].key, index.node_names[node]) for pos, node in placement.assignments
        ),
        cost=cost,
        optimal=optimal,
        domains_searched=searched,
    )


def _candidate_places(demand: GangDemand, index: ClusterIndex, optimistic: I64) -> list[tuple[Where, int]]:
    """Places a plan may target, each with the gang's leftover slots there if every eligible pod
    were gone; only those where the gang would then fit; fewest leftover first."""
    c = demand.constraint
    offers = evaluate(optimistic, demand, index)
    if c is None or not c.binds:
        return [(Where("cluster", -1), offers.total_offer - demand.n)] if offers.total_fit else []
    tier = hard_limit_tier(demand, index)
    out: list[tuple[Where, int]] = []
    covered = np.zeros(index.n_nodes, dtype=np.bool_)
    if tier:
        doms = index.tier_domains[tier]
        for d in doms:
            covered[int(index.dom_start[d]) : int(index.dom_end[d])] = True
            if offers.dom_fit[d]:
                out.append((Where("domain", int(d)), int(offers.dom_offer[d]) - demand.n))
    leftover = offers.raw_slots - demand.n if demand.kind == "uniform" else offers.node_offer - demand.n
    for v in np.flatnonzero(~covered & offers.node_fit):
        out.append((Where("node", int(v)), int(leftover[v])))
    if len(demand.anchors):
        amin, amax = int(demand.anchors[0]), int(demand.anchors[-1])
        out = [(w, lf) for w, lf in out if w.range(index)[0] <= amin < amax + 1 <= w.range(index)[1]]
    out.sort(key=lambda wl: (wl[1], natural_key(wl[0].label(index))))
    return out


def _pod_budgets(
    snap: Snapshot, arrays: PodArrays, eligible: Bool, budgets: Sequence[Budget]
) -> dict[int, tuple[int, ...]]:
    out: dict[int, tuple[int, ...]] = {}
    if not budgets:
        return out
    for i in np.flatnonzero(eligible):
        pod = snap.pods[arrays.keys[int(i)]]
        hits = tuple(j for j, b in enumerate(budgets) if b.covers(pod.namespace, pod.labels))
        if hits:
            out[int(i)] = hits
    return out


def _problem(
    where: Where,
    snap: Snapshot,
    arrays: PodArrays,
    eligible: Bool,
    pod_budgets: Mapping[int, tuple[int, ...]],
) -> _Problem:
    """The units touching `where`, grouped per gang (its whole unit first, then lone members),
    gangs in order of priority, then name: the order the search decides them in."""
    lo, hi = where.range(snap.index)
    prob = _Problem(where=where, lo=lo, hi=hi)
    pos = {k: i for i, k in enumerate(arrays.keys)}
    inside = np.flatnonzero(eligible & (arrays.node >= lo) & (arrays.node < hi))
    by_gang: dict[str, list[int]] = {}
    for i in inside:
        by_gang.setdefault(snap.pods[arrays.keys[int(i)]].gang, []).append(int(i))

    def unit(pods: tuple[int, ...], gang: str, whole: bool) -> _Unit:
        hits = tuple(b for p in pods for b in pod_budgets.get(p, ()))
        return _Unit(pods, int(arrays.priority[list(pods)].max()), gang, whole, hits)

    groups: list[tuple[tuple[int, int, tuple[tuple[int, int | str], ...]], list[_Unit]]] = []
    for gang, here in by_gang.items():
        members = tuple(sorted(pos[k] for k in snap.gang_pods(gang) if not snap.pods[k].terminating))
        slack = max(0, len(members) - snap.gang_min.get(gang, 1))
        prob.slack[gang] = slack
        units: list[_Unit] = []
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


def _pods_of(prob: _Problem, chosen: Sequence[int]) -> list[int]:
    return sorted({i for u in chosen for i in prob.units[u].pods})


def _apply(free: I64, prob: _Problem, chosen: Sequence[int], arrays: PodArrays, sign: int) -> None:
    pods = _pods_of(prob, chosen)
    if pods:
        idx = np.asarray(pods, dtype=np.int64)
        np.add.at(free, arrays.node[idx], arrays.req[idx] if sign > 0 else -arrays.req[idx])


def _leftover(where: Where, demand: GangDemand, free: I64, index: ClusterIndex) -> int:
    offers = evaluate(free, demand, index)
    if where.kind == "cluster":
        return offers.total_offer - demand.n
    if where.kind == "domain":
        return int(offers.dom_offer[where.idx]) - demand.n
    return int(offers.node_offer[where.idx]) - demand.n


def _nominate(where: Where, demand: GangDemand, free: I64, index: ClusterIndex) -> Placement | None:
    """Where the gang goes once the victims are gone: inside the plan's domain (the normal
    selection when the plan spans the cluster, so a soft gang still gathers)."""
    if where.kind == "cluster":
        return select(demand, free, index)
    return place_in(where, demand, free, index)


# --- exact search ---------------------------------------------------------------------------------


@dataclass
class _Found:
    cost: Cost | None = None
    chosen: list[int] | None = None
    visited: int = 0
    exhausted: bool = False
    """True when the node budget ran out before the search finished."""


class _Search:
    """Depth-first branch and bound over the units of one place, lexicographic cost."""

    def __init__(
        self,
        prob: _Problem,
        demand: GangDemand,
        free: I64,
        index: ClusterIndex,
        arrays: PodArrays,
        allowed: Sequence[int],
        budget_nodes: int,
        bound: Cost | None,
    ) -> None:
        self.prob = prob
        self.demand = demand
        self.arrays = arrays
        self.allowed = list(allowed)
        self.budget_nodes = budget_nodes
        self.found = _Found()
        self.outer_bound = bound
        self.fit = _Fit(demand, free, prob, index)
        units = prob.units
        self.u_nodes = [arrays.node[list(u.pods)] for u in units]
        self.u_reqs = [arrays.req[list(u.pods)] for u in units]
        # Relaxation data: what each unit frees on usable nodes of the place, per resource.
        usable = np.zeros(arrays.node.shape[0], dtype=np.bool_)
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
    def run(self) -> _Found:
        self._greedy()
        n = len(self.prob.units)
        self.state_in = [False] * n
        self.state_out = [False] * n
        self.pool = _Fit(self.demand, self.fit.free, self.prob, self.fit.index)
        # The pool holds every unit not excluded: start with all of them applied.
        self.pool_count = self._pool_counts()
        for i in self.pool_count:
            self.pool.apply(self.arrays.node[[i]], self.arrays.req[[i]], +1)
        if not self.pool.fits():
            return self.found
        self._dfs(0, [], {}, 0, -(2**62), set(), {})
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
        pods = _pods_of(self.prob, chosen)
        hits: dict[int, int] = {}
        for u in chosen:
            for b in self.prob.units[u].budget_hits:
                hits[b] = hits.get(b, 0) + 1
        pdb = sum(max(0, c - self.allowed[b]) for b, c in hits.items())
        top = max((int(self.arrays.priority[i]) for i in pods), default=-(2**62))
        return (pdb, top, len(pods))

    # -- greedy incumbent: lowest priority threshold that fits, then reprieve --
    def _greedy(self) -> None:
        units = self.prob.units
        levels = sorted({u.priority for u in units})
        fit = self.fit
        for q in levels:
            pool: list[int] = []
            taken_members: dict[str, int] = {}
            whole_in: set[str] = set()
            for k, u in enumerate(units):
                if u.priority > q:
                    continue
                if u.whole:
                    pool.append(k)
                    whole_in.add(u.gang)
                elif u.gang not in whole_in and taken_members.get(u.gang, 0) < self.prob.slack.get(u.gang, 0):
                    pool.append(k)
                    taken_members[u.gang] = taken_members.get(u.gang, 0) + 1
            for k in pool:
                fit.apply(self.u_nodes[k], self.u_reqs[k], +1)
            if not fit.fits():
                for k in pool:
                    fit.apply(self.u_nodes[k], self.u_reqs[k], -1)
                continue
            # Reprieve: units that add budget violations first, then the highest priority, then the largest.
            order = sorted(
                pool, key=lambda k: (not units[k].budget_hits, -units[k].priority, -len(units[k].pods), -k)
            )
            kept = set(pool)
            for k in order:
                fit.apply(self.u_nodes[k], self.u_reqs[k], -1)
                if fit.fits():
                    kept.discard(k)
                else:
                    fit.apply(self.u_nodes[k], self.u_reqs[k], +1)
            chosen = sorted(kept)
            self._record(chosen, self._cost_of(chosen))
            for k in chosen:
                fit.apply(self.u_nodes[k], self.u_reqs[k], -1)
            return

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

    def _dfs(
        self,
        i: int,
        chosen: list[int],
        hits: dict[int, int],
        pods: int,
        top: int,
        whole_in: set[str],
        members_in: dict[str, int],
    ) -> None:
        if self.found.visited >= self.budget_nodes:
            self.found.exhausted = True
            return
        self.found.visited += 1
        pdb = sum(max(0, c - self.allowed[b]) for b, c in hits.items())
        if self.fit.fits():
            self._record(chosen, (pdb, top, pods))
            return
        units = self.prob.units
        if i >= len(units) or not self.pool.fits():
            return
        lowest_next = min(u.priority for u in units[i:])
        need = self._needed(self.state_out, self.fit.free[self.prob.lo : self.prob.hi])
        if not self._better((pdb, max(top, lowest_next), pods + max(need, 1))):
            return
        u = units[i]
        allowed_in = (u.whole and u.gang not in whole_in) or (
            not u.whole
            and u.gang not in whole_in
            and members_in.get(u.gang, 0) < self.prob.slack.get(u.gang, 0)
        )
        if allowed_in:
            self.state_in[i] = True
            self.fit.apply(self.u_nodes[i], self.u_reqs[i], +1)
            new_hits = dict(hits)
            for b in u.budget_hits:
                new_hits[b] = new_hits.get(b, 0) + 1
            if u.whole:
                whole_in.add(u.gang)
                self._dfs(
                    i + 1,
                    [*chosen, i],
                    new_hits,
                    pods + len(u.pods),
                    max(top, u.priority),
                    whole_in,
                    members_in,
                )
                whole_in.discard(u.gang)
            else:
                members_in[u.gang] = members_in.get(u.gang, 0) + 1
                self._dfs(i + 1, [*chosen, i], new_hits, pods + 1, max(top, u.priority), whole_in, members_in)
                members_in[u.gang] -= 1
            self.fit.apply(self.u_nodes[i], self.u_reqs[i], -1)
            self.state_in[i] = False
        # Exclude: the unit's pods leave the pool unless another undecided unit still offers them.
        gone = self._exclude(i)
        self._dfs(i + 1, chosen, hits, pods, top, whole_in, members_in)
        self._restore(i, gone)

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
