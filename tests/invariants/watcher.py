"""An invariant watcher: what topobridge promises, judged from the API server's side.

It watches Pods, Nodes, the three PodGroup kinds, HyperNodes and ClusterNetworkTopologies
(the topology), PriorityClasses, PodDisruptionBudgets, Events and the leader Lease, keeps its
own copy of them, and records a `Violation` the moment one of these is seen:

`partial-gang`
    a gang with 0 < bound members < minMember for longer than `settle` seconds, counted from
    the first binding that left it there (a binding made while the gang was already below
    minMember starts the clock too). Deletions from outside never start it: a running gang
    that loses members to a node or pod deletion is degraded, not half-bound by us. The window
    must cover what legitimately takes time: a gang's bindings land one by one during its bind
    job (up to the bind retry deadline, then the roll-back), and a leader killed mid-job leaves
    the gang to its successor (lease duration + retry period + one cycle), stretched by any
    API-server outage the run causes. `settle_window()` adds those up.
`constraint-broken`
    a pod bound while its gang's members span two domains of the tier its hard constraint
    allows (`mode: hard` with a highest tier); subgroup constraints are not checked.
`rebound`
    two different nodeNames ever recorded for one pod UID.
`non-leader-binding`
    a binding whose author is not the Lease holder at that point. The author is the pod's
    `topobridge.io/bound-by` annotation, which the API server writes from the Binding in the
    same write as nodeName; "at that point" compares resourceVersions, which one etcd orders
    totally, so no clocks are compared: the holder is the one in the last Lease version whose
    resourceVersion is below the pod's.
`priority-inversion`
    a pod marked for preemption by topobridge (`DisruptionTarget`, reason
    `PreemptionByScheduler`) whose priority is >= its preemptor gang's.
`pdb-needlessly-violated`
    a preemption plan (the victims marked for one preemptor within `ROUND_SECONDS`) that broke
    a PodDisruptionBudget when evicting only whole lower-priority gangs that broke none would
    have made room for the preemptor (`budgets.py`: conservative, so a report is always real;
    meant for the small clusters of the tests).

The watcher shares no code with topobridge's controller (it imports nothing from
`controller/`): gang membership, minMember, priorities and the topology tree come from
`translations`, the project's pure models of the foreign schemas, as any client would read them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from budgets import Allowance, allowances, alternative_exists, plan_violations
from rawclient import ApiServer, Endpoint, Obj

from translations import koordinator as koord
from translations import schedplugins, volcano
from translations.core import Node, Pod, PodDisruptionBudget, PriorityClass
from translations.gangs import Gang, PodGroups, discover_gangs, gang_name
from translations.topology import TopologyTree, from_cluster_network_topology, from_hypernodes

BOUND_BY = "topobridge.io/bound-by"
PREEMPTION_REASON = "PreemptionByScheduler"

PATHS = {
    "pods": "/api/v1/pods",
    "nodes": "/api/v1/nodes",
    "events": "/api/v1/events",
    "priorityclasses": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "pdbs": "/apis/policy/v1beta1/poddisruptionbudgets",
    "volcano": f"/apis/{volcano.PODGROUP_GROUP}/v1beta1/podgroups",
    "sigs": f"/apis/{koord.SIGS_GROUP}/v1alpha1/podgroups",
    "x": f"/apis/{schedplugins.GROUP}/v1alpha1/podgroups",
    "hypernodes": f"/apis/{volcano.HYPERNODE_GROUP}/v1alpha1/hypernodes",
    "cnts": f"/apis/{koord.GROUP}/v1alpha1/clusternetworktopologies",
}
TOPOLOGY_KINDS = ("nodes", "hypernodes", "cnts")
GANG_KINDS = ("pods", "volcano", "sigs", "x", "priorityclasses")


def settle_window(
    *,
    lease_duration: float,
    retry_period: float,
    bind_retry_deadline: float,
    outage: float,
    slack: float = 10.0,
) -> float:
    """The `partial-gang` window (module doc): a bind job and its roll-back, a leader taking over
    from one killed mid-job, the longest API-server outage of the run, and some slack."""
    return bind_retry_deadline + lease_duration + retry_period + outage + slack


@dataclass(frozen=True)
class Violation:
    kind: str
    subject: str
    detail: str
    at: float = field(default_factory=time.time)

    def __str__(self) -> str:
        return f"{self.kind}: {self.subject}: {self.detail}"


ROUND_SECONDS = 5.0
"""Victims marked for one preemptor this close together belong to one preemption plan."""


@dataclass
class _Plan:
    opened: float
    decision: tuple[str, frozenset[str]]
    budgets: list[Allowance]
    alternative: bool
    victims: list[Pod] = field(default_factory=list)
    reported: bool = False


@dataclass(frozen=True)
class Binding:
    uid: str
    pod: str
    node: str
    resource_version: int
    author: str | None
    holder: str | None
    """Lease holder at that resourceVersion (None: no Lease watched or none recorded yet)."""
    at: float


def _key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta['name']}" if meta.get("namespace") else str(meta["name"])


def _rv(obj: Obj) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def _membership_view(pod: Obj) -> tuple[Any, ...]:
    """What a pod event must change to change the gangs: binding, deletion, phase, labels,
    annotations, priority."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    return (
        meta.get("uid"),
        spec.get("nodeName"),
        meta.get("deletionTimestamp"),
        (pod.get("status") or {}).get("phase"),
        meta.get("labels"),
        meta.get("annotations"),
        spec.get("priority"),
    )


def _live(pod: Obj) -> bool:
    return not (
        pod["metadata"].get("deletionTimestamp")
        or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    )


class InvariantWatcher:
    """Run `run()` as a task for the duration of a test; read `violations` (and `bindings`)."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        settle: float,
        lease: tuple[str, str] | None = None,
        namespaces: Iterable[str] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.settle = settle
        self.lease = lease
        self.namespaces = set(namespaces) if namespaces is not None else None
        self.store: dict[str, dict[str, Obj]] = {kind: {} for kind in PATHS}
        self.violations: list[Violation] = []
        self.bindings: list[Binding] = []
        self.holders: list[tuple[int, str]] = []
        """(resourceVersion, holderIdentity) of every Lease version seen, oldest first."""
        self.counts: Counter[str] = Counter()
        self.placed: set[str] = set()
        """Gangs seen with at least minMember members bound."""
        self.synced = asyncio.Event()
        self._first_node: dict[str, str] = {}
        self._partial_since: dict[str, float] = {}
        self._reported_partial: set[str] = set()
        self._judged_victims: set[str] = set()
        self._plans: dict[str, _Plan] = {}
        self._gone: dict[str, tuple[float, Obj]] = {}
        """Pods deleted lately (key -> when, last state): the preemptor's decision may predate it."""
        self._node_seen: dict[str, float] = {}
        self._gangs: dict[str, Gang] | None = None
        self._gang_of: dict[str, str] = {}
        self._tree: TopologyTree | None = None
        self._cnt: koord.ClusterNetworkTopology | None = None
        self._listed: set[str] = set()

    # --- running ----------------------------------------------------------------------------

    async def run(self) -> None:
        async with ApiServer(self.endpoint) as api:
            tasks = [asyncio.create_task(self._follow(api, kind), name=f"watch:{kind}") for kind in PATHS]
            if self.lease is not None:
                tasks.append(asyncio.create_task(self._follow_lease(api), name="watch:lease"))
            tasks.append(asyncio.create_task(self._tick(), name="watch:tick"))
            try:
                await asyncio.gather(*tasks)
            finally:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _follow(self, api: ApiServer, kind: str) -> None:
        async def relist(items: list[Obj]) -> None:
            present = {_key(o) for o in items}
            for key in [k for k in self.store[kind] if k not in present]:
                await self._on(kind, "DELETED", self.store[kind][key], relisted=True)
            for obj in items:
                await self._on(
                    kind, "MODIFIED" if _key(obj) in self.store[kind] else "ADDED", obj, relisted=True
                )
            self._listed.add(kind)
            if len(self._listed) == len(PATHS):
                self.synced.set()

        await api.follow(PATHS[kind], lambda t, o: self._on(kind, t, o), on_relist=relist)

    async def _follow_lease(self, api: ApiServer) -> None:
        assert self.lease is not None
        namespace, name = self.lease

        async def seen(obj: Obj) -> None:
            holder = str((obj.get("spec") or {}).get("holderIdentity") or "")
            if not self.holders or self.holders[-1][1] != holder:
                self.holders.append((_rv(obj), holder))
                self.counts["leader-changes"] += 1

        async def relist(items: list[Obj]) -> None:
            for obj in items:
                await seen(obj)

        async def event(kind: str, obj: Obj) -> None:
            if kind != "DELETED":
                await seen(obj)

        path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        await api.follow(path, event, on_relist=relist, fieldSelector=f"metadata.name={name}")

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            self.check_partial_gangs(time.monotonic())

    # --- events -----------------------------------------------------------------------------

    async def _on(self, kind: str, event: str, obj: Obj, *, relisted: bool = False) -> None:
        ns = (obj.get("metadata") or {}).get("namespace")
        if self.namespaces is not None and ns is not None and ns not in self.namespaces:
            return
        key = _key(obj)
        old = self.store[kind].get(key)
        if event == "DELETED":
            self.store[kind].pop(key, None)
            if kind == "pods" and old is not None:
                self._gone[key] = (time.monotonic(), old)
        else:
            self.store[kind][key] = obj
            if kind == "nodes" and old is None:
                self._node_seen[key] = time.monotonic()
        if kind in TOPOLOGY_KINDS:
            self._tree = None
        if (kind in GANG_KINDS and kind != "pods") or kind in TOPOLOGY_KINDS:
            self._gangs = None
        if kind == "pods":
            if event != "MODIFIED" or old is None or _membership_view(old) != _membership_view(obj):
                self._gangs = None  # condition-only updates (most of them) change no gang
            self._on_pod(old, None if event == "DELETED" else obj, relisted=relisted)
        elif kind == "events" and event == "ADDED":
            self.counts[f"event:{obj.get('reason')}"] += 1

    def _on_pod(self, old: Obj | None, new: Obj | None, *, relisted: bool) -> None:
        if new is None:
            return
        uid, key = new["metadata"]["uid"], _key(new)
        node = (new.get("spec") or {}).get("nodeName")
        if node:
            first = self._first_node.setdefault(uid, node)
            if first != node:
                self._violate("rebound", key, f"uid {uid} recorded on {first}, then on {node}")
            was_bound = (
                old is not None and old["metadata"]["uid"] == uid and (old.get("spec") or {}).get("nodeName")
            )
            if not was_bound and old is not None:
                self._on_binding(new, node, since=_rv(old) if relisted else None)
        self._on_preemption_mark(new)
        gang = self.gang_of(key)
        if gang is not None:
            self._update_partial(
                gang, binding=bool(node) and not (old and (old.get("spec") or {}).get("nodeName"))
            )

    def _on_binding(self, pod: Obj, node: str, *, since: int | None) -> None:
        """A binding seen by a watch event is at the event's resourceVersion exactly; one found
        by a relist happened somewhere after `since`, and is judged only if the holder stayed
        the same over that span."""
        key = _key(pod)
        rv = _rv(pod)
        author = (pod["metadata"].get("annotations") or {}).get(BOUND_BY)
        holder = self.holder_at(rv)
        if since is not None and self.holder_at(since) != holder:
            self.counts["bindings-unverified"] += 1
            holder = None
        self.bindings.append(Binding(pod["metadata"]["uid"], key, node, rv, author, holder, time.time()))
        self.counts["bindings"] += 1
        if author is not None and holder is not None and author != holder:
            self._violate(
                "non-leader-binding",
                key,
                f"bound to {node} by {author!r} at resourceVersion {rv} while the Lease holder was {holder!r}",
            )
        gang = self.gang_of(key)
        if gang is not None:
            self._check_constraint(gang)

    # --- the invariants ---------------------------------------------------------------------

    def holder_at(self, resource_version: int) -> str | None:
        holder = None
        for rv, who in self.holders:
            if rv > resource_version:
                break
            holder = who
        return holder

    def _check_constraint(self, gang_key: str) -> None:
        gang = self.gangs().get(gang_key)
        if gang is None or gang.constraint is None or not gang.constraint.binds:
            return
        tier = gang.constraint.highest_tier
        assert tier is not None
        tree = self.tree()
        domains = {
            m.node_name: tree.domain_at_tier(m.node_name, tier)
            for m in gang.pods
            if m.node_name and not m.pod.metadata.deletion_timestamp
        }
        distinct = {d for d in domains.values() if d is not None}
        if len(distinct) > 1:
            self._violate(
                "constraint-broken",
                gang_name(gang_key),
                f"hard constraint at tier {tier}, members bound across {sorted(distinct)}: {domains}",
            )

    def _update_partial(self, gang_key: str, *, binding: bool) -> None:
        gang = self.gangs().get(gang_key)
        bound = 0 if gang is None else sum(1 for m in gang.pods if m.node_name and _live(self._raw(m.key)))
        minimum = 0 if gang is None else gang.min_member
        if bound and bound >= minimum:
            self.placed.add(gang_key)
        if bound == 0 or bound >= minimum:
            self._partial_since.pop(gang_key, None)
            self._reported_partial.discard(gang_key)
        elif binding:
            self._partial_since.setdefault(gang_key, time.monotonic())

    def check_partial_gangs(self, now: float) -> None:
        for gang_key, since in list(self._partial_since.items()):
            if now - since <= self.settle or gang_key in self._reported_partial:
                continue
            gang = self.gangs().get(gang_key)
            bound = [m.key for m in gang.pods if m.node_name] if gang else []
            if gang is None or not bound or len(bound) >= gang.min_member:
                self._partial_since.pop(gang_key, None)
                continue
            self._reported_partial.add(gang_key)
            self._violate(
                "partial-gang",
                gang_name(gang_key),
                f"{len(bound)} of minMember {gang.min_member} bound for more than {self.settle:.0f}s: {bound}",
            )

    def _on_preemption_mark(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        if uid in self._judged_victims:
            return
        cond = next(
            (
                c
                for c in (pod.get("status") or {}).get("conditions") or []
                if c.get("type") == "DisruptionTarget" and c.get("reason") == PREEMPTION_REASON
            ),
            None,
        )
        message = str((cond or {}).get("message") or "")
        if "preemptor: " not in message:
            return
        self._judged_victims.add(uid)
        self.counts["victims"] += 1
        preemptor = message.split("preemptor: ", 1)[1].split(",", 1)[0].strip()
        victim_priority = int((pod.get("spec") or {}).get("priority") or 0)
        gang = self.gang_named(preemptor)
        if gang is None:
            return
        key = _key(pod)
        if victim_priority >= gang.priority:
            self._violate(
                "priority-inversion",
                key,
                f"priority {victim_priority} preempted for gang {preemptor} of priority {gang.priority}",
            )
        trigger = (
            message.split("triggerpod: ", 1)[1].split(",", 1)[0].strip() if "triggerpod: " in message else ""
        )
        self._check_budget(pod, gang, trigger)

    def _check_budget(self, pod: Obj, preemptor: Gang, trigger: str) -> None:
        """Victims marked for one preemptor within `ROUND_SECONDS` of the first are one plan,
        as long as they name the same trigger pod and the preemptor has bound nothing since:
        a gang that binds part of itself and preempts again for the rest made a second
        decision, on a second state. The budgets and the alternative are judged as they stood
        at the plan's first mark."""
        now = time.monotonic()
        decision = (trigger, frozenset(m.key for m in preemptor.bound))
        plan = self._plans.get(preemptor.key)
        if plan is None or now - plan.opened > ROUND_SECONDS or plan.decision != decision:
            pods = self._parsed_pods()
            allowed = allowances(self._parsed("pdbs", PodDisruptionBudget), pods)
            # The decision was made on a snapshot a little older than this mark: room freed or
            # nodes added since (the last ROUND_SECONDS) do not count for the alternative.
            recent = now - ROUND_SECONDS
            self._gone = {k: v for k, v in self._gone.items() if v[0] >= recent}
            for _, raw in self._gone.values():
                with contextlib.suppress(Exception):
                    pods.append(Pod.parse(raw))
            nodes = {
                n.name: n for n in self._parsed("nodes", Node) if self._node_seen.get(n.name, 0.0) < recent
            }
            alternative = alternative_exists(
                preemptor, gangs=self.gangs(), pods=pods, nodes=nodes, budgets=allowed, tree=self.tree()
            )
            plan = _Plan(now, decision, allowed, alternative)
            self._plans[preemptor.key] = plan
        with contextlib.suppress(Exception):
            plan.victims.append(Pod.parse(pod))
        broken = plan_violations(plan.victims, plan.budgets)
        if broken and plan.alternative and not plan.reported:
            plan.reported = True
            self._violate(
                "pdb-needlessly-violated",
                preemptor.name,
                f"victims {[v.key for v in plan.victims]} break budget(s) {broken}, while evicting only "
                "whole lower-priority gangs that break no budget made room",
            )

    def _parsed(self, kind: str, model: Any) -> list[Any]:
        out = []
        for raw in self.store[kind].values():
            with contextlib.suppress(Exception):
                out.append(model.parse(raw))
        return out

    def _parsed_pods(self) -> list[Pod]:
        return self._parsed("pods", Pod)

    # --- derived views ----------------------------------------------------------------------

    def tree(self) -> TopologyTree:
        if self._tree is None:
            nodes = [Node.parse(n) for n in self.store["nodes"].values()]
            hypernodes = [volcano.HyperNode.parse(h) for h in self.store["hypernodes"].values()]
            cnts = [koord.ClusterNetworkTopology.parse(c) for c in self.store["cnts"].values()]
            self._cnt = cnts[0] if cnts else None
            if hypernodes:
                self._tree = from_hypernodes(hypernodes, nodes)
            elif self._cnt is not None:
                self._tree = from_cluster_network_topology(self._cnt, nodes)
            else:
                self._tree = TopologyTree.empty()
        return self._tree

    def gangs(self) -> dict[str, Gang]:
        if self._gangs is None:
            tree = self.tree()
            groups = PodGroups(
                volcano=[volcano.PodGroup.parse(o) for o in self.store["volcano"].values()],
                koordinator=[koord.SigsPodGroup.parse(o) for o in self.store["sigs"].values()],
                scheduler_plugins=[schedplugins.XPodGroup.parse(o) for o in self.store["x"].values()],
            )
            found = discover_gangs(
                self._parsed_pods(),
                podgroups=groups,
                priority_classes=[PriorityClass.parse(c) for c in self.store["priorityclasses"].values()],
                tree=tree,
                cnt=self._cnt,
            )
            self._gangs = {g.key: g for g in found if g.error is None}
            self._gang_of = {m.key: g.key for g in found for m in g.pods}
        return self._gangs

    def gang_named(self, name: str) -> Gang | None:
        """The gang a message names as `namespace/name` (preemptors are named so, as Koordinator
        does); the chaos run never gives two dialects' gangs one name."""
        return next((g for g in self.gangs().values() if g.name == name), None)

    def gang_of(self, pod_key: str) -> str | None:
        self.gangs()
        return self._gang_of.get(pod_key)

    def _raw(self, pod_key: str) -> Obj:
        return self.store["pods"].get(pod_key) or {"metadata": {"deletionTimestamp": "gone"}}

    def _violate(self, kind: str, subject: str, detail: str) -> None:
        self.violations.append(Violation(kind, subject, detail))
        self.counts[f"violation:{kind}"] += 1

    @property
    def partial(self) -> dict[str, float]:
        """Gangs whose partial-gang clock runs: key -> when it started (time.monotonic)."""
        return dict(self._partial_since)

    def report(self) -> str:
        return "\n".join(str(v) for v in self.violations) or "no violations"


async def start(watcher: InvariantWatcher, *, timeout: float = 30.0) -> asyncio.Task[Any]:
    """Start the watcher as a task and wait until every kind has been listed once."""
    task = asyncio.create_task(watcher.run(), name="invariant-watcher")
    waiter = asyncio.create_task(watcher.synced.wait())
    done, _ = await asyncio.wait({task, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    if waiter not in done:
        waiter.cancel()
        if task.done():
            task.result()  # raises the watcher's failure
        raise TimeoutError("the invariant watcher did not list every kind in time")
    return task
