"""Simulation: a cluster snapshot given as plain Kubernetes objects, run to quiescence.

Input is what `kubectl get -o yaml` prints, as plain objects (the CLI reads the YAML), of the
kinds the scheduler reads (`translations.kinds.SCHEDULER_KINDS`): Nodes, Pods (bound ones
have `spec.nodeName`), PodGroups of any of the three groups, batch/v1 Jobs (the GPU dialect's
gangs), HyperNodes, a ClusterNetworkTopology (`default`), Kueue Topologies, PriorityClasses,
PodDisruptionBudgets and Namespaces; the tree is the one the scheduler would choose among them
(`cluster.choose_topology`). Other kinds are skipped with a warning, except the jobs below.
An object that cannot be read raises `ScenarioError` naming the document, the object and the
field; so does a name or namespace the API server would refuse (`translations.envelope`:
`nodeC`, a namespace `NS1`).

Jobs are taken as users write them: once every object is read, each LeaderWorkerSet, Volcano
Job and batch/v1 Job is expanded (`translations.expand`, in input order) into the pods and
Volcano PodGroups its controllers would create, less those the input (or an earlier
expansion) already holds; `Scenario.expansions` says what each one made. A job that cannot be
expanded raises `ScenarioError` naming its document (lenient: a warning, and it is left out).

The run is the live scheduler's cycle (`controller.placer.cycle`) repeated on a static
cluster with a fake clock until nothing changes: each round takes the snapshot, runs one
cycle, and applies its plan as the API server would (bound pods get their node, victims a
deletionTimestamp, nominated pods `status.nominatedNodeName`); between rounds terminating pods
finish and the clock moves past the assembly grace. Pending pods stay pending when nothing fits.

Reading and running hold Python's cyclic collector off (`translations.collector`): both make
an object or more per pod that outlives them, which would set off full collections walking
every pod read so far (measured: half of reading a 20,000-pod Job), and neither makes cycles.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from controller.placer.cluster import ClusterState, Kind, choose_topology
from controller.placer.cycle import (
    DEFAULT_ASSEMBLY_GRACE,
    CycleOptions,
    CyclePlan,
    GangTiming,
    SchedulingCycle,
)
from controller.placer.snapshot import I64, ClusterIndex, Snapshot
from translations import collector, kinds, kueue, volcano
from translations import expand as expandmod
from translations import koordinator as koord
from translations.core import (
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PodStatus,
    PriorityClass,
    effective_requests,
)
from translations.envelope import name_problems
from translations.errors import InvalidSpecError, ScenarioError, TopobridgeError, go_quote
from translations.gangs import Gang, PodGroups
from translations.topology import TopologyTree, natural_key

DEFAULT_SCHEDULERS = ("volcano", "koord-scheduler", "topobridge")
MAX_ROUNDS = 1000


# --- reading ----------------------------------------------------------------------------------


@dataclass
class Scenario:
    """Typed objects of one snapshot."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    podgroups: PodGroups = field(default_factory=PodGroups)
    hypernodes: list[volcano.HyperNode] = field(default_factory=list)
    cnt: koord.ClusterNetworkTopology | None = None
    kueue_topologies: list[kueue.Topology] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    """Their labels are what a pod affinity term's namespaceSelector selects by."""
    expansions: list[expandmod.Expansion] = field(default_factory=list)
    """What each LeaderWorkerSet, Volcano Job and batch/v1 Job of the input expanded to."""
    warnings: list[str] = field(default_factory=list)
    lenient: bool = False
    """Objects that cannot be used are left out with a warning (a live cluster)."""

    @classmethod
    def of(cls, loaded: Mapping[Kind, list[Any]], *, warnings: list[str], lenient: bool) -> Scenario:
        """The scenario of objects read per kind (`by_kind` is the way back)."""
        return cls(
            nodes=loaded[Kind.NODE],
            pods=loaded[Kind.POD],
            podgroups=PodGroups(
                volcano=loaded[Kind.VOLCANO_PODGROUP],
                koordinator=loaded[Kind.SIGS_PODGROUP],
                scheduler_plugins=loaded[Kind.X_PODGROUP],
                jobs=loaded[Kind.JOB],
                upstream=loaded[Kind.K8S_PODGROUP],
                upstream_workloads=loaded[Kind.K8S_WORKLOAD],
            ),
            hypernodes=loaded[Kind.HYPERNODE],
            cnt=next(iter(loaded[Kind.CNT]), None),
            kueue_topologies=loaded[Kind.KUEUE_TOPOLOGY],
            priority_classes=loaded[Kind.PRIORITY_CLASS],
            pdbs=loaded[Kind.PDB],
            namespaces=loaded[Kind.NAMESPACE],
            warnings=warnings,
            lenient=lenient,
        )

    def by_kind(self) -> dict[Kind, Sequence[Any]]:
        """The objects per `ClusterState` store, as `cluster_state` puts them."""
        return {
            Kind.NODE: self.nodes,
            Kind.POD: self.pods,
            Kind.VOLCANO_PODGROUP: self.podgroups.volcano,
            Kind.SIGS_PODGROUP: self.podgroups.koordinator,
            Kind.X_PODGROUP: self.podgroups.scheduler_plugins,
            Kind.HYPERNODE: self.hypernodes,
            Kind.CNT: [self.cnt] if self.cnt is not None else [],
            Kind.KUEUE_TOPOLOGY: self.kueue_topologies,
            Kind.PRIORITY_CLASS: self.priority_classes,
            Kind.PDB: self.pdbs,
            Kind.JOB: self.podgroups.jobs,
            Kind.NAMESPACE: self.namespaces,
            Kind.K8S_PODGROUP: self.podgroups.upstream,
            Kind.K8S_WORKLOAD: self.podgroups.upstream_workloads,
        }


def load_scenario(
    objects: Sequence[Mapping[str, Any]], *, sources: Sequence[str] | None = None, lenient: bool = False
) -> Scenario:
    """Parse every object at the edge; the first bad one raises ScenarioError naming where it
    came from (`sources[i]`, e.g. `file.yaml document 3`), the object and the field.

    Which kind is read, and into which model and store, is the scheduler's table of kinds
    (`translations.kinds.SCHEDULER_KINDS`, `cluster.Kind`); other kinds are skipped with a
    warning, and a PodGroup of a group no scheduler reads is an error.

    `lenient` (a live cluster, where one malformed object should not stop a dry run): a bad
    object is left out with a warning instead.
    """
    with collector.paused():  # a pod or more per object made and kept: nothing to collect
        return _load(objects, sources, lenient)


def _load(objects: Sequence[Mapping[str, Any]], sources: Sequence[str] | None, lenient: bool) -> Scenario:
    loaded: dict[Kind, list[Any]] = {kind: [] for kind in Kind}
    warnings: list[str] = []
    seen: dict[tuple[str, str, str], str] = {}
    held: list[tuple[str, expandmod.Expandable]] = []
    for i, raw in enumerate(objects):
        where = sources[i] if sources is not None else f"object {i + 1}"
        label = _label(raw, where)
        try:
            kind = _identify(raw, label, where, seen)
            obj = _read(kind, raw) if kind is not None else _read_expandable(raw)
            if obj is None:
                warnings.append(_skipped(raw, label))
                continue
            if kind is not None:
                loaded[kind].append(obj)
            if kind is None or kind is Kind.JOB:  # a job whose pods simulate makes
                held.append((label, obj))
        except InvalidSpecError as exc:
            if not lenient:
                raise ScenarioError(f"{label}: {exc}") from None
            warnings.append(f"{label}: left out: {exc}")
        except ScenarioError as exc:
            if not lenient:
                raise
            warnings.append(f"left out: {exc}")
    sc = Scenario.of(loaded, warnings=warnings, lenient=lenient)
    for label, job in held:
        _expand(sc, label, job)
    return sc


def _read_expandable(raw: Mapping[str, Any]) -> expandmod.Expandable | None:
    """A LeaderWorkerSet or Volcano Job (kinds the scheduler does not read, but whose pods
    `simulate` makes), in `default` when it names no namespace; None for any other kind."""
    api = str(raw.get("apiVersion") or "")
    model = expandmod.KINDS.get((api.split("/", 1)[0] if "/" in api else "", str(raw.get("kind") or "")))
    if model is None:
        return None
    obj = model.parse(raw)
    if not obj.namespace:
        obj.metadata.namespace = "default"
    return obj


def _expand(sc: Scenario, label: str, job: expandmod.Expandable) -> None:
    """Add what `job`'s controllers would create (see the module docstring)."""
    try:
        made = expandmod.expand(
            job,
            pods=sc.pods,
            pod_groups={pg.key for pg in sc.podgroups.volcano},
            priority_classes=sc.priority_classes,
        )
        pods = expandmod.parse_pods(made.pods)
        _check_requests(pods)
        groups = [volcano.PodGroup.parse(raw) for raw in made.pod_groups]
    except TopobridgeError as exc:
        if not sc.lenient:
            raise ScenarioError(f"{label}: {exc}") from None
        sc.warnings.append(f"{label}: left out: {exc}")
        return
    sc.pods += pods
    sc.podgroups = replace(sc.podgroups, volcano=[*sc.podgroups.volcano, *groups])
    sc.expansions.append(made)


def _check_requests(pods: Iterable[Pod]) -> None:
    """Each pod's requests read (a quantity that cannot be read raises), once per distinct
    set of the parts they are read from: the pods of one template share theirs
    (`expand.parse_pods`), and the same parts read the same."""
    last: tuple[object, ...] = ()
    for pod in pods:
        spec = pod.spec
        parts = (spec.containers, spec.init_containers, spec.overhead, spec.resources)
        if len(last) != len(parts) or not all(map(operator.is_, parts, last)):
            effective_requests(spec)
            last = parts


def _meta(raw: Mapping[str, Any]) -> tuple[str, str]:
    meta = raw.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _label(raw: Mapping[str, Any], where: str) -> str:
    """`where (Kind namespace/name)`, what every message about the object starts with."""
    kind = str(raw.get("kind") or "")
    ns, name = _meta(raw)
    return f"{where} ({kind or '(no kind)'} {ns + '/' if ns else ''}{name or '(no name)'})"


def _identify(
    raw: Mapping[str, Any], label: str, where: str, seen: dict[tuple[str, str, str], str]
) -> Kind | None:
    """The store the object goes to (None: a kind the scheduler does not read), after the
    checks the API server would make first: its name, and that it is not there twice."""
    named = name_problems(raw, require_name=True)  # as the API server names objects
    if named:
        raise ScenarioError(f"{label}: " + "; ".join(f"{p.field_path}: {p.detail}" for p in named))
    kind, api = str(raw.get("kind") or ""), str(raw.get("apiVersion") or "")
    group = api.split("/", 1)[0] if "/" in api else ""
    ident = (kind if kind != "PodGroup" else f"PodGroup.{group}", *_meta(raw))
    if ident in seen:
        raise ScenarioError(
            f"{label}: metadata.name: Duplicate value: {go_quote(ident[2])}: the same object as {seen[ident]}"
        )
    seen[ident] = where
    read = kinds.scheduler_kind(api, kind)
    if read is None and kind == "PodGroup":
        groups = ", ".join(r.api.group for r in kinds.SCHEDULER_KINDS if r.api.kind == "PodGroup")
        raise ScenarioError(
            f"{label}: apiVersion: Unsupported value: {go_quote(api)}: supported groups: {groups}"
        )
    return Kind(read.api) if read is not None else None


def _read(kind: Kind, raw: Mapping[str, Any]) -> Any:
    """The object parsed into its kind's model and checked as the scheduler reads it (None:
    an object of the kind the scheduler passes over). Namespaced objects without a namespace
    are in `default`, as kubectl would create them."""
    obj = kind.read.model.parse(raw)
    if kind.value.namespaced and not obj.namespace:
        obj.metadata.namespace = "default"
    if isinstance(obj, Node):
        obj.allocatable()  # quantities are checked here, at the edge
    elif isinstance(obj, Pod):
        effective_requests(obj.spec)
    elif kind is Kind.JOB:
        obj.metadata.uid = obj.metadata.uid or expandmod.stand_in_uid("Job", obj.namespace, obj.name)
    elif kind is Kind.CNT and obj.name != koord.CNT_DEFAULT_NAME:
        return None
    return obj


def _skipped(raw: Mapping[str, Any], label: str) -> str:
    kind = str(raw.get("kind") or "")
    if kind == "ClusterNetworkTopology" and kinds.scheduler_kind(str(raw.get("apiVersion") or ""), kind):
        return f'{label}: ignored: only the ClusterNetworkTopology named "default" is read'
    return f"{label}: skipped: kind {kind} plays no part in placement"


def topology_of(sc: Scenario) -> TopologyTree:
    """The tree the scheduler would use (`cluster.choose_topology`); a ClusterNetworkTopology
    or Kueue Topology it would pass over as unusable is an error here unless the scenario is
    lenient (then: a warning, and the next source)."""
    choice = choose_topology(sc.nodes, sc.hypernodes, sc.cnt, sc.kueue_topologies)
    if choice.unusable and not sc.lenient:
        raise ScenarioError(choice.unusable[0])
    return choice.tree


def cluster_state(sc: Scenario) -> ClusterState:
    """The scenario's objects in a `ClusterState`, as the live cache would hold them."""
    topology_of(sc)  # a strict scenario fails here, naming the unusable topology object
    state = ClusterState()
    stores = sc.by_kind()
    # Pods last: a Job or a PriorityClass put after its pods would make the state work out
    # each pod's gang again (the result is the same in any order, the work is not).
    for kind in sorted(stores, key=lambda k: k is Kind.POD):
        for obj in stores[kind]:
            state.put(kind, obj.key if kind.value.namespaced else obj.name, obj)
    return state


# --- running ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    round: int
    gang: str
    what: str
    """placed, preempting, waiting, unschedulable"""
    message: str


@dataclass
class SimulationResult:
    bound: dict[str, str] = field(default_factory=dict)
    nominated: dict[str, str] = field(default_factory=dict)
    evicted: list[str] = field(default_factory=list)
    unschedulable: dict[str, str] = field(default_factory=dict)
    gangs: dict[str, tuple[str, int]] = field(default_factory=dict)
    conditions: dict[str, Mapping[str, str]] = field(default_factory=dict)
    """Victim -> the DisruptionTarget condition it got."""
    waiting: dict[str, str] = field(default_factory=dict)
    """Gang -> the message its pods showed while its victims terminated."""
    events: list[Event] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    index: ClusterIndex | None = None
    expansions: list[expandmod.Expansion] = field(default_factory=list)
    """What the input's jobs expanded to (`Scenario.expansions`)."""
    final_pods: dict[str, str] = field(default_factory=dict)
    """Every pod on a node at the end: pod -> node."""
    initial_pods: dict[str, str] = field(default_factory=dict)
    final_used: I64 | None = None
    """[node, resource] requested at the end, on the index's axes."""

    def contract(self) -> dict[str, Any]:
        """The `--output json` object: these five keys, and `expanded` when the input had jobs
        to expand."""
        out = {
            "bound": dict(sorted(self.bound.items(), key=lambda kv: natural_key(kv[0]))),
            "nominated": dict(sorted(self.nominated.items(), key=lambda kv: natural_key(kv[0]))),
            "evicted": sorted(self.evicted, key=natural_key),
            "unschedulable": dict(sorted(self.unschedulable.items(), key=lambda kv: natural_key(kv[0]))),
            "gangs": {
                k: {"domain": d, "tier": t}
                for k, (d, t) in sorted(self.gangs.items(), key=lambda kv: natural_key(kv[0]))
            },
        }
        if self.expansions:
            out["expanded"] = {e.subject: e.to_dict() for e in self.expansions}
        return out


@dataclass
class Prepared:
    """A scenario turned into one cycle's inputs (for tests and tools that call the engine)."""

    tree: TopologyTree
    index: ClusterIndex
    snapshot: Snapshot
    discovered: list[Gang]
    warnings: list[str]

    def gangs(self, sc: Scenario | None = None) -> list[Gang]:
        """Every gang, as the first cycle sees them (`sc` is not needed; kept for callers)."""
        del sc
        return self.discovered


def prepare(sc: Scenario) -> Prepared:
    """Tree, static index, snapshot and gangs, exactly as the first cycle would see them."""
    view = cluster_state(sc).view()
    return Prepared(
        view.tree,
        view.index,
        view.snapshot,
        sorted(view.gangs.values(), key=lambda g: natural_key(g.key)),
        [*sc.warnings, *view.warnings, *_orphans(sc)],
    )


def _orphans(sc: Scenario) -> list[str]:
    names = {n.name for n in sc.nodes}
    return [
        f"pod {p.key}: holds nothing: bound to node {p.spec.node_name}, which is not in the snapshot"
        for p in sc.pods
        if not p.terminal and p.bound and p.spec.node_name not in names
    ]


def simulate(
    sc: Scenario,
    *,
    schedulers: Iterable[str] = DEFAULT_SCHEDULERS,
    assembly_grace: float = DEFAULT_ASSEMBLY_GRACE,
    options: CycleOptions | None = None,
) -> SimulationResult:
    """The live cycle, run to quiescence (see the module docstring), with `run`'s options (its
    `--attempt-budget` among them: counted in steps, it cuts a search where `run` cuts it)."""
    with collector.paused():  # the state and every bind make objects that are kept
        return _simulate(sc, tuple(schedulers), assembly_grace, options)


def _simulate(
    sc: Scenario, served: tuple[str, ...], assembly_grace: float, options: CycleOptions | None
) -> SimulationResult:
    """`simulate`'s rounds."""
    state = cluster_state(sc)
    timing = GangTiming()
    clock = 0.0
    view = state.view()
    index = view.index
    res = SimulationResult(
        warnings=[*sc.warnings, *view.warnings, *_orphans(sc)], index=index, expansions=list(sc.expansions)
    )
    res.initial_pods = {k: index.node_names[p.node] for k, p in view.snapshot.pods.items()}
    last: dict[str, str] = {}
    for rnd in range(1, MAX_ROUNDS + 1):
        plan = SchedulingCycle(
            view,
            served=served,
            now=clock,
            timing=timing,
            assembly_grace=assembly_grace,
            options=options or CycleOptions(),
        ).run()
        for key, outcome in plan.outcomes.items():
            if outcome.report:
                last[key] = outcome.message
        changed = _apply_binds(state, plan, rnd, res, timing, last)
        changed = _apply_preemptions(state, plan, rnd, res) or changed or bool(plan.waiting)
        # Terminating pods finish between rounds; the clock moves past any permit wait.
        for key in [k for k, p in state.pods.items() if p.metadata.deletion_timestamp is not None]:
            state.delete(Kind.POD, key)
            changed = True
        clock += assembly_grace + 1.0
        view = state.view()
        if not changed:
            break
    for key in view.pending:
        gang = view.gangs[key]
        if gang.served_by(served):
            msg = last.get(key, "not attempted")
            res.unschedulable[key] = msg
            res.events.append(Event(0, key, "unschedulable", msg))
    res.final_pods = {k: index.node_names[p.node] for k, p in view.snapshot.pods.items()}
    res.final_used = view.snapshot.used.copy()
    return res


def _apply_binds(
    state: ClusterState,
    plan: CyclePlan,
    rnd: int,
    res: SimulationResult,
    timing: GangTiming,
    last: dict[str, str],
) -> bool:
    """Bind as the API server would: each pod gets its node. True when anything was bound."""
    for bind in plan.binds:
        for pod_key, node in bind.pods:
            _put_pod(state, pod_key, node_name=node)
            res.bound[pod_key] = node
        res.gangs[bind.gang] = (bind.domain, bind.tier)
        where = f"{bind.domain} (tier {bind.tier})"
        res.events.append(Event(rnd, bind.gang, "placed", f"{len(bind.pods)} pod(s) in {where}"))
        timing.bound(bind.gang)
        last.pop(bind.gang, None)
    return bool(plan.binds)


def _apply_preemptions(state: ClusterState, plan: CyclePlan, rnd: int, res: SimulationResult) -> bool:
    """Victims get a deletionTimestamp, preemptors their nominated nodes. True when any did."""
    for pre in plan.preemptions:
        for victim in pre.plan.victims:
            _put_pod(state, victim.pod, deleting=True)
            res.conditions[victim.pod] = victim.condition
            if victim.pod not in res.evicted:
                res.evicted.append(victim.pod)
        for pod_key, node in pre.plan.nominated:
            _put_pod(state, pod_key, nominated=node)
            res.nominated[pod_key] = node
        victims = ", ".join(v.pod for v in pre.plan.victims)
        res.events.append(Event(rnd, pre.gang, "preempting", f"in {pre.plan.domain}: evicting {victims}"))
        res.waiting[pre.gang] = pre.message
        res.events.append(Event(rnd, pre.gang, "waiting", pre.message))
    return bool(plan.preemptions)


SIMULATED_DELETION = "1970-01-01T00:00:00Z"


def _put_pod(
    state: ClusterState,
    key: str,
    *,
    node_name: str | None = None,
    deleting: bool = False,
    nominated: str | None = None,
) -> None:
    """What the API server would store after a bind, a delete with grace, a nomination."""
    pod = state.pods[key]
    update: dict[str, Any] = {}
    if node_name is not None:
        update["spec"] = pod.spec.replaced(node_name=node_name)
        if pod.status is not None and pod.status.nominated_node_name:
            update["status"] = pod.status.replaced(nominated_node_name=None)
    if deleting:
        update["metadata"] = pod.metadata.replaced(deletion_timestamp=SIMULATED_DELETION)
    if nominated is not None:
        status = pod.status or PodStatus()
        update["status"] = status.replaced(nominated_node_name=nominated)
    state.put(Kind.POD, key, pod.replaced(**update))
