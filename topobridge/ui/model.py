"""The page's data, as plain functions: objects in, JSON-able data out (no I/O here).

`build(objects)` reads one snapshot as `topobridge tree` does (`load_scenario(lenient=True)`,
`prepare`, then `cmd_tree.cluster_view` on that same preparation) and keeps what the page asks
of it later: the tree indexed by domain id, and the scenario with its preparation for
`explain`. Nothing here decides anything a second time: free and allocatable figures, placed
gangs and pending gangs' reasons are `cluster_view`'s; explanations are the scheduling cycle's
(`cmd_explain.explain_prepared`).

What the page gets:
* `page(model)`: the summary (topology line, resources in colour order, tiers, counts, placed
  and pending gangs, the largest free room per tier, warnings) and the tree from the root down
  `DEPTH` levels;
* `subtree(model, id)`: one domain and `DEPTH` levels below it, what the page fetches when it
  zooms. Nodes come with it only when the domain holds at most `NODE_LIMIT` of them (then the
  whole subtree is sent): a 10,000-node cluster travels as aggregates, its nodes one zoomed-in
  domain at a time;
* `explanation(model, gang)`: `Explanation.to_dict()` and its text, cached per snapshot.

Invariants: a domain's id is its name as the tree prints it (`cluster` for the root; a repeated
name gets `#2`, `#3` in tree order), so a zoom survives a redraw after a change; figures come as
scheduler units (millicores, bytes, GPUs) beside the quantities as Kubernetes prints them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.placer.scenario import Prepared, Scenario, load_scenario, prepare
from controller.placer.snapshot import CLUSTER
from topobridge.cmd_tree import DomainView, Figures, NodeView, TreeView, cluster_view
from topobridge.treeview import amounts, quantity
from translations.topology import natural_key

DEPTH = 3
"""Levels of domains sent below the domain the page shows."""
NODE_LIMIT = 128
"""A domain's nodes are sent (and drawn) when it holds at most this many."""
PODS_SHOWN = 12
WARNINGS_SHOWN = 50
GANGS_SHOWN = 100
"""Placed and pending gangs listed (the counts say how many there are)."""
RESOURCE_ORDER = ("nvidia.com/gpu", "cpu", "memory")
"""The colour's resource: GPUs first when the cluster has any, then CPU, then memory."""


@dataclass
class Domain:
    """One domain of the tree (or the root, `cluster`), with its children by id."""

    id: str
    name: str
    tier: int
    parent: str | None
    alloc: dict[str, str]
    free: dict[str, str]
    text: str
    units: Figures
    source: str | None = None
    gangs: list[str] = field(default_factory=list)
    nodes: list[NodeView] = field(default_factory=list)
    """Nodes directly in this domain."""
    children: list[str] = field(default_factory=list)
    node_count: int = 0
    """Nodes in the whole subtree."""


@dataclass
class Model:
    """One snapshot, read once, asked many times."""

    view: TreeView
    scenario: Scenario
    prepared: Prepared
    source: str
    domains: dict[str, Domain]
    tiers: list[tuple[int, str]]
    """(tier, name) from single nodes (0) up to the whole cluster."""
    resources: list[str]
    explained: dict[str, dict[str, Any]] = field(default_factory=dict)


def build(objects: Sequence[Mapping[str, Any]], *, source: str = "") -> Model:
    """The model of one snapshot (`objects` as `kubectl get -o yaml` lists them)."""
    sc = load_scenario(objects, lenient=True)
    prep = prepare(sc)
    view = cluster_view(objects, prepared=prep)
    index = prep.index
    top = index.max_tier + 1
    units = view.units or Figures({}, {})
    root = Domain(
        CLUSTER,
        CLUSTER,
        top,
        None,
        {r: quantity(r, v) for r, v in units.allocatable.items()},
        {r: quantity(r, v) for r, v in units.free.items()},
        "free " + amounts(index, units.free, units.allocatable),
        units,
        gangs=[g.gang for g in view.placed if g.domain == CLUSTER],
        nodes=view.nodes,
    )
    domains = {CLUSTER: root}
    root.children = [_add(domains, d, CLUSTER) for d in view.domains]
    root.node_count = len(root.nodes) + sum(domains[c].node_count for c in root.children)
    tiers = [(0, "node")]
    tiers += [(t, index.tree.tier_names.get(t, f"tier {t}")) for t in index.tiers]
    tiers.append((top, CLUSTER))
    resources = [r for r in RESOURCE_ORDER if units.allocatable.get(r)]
    return Model(view, sc, prep, source, domains, tiers, resources)


def _add(domains: dict[str, Domain], d: DomainView, parent: str) -> str:
    ident, n = d.name, 1
    while ident in domains:
        n += 1
        ident = f"{d.name}#{n}"
    units = d.units or Figures({}, {})
    dom = Domain(
        ident, d.name, d.tier, parent, d.allocatable, d.free, d.text, units, d.source, d.gangs, d.nodes
    )
    domains[ident] = dom
    dom.children = [_add(domains, c, ident) for c in d.domains]
    dom.node_count = len(dom.nodes) + sum(domains[c].node_count for c in dom.children)
    return ident


# --- what the page fetches ------------------------------------------------------------------


def page(m: Model) -> dict[str, Any]:
    """Everything the page draws first: the summary and the tree's top `DEPTH` levels."""
    v = m.view
    return {
        "source": m.source,
        "topology": v.topology,
        "resources": m.resources,
        "tiers": [{"tier": t, "name": n} for t, n in m.tiers],
        "counts": {
            "nodes": m.domains[CLUSTER].node_count,
            "domains": len(m.domains) - 1,
            "placed": len(v.placed),
            "pending": len(v.pending),
        },
        "placed": [g.to_dict() for g in v.placed[:GANGS_SHOWN]],
        "pending": [g.to_dict() for g in v.pending[:GANGS_SHOWN]],
        "largest": largest(m),
        "warnings": v.warnings[:WARNINGS_SHOWN],
        "warningCount": len(v.warnings),
        "nodeLimit": NODE_LIMIT,
        "tree": subtree(m, CLUSTER),
    }


def subtree(m: Model, ident: str) -> dict[str, Any] | None:
    """Domain `ident` with `DEPTH` levels below it, and every node when it holds few enough;
    with the path of ids from the root down to it, for the breadcrumb. None: no such domain."""
    dom = m.domains.get(ident)
    if dom is None:
        return None
    detailed = dom.node_count <= NODE_LIMIT
    data = _domain_data(m, dom, depth=-1 if detailed else DEPTH, nodes=detailed)
    path: list[dict[str, str]] = []
    at: str | None = ident
    while at is not None:
        path.append({"id": at, "name": m.domains[at].name})
        at = m.domains[at].parent
    data["path"] = path[::-1]
    return data


def _domain_data(m: Model, dom: Domain, *, depth: int, nodes: bool) -> dict[str, Any]:
    """depth < 0: every level below."""
    out: dict[str, Any] = {
        "id": dom.id,
        "name": dom.name,
        "tier": dom.tier,
        "source": dom.source,
        "nodeCount": dom.node_count,
        "directNodes": len(dom.nodes),
        "alloc": dom.alloc,
        "free": dom.free,
        "units": {"alloc": dom.units.allocatable, "free": dom.units.free},
        "text": dom.text,
        "gangs": dom.gangs,
    }
    if depth == 0:
        out["domains"] = None  # more below: fetched when the page zooms in
    else:
        kids = [m.domains[c] for c in dom.children]
        out["domains"] = [_domain_data(m, k, depth=depth - 1, nodes=nodes) for k in kids]
    if nodes:
        out["nodes"] = [_node_data(n) for n in dom.nodes]
    return out


def _node_data(n: NodeView) -> dict[str, Any]:
    units = n.units or Figures({}, {})
    return {
        "name": n.name,
        "alloc": n.allocatable,
        "free": n.free,
        "units": {"alloc": units.allocatable, "free": units.free},
        "text": n.text,
        "pods": [{"name": p.name, "state": p.state} for p in n.pods[:PODS_SHOWN]],
        "podCount": len(n.pods),
    }


def largest(m: Model) -> list[dict[str, Any]]:
    """Per tier, per resource: the domain (a node at tier 0) with the most free now, and how
    much; the room the largest gang of that tier could take (ties: the first by name)."""
    nodes = [n for d in m.domains.values() for n in d.nodes]
    out: list[dict[str, Any]] = []
    for tier, name in m.tiers:
        if tier == 0:
            members = [(n.name, n.units or Figures({}, {})) for n in nodes]
        else:
            members = [(d.name, d.units) for d in m.domains.values() if d.tier == tier]
        best: dict[str, Any] = {}
        for r in m.resources:
            if not members:
                continue
            where, units = min(members, key=lambda nu: (-nu[1].free.get(r, 0), natural_key(nu[0])))
            free = units.free.get(r, 0)
            best[r] = {"domain": where, "free": free, "freeText": quantity(r, free)}
        out.append({"tier": tier, "name": name, "best": best})
    return out


def explanation(m: Model, gang: str) -> dict[str, Any] | None:
    """Why `gang` waits, from the cycle (`topobridge explain`'s answer); None: no such gang."""
    if gang not in m.explained:
        from controller.placer.explain import render
        from topobridge.cmd_explain import explain_prepared

        found = explain_prepared(m.scenario, m.prepared, gang)
        if found is None:
            return None
        m.explained[gang] = {"gang": gang, "explanation": found.to_dict(), "text": render(found)}
    return m.explained[gang]
