"""The fallback gang placer: one scheduling attempt for one gang, in kube-scheduler's phases.

Plan of an attempt (`schedule`):

1. prefilter: the gang is usable (no spec error), has at least minMember pods, has pending
   pods; its demand is built (shape classes, rank order, subgroups, bound members as anchors).
   A gang waiting for its victims to terminate stops here with `Wait`: it does not preempt
   again while a lower-priority pod is still terminating on one of its nominated nodes.
2. filter: each class's static node mask (taints, selectors, affinity, unschedulable). A class
   with no node at all is `Unresolvable`.
3. score: offer slots per node, per domain and for the cluster on the free capacity (minus what
   other gangs' nominations hold).
4. select: the lowest level that holds the gang, binpack, then the descent and rank layout. A
   gang that was nominated and still fits on its nominated nodes goes there. When all pending
   pods do not fit but minMember allows fewer, the largest rank prefix that fits is placed.
   All or nothing: never fewer than minMember.
5. postfilter (preempt): when nothing fits, `Unresolvable` if the gang would not fit even with
   every lower-priority pod gone; `Unschedulable` if preemption is not allowed or finds no plan;
   else `Wait` with the plan (victims, their DisruptionTarget condition, nominations).

The engine never mutates the snapshot; the caller (the simulator, the controller) applies a
`Success` or a plan and runs the next attempt.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from controller.placer.deadline import Deadline, never
from controller.placer.demand import GangDemand, build_demand, sub_demand
from controller.placer.gpu import unfit_reason
from controller.placer.offer import Offers, evaluate
from controller.placer.preempt import Budget, PreemptionPlan, plan_preemption
from controller.placer.select import Placement, Where, hard_limit_tier, select
from controller.placer.snapshot import CLUSTER, I64, ClusterIndex, Snapshot
from translations.gangs import Gang
from translations.topology import natural_key


class Code(enum.Enum):
    SUCCESS = "Success"
    UNSCHEDULABLE = "Unschedulable"
    """Does not fit now; evicting something might change that."""
    UNRESOLVABLE = "Unresolvable"
    """Preemption cannot help (a spec error, too few members, no node passes the filters, too
    big even with every lower-priority pod gone)."""
    WAIT = "Wait"
    """Victims are terminating; the gang holds its nominated nodes."""
    ERROR = "Error"
    """The attempt itself failed (an object it could not read, or a bug): what the gang reserved
    is given back, it backs off, and the cycle goes on with the other gangs."""


@dataclass(frozen=True)
class GangPlacement:
    """Where every placed pod goes, and the lowest domain holding them all."""

    pods: tuple[tuple[str, str], ...]
    """(pod key, node name), rank order."""
    domain: str
    tier: int
    chosen_tier: int = 0
    """The level selection settled on (its lowest fitting level); `tier` can only be lower."""


@dataclass(frozen=True)
class Verdict:
    code: Code
    message: str = ""
    step: str = ""
    """The phase that decided: prefilter, filter, select, preempt."""
    placement: GangPlacement | None = None
    plan: PreemptionPlan | None = None
    exclusions: Mapping[str, int] = field(default_factory=dict)
    reason: str = ""
    """The fit error's detail (the message without `0/N nodes are available: ` and the
    preemption clause): what the other members quote."""
    preemption: str = ""
    """The preemption clause's text, "" when the message has none."""
    left: Mapping[str, str] = field(default_factory=dict)
    """After a partial success: members left pending because no node can ever take them, each
    with its own reason (an elastic gang starts without them)."""


NOT_ELIGIBLE_TERMINATING = "not eligible due to terminating pod on the nominated node."
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NO_VICTIMS = "no set of lower-priority pods whose eviction lets the whole gang fit."
NO_VICTIMS_IN_TIME = "no set of lower-priority pods found within the attempt's deadline; tried again later."


def schedule(
    gang: Gang, snap: Snapshot, *, budgets: Sequence[Budget] = (), deadline: Deadline | None = None
) -> Verdict:
    """One attempt for `gang` on `snap` (see the module docstring for the phases); the
    preemption search stops at `deadline` (none: it runs to its step budget)."""
    index = snap.index
    # --- prefilter ---
    if gang.error:
        return Verdict(Code.UNRESOLVABLE, gang.error, "prefilter", reason=gang.error)
    if len(gang.pods) < gang.min_member:
        return Verdict(
            Code.UNRESOLVABLE,
            f"gang {gang.name} has {len(gang.pods)} pod(s), fewer than its minMember {gang.min_member}",
            "prefilter",
        )
    pending = gang.pending
    if not pending:
        return Verdict(Code.SUCCESS, "", "prefilter", placement=GangPlacement((), "", 0))
    stranded = _stranded(gang, index)
    if stranded is not None:
        return Verdict(Code.UNRESOLVABLE, stranded, "prefilter", reason=stranded)
    demand = build_demand(gang, index, snap=snap)
    free = snap.free(gang.key, gang.priority)
    waiting = _terminating_on_nominated(gang, snap)
    if waiting:
        offers = evaluate(free, demand, index)
        core = _fit_message(demand, offers, index, free)
        return _waiting(Code.WAIT, index, core, NOT_ELIGIBLE_TERMINATING, "prefilter")
    # --- filter ---
    exclusions = _exclusions(demand)
    if demand.unknown_resource is not None:
        core = f"{index.n_nodes} Insufficient {demand.unknown_resource}"
        msg = f"0/{index.n_nodes} nodes are available: {core}."
        return Verdict(Code.UNRESOLVABLE, msg, "filter", exclusions=exclusions, reason=core)
    required = max(0, gang.min_member - len(gang.bound))
    dead = [c for c in demand.classes if not c.mask.any()]
    left: dict[str, str] = {}
    if dead:
        alive = sorted(p for c in demand.classes if c.mask.any() for p in c.pods)
        if gang.all_or_nothing or len(alive) < max(required, 1):
            reason = _filter_reason(exclusions)
            msg = f"0/{index.n_nodes} nodes are available: {reason}."
            return Verdict(Code.UNRESOLVABLE, msg, "filter", exclusions=exclusions, reason=reason)
        # Elastic: members no node can ever take stay pending with their own reason; the rest
        # still start when they reach minMember.
        for c in dead:
            own = f"0/{index.n_nodes} nodes are available: {_filter_reason(c.exclusions)}."
            left.update((demand.pods[p].key, own) for p in c.pods)
        demand = sub_demand(demand, alive, index)
        exclusions = _exclusions(demand)
    # --- score + select ---
    offers = evaluate(free, demand, index)
    placed = _nominated_fit(gang, demand, snap, free) or select(demand, free, index, offers)
    if placed is None and not gang.all_or_nothing and required < demand.n:
        placed, demand = _largest_prefix(demand, free, index, max(required, 1))
    if placed is not None:
        return Verdict(
            Code.SUCCESS, "", "select", placement=_gang_placement(placed, demand, gang, index), left=left
        )
    # --- postfilter: preemption ---
    core = _fit_message(demand, offers, index, free)
    if gang.preemption_policy == "Never":
        return _waiting(Code.UNSCHEDULABLE, index, core, NOT_ELIGIBLE_NEVER, "preempt", exclusions)
    if not _fits_without_lower(demand, snap, free):
        return _waiting(Code.UNRESOLVABLE, index, core, NO_VICTIMS, "preempt", exclusions)
    deadline = deadline if deadline is not None else never()
    plan = plan_preemption(
        demand, snap, free, budgets, scheduler=gang.scheduler_name or "topobridge", deadline=deadline
    )
    if plan is None:
        why = NO_VICTIMS_IN_TIME if deadline.hit else NO_VICTIMS
        return _waiting(Code.UNSCHEDULABLE, index, core, why, "preempt", exclusions)
    # The gang waits for its victims; this is what its pods say meanwhile.
    verdict = _waiting(Code.WAIT, index, core, NOT_ELIGIBLE_TERMINATING, "preempt", exclusions)
    return replace(verdict, plan=plan)


def _stranded(gang: Gang, index: ClusterIndex) -> str | None:
    """A hard constraint cannot be kept around a member bound to a node that is gone: its
    domain is unknown, so the rest would be placed as if it were not there. The gang waits
    until the member is deleted (the pod garbage collector removes pods of deleted nodes)."""
    c = gang.constraint
    if c is None or not c.binds:
        return None
    for m in gang.bound:
        if m.node_name and m.node_name not in index.node_pos:
            return (
                f"member {m.key} is bound to node {m.node_name}, which is gone: the gang's hard "
                "topology constraint waits until that pod is deleted"
            )
    return None


def _terminating_on_nominated(gang: Gang, snap: Snapshot) -> bool:
    nominated = {n.node for n in snap.nominations.values() if n.gang == gang.key}
    if not nominated:
        return False
    return any(
        p.terminating and p.node in nominated and p.priority < gang.priority for p in snap.pods.values()
    )


def _nominated_fit(gang: Gang, demand: GangDemand, snap: Snapshot, free: I64) -> Placement | None:
    """kube-scheduler tries a pod's nominated node first; a gang takes its nominated nodes when
    every pending pod has one and they all still fit. Only what a pod asks for must fit, as in
    NodeResourcesFit: the node may be short of something else (a GPU a higher-priority
    nomination holds while its victim terminates)."""
    noms = {k: n for k, n in snap.nominations.items() if n.gang == gang.key}
    if not noms or any(p.key not in noms for p in demand.pods):
        return None
    work = free.copy()
    out: list[tuple[int, int]] = []
    for pos, p in enumerate(demand.pods):
        node = noms[p.key].node
        cls = next(c for c in demand.classes if pos in c.pods)
        if not cls.mask[node]:
            return None
        work[node] -= cls.req
        if (work[node][cls.req > 0] < 0).any():
            return None
        out.append((pos, node))
    return Placement(tuple(out), Where("node", out[0][1]), nominated=True)


def _largest_prefix(
    demand: GangDemand, free: I64, index: ClusterIndex, required: int
) -> tuple[Placement | None, GangDemand]:
    """Fewer pods than all, never fewer than `required`: the longest rank prefix that fits
    (feasibility only shrinks as pods are added, so a binary search finds it)."""
    lo, hi = required, demand.n - 1
    best: tuple[Placement | None, GangDemand] = (None, demand)
    while lo <= hi:
        mid = (lo + hi) // 2
        d = sub_demand(demand, range(mid), index)
        got = select(d, free, index)
        if got is not None:
            best = (got, d)
            lo = mid + 1
        else:
            hi = mid - 1
    return best


def _gang_placement(placed: Placement, demand: GangDemand, gang: Gang, index: ClusterIndex) -> GangPlacement:
    positions, nodes = zip(*placed.assignments, strict=True) if placed.assignments else ((), ())
    names = index.node_names
    keys = [demand.pods[pos].key for pos in positions]
    pods = tuple(zip(keys, [names[v] for v in nodes], strict=True))
    domain, tier = lowest_common(index, {min(nodes), max(nodes), *(int(a) for a in demand.anchors)})
    chosen_tier = tier if placed.nominated else placed.chosen.tier(index)
    return GangPlacement(pods=pods, domain=domain, tier=tier, chosen_tier=chosen_tier)


def lowest_common(index: ClusterIndex, nodes: set[int]) -> tuple[str, int]:
    """The lowest place holding every node: the node itself, a domain, or the cluster.

    Domains are node ranges, so it is the innermost domain of the first node whose range
    reaches the last node."""
    lo, hi = min(nodes), max(nodes)
    if lo == hi:
        return index.node_names[lo], 0
    for d in index.node_anc[lo]:
        if d < 0:
            break
        if index.dom_end[d] > hi:
            return index.domain_label(int(d)), int(index.dom_tier[d])
    return CLUSTER, index.max_tier + 1


def _fits_without_lower(demand: GangDemand, snap: Snapshot, free: I64) -> bool:
    """Would the gang fit if every lower-priority, not yet terminating pod were gone?"""
    arrays = snap.arrays()
    lower = (arrays.priority < demand.priority) & ~arrays.terminating
    if not lower.any():
        return False
    optimistic = free.copy()
    np.add.at(optimistic, arrays.node[lower], arrays.req[lower])
    # The same selection as a real attempt: exact for the uniform and leader shapes.
    return select(demand, optimistic, snap.index) is not None


def _filter_reason(exclusions: Mapping[str, int]) -> str:
    """kube's FitError detail: the filters' exclusion counts, largest first."""
    parts = ", ".join(f"{v} {k}" for k, v in sorted(exclusions.items(), key=lambda kv: (-kv[1], kv[0])))
    return parts or "no nodes"


def _exclusions(demand: GangDemand) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in demand.classes:
        for k, v in c.exclusions.items():
            out[k] = max(out.get(k, 0), v)
    return out


def _fit_message(demand: GangDemand, offers: Offers, index: ClusterIndex, free: I64) -> str:
    """Koordinator's wording when a topology binds the gang; kube-scheduler's otherwise."""
    exclusions = _exclusions(demand)
    extra = [f"{v} {k}" for k, v in sorted(exclusions.items(), key=lambda kv: (-kv[1], kv[0]))]
    if demand.gpu is not None and demand.kind == "uniform":
        return ", ".join([unfit_reason(demand.gpu, offers.slots, demand.n), *extra])
    c = demand.constraint
    if c is not None and (c.binds or c.mode == "soft") and index.n_domains:
        tier = hard_limit_tier(demand, index) if c.binds else (c.highest_tier or index.max_tier)
        if tier:
            doms = sorted(
                index.tier_domains.get(tier, np.zeros(0, np.int64)).tolist(),
                key=lambda d: natural_key(index.domain_label(d)),
            )
            listing = ";".join(
                f"topology topologyNode {index.domain_label(d)}: {int(offers.dom_offer[d])}" for d in doms
            )
        else:
            listing = ";".join(
                f"topology topologyNode {index.node_names[v]}: {int(offers.node_offer[v])}"
                for v in range(index.n_nodes)
            )
        core = f"no candidate topology nodes can accommodate job, desiredOfferSlot: {demand.n}, {listing}"
        return ", ".join([core, *extra])
    insufficient = _insufficient(demand, free, index)
    head = f"desiredOfferSlot: {demand.n}, offerSlot: {offers.total_offer}"
    return ", ".join([head, *extra, *insufficient])


def _insufficient(demand: GangDemand, free: I64, index: ClusterIndex) -> list[str]:
    """kube's `N Insufficient <resource>`: nodes that pass the filters but lack room for one pod."""
    cls = demand.classes[0]
    short = (free < cls.req) & cls.mask[:, None]
    counts = short.sum(axis=0)
    return [f"{int(counts[r])} Insufficient {index.resources[r]}" for r in np.flatnonzero(counts)]


def _compose(index: ClusterIndex, core: str, why: str) -> str:
    # kube-scheduler's FitError text, then the PostFilter's, each closed by a period: the
    # double period at the end is what kube (and the seed's Koordinator output) prints.
    return f"0/{index.n_nodes} nodes are available: {core}. preemption: {why}."


def _waiting(
    code: Code,
    index: ClusterIndex,
    core: str,
    why: str,
    step: str,
    exclusions: Mapping[str, int] | None = None,
) -> Verdict:
    return Verdict(
        code,
        _compose(index, core, why),
        step,
        exclusions=dict(exclusions or {}),
        reason=core,
        preemption=why,
    )


def pod_messages(gang: Gang, verdict: Verdict, *, waiting_for_bound: int = 0) -> dict[str, str]:
    """What each pending member's PodScheduled condition says after a failed attempt.

    As Koordinator's coscheduling reports it: the first pending member (rank order, the pod the
    attempt was made for) carries the fit error; every other member says its GangGroup was
    rejected because of that pod, quoting the reason, how many members already wait to be
    bound, and, when the attempt reached preemption, that preemption was already attempted by
    the first member. After a success, only the members an elastic gang left behind."""
    pending = gang.pending
    if verdict.code is Code.SUCCESS:
        return dict(verdict.left)
    if not pending:
        return {}
    first = pending[0].key
    out = {first: verdict.message}
    reason = verdict.reason or verdict.message
    other = (
        f'GangGroup "{gang.name}" gets rejected due to member Pod "{first}" is unschedulable with '
        f'reason "{reason}", alreadyWaitForBound: {waiting_for_bound}'
    )
    if verdict.preemption:
        other += f". preemption: preemption already attempted by {first} with message {verdict.preemption}."
    for p in pending[1:]:
        out[p.key] = other
    return out
