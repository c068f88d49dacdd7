"""The invariant watcher's small PodDisruptionBudget oracle: did a preemption break a budget
when a plan that broke none existed? Conservative by construction, so a report is always real:

* the plan's violations are counted with the *most* each budget could allow (the larger of
  its reported `disruptionsAllowed` and the count from its spec over the pods it covers), as
  they stood when the plan's first victim was marked;
* the alternative is sought with the *least* each budget could allow, evicting only whole
  gangs (a victim takes its gang along) of lower priority whose eviction breaks no budget,
  and with every other pod occupying its node: bound ones, terminating ones, and pending
  ones nominated to a node;
* the preemptor's pending pods must then fit into one domain its hard constraint allows (the
  one its bound members are in, if any), by first-fit decreasing on cpu, memory and pods,
  which can miss a fit but never invents one.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from translations.core import Node, Pod, PodDisruptionBudget, effective_requests
from translations.gangs import Gang
from translations.topology import TopologyTree


@dataclass(frozen=True)
class Allowance:
    """What one budget allows: at most (for judging a plan) and at least (for alternatives)."""

    budget: PodDisruptionBudget
    most: int
    least: int

    def covers(self, pod: Pod) -> bool:
        selector = self.budget.spec.selector
        return (
            selector is not None
            and pod.namespace == self.budget.namespace
            and selector.matches(pod.metadata.labels or {})
        )


def _scaled(value: int | str, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(total * int(value[:-1]) / 100)
    return int(value)


def _healthy(pod: Pod) -> bool:
    return bool(pod.spec.node_name) and not pod.metadata.deletion_timestamp and not pod.terminal


def allowances(budgets: Iterable[PodDisruptionBudget], pods: Iterable[Pod]) -> list[Allowance]:
    pods = list(pods)
    out = []
    for pdb in budgets:
        selector = pdb.spec.selector
        covered = [
            p
            for p in pods
            if selector is not None
            and p.namespace == pdb.namespace
            and selector.matches(p.metadata.labels or {})
        ]
        healthy = sum(1 for p in covered if _healthy(p))
        if pdb.spec.min_available is not None:
            from_spec = healthy - _scaled(pdb.spec.min_available, len(covered))
        elif pdb.spec.max_unavailable is not None:
            from_spec = _scaled(pdb.spec.max_unavailable, len(covered)) - (len(covered) - healthy)
        else:
            from_spec = healthy
        reported = pdb.status.disruptions_allowed if pdb.status is not None else None
        values = [from_spec] if reported is None else [from_spec, reported]
        out.append(Allowance(pdb, max(0, max(values)), max(0, min(values))))
    return out


def plan_violations(victims: Iterable[Pod], budgets: Iterable[Allowance]) -> dict[str, int]:
    """Budget key -> victims beyond what it allowed at most."""
    victims = list(victims)
    out = {}
    for b in budgets:
        hit = sum(1 for v in victims if b.covers(v))
        if hit > b.most:
            out[b.budget.key] = hit - b.most
    return out


def alternative_exists(
    preemptor: Gang,
    *,
    gangs: Mapping[str, Gang],
    pods: Iterable[Pod],
    nodes: Mapping[str, Node],
    budgets: list[Allowance],
    tree: TopologyTree,
) -> bool:
    """Whether evicting only whole lower-priority gangs that break no budget (at least
    allowed) makes room for `preemptor`'s pending pods in one allowed domain."""
    free = {name: dict(node.allocatable()) for name, node in nodes.items() if not node.spec.unschedulable}
    evictable: set[str] = set()
    for gang in gangs.values():
        members = [m.pod for m in gang.pods if m.pod.spec.node_name]
        if not members or gang.key == preemptor.key:
            continue
        if any(m.priority >= preemptor.priority for m in gang.pods):
            continue
        hits = Counter(b.budget.key for b in budgets for p in members if b.covers(p))
        if all(hits[b.budget.key] <= b.least for b in budgets):
            evictable.update(p.key for p in members if not p.metadata.deletion_timestamp)
    for pod in pods:
        node = pod.spec.node_name or (pod.status.nominated_node_name if pod.status else None)
        if not node or node not in free or pod.terminal or pod.key in evictable:
            continue
        if not pod.spec.node_name and any(pod.key == m.key for m in preemptor.pods):
            continue  # the preemptor's own nomination is the room it asks for
        for res, value in {**effective_requests(pod.spec), "pods": 1}.items():
            free[node][res] = free[node].get(res, 0) - value
    demands = sorted(
        (dict(m.requests) for m in preemptor.pending), key=lambda r: (-r.get("cpu", 0), -r.get("memory", 0))
    )
    constraint = preemptor.constraint
    tier = constraint.highest_tier if constraint is not None and constraint.binds else None
    domains = [list(tree.nodes_under(d)) for d in tree.domains_at_tier(tier)] if tier else [list(free)]
    anchors = {m.node_name for m in preemptor.bound}
    for domain in (d for d in domains if anchors <= set(d)):
        room = {n: dict(free[n]) for n in domain if n in free}
        placed = 0
        for demand in demands:
            for r in room.values():
                if all(r.get(k, 0) >= v for k, v in demand.items()):
                    for k, v in demand.items():
                        r[k] = r.get(k, 0) - v
                    placed += 1
                    break
        if placed == len(demands):
            return True
    return False
