"""Random clusters for the cycle-against-oracle property test, wider than `placer_cases`: up to
12 nodes under up to three domain tiers (block, spine, super-spine), several pending gangs in
one cycle (some with members already bound, some nominated by an earlier cycle), pods already
terminating, pending pods of another scheduler nominated to a node, and PodDisruptionBudgets
reported or computed from minAvailable / maxUnavailable, as numbers and percentages.

One `WideCase` renders two ways: the Kubernetes objects the real cycle reads (through the
scenario loader into a `ClusterState`), and the oracle's inputs (`OracleNode`s, domains, bound
pods, nominations, budgets, and one `PendingGang` per gang). Neither rendering shares code with
the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oracle import (
    OracleBudget,
    OracleDomain,
    OracleNode,
    OracleNomination,
    OraclePod,
)
from placer_cases import GI, PRIORITIES
from placer_objects import Obj, cnt, hypernode, koord_gang, node, pdb, pod, priority_class, volcano_gang

LEVELS = ("block", "spine", "super")
"""Label (and HyperNode) levels, tier 1 up."""
LAYERS = ("NodeTopologyLayer", "BlockLayer", "SpineLayer", "SuperSpineLayer")
"""Koordinator layer names by tier."""
SERVED = ("volcano", "koord-scheduler")
APPS = ("a", "b", "c")


@dataclass
class WideNode:
    name: str
    path: tuple[int, int, int]
    """(super, spine, block) numbers."""
    cpu: int  # cores
    mem: int  # Gi
    gpu: int
    pods: int
    zone: str
    tainted: bool = False

    def domain(self, tier: int) -> str:
        """The node's domain name at `tier` (1 = block); unique across the cluster."""
        return f"{LEVELS[tier - 1]}-" + "-".join(str(x) for x in self.path[: 4 - tier])


@dataclass
class WidePod:
    name: str
    cpu: int  # millicores
    mem: int  # Gi
    gpu: int
    priority: int = 0
    node: str | None = None
    app: str = ""
    terminating: bool = False
    nominated: str | None = None
    """A pending pod nominated to this node (another scheduler's, or a gang's by an earlier cycle)."""
    zone: str | None = None
    tolerate: bool = False

    def req(self) -> dict[str, int]:
        out = {"cpu": self.cpu, "memory": self.mem * GI, "pods": 1}
        if self.gpu:
            out["nvidia.com/gpu"] = self.gpu
        return out


@dataclass
class WideGang:
    name: str
    dialect: str  # "volcano", "koordinator"
    pods: list[WidePod]
    """Every member, rank order; those with a node are bound already."""
    priority: int
    never: bool
    mode: str | None
    tier: int | None
    created: int
    """Seconds: the PodGroup's creationTimestamp (the queue's second key)."""

    @property
    def key(self) -> str:
        return f"{self.dialect}:default/{self.name}"

    @property
    def bound(self) -> list[WidePod]:
        return [p for p in self.pods if p.node]

    @property
    def pending(self) -> list[WidePod]:
        return [p for p in self.pods if not p.node]


@dataclass(frozen=True)
class PendingGang:
    """What the oracle asks about one pending gang (its own bound members are in `bound`)."""

    key: str
    pods: list[OraclePod]
    anchors: frozenset[str]
    mode: str | None
    tier: int | None
    priority: int
    never: bool
    node_domains: bool


@dataclass
class WideCase:
    depth: int
    """Domain tiers above nodes: 0 (none) .. 3 (block, spine, super-spine)."""
    render: str  # "cnt", "hypernode"
    nodes: list[WideNode]
    running: list[WidePod]
    """Bound pods outside the pending gangs (some in `bound_gangs`), and nominated holders."""
    bound_gangs: dict[str, tuple[list[str], int]]
    """Running gang -> (member names, minMember)."""
    pdbs: list[tuple[str, dict[str, Any], int | None]]
    """(app, spec limit {minAvailable|maxUnavailable: n}, reported disruptionsAllowed)."""
    gangs: list[WideGang]

    # --- Kubernetes objects ---

    def objects(self) -> list[Obj]:
        objs = [self._node(n) for n in self.nodes]
        objs += self._topology()
        objs += [priority_class(f"p{prio}", prio) for prio in PRIORITIES]
        member_of = {m: g for g, (ms, _) in self.bound_gangs.items() for m in ms}
        for p in self.running:
            ann = {"scheduling.k8s.io/group-name": member_of[p.name]} if p.name in member_of else None
            labels = {"app": p.app} if p.app else None
            objs.append(_pod(p, labels=labels, annotations=ann, scheduler="default-scheduler"))
        objs += [volcano_gang(g, minimum) for g, (_, minimum) in self.bound_gangs.items()]
        for j, (app, limit, reported) in enumerate(self.pdbs):
            budget = pdb(
                f"pdb-{j}",
                {"app": app},
                allowed=reported,
                min_available=limit.get("minAvailable"),
                max_unavailable=limit.get("maxUnavailable", 1),
            )
            objs.append(budget)
        for g in self.gangs:
            objs += self._gang(g)
        return objs

    def _node(self, n: WideNode) -> Obj:
        labels = {"zone": n.zone}
        for tier in range(1, self.depth + 1):
            labels[f"example.com/{LEVELS[tier - 1]}"] = n.domain(tier)
        return node(
            n.name,
            cpu=str(n.cpu),
            memory=f"{n.mem}Gi",
            labels=labels,
            pods=str(n.pods),
            gpu=str(n.gpu) if n.gpu else None,
            taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if n.tainted else None,
        )

    def _topology(self) -> list[Obj]:
        if not self.depth:
            return []
        if self.render == "cnt":
            return [
                cnt(levels=[(LAYERS[t], f"example.com/{LEVELS[t - 1]}") for t in range(1, self.depth + 1)])
            ]
        members: dict[tuple[int, str], list[tuple[str, str]]] = {}
        for n in self.nodes:
            members.setdefault((1, n.domain(1)), []).append(("Node", n.name))
            for tier in range(2, self.depth + 1):
                child = ("HyperNode", n.domain(tier - 1))
                if child not in members.setdefault((tier, n.domain(tier)), []):
                    members[(tier, n.domain(tier))].append(child)
        return [hypernode(name, tier, ms, LAYERS[tier]) for (tier, name), ms in members.items()]

    def _gang(self, g: WideGang) -> list[Obj]:
        if g.dialect == "volcano":
            group = volcano_gang(g.name, len(g.pods), mode=g.mode, tier=g.tier)
        else:
            strategy = "MustGather" if g.mode == "hard" else "PreferGather"
            gather = [(LAYERS[g.tier], strategy)] if g.mode is not None and g.tier is not None else None
            group = koord_gang(g.name, len(g.pods), gather=gather)
        group["metadata"]["creationTimestamp"] = f"2026-01-01T00:00:{g.created:02d}Z"
        out = [group]
        for i, p in enumerate(g.pods):
            if g.dialect == "volcano":
                obj = _pod(p, annotations={"scheduling.k8s.io/group-name": g.name}, scheduler="volcano")
            else:
                obj = _pod(
                    p,
                    labels={"pod-group.scheduling.sigs.k8s.io": g.name},
                    annotations={"gang.scheduling.koordinator.sh/network-topology-index": str(i)},
                    scheduler="koord-scheduler",
                )
            if g.never:
                obj["spec"]["preemptionPolicy"] = "Never"
            out.append(obj)
        return out

    # --- oracle inputs ---

    def oracle_nodes(self) -> list[OracleNode]:
        out = []
        for n in self.nodes:
            alloc = {"cpu": n.cpu * 1000, "memory": n.mem * GI, "pods": n.pods, "nvidia.com/gpu": n.gpu}
            taints = (("dedicated", "x", "NoSchedule"),) if n.tainted else ()
            out.append(OracleNode(n.name, alloc, {"zone": n.zone}, taints))
        return out

    def oracle_domains(self) -> list[OracleDomain]:
        groups: dict[tuple[int, str], set[str]] = {}
        for n in self.nodes:
            for tier in range(1, self.depth + 1):
                groups.setdefault((tier, n.domain(tier)), set()).add(n.name)
        return [OracleDomain(name, tier, frozenset(ns)) for (tier, name), ns in sorted(groups.items())]

    def oracle_bound(self) -> list[OraclePod]:
        """Every bound pod: running ones and the pending gangs' members already bound."""
        member_of = {m: g for g, (ms, _) in self.bound_gangs.items() for m in ms}
        out = [
            OraclePod(
                f"default/{p.name}",
                p.req(),
                p.priority,
                p.node,
                f"volcano:default/{member_of[p.name]}" if p.name in member_of else "",
                {"app": p.app} if p.app else {},
                terminating=p.terminating,
            )
            for p in self.running
            if p.node
        ]
        for g in self.gangs:
            out += [OraclePod(f"default/{p.name}", p.req(), g.priority, p.node, g.key) for p in g.bound]
        return out

    def oracle_nominations(self) -> list[OracleNomination]:
        """Other schedulers' pending pods, and the pending gangs' pods an earlier cycle nominated."""
        out = [
            OracleNomination(p.nominated, p.req(), p.priority, f"default/{p.name}", f"default/{p.name}")
            for p in self.running
            if p.nominated
        ]
        for g in self.gangs:
            out += [
                OracleNomination(p.nominated, p.req(), g.priority, g.key, f"default/{p.name}")
                for p in g.pending
                if p.nominated
            ]
        return out

    def oracle_budgets(self) -> list[OracleBudget]:
        return [
            OracleBudget(
                {"app": app},
                reported,
                min_available=limit.get("minAvailable"),
                max_unavailable=limit.get("maxUnavailable"),
            )
            for app, limit, reported in self.pdbs
        ]

    def gang_min(self) -> dict[str, int]:
        out = {f"volcano:default/{g}": m for g, (_, m) in self.bound_gangs.items()}
        out.update({g.key: len(g.pods) for g in self.gangs})
        return out

    def pending_gangs(self) -> dict[str, PendingGang]:
        tolerations = (("dedicated", "Exists", "", "NoSchedule"),)
        out = {}
        for g in self.gangs:
            pods = [
                OraclePod(
                    f"default/{p.name}",
                    p.req(),
                    g.priority,
                    node_selector={"zone": p.zone} if p.zone else {},
                    tolerations=tolerations if p.tolerate else (),
                )
                for p in g.pending
            ]
            mode = g.mode if not (g.mode == "hard" and g.tier is None) else None
            out[g.key] = PendingGang(
                key=g.key,
                pods=pods,
                anchors=frozenset(p.node for p in g.bound if p.node),
                mode=mode,
                tier=g.tier,
                priority=g.priority,
                never=g.never,
                node_domains=not (g.dialect == "volcano" and g.mode is not None and (g.tier or 0) > 0),
            )
        return out

    def queue_order(self) -> list[str]:
        """kube's queue: higher priority first, then older, then by name."""
        ordered = sorted(self.gangs, key=lambda g: (-g.priority, g.created, int(g.name.split("-")[1])))
        return [g.key for g in ordered]

    def figures(self) -> dict[str, bool]:
        """Which of the wider features this case has (counted by the test)."""
        bound_members = any(g.bound for g in self.gangs)
        return {
            "4-level trees": self.depth == 3,
            "> 8 nodes": len(self.nodes) > 8,
            ">= 2 pending gangs": len(self.gangs) >= 2,
            "already-bound members": bound_members,
            "nominations": any(p.nominated for p in self.running),
            "gangs nominated earlier": any(p.nominated for g in self.gangs for p in g.pods),
            "terminating pods": any(p.terminating for p in self.running),
            "percentage PDBs": any(
                isinstance(v, str) for _, lim, r in self.pdbs if r is None for v in lim.values()
            ),
            "minAvailable PDBs": any("minAvailable" in lim for _, lim, r in self.pdbs if r is None),
            "maxUnavailable PDBs": any("maxUnavailable" in lim for _, lim, r in self.pdbs if r is None),
        }


def _pod(
    p: WidePod,
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    scheduler: str,
) -> Obj:
    """A pod as the API server holds it: bound and running, terminating, or pending (maybe
    nominated to a node)."""
    obj = pod(
        p.name,
        cpu=f"{p.cpu}m",
        memory=f"{p.mem}Gi",
        gpu=str(p.gpu) if p.gpu else None,
        node_name=p.node,
        scheduler=scheduler,
        priority_class=f"p{p.priority}",
        labels=labels,
        annotations=annotations,
        node_selector={"zone": p.zone} if p.zone else None,
        tolerations=[{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
        if p.tolerate
        else None,
    )
    if p.terminating:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    obj["status"] = {"phase": "Running" if p.node else "Pending"}
    if p.nominated:
        obj["status"]["nominatedNodeName"] = p.nominated
    return obj
