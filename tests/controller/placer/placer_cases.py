"""Random small clusters for the placer's property tests, rendered two ways: as the Kubernetes
objects the engine reads (through the real scenario loader and gang discovery), and as an
`OracleCase` for the brute-force solver. Both come from one `Case`, so they describe the same
cluster; neither rendering shares code with the engine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from oracle import OracleBudget, OracleCase, OracleDomain, OracleNode, OraclePod
from placer_objects import cnt

from controller.placer.scenario import Prepared, Scenario, load_scenario, prepare
from translations.gangs import Gang

GI = 2**30
PRIORITIES = (0, 100, 1000, 5000)


@dataclass
class NodeCase:
    name: str
    block: str
    spine: str
    cpu: int  # cores
    mem: int  # Gi
    gpu: int
    pods: int
    zone: str
    tainted: bool = False
    unschedulable: bool = False


@dataclass
class PodCase:
    name: str
    cpu: int  # millicores
    mem: int  # Gi
    gpu: int
    priority: int = 0
    node: str | None = None
    gang: str | None = None
    app: str = "a"
    zone: str | None = None
    tolerate: bool = False


@dataclass
class Case:
    topology: str  # "none", "block", "spine"
    render: str  # "cnt", "hypernode"
    nodes: list[NodeCase]
    bound: list[PodCase]
    bound_gangs: dict[str, int]  # gang -> minMember
    pdbs: list[tuple[str, int]]  # (app label, disruptionsAllowed)
    gang: list[PodCase]
    gang_min: int
    priority: int
    never: bool
    dialect: str  # "volcano", "koordinator"
    mode: str | None
    tier: int | None
    extra: dict[str, Any] = field(default_factory=dict)

    # --- Kubernetes objects ---
    def objects(self) -> list[dict[str, Any]]:
        objs: list[dict[str, Any]] = []
        for n in self.nodes:
            labels = {"kubernetes.io/hostname": n.name, "zone": n.zone}
            if self.topology != "none":
                labels["example.com/block"] = n.block
                if self.topology == "spine":
                    labels["example.com/spine"] = n.spine
            alloc = {"cpu": str(n.cpu), "memory": f"{n.mem}Gi", "pods": str(n.pods)}
            if n.gpu:
                alloc["nvidia.com/gpu"] = str(n.gpu)
            spec: dict[str, Any] = {}
            if n.tainted:
                spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
            if n.unschedulable:
                spec["unschedulable"] = True
            objs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": n.name, "labels": labels},
                    "spec": spec,
                    "status": {"allocatable": alloc},
                }
            )
        objs += self._topology()
        for prio in PRIORITIES:
            objs.append(
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": f"p{prio}"},
                    "value": prio,
                }
            )
        for i, p in enumerate(self.bound):
            meta: dict[str, Any] = {"name": p.name, "namespace": "default", "labels": {"app": p.app}}
            if p.gang:
                meta["annotations"] = {"scheduling.k8s.io/group-name": p.gang}
            spec = {"nodeName": p.node, "schedulerName": "default-scheduler", "containers": [_container(p)]}
            # Half the pods state their priority, half resolve it from the class.
            if i % 2:
                spec["priority"] = p.priority
            else:
                spec["priorityClassName"] = f"p{p.priority}"
            objs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": meta,
                    "spec": spec,
                    "status": {"phase": "Running"},
                }
            )
        for g, minimum in self.bound_gangs.items():
            objs.append(
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": g, "namespace": "default"},
                    "spec": {"minMember": minimum},
                }
            )
        for j, (app, allowed) in enumerate(self.pdbs):
            objs.append(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": f"pdb-{j}", "namespace": "default"},
                    "spec": {"selector": {"matchLabels": {"app": app}}, "maxUnavailable": 1},
                    "status": {"disruptionsAllowed": allowed},
                }
            )
        objs += self._gang_objects()
        return objs

    def _topology(self) -> list[dict[str, Any]]:
        if self.topology == "none":
            return []
        if self.render == "cnt":
            levels = [("BlockLayer", "example.com/block"), ("SpineLayer", "example.com/spine")]
            return [cnt(levels=levels[: 2 if self.topology == "spine" else 1])]
        out: list[dict[str, Any]] = []
        blocks: dict[str, list[str]] = {}
        spines: dict[str, set[str]] = {}
        for n in self.nodes:
            blocks.setdefault(n.block, []).append(n.name)
            spines.setdefault(n.spine, set()).add(n.block)
        for b, members in blocks.items():
            out.append(_hypernode(b, 1, "BlockLayer", [("Node", m) for m in members]))
        if self.topology == "spine":
            for s, bs in spines.items():
                out.append(_hypernode(s, 2, "SpineLayer", [("HyperNode", b) for b in sorted(bs)]))
        return out

    def _gang_objects(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        layer = {0: "NodeTopologyLayer", 1: "BlockLayer", 2: "SpineLayer"}
        if self.dialect == "volcano":
            spec: dict[str, Any] = {"minMember": self.gang_min}
            if self.mode is not None:
                nt: dict[str, Any] = {"mode": self.mode}
                if self.tier is not None:
                    nt["highestTierAllowed"] = self.tier
                spec["networkTopology"] = nt
            out.append(
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": "gang", "namespace": "default"},
                    "spec": spec,
                }
            )
        else:
            meta: dict[str, Any] = {"name": "gang", "namespace": "default"}
            if self.mode is not None and self.tier is not None:
                strategy = "MustGather" if self.mode == "hard" else "PreferGather"
                meta["annotations"] = {
                    "gang.scheduling.koordinator.sh/network-topology-spec": json.dumps(
                        {"gatherStrategy": [{"layer": layer[self.tier], "strategy": strategy}]}
                    )
                }
            out.append(
                {
                    "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
                    "kind": "PodGroup",
                    "metadata": meta,
                    "spec": {"minMember": self.gang_min},
                }
            )
        for i, p in enumerate(self.gang):
            pmeta: dict[str, Any] = {"name": p.name, "namespace": "default"}
            pspec: dict[str, Any] = {"priorityClassName": f"p{self.priority}", "containers": [_container(p)]}
            if self.dialect == "volcano":
                pmeta["annotations"] = {"scheduling.k8s.io/group-name": "gang"}
                pspec["schedulerName"] = "volcano"
            else:
                pmeta["labels"] = {"pod-group.scheduling.sigs.k8s.io": "gang"}
                pmeta["annotations"] = {"gang.scheduling.koordinator.sh/network-topology-index": str(i)}
                pspec["schedulerName"] = "koord-scheduler"
            if self.never:
                pspec["preemptionPolicy"] = "Never"
            if p.zone:
                pspec["nodeSelector"] = {"zone": p.zone}
            if p.tolerate:
                pspec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": pmeta, "spec": pspec})
        return out

    # --- engine inputs ---
    def scenario(self) -> Scenario:
        return load_scenario(self.objects())

    def prepared(self) -> tuple[Scenario, Prepared, Gang]:
        sc = self.scenario()
        prep = prepare(sc)
        gang = next(g for g in prep.gangs(sc) if g.name == "default/gang")
        return sc, prep, gang

    # --- oracle inputs ---
    def oracle(self, gang_pods: list[PodCase] | None = None) -> OracleCase:
        nodes = []
        for n in self.nodes:
            alloc = {"cpu": n.cpu * 1000, "memory": n.mem * GI, "pods": n.pods, "nvidia.com/gpu": n.gpu}
            taints: tuple[tuple[str, str, str], ...] = ()
            if n.tainted:
                taints += (("dedicated", "x", "NoSchedule"),)
            if n.unschedulable:
                taints += (("node.kubernetes.io/unschedulable", "", "NoSchedule"),)
            labels = {"zone": n.zone}
            nodes.append(OracleNode(n.name, alloc, labels, taints))
        domains: list[OracleDomain] = []
        if self.topology != "none":
            blocks: dict[tuple[str, str], set[str]] = {}
            spines: dict[str, set[str]] = {}
            for n in self.nodes:
                blocks.setdefault((n.spine, n.block), set()).add(n.name)
                spines.setdefault(n.spine, set()).add(n.name)
            domains += [OracleDomain(f"{s}/{b}", 1, frozenset(ns)) for (s, b), ns in blocks.items()]
            if self.topology == "spine":
                domains += [OracleDomain(s, 2, frozenset(ns)) for s, ns in spines.items()]
        bound = [
            OraclePod(
                p.name and f"default/{p.name}",
                _req(p),
                p.priority,
                p.node,
                f"volcano:default/{p.gang}" if p.gang else "",
                {"app": p.app},
            )
            for p in self.bound
        ]
        gang_min = {f"volcano:default/{g}": m for g, m in self.bound_gangs.items()}
        tolerations = (("dedicated", "Exists", "", "NoSchedule"),)
        pending = [
            OraclePod(
                f"default/{p.name}",
                _req(p),
                self.priority,
                node_selector={"zone": p.zone} if p.zone else {},
                tolerations=tolerations if p.tolerate else (),
            )
            for p in (gang_pods if gang_pods is not None else self.gang)
        ]
        mode = self.mode
        tier = self.tier
        if mode == "hard" and tier is None:
            mode = None
        return OracleCase(
            nodes=nodes,
            domains=domains,
            bound=bound,
            gang=pending,
            mode=mode,
            tier=tier,
            priority=self.priority,
            gang_min=gang_min,
            budgets=[OracleBudget({"app": app}, allowed) for app, allowed in self.pdbs],
            node_domains=not (
                self.dialect == "volcano"
                and self.mode is not None
                and self.tier is not None
                and self.tier > 0
            ),
        )


def _req(p: PodCase) -> dict[str, int]:
    out = {"cpu": p.cpu, "memory": p.mem * GI, "pods": 1}
    if p.gpu:
        out["nvidia.com/gpu"] = p.gpu
    return out


def _container(p: PodCase) -> dict[str, Any]:
    req: dict[str, Any] = {"cpu": f"{p.cpu}m", "memory": f"{p.mem}Gi"}
    if p.gpu:
        req["nvidia.com/gpu"] = str(p.gpu)
    return {"name": "c", "image": "busybox", "resources": {"requests": req}}


def _hypernode(name: str, tier: int, tier_name: str, members: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {
            "tier": tier,
            "tierName": tier_name,
            "members": [{"type": t, "selector": {"exactMatch": {"name": m}}} for t, m in members],
        },
    }


# --- strategies -----------------------------------------------------------------------------------


def node_shape(draw: st.DrawFn) -> dict[str, Any]:
    """A random node's size, zone and taint (cpu in cores, mem in Gi), drawn in one order so
    every case builder that shares it replays the same examples."""
    return {
        "cpu": draw(st.sampled_from([2, 4, 4, 8])),
        "mem": draw(st.sampled_from([4, 8, 16])),
        "gpu": draw(st.sampled_from([0, 0, 2, 4])),
        "pods": draw(st.sampled_from([110, 110, 110, 3])),
        "zone": draw(st.sampled_from(["a", "b"])),
        "tainted": draw(st.integers(0, 9)) == 0,
    }


@st.composite
def cases(draw: st.DrawFn, *, shapes: tuple[str, ...] = ("uniform", "leader"), crowded: bool = False) -> Case:
    """A cluster of 1-8 nodes, some running pods, and one pending gang of 1-4 pods. Every part
    is drawn by its own helper, in one fixed order, so a seed replays the same examples."""
    topology = draw(st.sampled_from(["none", "block", "spine", "spine"]))
    render = draw(st.sampled_from(["cnt", "hypernode"]))
    nodes = _draw_nodes(draw)
    bound, bound_gangs = _draw_running(draw, nodes, crowded=crowded)
    pdbs = [
        (draw(st.sampled_from(["a", "b"])), draw(st.integers(0, 1))) for _ in range(draw(st.integers(0, 2)))
    ]
    # Keep the oracle's victim enumeration small: at most 10 running pods survive the fit check.
    bound = bound[:10]
    gang = _draw_gang(draw, shapes, crowded=crowded)
    dialect, mode, tier = _draw_constraint(draw, topology)
    return Case(
        topology=topology,
        render=render,
        nodes=nodes,
        bound=bound,
        bound_gangs=bound_gangs,
        pdbs=pdbs,
        gang=gang,
        gang_min=len(gang),
        priority=draw(st.sampled_from([100, 1000, 5000])),
        never=draw(st.integers(0, 9)) == 0,
        dialect=dialect,
        mode=mode,
        tier=tier,
    )


def _draw_nodes(draw: st.DrawFn) -> list[NodeCase]:
    """1-8 nodes over 1-3 spines of two blocks each."""
    n_nodes = draw(st.integers(1, 8))
    n_spines = draw(st.integers(1, 3))
    nodes: list[NodeCase] = []
    for i in range(n_nodes):
        spine = draw(st.integers(0, n_spines - 1))
        block = draw(st.integers(0, 1))
        nodes.append(
            NodeCase(
                name=f"node-{i}",
                spine=f"spine-{spine}",
                block=f"block-{spine}-{block}",
                **node_shape(draw),
                unschedulable=draw(st.integers(0, 14)) == 0,
            )
        )
    return nodes


def _draw_running(
    draw: st.DrawFn, nodes: list[NodeCase], *, crowded: bool
) -> tuple[list[PodCase], dict[str, int]]:
    """Running pods, placed only where they fit (a consistent snapshot); some of them form a
    gang (same priority), with minMember at or below its size."""
    used = {n.name: [0, 0, 0, 0] for n in nodes}
    bound: list[PodCase] = []
    bound_gangs: dict[str, int] = {}
    n_bound = draw(st.integers(6, 16)) if crowded else draw(st.integers(0, 6))
    for j in range(n_bound):
        node = draw(st.sampled_from(nodes))
        p = PodCase(
            name=f"run-{j}",
            cpu=draw(st.sampled_from([500, 1000, 2000, 4000])),
            mem=draw(st.sampled_from([1, 2, 4])),
            gpu=draw(st.sampled_from([0, 0, 1, 2])),
            priority=draw(st.sampled_from(PRIORITIES)),
            node=node.name,
            app=draw(st.sampled_from(["a", "b", "c"])),
        )
        u = used[node.name]
        if (
            u[0] + p.cpu > node.cpu * 1000
            or u[1] + p.mem > node.mem
            or u[2] + p.gpu > node.gpu
            or u[3] + 1 > node.pods
        ):
            continue
        u[0] += p.cpu
        u[1] += p.mem
        u[2] += p.gpu
        u[3] += 1
        bound.append(p)
    if len(bound) >= 2 and draw(st.booleans()):
        k = draw(st.integers(2, min(3, len(bound))))
        members = bound[:k]
        for m in members:
            m.gang = "job-x"
            m.priority = members[0].priority
        bound_gangs["job-x"] = draw(st.integers(1, k))
    return bound, bound_gangs


def _draw_gang(draw: st.DrawFn, shapes: tuple[str, ...], *, crowded: bool) -> list[PodCase]:
    """The pending gang: its shape (one request, a leader apart, or mixed), a zone some of it
    must run in, tolerations."""
    shape = draw(st.sampled_from(shapes))
    size = draw(st.integers(1, 3 if crowded else 4))
    base = PodCase(
        name="g-0",
        cpu=draw(st.sampled_from([500, 1000, 2000, 4000])),
        mem=draw(st.sampled_from([1, 2, 4])),
        gpu=draw(st.sampled_from([0, 0, 1])),
    )
    gang = [PodCase(name=f"g-{i}", cpu=base.cpu, mem=base.mem, gpu=base.gpu) for i in range(size)]
    if shape == "leader" and size >= 2:
        gang[0].cpu = draw(st.sampled_from([250, 1000, 3000]))
        gang[0].mem = draw(st.sampled_from([1, 2]))
        gang[0].gpu = 0
    if shape == "mixed" and size >= 3:
        gang[1].cpu = draw(st.sampled_from([250, 3000]))
        gang[0].mem = 1
    if draw(st.integers(0, 4)) == 0:
        zone = draw(st.sampled_from(["a", "b"]))
        for p in gang[: (1 if shape == "leader" else size)]:
            p.zone = zone
    if draw(st.integers(0, 3)) == 0:
        for p in gang:
            p.tolerate = True
    return gang


def _draw_constraint(draw: st.DrawFn, topology: str) -> tuple[str, str | None, int | None]:
    """The gang's dialect and network-topology constraint (mode, tier), as that dialect can say it."""
    dialect = draw(st.sampled_from(["volcano", "koordinator"]))
    kind = draw(st.sampled_from(["none", "hard", "hard", "soft"]))
    top = {"none": 0, "block": 1, "spine": 2}[topology]
    mode: str | None = None
    tier: int | None = None
    if kind == "hard":
        mode = "hard"
        tier = draw(st.integers(0, max(top, 0) + (1 if dialect == "volcano" else 0)))
        if dialect == "koordinator":
            tier = min(tier, top)
    elif kind == "soft":
        mode = "soft"
        tier = draw(st.integers(0, top)) if (dialect == "koordinator" or draw(st.booleans())) else None
        if dialect == "koordinator" and tier == 0:
            tier = top or None
            if tier is None:
                mode = None
    return dialect, mode, tier
