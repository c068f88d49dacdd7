"""An exact, brute-force solver for tiny clusters (<= 12 nodes), to check the engine against.

Pod rules: required pod affinity and anti-affinity (matchLabels terms on any node label,
both directions, members counting like bound pods), checked on every full assignment.

It shares no code with the engine: plain dicts and sets, every allowed place tried, every pod
assignment tried by backtracking, every victim set enumerated. Slow on purpose and obviously
right: property tests compare the engine's answers with it.

* `lowest_place(case, removed)`: the lowest tier at which some allowed place holds the whole
  gang (None: nowhere). GPU-dialect gangs add `max_nodes` (nodes used), `min_pods_per_node`
  (pods on every node used) and `one_per_node` (spread); `fewest_nodes(case)` is the least
  number of nodes any valid assignment uses. Places: single nodes (tier 0); domains up to the hard tier (hard), or
  all domains and the cluster (soft, none).
* `waits_for_victims(case)`, `fits_on(case, nominated_to(case))`: a gang nominated by an
  earlier cycle waits while a lower-priority pod still terminates on its nodes, then takes
  its nominated nodes when all its pods still fit there.
* `cheapest_preemption(case)`: the minimum, in the order (PDB violations, highest victim
  priority, victim pods), over every valid victim set after which the gang fits; None if none.

Kube-scheduler's rules for pods already on their way: a terminating pod holds its room but is
no victim (it is going already), and counts neither towards its gang's members nor as healthy
for a budget; a pending pod nominated to a node holds its room against gangs of equal or lower
priority. A budget allows its reported disruptions, else what the disruption controller
computes: healthy covered pods less the desired count, percentages and maxUnavailable taken of
every covered pod.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from translations._base import INT32_MAX, bounded_int


@dataclass(frozen=True)
class OracleNode:
    name: str
    alloc: Mapping[str, int]
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[tuple[str, str, str], ...] = ()
    """(key, value, effect); an unschedulable node carries node.kubernetes.io/unschedulable."""


@dataclass(frozen=True)
class OraclePod:
    key: str
    req: Mapping[str, int]
    """Including `pods: 1`."""
    priority: int = 0
    node: str | None = None
    gang: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[tuple[str, str, str, str], ...] = ()
    """(key, operator, value, effect)."""
    affinity: tuple[tuple[str, frozenset[tuple[str, str]]], ...] = ()
    """Required pod affinity terms: (topology key, matchLabels), same namespace."""
    anti_affinity: tuple[tuple[str, frozenset[tuple[str, str]]], ...] = ()
    """Required pod anti-affinity terms, likewise."""
    terminating: bool = False
    """Bound and being deleted: holds its room, is no victim."""


@dataclass(frozen=True)
class OracleNomination:
    """A pending pod's claim on a node (`status.nominatedNodeName`)."""

    node: str
    req: Mapping[str, int]
    priority: int
    gang: str
    pod: str = ""


@dataclass(frozen=True)
class OracleDomain:
    name: str
    tier: int
    nodes: frozenset[str]


@dataclass(frozen=True)
class OracleBudget:
    selector: Mapping[str, str]
    allowed: int | None = None
    """`status.disruptionsAllowed`; None: computed from the spec over the bound pods."""
    min_available: int | str | None = None
    max_unavailable: int | str | None = None


@dataclass
class OracleCase:
    nodes: Sequence[OracleNode]
    domains: Sequence[OracleDomain]
    bound: Sequence[OraclePod]
    gang: Sequence[OraclePod]
    """The pending pods, all to be placed."""
    mode: str | None
    """"hard", "soft" or None (no constraint)."""
    tier: int | None
    priority: int
    gang_min: Mapping[str, int] = field(default_factory=dict)
    """Bound gangs' minMember."""
    budgets: Sequence[OracleBudget] = ()
    anchors: frozenset[str] = frozenset()
    """Nodes of the gang's already-bound members."""
    node_domains: bool = True
    """False for a Volcano PodGroup asking for a tier above 0: a node is no place of its own
    when some domain is allowed."""
    max_nodes: int | None = None
    """GPU dialect: the pending pods use at most this many nodes."""
    min_pods_per_node: int = 1
    """GPU dialect: every node used takes at least this many pending pods."""
    one_per_node: bool = False
    """GPU dialect `spread`: at most one pending pod per node."""
    key: str = ""
    """The gang's own key (its own nominations hold nothing against it)."""
    nominations: Sequence[OracleNomination] = ()


def _tolerated(pod: OraclePod, taint: tuple[str, str, str]) -> bool:
    for key, op, value, effect in pod.tolerations:
        if effect and effect != taint[2]:
            continue
        if op == "Exists" and (not key or key == taint[0]):
            return True
        if op == "Equal" and key == taint[0] and value == taint[1]:
            return True
    return False


def allowed(pod: OraclePod, node: OracleNode) -> bool:
    if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    return all(_tolerated(pod, t) for t in node.taints if t[2] in ("NoSchedule", "NoExecute"))


def free_after(case: OracleCase, removed: frozenset[str]) -> dict[str, dict[str, int]]:
    free = {n.name: dict(n.alloc) for n in case.nodes}
    for p in case.bound:
        if p.key in removed or p.node is None:
            continue
        for r, v in p.req.items():
            free[p.node][r] = free[p.node].get(r, 0) - v
    for nom in case.nominations:
        if nom.gang != case.key and nom.priority >= case.priority:
            for r, v in nom.req.items():
                free[nom.node][r] = free[nom.node].get(r, 0) - v
    return free


def nominated_to(case: OracleCase) -> dict[str, str]:
    """The gang's own pending pods nominated by an earlier cycle: pod -> node."""
    return {n.pod: n.node for n in case.nominations if n.gang == case.key}


def waits_for_victims(case: OracleCase) -> bool:
    """A lower-priority pod is still terminating on a node the gang is nominated to: it waits
    for it (no new placement, no new preemption), as kube-scheduler does for a nominated pod."""
    mine = set(nominated_to(case).values())
    return any(p.terminating and p.priority < case.priority and p.node in mine for p in case.bound)


def fits_on(case: OracleCase, assignment: Mapping[str, str]) -> bool:
    """Does every pending pod pass its filters and find room on its node in `assignment` (what
    kube-scheduler tries first for a nominated pod)?"""
    pods = {p.key: p for p in case.gang}
    if set(assignment) != set(pods):
        return False
    nodes = {n.name: n for n in case.nodes}
    free = free_after(case, frozenset())
    for key, node in assignment.items():
        if not allowed(pods[key], nodes[node]):
            return False
        for r, v in pods[key].req.items():
            free[node][r] = free[node].get(r, 0) - v
    # Only what the pods ask for must fit, as in `assignable`.
    return all(free[n][r] >= 0 for k, n in assignment.items() for r in pods[k].req)


def _selects(selector: frozenset[tuple[str, str]], pod: OraclePod) -> bool:
    return all(pod.labels.get(k) == v for k, v in selector)


def _same(nodes: Mapping[str, OracleNode], key: str, a: str, b: str) -> bool:
    """Do nodes a and b share a value of label `key` (both having it)?"""
    va, vb = nodes[a].labels.get(key), nodes[b].labels.get(key)
    return va is not None and va == vb


def rules_hold(
    case: OracleCase, assignment: Mapping[str, str], removed: frozenset[str] = frozenset()
) -> bool:
    """Pod (anti-)affinity of a full assignment, with the gang's members counting like bound pods.

    Anti-affinity, both ways: no pod shares a key value with a pod its term (or the other's term)
    selects. Affinity: when some bound pod matches the term, the carrier shares a value with
    one; when none does, the carriers and the members the term selects share one value (the
    gang starts the term, as the first pod of a kind does)."""
    nodes = {n.name: n for n in case.nodes}
    gang = {p.key: p for p in case.gang}
    placed = [(p, assignment[p.key]) for p in case.gang]
    bound = [(p, p.node) for p in case.bound if p.key not in removed and p.node is not None]
    everyone = placed + bound
    for p, at in placed:
        for key, sel in p.anti_affinity:
            for q, there in everyone:
                if q.key != p.key and _selects(sel, q) and _same(nodes, key, at, there):
                    return False
        for q, there in everyone:
            if q.key == p.key:
                continue
            for key, sel in q.anti_affinity:
                if _selects(sel, p) and _same(nodes, key, at, there):
                    return False
        for key, sel in p.affinity:
            existing = [there for q, there in bound if _selects(sel, q)]
            if existing:
                if not any(_same(nodes, key, at, there) for there in existing):
                    return False
                continue
            mates = [assignment[q.key] for q in gang.values() if _selects(sel, q) or (key, sel) in q.affinity]
            if not any(_selects(sel, q) for q in gang.values()):
                return False
            if not all(_same(nodes, key, at, m) for m in mates):
                return False
    return True


def assignable(
    case: OracleCase,
    place: frozenset[str],
    free: Mapping[str, Mapping[str, int]],
    removed: frozenset[str] = frozenset(),
) -> bool:
    """Backtracking: can every pending pod go on a node of `place`, keeping the pod rules?"""
    nodes = {n.name: n for n in case.nodes}
    pods = sorted(case.gang, key=lambda p: -sum(p.req.values()))
    work = {n: dict(free[n]) for n in place}
    options = [[n for n in sorted(place) if allowed(p, nodes[n])] for p in pods]
    ruled = any(p.affinity or p.anti_affinity for p in (*case.gang, *case.bound))
    chosen: dict[str, str] = {}
    used: dict[str, int] = {}

    def go(i: int) -> bool:
        if i == len(pods):
            if any(c < case.min_pods_per_node for c in used.values()):
                return False
            return not ruled or rules_hold(case, chosen, removed)
        p = pods[i]
        for n in options[i]:
            if case.one_per_node and used.get(n):
                continue
            if case.max_nodes is not None and n not in used and len(used) >= case.max_nodes:
                continue
            w = work[n]
            if all(w.get(r, 0) >= v for r, v in p.req.items()):
                for r, v in p.req.items():
                    w[r] = w.get(r, 0) - v
                chosen[p.key] = n
                used[n] = used.get(n, 0) + 1
                if go(i + 1):
                    return True
                del chosen[p.key]
                used[n] -= 1
                if not used[n]:
                    del used[n]
                for r, v in p.req.items():
                    w[r] += v
        return False

    return go(0)


def places(case: OracleCase) -> list[tuple[int, frozenset[str]]]:
    """(tier, nodes) of every place the gang may occupy, lowest tier first."""
    top = max((d.tier for d in case.domains), default=0)
    out: list[tuple[int, frozenset[str]]] = [(0, frozenset([n.name])) for n in case.nodes]
    if case.mode == "hard" and case.tier is not None:
        out += [(d.tier, d.nodes) for d in case.domains if 0 < d.tier <= case.tier]
        if case.domains and case.tier > top:  # Volcano's virtual HyperNode above the highest tier
            out.append((top + 1, frozenset(n.name for n in case.nodes)))
    else:
        limit = case.tier if (case.mode == "soft" and case.tier is not None) else top
        out += [(d.tier, d.nodes) for d in case.domains if 0 < d.tier <= limit]
        out.append((top + 1, frozenset(n.name for n in case.nodes)))
    if not case.node_domains and any(0 < t <= top for t, _ in out):
        out = [(t, ns) for t, ns in out if t > 0]
    if case.anchors and case.mode == "hard" and case.tier is not None:
        out = [(t, ns) for t, ns in out if case.anchors <= ns]
    return sorted(out, key=lambda tn: tn[0])


def lowest_place(case: OracleCase, removed: frozenset[str] = frozenset()) -> int | None:
    free = free_after(case, removed)
    for tier, place in places(case):
        if assignable(case, place, free, removed):
            return tier
    return None


def fewest_nodes(case: OracleCase) -> int | None:
    """The fewest nodes any valid assignment of the gang uses anywhere (None: no assignment)."""
    everywhere = frozenset(n.name for n in case.nodes)
    free = free_after(case, frozenset())
    limit = case.max_nodes if case.max_nodes is not None else len(case.gang)
    for m in range(1, limit + 1):
        if assignable(dataclasses.replace(case, max_nodes=m), everywhere, free):
            return m
    return None


def valid_victims(case: OracleCase, victims: frozenset[str]) -> bool:
    """Strictly lower priority, not terminating; a gang loses members only while it keeps
    minMember (its terminating members are gone already), else all its remaining ones."""
    by_key = {p.key: p for p in case.bound}
    if any(by_key[v].priority >= case.priority or by_key[v].terminating for v in victims):
        return False
    gangs: dict[str, list[str]] = {}
    for p in case.bound:
        if not p.terminating:
            gangs.setdefault(p.gang or p.key, []).append(p.key)
    for g, members in gangs.items():
        gone = sum(1 for m in members if m in victims)
        if gone and gone > len(members) - case.gang_min.get(g, 1) and gone != len(members):
            return False
    return True


def _percent_of(value: int | str, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):  # digits read as the API server allows them
        return -(-bounded_int(value[:-1], 100) * total // 100)
    return bounded_int(value, INT32_MAX) if isinstance(value, str) else value


def budget_allows(case: OracleCase, budget: OracleBudget) -> int:
    """Disruptions `budget` allows over the case's bound pods."""
    if budget.allowed is not None:
        return max(0, budget.allowed)
    covered = [p for p in case.bound if all(p.labels.get(k) == x for k, x in budget.selector.items())]
    healthy = sum(1 for p in covered if not p.terminating)
    if budget.min_available is not None:
        allows = healthy - _percent_of(budget.min_available, len(covered))
    elif budget.max_unavailable is not None:
        allows = _percent_of(budget.max_unavailable, len(covered)) - (len(covered) - healthy)
    else:
        allows = healthy
    return max(0, allows)


def cost(case: OracleCase, victims: frozenset[str]) -> tuple[int, int, int]:
    by_key = {p.key: p for p in case.bound}
    pdb = 0
    for b in case.budgets:
        hit = sum(1 for v in victims if all(by_key[v].labels.get(k) == x for k, x in b.selector.items()))
        pdb += max(0, hit - budget_allows(case, b))
    return pdb, max((by_key[v].priority for v in victims), default=-(2**62)), len(victims)


def cheapest_preemption(case: OracleCase) -> tuple[tuple[int, int, int], frozenset[str]] | None:
    """Every victim set, cheapest first; the first after which the gang fits somewhere allowed."""
    eligible = [p.key for p in case.bound if p.priority < case.priority and not p.terminating]
    ruled = any(p.affinity or p.anti_affinity for p in (*case.gang, *case.bound))
    if not ruled and lowest_place(case, frozenset(eligible)) is None:
        return None  # removing pods only frees room: no subset helps when all of them do not
    sets = [frozenset(c) for k in range(1, len(eligible) + 1) for c in itertools.combinations(eligible, k)]
    sets = [s for s in sets if valid_victims(case, s)]
    sets.sort(key=lambda s: (cost(case, s), sorted(s)))
    for s in sets:
        if lowest_place(case, s) is not None:
            return cost(case, s), s
    return None
