"""The scheduling framework: kube-scheduler's extension points, for gangs.

kube-scheduler runs one pod through named extension points, each a small interface a plugin
implements only if it needs it (`staging/src/k8s.io/kube-scheduler/framework/interface.go`).
topobridge places whole gangs, so the same points take a gang, or one shape class of its
pending pods, and the Filter point answers for every node at once (a mask, not one node):

* PreEnqueue (`PreEnqueuePlugin`): may the gang be queued at all? (SchedulingGates,
  DynamicResources). A gang that may not is not attempted; it says why.
* PreFilter (`PreFilterPlugin`): gang-wide checks and the per-attempt state the later points
  read (Coscheduling: spec errors, too few members; InterPodAffinity, PodTopologySpread: counts
  of existing pods per topology value, written into the `CycleState`).
* Filter (`FilterPlugin`): per shape class, which nodes may take one of its pods, as `Cut`s:
  (reason, node mask) pairs in kube's words. The runner intersects them in plugin order and
  counts each excluded node under the first cut that removed it, as kube counts a node under
  its first failing plugin.
* FilterRoom (`FilterRoomPlugin`, ours): Filter's half that reads free room, which changes
  within a cycle (other gangs reserve, preemption frees): per reason, the nodes that hold one
  more pod of a class on a given free capacity (NodeResourcesFit: "Insufficient cpu", "Too
  many pods"). Its cuts explain why a node has no room and never narrow a class's node mask
  (the kernels count room themselves by the same rule, and preemption may make room there).
* Member rules (`MemberRulesPlugin`, ours): what ties members to each other (anti-affinity
  between members, spread across members, host ports), as `rules.MemberRules` the selection
  keeps while it places members one after another, as kube would place the pods.
* Score (`ScorePlugin`): a raw preference per node given the nodes that passed Filter (preferred
  node and pod affinity, untolerated PreferNoSchedule taints, ScheduleAnyway spread), then `normalize` (kube's
  ScoreExtensions.NormalizeScore) to 0..`MAX_NODE_SCORE` over the feasible nodes. The runner
  multiplies each plugin's normalized score by its `Weighted.weight` in the profile and sums them
  (kube's default profile weights), in one place (`filtering.run_scores`).
* Select (the runner's selection, `select`): the place and node of every pod, through the
  placement points (kube-scheduler 1.36+'s gang framework, `pkg/scheduler/algorithm_podgroup.go`
  and KEP-5732; ours place a whole gang in one pass):
  * PlacementGenerate (`PlacementGeneratePlugin`): the candidates. `generate` narrows the
    levels whose places (single nodes, the domains of a tier, the whole cluster) are tried,
    lowest first, each plugin within what the ones before it left (upstream's parent
    placement): NetworkTopology (Volcano tiers and `highestTierAllowed`, Koordinator layers,
    LWS), KueueTAS (from the requested level up). `node_set` lets a plugin choose the node
    set itself (upstream's `Placement`: the nodes, here with the pods on each): GPU (max-nodes,
    min-gpus-per-node, pack/spread), KueueTAS (LeastFreeCapacity); None leaves it to the
    selection's descent. `unplaced`: why no candidate holds the gang, in the plugin's own
    words (GPU's; Koordinator's, from NetworkTopology), else the runner uses kube's.
  * PlacementScore (`PlacementScorePlugin`): sort keys that order a level's candidates after
    the selection's own (bound members inside, Score, leftover): NetworkTopology keeps larger
    free enclosing domains intact (binpack up the tree); Kueue's BestFit adds none.
  * PlacementFeasible (`PlacementFeasiblePlugin`): whether a placement of the whole demand
    stands (GPU: the node count and per-node minimum of the dialect).
  The runner for these points is `PlacementPoints`; the demand carries it (`demand.Placing`),
  so preemption's selections ask the same plugins.
* PostFilter (`PostFilterPlugin`): when nothing fits, preemption (DefaultPreemption). It is
  given the attempt's `preempt.Refilter`: PreFilter and Filter run again on the snapshot as it stands.
  kube-scheduler's PreFilter extensions (`AddPod`/`RemovePod`) update each plugin's cycle
  state for one pod added to or removed from a node; here every plugin that reads bound pods
  (NodePorts, InterPodAffinity both ways, PodTopologySpread, NodeResourcesFit, Coscheduling's
  bound members) reads them from the `Snapshot`, so preemption removes candidate victims from
  the snapshot (`Snapshot.evict`, journaled and undone after), adds a reprieved one back
  (`Snapshot.bind`), and asks the Refilter: the same answer from every plugin at once.
* Reserve (`ReservePlugin`): what a placed gang writes at bind time (GPU rank order).
* Permit (`PermitPlugin`): hold a gang still assembling; let go of one past its timeout
  (Coscheduling: its `PermitResult` carries the `Expiry`, which the cycle carries out: the
  gang's reservations and nominations released, Unreserve run, a backoff).

Every step answers a `Status` (a `Code`, reasons, the plugin); the runner stamps the `Step`
that decided on the verdict, and stamps the `CycleState` with each point as it runs it
(PreFilter, Filter, Score, Select, the placement points, PostFilter, Reserve, Permit), so an
error is reported at the point that raised it. Every rollback (an attempt that raised, a
timeout) runs the Reserve plugins' Unreserve. `CycleState` is one attempt's typed scratchpad (`StateKey`s name
their step and plugin, as kube builds its keys).

The extension points speak of what the kernels compute (a `GangDemand`, a `PreemptionPlan`, the
disruption `Budget`s), so this module sits above the kernels and below the plugins that
implement it; the runner (`engine`, `filtering`) calls the plugins through it. What depends
only on the index lives in `memo`, below everything that reads the index.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from controller.placer.snapshot import CLUSTER

if TYPE_CHECKING:
    from controller.placer.attempt_budget import AttemptBudget
    from controller.placer.budgets import Budget
    from controller.placer.demand import Assignment, Chosen, GangDemand, Level, OfferCounts
    from controller.placer.offer import Offers
    from controller.placer.preempt import PreemptionPlan, Refilter
    from controller.placer.rules import MemberRules
    from controller.placer.select import Placement
    from controller.placer.snapshot import ClusterIndex, Snapshot, SortKey
    from controller.placer.terms import PodTerms
    from controller.placer.timeout import Expiry
    from translations.gangs import Gang, GangPod

T = TypeVar("T")
Bool = npt.NDArray[np.bool_]
I64 = npt.NDArray[np.int64]


class Code(enum.Enum):
    """What a step, and then the attempt, decided (kube-scheduler's status codes, for gangs)."""

    SUCCESS = "Success"
    UNSCHEDULABLE = "Unschedulable"
    """Does not fit now; evicting something might change that."""
    UNRESOLVABLE = "Unresolvable"
    """Preemption cannot help (a spec error, too few members, no node passes the filters, too
    big even with every lower-priority pod gone, a gate or a claim nothing will lift)."""
    WAITING_FOR_VICTIMS = "WaitingForVictims"
    """Victims are terminating; the gang holds its nominated nodes."""
    ASSEMBLING = "Assembling"
    """Permit holds the gang: fewer pods than minMember exist yet, and the grace is not over."""
    ERROR = "Error"
    """The attempt itself failed (an object it could not read, or a bug): what the gang reserved
    is given back, it backs off, and the cycle goes on with the other gangs."""


class Step(enum.Enum):
    """The extension point that decided an attempt."""

    PRE_ENQUEUE = "PreEnqueue"
    PRE_FILTER = "PreFilter"
    FILTER = "Filter"
    SCORE = "Score"
    SELECT = "Select"
    PLACEMENT_GENERATE = "PlacementGenerate"
    PLACEMENT_SCORE = "PlacementScore"
    PLACEMENT_FEASIBLE = "PlacementFeasible"
    POST_FILTER = "PostFilter"
    RESERVE = "Reserve"
    PERMIT = "Permit"


@dataclass(frozen=True, slots=True)
class Status:
    """One step's answer. `reasons` are kube's words; `plugin` is who said it ("" for the runner)."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def message(self) -> str:
        return "; ".join(self.reasons)


SUCCESS = Status()

SCHEDULING_GATED = "SchedulingGated"
"""The PodScheduled condition's reason for a pod PreEnqueue holds back (kube's
`PodReasonSchedulingGated`)."""


# --- state ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StateKey(Generic[T]):
    """A typed slot of the `CycleState`, named `<Step>/<Plugin>` as kube names its keys."""

    name: str
    attempt: bool = False
    """Kept for the whole attempt: the filters run again (preemption's `rerun`) start with it,
    where every other slot starts empty. For what a plugin derives from one bound pod at a time
    (never from the set of bound pods), so it holds whatever preemption removes or puts back."""


class CycleState:
    """One attempt's scratchpad: what PreFilter computes, Filter and Score read (typed keys).
    Slots of an `attempt` key live in a table every `rerun` of the attempt shares."""

    def __init__(self, attempt: dict[StateKey[Any], Any] | None = None) -> None:
        self._data: dict[StateKey[Any], Any] = {}
        self._attempt: dict[StateKey[Any], Any] = attempt if attempt is not None else {}
        self.step = Step.PRE_ENQUEUE
        """The step running now (an error is reported as this step's)."""

    def _table(self, key: StateKey[Any]) -> dict[StateKey[Any], Any]:
        return self._attempt if key.attempt else self._data

    def write(self, key: StateKey[T], value: T) -> None:
        self._table(key)[key] = value

    def read(self, key: StateKey[T]) -> T:
        try:
            value: T = self._table(key)[key]
        except KeyError:
            raise KeyError(f"cycle state has no {key.name}: its PreFilter did not run") from None
        return value

    def get(self, key: StateKey[T], default: T) -> T:
        value: T = self._table(key).get(key, default)
        return value

    def rerun(self) -> CycleState:
        """A fresh state for the attempt's PreFilter and Filter run again (preemption, on the
        snapshot with candidate victims removed): every slot empty but the attempt's, which it
        shares (what one run keeps there, the next finds)."""
        return CycleState(self._attempt)


WITHOUT_LOWER: StateKey[int | None] = StateKey("PostFilter/DefaultPreemption/withoutLower")
"""Set on a run of the filters for preemption's best case: they answer as if every bound pod
a gang of this priority may evict (`preempt.may_go`) were gone, though the snapshot still holds
them. The plugins that read bound pods leave those out of their counts (their PreFilter keeps
them apart from the pods that stay), so the best case costs no eviction of every such pod."""


def without_lower(state: CycleState) -> int | None:
    """The priority whose evictable pods the filters leave out (`WITHOUT_LOWER`), or None."""
    return state.get(WITHOUT_LOWER, None)


# --- what plugins see -----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ShapeClass:
    """Pending pods of one gang that are interchangeable for placement: same request row, same
    filter spec, same inter-pod terms, same labels where a selector in play reads them."""

    members: tuple[int, ...]
    """Positions in the attempt's pending pods (rank order)."""
    pod: GangPod
    """The first member: what filters read."""
    req: I64
    """The request over the index's resource axis."""
    terms: PodTerms | None
    """The members' inter-pod terms (None: none)."""


Cut = tuple[str, Bool]
"""(reason in kube's words, the nodes that pass): one rule a Filter plugin applies."""


# --- extension points -----------------------------------------------------------------------------


class Plugin(Protocol):
    name: ClassVar[str]


class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, gang: Gang) -> Status: ...


class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, gang: Gang, pods: Sequence[GangPod], snap: Snapshot
    ) -> Status: ...


class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]: ...


class FilterRoomPlugin(Plugin, Protocol):
    def room(self, state: CycleState, cls: ShapeClass, snap: Snapshot, free: I64) -> Sequence[Cut]:
        """Per reason, the nodes whose `free` room holds one more pod of `cls`."""
        ...


class MemberRulesPlugin(Plugin, Protocol):
    def member_rules(
        self, state: CycleState, pods: Sequence[GangPod], classes: Sequence[ShapeClass], snap: Snapshot
    ) -> MemberRules: ...


@dataclass(frozen=True)
class PostFilterResult:
    """What PostFilter answers: its status and, when it preempts, the plan (victims and the
    nodes the gang is nominated to; kube's `PostFilterResult` carries the nominated node)."""

    status: Status
    plan: PreemptionPlan | None = None


class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self,
        gang: Gang,
        demand: GangDemand,
        snap: Snapshot,
        free: I64,
        budgets: Sequence[Budget],
        attempt_budget: AttemptBudget,
        *,
        refilter: Refilter | None = None,
    ) -> PostFilterResult: ...

    def victims_terminating(self, gang: Gang, snap: Snapshot) -> Status | None:
        """Before the gang is tried: the wait while victims of its own earlier preemption
        still terminate on its nominated nodes (kube's `PodEligibleToPreemptOthers`); None
        when there is none."""
        ...


class ScorePlugin(Plugin, Protocol):
    def score(
        self, state: CycleState, classes: Sequence[ShapeClass], snap: Snapshot, feasible: Bool
    ) -> I64 | None:
        """The raw score per node, summed over the classes; None when the plugin has nothing to
        say (kube would give every node one value, which orders nothing). `feasible`: the nodes
        that passed Filter, the ones kube's PreScore is given (a plugin may read them, as
        PodTopologySpread counts its domains among them)."""
        ...

    def normalize(self, state: CycleState, scores: I64, feasible: Bool) -> I64:
        """`scores` mapped to 0..MAX_NODE_SCORE as kube's NormalizeScore maps them, reading only
        the `feasible` nodes (kube normalizes over the nodes that passed Filter); the others'
        values are 0."""
        ...


@dataclass(frozen=True)
class Weighted:
    """A Score plugin and its weight in the profile (kube's `plugins.score.enabled[].weight`)."""

    plugin: ScorePlugin
    weight: int

    @property
    def name(self) -> str:
        return self.plugin.name


MAX_NODE_SCORE = 100
"""The highest normalized score (kube's framework.MaxNodeScore)."""


def default_normalize(scores: I64, feasible: Bool, *, reverse: bool = False) -> I64:
    """kube's DefaultNormalizeScore over the feasible nodes: scaled so the highest becomes
    MAX_NODE_SCORE (integer division, as kube divides); `reverse` turns s into MAX - s. All zero
    stays zero, or becomes MAX when reversed."""
    top = int(scores[feasible].max(initial=0))
    if top == 0:
        out = np.full(len(scores), MAX_NODE_SCORE if reverse else 0, dtype=np.int64)
    else:
        out = MAX_NODE_SCORE * scores // top
        out = MAX_NODE_SCORE - out if reverse else out
    return np.where(feasible, out, 0)


class ReservePlugin(Plugin, Protocol):
    def reserve(
        self, gang: Gang, placed: Sequence[tuple[str, str]], index: ClusterIndex
    ) -> Mapping[str, Mapping[str, str]]:
        """Annotations to write on each newly placed pod at bind time."""
        ...

    def unreserve(self, gang: Gang) -> None: ...


@dataclass(frozen=True)
class PermitInput:
    gang: Gang
    now: float
    first_seen: float
    failures: int
    """Timeouts in a row so far (the next backoff doubles)."""
    assembly_grace: float


@dataclass(frozen=True)
class PermitResult:
    """What Permit answers for a gang that is not placed: hold it (`Assembling`), let it go
    (`expiry` set: its timeout fired), or neither (SUCCESS)."""

    status: Status = SUCCESS
    expiry: Expiry | None = None


class PermitPlugin(Plugin, Protocol):
    def permit(self, request: PermitInput) -> PermitResult: ...


# --- placement points (inside Select) --------------------------------------------------------------


@dataclass(frozen=True)
class PlacementRequest:
    """What every placement point is given: the demand being placed (the whole gang, a subgroup
    or a rank prefix of it), the index its places are drawn from, and the attempt's state
    (what the plugins' PreFilter wrote; upstream's PodGroupCycleState)."""

    demand: GangDemand
    index: ClusterIndex
    state: CycleState


class PlacementGeneratePlugin(Plugin, Protocol):
    def generate(self, request: PlacementRequest, parent: Sequence[Level]) -> list[Level]:
        """The levels whose places are candidates, lowest first, within `parent` (what the
        plugins before it left; the first is given every level)."""
        ...

    def node_set(self, request: PlacementRequest, free: I64, levels: Sequence[Level]) -> Chosen | None:
        """The node set this plugin chooses itself on `free` among the places of `levels`
        (what every plugin's `generate` left), or None to leave the gang to the selection's
        descent."""
        ...

    def unplaced(self, request: PlacementRequest, offers: OfferCounts) -> str | None:
        """Why none of its candidates holds the demand, in the plugin's own words; None: it
        has none (the runner then uses kube's)."""
        ...


class PlacementScorePlugin(Plugin, Protocol):
    def order(self, request: PlacementRequest, anc: I64, rows: I64, dom_offer: I64) -> list[SortKey]:
        """Sort keys for the candidates `rows` of the ancestor table `anc` (per candidate, its
        enclosing domains), most significant first; `dom_offer`: pods each domain holds."""
        ...


class PlacementFeasiblePlugin(Plugin, Protocol):
    def feasible(self, request: PlacementRequest, assignments: Sequence[Assignment]) -> Status: ...


class GroupPlacementPlugin(Plugin, Protocol):
    """kube-scheduler 1.37's pod-group algorithm for a group it places whole
    (`algorithm_podgroup.go`): PlacementGenerate makes one candidate placement per domain, the
    group is placed pod by pod inside each, and PlacementScore picks the best. A plugin here
    does all three for the gangs it `applies` to; the runner asks it before the selection's
    descent, and takes its answer (the placement, or None, and the demand it placed: an
    elastic group may keep only a prefix)."""

    def applies(self, gang: Gang, demand: GangDemand, index: ClusterIndex) -> bool: ...

    def place(
        self, gang: Gang, demand: GangDemand, index: ClusterIndex, free: I64, offers: Offers, required: int
    ) -> tuple[Placement | None, GangDemand]: ...


class PlacementPoints:
    """The runner of the placement points for one attempt (the demand carries it): each point's
    plugins in profile order, the `CycleState` stamped with the point while it runs (an error
    raised there is reported at that point), the step before it restored after."""

    def __init__(self, profile: Profile, state: CycleState) -> None:
        self._generate = profile.placement_generate
        self._score = profile.placement_score
        self._feasible = profile.placement_feasible
        self._state = state

    def levels(self, demand: GangDemand, index: ClusterIndex) -> list[Level]:
        request, before = PlacementRequest(demand, index, self._state), self._enter(Step.PLACEMENT_GENERATE)
        out: list[Level] = [0, *(t for t in index.tiers if t > 0), CLUSTER]
        for plugin in self._generate:
            out = plugin.generate(request, out)
        self._state.step = before
        return out

    def choose(self, demand: GangDemand, free: I64, index: ClusterIndex) -> Chosen | None:
        levels = self.levels(demand, index)
        request, before = PlacementRequest(demand, index, self._state), self._enter(Step.PLACEMENT_GENERATE)
        got: Chosen | None = None
        for plugin in self._generate:
            got = plugin.node_set(request, free, levels)
            if got is not None:
                break
        self._state.step = before
        return got

    def order(
        self, demand: GangDemand, index: ClusterIndex, anc: I64, rows: I64, dom_offer: I64
    ) -> list[SortKey]:
        request, before = PlacementRequest(demand, index, self._state), self._enter(Step.PLACEMENT_SCORE)
        keys: list[SortKey] = []
        for plugin in self._score:
            keys += plugin.order(request, anc, rows, dom_offer)
        self._state.step = before
        return keys

    def feasible(self, demand: GangDemand, index: ClusterIndex, assignments: Sequence[Assignment]) -> bool:
        request, before = PlacementRequest(demand, index, self._state), self._enter(Step.PLACEMENT_FEASIBLE)
        ok = all(plugin.feasible(request, assignments).ok for plugin in self._feasible)
        self._state.step = before
        return ok

    def unplaced(self, demand: GangDemand, index: ClusterIndex, offers: OfferCounts) -> str | None:
        request, before = PlacementRequest(demand, index, self._state), self._enter(Step.PLACEMENT_GENERATE)
        why: str | None = None
        for plugin in self._generate:
            why = plugin.unplaced(request, offers)
            if why is not None:
                break
        self._state.step = before
        return why

    def _enter(self, step: Step) -> Step:
        before, self._state.step = self._state.step, step
        return before


@dataclass
class Profile:
    """The plugins of each extension point, in the order they run (kube's profile)."""

    pre_enqueue: list[PreEnqueuePlugin] = field(default_factory=list)
    pre_filter: list[PreFilterPlugin] = field(default_factory=list)
    filter: list[FilterPlugin] = field(default_factory=list)
    filter_room: list[FilterRoomPlugin] = field(default_factory=list)
    member_rules: list[MemberRulesPlugin] = field(default_factory=list)
    score: list[Weighted] = field(default_factory=list)
    placement_generate: list[PlacementGeneratePlugin] = field(default_factory=list)
    placement_score: list[PlacementScorePlugin] = field(default_factory=list)
    placement_feasible: list[PlacementFeasiblePlugin] = field(default_factory=list)
    group_placement: list[GroupPlacementPlugin] = field(default_factory=list)
    post_filter: PostFilterPlugin | None = None
    """None: nothing is ever evicted to make room."""
    reserve: list[ReservePlugin] = field(default_factory=list)
    permit: list[PermitPlugin] = field(default_factory=list)

    def names(self) -> dict[str, list[str]]:
        """Each extension point's plugins by name, in order (for docs and tests)."""
        out: dict[str, list[str]] = {}
        for point, plugins in vars(self).items():
            listed = plugins if isinstance(plugins, list) else [plugins] if plugins is not None else []
            out[point] = [p.name for p in listed]
        return out


_DEFAULT_PROFILE: list[Callable[[], Profile]] = []


def register_default_profile(factory: Callable[[], Profile]) -> None:
    """Make `factory` what `default_profile` calls (kube's in-tree registry: the plugins package
    registers itself when the placer package is loaded, so the runner names no plugin)."""
    _DEFAULT_PROFILE[:] = [factory]


def default_profile() -> Profile:
    """The profile an attempt runs when its caller names none: every in-tree plugin."""
    if not _DEFAULT_PROFILE:
        raise LookupError("no default profile is registered: import controller.placer.plugins")
    return _DEFAULT_PROFILE[0]()
