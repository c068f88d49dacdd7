"""Why a gang waits, and what would let it start: the scheduling cycle's own answer, spelled out.

`explain(gang, snap, budgets)` runs the framework's runner (`engine.schedule`) on a clone of the
snapshot (nothing is reserved, nothing evicted), with the attempt budget the cycle gives an attempt
(`attempt_budget`: the same steps, so the same verdict, and never more work than the scheduler's
own attempt), and reads the verdict's step, plugin, message and exclusion counts, then asks the
same functions a few more questions:

* per tier, from single nodes up to the whole cluster: the domain that can hold the most of the
  gang's pending pods now (NodeResourcesFit's offer slots on the free capacity, after the Filter
  plugins' masks), and how many;
* what stops the rest: the Filter plugins' exclusions by reason, the resources short on nodes
  the gang may use, the tier limit its constraint sets, the GPU dialect's rules;
* whether preemption could help (DefaultPreemption on the clone): the plan's victims, their
  priorities, the PodDisruptionBudgets it touches, and why each one: with every other victim
  gone, the filters run again with it back (`engine.refilter_of`); a filter that then excludes
  more nodes names what it blocks, else it holds room the gang needs;
* suggestions, each checked by running the runner again on a changed copy of the gang: soft
  mode, the next tier up, a smaller minMember (the largest rank prefix that fits somewhere); a
  Kubernetes PodGroup (required topology only) gets the label key of the next level up instead.
  Those runs ask whether the gang fits now, so they stop before PostFilter (no preemption search).

No rule is written here a second time: every figure comes from the runner, the demand, the
offers or the planner (`tests/controller/placer/test_explain.py` checks the verdict here is the
cycle's). `short` is the one-line form the PodGroup condition carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from controller.placer.attempt_budget import AttemptBudget
from controller.placer.budgets import Budget
from controller.placer.demand import GangDemand
from controller.placer.engine import Verdict, demand_of, refilter_of, schedule
from controller.placer.framework import Code
from controller.placer.offer import Offers, evaluate
from controller.placer.plugins import default_profile
from controller.placer.plugins.node_resources_fit import insufficient
from controller.placer.snapshot import CLUSTER, ClusterIndex, Snapshot
from controller.placer.tiers import hard_limit_tier
from translations.constraints import TopologyConstraint
from translations.gangs import Gang
from translations.topology import natural_key


@dataclass(frozen=True)
class TierBest:
    """The domain of one tier that holds the most of the gang's pending pods now."""

    tier: int
    """0: single nodes; max tier + 1: the whole cluster."""
    name: str
    """The tier's name (`node`, a tierName or layer, `cluster`)."""
    domain: str
    holds: int
    allowed: bool
    """False above the gang's hard tier limit (it may not go there)."""


@dataclass(frozen=True)
class VictimView:
    pod: str
    node: str
    priority: int
    gang: str
    why: str = ""
    """What it stands in the way of: room the gang needs, or the filter it fails (its
    anti-affinity, its host port, its count in a spread), found by putting it back alone."""


@dataclass(frozen=True)
class PreemptionView:
    possible: bool
    victims: tuple[VictimView, ...] = ()
    budgets: tuple[str, ...] = ()
    """PodDisruptionBudgets covering a victim."""
    domain: str = ""
    why: str = ""


@dataclass(frozen=True)
class Explanation:
    gang: str
    pending: int
    bound: int
    min_member: int
    code: str
    step: str
    plugin: str
    message: str
    tiers: tuple[TierBest, ...] = ()
    excluded: dict[str, int] = field(default_factory=dict)
    """Filter reason -> nodes it excluded."""
    short: tuple[str, ...] = ()
    """Resources short on nodes the gang may use (`3 Insufficient nvidia.com/gpu`)."""
    limit: str = ""
    """The tier limit in words, "" without one."""
    preemption: PreemptionView | None = None
    suggestions: tuple[str, ...] = ()

    @property
    def placed(self) -> bool:
        return self.code == Code.SUCCESS.value

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "gang": self.gang,
            "pending": self.pending,
            "bound": self.bound,
            "minMember": self.min_member,
            "verdict": {"code": self.code, "step": self.step, "plugin": self.plugin, "message": self.message},
            "tiers": [vars(t) for t in self.tiers],
            "excluded": self.excluded,
            "insufficient": list(self.short),
            "tierLimit": self.limit,
            "suggestions": list(self.suggestions),
        }
        if self.preemption is not None:
            p = self.preemption
            out["preemption"] = {
                "possible": p.possible,
                "domain": p.domain,
                "why": p.why,
                "victims": [vars(v) for v in p.victims],
                "budgets": list(p.budgets),
            }
        return out

    def summary(self) -> str:
        """One line: best domain per tier, the limit, what preemption would take."""
        best = ", ".join(f"{t.domain} {t.holds}/{self.pending}" for t in self.tiers if t.allowed)
        parts = [f"best per tier: {best}"] if best else []
        if self.limit:
            parts.append(self.limit)
        if self.preemption is not None and self.preemption.possible:
            top = max((v.priority for v in self.preemption.victims), default=0)
            parts.append(f"preemption: {len(self.preemption.victims)} victim(s) up to priority {top}")
        return "; ".join(parts)


def explain(
    gang: Gang, snap: Snapshot, budgets: Sequence[Budget] = (), attempt_budget: AttemptBudget | None = None
) -> Explanation:
    """The gang's verdict on a clone of `snap`, and the figures around it (module docstring);
    `attempt_budget`: the cycle's for one attempt (by default, `run`'s default)."""
    spend = attempt_budget if attempt_budget is not None else AttemptBudget()
    verdict = schedule(gang, snap.clone(), budgets=budgets, attempt_budget=spend)
    out = Explanation(
        gang=gang.key,
        pending=len(gang.pending),
        bound=len(gang.bound),
        min_member=gang.min_member,
        code=verdict.code.value,
        step=verdict.step.value,
        plugin=verdict.plugin,
        message=verdict.message,
        excluded=dict(verdict.exclusions),
    )
    if not gang.pending or verdict.code is Code.SUCCESS or verdict.step.value in ("PreEnqueue", "PreFilter"):
        return out
    demand = demand_of(gang, snap)
    free = snap.free(gang.key, gang.priority)
    offers = evaluate(free, demand, snap.index)
    cls = demand.classes[0]
    return replace(
        out,
        tiers=tuple(tier_bests(demand, offers, snap.index)),
        short=tuple(insufficient(cls.req, cls.mask, free, snap.index)),
        limit=_limit(gang.constraint, snap.index),
        preemption=_preemption(gang, verdict, snap, budgets),
        suggestions=tuple(_suggestions(gang, snap, budgets, demand, offers)),
    )


def brief(gang: Gang, snap: Snapshot) -> str:
    """The short form, cheaply (no second attempt, no preemption search): the best domain per
    allowed tier and the tier limit, as a PodGroup condition carries them beside the verdict."""
    if not gang.pending:
        return ""
    demand = demand_of(gang, snap)
    if not demand.classes:
        return ""
    offers = evaluate(snap.free(gang.key, gang.priority), demand, snap.index)
    best = ", ".join(
        f"{t.domain} {min(t.holds, demand.n)}/{demand.n}"
        for t in tier_bests(demand, offers, snap.index)
        if t.allowed
    )
    limit = _limit(gang.constraint, snap.index)
    return "; ".join(p for p in (f"best per tier: {best}" if best else "", limit) if p)


def tier_bests(demand: GangDemand, offers: Offers, index: ClusterIndex) -> list[TierBest]:
    """Per tier, lowest first: the domain holding the most pods of the demand now (by name on ties)."""
    limit = hard_limit_tier(demand.constraint, index)
    out: list[TierBest] = []
    if index.n_nodes:
        v = _best(offers.node_offer, [index.node_names[i] for i in range(index.n_nodes)])
        out.append(
            TierBest(0, "node", index.node_names[v], int(offers.node_offer[v]), limit is None or limit >= 0)
        )
    for tier in index.tiers:
        doms = index.tier_domains[tier]
        if len(doms) == 0:
            continue
        d = int(doms[_best(offers.dom_offer[doms], [index.domain_label(int(x)) for x in doms])])
        name = index.tree.tier_names.get(tier, f"tier {tier}")
        allowed = limit is None or tier <= limit
        out.append(
            TierBest(tier, name, index.domain_label(d), min(int(offers.dom_offer[d]), demand.n), allowed)
        )
    top = index.max_tier + 1
    out.append(
        TierBest(top, CLUSTER, CLUSTER, min(int(offers.total_offer), demand.n), limit is None or limit >= top)
    )
    return out


def _best(values: np.ndarray, names: Sequence[str]) -> int:
    return min(range(len(names)), key=lambda i: (-int(values[i]), natural_key(names[i])))


def _limit(constraint: TopologyConstraint | None, index: ClusterIndex) -> str:
    if constraint is None or constraint.highest_tier is None:
        return ""
    mode = "hard" if constraint.binds else "soft"
    limit = hard_limit_tier(constraint, index) if constraint.binds else constraint.highest_tier
    return f"{mode} tier limit {constraint.highest_tier} (domains of tier {limit})"


NOT_HELPFUL = "every node is excluded for a reason no eviction removes (kube-scheduler: Preemption is not helpful for scheduling)."


def _preemption(gang: Gang, verdict: Verdict, snap: Snapshot, budgets: Sequence[Budget]) -> PreemptionView:
    if verdict.plan is None:
        # A Filter verdict of Unresolvable never reaches PostFilter: nothing was tried.
        return PreemptionView(False, why=verdict.preemption or NOT_HELPFUL)
    plan = verdict.plan
    whys = _victim_reasons(gang, snap, [v.pod for v in plan.victims])
    victims = tuple(VictimView(v.pod, v.node, v.priority, v.gang, whys.get(v.pod, "")) for v in plan.victims)
    bound = [snap.pods[v.pod] for v in plan.victims if v.pod in snap.pods]
    touched = sorted({b.key for b in budgets for p in bound if b.covers(p.namespace, p.labels)})
    return PreemptionView(True, victims, tuple(touched), domain=plan.domain, why=verdict.preemption)


EXPLAINED_VICTIMS = 32
"""Victims explained one by one (each costs a run of the filters); past that, none are."""
HOLDS_ROOM = "holds room the gang needs"


def _victim_reasons(gang: Gang, snap: Snapshot, victims: Sequence[str]) -> dict[str, str]:
    """Per victim: the filter it fails the gang on when put back alone, else that it holds room."""
    keys = [k for k in victims if k in snap.pods]
    if not keys or len(keys) > EXPLAINED_VICTIMS:
        return {}
    work = snap.clone()
    refilter = refilter_of(default_profile(), gang)
    records = {k: work.pods[k] for k in keys}
    out: dict[str, str] = {}
    with work.trial():
        for k in keys:
            work.evict(k)
        without = refilter(work, gang.pending)
        if without is None:
            return {}
        before = _excluded(without)
        for k in keys:
            with work.trial():
                work.bind(records[k])
                back = refilter(work, gang.pending)
            grew = sorted(
                r for r, n in (_excluded(back) if back is not None else {}).items() if n > before.get(r, 0)
            )
            out[k] = f"keeps the gang out: {'; '.join(grew)}" if grew else HOLDS_ROOM
    return out


def _excluded(demand: GangDemand) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in demand.classes:
        for reason, n in c.exclusions.items():
            out[reason] = max(out.get(reason, 0), n)
    return out


def _suggestions(
    gang: Gang, snap: Snapshot, budgets: Sequence[Budget], demand: GangDemand, offers: Offers
) -> list[str]:
    """Single changes that would let the gang start now, each checked by the runner."""
    out: list[str] = []
    c = gang.constraint
    keyed = gang.source == "upstream"  # Kubernetes' PodGroup: a label key, no soft mode
    if c is not None and c.binds:
        soft = (
            None
            if keyed
            else _try(replace(gang, constraint=TopologyConstraint("soft", c.highest_tier)), snap, budgets)
        )
        if soft is not None:
            out.append(f"soft mode would place it in {soft}")
        wider = [t for t in snap.index.tiers if c.highest_tier is not None and t > c.highest_tier]
        if wider:
            placed = _try(replace(gang, constraint=TopologyConstraint("hard", wider[0])), snap, budgets)
            label = snap.index.tree.tier_labels.get(wider[0]) if keyed else None
            if placed is not None and keyed:
                out.append(f"topology key {label or f'of tier {wider[0]}'} would place it in {placed}")
            elif placed is not None:
                out.append(f"highest tier {wider[0]} would place it in {placed}")
    fits = int(max(offers.dom_offer.max(initial=0), offers.node_offer.max(initial=0)))
    if 0 < fits < demand.n and fits >= 1:
        best = max(tier_bests(demand, offers, snap.index), key=lambda t: (t.allowed, t.holds, -t.tier))
        out.append(f"{best.holds} pods fit in {best.domain} if minMember were {best.holds}")
    return out


def _try(gang: Gang, snap: Snapshot, budgets: Sequence[Budget]) -> str | None:
    no_preemption = replace(default_profile(), post_filter=None)
    verdict = schedule(gang, snap.clone(), budgets=budgets, profile=no_preemption)
    if verdict.code is Code.SUCCESS and verdict.placement is not None:
        return verdict.placement.domain
    return None


def render(e: Explanation) -> str:
    """The explanation as text for people."""
    lines = [f"gang {e.gang}: {e.pending} pending, {e.bound} bound, minMember {e.min_member}"]
    lines.append(f"verdict: {e.code} at {e.step}{f' ({e.plugin})' if e.plugin else ''}")
    if e.message:
        lines.append(f"  {e.message}")
    if e.tiers:
        lines.append("best place per tier (pods of the gang it holds now):")
        for t in e.tiers:
            mark = "" if t.allowed else "   (above the tier limit)"
            lines.append(f"  tier {t.tier} {t.name}: {t.domain} holds {t.holds}/{e.pending}{mark}")
    if e.excluded:
        lines.append("nodes the filters exclude:")
        lines += [f"  {n} {reason}" for reason, n in sorted(e.excluded.items(), key=lambda kv: -kv[1])]
    if e.short:
        lines.append("short of room: " + ", ".join(e.short))
    if e.limit:
        lines.append(e.limit)
    if e.preemption is not None:
        lines += _preemption_lines(e.preemption)
    for s in e.suggestions:
        lines.append(f"suggestion: {s}")
    return "\n".join(lines) + "\n"


def _preemption_lines(p: PreemptionView) -> list[str]:
    """What preemption would evict (and the budgets it touches), or why it cannot help."""
    if not p.possible:
        return [f"preemption cannot help: {p.why}"]
    lines = [f"preemption would evict {len(p.victims)} pod(s) in {p.domain}:"]
    lines += [
        f"  {v.pod} on {v.node} (priority {v.priority}, gang {v.gang}){f': {v.why}' if v.why else ''}"
        for v in p.victims
    ]
    if p.budgets:
        lines.append(f"  PodDisruptionBudgets touched: {', '.join(p.budgets)}")
    return lines
