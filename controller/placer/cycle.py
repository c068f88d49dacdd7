"""One scheduling cycle, in kube-scheduler's phases: the only place scheduling decisions are made.

Both runners call it: the live `GangScheduler` (then turns the plan into API jobs) and
`topobridge simulate` (applies the plan to its static cluster and runs the next cycle).

1. snapshot: `ClusterState.view()` (incremental; `controller.placer.cluster`);
2. queue order: gangs with pending pods whose schedulerName is served (`Gang.served_by`, by
   `translations.serving`'s rule), not busy (a job in flight) and not backing off, highest priority first, then oldest, then by name (then dialect);
3. per gang, prefilter / filter / score / select / postfilter (preemption): the engine
   (`controller.placer.engine.schedule`), on the cycle's snapshot;
4. reserve: a placement is applied to the snapshot (its pods bound there), a preemption plan
   too (victims terminating, the gang's pods nominated, the disruptions they use taken off the
   budgets), so later gangs of the same cycle see the room and the disruptions taken;
   `unreserve` undoes a gang's reservation (idempotent);
5. permit, the gang gate: a placement goes on to bind; a gang with fewer pods than its
   minMember waits silently for `assembly_grace` seconds since it was first seen (its pods are
   still being created) before it is reported;
   A gang that has waited its timeout (`scheduleTimeoutSeconds`, Koordinator's `waiting-time`,
   `controller.placer.timeout`) without starting is expired instead, as Coscheduling's Permit
   answers (`PermitResult.expiry`): its reservations and nominations are released, the
   Reserve plugins' Unreserve runs, and it re-queues after a backoff. The cycle decides
   neither: both are the Permit plugins' answers;
6. the plan: binds (gang -> [(pod, node)], domain, tier), preemptions (victims with their
   DisruptionTarget condition, nominations), expiries, and per gang a verdict code with a
   message per pod.

Time is injected (`now`); what a gang's clock remembers between cycles lives in `GangTiming`.
Everything is deterministic: the same view, `now` and timing give the same plan.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace

from controller.placer.attempt_budget import DEFAULT_ATTEMPT_STEPS, DEFAULT_GUARD_SECONDS, AttemptBudget
from controller.placer.backoff import GANG_BIND, GANG_ERROR
from controller.placer.budgets import Budget, after_evictions
from controller.placer.cluster import ClusterView, queue_order, request_vector
from controller.placer.demand import GangDemand
from controller.placer.engine import (
    DEMAND,
    Alike,
    GangPlacement,
    Verdict,
    alike_key,
    place_alike,
    pod_messages,
    schedule,
    term_keys,
)
from controller.placer.framework import (
    SCHEDULING_GATED,
    Code,
    CycleState,
    PermitInput,
    PermitResult,
    Profile,
    Step,
    default_profile,
)
from controller.placer.preempt import PreemptionPlan, Victim
from controller.placer.records import BoundPod, Nomination
from controller.placer.snapshot import I64, ClusterIndex, Snapshot
from controller.placer.terms import PodTerms
from controller.placer.timeout import Expiry
from translations import volcano
from translations.errors import failure_text
from translations.gangs import Gang

DEFAULT_ASSEMBLY_GRACE = 10.0
"""Seconds a gang with fewer pods than minMember may take to appear before it is reported."""
UNSCHEDULABLE_FLUSH = 300.0
"""Seconds after which a gang left unschedulable is tried again though nothing it depends on
changed (kube-scheduler's podMaxInUnschedulablePodsDuration, 5 minutes)."""


# --- options and state kept between cycles ------------------------------------------------------


@dataclass(frozen=True)
class CycleOptions:
    """Koordinator coscheduling's args, as they change what the engine is asked."""

    enable_preemption: bool = True
    """`enablePreemption`: false never evicts to make room."""
    topology_aware: bool = True
    """`awareNetworkTopology`: false places gangs ignoring their network-topology constraints
    (still whole)."""
    attempt_steps: float = DEFAULT_ATTEMPT_STEPS
    """Steps one gang's attempt may spend searching for a preemption plan (`attempt_budget`):
    where a search stops is a function of its input, the same in `run` and `simulate`."""
    attempt_guard: float = DEFAULT_GUARD_SECONDS
    """Seconds past which the wall-clock guard stops an attempt whatever its steps (reported)."""
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)
    """The clock the guard reads (a test's own, to fire it at a chosen step)."""

    def budget(self) -> AttemptBudget:
        """A fresh budget for one attempt."""
        return AttemptBudget(self.attempt_steps, self.attempt_guard, self.clock)

    @property
    def profile(self) -> Profile:
        """The plugins every attempt runs (`controller.placer.plugins`)."""
        return default_profile()

    def shape(self, gang: Gang) -> Gang:
        """The gang as these options let the engine see it (preemption, topology switched off)."""
        if not self.enable_preemption and gang.preemption_policy != "Never":
            gang = replace(gang, preemption_policy="Never")
        if not self.topology_aware and (gang.constraint is not None or gang.subgroups):
            gang = replace(gang, constraint=None, subgroups=())
        return gang


@dataclass
class GangTiming:
    """Per-gang clocks the cycle reads and the runner updates: when a gang was first seen
    pending, and until when it backs off after a failed bind."""

    first_seen: dict[str, float] = field(default_factory=dict)
    not_before: dict[str, float] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    timeouts: dict[str, int] = field(default_factory=dict)
    """Timeouts in a row per gang (the backoff after the next one doubles)."""
    errors: dict[str, int] = field(default_factory=dict)
    """Attempts in a row that raised, per gang."""
    unschedulable: dict[str, Unschedulable] = field(default_factory=dict)
    """Gangs whose last attempt found no place and no preemption, with what it saw: not
    tried again until something it depends on changes (`Unschedulable.holds`)."""

    def seen(self, gang: str, now: float) -> float:
        return self.first_seen.setdefault(gang, now)

    def backing_off(self, gang: str, now: float) -> bool:
        return self.not_before.get(gang, 0.0) > now

    def bind_failed(self, gang: str, now: float) -> None:
        """Requeue with exponential backoff (`backoff.GANG_BIND`)."""
        n = self.failures[gang] = self.failures.get(gang, 0) + 1
        self.not_before[gang] = now + GANG_BIND.delay(n)

    def errored(self, gang: str, now: float) -> float:
        """The attempt raised: requeue with kube-scheduler's pod backoff (`backoff.GANG_ERROR`);
        returns the delay."""
        n = self.errors[gang] = self.errors.get(gang, 0) + 1
        delay = GANG_ERROR.delay(n)
        self.not_before[gang] = now + delay
        return delay

    def attempted(self, gang: str) -> None:
        """An attempt ran to its verdict: the error streak, if any, is over."""
        self.errors.pop(gang, None)

    def timed_out(self, gang: str, fired: Expiry, now: float) -> None:
        """The gang gave up waiting: it re-queues after the backoff and waits afresh from then."""
        self.timeouts[gang] = self.timeouts.get(gang, 0) + 1
        self.not_before[gang] = now + fired.retry_after
        self.first_seen[gang] = now + fired.retry_after

    def bound(self, gang: str) -> float | None:
        """The gang is placed: its clocks stop. Returns when it was first seen, if known."""
        self.unschedulable.pop(gang, None)
        self.timeouts.pop(gang, None)
        self.failures.pop(gang, None)
        self.errors.pop(gang, None)
        self.not_before.pop(gang, None)
        return self.first_seen.pop(gang, None)

    def prune(self, live: Collection[str]) -> None:
        """Forget gangs that no longer exist."""
        tables = (
            self.first_seen,
            self.not_before,
            self.failures,
            self.timeouts,
            self.errors,
            self.unschedulable,
        )
        for table in tables:
            for k in [k for k in table if k not in live]:
                del table[k]


@dataclass(frozen=True)
class Unschedulable:
    """What a gang's last attempt saw when it found no place (kube-scheduler's unschedulable
    pool, with one queueing hint for every plugin): the gang itself (the view's own object,
    replaced whenever one of its pods, its PodGroup or its Job changes), `ClusterState.freed`
    (moved by every change but a pending pod bound), the disruption budgets, the binds so far
    and what its pods' inter-pod terms ask of other pods, and when."""

    gang: Gang
    freed: int
    budgets: tuple[Budget, ...]
    at: float
    bound: int = 0
    """`ClusterView.bound` then: the pending pods bound so far."""
    terms: tuple[tuple[str, PodTerms], ...] = ()
    """(namespace, terms) of its pending pods whose pod affinity or topology spread a bound
    pod may satisfy (`related_terms`); empty: a bound pod only ever takes room from it."""

    def holds(self, gang: Gang, view: ClusterView, now: float, memo: dict[Hint, bool] | None = None) -> bool:
        """True while trying `gang` again cannot place it: nothing it depends on changed. A
        bound pod only takes room, unless the gang's pod affinity selects it or its topology
        spread counts it (`PodTerms.wants`): then the gang is tried again (kube-scheduler's
        InterPodAffinity and PodTopologySpread queueing hints). `memo`: answers shared by the
        gangs of one cycle with the same terms (a job of lone pods is one gang per pod)."""
        if not (
            gang is self.gang
            and view.freed == self.freed
            and tuple(view.budgets) == self.budgets
            and now - self.at < UNSCHEDULABLE_FLUSH
        ):
            return False
        if view.bound == self.bound or not self.terms:
            return True
        key = (self.bound, self.terms)
        if memo is None or key not in memo:
            wanted = _wanted_bind(view, self.bound, self.terms)
            if memo is None:
                return not wanted
            memo[key] = wanted
        return not memo[key]


Hint = tuple[int, tuple[tuple[str, PodTerms], ...]]
"""What an `Unschedulable`'s bound-pod hint depends on: the binds it saw, and its terms."""


def related_terms(gang: Gang) -> tuple[tuple[str, PodTerms], ...]:
    """(namespace, terms) of the gang's pending pods, each distinct once, whose pod affinity or
    topology spread another pod bound may satisfy."""
    found: dict[tuple[str, PodTerms], None] = {}
    for member in gang.pending:
        terms = PodTerms.of(member.pod)
        if terms is not None and (terms.affinity or terms.preferred_affinity or terms.spread):
            found[(member.pod.namespace, terms)] = None
    return tuple(found)


def _wanted_bind(view: ClusterView, seen: int, terms: tuple[tuple[str, PodTerms], ...]) -> bool:
    """Whether a pod bound since the `seen`-th bind is one `terms` ask for (True too when the
    state's journal no longer holds every one of them)."""
    binds = view.binds.since(seen, view.bound) if view.binds is not None else None
    if binds is None:
        return True
    ns_labels = view.snapshot.namespace_labels
    return any(t.wants(own, ns, labels, ns_labels) for ns, labels in binds for own, t in terms)


# --- the plan -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bind:
    """Bind `pods` (rank order) of `gang`; `already_bound` members were bound before."""

    gang: str
    pods: tuple[tuple[str, str], ...]
    domain: str
    tier: int
    already_bound: tuple[str, ...]
    min_member: int
    annotations: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Per pod, annotations written at bind (a GPU gang's topology path and ring order)."""


@dataclass(frozen=True)
class Preemption:
    """Evict the plan's victims, then nominate the gang's pods; `message` is what the pods
    show while the victims terminate."""

    gang: str
    plan: PreemptionPlan
    message: str


@dataclass(frozen=True)
class Outcome:
    """A gang's verdict this cycle, and what each of its pending pods is told."""

    gang: str
    code: Code
    step: Step
    message: str
    pod_messages: Mapping[str, str]
    report: bool = True
    """False while the permit holds the gang silently (still assembling)."""
    condition: str = ""
    """The reason word the pods' and PodGroup's conditions carry, when it is not the code's
    value (`SchedulingGated` for a gang a gate holds)."""
    exception: BaseException | None = field(default=None, compare=False, repr=False)
    """For an Error: what was raised, for the runner's log (the message never quotes a traceback)."""
    guarded: str = ""
    """What the wall-clock guard did, when it stopped the attempt's search ("" when it did not):
    the runner counts it, logs it and records it in an Event (the verdict says it too)."""


@dataclass
class CyclePlan:
    binds: list[Bind] = field(default_factory=list)
    preemptions: list[Preemption] = field(default_factory=list)
    expiries: list[Expiry] = field(default_factory=list)
    """Gangs whose timeout fired this cycle: their nominations are released (the runner
    clears them on the pods and says so on the PodGroup and in an Event)."""
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    """Every gang attempted, in queue order."""

    def added_for(self, gang: str) -> tuple[Bind | None, Preemption | None, Expiry | None]:
        """The bind, preemption and expiry `attempt(gang)` just added. A gang is attempted once
        a cycle and each attempt appends at most one item to each list, so a runner applying
        gang after gang finds them at the ends (a search would cost O(gangs) per gang)."""
        return (
            self.binds[-1] if self.binds and self.binds[-1].gang == gang else None,
            self.preemptions[-1] if self.preemptions and self.preemptions[-1].gang == gang else None,
            self.expiries[-1] if self.expiries and self.expiries[-1].gang == gang else None,
        )

    def mark(self) -> tuple[int, int, int]:
        """Where the lists stand now, for `truncate`."""
        return len(self.binds), len(self.preemptions), len(self.expiries)

    def truncate(self, mark: tuple[int, int, int]) -> None:
        """Drop what was appended since `mark()` (a failed attempt's partial plan)."""
        del self.binds[mark[0] :], self.preemptions[mark[1] :], self.expiries[mark[2] :]

    @property
    def nominations(self) -> dict[str, str]:
        """pod -> node, for every pod nominated this cycle."""
        return {pod: node for p in self.preemptions for pod, node in p.plan.nominated}

    @property
    def evictions(self) -> list[Victim]:
        return [v for p in self.preemptions for v in p.plan.victims]

    @property
    def waiting(self) -> list[str]:
        """Gangs the permit holds silently."""
        return [k for k, o in self.outcomes.items() if not o.report]


# --- the cycle ----------------------------------------------------------------------------------


@dataclass(eq=False)
class SchedulingCycle:
    """One cycle over `view`. `run()` does it all; a runner that yields between gangs calls
    `queue()` then `attempt(gang)` for each (the plan accumulates either way)."""

    view: ClusterView
    _: KW_ONLY
    served: Collection[str]
    """The schedulerNames this scheduler serves: only their gangs are queued."""
    now: float
    timing: GangTiming
    busy: Collection[str] = ()
    """Gangs with a job of the runner's still in flight: not queued this cycle."""
    assembly_grace: float = DEFAULT_ASSEMBLY_GRACE
    options: CycleOptions = field(default_factory=CycleOptions)
    snapshot: Snapshot = field(init=False)
    budgets: list[Budget] = field(init=False)
    """The disruption budgets as this cycle's preemptions leave them."""
    plan: CyclePlan = field(init=False, default_factory=CyclePlan)
    last_verdict: Verdict | None = field(init=False, default=None)
    """The engine's verdict in the latest attempt, before anything was reserved (None when the
    attempt ended before the engine ran: a gate, an error). `explain` reads it rather than
    asking the engine the same question twice; only the latest is kept (no memory per gang)."""

    _hints: dict[Hint, bool] = field(init=False, default_factory=dict)
    """`Unschedulable.holds`'s answers this cycle, shared by gangs with the same terms."""
    _batch: _Batch | None = field(init=False, default=None)
    """The last placed lone pod's demand, for the next pod like it (`engine.place_alike`)."""

    def __post_init__(self) -> None:
        self.served = frozenset(self.served)
        self.snapshot = self.view.snapshot
        self.budgets = list(self.view.budgets)

    def run(self) -> CyclePlan:
        for gang in self.queue():
            self.attempt(gang)
        return self.plan

    # --- queue order ---

    def queue(self) -> list[Gang]:
        gangs = self.view.gangs
        self.timing.prune(gangs.keys())
        ready = [
            gangs[k]
            for k in self.view.pending
            if gangs[k].served_by(self.served)
            and k not in self.busy
            and not self.timing.backing_off(k, self.now)
            and not self._still_unschedulable(gangs[k])
        ]
        return queue_order(ready)

    def _still_unschedulable(self, gang: Gang) -> bool:
        """The gang's last attempt found no place and nothing it depends on changed since,
        and its timeout would not fire now (that attempt must run to release what it holds)."""
        last = self.timing.unschedulable.get(gang.key)
        if last is None or not last.holds(gang, self.view, self.now, self._hints):
            return False
        first_seen = self.timing.first_seen.get(gang.key)
        # Whether the timeout fires is the Permit plugins' answer, asked as the attempt asks it.
        return first_seen is None or self._permit(gang, first_seen, self.options.profile).expiry is None

    # --- one gang: prefilter .. postfilter (engine), reserve, permit ---

    def attempt(self, gang: Gang) -> Outcome:
        """One gang's prefilter .. permit. Whatever one gang's attempt raises is that gang's
        `Error`: what it reserved in this cycle is given back, it backs off, and the cycle goes
        on with the next gang (kube-scheduler's rule for a pod whose attempt errs)."""
        mark = self.snapshot.savepoint()
        budgets, plan_marks = self.budgets, self.plan.mark()
        self.last_verdict = None
        state = CycleState()
        attempt_budget = self.options.budget()
        try:
            outcome = self._attempt(gang, state, attempt_budget)
        except Exception as exc:  # a bad object is its own gang's problem, never the cycle's
            with contextlib.suppress(Exception):  # the attempt's own error is the one reported
                self._unreserve_plugins(gang)
            self.timing.unschedulable.pop(gang.key, None)
            self.last_verdict = None
            self.snapshot.rollback_to(mark)
            self._batch = None  # what raised may be the batch: the next pod starts afresh
            self.budgets = budgets
            self.plan.truncate(plan_marks)
            return self._errored(gang, exc, state.step)
        self.timing.attempted(gang.key)
        if attempt_budget.guarded:
            outcome = self.plan.outcomes[gang.key] = replace(outcome, guarded=attempt_budget.why())
        self._remember(gang, outcome, cut=attempt_budget.cut)
        return outcome

    def _remember(self, gang: Gang, outcome: Outcome, *, cut: bool) -> None:
        """Keep what an attempt that found nothing saw (`Unschedulable`), else forget it. Only a
        verdict that is a function of that: reported, its search not cut short (by steps or the
        clock: more pods to evict could change where a cut search ends), nothing planned for
        the gang, no inter-pod terms."""
        settled = (
            outcome.code in (Code.UNSCHEDULABLE, Code.UNRESOLVABLE)
            and outcome.report
            and not cut
            and not outcome.guarded
            and self.plan.added_for(gang.key) == (None, None, None)
        )
        if settled:
            view = self.view
            seen = Unschedulable(
                gang, view.freed, tuple(view.budgets), self.now, view.bound, related_terms(gang)
            )
            self.timing.unschedulable[gang.key] = seen
        else:
            self.timing.unschedulable.pop(gang.key, None)

    def _errored(self, gang: Gang, exc: Exception, step: Step) -> Outcome:
        delay = self.timing.errored(gang.key, self.now)
        message = f"scheduling gang {gang.name} failed at {step.value}: {failure_text(exc)}; retrying in {delay:.0f}s"
        verdict = Verdict(Code.ERROR, message, step, reason=message)
        out = Outcome(gang.key, Code.ERROR, step, message, _safe_pod_messages(gang, verdict), exception=exc)
        self.plan.outcomes[gang.key] = out
        return out

    def _attempt(self, gang: Gang, state: CycleState, attempt_budget: AttemptBudget) -> Outcome:
        profile = self.options.profile
        for gate in profile.pre_enqueue:
            status = gate.pre_enqueue(gang)
            if not status.ok:  # not queued: it says why, and is tried again when it changes
                verdict = Verdict(
                    status.code, status.message, Step.PRE_ENQUEUE, status.plugin, reason=status.message
                )
                return self._outcome(gang, verdict, condition=SCHEDULING_GATED)
        first_seen = self.timing.seen(gang.key, self.now)
        asked = self.options.shape(gang)
        state.step = Step.PRE_FILTER
        batch, verdict = self._schedule(asked, state, attempt_budget, profile)
        self.last_verdict = verdict
        if verdict.code is Code.SUCCESS and verdict.placement is not None and verdict.placement.pods:
            state.step = Step.RESERVE
            annotations = self.reserve(gang, verdict.placement, profile)
            self._batch = self._batched(asked, state, batch)
            return self._permit_bind(gang, verdict, verdict.placement, annotations)
        state.step = Step.PERMIT
        permit = self._permit(gang, first_seen, profile)
        if permit.expiry is not None:  # Coscheduling's timeout: the gang lets go of what it holds
            return self.expire(gang, permit.expiry, permit.status.plugin)
        if verdict.code is Code.WAITING_FOR_VICTIMS and verdict.plan is not None:
            state.step = Step.POST_FILTER
            self.reserve_preemption(gang, verdict.plan)
            # What the pods say while the victims terminate: the next attempt's answer.
            again = schedule(
                asked, self.snapshot, budgets=self.budgets, attempt_budget=attempt_budget, profile=profile
            )
            self.plan.preemptions.append(Preemption(gang.key, verdict.plan, again.message))
            return self._outcome(gang, again)
        if not permit.status.ok:
            held = permit.status
            return self._outcome(
                gang, replace(verdict, code=held.code, step=Step.PERMIT, plugin=held.plugin), report=False
            )
        return self._outcome(gang, verdict)

    def _schedule(
        self, gang: Gang, state: CycleState, attempt_budget: AttemptBudget, profile: Profile
    ) -> tuple[_Batch | None, Verdict]:
        """The engine's verdict: from the batch `gang` joins when it is placed there (`_alike`),
        else from its own full attempt."""
        batch, placed = self._alike(gang, state)
        if placed is not None:
            return batch, placed
        verdict = schedule(
            gang,
            self.snapshot,
            budgets=self.budgets,
            attempt_budget=attempt_budget,
            profile=profile,
            state=state,
        )
        return None, verdict

    def _alike(self, gang: Gang, state: CycleState) -> tuple[_Batch | None, Verdict | None]:
        """Kube-scheduler's opportunistic batching: when `gang` is like the batch's pods, the
        batch and the verdict `engine.place_alike` gives (None: the full attempt runs)."""
        batch = self._batch
        if batch is None:
            return None, None
        # A demand reads the index and the bound pods' terms and host ports (the namespace's
        # labels are in the key). In a cycle only `reserve` changes those, and every reserve
        # remakes the batch (`_batched`); a preemption (victims terminating, nominations) or an
        # expiry (nominations released) change the room alone, which Select reads afresh, and
        # an attempt that raised ends the batch. Nothing else changes them until the next view.
        assert batch.reads(self.snapshot), "the snapshot changed under a batch of alike pods"
        if alike_key(gang, self.snapshot, batch.read) != batch.key:
            return None, None
        state.step = Step.SELECT
        return batch, place_alike(gang, self.snapshot, batch.demand, self.options.profile)

    def _batched(self, gang: Gang, state: CycleState, batch: _Batch | None) -> _Batch | None:
        """After `gang` was placed and reserved: the batch the next pod like it may join (the
        one it joined, else one its own attempt's demand starts), as the snapshot is now."""
        if batch is not None:
            return batch
        demand = state.get(DEMAND, None)
        if demand is None:
            return None
        read = term_keys(self.snapshot)
        key = alike_key(gang, self.snapshot, read)
        if key is None:
            return None
        return _Batch(key, demand, read, self.snapshot.index, len(self.snapshot.with_terms))

    def _permit(self, gang: Gang, first_seen: float, profile: Profile) -> PermitResult:
        """The Permit plugins' answer for a gang that is not placed: the first that lets it go
        (its timeout) or holds it (still assembling), else SUCCESS."""
        request = PermitInput(
            gang, self.now, first_seen, self.timing.timeouts.get(gang.key, 0), self.assembly_grace
        )
        for plugin in profile.permit:
            got = plugin.permit(request)
            if got.expiry is not None or not got.status.ok:
                return got
        return PermitResult()

    def expire(self, gang: Gang, fired: Expiry, plugin: str) -> Outcome:
        """Release what the gang holds (reservations, nominations) and re-queue it with backoff."""
        self.unreserve(gang)
        self.timing.timed_out(gang.key, fired, self.now)
        self.plan.expiries.append(fired)
        verdict = Verdict(Code.UNSCHEDULABLE, fired.message, Step.PERMIT, plugin, reason=fired.message)
        return self._outcome(gang, verdict)

    def _permit_bind(
        self,
        gang: Gang,
        verdict: Verdict,
        placement: GangPlacement,
        annotations: Mapping[str, Mapping[str, str]],
    ) -> Outcome:
        self.plan.binds.append(
            Bind(
                gang=gang.key,
                pods=placement.pods,
                domain=placement.domain,
                tier=placement.tier,
                already_bound=tuple(m.key for m in gang.bound),
                min_member=gang.min_member,
                annotations=annotations,
            )
        )
        return self._outcome(gang, verdict)

    def _outcome(self, gang: Gang, verdict: Verdict, *, report: bool = True, condition: str = "") -> Outcome:
        out = Outcome(
            gang=gang.key,
            code=verdict.code,
            step=verdict.step,
            message=verdict.message,
            pod_messages=pod_messages(gang, verdict),
            report=report,
            condition=condition,
        )
        self.plan.outcomes[gang.key] = out
        return out

    # --- reserve / unreserve ---

    def reserve(
        self, gang: Gang, placement: GangPlacement, profile: Profile | None = None
    ) -> dict[str, Mapping[str, str]]:
        """Bind the placement on the cycle's snapshot (later gangs see the room taken), then the
        Reserve plugins: what each placed pod gets written at bind time."""
        snap, index = self.snapshot, self.snapshot.index
        snap.bind(*placed_records(index, gang, placement.pods))
        snap.set_gang_min(gang.key, gang.victim_min)
        annotations: dict[str, Mapping[str, str]] = {}
        for plugin in (profile or self.options.profile).reserve:
            for pod, written in plugin.reserve(gang, placement.pods, index).items():
                annotations[pod] = {**annotations.get(pod, {}), **written}
        return annotations

    def reserve_preemption(self, gang: Gang, plan: PreemptionPlan) -> None:
        """Victims terminate and the gang's pods hold their nominated nodes."""
        snap, index = self.snapshot, self.snapshot.index
        going = [v.pod for v in plan.victims if v.pod in snap.pods and not snap.pods[v.pod].terminating]
        self.budgets = after_evictions(self.budgets, snap, going)
        snap.mark_terminating(*going)
        snap.clear_nominations(gang.key)
        members = {m.key: m for m in gang.pods}
        snap.nominate(
            *(
                Nomination(
                    key,
                    gang.key,
                    index.node_pos[node],
                    request_vector(index, members[key].requests),
                    gang.priority,
                )
                for key, node in plan.nominated
            )
        )

    def unreserve(self, gang: Gang) -> None:
        """Give back what this cycle reserved for `gang` (safe to call when nothing was), the
        Reserve plugins' `unreserve` first."""
        self._unreserve_plugins(gang)
        snap = self.snapshot
        for bind in [b for b in self.plan.binds if b.gang == gang.key]:
            for key, _ in bind.pods:
                if key in snap.pods:
                    snap.evict(key)
            self.plan.binds.remove(bind)
        snap.clear_nominations(gang.key)

    def _unreserve_plugins(self, gang: Gang) -> None:
        """Every Reserve plugin's Unreserve, in reverse order (kube's RunReservePluginsUnreserve),
        on every rollback: a timeout, an attempt that raised."""
        for plugin in reversed(self.options.profile.reserve):
            plugin.unreserve(gang)


def placed_records(index: ClusterIndex, gang: Gang, placed: Sequence[tuple[str, str]]) -> list[BoundPod]:
    """The records of `gang`'s pods bound where `placed` puts them ((pod, node) pairs), as
    the state makes them once it sees the binds (`cluster.bound_record`: not terminating, not
    started yet). One pass over a placement of a thousand pods: members of one shape ask the
    same (`GangPod.shape` holds their requests), so each shape's request row is looked up once."""
    members = {m.key: m for m in gang.pods}
    node_pos, gang_key = index.node_pos, gang.key
    rows: dict[str, I64] = {}
    out: list[BoundPod] = []
    add = out.append
    for key, node in placed:
        m = members[key]
        pod = m.pod
        meta = pod.metadata
        row = rows.get(m.shape) if m.shape else None
        if row is None:
            row = request_vector(index, m.requests)
            if m.shape:
                rows[m.shape] = row
        labels = meta.labels
        # Positional, in BoundPod's field order (a keyword call costs more, once per pod).
        add(
            BoundPod(
                key,
                meta.namespace or "",
                node_pos[node],
                row,
                m.priority,
                gang_key,
                labels or {},
                False,
                PodTerms.of(pod),
                None,
                volcano.preemptable(meta.annotations, labels),
            )
        )
    return out


@dataclass(frozen=True)
class _Batch:
    """Lone pods placed one after another from one Filter and Score pass: their `alike_key`,
    the demand those built, the label keys bound pods' terms read, and what of the snapshot
    the demand was built from that a change to its inputs would change: the index (a relabel
    replaces it) and how many bound pods carry terms or host ports."""

    key: Alike
    demand: GangDemand
    read: frozenset[str]
    index: ClusterIndex
    terms: int

    def reads(self, snap: Snapshot) -> bool:
        """Whether `snap` is, as far as a demand reads it, the one the batch was built on."""
        return snap.index is self.index and len(snap.with_terms) == self.terms


def _safe_pod_messages(gang: Gang, verdict: Verdict) -> dict[str, str]:
    """What an errored gang's pending pods are told: every one the verdict's message."""
    return {p.key: verdict.message for p in gang.pending}
