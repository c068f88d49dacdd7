"""API-valid, adversarial objects of every kind the scheduler and the webhook read.

Each strategy draws one plain dict as `kubectl get -o yaml` prints it: what the API server
(and the CRD schemas in `crds/`) would accept, nothing more. Within that, the objects are
hostile: absurd quantities, many containers, huge annotations, digit runs past `int()`'s limit,
gang markers of every dialect at once with names shared across dialects, deep or cyclic
HyperNode trees, ClusterNetworkTopologies whose parents name no layer, budgets with odd
percentages.

`hostile_clusters` draws a whole cluster of them. `ordinary_gangs` draws a small healthy gang
in its own namespace with its own tainted nodes, which no hostile object names, selects or
tolerates: a scheduler must place it whatever the hostile objects beside it are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from tests.strategies.primitives import (
    HUGE_DIGITS,
    HUGE_ZERO_PERCENT,
    INT32_MAX,
    INT64_MAX,
    annotation_values,
    crd_quantities,
    dns_labels,
    label_keys,
    label_values,
    names,
    pod_quantities,
    timestamps,
)

Obj = dict[str, Any]

NAMESPACES = ("default", "team-a", "0", "n" + "9" * 62)
"""Hostile objects live here; never in `ORDINARY_NAMESPACE`."""
ORDINARY_NAMESPACE = "ordinary"
ORDINARY_TAINT = {"key": "topobridge.test/ordinary", "value": "only", "effect": "NoSchedule"}
SCHEDULERS = ("topobridge", "koord-scheduler", "volcano", "default-scheduler")
GANG_NAMES = ("train", "g-1", "g-01", "0", "n" + "9" * 62)
"""Gang names every dialect draws from, so names collide across dialects (label-valid)."""
GANG_TEXTS = (*GANG_NAMES, HUGE_DIGITS, "²", "")
"""Gang names an annotation may carry (any text)."""
LAYERS = ("NodeTopologyLayer", "BlockLayer", "SpineLayer", "ClusterTopologyLayer", "Missing", HUGE_DIGITS)
TOPOLOGY_LABELS = (
    "network.topology.nvidia.com/block",
    "network.topology.nvidia.com/spine",
    "kubernetes.io/hostname",
)
RESOURCES = ("cpu", "memory", "nvidia.com/gpu", "ephemeral-storage", "example.com/widget")
PRIORITY_CLASSES = ("high", "low", "system-cluster-critical", "missing")

KOORD = "gang.scheduling.koordinator.sh/"
VOLCANO_GROUP = "scheduling.k8s.io/group-name"
SIGS_LABEL = "pod-group.scheduling.sigs.k8s.io"
X_LABEL = "scheduling.x-k8s.io/pod-group"
LWS = "leaderworkerset.sigs.k8s.io/"
GPU = "gpu.topology/"


# --- metadata -------------------------------------------------------------------------------


@st.composite
def labels(draw: st.DrawFn, max_size: int = 4) -> dict[str, str]:
    return draw(st.dictionaries(label_keys(), label_values(), max_size=max_size))


@st.composite
def annotations(draw: st.DrawFn) -> dict[str, str]:
    out = draw(st.dictionaries(label_keys(), annotation_values(), max_size=3))
    if draw(st.integers(0, 9)) == 0:  # the API server caps all annotations at 256 KiB together
        out["example.com/huge"] = "x" * 200_000
    return out


@st.composite
def metadata(draw: st.DrawFn, name: str, namespace: str | None) -> Obj:
    meta: Obj = {"name": name, "uid": f"uid-{name}-{draw(st.integers(0, 99))}"}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["creationTimestamp"] = draw(timestamps())
    if lab := draw(labels()):
        meta["labels"] = lab
    if ann := draw(annotations()):
        meta["annotations"] = ann
    if draw(st.integers(0, 7)) == 0:
        meta["deletionTimestamp"] = draw(timestamps())
    return meta


# --- pods -----------------------------------------------------------------------------------


@st.composite
def resource_requirements(draw: st.DrawFn) -> Obj:
    """Requests and limits the API server accepts: a limit is never below its request, and an
    extended resource's request equals its limit (a whole number)."""
    requests: dict[str, str] = {}
    for name in draw(st.lists(st.sampled_from(RESOURCES), unique=True, max_size=4)):
        if name in ("nvidia.com/gpu", "example.com/widget"):
            requests[name] = draw(st.sampled_from(["1", "8", "0", str(INT64_MAX), "1" + "0" * 30]))
        else:
            requests[name] = draw(pod_quantities())
    out: Obj = {}
    if requests:
        out["requests"] = requests
    if draw(st.booleans()):
        limited = {k: v for k, v in requests.items() if draw(st.booleans()) or "/" in k}
        if limited:
            out["limits"] = limited
    return out


@st.composite
def containers(draw: st.DrawFn, prefix: str, *, max_size: int) -> list[Obj]:
    count = draw(st.integers(1, max_size))
    out: list[Obj] = []
    for i in range(count):
        c: Obj = {"name": f"{prefix}{i}", "image": "busybox", "resources": draw(resource_requirements())}
        if draw(st.integers(0, 5)) == 0:
            port: Obj = {"containerPort": draw(st.integers(1, 65535))}
            port["hostPort"] = draw(st.sampled_from([80, 8080, 65535, 1]))
            port["protocol"] = draw(st.sampled_from(["TCP", "UDP", "SCTP"]))
            c["ports"] = [port]
        out.append(c)
    return out


@st.composite
def tolerations(draw: st.DrawFn) -> list[Obj]:
    """Tolerations that always name a key other than the ordinary nodes' taint."""
    out: list[Obj] = []
    for _ in range(draw(st.integers(0, 3))):
        t: Obj = {"key": draw(st.sampled_from(["dedicated", "gpu", "node.kubernetes.io/unschedulable"]))}
        if draw(st.booleans()):
            t["operator"] = "Exists"
        else:
            t["operator"], t["value"] = "Equal", draw(label_values())
        effect = draw(st.sampled_from(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]))
        if effect:
            t["effect"] = effect
        if effect == "NoExecute" and draw(st.booleans()):
            t["tolerationSeconds"] = draw(st.integers(-(2**63), INT64_MAX))
        out.append(t)
    return out


@st.composite
def selectors(draw: st.DrawFn) -> Obj:
    sel: Obj = {}
    if draw(st.booleans()):
        sel["matchLabels"] = draw(labels(max_size=2))
    if draw(st.booleans()):
        op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
        expr: Obj = {"key": draw(label_keys()), "operator": op}
        if op in ("In", "NotIn"):
            expr["values"] = draw(st.lists(label_values(), min_size=1, max_size=3))
        sel["matchExpressions"] = [expr]
    return sel


@st.composite
def affinity(draw: st.DrawFn) -> Obj:
    out: Obj = {}
    if draw(st.booleans()):
        op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
        req: Obj = {"key": draw(st.sampled_from(TOPOLOGY_LABELS)), "operator": op}
        if op in ("In", "NotIn"):
            req["values"] = draw(st.lists(label_values(), min_size=1, max_size=3))
        elif op in ("Gt", "Lt"):
            req["values"] = [str(draw(st.integers(-(2**63), INT64_MAX)))]
        out["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [req]}]
            }
        }
    for kind in ("podAffinity", "podAntiAffinity"):
        if draw(st.booleans()):
            term: Obj = {
                "labelSelector": draw(selectors()),
                "topologyKey": draw(st.sampled_from(TOPOLOGY_LABELS)),
            }
            if draw(st.booleans()):
                term["namespaceSelector"] = draw(selectors())
            if draw(st.booleans()):
                out[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
            else:
                weighted = {"weight": draw(st.integers(1, 100)), "podAffinityTerm": term}
                out[kind] = {"preferredDuringSchedulingIgnoredDuringExecution": [weighted]}
    return out


@st.composite
def gang_markers(draw: st.DrawFn, namespace: str) -> tuple[dict[str, str], dict[str, str]]:
    """(labels, annotations) naming gangs in any number of dialects at once."""
    lab: dict[str, str] = {}
    ann: dict[str, str] = {}
    dialects = draw(st.lists(st.sampled_from(["volcano", "sigs", "x", "koord", "lws", "gpu"]), unique=True))
    for dialect in dialects:
        if dialect == "volcano":
            ann[VOLCANO_GROUP] = draw(st.sampled_from(GANG_TEXTS))
            if draw(st.booleans()):
                ann["volcano.sh/network-topology-mode"] = draw(st.sampled_from(["hard", "soft", "x"]))
                ann["volcano.sh/network-topology-highest-tier"] = draw(
                    st.sampled_from(["1", "0", HUGE_DIGITS])
                )
        elif dialect == "sigs":
            lab[SIGS_LABEL] = draw(st.sampled_from(GANG_NAMES))
        elif dialect == "x":
            lab[X_LABEL] = draw(st.sampled_from(GANG_NAMES))
        elif dialect == "koord":
            ann.update(draw(koordinator_annotations(namespace)))
        elif dialect == "lws":
            lab[LWS + "name"] = draw(st.sampled_from(GANG_NAMES))
            lab[LWS + "group-index"] = draw(st.sampled_from(["0", "1", "9" * 63]))
            lab[LWS + "worker-index"] = draw(st.sampled_from(["0", "1", "9" * 63]))
        else:
            lab["batch.kubernetes.io/controller-uid"] = draw(st.sampled_from(["uid-job", HUGE_DIGITS[:63]]))
            ann["batch.kubernetes.io/job-completion-index"] = draw(st.sampled_from(["0", "3", HUGE_DIGITS]))
    return lab, ann


@st.composite
def koordinator_annotations(draw: st.DrawFn, namespace: str) -> dict[str, str]:
    ann = {KOORD + "name": draw(st.sampled_from(GANG_TEXTS))}
    numbers = st.sampled_from(["1", "2", "0", "-1", "2147483648", HUGE_DIGITS, "x"])
    for key in ("min-available", "total-number", "network-topology-index"):
        if draw(st.booleans()):
            ann[KOORD + key] = draw(numbers)
    if draw(st.booleans()):
        ann[KOORD + "mode"] = draw(st.sampled_from(["Strict", "NonStrict", "strict"]))
    if draw(st.booleans()):
        ann[KOORD + "waiting-time"] = draw(st.sampled_from(["300s", "1h30m", "1" * 5000 + "h", "x"]))
    if draw(st.booleans()):
        groups = draw(st.lists(st.sampled_from(GANG_NAMES), max_size=4))
        ann[KOORD + "groups"] = draw(
            st.sampled_from([json.dumps([f"{namespace}/{g}" for g in groups]), "[" * 5000, "not json", "[]"])
        )
    if draw(st.booleans()):
        rules = [
            {
                "layer": draw(st.sampled_from(LAYERS)),
                "strategy": draw(st.sampled_from(["MustGather", "PreferGather"])),
                **({"podCountMultiple": draw(st.integers(-1, 10))} if draw(st.booleans()) else {}),
            }
            for _ in range(draw(st.integers(0, 3)))
        ]
        ann[KOORD + "network-topology-spec"] = json.dumps({"gatherStrategy": rules})
    return ann


@st.composite
def pods(draw: st.DrawFn, node_names: tuple[str, ...] = (), namespace: str | None = None) -> Obj:
    """A hostile pod: bound to one of `node_names` or pending, in a gang of any dialect."""
    ns = namespace or draw(st.sampled_from(NAMESPACES))
    meta = draw(metadata(draw(names()), ns))
    lab, ann = draw(gang_markers(ns))
    meta["labels"] = {**meta.get("labels", {}), **lab}
    meta["annotations"] = {**meta.get("annotations", {}), **ann}
    if lab.get("batch.kubernetes.io/controller-uid") and draw(st.booleans()):
        uid = draw(st.sampled_from(["uid-job", HUGE_DIGITS]))
        meta["ownerReferences"] = [
            {"apiVersion": "batch/v1", "kind": "Job", "name": "job", "uid": uid, "controller": True}
        ]
    many = draw(st.integers(0, 9)) == 0
    spec: Obj = {
        "schedulerName": draw(st.sampled_from(SCHEDULERS)),
        "containers": draw(containers("c", max_size=40 if many else 3)),
        "priority": draw(st.integers(-(2**31), 10**9)),
    }
    if draw(st.booleans()):
        inits = draw(containers("i", max_size=3))
        for c in inits:
            if draw(st.booleans()):
                c["restartPolicy"] = "Always"  # a sidecar
        spec["initContainers"] = inits
    if draw(st.integers(0, 5)) == 0:
        spec["overhead"] = {"cpu": draw(pod_quantities())}
    if draw(st.booleans()):
        spec["priorityClassName"] = draw(st.sampled_from(PRIORITY_CLASSES))
    if aff := draw(affinity()):
        spec["affinity"] = aff
    if tol := draw(tolerations()):
        spec["tolerations"] = tol
    if draw(st.integers(0, 3)) == 0:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": draw(st.integers(1, INT32_MAX)),
                "topologyKey": draw(st.sampled_from(TOPOLOGY_LABELS)),
                "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                "labelSelector": draw(selectors()),
            }
        ]
    if draw(st.integers(0, 4)) == 0:  # Kubernetes' own gang API (1.36+)
        spec["schedulingGroup"] = {"podGroupName": draw(st.sampled_from(GANG_TEXTS))}
    status: Obj = {"phase": "Pending"}
    if node_names and draw(st.booleans()):
        spec["nodeName"] = draw(st.sampled_from(node_names))
        status["phase"] = draw(st.sampled_from(["Running", "Pending", "Succeeded", "Failed"]))
    elif node_names and draw(st.integers(0, 4)) == 0:
        status["nominatedNodeName"] = draw(st.sampled_from(node_names))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


# --- nodes and topology ---------------------------------------------------------------------


@st.composite
def nodes(draw: st.DrawFn, name: str | None = None) -> Obj:
    """A node with absurd allocatable, taints, unschedulable, topology labels (or none)."""
    node_name = name or draw(names())
    meta = draw(metadata(node_name, None))
    lab = dict(meta.get("labels", {}))
    lab["kubernetes.io/hostname"] = node_name[:63].rstrip("-.") or "h"
    for key in TOPOLOGY_LABELS[:2]:
        if draw(st.booleans()):
            lab[key] = draw(st.sampled_from(["s0", "s1", "b-2", "b-10", "9" * 63]))
    meta["labels"] = lab
    spec: Obj = {}
    if draw(st.integers(0, 4)) == 0:
        spec["unschedulable"] = True
    if draw(st.integers(0, 3)) == 0:
        spec["taints"] = [
            {
                "key": draw(st.sampled_from(["dedicated", "gpu"])),
                "value": draw(label_values()),
                "effect": draw(st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])),
            }
        ]
    out: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec}
    if draw(st.integers(0, 9)):
        alloc = {r: draw(pod_quantities()) for r in draw(st.lists(st.sampled_from(RESOURCES), unique=True))}
        if draw(st.booleans()):
            alloc["pods"] = draw(st.sampled_from(["0", "110", "1000000", str(INT64_MAX)]))
        out["status"] = {"allocatable": alloc, "capacity": dict(alloc)}
    return out


@st.composite
def hypernode_sets(draw: st.DrawFn, node_names: tuple[str, ...] = (), *, max_depth: int = 24) -> list[Obj]:
    """HyperNodes shaped as a chain (up to `max_depth` deep), a cycle, a member with several
    parents, or regex and label members; tiers usually rise upward, sometimes they do not."""
    shape = draw(st.sampled_from(["chain", "cycle", "parents", "selectors"]))
    prefix = draw(st.sampled_from(["hn-", "hn-0", "h" + "9" * 200 + "-"]))
    count = draw(st.integers(2, max_depth)) if shape == "chain" else draw(st.integers(2, 5))
    hn_names = [f"{prefix}{i}" for i in range(count)]
    members: list[list[Obj]] = [[] for _ in hn_names]
    for i in range(count - 1):  # hn[i+1] holds hn[i]
        members[i + 1].append(_exact("HyperNode", hn_names[i]))
    if shape == "cycle":
        members[0].append(_exact("HyperNode", hn_names[-1]))
    elif shape == "parents":
        members[0].append(_exact("HyperNode", hn_names[-1]))  # hn[-1] also under hn[0]
        members[-1].append(_exact("HyperNode", hn_names[0]))
    elif shape == "selectors":
        pattern = draw(st.sampled_from([".*", f"^{prefix}.*", "(", "node-[0-9]+", "a" * 300 + "*"]))
        members[-1].append(
            {
                "type": draw(st.sampled_from(["Node", "HyperNode"])),
                "selector": {"regexMatch": {"pattern": pattern}},
            }
        )
        members[0].append({"type": "Node", "selector": {"labelMatch": draw(selectors())}})
    for i in range(count):
        if node_names and draw(st.booleans()):
            members[i].append(_exact("Node", draw(st.sampled_from(node_names))))
        if not members[i]:
            members[i].append(_exact("Node", draw(st.sampled_from(node_names or ("node-1",)))))
    rising = draw(st.integers(0, 4)) > 0
    out: list[Obj] = []
    for i, name in enumerate(hn_names):
        tier = i + 1 if rising else draw(st.integers(0, INT64_MAX))
        spec: Obj = {"tier": tier, "members": members[i]}
        if draw(st.booleans()):
            spec["tierName"] = draw(st.sampled_from(LAYERS[:5]))  # at most 253 characters
        out.append(
            {
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": draw(metadata(name, None)),
                "spec": spec,
            }
        )
    return out


def _exact(kind: str, name: str) -> Obj:
    return {"type": kind, "selector": {"exactMatch": {"name": name}}}


@st.composite
def cluster_network_topologies(draw: st.DrawFn) -> Obj:
    """Koordinator's layers: a proper chain, or one whose parents name no layer or loop."""
    shape = draw(st.sampled_from(["chain", "broken", "loop", "huge"]))
    layers: list[Obj] = [
        {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
        {
            "topologyLayer": "BlockLayer",
            "parentTopologyLayer": "SpineLayer",
            "labelKey": [TOPOLOGY_LABELS[0]],
        },
        {
            "topologyLayer": "SpineLayer",
            "parentTopologyLayer": "ClusterTopologyLayer",
            "labelKey": [TOPOLOGY_LABELS[1]],
        },
    ]
    if shape == "broken":
        layers[draw(st.integers(0, 2))]["parentTopologyLayer"] = draw(
            st.sampled_from(["Missing", HUGE_DIGITS])
        )
    elif shape == "loop":
        layers[2]["parentTopologyLayer"] = "BlockLayer"
    elif shape == "huge":
        layers[1]["topologyLayer"] = layers[0]["parentTopologyLayer"] = HUGE_DIGITS
    name = draw(st.sampled_from(["default", "default", "other"]))
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "ClusterNetworkTopology",
        "metadata": draw(metadata(name, None)),
        "spec": {"networkTopologySpec": layers},
    }


# --- gang objects ---------------------------------------------------------------------------


@st.composite
def network_topologies(draw: st.DrawFn) -> Obj:
    out: Obj = {}
    if draw(st.booleans()):
        out["mode"] = draw(st.sampled_from(["hard", "soft"]))
    which = draw(st.sampled_from(["tier", "name", "both", "none"]))
    if which in ("tier", "both"):
        out["highestTierAllowed"] = draw(st.sampled_from([0, 1, 2, 1000, INT64_MAX]))
    if which in ("name", "both"):
        out["highestTierName"] = draw(st.sampled_from(LAYERS[:4]))
    return out


@st.composite
def volcano_podgroups(draw: st.DrawFn) -> Obj:
    ns = draw(st.sampled_from(NAMESPACES))
    spec: Obj = {"minMember": draw(st.integers(0, INT32_MAX))}
    if draw(st.booleans()):
        spec["minResources"] = draw(st.dictionaries(st.sampled_from(RESOURCES), crd_quantities(), max_size=3))
    if draw(st.booleans()):
        spec["networkTopology"] = draw(network_topologies())
    if draw(st.booleans()):
        spec["subGroupPolicy"] = [
            {
                "name": draw(dns_labels()),
                "networkTopology": draw(network_topologies()),
                "subGroupSize": draw(st.integers(1, INT32_MAX)),
                "labelSelector": draw(selectors()),
                "matchLabelKeys": draw(st.lists(label_keys(), max_size=2)),
            }
            for _ in range(draw(st.integers(1, 3)))
        ]
    if draw(st.booleans()):
        spec["priorityClassName"] = draw(st.sampled_from(PRIORITY_CLASSES))
    meta = draw(metadata(draw(st.sampled_from(GANG_NAMES)), ns))
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": spec}


@st.composite
def _upstream_group_fields(draw: st.DrawFn, version: str) -> Obj:
    """What a `scheduling.k8s.io` PodGroup and a template share, hostile values included."""
    policy = draw(
        st.sampled_from(
            [
                {"basic": {}},
                {"gang": {"minCount": draw(st.integers(-1, INT32_MAX))}},
                {},
                {"basic": {}, "gang": {}},
            ]
        )
    )
    out: Obj = {"schedulingPolicy": policy}
    if draw(st.booleans()):
        keys = draw(st.lists(st.sampled_from([*TOPOLOGY_LABELS, "", "a/b/c", "x-"]), max_size=2))
        out["schedulingConstraints"] = {"topology": [{"key": k} for k in keys]}
    if draw(st.booleans()):
        out["priority"] = draw(st.integers(-(2**31), INT32_MAX))
    if draw(st.booleans()):
        out["priorityClassName"] = draw(st.sampled_from([*PRIORITY_CLASSES, "Bad Name"]))
    if draw(st.booleans()):
        out["disruptionMode"] = (
            draw(st.sampled_from(["Pod", "PodGroup", "x"]))
            if version == "v1alpha2"
            else draw(st.sampled_from([{"single": {}}, {"all": {}}, {}, {"single": {}, "all": {}}]))
        )
    if version != "v1alpha2" and draw(st.booleans()):
        out["preemptionPolicy"] = draw(st.sampled_from(["Never", "PreemptLowerPriority", "Sometimes"]))
    if draw(st.integers(0, 3)) == 0:
        out["resourceClaims"] = [
            {"name": f"c{i}", "resourceClaimName": "x"} for i in range(draw(st.integers(0, 6)))
        ]
    return out


@st.composite
def upstream_podgroups(draw: st.DrawFn) -> Obj:
    """Kubernetes' own PodGroups at every version that serves them."""
    ns = draw(st.sampled_from(NAMESPACES))
    version = draw(st.sampled_from(["v1beta1", "v1alpha3", "v1alpha2"]))
    spec = draw(_upstream_group_fields(version))
    if draw(st.booleans()):
        if version == "v1alpha2":
            spec["podGroupTemplateRef"] = {"workload": {"workloadName": "w", "podGroupTemplateName": "t"}}
        else:
            spec["workloadRef"] = {"workloadName": draw(st.sampled_from(GANG_TEXTS)), "templateName": "t"}
    meta = draw(metadata(draw(st.sampled_from(GANG_NAMES)), ns))
    return {"apiVersion": f"scheduling.k8s.io/{version}", "kind": "PodGroup", "metadata": meta, "spec": spec}


@st.composite
def upstream_workloads(draw: st.DrawFn) -> Obj:
    """Kubernetes' own Workloads at every version, up to 10 groups or templates."""
    ns = draw(st.sampled_from(NAMESPACES))
    version = draw(st.sampled_from(["v1beta1", "v1alpha3", "v1alpha2", "v1alpha1"]))
    n = draw(st.integers(0, 10))
    names_ = [draw(st.sampled_from([*GANG_NAMES, "Bad"])) for _ in range(n)]
    if version == "v1alpha1":
        groups = [
            {"name": g, "policy": draw(_upstream_group_fields(version))["schedulingPolicy"]} for g in names_
        ]
        spec: Obj = {"podGroups": groups}
    else:
        spec = {"podGroupTemplates": [{"name": g, **draw(_upstream_group_fields(version))} for g in names_]}
    if draw(st.booleans()):
        spec["controllerRef"] = {
            "apiGroup": "batch",
            "kind": draw(st.sampled_from(["Job", "a/b", ""])),
            "name": "x",
        }
    meta = draw(metadata(draw(st.sampled_from(GANG_NAMES)), ns))
    return {"apiVersion": f"scheduling.k8s.io/{version}", "kind": "Workload", "metadata": meta, "spec": spec}


@st.composite
def upstream_composite_podgroups(draw: st.DrawFn) -> Obj:
    ns = draw(st.sampled_from(NAMESPACES))
    policy = draw(
        st.sampled_from([{"basic": {}}, {"gang": {"minGroupCount": draw(st.integers(-1, INT32_MAX))}}, {}])
    )
    spec: Obj = {"schedulingPolicy": policy}
    if draw(st.booleans()):
        spec["parentCompositePodGroupName"] = draw(st.sampled_from(GANG_TEXTS))
    meta = draw(metadata(draw(st.sampled_from(GANG_NAMES)), ns))
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": meta,
        "spec": spec,
    }


@st.composite
def coscheduling_podgroups(draw: st.DrawFn) -> Obj:
    """scheduling.sigs.k8s.io (Koordinator's) or scheduling.x-k8s.io PodGroups."""
    ns = draw(st.sampled_from(NAMESPACES))
    group = draw(st.sampled_from(["scheduling.sigs.k8s.io", "scheduling.x-k8s.io"]))
    low = 0 if group == "scheduling.sigs.k8s.io" else 1
    spec: Obj = {"minMember": draw(st.integers(low, INT32_MAX))}
    if draw(st.booleans()):
        spec["minResources"] = draw(st.dictionaries(st.sampled_from(RESOURCES), crd_quantities(), max_size=3))
    if draw(st.booleans()):
        spec["scheduleTimeoutSeconds"] = draw(st.integers(-(2**31), INT32_MAX))
    meta = draw(metadata(draw(st.sampled_from(GANG_NAMES)), ns))
    if draw(st.booleans()):
        meta.setdefault("annotations", {}).update(draw(koordinator_annotations(ns)))
    return {"apiVersion": f"{group}/v1alpha1", "kind": "PodGroup", "metadata": meta, "spec": spec}


@st.composite
def jobs(draw: st.DrawFn) -> Obj:
    """batch/v1 Jobs asking for GPU gangs through `gpu.topology/*` annotations."""
    ns = draw(st.sampled_from(NAMESPACES))
    ann = {
        GPU + key: draw(st.sampled_from(values))
        for key, values in (
            ("policy", ["nvlink", "spread", "best-effort", "x"]),
            ("multi-node-policy", ["pack", "spread", "best-fit", ""]),
            ("max-nodes", ["1", "4", "0", "2147483648", HUGE_DIGITS]),
            ("min-gpus-per-node", ["1", "8", "-1", HUGE_DIGITS]),
            ("require-nvlink", ["true", "false", "yes"]),
        )
        if draw(st.booleans())
    }
    meta = draw(metadata(draw(st.sampled_from(["job", *GANG_NAMES])), ns))
    meta["uid"] = draw(st.sampled_from(["uid-job", HUGE_DIGITS]))
    meta["annotations"] = {**meta.get("annotations", {}), **ann}
    template = {
        "metadata": {"annotations": dict(ann)},
        "spec": {"containers": draw(containers("c", max_size=2))},
    }
    spec: Obj = {"parallelism": draw(st.integers(0, INT32_MAX)), "template": template}
    if draw(st.booleans()):
        spec["completions"] = draw(st.integers(0, INT32_MAX))
        spec["completionMode"] = draw(st.sampled_from(["Indexed", "NonIndexed"]))
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


@st.composite
def leader_worker_sets(draw: st.DrawFn) -> Obj:
    ns = draw(st.sampled_from(NAMESPACES))
    worker = {"spec": {"containers": draw(containers("w", max_size=3))}}
    tpl: Obj = {"size": draw(st.integers(-(2**31), INT32_MAX)), "workerTemplate": worker}
    if draw(st.booleans()):
        tpl["leaderTemplate"] = {"spec": {"containers": draw(containers("l", max_size=2))}}
    if draw(st.booleans()):
        tpl["subGroupPolicy"] = {"subGroupSize": draw(st.integers(-1, INT32_MAX))}
    spec: Obj = {"replicas": draw(st.integers(0, INT32_MAX)), "leaderWorkerTemplate": tpl}
    if draw(st.booleans()):
        spec["networkTopology"] = draw(network_topologies())
    if draw(st.booleans()):
        spec["startupPolicy"] = draw(st.sampled_from(["LeaderCreated", "LeaderReady"]))
    meta = draw(metadata(draw(st.sampled_from(GANG_NAMES)), ns))
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": meta,
        "spec": spec,
    }


# --- cluster-wide objects -------------------------------------------------------------------


@st.composite
def priority_classes(draw: st.DrawFn, *, global_default: bool = False) -> Obj:
    name = draw(st.sampled_from(PRIORITY_CLASSES[:2]))
    out: Obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": draw(metadata(name, None)),
        "value": draw(st.integers(-(2**31), 10**9)),
    }
    if global_default:
        out["globalDefault"] = True
    if draw(st.booleans()):
        out["preemptionPolicy"] = draw(st.sampled_from(["Never", "PreemptLowerPriority"]))
    return out


@st.composite
def pod_disruption_budgets(draw: st.DrawFn) -> Obj:
    ns = draw(st.sampled_from(NAMESPACES))
    limit = draw(
        st.one_of(
            st.integers(0, INT32_MAX),
            st.sampled_from(["0%", "50%", "100%", "000050%", HUGE_ZERO_PERCENT, "0" * 4400 + "0%"]),
        )
    )
    key = draw(st.sampled_from(["minAvailable", "maxUnavailable"]))
    spec: Obj = {key: limit, "selector": draw(selectors())}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": draw(metadata(draw(names()), ns)),
        "spec": spec,
    }


@st.composite
def namespaces(draw: st.DrawFn) -> Obj:
    name = draw(st.sampled_from(NAMESPACES))
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": draw(metadata(name, None))}


# --- whole clusters -------------------------------------------------------------------------


def identity(obj: Obj) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return (obj["apiVersion"].split("/")[0], obj["kind"], meta.get("namespace", ""), meta["name"])


@st.composite
def hostile_clusters(
    draw: st.DrawFn, *, max_nodes: int = 6, max_pods: int = 12, max_depth: int = 24
) -> list[Obj]:
    """A cluster of hostile objects of every kind, each (group, kind, namespace, name) once."""
    node_objs = [draw(nodes()) for _ in range(draw(st.integers(0, max_nodes)))]
    node_objs = [n for n in node_objs if not n["metadata"]["name"].startswith("ordinary")]
    node_names = tuple(n["metadata"]["name"] for n in node_objs)
    out: list[Obj] = list(node_objs)
    out += [draw(pods(node_names)) for _ in range(draw(st.integers(0, max_pods)))]
    out += [draw(volcano_podgroups()) for _ in range(draw(st.integers(0, 3)))]
    out += [draw(coscheduling_podgroups()) for _ in range(draw(st.integers(0, 3)))]
    out += [draw(upstream_podgroups()) for _ in range(draw(st.integers(0, 2)))]
    out += [draw(jobs()) for _ in range(draw(st.integers(0, 2)))]
    out += [draw(leader_worker_sets()) for _ in range(draw(st.integers(0, 2)))]
    if draw(st.booleans()):
        out += draw(hypernode_sets(node_names, max_depth=max_depth))
    if draw(st.booleans()):
        out.append(draw(cluster_network_topologies()))
    out += [
        draw(priority_classes(global_default=i == 0 and draw(st.booleans())))
        for i in range(draw(st.integers(0, 2)))
    ]
    out += [draw(pod_disruption_budgets()) for _ in range(draw(st.integers(0, 3)))]
    out += [draw(namespaces()) for _ in range(draw(st.integers(0, 2)))]
    unique: dict[tuple[str, str, str, str], Obj] = {}
    for obj in out:
        unique.setdefault(identity(obj), obj)
    return list(unique.values())


@dataclass(frozen=True)
class OrdinaryGang:
    """A small healthy gang and the healthy nodes kept for it (tainted; only it tolerates)."""

    objects: tuple[Obj, ...]
    gang: str
    """`<dialect>:namespace/name`, as the scheduler keys it."""
    pods: tuple[str, ...]
    """`namespace/name` of each member."""
    nodes: tuple[str, ...]


_GANG_DIALECT = {
    "volcano": "volcano",
    "sigs": "koordinator",
    "x": "scheduler-plugins",
    "koord": "koordinator",
}
"""The dialect in the scheduler's gang key for each way the ordinary gang is written."""


@st.composite
def ordinary_gangs(draw: st.DrawFn) -> OrdinaryGang:
    """2-4 pods of 1 cpu in namespace `ordinary`, on as many nodes of 4 cpu, in one dialect."""
    size = draw(st.integers(2, 4))
    dialect = draw(st.sampled_from(["volcano", "sigs", "x", "koord"]))
    name = "ordinary"
    node_names = tuple(f"ordinary-node-{i}" for i in range(size))
    objects: list[Obj] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
            "spec": {"taints": [dict(ORDINARY_TAINT)]},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
        }
        for n in node_names
    ]
    lab: dict[str, str] = {}
    ann: dict[str, str] = {}
    meta = {"name": name, "namespace": ORDINARY_NAMESPACE}
    if dialect == "volcano":
        ann[VOLCANO_GROUP] = name
        objects.append(
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": meta,
                "spec": {"minMember": size},
            }
        )
    elif dialect in ("sigs", "x"):
        group = "scheduling.sigs.k8s.io" if dialect == "sigs" else "scheduling.x-k8s.io"
        lab[SIGS_LABEL if dialect == "sigs" else X_LABEL] = name
        objects.append(
            {
                "apiVersion": f"{group}/v1alpha1",
                "kind": "PodGroup",
                "metadata": meta,
                "spec": {"minMember": size},
            }
        )
    else:
        ann.update(
            {KOORD + "name": name, KOORD + "min-available": str(size), KOORD + "total-number": str(size)}
        )
    toleration = {
        "key": ORDINARY_TAINT["key"],
        "operator": "Equal",
        "value": ORDINARY_TAINT["value"],
        "effect": "NoSchedule",
    }
    pod_names = tuple(f"{name}-{i}" for i in range(size))
    for pod_name in pod_names:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": pod_name,
                    "namespace": ORDINARY_NAMESPACE,
                    "labels": dict(lab),
                    "annotations": dict(ann),
                },
                "spec": {
                    "schedulerName": "topobridge",
                    "priority": 0,
                    "tolerations": [toleration],
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                        }
                    ],
                },
                "status": {"phase": "Pending"},
            }
        )
    return OrdinaryGang(
        objects=tuple(objects),
        gang=f"{_GANG_DIALECT[dialect]}:{ORDINARY_NAMESPACE}/{name}",
        pods=tuple(f"{ORDINARY_NAMESPACE}/{p}" for p in pod_names),
        nodes=node_names,
    )
