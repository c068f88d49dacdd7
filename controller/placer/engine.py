"""The framework's runner: one scheduling attempt for one gang, through the profile's plugins in
kube-scheduler's order (`controller.placer.framework` describes the extension points).

Plan of an attempt (`schedule`):

1. PreFilter: the gang has pending pods (else there is nothing to do); then each PreFilter
   plugin (Coscheduling: spec errors, too few members; NetworkTopology: a hard gang stranded
   around a gone node; DynamicResources: claims nothing allocates; InterPodAffinity: selectors
   that cannot be parsed; and the state the Filter plugins read). The first that fails
   decides, `Unresolvable`.
2. Filter: the demand (`filtering.build_demand`): each shape class through the Filter plugins.
   A class no node passes is `Unresolvable` (an elastic gang starts without its members).
   A gang waiting for its victims to terminate stops here with `WaitingForVictims`: it does
   not preempt again while a lower-priority pod still terminates on its nominated nodes.
3. Score and Select: NodeResourcesFit's offer slots per node, per domain and for the cluster
   on the free capacity (minus what other gangs' nominations hold), the Score plugins'
   preference, then the selection (`select`): the lowest level NetworkTopology allows that
   holds the gang, binpack, the descent and the rank layout; the GPU rules for GPU gangs. A
   gang nominated earlier that still fits on its nominated nodes goes there. When not every
   pending pod fits but minMember allows fewer, the longest rank prefix that fits is placed.
4. PostFilter: DefaultPreemption, when nothing fits.

Opportunistic batching (kube-scheduler's, for pods of one signature): a lone pod with no
inter-pod term, host port or claim, whose PreFilter, Filter and Score read nothing the binds of
its own kind change, has an `alike` key; the cycle keeps the demand of the last such pod it
placed and, for the next pod of the same key until another gang is placed (in a cycle only a
reserve changes what a demand reads; a preemption or an expiry between changes the room
alone), runs only Score's outcome and Select again on the free room (`place_alike`): the same
functions on the same inputs as a full attempt, so the same node. Anything else (nothing
fits, a nomination, preemption) is a full attempt.

Every verdict carries the `Step` that decided it and the plugin that said so. The runner
never mutates the snapshot; the cycle (`controller.placer.cycle`) reserves and permits. An
attempt runs with the cyclic collector held off (`translations.collector`): preemption's dry
run makes and drops objects per bound pod, which set off full collections for nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from controller.placer.attempt_budget import AttemptBudget, unbounded
from controller.placer.budgets import Budget
from controller.placer.demand import GangDemand, PodClass, sub_demand
from controller.placer.filtering import build_demand
from controller.placer.framework import (
    WITHOUT_LOWER,
    Code,
    CycleState,
    Profile,
    StateKey,
    Status,
    Step,
    default_profile,
)
from controller.placer.offer import Offers, evaluate, insufficient
from controller.placer.preempt import (
    BestCase,
    PreemptionPlan,
    Refilter,
    eligible_victims,
    reads_bound_pods,
    revived,
    with_freed,
)
from controller.placer.rules import MemberRules
from controller.placer.select import Placement, Where, select, select_partial, subgroups_ready
from controller.placer.snapshot import CLUSTER, I64, ClusterIndex, Snapshot
from controller.placer.terms import PodTerms
from translations import collector
from translations.gangs import Gang, GangPod


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
    step: Step = Step.PRE_FILTER
    """The extension point that decided."""
    plugin: str = ""
    """The plugin that decided ("" for the runner's own steps)."""
    placement: GangPlacement | None = None
    plan: PreemptionPlan | None = None
    exclusions: Mapping[str, int] = field(default_factory=dict)
    """Filter reason -> nodes it excluded (a node under the first reason that excluded it)."""
    reason: str = ""
    """The fit error's detail (the message without `0/N nodes are available: ` and the
    preemption clause): what the other members quote."""
    preemption: str = ""
    """The preemption clause's text, "" when the message has none."""
    left: Mapping[str, str] = field(default_factory=dict)
    """After a partial success: members left pending because no node can ever take them, each
    with its own reason (an elastic gang starts without them)."""


@dataclass(frozen=True)
class _Attempt:
    """What stays fixed through one attempt: the gang, the snapshot, the plugins, the
    disruption budgets and the attempt's step budget."""

    gang: Gang
    snap: Snapshot
    profile: Profile
    budgets: Sequence[Budget]
    attempt_budget: AttemptBudget
    state: CycleState


def schedule(
    gang: Gang,
    snap: Snapshot,
    *,
    budgets: Sequence[Budget] = (),
    attempt_budget: AttemptBudget | None = None,
    profile: Profile | None = None,
    state: CycleState | None = None,
) -> Verdict:
    """One attempt for `gang` on `snap` (see the module docstring for the steps). `state`: the
    attempt's scratchpad, when the caller wants to see which step it reached."""
    if not gang.pending:
        return Verdict(Code.SUCCESS, step=Step.PRE_FILTER, placement=GangPlacement((), "", 0))
    # Preemption's dry run removes every candidate victim and puts it back, an object or more
    # per bound pod each time, all dropped by reference counting: a full collection they set
    # off walks every parsed pod and node for nothing (over half the worst refiltered attempt).
    with collector.paused():
        return _attempt(gang, snap, budgets, attempt_budget, profile, state)


def _attempt(
    gang: Gang,
    snap: Snapshot,
    budgets: Sequence[Budget],
    attempt_budget: AttemptBudget | None,
    profile: Profile | None,
    state: CycleState | None,
) -> Verdict:
    """`schedule`'s steps, the collector held off."""
    profile = profile if profile is not None else default_profile()
    state = state if state is not None else CycleState()
    refused = pre_filter(profile, state, gang, snap)
    if refused is not None:
        return refused
    state.step = Step.FILTER
    demand = build_demand(gang, snap, profile=profile, state=state)
    state.write(DEMAND, demand)
    return _after_filter(
        _Attempt(
            gang, snap, profile, budgets, attempt_budget if attempt_budget is not None else unbounded(), state
        ),
        demand,
    )


Alike = tuple[object, ...]
"""What the demand of a lone pod is a function of, besides the snapshot (`alike_key`)."""


def alike_key(gang: Gang, snap: Snapshot, read: frozenset[str] | None = None) -> Alike | None:
    """The key under which `gang`'s demand serves every gang of the same key on a snapshot
    changed only by their binds (see the module docstring); None when it may not: not one
    pending pod alone, a topology, subgroups, slices, a GPU gang, inter-pod terms, host ports,
    claims, a nomination. Its labels count only where a bound pod's term may read them
    (`read`: `term_keys(snap)`, when the caller has it), and its namespace's labels count when
    a bound pod has a term (a namespaceSelector reads them, even in a term that reads no pod
    label; a Namespace event may change them during a cycle)."""
    if len(gang.pods) != 1 or len(gang.pending) != 1 or gang.gpu is not None or gang.error:
        return None
    if gang.constraint is not None or gang.subgroups or gang.slices or gang.kueue_tas:
        return None
    member = gang.pending[0]
    pod = member.pod
    if not member.shape or member.key in snap.nominations or PodTerms.of(pod) is not None:
        return None
    if pod.spec.resource_claims or pod.spec.node_name:
        return None
    labels = pod.metadata.labels or {}
    read = term_keys(snap) if read is None else read
    seen = tuple(sorted((k, labels[k]) for k in read if k in labels)) if read else ()
    return (
        gang.source,
        gang.min_member,
        gang.priority,
        gang.all_or_nothing,
        member.shape,
        pod.namespace,
        seen,
        snap.namespace_labels.get(pod.namespace) if snap.with_terms else None,
    )


def term_keys(snap: Snapshot) -> frozenset[str]:
    """Every label key a bound pod's inter-pod term reads: where two pods' labels must agree
    for the filters and scores to treat them alike."""
    keys: set[str] = set()
    for p in snap.with_terms.values():
        if p.terms is not None:
            for sel in p.terms.selectors():
                keys |= sel.keys()
    return frozenset(keys)


DEMAND: StateKey[GangDemand | None] = StateKey("Runner/demand")
"""The demand the attempt's Filter and Score built (what `place_alike` reuses)."""


def place_alike(gang: Gang, snap: Snapshot, like: GangDemand, profile: Profile) -> Verdict | None:
    """`schedule`'s verdict for `gang` when it is placed, from `like`, the demand of a gang of
    the same `alike_key` on this snapshot before the binds since (they change no mask and no
    score: see the module docstring); None when the full attempt must run (it would not be
    placed, or its path is not Select's)."""
    if any(not c.mask.any() for c in like.classes) or like.unknown_resource is not None:
        return None
    demand = replace(like, key=gang.key, pods=tuple(gang.pending))
    free = snap.free(gang.key, gang.priority)
    required = max(0, gang.min_member - len(gang.bound))
    placed, demand = _select(gang, demand, snap, free, required, profile)
    if placed is None or demand.n != 1:
        return None
    return Verdict(Code.SUCCESS, "", Step.SELECT, placement=_gang_placement(placed, demand, snap.index))


def pre_filter(profile: Profile, state: CycleState, gang: Gang, snap: Snapshot) -> Verdict | None:
    """Run every PreFilter plugin; the verdict of the first that fails, else None."""
    state.step = Step.PRE_FILTER
    for plugin in profile.pre_filter:
        status = plugin.pre_filter(state, gang, gang.pending, snap)
        if not status.ok:
            return _refused(status, Step.PRE_FILTER)
    return None


def demand_of(gang: Gang, snap: Snapshot, profile: Profile | None = None) -> GangDemand:
    """The demand an attempt would build (PreFilter, then Filter), whatever PreFilter says."""
    profile = profile if profile is not None else default_profile()
    state = CycleState()
    for plugin in profile.pre_filter:
        plugin.pre_filter(state, gang, gang.pending, snap)
    return build_demand(gang, snap, profile=profile, state=state)


def _refused(status: Status, step: Step) -> Verdict:
    return Verdict(status.code, status.message, step, status.plugin, reason=status.message)


def _after_filter(at: _Attempt, demand: GangDemand) -> Verdict:
    """Filter's verdict, then Score and Select, then PostFilter."""
    gang, snap, index = at.gang, at.snap, at.snap.index
    free = snap.free(gang.key, gang.priority)
    waiting = at.profile.post_filter.victims_terminating(gang, snap) if at.profile.post_filter else None
    if waiting is not None:
        core = _fit_message(demand, evaluate(free, demand, index), index, free)
        verdict = _waiting(waiting.code, index, core, waiting.message, Step.POST_FILTER)
        return replace(verdict, plugin=waiting.plugin)
    required = max(0, gang.min_member - len(gang.bound))
    left: dict[str, str] = {}
    dead = [c for c in demand.classes if not c.mask.any()]
    if dead:
        alive = sorted(p for c in demand.classes if c.mask.any() for p in c.pods)
        if gang.all_or_nothing or len(alive) < max(required, 1):
            if _eviction_may_help(at, demand):
                return _post_filter(at, demand, free)
            exclusions = _exclusions(demand)
            reason = _filter_reason(exclusions)
            msg = f"0/{index.n_nodes} nodes are available: {reason}."
            return Verdict(Code.UNRESOLVABLE, msg, Step.FILTER, exclusions=exclusions, reason=reason)
        left = _left_behind(demand, dead, index)
        demand = sub_demand(demand, alive, index)
    at.state.step = Step.SELECT
    placed, demand = _select(gang, demand, snap, free, required, at.profile)
    if placed is not None:
        placement = _gang_placement(placed, demand, index)
        return Verdict(Code.SUCCESS, "", Step.SELECT, placement=placement, left=left)
    return _post_filter(at, demand, free)


def _eviction_may_help(at: _Attempt, demand: GangDemand) -> bool:
    """Would the classes no node passes have nodes with every lower-priority pod gone (a pod
    whose anti-affinity, port or spread count keeps them out)? Only then does PostFilter run
    for them: a node excluded by its labels, taints or name stays excluded whatever is evicted."""
    if at.profile.post_filter is None or at.gang.preemption_policy == "Never":
        return False
    if not reads_bound_pods(demand, at.snap):
        return False
    return revived(demand, at.snap, refilter_of(at.profile, at.gang, at.state)) is not None


BestCases = dict[tuple[int, int, tuple[str, ...]], BestCase | None]
"""(snapshot, priority, pods' keys) -> the filters' answer with every pod that priority may
evict gone (`Refilter.without_lower`)."""
BEST_CASES: StateKey[BestCases] = StateKey("PostFilter/DefaultPreemption/bestCases", attempt=True)


def refilter_of(profile: Profile, gang: Gang, attempt: CycleState | None = None) -> Refilter:
    """The attempt's PreFilter and Filter, run again on a snapshot preemption has changed; each
    run starts from `attempt`'s per-attempt slots (`CycleState.rerun`), so what the plugins
    derived from one bound pod is not derived again on every run, and the answer with every
    lower priority gone is worked out once (`BEST_CASES`)."""
    return _Rerun(profile, gang, attempt if attempt is not None else CycleState())


@dataclass(frozen=True)
class _Rerun:
    """`refilter_of`'s runner: the profile's PreFilter and Filter for the gang, from `attempt`."""

    profile: Profile
    gang: Gang
    attempt: CycleState

    def __call__(self, snap: Snapshot, pods: Sequence[GangPod]) -> GangDemand | None:
        state = self.attempt.rerun()
        for plugin in self.profile.pre_filter:
            if not plugin.pre_filter(state, self.gang, self.gang.pending, snap).ok:
                return None
        return build_demand(self.gang, snap, profile=self.profile, state=state, pods=pods)

    def without_lower(self, snap: Snapshot, pods: Sequence[GangPod], priority: int) -> BestCase | None:
        kept = self.attempt.get(BEST_CASES, {})
        self.attempt.write(BEST_CASES, kept)
        key = (id(snap), priority, tuple(p.key for p in pods))
        if key not in kept:
            kept[key] = self._best_case(snap, pods, priority)
        return kept[key]

    def _best_case(self, snap: Snapshot, pods: Sequence[GangPod], priority: int) -> BestCase | None:
        """The filters run again for `pods` as if every pod a gang of `priority` may evict
        were gone (`WITHOUT_LOWER`: the plugins leave them out of their counts, the snapshot
        keeps them), with their room added to what is free; None when no pod may go or a
        PreFilter plugin refuses."""
        arrays = snap.arrays()
        gone = eligible_victims(snap, arrays, priority)
        if not gone.any():
            return None
        state = self.attempt.rerun()
        state.write(WITHOUT_LOWER, priority)
        for plugin in self.profile.pre_filter:
            if not plugin.pre_filter(state, self.gang, self.gang.pending, snap).ok:
                return None
        got = build_demand(self.gang, snap, profile=self.profile, state=state, pods=pods)
        return BestCase(got, with_freed(snap.free(got.key, priority), arrays, gone))


def _left_behind(demand: GangDemand, dead: Sequence[PodClass], index: ClusterIndex) -> dict[str, str]:
    """An elastic gang's members no node can ever take, each with its own reason: they stay
    pending while the rest start, once they reach minMember."""
    left: dict[str, str] = {}
    for c in dead:
        own = f"0/{index.n_nodes} nodes are available: {_filter_reason(c.exclusions)}."
        left.update((demand.pods[p].key, own) for p in c.pods)
    return left


def _select(
    gang: Gang, demand: GangDemand, snap: Snapshot, free: I64, required: int, profile: Profile
) -> tuple[Placement | None, GangDemand]:
    """Score and Select: the nominated nodes if they still hold the gang, else the selection;
    an elastic gang falls back to the longest rank prefix that fits."""
    offers = evaluate(free, demand, snap.index)
    nominated = _nominated_fit(gang, demand, snap, free)
    if nominated is None:
        for plugin in profile.group_placement:  # kube 1.37's whole placements (framework doc)
            if plugin.applies(gang, demand, snap.index):
                return plugin.place(gang, demand, snap.index, free, offers, required)
    placed = nominated or select(demand, free, snap.index, offers)
    if placed is not None and not subgroups_ready(demand, range(demand.n), gang.min_sub_groups):
        placed = None
    if placed is None and not gang.all_or_nothing and required < demand.n:
        if demand.placed_subgroups and gang.source == "volcano":  # Volcano's allocate, subgroup by subgroup
            return select_partial(demand, free, snap.index, required, gang.min_sub_groups)
        return _largest_prefix(demand, free, snap.index, max(required, 1))
    return placed, demand


def _post_filter(at: _Attempt, demand: GangDemand, free: I64) -> Verdict:
    """PostFilter: preemption, when the profile has it; the fit error either way."""
    at.state.step = Step.POST_FILTER
    index = at.snap.index
    exclusions = _exclusions(demand)
    core = _fit_message(demand, evaluate(free, demand, index), index, free)
    preemption = at.profile.post_filter
    if preemption is None:
        return _waiting(
            Code.UNSCHEDULABLE, index, core, "preemption is switched off.", Step.POST_FILTER, exclusions
        )
    got = preemption.post_filter(
        at.gang,
        demand,
        at.snap,
        free,
        at.budgets,
        at.attempt_budget,
        refilter=refilter_of(at.profile, at.gang, at.state),
    )
    verdict = _waiting(got.status.code, index, core, got.status.message, Step.POST_FILTER, exclusions)
    return replace(verdict, plugin=got.status.plugin, plan=got.plan)


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
    if demand.rules is not None and not demand.rules.holds(out):
        return None
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


def _gang_placement(placed: Placement, demand: GangDemand, index: ClusterIndex) -> GangPlacement:
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
    """The placement plugins' wording when one has its own (Koordinator's when a topology binds
    the gang, the GPU dialect's); kube-scheduler's otherwise; with the members' own rules named
    when they, not room or the filters, keep the gang out."""
    exclusions = _exclusions(demand)
    extra = [f"{v} {k}" for k, v in sorted(exclusions.items(), key=lambda kv: (-kv[1], kv[0]))]
    extra += _member_rules_clause(demand, free, index)
    why = demand.placing.unplaced(demand, index, offers)
    if why is not None:  # the placement plugins' own words (Koordinator's, the GPU dialect's)
        return ", ".join([why, *extra])
    cls = demand.classes[0]
    short = insufficient(cls.req, cls.mask, free, index)
    head = f"desiredOfferSlot: {demand.n}, offerSlot: {offers.total_offer}"
    return ", ".join([head, *extra, *short])


def _member_rules_clause(demand: GangDemand, free: I64, index: ClusterIndex) -> list[str]:
    """When the gang would fit by room and the filters alone but the rules between its members
    (their spread, their anti-affinity or host ports, a collection they must share) do not let
    it: those rules, by name and key, as the reason (kube would report each pod's failing
    PodTopologySpread, InterPodAffinity or NodePorts filter)."""
    rules = demand.rules
    if rules is None or not rules.binding:
        return []
    loose = replace(
        demand,
        rules=MemberRules(score=rules.score),
        classes=tuple(replace(c, cap=None) for c in demand.classes),
    )
    if select(loose, free, index) is None:
        return []
    names = [f"pod topology spread over {s.key} (maxSkew {s.max_skew})" for s in rules.spreads]
    names += [
        f"at most {int(c.limit.max(initial=0))} member(s) per {c.key or 'node'} (anti-affinity or host ports between members)"
        for c in rules.caps
    ]
    names += [f"members together in one {g.key} (pod affinity)" for g in rules.gathers]
    return [f"the members' own rules keep them out: {'; '.join(dict.fromkeys(names))}"]


def _compose(index: ClusterIndex, core: str, why: str) -> str:
    # kube-scheduler's FitError text, then the PostFilter's, each closed by a period: the
    # double period at the end is what kube (and the seed's Koordinator output) prints.
    return f"0/{index.n_nodes} nodes are available: {core}. preemption: {why}."


def _waiting(
    code: Code,
    index: ClusterIndex,
    core: str,
    why: str,
    step: Step,
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
