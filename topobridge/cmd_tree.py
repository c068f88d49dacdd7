"""`topobridge tree [-f FILE]... [--from-cluster] [-n NAMESPACE] [--gang NAME] [-o text|json|yaml]`:
the topology tree of the current cluster, read-only, with what runs where and what waits and why.

The snapshot is named as `simulate`, `explain` and `ui` name it: the live cluster by default
(`--from-cluster`), `-f FILE` (repeatable) a scenario file instead, both: the cluster with the
files' objects added.

The tree is the one the scheduler uses (HyperNodes when there are any, else the
ClusterNetworkTopology `default` and the nodes' labels, else a Kueue Topology, else the nodes'
topograph and GPU Feature Discovery labels), built by the placer's own code from the objects
listed through the kubeconfig (only `list` calls; the kinds the scheduler watches, batch/v1
Jobs included, so a GPU-dialect Job's pods are its one gang). A domain made from a node
label names it, e.g. `(nvidia.com/gpu.clique)`. Per domain and per node:
free/allocatable cpu, memory (and GPUs where there are any), counting every pod on the node
whatever the filter. Per domain: the gangs placed there (the lowest domain holding all their
bound pods). Pending gangs are listed with their reason, read from their pods' PodScheduled
condition, else from their PodGroup's conditions.

Pods on a node: ● running or bound, ✗ being evicted (deleting), → nominated (waiting for the node).
`-n/--namespace` shows only that namespace's pods and gangs; `--gang NAME` (or NAMESPACE/NAME)
only one gang, and the branches of the tree that hold it.

Exit status: 0 shown, 1 --gang names no gang, 2 the cluster could not be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from topobridge import output
from topobridge.inputs import Snapshot, add_snapshot_arguments

if TYPE_CHECKING:
    from controller.placer.scenario import Prepared
    from controller.placer.snapshot import I64, ClusterIndex
    from translations.gangs import Gang

EXIT_OK, EXIT_NO_GANG, EXIT_UNREADABLE = 0, 1, 2
FORMATS = (output.TEXT, output.JSON, output.YAML)
RUNNING, EVICTING, NOMINATED = "●", "✗", "→"
STATE_MARK = {"running": RUNNING, "evicting": EVICTING, "nominated": NOMINATED}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "tree",
        help="the cluster's topology tree with free resources, placed gangs and pending ones (read-only)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_snapshot_arguments(p)
    p.add_argument("-n", "--namespace", default=None, help="only this namespace's pods and gangs")
    p.add_argument("--gang", default=None, metavar="NAME", help="only this gang (NAME or NAMESPACE/NAME)")
    output.add_output_argument(p, formats=FORMATS, default=output.TEXT, says="the same tree as data")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(
        kubeconfig=args.kubeconfig,
        context=args.context,
        snapshot=Snapshot.of(args),
        namespace=args.namespace,
        gang=args.gang,
        output_format=args.output,
        out=sys.stdout,
        err=sys.stderr,
    )


def run(
    *,
    kubeconfig: str | None,
    context: str | None,
    snapshot: Snapshot | None = None,
    namespace: str | None = None,
    gang: str | None = None,
    output_format: str = output.TEXT,
    out: TextIO,
    err: TextIO,
) -> int:
    snapshot = snapshot or Snapshot(kubeconfig=kubeconfig, context=context)
    try:
        cluster, _, files, _ = snapshot.read("tree")
    except ValueError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_UNREADABLE
    objects = [*cluster, *files]
    view = cluster_view(objects, namespace=namespace, gang=gang)
    for warning in view.warnings:
        print(f"warning: {warning}", file=err)
    if gang is not None and not view.placed and not view.pending:
        where = f" in namespace {namespace}" if namespace else ""
        print(f"error: --gang {gang}: no gang of that name{where}", file=err)
        return EXIT_NO_GANG
    if output_format == output.JSON:
        output.dump_json(view.to_dict(), out)
    elif output_format == output.YAML:
        output.dump_yaml(view.to_dict(), out)
    else:
        out.write(render(view))
    return EXIT_OK


# --- the view: objects in, a tree of plain data out ---------------------------------------------


@dataclass(frozen=True)
class Figures:
    """Allocatable and free per main resource, in scheduler units (millicores, bytes, GPUs)."""

    allocatable: dict[str, int]
    free: dict[str, int]


@dataclass
class PodOnNode:
    name: str
    state: str
    """running, evicting or nominated"""


@dataclass
class NodeView:
    name: str
    allocatable: dict[str, str]
    free: dict[str, str]
    text: str
    """`free cpu 2/8 mem 8Gi/32Gi`, the same figures as text."""
    pods: list[PodOnNode] = field(default_factory=list)
    units: Figures | None = None
    """The same figures as numbers (scheduler units), for pictures."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "allocatable": self.allocatable,
            "free": self.free,
            "pods": [{"name": p.name, "state": p.state} for p in self.pods],
        }


@dataclass
class DomainView:
    name: str
    tier: int
    allocatable: dict[str, str]
    free: dict[str, str]
    text: str
    source: str | None = None
    """What made the domain, when a node label did: the key (`TopologyDomain.source`)."""
    gangs: list[str] = field(default_factory=list)
    nodes: list[NodeView] = field(default_factory=list)
    domains: list[DomainView] = field(default_factory=list)
    units: Figures | None = None
    """The same figures as numbers (scheduler units), for pictures."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "tier": self.tier,
            "source": self.source,
            "allocatable": self.allocatable,
            "free": self.free,
            "gangs": self.gangs,
            "domains": [d.to_dict() for d in self.domains],
            "nodes": [n.to_dict() for n in self.nodes],
        }


@dataclass
class PlacedGang:
    gang: str
    domain: str
    tier: int
    bound: int
    min_member: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON form `tree -o json` and the ui share."""
        return {
            "gang": self.gang,
            "domain": self.domain,
            "tier": self.tier,
            "bound": self.bound,
            "minMember": self.min_member,
        }


@dataclass
class PendingGang:
    gang: str
    pending: int
    bound: int
    min_member: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON form `tree -o json` and the ui share."""
        return {
            "gang": self.gang,
            "pending": self.pending,
            "bound": self.bound,
            "minMember": self.min_member,
            "reason": self.reason,
        }


@dataclass
class TreeView:
    topology: str
    domains: list[DomainView] = field(default_factory=list)
    nodes: list[NodeView] = field(default_factory=list)
    """Nodes in no domain."""
    placed: list[PlacedGang] = field(default_factory=list)
    pending: list[PendingGang] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    """The tree drawn, filtered as asked."""
    units: Figures | None = None
    """The whole cluster's figures."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "topology": self.topology,
            "domains": [d.to_dict() for d in self.domains],
            "nodes": [n.to_dict() for n in self.nodes],
            "gangs": {
                "placed": [g.to_dict() for g in self.placed],
                "pending": [g.to_dict() for g in self.pending],
            },
        }


def cluster_view(
    objects: Sequence[Mapping[str, Any]],
    *,
    namespace: str | None = None,
    gang: str | None = None,
    prepared: Prepared | None = None,
) -> TreeView:
    """The tree of `objects` (as `kubectl get -o yaml` lists them), filtered to a namespace or
    a gang. Objects that cannot be read are left out with a warning, as in a dry run.
    `prepared`: the objects already read (`prepare(load_scenario(objects, lenient=True))`),
    for a caller that asks the same snapshot more (`topobridge ui`).

    The gangs first (`_gang_views`: where each is placed, why one waits), then the pods on each
    node, the figures of every node and domain (`_node_views`, `_domain_views`), the tree cut to
    the gang's nodes when one is asked for (`_Focus`), and the text lines (`_tree_lines`)."""
    from controller.placer.scenario import load_scenario, prepare
    from topobridge.treeview import topology_line

    prep = prepared if prepared is not None else prepare(load_scenario(objects, lenient=True))
    index = prep.index
    free = index.alloc - prep.snapshot.used

    def wanted_gang(g: Gang) -> bool:
        if namespace is not None and g.namespace != namespace:
            return False
        return gang is None or gang in (g.key, g.name, g.name.split("/", 1)[1])

    gangs = _gang_views(index, [g for g in prep.gangs() if wanted_gang(g)], _podgroup_messages(objects))
    view = TreeView(topology=topology_line(index), warnings=list(prep.warnings))
    view.units = _figures(index, free, slice(0, index.n_nodes))[3]
    view.placed, view.pending = gangs.placed, gangs.pending

    def shown_pod(ns: str, name: str) -> bool:
        key = f"{ns}/{name}"
        if gang is not None:
            return key in gangs.pods
        return namespace is None or ns == namespace

    pods_on = _pods_by_node(objects, shown_pod, short=namespace is not None)
    held = gangs.nodes | {index.node_pos[n] for n in pods_on if n in index.node_pos}  # nominated ones too
    focus = _Focus(gang is not None, frozenset(held))
    nodes = _node_views(index, free, pods_on)
    domains = _domain_views(index, free, gangs.in_domain)
    for d, dom in domains.items():
        dom.domains = [domains[c] for c in index.dom_children[d] if focus.domain(index, c)]
        direct = range(int(index.dom_start[d]), int(index.dom_direct_end[d]))
        dom.nodes = [nodes[v] for v in direct if focus.node(v)]
    view.domains = [domains[r] for r in index.roots if focus.domain(index, r)]
    view.nodes = [nodes[v] for v in range(*index.loose) if focus.node(v)]
    view.lines = _tree_lines(index, free, (nodes, domains), focus, gangs.in_domain.get("cluster", []))
    return view


@dataclass
class _Gangs:
    """The gangs shown: where each placed one is, why each pending one waits."""

    placed: list[PlacedGang] = field(default_factory=list)
    pending: list[PendingGang] = field(default_factory=list)
    in_domain: dict[str, list[str]] = field(default_factory=dict)
    """Domain label -> the gangs placed in it (lowest domain holding their bound pods)."""
    nodes: set[int] = field(default_factory=set)
    """Nodes their bound pods are on."""
    pods: set[str] = field(default_factory=set)
    """Every member's key."""


@dataclass(frozen=True)
class _Focus:
    """What a view of one gang keeps: the nodes its pods are on or nominated to, and the
    domains holding them. Without a gang, everything."""

    on: bool
    nodes: frozenset[int]

    def node(self, v: int) -> bool:
        return not self.on or v in self.nodes

    def domain(self, index: ClusterIndex, d: int) -> bool:
        lo, hi = int(index.dom_start[d]), int(index.dom_end[d])
        return not self.on or any(lo <= v < hi for v in self.nodes)


def _gang_views(index: ClusterIndex, gangs: Iterable[Gang], conditions: Mapping[str, str]) -> _Gangs:
    """Where each gang's bound pods are (the lowest domain holding them), and for one with
    pending pods why it waits (its error, a pod's message, its PodGroup's condition)."""
    from controller.placer.engine import lowest_common
    from translations.topology import natural_key

    out = _Gangs()
    for g in sorted(gangs, key=lambda g: natural_key(g.key)):
        out.pods.update(p.key for p in g.pods)
        held = {index.node_pos[n] for p in g.bound if (n := p.pod.spec.node_name or "") in index.node_pos}
        out.nodes |= held
        if held and g.source != "none":  # a pod of no gang is not a gang placed anywhere
            domain, tier = lowest_common(index, held)
            out.placed.append(PlacedGang(g.key, domain, tier, len(g.bound), g.min_member))
            out.in_domain.setdefault(domain, []).append(g.key)
        if g.pending:
            reason = (
                g.error or _pod_message(g.pending) or conditions.get(g.name) or "waiting for the scheduler"
            )
            out.pending.append(PendingGang(g.key, len(g.pending), len(g.bound), g.min_member, reason))
    return out


def _figures(
    index: ClusterIndex, free: I64, rows: slice | int
) -> tuple[dict[str, str], dict[str, str], str, Figures]:
    """Allocatable and free of the main resources over `rows` (a node, or a domain's range), the
    text line of every resource, and the main figures as numbers (for pictures)."""
    import numpy as np

    from topobridge.treeview import MAIN_RESOURCES, amounts, quantity

    alloc = {r: int(np.sum(index.alloc[rows, p])) for r, p in index.res_pos.items()}
    left = {r: int(np.sum(free[rows, p])) for r, p in index.res_pos.items()}
    main = sorted(r for r, _ in MAIN_RESOURCES if alloc.get(r))
    return (
        {r: quantity(r, alloc[r]) for r in main},
        {r: quantity(r, left[r]) for r in main},
        "free " + amounts(index, left, alloc),
        Figures({r: alloc[r] for r in main}, {r: left[r] for r in main}),
    )


def _node_views(
    index: ClusterIndex, free: I64, pods_on: Mapping[str, list[tuple[str, str, str]]]
) -> dict[int, NodeView]:
    nodes: dict[int, NodeView] = {}
    for v, name in enumerate(index.node_names):
        a, f, text, units = _figures(index, free, v)
        listed = [PodOnNode(p, s) for _, p, s in pods_on.get(name, [])]
        nodes[v] = NodeView(name, a, f, text, listed, units)
    return nodes


def _domain_views(
    index: ClusterIndex, free: I64, in_domain: Mapping[str, list[str]]
) -> dict[int, DomainView]:
    domains: dict[int, DomainView] = {}
    for d in range(index.n_domains):
        a, f, text, units = _figures(index, free, slice(int(index.dom_start[d]), int(index.dom_end[d])))
        label = index.domain_label(d)
        source = index.tree.domains[index.dom_ids[d]].source
        domains[d] = DomainView(
            label, int(index.dom_tier[d]), a, f, text, source, in_domain.get(label, []), units=units
        )
    return domains


def _tree_lines(
    index: ClusterIndex,
    free: I64,
    views: tuple[dict[int, NodeView], dict[int, DomainView]],
    focus: _Focus,
    root_gangs: Sequence[str],
) -> list[str]:
    """The tree as text: each node with its figures and pods, each domain with its gangs."""
    from topobridge.treeview import draw

    nodes, domains = views
    width = max((len(n) for n in index.node_names), default=0)

    def node_text(v: int) -> str | None:
        if not focus.node(v):
            return None
        n = nodes[v]
        marks = "  ".join(f"{STATE_MARK[p.state]} {p.name}" for p in n.pods)
        return f"{n.name.ljust(width)}  {n.text}" + (f"   {marks}" if marks else "")

    def domain_text(d: int) -> str | None:
        if not focus.domain(index, d):
            return None
        dom = domains[d]
        placed = f"   gangs: {', '.join(dom.gangs)}" if dom.gangs else ""
        made = f" ({dom.source})" if dom.source else ""
        return f"{dom.name}{made}  {dom.text}{placed}"

    text = _figures(index, free, slice(0, index.n_nodes))[2]
    root = f"cluster  {text}" + (f"   gangs: {', '.join(root_gangs)}" if root_gangs else "")
    return draw(index, node_text=node_text, domain_text=domain_text, root_text=root)


def render(view: TreeView) -> str:
    lines = [view.topology, "", *view.lines, ""]
    lines.append(f"legend: {RUNNING} running or bound   {EVICTING} being evicted   {NOMINATED} nominated")
    if view.placed:
        lines += ["", "placed gangs:"]
        lines += [
            f"  {g.gang}  in {g.domain} (tier {g.tier}), {g.bound}/{g.min_member} bound" for g in view.placed
        ]
    if view.pending:
        lines += ["", "pending gangs:"]
        for g in view.pending:
            lines.append(f"  {g.gang}  {g.pending} pending, {g.bound}/{g.min_member} bound: {g.reason}")
    return "\n".join(lines) + "\n"


def _pods_by_node(
    objects: Iterable[Mapping[str, Any]], shown: Callable[[str, str], bool], *, short: bool
) -> dict[str, list[tuple[str, str, str]]]:
    """node -> [(node, pod, state)] of the pods shown, in natural order."""
    from translations.topology import natural_key

    out: dict[str, list[tuple[str, str, str]]] = {}
    for obj in objects:
        if obj.get("kind") != "Pod":
            continue
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        if status.get("phase") in ("Succeeded", "Failed") or not shown(ns, name):
            continue
        label = name if short else f"{ns}/{name}"
        if spec.get("nodeName"):
            state = "evicting" if meta.get("deletionTimestamp") else "running"
            out.setdefault(str(spec["nodeName"]), []).append((str(spec["nodeName"]), label, state))
        elif status.get("nominatedNodeName"):
            node = str(status["nominatedNodeName"])
            out.setdefault(node, []).append((node, label, "nominated"))
    for pods in out.values():
        pods.sort(key=lambda t: (t[2] != "running", natural_key(t[1])))
    return out


def _pod_message(pending: Iterable[Any]) -> str | None:
    """The PodScheduled=False message of the first pending pod that has one."""
    for gp in pending:
        for cond in (gp.pod.status.conditions if gp.pod.status is not None else None) or []:
            if cond.type == "PodScheduled" and cond.status == "False" and cond.message:
                return str(cond.message)
    return None


def _podgroup_messages(objects: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """ns/name -> the message of a PodGroup's Unschedulable (or last False) condition."""
    out: dict[str, str] = {}
    for obj in objects:
        if obj.get("kind") != "PodGroup":
            continue
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if not isinstance(cond, dict) or not cond.get("message"):
                continue
            if cond.get("type") == "Unschedulable" or cond.get("status") == "False":
                out[key] = str(cond["message"])
    return out
