"""Small constructors for the plain Kubernetes objects a conformance row is made of.

Every helper returns a dict as `kubectl get -o yaml` would print it, so a row's cluster is
readable as data and goes through the same edge parsing as a user's snapshot. Nodes get ample
room by default (`ROOMY`), because upstream's plugin tables run one plugin on nodes that report
no capacity at all; only the NodeResourcesFit rows pass their own `allocatable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Obj = dict[str, Any]

SCHEDULER = "topobridge"
ROOMY = {"cpu": "1000", "memory": "1000Gi", "pods": "1000"}
"""Allocatable of a node whose capacity plays no part in the row."""
HOSTNAME = "kubernetes.io/hostname"


def node(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    taints: list[Obj] | None = None,
    unschedulable: bool = False,
    allocatable: dict[str, str] | None = None,
    hostname: bool = True,
) -> Obj:
    """A Node; `hostname` adds the `kubernetes.io/hostname` label the kubelet sets (upstream
    unit tables often leave it out: pass False there)."""
    meta_labels = {HOSTNAME: name} if hostname else {}
    meta_labels.update(labels or {})
    spec: Obj = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": meta_labels},
        "spec": spec,
        "status": {"allocatable": dict(allocatable if allocatable is not None else ROOMY)},
    }


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Obj:
    out: Obj = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    return out


def toleration(key: str = "", value: str = "", effect: str = "", operator: str = "") -> Obj:
    out: Obj = {}
    for field, v in (("key", key), ("operator", operator), ("value", value), ("effect", effect)):
        if v:
            out[field] = v
    return out


def container(name: str = "c", requests: dict[str, str] | None = None, **extra: Any) -> Obj:
    out: Obj = {"name": name, "image": "registry.k8s.io/pause"}
    if requests:
        out["resources"] = {"requests": dict(requests)}
    out.update(extra)
    return out


def pod(
    name: str,
    *,
    namespace: str = "default",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    node_name: str | None = None,
    requests: dict[str, str] | None = None,
    containers: list[Obj] | None = None,
    scheduler: str = SCHEDULER,
    **spec: Any,
) -> Obj:
    """A Pod; `spec` keywords are PodSpec fields as Kubernetes spells them (camelCase) and go
    into the spec verbatim (`affinity=`, `tolerations=`, `schedulingGates=`, ...)."""
    meta: Obj = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    body: Obj = {
        "schedulerName": scheduler,
        "containers": containers if containers is not None else [container(requests=requests)],
    }
    if node_name:
        body["nodeName"] = node_name
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def namespace(name: str, labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def priority_class(name: str, value: int) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


# --- selectors and terms ----------------------------------------------------------------------


def req(key: str, operator: str, *values: str) -> Obj:
    """One requirement (`matchExpressions` entry) of a label or node selector."""
    out: Obj = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def selector(*expressions: Obj, **labels: str) -> Obj:
    """A label selector: `matchLabels` from keywords, `matchExpressions` from `req(...)`."""
    out: Obj = {}
    if labels:
        out["matchLabels"] = dict(labels)
    if expressions:
        out["matchExpressions"] = list(expressions)
    return out


def node_affinity(*terms: Obj) -> Obj:
    """Required node affinity from node selector terms (`{"matchExpressions": [...]}`)."""
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def term(topology_key: str, label_selector: Obj | None, **extra: Any) -> Obj:
    """A pod (anti-)affinity term; `extra`: namespaces, namespaceSelector, matchLabelKeys, ..."""
    out: Obj = {"topologyKey": topology_key}
    if label_selector is not None:
        out["labelSelector"] = label_selector
    out.update(extra)
    return out


def pod_affinity(
    required: list[Obj] | None = None,
    anti: list[Obj] | None = None,
    preferred: list[tuple[int, Obj]] | None = None,
    preferred_anti: list[tuple[int, Obj]] | None = None,
) -> Obj:
    """An `affinity` block with podAffinity / podAntiAffinity."""
    out: Obj = {}
    if required or preferred:
        block: Obj = {}
        if required:
            block["requiredDuringSchedulingIgnoredDuringExecution"] = list(required)
        if preferred:
            block["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in preferred
            ]
        out["podAffinity"] = block
    if anti or preferred_anti:
        block = {}
        if anti:
            block["requiredDuringSchedulingIgnoredDuringExecution"] = list(anti)
        if preferred_anti:
            block["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in preferred_anti
            ]
        out["podAntiAffinity"] = block
    return out


def spread(
    max_skew: int, topology_key: str, label_selector: Obj | None, hard: bool = True, **extra: Any
) -> Obj:
    """One topologySpreadConstraint; `extra`: minDomains, matchLabelKeys, nodeAffinityPolicy, ..."""
    out: Obj = {
        "maxSkew": max_skew,
        "topologyKey": topology_key,
        "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
    }
    if label_selector is not None:
        out["labelSelector"] = label_selector
    out.update(extra)
    return out


# --- Volcano -----------------------------------------------------------------------------------


def hypernode(
    name: str, tier: int, nodes: Sequence[str] = (), hypernodes: Sequence[str] = (), *, tier_name: str = ""
) -> Obj:
    members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in nodes]
    members += [{"type": "HyperNode", "selector": {"exactMatch": {"name": h}}} for h in hypernodes]
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "members": members, **({"tierName": tier_name} if tier_name else {})},
    }


def podgroup(
    name: str,
    min_member: int,
    *,
    namespace: str = "default",
    mode: str | None = None,
    tier: int | None = None,
) -> Obj:
    """A Volcano PodGroup; `mode`/`tier` set `spec.networkTopology`."""
    spec: Obj = {"minMember": min_member, "queue": "default"}
    if mode is not None:
        topo: Obj = {"mode": mode}
        if tier is not None:
            topo["highestTierAllowed"] = tier
        spec["networkTopology"] = topo
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def member(name: str, group: str, *, namespace: str = "default", **kw: Any) -> Obj:
    """A pod of a Volcano PodGroup (the group-name annotation)."""
    ann = {"scheduling.k8s.io/group-name": group, **kw.pop("annotations", {})}
    return pod(name, namespace=namespace, annotations=ann, **kw)
