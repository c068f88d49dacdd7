"""Random clusters for the cycle-against-oracle property test, wider than `placer_cases`: up to
12 nodes under up to three domain tiers (block, spine, super-spine), several pending gangs in
one cycle (some with members already bound), pods already terminating, pending pods of another
scheduler nominated to a node, and PodDisruptionBudgets reported or computed from
minAvailable / maxUnavailable, as numbers and percentages.

One `WideCase` renders two ways: the Kubernetes objects the real cycle reads (through the
scenario loader into a `ClusterState`), and the oracle's inputs (`OracleNode`s, domains, bound
pods, nominations, budgets, and one `PendingGang` per gang). Neither rendering shares code with
the engine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from controller.placer.oracle import (
    OracleBudget,
    OracleDomain,
    OracleNode,
    OracleNomination,
    OraclePod,
)

GI = 2**30
PRIORITIES = (0, 100, 1000, 5000)
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
    """A pending pod of another scheduler, nominated to this node."""
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
        return f"default/{self.name}"

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

    def objects(self) -> list[dict[str, Any]]:
        objs: list[dict[str, Any]] = [self._node(n) for n in self.nodes]
        objs += self._topology()
        objs += [
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": f"p{prio}"},
                "value": prio,
            }
            for prio in PRIORITIES
        ]
        member_of = {m: g for g, (ms, _) in self.bound_gangs.items() for m in ms}
        for p in self.running:
            ann = {"scheduling.k8s.io/group-name": member_of[p.name]} if p.name in member_of else None
            sched = "default-scheduler"
            objs.append(_pod(p, labels={"app": p.app} if p.app else {}, annotations=ann, scheduler=sched))
        for g, (_, minimum) in self.bound_gangs.items():
            objs.append(_podgroup("volcano", g, minimum, created=0))
        for j, (app, limit, reported) in enumerate(self.pdbs):
            pdb: dict[str, Any] = {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": f"pdb-{j}", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": app}}, **limit},
            }
            if reported is not None:
                pdb["status"] = {"disruptionsAllowed": reported}
            objs.append(pdb)
        for g in self.gangs:
            objs += self._gang(g)
        return objs

    def _node(self, n: WideNode) -> dict[str, Any]:
        labels = {"kubernetes.io/hostname": n.name, "zone": n.zone}
        for tier in range(1, self.depth + 1):
            labels[f"example.com/{LEVELS[tier - 1]}"] = n.domain(tier)
        alloc = {"cpu": str(n.cpu), "memory": f"{n.mem}Gi", "pods": str(n.pods)}
        if n.gpu:
            alloc["nvidia.com/gpu"] = str(n.gpu)
        spec: dict[str, Any] = {}
        if n.tainted:
            spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n.name, "labels": labels},
            "spec": spec,
            "status": {"allocatable": alloc},
        }

    def _topology(self) -> list[dict[str, Any]]:
        if not self.depth:
            return []
        if self.render == "cnt":
            layers: list[dict[str, Any]] = [{"topologyLayer": LAYERS[0], "parentTopologyLayer": LAYERS[1]}]
            for tier in range(1, self.depth + 1):
                layer: dict[str, Any] = {
                    "topologyLayer": LAYERS[tier],
                    "labelKey": [f"example.com/{LEVELS[tier - 1]}"],
                }
                if tier < self.depth:
                    layer["parentTopologyLayer"] = LAYERS[tier + 1]
                layers.append(layer)
            return [
                {
                    "apiVersion": "scheduling.koordinator.sh/v1alpha1",
                    "kind": "ClusterNetworkTopology",
                    "metadata": {"name": "default"},
                    "spec": {"networkTopologySpec": layers},
                }
            ]
        members: dict[str, list[tuple[str, str]]] = {}
        tiers: dict[str, int] = {}
        for n in self.nodes:
            members.setdefault(n.domain(1), []).append(("Node", n.name))
            tiers[n.domain(1)] = 1
            for tier in range(2, self.depth + 1):
                child = ("HyperNode", n.domain(tier - 1))
                if child not in members.setdefault(n.domain(tier), []):
                    members[n.domain(tier)].append(child)
                tiers[n.domain(tier)] = tier
        return [
            {
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": {"name": name},
                "spec": {
                    "tier": tiers[name],
                    "tierName": LAYERS[tiers[name]],
                    "members": [{"type": t, "selector": {"exactMatch": {"name": m}}} for t, m in ms],
                },
            }
            for name, ms in members.items()
        ]

    def _gang(self, g: WideGang) -> list[dict[str, Any]]:
        pg = _podgroup(g.dialect, g.name, len(g.pods), created=g.created)
        if g.dialect == "volcano" and g.mode is not None:
            nt: dict[str, Any] = {"mode": g.mode}
            if g.tier is not None:
                nt["highestTierAllowed"] = g.tier
            pg["spec"]["networkTopology"] = nt
        if g.dialect == "koordinator" and g.mode is not None and g.tier is not None:
            strategy = "MustGather" if g.mode == "hard" else "PreferGather"
            pg["metadata"]["annotations"] = {
                "gang.scheduling.koordinator.sh/network-topology-spec": json.dumps(
                    {"gatherStrategy": [{"layer": LAYERS[g.tier], "strategy": strategy}]}
                )
            }
        out = [pg]
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
                f"default/{member_of[p.name]}" if p.name in member_of else "",
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
        return [
            OracleNomination(p.nominated, p.req(), p.priority, f"default/{p.name}")
            for p in self.running
            if p.nominated
        ]

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
        out = {f"default/{g}": m for g, (_, m) in self.bound_gangs.items()}
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
            "terminating pods": any(p.terminating for p in self.running),
            "percentage PDBs": any(
                isinstance(v, str) for _, lim, r in self.pdbs if r is None for v in lim.values()
            ),
            "minAvailable PDBs": any("minAvailable" in lim for _, lim, r in self.pdbs if r is None),
            "maxUnavailable PDBs": any("maxUnavailable" in lim for _, lim, r in self.pdbs if r is None),
        }


def _podgroup(dialect: str, name: str, minimum: int, *, created: int) -> dict[str, Any]:
    meta = {"name": name, "namespace": "default", "creationTimestamp": f"2026-01-01T00:00:{created:02d}Z"}
    api = "scheduling.volcano.sh/v1beta1" if dialect == "volcano" else "scheduling.sigs.k8s.io/v1alpha1"
    return {"apiVersion": api, "kind": "PodGroup", "metadata": meta, "spec": {"minMember": minimum}}


def _pod(
    p: WidePod,
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    scheduler: str,
) -> dict[str, Any]:
    req: dict[str, Any] = {"cpu": f"{p.cpu}m", "memory": f"{p.mem}Gi"}
    if p.gpu:
        req["nvidia.com/gpu"] = str(p.gpu)
    meta: dict[str, Any] = {"name": p.name, "namespace": "default"}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    if p.terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "priorityClassName": f"p{p.priority}",
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": req}}],
    }
    if p.node:
        spec["nodeName"] = p.node
    if p.zone:
        spec["nodeSelector"] = {"zone": p.zone}
    if p.tolerate:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    obj["status"] = {"phase": "Running"} if p.node else {"phase": "Pending"}
    if p.nominated:
        obj["status"]["nominatedNodeName"] = p.nominated
    return obj
