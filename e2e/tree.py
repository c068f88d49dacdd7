"""The topology tree as text, with what runs, waits and leaves on each node.

    cluster
    ├── SpineLayer/spine-0
    │   ├── BlockLayer/block-0
    │   │   ├── node-0  ● low-priority-pod-0
    │   │   ├── node-1  ● low-priority-pod-1
    │   │   └── node-2  ·
    ...

● running or bound, ✗ evicted (terminating), → nominated (waiting for the node), · free.
The tree is topobridge's own model (`translations.topology`), built from the
ClusterNetworkTopology and the nodes' labels, or from HyperNodes when there are any.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from controller.kube import JsonDict
from translations.core import Node
from translations.koordinator import ClusterNetworkTopology
from translations.topology import TopologyTree, from_cluster_network_topology, from_hypernodes, natural_key
from translations.volcano import HyperNode

RUNNING, EVICTED, NOMINATED, FREE = "●", "✗", "→", "·"


def build_tree(
    nodes: Iterable[JsonDict], *, cnt: JsonDict | None = None, hypernodes: Iterable[JsonDict] = ()
) -> TopologyTree:
    parsed = [Node.parse(n) for n in nodes]
    hns = [HyperNode.parse(h) for h in hypernodes]
    if cnt is not None:
        return from_cluster_network_topology(ClusterNetworkTopology.parse(cnt), parsed)
    if hns:
        return from_hypernodes(hns, parsed)
    return TopologyTree.empty()


@dataclass
class NodeLoad:
    running: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    nominated: list[str] = field(default_factory=list)

    def text(self) -> str:
        parts = [f"{RUNNING} {p}" for p in self.running]
        parts += [f"{EVICTED} {p} (evicted)" for p in self.evicted]
        parts += [f"{NOMINATED} {p} (nominated)" for p in self.nominated]
        return "  ".join(parts) if parts else FREE


def node_loads(pods: Iterable[JsonDict]) -> dict[str, NodeLoad]:
    loads: dict[str, NodeLoad] = defaultdict(NodeLoad)
    for pod in pods:
        meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
        name = meta["name"]
        if spec.get("nodeName"):
            load = loads[spec["nodeName"]]
            (load.evicted if meta.get("deletionTimestamp") else load.running).append(name)
        elif status.get("nominatedNodeName"):
            loads[status["nominatedNodeName"]].nominated.append(name)
    for load in loads.values():
        for names in (load.running, load.evicted, load.nominated):
            names.sort(key=natural_key)
    return loads


def render(
    tree: TopologyTree, node_names: Iterable[str], pods: Iterable[JsonDict], *, root: str = "cluster"
) -> str:
    """The tree with every node and what is on it; nodes outside the tree are listed last."""
    loads: Mapping[str, NodeLoad] = node_loads(pods)
    width = max((len(n) for n in node_names), default=4)
    lines = [root]

    def node_line(prefix: str, last: bool, node: str) -> None:
        branch = "└── " if last else "├── "
        lines.append(f"{prefix}{branch}{node.ljust(width)}  {loads.get(node, NodeLoad()).text()}")

    def walk(domain: str, prefix: str, last: bool) -> None:
        dom = tree.domains[domain]  # type: ignore[index]
        lines.append(f"{prefix}{'└── ' if last else '├── '}{dom.id}")
        inner = prefix + ("    " if last else "│   ")
        children: list[tuple[str, str]] = [("domain", c) for c in dom.children]
        children += [("node", n) for n in sorted(dom.nodes, key=natural_key)]
        for i, (what, name) in enumerate(children):
            is_last = i == len(children) - 1
            if what == "domain":
                walk(name, inner, is_last)
            else:
                node_line(inner, is_last, name)

    outside = sorted((n for n in node_names if n not in tree.node_domain), key=natural_key)
    roots = list(tree.roots)
    for i, r in enumerate(roots):
        walk(r, "", i == len(roots) - 1 and not outside)
    for i, n in enumerate(outside):
        node_line("", i == len(outside) - 1, n)
    return "\n".join(lines)
