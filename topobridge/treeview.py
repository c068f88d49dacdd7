"""Drawing the topology tree as text, for `simulate` and `tree`: one drawer over the placer's
`ClusterIndex` (the tree the scheduler itself uses), and one way to print quantities.

    cluster
    ├── SpineLayer/spine-0
    │   ├── BlockLayer/block-0
    │   │   ├── node-0  ...
    │   │   └── node-1  ...

Quantities print as Kubernetes prints them (`500m`, `8`, `512Mi`, `32Gi`): the same resource
always in the same units, so `mem 0/32Gi` and `mem 1536Mi/32Gi` read side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from controller.placer.snapshot import CLUSTER, ClusterIndex
from translations.quantity import from_scheduler_units

MAIN_RESOURCES = (("cpu", "cpu"), ("memory", "mem"), ("nvidia.com/gpu", "gpu"))
"""(resource, label) shown per node and domain; a GPU column only where there are GPUs."""


def quantity(resource: str, units: int) -> str:
    """Scheduler units (millicores for cpu) as Kubernetes' canonical quantity."""
    return from_scheduler_units(resource, units, binary=resource == "memory")


def amounts(index: ClusterIndex, shown: Mapping[str, int], total: Mapping[str, int]) -> str:
    """`cpu 3/8 mem 12Gi/32Gi` (shown/total) over the main resources the cluster has."""
    parts = []
    for resource, label in MAIN_RESOURCES:
        if resource not in index.res_pos or (
            resource != "cpu" and resource != "memory" and not total.get(resource)
        ):
            continue
        parts.append(
            f"{label} {quantity(resource, shown.get(resource, 0))}/{quantity(resource, total.get(resource, 0))}"
        )
    return " ".join(parts)


def topology_line(index: ClusterIndex) -> str:
    """Where the tree came from and its tiers, top first."""
    tree = index.tree
    if tree.source == "none" or not index.n_domains:
        return "no topology (every node on its own)"
    names = [tree.tier_names.get(t, f"tier {t}") for t in sorted(index.tiers, reverse=True)]
    source = {
        "hypernode": "HyperNodes",
        "koordinator": "ClusterNetworkTopology default",
        "kueue": "a Kueue Topology",
        "labels": "node labels",
    }
    return f"topology from {source.get(tree.source, tree.source)}: {' > '.join(names)}"


def draw(
    index: ClusterIndex,
    *,
    node_text: Callable[[int], str | None],
    domain_text: Callable[[int], str | None] | None = None,
    root_text: str = CLUSTER,
    hidden_note: str = "({n} more node(s) not shown)",
) -> list[str]:
    """The tree's lines: `node_text(v)` per node (None hides it, counted in one note per
    domain), `domain_text(d)` per domain (default: its name; None hides it and what it holds)."""
    lines = [root_text]

    def label(d: int) -> str | None:
        return domain_text(d) if domain_text is not None else index.domain_label(d)

    def children(d: int | None) -> list[tuple[str, int]]:
        if d is None:
            return [("domain", r) for r in index.roots] + [("node", v) for v in range(*index.loose)]
        kids = [("node", v) for v in range(int(index.dom_start[d]), int(index.dom_direct_end[d]))]
        return kids + [("domain", c) for c in index.dom_children[d]]

    def walk(d: int | None, prefix: str) -> None:
        shown: list[tuple[str, str, int]] = []
        hidden = 0
        for kind, i in children(d):
            text = node_text(i) if kind == "node" else label(i)
            if text is None:
                hidden += kind == "node"
                continue
            shown.append((kind, text, i))
        if hidden:
            shown.append(("note", hidden_note.format(n=hidden), -1))
        for j, (kind, text, i) in enumerate(shown):
            last = j == len(shown) - 1
            lines.append(f"{prefix}{'└── ' if last else '├── '}{text}")
            if kind == "domain":
                walk(i, prefix + ("    " if last else "│   "))

    walk(None, "")
    return lines
