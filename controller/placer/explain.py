"""Why a gang waits, and what would let it start: the scheduling cycle's own answer, spelled out.

`explain_in_cycle(cycle, key)` is the answer for the whole cluster state: it walks one
scheduling cycle (the caller's, fresh: `controller.placer.cycle.SchedulingCycle`, which this
module does not import) as the scheduler would, gang after gang in queue order, so the gangs
ahead of this one take their room, reserve and preempt first; then it attempts the gang itself
and reads that attempt's verdict (its code, its Step, its plugin):

* a gang the queue leaves out is not attempted: its pods name a schedulerName this scheduler
  does not serve (`NotServed` at `Queue`);
* a gang held before it is attempted (a scheduling gate at PreEnqueue, Permit while it
  assembles) says so, and nothing more is asked;
* a gang placed says where it lands (the domain, the tier, each pod's node); an elastic gang
  placed in part says where its first members land, and its waiting members get the next
  attempt's verdict on the snapshot the placement leaves (the cycle's next answer for them);
* a gang not placed gets the attempt's verdict before its reservation: with a preemption plan,
  the fit error as it stands before any victim is evicted, and the plan; then the figures below,
  on the snapshot as the gang found it.

The walk goes on past the gang (`CycleWalk`, `explain_in_walk`): a tool asking many questions of
one cluster state (the ui) keeps it, and a gang later in the queue costs only the attempts
between.

`explain(gang, snap, budgets)` judges a gang alone on `snap` (what the cycle walk does for the
gang's own attempt): it runs the framework's runner (`engine.schedule`) on a clone of the
snapshot (nothing is reserved, nothing evicted), with the attempt budget the cycle gives an
attempt (`attempt_budget`: the same steps, so the same verdict, and never more work than the
scheduler's own attempt), and reads the verdict's step, plugin, message and exclusion counts,
then asks the same functions a few more questions:

* per tier, from single nodes up to the whole cluster: the domain that can hold the most of the
  gang's pending pods now (NodeResourcesFit's offer slots on the free capacity, after the Filter
  plugins' masks), and how many;
* what stops the rest: the Filter plugins' exclusions by reason, the resources short on nodes
  the gang may use, the tier limit its constraint sets, and the limits that hold it where room
  would (`held_by`, cheap enough for the brief): the GPU dialect's `max-nodes` and
  `min-gpus-per-node`, its members' required anti-affinity among themselves (one per value of
  the term's key, too few values with room in any place it may use), the nodes' `pods`
  allocatable (only where, with the count unbounded, a place would hold it), each by its
  field path and value;
* whether preemption could help (DefaultPreemption on the clone): the plan's victims, their
  priorities, the PodDisruptionBudgets it touches, and why each one: with every other victim
  gone, the filters run again with it back (`engine.refilter_of`); a filter that then excludes
  more nodes names what it blocks, else it holds room the gang needs;
* suggestions, in the fields of the gang's own dialect (`words_of`: a Job's `spec.parallelism`,
  an LWS's `leaderWorkerTemplate.size`, Volcano's `minMember`/`minAvailable` and
  `networkTopology`, Koordinator's `network-topology-spec`, Kueue's annotations, a Kubernetes
  PodGroup's `minCount` and `topologyKey`), each checked by running the runner again on a changed
  copy of the gang: soft mode, the next tier up, a smaller gang (the most pods an allowed domain
  holds; only that many pods where the field is the pod count), and per limit that holds it the
  change that lifts it (`max-nodes` at the nodes it needs, a lower `min-gpus-per-node`, the
  anti-affinity term as a preference, the `pods` allocatable of the nodes where it would land
  raised by what each lacks). Those runs ask whether the gang fits now, so they stop before
  PostFilter (no preemption search).

No rule is written here a second time: every figure comes from the cycle, the runner, the
demand, the offers or the planner (`tests/controller/placer/test_explain_agrees_with_simulate.py`
runs explain and `simulate` over every scenario: explain never says Success for a gang simulate
leaves pending). `brief` is the short form the PodGroup condition carries, after a verdict
about room.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from controller.placer.attempt_budget import AttemptBudget
from controller.placer.budgets import Budget
from controller.placer.demand import GangDemand
from controller.placer.engine import GangPlacement, Verdict, demand_of, refilter_of, schedule
from controller.placer.framework import Code, Profile, Step
from controller.placer.gpu import GpuRules, fewest_nodes, node_limit, usable_slots
from controller.placer.offer import Offers, class_slots, evaluate, fits_rows
from controller.placer.plugins import default_profile
from controller.placer.plugins.node_resources_fit import insufficient
from controller.placer.preempt import PreemptionPlan
from controller.placer.snapshot import CLUSTER, I64, ClusterIndex, Snapshot
from controller.placer.tiers import hard_limit_tier
from translations import gpu, kueue, lws
from translations.constraints import TopologyConstraint
from translations.expand import JOB_NAME_LABELS, VC_JOB_NAME
from translations.gangs import Gang, placement_shape
from translations.koordinator import GANG_MIN_AVAILABLE
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
class Landing:
    """Where a gang the attempt places lands: the lowest domain holding it, and each pod's node."""

    domain: str
    tier: int
    pods: tuple[tuple[str, str], ...]


NOT_SERVED, QUEUE = "NotServed", "Queue"
"""The verdict of a gang the queue leaves out (its schedulerName is not served): no attempt."""


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
    held: tuple[str, ...] = ()
    """Limits that keep it out where room would hold it (`held_by`): the GPU dialect's max-nodes
    or min-gpus-per-node, its members' anti-affinity among themselves, the nodes' pods
    allocatable; each names its field and value."""
    preemption: PreemptionView | None = None
    suggestions: tuple[str, ...] = ()
    lands: Landing | None = None
    """Where the attempt places it (an elastic gang placed in part: its first members)."""
    ahead: tuple[str, ...] = ()
    """The gangs ahead of it in the queue that took room this cycle (placed or preempting)."""

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
            "heldBy": list(self.held),
            "suggestions": list(self.suggestions),
            "ahead": list(self.ahead),
        }
        if self.lands is not None:
            out["lands"] = {
                "domain": self.lands.domain,
                "tier": self.lands.tier,
                "pods": dict(self.lands.pods),
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
        parts += self.held
        if self.preemption is not None and self.preemption.possible:
            top = max((v.priority for v in self.preemption.victims), default=0)
            parts.append(f"preemption: {len(self.preemption.victims)} victim(s) up to priority {top}")
        return "; ".join(parts)


def explain(
    gang: Gang, snap: Snapshot, budgets: Sequence[Budget] = (), attempt_budget: AttemptBudget | None = None
) -> Explanation:
    """The gang alone on a clone of `snap`, and the figures around it (module docstring);
    `attempt_budget`: the cycle's for one attempt (by default, `run`'s default)."""
    spend = attempt_budget if attempt_budget is not None else AttemptBudget()
    verdict = schedule(gang, snap.clone(), budgets=budgets, attempt_budget=spend)
    return _figures(_head(gang), gang, verdict, snap, budgets)


# --- the cycle's answer for the whole cluster state --------------------------------------------


class CycleOptions(Protocol):
    """What `explain_in_cycle` reads of the cycle's options (`cycle.CycleOptions`)."""

    @property
    def profile(self) -> Profile: ...

    def shape(self, gang: Gang) -> Gang: ...

    def budget(self) -> AttemptBudget: ...


class Bound(Protocol):
    """A bind the cycle planned (`cycle.Bind`)."""

    @property
    def pods(self) -> tuple[tuple[str, str], ...]: ...

    @property
    def domain(self) -> str: ...

    @property
    def tier(self) -> int: ...


class Preempting(Protocol):
    """A preemption the cycle planned (`cycle.Preemption`)."""

    @property
    def plan(self) -> PreemptionPlan: ...


class Attempted(Protocol):
    """One gang's outcome in the cycle (`cycle.Outcome`)."""

    @property
    def code(self) -> Code: ...

    @property
    def step(self) -> Step: ...

    @property
    def message(self) -> str: ...


class Planned(Protocol):
    """The cycle's plan so far (`cycle.CyclePlan`)."""

    def added_for(self, gang: str) -> tuple[Bound | None, Preempting | None, object]: ...


class Cycle(Protocol):
    """A fresh scheduling cycle over the cluster's view (`cycle.SchedulingCycle`): its queue,
    its attempts (each reserving on the cycle's snapshot), its plan."""

    @property
    def snapshot(self) -> Snapshot: ...

    @property
    def budgets(self) -> Sequence[Budget]: ...

    @property
    def options(self) -> CycleOptions: ...

    @property
    def plan(self) -> Planned: ...

    def queue(self) -> list[Gang]: ...

    def attempt(self, gang: Gang) -> Attempted: ...

    @property
    def last_verdict(self) -> Verdict | None:
        """The engine's verdict in the latest attempt, before its reservation."""


@dataclass
class CycleWalk:
    """One scheduling cycle walked gang by gang in queue order, kept between questions about one
    cluster state: a question about a gang later in the queue goes on from where the last one
    stopped (the gangs before it are not attempted again, as the scheduler attempts each once);
    one about a gang the walk has passed needs a fresh walk (`reaches`)."""

    cycle: Cycle
    queue: list[Gang]
    done: int = 0
    """Gangs of the queue attempted so far."""
    ahead: list[str] = field(default_factory=list)
    """What the attempted gangs took this cycle (placed or preempting), in queue order."""

    @classmethod
    def of(cls, cycle: Cycle) -> CycleWalk:
        return cls(cycle, cycle.queue())

    @cached_property
    def _positions(self) -> dict[str, int]:
        return {g.key: i for i, g in enumerate(self.queue)}

    def position(self, gang: Gang) -> int | None:
        """The gang's place in the queue, None when the queue leaves it out (a lookup: the
        what-if asks it once for each of a job's thousands of gangs)."""
        return self._positions.get(gang.key)

    def reaches(self, gang: Gang) -> bool:
        """Whether the walk can still answer for `gang` (it has not attempted it yet)."""
        i = self.position(gang)
        return i is None or i >= self.done

    def step(self) -> Attempted:
        """The next gang's attempt, and what it took."""
        gang = self.queue[self.done]
        outcome = self.cycle.attempt(gang)
        self.done += 1
        bind, preempting, _ = self.cycle.plan.added_for(gang.key)
        if bind is not None:
            self.ahead.append(f"{gang.key} placed in {bind.domain}")
        if preempting is not None:
            self.ahead.append(f"{gang.key} preempting in {preempting.plan.domain}")
        return outcome


def explain_in_cycle(cycle: Cycle, gang: Gang, served: Collection[str]) -> Explanation:
    """The cycle's own answer for `gang` (module docstring): the gangs ahead of it in the queue
    are attempted first, as the scheduler attempts them; `served`: the schedulerNames the cycle
    serves (for the words of a gang it leaves out)."""
    return explain_in_walk(CycleWalk.of(cycle), gang, served)


def explain_in_walk(walk: CycleWalk, gang: Gang, served: Collection[str]) -> Explanation:
    """`explain_in_cycle` on a walk that has not passed `gang` yet (`CycleWalk.reaches`); the
    walk goes on past it, so a later gang's question can take it up."""
    head = _head(gang)
    if not gang.pending:
        return replace(
            head, code=Code.SUCCESS.value, step=Step.PRE_FILTER.value, message="every member is bound"
        )
    at = walk.position(gang)
    if at is None:
        return replace(head, code=NOT_SERVED, step=QUEUE, plugin="", message=not_served(gang, served))
    if at < walk.done:
        raise ValueError(f"gang {gang.key}: the walk has passed it (ask a fresh walk)")
    while walk.done < at:
        walk.step()
    head = replace(head, ahead=tuple(walk.ahead))
    cycle = walk.cycle
    before, budgets = cycle.snapshot.clone(), list(cycle.budgets)
    outcome = walk.step()
    bind, _, _ = cycle.plan.added_for(gang.key)
    if outcome.code is Code.SUCCESS and bind is not None:
        return _landed(cycle, gang, head, bind)
    verdict = cycle.last_verdict
    if outcome.step in (Step.PRE_ENQUEUE, Step.PERMIT) or outcome.code is Code.ERROR or verdict is None:
        # Held before an attempt, or by Permit, or the attempt failed: the outcome is all there is.
        return replace(head, code=outcome.code.value, step=outcome.step.value, message=outcome.message)
    # The attempt's own verdict, on the snapshot as the gang found it: the engine is not asked
    # the same question again (that doubled the scheduler's work for every gang explained).
    return _figures(head, gang, verdict, before, budgets, cycle.options.profile)


def not_served(gang: Gang, served: Collection[str]) -> str:
    """Why the queue leaves a gang out: the schedulerName its pods name."""
    names = ", ".join(sorted(served))
    return (
        f'not queued: its pods name schedulerName "{gang.scheduler_name}", which this scheduler does '
        f"not serve (it serves {names}): the scheduler of that name places it; until one runs it waits"
    )


def _head(gang: Gang) -> Explanation:
    return Explanation(
        gang=gang.key,
        pending=len(gang.pending),
        bound=len(gang.bound),
        min_member=gang.min_member,
        code="",
        step="",
        plugin="",
        message="",
    )


def _landed(cycle: Cycle, gang: Gang, head: Explanation, bind: Bound) -> Explanation:
    """A placed gang: where it lands. Placed in part (an elastic gang), its waiting members get
    the next attempt's verdict on the snapshot the placement leaves."""
    lands = Landing(bind.domain, bind.tier, bind.pods)
    placed = replace(head, code=Code.SUCCESS.value, step=Step.SELECT.value, lands=lands)
    if len(bind.pods) >= len(gang.pending):
        return placed
    rest = with_bound(gang, dict(bind.pods))
    options, snap, budgets = cycle.options, cycle.snapshot, list(cycle.budgets)
    verdict = schedule(
        options.shape(rest),
        snap.clone(),
        budgets=budgets,
        attempt_budget=options.budget(),
        profile=options.profile,
    )
    if verdict.code is Code.SUCCESS:  # the next cycle places them: the gang is placed whole
        return placed
    return _figures(replace(placed, pending=len(rest.pending)), rest, verdict, snap, budgets, options.profile)


def with_bound(gang: Gang, placed: Mapping[str, str]) -> Gang:
    """The gang once the placed pods (pod -> node) are bound, as the next cycle reads it."""

    def bound(member: Any) -> Any:
        node = placed.get(member.key)
        if node is None:
            return member
        spec = member.pod.spec.model_copy(update={"node_name": node})
        return replace(member, pod=member.pod.model_copy(update={"spec": spec}))

    return replace(gang, pods=tuple(bound(m) for m in gang.pods))


def _figures(
    head: Explanation,
    gang: Gang,
    verdict: Verdict,
    snap: Snapshot,
    budgets: Sequence[Budget],
    profile: Profile | None = None,
) -> Explanation:
    """The verdict, and the figures around it on the snapshot the attempt ran on."""
    message = verdict.message
    if verdict.plan is not None and verdict.reason:
        # The state before the preemption: nothing is evicted or nominated yet (the plan says what would be).
        message = f"0/{snap.index.n_nodes} nodes are available: {verdict.reason}."
    out = replace(
        head,
        code=verdict.code.value,
        step=verdict.step.value,
        plugin=verdict.plugin,
        message=message,
        excluded=dict(verdict.exclusions),
    )
    if verdict.code is Code.SUCCESS and verdict.placement is not None and head.lands is None:
        p = verdict.placement
        return replace(out, lands=Landing(p.domain, p.tier, p.pods))
    if not gang.pending or verdict.code is Code.SUCCESS or verdict.step.value in ("PreEnqueue", "PreFilter"):
        return out
    demand = demand_of(gang, snap, profile)
    free = snap.free(gang.key, gang.priority)
    offers = evaluate(free, demand, snap.index)
    cls = demand.classes[0]
    held = held_by(gang, snap, demand, offers, free)
    return replace(
        out,
        tiers=tuple(tier_bests(demand, offers, snap.index)),
        short=tuple(insufficient(cls.req, cls.mask, free, snap.index)),
        limit=_limit(gang.constraint, snap.index),
        held=tuple(h.what for h in held),
        preemption=_preemption(gang, verdict, snap, budgets),
        suggestions=(
            *_suggestions(gang, snap, budgets, demand, offers),
            *_held_suggestions(gang, snap, budgets, held, free),
        ),
    )


ROOM_STEPS = (Step.FILTER, Step.SCORE, Step.SELECT, Step.POST_FILTER)
"""The steps whose verdict is about room: only after them does the best domain per tier say
anything (a gate, a spec error, a gang still assembling wait for something else)."""


def brief(gang: Gang, snap: Snapshot, step: Step | None = None) -> str:
    """The short form, cheaply (no second attempt, no preemption search): the best domain per
    allowed tier and the tier limit, as a PodGroup condition carries them beside the verdict.
    `step`: the Step that decided the attempt's verdict; none is given after a step that is not
    about room (`ROOM_STEPS`)."""
    if not gang.pending or (step is not None and step not in ROOM_STEPS):
        return ""
    demand = demand_of(gang, snap)
    if not demand.classes:
        return ""
    free = snap.free(gang.key, gang.priority)
    offers = evaluate(free, demand, snap.index)
    held = [h.short for h in held_by(gang, snap, demand, offers, free)]
    best = ", ".join(
        f"{t.domain} {min(t.holds, demand.n)}/{demand.n}"
        for t in tier_bests(demand, offers, snap.index)
        if t.allowed
    )
    limit = _limit(gang.constraint, snap.index)
    return "; ".join(p for p in (*held, f"best per tier: {best}" if best else "", limit) if p)


def tier_bests(demand: GangDemand, offers: Offers, index: ClusterIndex) -> list[TierBest]:
    """Per tier, lowest first: the domain holding the most pods of the demand now (by name on
    ties); a GPU gang's under its rules (`under_gpu_rules`)."""
    offers = under_gpu_rules(demand, offers, index)
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


def under_gpu_rules(demand: GangDemand, offers: Offers, index: ClusterIndex) -> Offers:
    """A GPU gang's offers as its rules let it use them (`controller.placer.gpu`): per place, the
    pods its `node_limit` fullest usable nodes hold (a node short of `min-gpus-per-node` holds
    none), so a domain `max-nodes` keeps it out of does not read as holding it. Other gangs'
    offers as they are."""
    rules, n = demand.gpu, demand.n
    if rules is None or demand.kind != "uniform":
        return offers
    usable = usable_slots(rules, offers.slots, n)
    k = node_limit(rules, n)

    def held(seg: I64) -> int:
        return min(int(np.sort(seg)[::-1][:k].sum()), n)

    dom = np.array(
        [held(usable[int(index.dom_start[d]) : int(index.dom_end[d])]) for d in range(index.n_domains)],
        dtype=np.int64,
    )
    node = np.minimum(usable, n) if k >= 1 else np.zeros_like(usable)
    return replace(offers, node_offer=node, dom_offer=dom, total_offer=held(usable))


def _best(values: np.ndarray, names: Sequence[str]) -> int:
    return min(range(len(names)), key=lambda i: (-int(values[i]), natural_key(names[i])))


def _limit(constraint: TopologyConstraint | None, index: ClusterIndex) -> str:
    if constraint is not None and constraint.label_key is not None:
        return f"hard at node label {constraint.label_key} (the nodes sharing one value)"
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


@dataclass(frozen=True)
class Words:
    """The fields a gang's own dialect writes for each change a suggestion makes."""

    count: Callable[[int], str] | None
    """The gang's size field set to k (`minMember: 3`, `parallelism: 3`); None: nothing to shrink."""
    fewer_pods: bool = False
    """The field is the number of pods (a Job's parallelism, an LWS group's size): with it
    smaller, fewer pods exist, so the re-check runs only the first k."""
    soft: str | None = None
    """Its soft mode, None where the dialect has none."""
    tier: Callable[[int, str, str], str] | None = None
    """(tier, tier name, its node label key) -> its hard limit at that tier."""


def words_of(gang: Gang) -> Words:
    """The gang's dialect's fields: the object that owns its pods (an LWS, a Volcano Job, a
    batch/v1 Job) by its pods' labels, else its PodGroup or annotations (`Gang.source`)."""
    labels = (gang.pods[0].pod.metadata.labels or {}) if gang.pods else {}
    lws_name = labels.get(lws.NAME_LABEL)
    nt = "spec.networkTopology"
    if lws_name and gang.source == "volcano":
        return Words(
            lambda k: f"LeaderWorkerSet {lws_name}: spec.leaderWorkerTemplate.size: {k}",
            fewer_pods=True,
            soft=f"LeaderWorkerSet {lws_name}: {nt}.mode: soft",
            tier=lambda t, _n, _k: f"LeaderWorkerSet {lws_name}: {nt}.highestTierAllowed: {t}",
        )
    owner = labels.get(VC_JOB_NAME) if gang.source == "volcano" else None
    what = f"Job {owner}" if owner else f"PodGroup {gang.name.split('/', 1)[1]}"
    if gang.source == "volcano":
        return Words(
            lambda k: f"{what}: {'spec.minAvailable' if owner else 'spec.minMember'}: {k}",
            soft=f"{what}: {nt}.mode: soft",
            tier=lambda t, _n, _k: f"{what}: {nt}.highestTierAllowed: {t}",
        )
    return _words_by_source(gang, labels)


def _words_by_source(gang: Gang, labels: Mapping[str, str]) -> Words:
    name = gang.name.split("/", 1)[1]
    spec = "gang.scheduling.koordinator.sh/network-topology-spec"
    koord_soft = f'{spec}: "strategy": "PreferGather" instead of "MustGather"'
    koord_tier = lambda _t, n, _k: f'{spec}: "MustGather" at "layer": "{n}"'  # noqa: E731
    if gang.source in ("koordinator", "scheduler-plugins"):
        return Words(lambda k: f"PodGroup {name}: spec.minMember: {k}", soft=koord_soft, tier=koord_tier)
    if gang.source == "koordinator-annotations":
        return Words(lambda k: f'{GANG_MIN_AVAILABLE}: "{k}"', soft=koord_soft, tier=koord_tier)
    job = next((labels[k] for k in JOB_NAME_LABELS if labels.get(k)), None)
    kueue_soft = f"{kueue.PREFERRED_TOPOLOGY} instead of {kueue.REQUIRED_TOPOLOGY}"
    kueue_tier = lambda _t, _n, key: f"{kueue.REQUIRED_TOPOLOGY}: {key}"  # noqa: E731
    if gang.source == "job" or (gang.source == "kueue" and job):
        return Words(
            lambda k: f"Job {job or name}: spec.parallelism: {k}",
            fewer_pods=True,
            soft=kueue_soft if gang.kueue_tas else None,
            tier=kueue_tier if gang.kueue_tas else None,
        )
    if gang.source == "kueue":
        return Words(
            lambda k: f'{kueue.POD_GROUP_TOTAL_COUNT}: "{k}"',
            fewer_pods=True,
            soft=kueue_soft,
            tier=kueue_tier,
        )
    if gang.source == "upstream":
        return Words(
            lambda k: f"PodGroup {name}: minCount: {k}", tier=lambda _t, _n, key: f"topologyKey: {key}"
        )
    return Words(None)


def _suggestions(
    gang: Gang, snap: Snapshot, budgets: Sequence[Budget], demand: GangDemand, offers: Offers
) -> list[str]:
    """Single changes that would let the gang start now, in its dialect's fields, each checked
    by the runner on a changed copy of the gang."""
    out: list[str] = []
    c = gang.constraint
    words = words_of(gang)
    if c is not None and c.binds:
        soft = (
            None
            if words.soft is None
            else _try(replace(gang, constraint=TopologyConstraint("soft", c.highest_tier)), snap, budgets)
        )
        if soft is not None:
            out.append(f"{words.soft} would place it in {soft}")
        wider = [t for t in snap.index.tiers if c.highest_tier is not None and t > c.highest_tier]
        if wider and words.tier is not None:
            placed = _try(replace(gang, constraint=TopologyConstraint("hard", wider[0])), snap, budgets)
            tree = snap.index.tree
            name = tree.tier_names.get(wider[0], f"tier {wider[0]}")
            key = tree.tier_labels.get(wider[0]) or f"the label of tier {wider[0]}"
            if placed is not None:
                out.append(f"{words.tier(wider[0], name, key)} would place it in {placed}")
    allowed = [t for t in tier_bests(demand, offers, snap.index) if t.allowed]
    best = max(allowed, key=lambda t: (t.holds, -t.tier), default=None)
    if words.count is not None and best is not None and 0 < best.holds < demand.n:
        k = best.holds + len(gang.bound)
        placed = _try(_smaller(gang, k, fewer_pods=words.fewer_pods), snap, budgets)
        if placed is not None:
            out.append(f"{words.count(k)} would start {best.holds} pod(s) now, in {placed}")
    return out


def _smaller(gang: Gang, k: int, *, fewer_pods: bool) -> Gang:
    """The gang with its size field at k: minMember k, and only its first k pods when the
    field is the number of pods."""
    if not fewer_pods:
        return replace(gang, min_member=k)
    keep = {p.key for p in gang.bound} | {p.key for p in gang.pending[: max(0, k - len(gang.bound))]}
    return replace(gang, min_member=k, pods=tuple(p for p in gang.pods if p.key in keep))


def _try(gang: Gang, snap: Snapshot, budgets: Sequence[Budget]) -> str | None:
    placed = _try_placement(gang, snap, budgets)
    return placed.domain if placed is not None else None


def _try_placement(gang: Gang, snap: Snapshot, budgets: Sequence[Budget]) -> GangPlacement | None:
    """Where the gang would start now on `snap` (no preemption), None where it would not."""
    no_preemption = replace(default_profile(), post_filter=None)
    verdict = schedule(gang, snap.clone(), budgets=budgets, profile=no_preemption)
    if verdict.code is Code.SUCCESS and verdict.placement is not None:
        return verdict.placement
    return None


def render(e: Explanation) -> str:
    """The explanation as text for people."""
    lines = [f"gang {e.gang}: {e.pending} pending, {e.bound} bound, minMember {e.min_member}"]
    lines += _verdict_lines(e)
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
    lines += list(e.held)
    if e.preemption is not None:
        lines += _preemption_lines(e.preemption)
    for s in e.suggestions:
        lines.append(f"suggestion: {s}")
    return "\n".join(lines) + "\n"


def _verdict_lines(e: Explanation) -> list[str]:
    """The verdict, where the gang lands (a placed one, or an elastic one's first members), and
    the gangs ahead of a waiting one in the queue."""
    verdict = f"verdict: {e.code} at {e.step}{f' ({e.plugin})' if e.plugin else ''}"
    lines = [verdict] if e.placed else []
    if e.lands is not None:
        lands = e.lands
        lines.append(f"lands in {lands.domain} (tier {lands.tier}): {len(lands.pods)} pod(s)")
        lines += [f"  {pod} -> {node}" for pod, node in lands.pods]
    if not e.placed:
        if e.lands is not None:
            lines.append(f"its other {e.pending} pending pod(s) wait:")
        lines.append(verdict)
    if e.message:
        lines.append(f"  {e.message}")
    if e.ahead and not e.placed:
        lines.append("ahead of it in the queue this cycle:")
        lines += [f"  {a}" for a in e.ahead]
    return lines


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


# --- limits of the gang's own, and the nodes' pods allocatable, named where they hold it ------


@dataclass(frozen=True)
class Held:
    """A limit that keeps a gang out where room would otherwise hold it."""

    what: str
    """In words a user can act on: the field, its value, what it asks and what the cluster has."""
    short: str
    """The brief's form of it."""
    kind: str
    """`max-nodes`, `min-gpus-per-node`, `anti-affinity`, `pods`: which change re-checks it."""
    key: str = ""
    """The anti-affinity term's topology key."""
    need: int = 0
    """`max-nodes`: the fewest nodes one place needs for the gang now."""


Place = tuple[str, int, int]
"""A place a gang may use: (its name, first node, end node) in tree order."""
PODS = "pods"
SHOWN_NODES = 4
"""Nodes a `pods` allocatable suggestion names one by one; past that, how many more."""


def held_by(gang: Gang, snap: Snapshot, demand: GangDemand, offers: Offers, free: I64) -> list[Held]:
    """The limits holding the gang where room would otherwise hold it, cheaply (the offers, no
    attempt): the GPU dialect's `max-nodes` and `min-gpus-per-node`, its members' required
    anti-affinity among themselves, the nodes' `pods` allocatable (NodeResourcesFit's count:
    kube's "Too many pods")."""
    if not demand.classes or demand.n == 0:
        return []
    places = widest_places(gang.constraint, snap.index)
    out = [h for h in (_gpu_held(gang, demand, offers, places),) if h is not None]
    out += _anti_affinity_held(gang, demand, free, places)
    pods = _pods_held(demand, free, snap.index, places)
    return [*out, pods] if pods is not None else out


def widest_places(constraint: TopologyConstraint | None, index: ClusterIndex) -> list[Place]:
    """The widest places a gang may use: every other allowed place lies inside one of them, so
    a count that only grows with the place is at its best in one of them."""
    limit = hard_limit_tier(constraint, index)
    if limit is None or limit > index.max_tier or index.n_nodes == 0:
        return [(CLUSTER, 0, index.n_nodes)]
    doms = index.tier_domains[limit].tolist() if limit > 0 else []
    out = [(index.domain_label(d), int(index.dom_start[d]), int(index.dom_end[d])) for d in doms]
    inside = np.zeros(index.n_nodes, dtype=np.bool_)
    for _, lo, hi in out:
        inside[lo:hi] = True
    return out + [(index.node_names[v], v, v + 1) for v in np.flatnonzero(~inside).tolist()]


def _fewest(rules: GpuRules, slots: I64, n: int, places: Sequence[Place]) -> int | None:
    """The fewest nodes of one place that hold the gang's `n` pods under the rules' floor."""
    usable = usable_slots(rules, slots, n)
    got = [m for _, lo, hi in places if (m := fewest_nodes(usable[lo:hi], n)) is not None]
    return min(got, default=None)


def _gpu_held(gang: Gang, demand: GangDemand, offers: Offers, places: Sequence[Place]) -> Held | None:
    """`max-nodes` or `min-gpus-per-node` where it, not room, keeps the gang out."""
    rules, n = demand.gpu, demand.n
    if rules is None or gang.gpu is None or demand.kind != "uniform":
        return None
    req = gang.gpu.request
    m = _fewest(rules, offers.slots, n, places)
    if m is not None and rules.max_nodes is not None and m > rules.max_nodes - rules.held_nodes:
        held = (
            f" (the {rules.held_nodes} node(s) its bound members use count too)" if rules.held_nodes else ""
        )
        return Held(
            f"{gpu.MAX_NODES} {rules.max_nodes} ({req.path(gpu.MAX_NODES)}) holds it: its {n} pending "
            f"pod(s) need at least {m} nodes in any place it may use now{held}",
            f"held by {gpu.MAX_NODES} {rules.max_nodes}: it needs {m + rules.held_nodes} nodes",
            "max-nodes",
            need=m + rules.held_nodes,
        )
    if rules.floor <= 1 or rules.min_gpus_per_node is None:
        return None
    one = replace(rules, floor=1)
    m1 = _fewest(one, offers.slots, n, places)
    if (m is None or m > n // rules.floor) and m1 is not None and m1 <= node_limit(one, n):
        value = rules.min_gpus_per_node
        return Held(
            f"{gpu.MIN_GPUS_PER_NODE} {value} ({req.path(gpu.MIN_GPUS_PER_NODE)}) holds it: every node "
            f"it uses must take {rules.floor} of its pods ({rules.gpus_per_pod} {gpu.GPU_RESOURCE} each), "
            f"and too few nodes in any place it may use have that much free",
            f"held by {gpu.MIN_GPUS_PER_NODE} {value}",
            "min-gpus-per-node",
        )
    return None


def _anti_affinity_held(gang: Gang, demand: GangDemand, free: I64, places: Sequence[Place]) -> list[Held]:
    """Per required anti-affinity term between members (one member per value of its key) that
    keeps them out: no place they may use has a value with room for each."""
    if demand.rules is None:
        return []
    room = class_slots(free, replace(demand.classes[0], cap=None)) > 0
    out: list[Held] = []
    for cap in demand.rules.caps:
        if not cap.key or len(cap.members) < 2:
            continue  # host ports (NodePorts' cap has no key), or one member
        values = [(_values_with_room(cap.codes[lo:hi], room[lo:hi]), name) for name, lo, hi in places]
        best, where = min(values, key=lambda vw: (-vw[0], natural_key(vw[1])), default=(0, ""))
        k = len(cap.members)
        if best >= k:
            continue
        out.append(
            Held(
                f"its members' required anti-affinity among themselves ({_anti_affinity_path(gang, cap.key)}, "
                f"topologyKey {cap.key}) holds it: one member per {cap.key} value, {k} members, and the "
                f"place it may use with the most values with room has {best} ({where})",
                f"held by its members' anti-affinity on {cap.key}: {best} values for {k} members",
                "anti-affinity",
                key=cap.key,
            )
        )
    return out


def _values_with_room(codes: I64, room: np.ndarray) -> int:
    return len(np.unique(codes[room & (codes >= 0)]))


def _anti_affinity_path(gang: Gang, key: str) -> str:
    """The required anti-affinity term on `key` by its field path, in the object that writes it."""
    terms = _required_anti_affinity(gang.pending[0].pod) if gang.pending else []
    i = next((i for i, t in enumerate(terms) if t.topology_key == key), 0)
    return (
        f"{_pod_spec_of(gang)}.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[{i}]"
    )


def _required_anti_affinity(pod: Any) -> list[Any]:
    aff = pod.spec.affinity
    anti = aff.pod_anti_affinity if aff is not None else None
    return list(anti.required_during_scheduling_ignored_during_execution or []) if anti is not None else []


def _pod_spec_of(gang: Gang) -> str:
    """Where the gang's pods' spec is written: the owning object's template, else the pod."""
    labels = (gang.pods[0].pod.metadata.labels or {}) if gang.pods else {}
    if labels.get(lws.NAME_LABEL):
        return f"LeaderWorkerSet {labels[lws.NAME_LABEL]}: spec.leaderWorkerTemplate.workerTemplate.spec"
    if labels.get(VC_JOB_NAME):
        return f"Job {labels[VC_JOB_NAME]}: spec.tasks[].template.spec"
    job = next((labels[k] for k in JOB_NAME_LABELS if labels.get(k)), None)
    if job:
        return f"Job {job}: spec.template.spec"
    return f"pod {gang.pending[0].key if gang.pending else gang.name}: spec"


def _pods_held(demand: GangDemand, free: I64, index: ClusterIndex, places: Sequence[Place]) -> Held | None:
    """The nodes' `pods` allocatable where it, not other room, keeps the gang out: with the
    count unbounded, some place it may use would hold it."""
    p = index.res_pos.get(PODS)
    if p is None:
        return None
    mask = np.zeros(index.n_nodes, dtype=np.bool_)
    for c in demand.classes:
        mask |= c.mask
    if not ((free[:, p] < 1) & mask).any():
        return None
    unbounded = free.copy()
    unbounded[:, p] = demand.n
    if _fits_somewhere(demand, free, index, places) or not _fits_somewhere(demand, unbounded, index, places):
        return None
    only = np.zeros(len(index.resources), dtype=np.int64)
    only[p] = 1
    words = ", ".join(insufficient(only, mask, free, index))  # NodeResourcesFit's own words
    return Held(
        f"the nodes' pods allocatable (status.allocatable.pods, the kubelet's maxPods) holds it: "
        f"{words}; with room for more pods, a place it may use would hold it",
        f"held by the nodes' pods allocatable: {words}",
        PODS,
    )


def _fits_somewhere(demand: GangDemand, free: I64, index: ClusterIndex, places: Sequence[Place]) -> bool:
    """Does one of the places hold the whole gang on `free`? Single nodes at once (the offers'
    per-node fit), domains one by one."""
    nodes = [lo for _, lo, hi in places if hi - lo == 1]
    if nodes and evaluate(free, demand, index).node_fit[nodes].any():
        return True
    return any(
        fits_rows(free[lo:hi], demand, tuple(c.mask[lo:hi] for c in demand.classes))
        for _, lo, hi in places
        if hi - lo > 1
    )


def _held_suggestions(
    gang: Gang, snap: Snapshot, budgets: Sequence[Budget], held: Sequence[Held], free: I64
) -> list[str]:
    """Per limit that holds the gang, the change that lets it start, checked by the runner."""
    out: list[str] = []
    for h in held:
        if h.kind == "max-nodes":
            out += _gpu_suggestion(gang, snap, budgets, gpu.MAX_NODES, [h.need])
        elif h.kind == "min-gpus-per-node" and gang.gpu is not None:
            rules = GpuRules.of(gang)
            per_pod = rules.gpus_per_pod if rules is not None else 0
            floors = _lower_floors(gang, snap, rules) if rules is not None else []
            out += _gpu_suggestion(gang, snap, budgets, gpu.MIN_GPUS_PER_NODE, [k * per_pod for k in floors])
        elif h.kind == "anti-affinity":
            out += _anti_affinity_suggestion(gang, snap, budgets, h.key)
        elif h.kind == PODS:
            out += _pods_suggestion(gang, snap, budgets, free)
    return out


def _lower_floors(gang: Gang, snap: Snapshot, rules: GpuRules) -> range:
    """Pods per node below the gang's floor that a used node could take, most first: no node
    takes more of its pods than its GPUs hold, nor more than the gang has pending (nor, under
    `spread`, more than one). Each is a check by the runner; `min-gpus-per-node` may be set up
    to 2^31 - 1, and every value past those bounds fails alike."""
    pos = snap.index.res_pos.get(gpu.GPU_RESOURCE)
    if rules.gpus_per_pod <= 0 or pos is None or not snap.index.n_nodes:
        return range(0)
    most = min(len(gang.pending), int(snap.index.alloc[:, pos].max()) // rules.gpus_per_pod)
    if rules.policy == "spread":
        most = min(most, 1)
    return range(min(rules.floor - 1, most), 0, -1)


def _gpu_suggestion(
    gang: Gang, snap: Snapshot, budgets: Sequence[Budget], key: str, values: Sequence[int]
) -> list[str]:
    """The first of `values` for the GPU dialect's `key` that places the gang (checked)."""
    if gang.gpu is None:
        return []
    req = gang.gpu.request
    for v in values:
        asked = replace(req, max_nodes=v) if key == gpu.MAX_NODES else replace(req, min_gpus_per_node=v)
        changed = replace(gang, gpu=replace(gang.gpu, request=asked))
        placed = _try(changed, snap, budgets)
        if placed is not None:
            return [f'Job {gang.name.split("/", 1)[1]}: {req.path(key)}: "{v}" would place it in {placed}']
    return []


def _anti_affinity_suggestion(gang: Gang, snap: Snapshot, budgets: Sequence[Budget], key: str) -> list[str]:
    """The term on `key` as a preference (no longer a filter): checked without it."""

    def loosened(member: Any) -> Any:
        terms = _required_anti_affinity(member.pod)
        if member.bound or not terms:
            return member
        anti = member.pod.spec.affinity.pod_anti_affinity
        kept = [t for t in terms if t.topology_key != key]
        anti = anti.model_copy(update={"required_during_scheduling_ignored_during_execution": kept or None})
        aff = member.pod.spec.affinity.model_copy(update={"pod_anti_affinity": anti})
        pod = member.pod.model_copy(update={"spec": member.pod.spec.model_copy(update={"affinity": aff})})
        return replace(member, pod=pod, shape=placement_shape(pod, member.requests))

    placed = _try(replace(gang, pods=tuple(loosened(m) for m in gang.pods)), snap, budgets)
    if placed is None:
        return []
    path = _anti_affinity_path(gang, key)
    return [f"{path} as a preferredDuringSchedulingIgnoredDuringExecution term would place it in {placed}"]


def _pods_suggestion(gang: Gang, snap: Snapshot, budgets: Sequence[Budget], free: I64) -> list[str]:
    """The nodes' pods allocatable raised where the gang would land: found with the count
    unbounded, then checked with each of those nodes raised by just what it lacks."""
    p = snap.index.res_pos[PODS]
    unbounded = snap.clone()
    unbounded.used[:, p] = snap.index.alloc[:, p] - len(gang.pending)
    found = _try_placement(gang, unbounded, budgets)
    if found is None:
        return []
    on: dict[str, int] = {}
    for _, node in found.pods:
        on[node] = on.get(node, 0) + 1
    pos = snap.index.node_pos
    short = {n: k - int(free[pos[n], p]) for n, k in on.items() if int(free[pos[n], p]) < k}
    raised = snap.clone()
    for n, lack in short.items():
        raised.used[pos[n], p] -= lack
    placed = _try(gang, raised, budgets)
    if placed is None or not short:
        return []
    alloc = snap.index.alloc
    names = sorted(short, key=natural_key)
    shown = ", ".join(
        f"{n} {int(alloc[pos[n], p]) + short[n]} (now {int(alloc[pos[n], p])})" for n in names[:SHOWN_NODES]
    )
    more = f" and {len(names) - SHOWN_NODES} more" if len(names) > SHOWN_NODES else ""
    return [f"status.allocatable.pods (the kubelet's maxPods) of {shown}{more} would place it in {placed}"]
