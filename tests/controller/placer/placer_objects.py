"""Builders for the plain Kubernetes objects placer tests feed the simulator and the engine."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from controller.placer.budgets import budgets_from
from controller.placer.engine import Verdict, schedule
from controller.placer.scenario import SimulationResult, load_scenario, prepare, simulate
from topobridge.cmd_validate import load_objects

DEMO = Path(__file__).resolve().parents[3] / "controller" / "placer" / "demo"

Obj = dict[str, Any]

SEED_LAYOUT = {
    "spine-0": {"block-0": ["node-0", "node-1", "node-2"], "block-1": ["node-3", "node-4"]},
    "spine-1": {"block-2": ["node-5", "node-6"], "block-3": ["node-7", "node-8"]},
    "spine-2": {"block-4": ["node-9", "node-10", "node-11"]},
}
"""The seed's 12-node cluster: spine -> block -> node names."""


def demo_objects(name: str) -> list[Obj]:
    return [loc.obj for loc in load_objects(str(DEMO / f"{name}.yaml"))]


def node(
    name: str,
    *,
    cpu: str = "8",
    memory: str = "32Gi",
    labels: dict[str, str] | None = None,
    pods: str | None = "110",
    gpu: str | None = None,
    taints: list[Obj] | None = None,
    unschedulable: bool = False,
) -> Obj:
    alloc: dict[str, str] = {"cpu": cpu, "memory": memory}
    if pods is not None:
        alloc["pods"] = pods
    if gpu is not None:
        alloc["nvidia.com/gpu"] = gpu
    spec: Obj = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": alloc},
    }


def spine_block_nodes(layout: dict[str, dict[str, list[str]]], **kw: Any) -> list[Obj]:
    """Nodes labelled the way the seed labels them: spine -> block -> node names."""
    out = []
    for spine, blocks in layout.items():
        for block, names in blocks.items():
            for n in names:
                out.append(
                    node(
                        n,
                        labels={
                            "network.topology.nvidia.com/spine": spine,
                            "network.topology.nvidia.com/block": block,
                        },
                        **kw,
                    )
                )
    return out


def cnt(*, spine: bool = True, levels: Sequence[tuple[str, str]] | None = None) -> Obj:
    """Koordinator's ClusterNetworkTopology `default`: `levels` are (layer, node label key) from
    just above the nodes up; by default the seed's block (and spine) labels."""
    if levels is None:
        levels = [("BlockLayer", "network.topology.nvidia.com/block")]
        if spine:
            levels.append(("SpineLayer", "network.topology.nvidia.com/spine"))
    layers: list[Obj] = [{"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": levels[0][0]}]
    for i, (layer, key) in enumerate(levels):
        spec: Obj = {"topologyLayer": layer, "labelKey": [key]}
        if i + 1 < len(levels):
            spec["parentTopologyLayer"] = levels[i + 1][0]
        layers.append(spec)
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "ClusterNetworkTopology",
        "metadata": {"name": "default"},
        "spec": {"networkTopologySpec": layers},
    }


def hypernode(name: str, tier: int, members: list[tuple[str, str]], tier_name: str | None = None) -> Obj:
    spec: Obj = {
        "tier": tier,
        "members": [{"type": t, "selector": {"exactMatch": {"name": m}}} for t, m in members],
    }
    if tier_name:
        spec["tierName"] = tier_name
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": spec,
    }


def priority_class(name: str, value: int, *, policy: str | None = None, global_default: bool = False) -> Obj:
    out: Obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    if policy:
        out["preemptionPolicy"] = policy
    if global_default:
        out["globalDefault"] = True
    return out


def pod(
    name: str,
    *,
    cpu: str = "8",
    memory: str = "32Gi",
    gpu: str | None = None,
    node_name: str | None = None,
    scheduler: str = "koord-scheduler",
    priority: int | None = None,
    priority_class: str | None = None,
    policy: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    namespace: str = "default",
    node_selector: dict[str, str] | None = None,
    affinity: Obj | None = None,
    tolerations: list[Obj] | None = None,
    index: int | None = None,
) -> Obj:
    req: dict[str, str] = {"cpu": cpu, "memory": memory}
    if gpu is not None:
        req["nvidia.com/gpu"] = gpu
    ann = dict(annotations or {})
    if index is not None:
        ann["gang.scheduling.koordinator.sh/network-topology-index"] = str(index)
    spec: Obj = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": req}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if priority_class:
        spec["priorityClassName"] = priority_class
    if policy:
        spec["preemptionPolicy"] = policy
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = tolerations
    meta: Obj = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    if ann:
        meta["annotations"] = ann
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def koord_gang(
    name: str,
    min_member: int,
    *,
    gather: list[tuple[str, str]] | None = None,
    pod_count_multiple: dict[str, int] | None = None,
    groups: list[str] | None = None,
) -> Obj:
    meta: Obj = {"name": name, "namespace": "default"}
    ann: dict[str, str] = {}
    if gather:
        rules: list[Obj] = []
        for layer, strategy in gather:
            rule: Obj = {"layer": layer, "strategy": strategy}
            if pod_count_multiple and layer in pod_count_multiple:
                rule["podCountMultiple"] = pod_count_multiple[layer]
            rules.append(rule)
        ann["gang.scheduling.koordinator.sh/network-topology-spec"] = json.dumps({"gatherStrategy": rules})
    if groups:
        ann["gang.scheduling.koordinator.sh/groups"] = json.dumps(groups)
    if ann:
        meta["annotations"] = ann
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": {"minMember": min_member},
    }


def volcano_gang(
    name: str,
    min_member: int,
    *,
    mode: str | None = None,
    tier: int | None = None,
    tier_name: str | None = None,
    priority_class: str | None = None,
    subgroups: list[Obj] | None = None,
) -> Obj:
    spec: Obj = {"minMember": min_member}
    if mode or tier is not None or tier_name:
        nt: Obj = {}
        if mode:
            nt["mode"] = mode
        if tier is not None:
            nt["highestTierAllowed"] = tier
        if tier_name:
            nt["highestTierName"] = tier_name
        spec["networkTopology"] = nt
    if priority_class:
        spec["priorityClassName"] = priority_class
    if subgroups:
        spec["subGroupPolicy"] = subgroups
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def members(
    gang: str, n: int, *, prefix: str | None = None, dialect: str = "koordinator", **kw: Any
) -> list[Obj]:
    """n pods of a gang, ranks 0..n-1 (Koordinator index annotation) or Volcano annotation."""
    out = []
    for i in range(n):
        if dialect == "koordinator":
            out.append(
                pod(f"{prefix or gang}-{i}", labels={"pod-group.scheduling.sigs.k8s.io": gang}, index=i, **kw)
            )
        else:
            out.append(
                pod(
                    f"{prefix or gang}-{i}",
                    annotations={"scheduling.k8s.io/group-name": gang},
                    scheduler="volcano",
                    **kw,
                )
            )
    return out


def pdb(
    name: str,
    selector: dict[str, str],
    *,
    allowed: int | None = None,
    min_available: int | str | None = None,
    max_unavailable: int | str = 1,
) -> Obj:
    """A budget over `selector`: minAvailable when given, else maxUnavailable; `allowed` is the
    reported `status.disruptionsAllowed` (None: computed from the spec)."""
    spec: Obj = {"selector": {"matchLabels": selector}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    else:
        spec["maxUnavailable"] = max_unavailable
    out: Obj = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    if allowed is not None:
        out["status"] = {"disruptionsAllowed": allowed}
    return out


def run(objects: list[Obj], **kw: Any) -> SimulationResult:
    return simulate(load_scenario(objects), **kw)


def attempt(objects: list[Obj], gang: str) -> Verdict:
    """One engine attempt for `gang` (its key, or ns/name) on the snapshot the objects describe."""
    sc = load_scenario(objects)
    prep = prepare(sc)
    g = next(x for x in prep.gangs(sc) if gang in (x.key, x.name))
    return schedule(g, prep.snapshot, budgets=budgets_from(sc.pdbs, prep.snapshot))


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    """Replace `module.name` for the test by a wrapper that notes each call's arguments (the
    work tests count calls this way); the returned list fills as it is called."""
    calls: list[Any] = []
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls
