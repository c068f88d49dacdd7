"""An exact, brute-force solver for tiny clusters (<= 8 nodes), to check the engine against.

It shares no code with the engine: plain dicts and sets, every allowed place tried, every pod
assignment tried by backtracking, every victim set enumerated. Slow on purpose and obviously
right: property tests compare the engine's answers with it.

* `lowest_place(case, removed)`: the lowest tier at which some allowed place holds the whole
  gang (None: nowhere). Places: single nodes (tier 0); domains up to the hard tier (hard), or
  all domains and the cluster (soft, none).
* `cheapest_preemption(case)`: the minimum, in the order (PDB violations, highest victim
  priority, victim pods), over every valid victim set after which the gang fits; None if none.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


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


@dataclass(frozen=True)
class OracleDomain:
    name: str
    tier: int
    nodes: frozenset[str]


@dataclass(frozen=True)
class OracleBudget:
    selector: Mapping[str, str]
    allowed: int


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
    return free


def assignable(case: OracleCase, place: frozenset[str], free: Mapping[str, Mapping[str, int]]) -> bool:
    """Backtracking: can every pending pod go on a node of `place`?"""
    nodes = {n.name: n for n in case.nodes}
    pods = sorted(case.gang, key=lambda p: -sum(p.req.values()))
    work = {n: dict(free[n]) for n in place}
    options = [[n for n in sorted(place) if allowed(p, nodes[n])] for p in pods]

    def go(i: int) -> bool:
        if i == len(pods):
            return True
        p = pods[i]
        for n in options[i]:
            w = work[n]
            if all(w.get(r, 0) >= v for r, v in p.req.items()):
                for r, v in p.req.items():
                    w[r] = w.get(r, 0) - v
                if go(i + 1):
                    return True
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
        if assignable(case, place, free):
            return tier
    return None


def valid_victims(case: OracleCase, victims: frozenset[str]) -> bool:
    """Strictly lower priority; a gang loses members only while it keeps minMember, else all."""
    by_key = {p.key: p for p in case.bound}
    if any(by_key[v].priority >= case.priority for v in victims):
        return False
    gangs: dict[str, list[str]] = {}
    for p in case.bound:
        gangs.setdefault(p.gang or p.key, []).append(p.key)
    for g, members in gangs.items():
        gone = sum(1 for m in members if m in victims)
        if gone and gone > len(members) - case.gang_min.get(g, 1) and gone != len(members):
            return False
    return True


def cost(case: OracleCase, victims: frozenset[str]) -> tuple[int, int, int]:
    by_key = {p.key: p for p in case.bound}
    pdb = 0
    for b in case.budgets:
        hit = sum(1 for v in victims if all(by_key[v].labels.get(k) == x for k, x in b.selector.items()))
        pdb += max(0, hit - b.allowed)
    return pdb, max((by_key[v].priority for v in victims), default=-(2**62)), len(victims)


def cheapest_preemption(case: OracleCase) -> tuple[tuple[int, int, int], frozenset[str]] | None:
    """Every victim set, cheapest first; the first after which the gang fits somewhere allowed."""
    eligible = [p.key for p in case.bound if p.priority < case.priority]
    sets = [frozenset(c) for k in range(1, len(eligible) + 1) for c in itertools.combinations(eligible, k)]
    sets = [s for s in sets if valid_victims(case, s)]
    sets.sort(key=lambda s: (cost(case, s), sorted(s)))
    for s in sets:
        if lowest_place(case, s) is not None:
            return cost(case, s), s
    return None
