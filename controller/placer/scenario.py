"""Simulation: a cluster snapshot given as plain Kubernetes objects, run to quiescence.

Input is what `kubectl get -o yaml` prints, as plain objects (the CLI reads the YAML):
Nodes, Pods (bound ones have `spec.nodeName`), PodGroups of any of the three groups, batch/v1
Jobs (the GPU dialect's gangs), HyperNodes or a ClusterNetworkTopology (`default`),
PriorityClasses and PodDisruptionBudgets. Other kinds
are skipped with a warning. An object that cannot be read raises `ScenarioError` naming the
document, the object and the field.

The run repeats rounds until nothing changes: gangs with pending pods whose schedulerName is
served go in order of priority (highest first), then age, then name; a placed gang is bound;
a preempting gang marks its victims terminating (DisruptionTarget), nominates its pods, and is
tried once more while they terminate (that attempt's message is what its pods show meanwhile);
between rounds terminating pods finish. Pending pods stay pending when nothing fits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from controller.placer.engine import Code, Verdict, lowest_common, schedule
from controller.placer.preempt import budgets_from
from controller.placer.snapshot import I64, BoundPod, ClusterIndex, Nomination, Snapshot
from controller.placer.terms import PodTerms
from translations import koordinator as koord
from translations import schedplugins, volcano
from translations._base import KubeModel
from translations.core import Job, Node, Pod, PodDisruptionBudget, PriorityClass, effective_requests
from translations.errors import InvalidSpecError, ScenarioError, go_quote
from translations.gangs import Gang, PodGroups, discover_gangs
from translations.topology import TopologyTree, from_cluster_network_topology, from_hypernodes, natural_key

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
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    lenient: bool = False
    """Objects that cannot be used are left out with a warning (a live cluster)."""


def load_scenario(
    objects: Sequence[Mapping[str, Any]], *, sources: Sequence[str] | None = None, lenient: bool = False
) -> Scenario:
    """Parse every object at the edge; the first bad one raises ScenarioError naming where it
    came from (`sources[i]`, e.g. `file.yaml document 3`), the object and the field.

    `lenient` (a live cluster, where one malformed object should not stop a dry run): a bad
    object is left out with a warning instead.
    """
    sc = Scenario(lenient=lenient)
    vpg: list[volcano.PodGroup] = []
    spg: list[koord.SigsPodGroup] = []
    xpg: list[schedplugins.XPodGroup] = []
    jobs: list[Job] = []
    seen: dict[tuple[str, str, str], int] = {}
    for i, raw in enumerate(objects):
        kind = str(raw.get("kind") or "")
        api = str(raw.get("apiVersion") or "")
        group = api.split("/", 1)[0] if "/" in api else ""
        raw_meta = raw.get("metadata")
        meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        name = str(meta.get("name") or "")
        ns = str(meta.get("namespace") or "")
        where = sources[i] if sources is not None else f"object {i + 1}"
        label = f"{where} ({kind or '(no kind)'} {ns + '/' if ns else ''}{name or '(no name)'})"
        try:
            if not name:
                raise ScenarioError(f"{label}: metadata.name: Required value")
            ident = (kind if kind != "PodGroup" else f"PodGroup.{group}", ns, name)
            if ident in seen:
                first = sources[seen[ident]] if sources is not None else f"object {seen[ident] + 1}"
                raise ScenarioError(f"{label}: Duplicate value: the same object as {first}")
            seen[ident] = i
            if kind == "Node":
                node = _parse(Node, raw, label)
                node.allocatable()  # quantities are checked here, at the edge
                sc.nodes.append(node)
            elif kind == "Pod":
                pod = _parse(Pod, raw, label)
                effective_requests(pod.spec)
                if not pod.namespace:
                    pod.metadata.namespace = "default"
                sc.pods.append(pod)
            elif kind == "PodGroup" and group == volcano.PODGROUP_GROUP:
                vpg.append(_namespaced(_parse(volcano.PodGroup, raw, label)))
            elif kind == "PodGroup" and group == koord.SIGS_GROUP:
                spg.append(_namespaced(_parse(koord.SigsPodGroup, raw, label)))
            elif kind == "PodGroup" and group == schedplugins.GROUP:
                xpg.append(_namespaced(_parse(schedplugins.XPodGroup, raw, label)))
            elif kind == "PodGroup":
                raise ScenarioError(
                    f"{label}: apiVersion: Unsupported value: {go_quote(api)}: supported groups: "
                    f"{volcano.PODGROUP_GROUP}, {koord.SIGS_GROUP}, {schedplugins.GROUP}"
                )
            elif kind == "Job" and group == "batch":
                job = _namespaced(_parse(Job, raw, label))
                job.metadata.uid = job.metadata.uid or f"{job.namespace}/{job.name}"
                jobs.append(job)
            elif kind == "HyperNode":
                sc.hypernodes.append(_parse(volcano.HyperNode, raw, label))
            elif kind == "ClusterNetworkTopology":
                cnt = _parse(koord.ClusterNetworkTopology, raw, label)
                if cnt.name == koord.CNT_DEFAULT_NAME:
                    sc.cnt = cnt
                else:
                    sc.warnings.append(
                        f'{label}: ignored: only the ClusterNetworkTopology named "default" is read'
                    )
            elif kind == "PriorityClass":
                sc.priority_classes.append(_parse(PriorityClass, raw, label))
            elif kind == "PodDisruptionBudget":
                pdb = _parse(PodDisruptionBudget, raw, label)
                if not pdb.namespace:
                    pdb.metadata.namespace = "default"
                sc.pdbs.append(pdb)
            else:
                sc.warnings.append(f"{label}: skipped: kind {kind} plays no part in placement")
        except InvalidSpecError as exc:
            if not lenient:
                raise ScenarioError(f"{label}: {exc}") from None
            sc.warnings.append(f"{label}: left out: {exc}")
        except ScenarioError as exc:
            if not lenient:
                raise
            sc.warnings.append(f"left out: {exc}")
    sc.podgroups = PodGroups(volcano=vpg, koordinator=spg, scheduler_plugins=xpg, jobs=jobs)
    return sc


M = TypeVar("M", bound=KubeModel)
PG = TypeVar("PG", volcano.PodGroup, koord.SigsPodGroup, schedplugins.XPodGroup, Job)


def _parse(model: type[M], raw: Mapping[str, Any], label: str) -> M:
    del label  # the caller prefixes errors with it
    return model.parse(raw)


def _namespaced(pg: PG) -> PG:
    if not pg.namespace:
        pg.metadata.namespace = "default"
    return pg


def topology_of(sc: Scenario) -> TopologyTree:
    """HyperNodes when there are any, else the ClusterNetworkTopology, else no tree."""
    if sc.hypernodes:
        return from_hypernodes(sc.hypernodes, sc.nodes)
    if sc.cnt is not None:
        try:
            return from_cluster_network_topology(sc.cnt, sc.nodes)
        except InvalidSpecError as exc:
            if not sc.lenient:
                raise ScenarioError(f"ClusterNetworkTopology default: {exc}") from None
            sc.warnings.append(f"ClusterNetworkTopology default: left out: {exc}")
    return TopologyTree.empty()


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
    final_pods: dict[str, str] = field(default_factory=dict)
    """Every pod on a node at the end: pod -> node."""
    initial_pods: dict[str, str] = field(default_factory=dict)
    final_used: I64 | None = None
    """[node, resource] requested at the end, on the index's axes."""

    def contract(self) -> dict[str, Any]:
        """The `--output json` object: exactly these five keys."""
        return {
            "bound": dict(sorted(self.bound.items(), key=lambda kv: natural_key(kv[0]))),
            "nominated": dict(sorted(self.nominated.items(), key=lambda kv: natural_key(kv[0]))),
            "evicted": sorted(self.evicted, key=natural_key),
            "unschedulable": dict(sorted(self.unschedulable.items(), key=lambda kv: natural_key(kv[0]))),
            "gangs": {
                k: {"domain": d, "tier": t}
                for k, (d, t) in sorted(self.gangs.items(), key=lambda kv: natural_key(kv[0]))
            },
        }


@dataclass
class Prepared:
    """A scenario turned into the engine's inputs."""

    tree: TopologyTree
    index: ClusterIndex
    snapshot: Snapshot
    pods: dict[str, Pod]
    """Non-terminal pods on known nodes (or pending), by key."""
    warnings: list[str]

    def gangs(self, sc: Scenario) -> list[Gang]:
        """Gangs as the pods stand now (the simulator rebinds pods as it goes)."""
        return _discover(sc, self.pods, self.tree)


def _discover(sc: Scenario, pods: Mapping[str, Pod], tree: TopologyTree) -> list[Gang]:
    return discover_gangs(
        pods.values(), podgroups=sc.podgroups, priority_classes=sc.priority_classes, tree=tree, cnt=sc.cnt
    )


def prepare(sc: Scenario) -> Prepared:
    """Tree, static index and snapshot (bound pods, terminating ones, existing nominations)."""
    tree = topology_of(sc)
    warnings = [*sc.warnings, *tree.warnings]
    node_names = {n.name for n in sc.nodes}
    pods: dict[str, Pod] = {}
    for p in sc.pods:
        if p.terminal:
            continue
        if p.bound and p.spec.node_name not in node_names:
            warnings.append(
                f"pod {p.key}: left out: bound to node {p.spec.node_name}, which is not in the snapshot"
            )
            continue
        pods[p.key] = p
    gangs = _discover(sc, pods, tree)
    resources = {r for g in gangs for gp in g.pods for r in gp.requests}
    index = ClusterIndex.build(sc.nodes, tree, resources=resources)
    snap = _snapshot(index, gangs, pods)
    for gang in gangs:
        for gp in gang.pending:
            st = gp.pod.status
            nominated = st.nominated_node_name if st is not None else None
            if nominated is not None and nominated in index.node_pos:
                vec = index.vector(gp.requests)
                if vec is not None:
                    snap.nominate(Nomination(gp.key, gang.key, index.node_pos[nominated], vec, gang.priority))
    return Prepared(tree, index, snap, pods, warnings)


def simulate(sc: Scenario, *, schedulers: Iterable[str] = DEFAULT_SCHEDULERS) -> SimulationResult:
    served = set(schedulers)
    prep = prepare(sc)
    index, snap, pods = prep.index, prep.snapshot, prep.pods
    res = SimulationResult(warnings=prep.warnings, index=index)

    def gangs_now() -> list[Gang]:
        return prep.gangs(sc)

    res.initial_pods = {k: index.node_names[p.node] for k, p in snap.pods.items()}
    last: dict[str, Verdict] = {}
    for rnd in range(1, MAX_ROUNDS + 1):
        changed = False
        gangs = gangs_now()
        order = sorted(
            (g for g in gangs if g.pending and g.scheduler_name in served),
            key=lambda g: (-g.priority, g.creation, natural_key(g.key)),
        )
        budgets = budgets_from(sc.pdbs, snap)
        by_key = {g.key: g for g in gangs}
        for gang in order:
            gang = by_key[gang.key]
            verdict = schedule(gang, snap, budgets=budgets)
            last[gang.key] = verdict
            if verdict.code is Code.SUCCESS and verdict.placement is not None and verdict.placement.pods:
                _bind(verdict, gang, snap, pods, res, rnd)
                changed = True
                gangs = gangs_now()
                by_key = {g.key: g for g in gangs}
            elif verdict.code is Code.WAIT and verdict.plan is not None:
                plan = verdict.plan
                snap.clear_nominations(gang.key)
                for victim in plan.victims:
                    snap.mark_terminating(victim.pod)
                    res.conditions[victim.pod] = victim.condition
                    if victim.pod not in res.evicted:
                        res.evicted.append(victim.pod)
                reqs = {gp.key: gp for gp in gang.pending}
                for pod_key, node in plan.nominated:
                    vec = index.vector(reqs[pod_key].requests)
                    assert vec is not None
                    snap.nominate(Nomination(pod_key, gang.key, index.node_pos[node], vec, gang.priority))
                    res.nominated[pod_key] = node
                victims = ", ".join(v.pod for v in plan.victims)
                res.events.append(Event(rnd, gang.key, "preempting", f"in {plan.domain}: evicting {victims}"))
                again = schedule(gang, snap, budgets=budgets)
                last[gang.key] = again
                res.waiting[gang.key] = again.message
                res.events.append(Event(rnd, gang.key, "waiting", again.message))
                changed = True
        # Terminating pods finish between rounds.
        for key in [k for k, p in snap.pods.items() if p.terminating]:
            snap.evict(key)
            pods.pop(key, None)
            changed = True
        if not changed:
            break
    for gang in gangs_now():
        if gang.pending and gang.scheduler_name in served:
            v = last.get(gang.key)
            msg = v.message if v is not None else "not attempted"
            res.unschedulable[gang.key] = msg
            res.events.append(Event(0, gang.key, "unschedulable", msg))
    res.final_pods = {k: index.node_names[p.node] for k, p in snap.pods.items()}
    res.final_used = snap.used.copy()
    return res


def _snapshot(index: ClusterIndex, gangs: Sequence[Gang], pods: Mapping[str, Pod]) -> Snapshot:
    bound: list[BoundPod] = []
    gang_min: dict[str, int] = {}
    for g in gangs:
        gang_min[g.key] = g.min_member
        for gp in g.bound:
            vec = index.vector(gp.requests)
            if vec is None or gp.node_name is None or gp.node_name not in index.node_pos:
                continue
            pod = pods[gp.key]
            bound.append(
                BoundPod(
                    key=gp.key,
                    namespace=pod.namespace,
                    node=index.node_pos[gp.node_name],
                    req=vec,
                    priority=gp.priority,
                    gang=g.key,
                    labels=pod.metadata.labels or {},
                    terminating=pod.metadata.deletion_timestamp is not None,
                    terms=PodTerms.of(pod),
                )
            )
    return Snapshot.build(index, bound, gang_min)


def _bind(
    verdict: Verdict, gang: Gang, snap: Snapshot, pods: dict[str, Pod], res: SimulationResult, rnd: int
) -> None:
    assert verdict.placement is not None
    index = snap.index
    members = {gp.key: gp for gp in gang.pods}
    for pod_key, node in verdict.placement.pods:
        gp = members[pod_key]
        vec = index.vector(gp.requests)
        assert vec is not None
        pod = pods[pod_key]
        snap.bind(
            BoundPod(
                pod_key,
                pod.namespace,
                index.node_pos[node],
                vec,
                gp.priority,
                gang.key,
                pod.metadata.labels or {},
                terms=PodTerms.of(pod),
            )
        )
        updated = pod.model_copy(deep=True)
        updated.spec.node_name = node
        pods[pod_key] = updated
        res.bound[pod_key] = node
    snap.gang_min[gang.key] = gang.min_member
    nodes = {
        index.node_pos[n]
        for n in (pods[gp.key].spec.node_name for gp in gang.pods)
        if n is not None and n in index.node_pos
    }
    res.gangs[gang.key] = lowest_common(index, nodes)
    where = f"{verdict.placement.domain} (tier {verdict.placement.tier})"
    res.events.append(Event(rnd, gang.key, "placed", f"{len(verdict.placement.pods)} pod(s) in {where}"))
