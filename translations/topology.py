"""The topology tree: one model of the network hierarchy, whichever dialect described it.

Tiers count up from the nodes: tier 1 is the domain directly above nodes (a block, an NVLink
rack), higher tiers are wider (spine, datacenter). Tier 0 would be a single node; nodes are
not domains here, they hang off the domain that holds them directly.

Builders turn each dialect into a tree:
* `from_cluster_network_topology`: Koordinator's layers + node labels. A domain is named
  `<Layer>/<label value>`; one value under two different parents is two domains.
* `from_hypernodes`: Volcano's HyperNodes, members resolved against the nodes.
* `from_label_levels`: an ordered list of node label keys, highest first (NVIDIA topograph
  labels, Kueue Topology levels).

Builders never raise on a messy cluster: what they cannot place in the tree is reported as
warnings naming the node or HyperNode, and left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, NewType

from translations.core import Node
from translations.errors import go_quote
from translations.goregex import GoRegexError, compile_go_regex, regex_matches
from translations.koordinator import NODE_LAYER, ClusterNetworkTopology
from translations.volcano import HyperNode

DomainId = NewType("DomainId", str)

MAX_TREE_DEPTH = 16
"""Levels of domains a tree keeps (Kueue's Topology allows 16 levels; Volcano sets no limit).
A HyperNode deeper than this is left out of the tree, with a warning; a label-described tree
keeps its lowest 16 levels. Walks over the tree, and the placer's per-node ancestor arrays,
are then bounded by it."""


NaturalKey = tuple[tuple[int, int, str], ...]
_DIGIT_RUN = re.compile(r"([0-9]+)")


def natural_key(name: str) -> NaturalKey:
    """Sort key that puts node-2 before node-10: runs of ASCII digits compare as numbers.

    A run compares by its length without leading zeros, then digit by digit: the order of the
    numbers, with no `int()` of a run (names and annotations may carry thousands of digits,
    past the 4,300 Python converts). Other text, Unicode digits included, compares as text."""
    return tuple(
        (0, len(part.lstrip("0")), part.lstrip("0")) if i % 2 else (1, 0, part)
        for i, part in enumerate(_DIGIT_RUN.split(name))
        if part
    )


TopologySource = Literal["hypernode", "koordinator", "labels", "none"]


@dataclass(frozen=True, slots=True)
class TopologyDomain:
    """One network domain: a HyperNode, or one label value of one Koordinator layer."""

    id: DomainId
    tier: int
    tier_name: str | None
    parent: DomainId | None
    children: tuple[DomainId, ...]
    nodes: tuple[str, ...]
    """Nodes held directly (not through a child domain)."""
    label_key: str | None = None
    label_value: str | None = None
    """For label-built trees: the node label and the value that make this domain."""


@dataclass(frozen=True)
class TopologyTree:
    """An immutable forest of domains plus the node -> innermost domain map."""

    domains: Mapping[DomainId, TopologyDomain]
    node_domain: Mapping[str, DomainId]
    source: TopologySource = "none"
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def empty(cls) -> TopologyTree:
        return cls(domains={}, node_domain={}, source="none")

    @cached_property
    def roots(self) -> tuple[DomainId, ...]:
        return tuple(sorted((d.id for d in self.domains.values() if d.parent is None), key=natural_key))

    @cached_property
    def max_tier(self) -> int:
        return max((d.tier for d in self.domains.values()), default=0)

    @cached_property
    def tier_names(self) -> dict[int, str]:
        """tier -> tierName, where the domains of a tier agree on one."""
        names: dict[int, set[str]] = defaultdict(set)
        for d in self.domains.values():
            if d.tier_name:
                names[d.tier].add(d.tier_name)
        return {t: next(iter(n)) for t, n in names.items() if len(n) == 1}

    def tier_of_name(self, tier_name: str) -> int | None:
        for tier, name in self.tier_names.items():
            if name == tier_name:
                return tier
        return None

    def ancestors(self, node: str) -> tuple[DomainId, ...]:
        """Domains holding `node`, innermost first."""
        out: list[DomainId] = []
        cur = self.node_domain.get(node)
        while cur is not None:
            out.append(cur)
            cur = self.domains[cur].parent
        return tuple(out)

    def domain_at_tier(self, node: str, tier: int) -> DomainId | None:
        """The widest domain holding `node` whose tier is at most `tier`."""
        best: DomainId | None = None
        for d in self.ancestors(node):
            if self.domains[d].tier <= tier:
                best = d
            else:
                break
        return best

    @cached_property
    def _nodes_under(self) -> dict[DomainId, tuple[str, ...]]:
        out: dict[DomainId, tuple[str, ...]] = {}
        for _, d in reversed(self.depth_first()):  # children before their parents
            dom = self.domains[d]
            acc = list(dom.nodes)
            for c in dom.children:
                acc.extend(out[c])
            out[d] = tuple(sorted(acc, key=natural_key))
        return out

    def nodes_under(self, domain: DomainId) -> tuple[str, ...]:
        return self._nodes_under[domain]

    def domains_at_tier(self, tier: int) -> tuple[DomainId, ...]:
        return tuple(sorted((d.id for d in self.domains.values() if d.tier == tier), key=natural_key))

    def lowest_common_domain(self, nodes: Iterable[str]) -> DomainId | None:
        """The innermost domain holding every one of `nodes`, or None (only the cluster does)."""
        common: list[DomainId] | None = None
        for n in nodes:
            chain = list(self.ancestors(n))
            if common is None:
                common = chain
            else:
                keep = set(chain)
                common = [d for d in common if d in keep]
            if not common:
                return None
        return common[0] if common else None

    def depth_first(self) -> list[tuple[int, DomainId]]:
        """(depth, domain) in display order: roots sorted, children sorted (no recursion)."""
        out: list[tuple[int, DomainId]] = []
        stack = [(0, r) for r in reversed(self.roots)]
        while stack:
            depth, d = stack.pop()
            out.append((depth, d))
            stack.extend((depth + 1, c) for c in reversed(self.domains[d].children))
        return out


# --- builders -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelLevel:
    """One level of a label-described tree: its tier name and the node label keys naming it."""

    name: str
    label_keys: tuple[str, ...]


def from_label_levels(
    levels_bottom_up: Sequence[LabelLevel],
    nodes: Iterable[Node],
    *,
    source: TopologySource = "labels",
    stand_in_lowest: bool = True,
) -> TopologyTree:
    """Build a tree from node labels. `levels_bottom_up[0]` is tier 1.

    A node missing only the tier-1 label gets a stand-in tier-1 domain named after the node
    (Koordinator's rule) when `stand_in_lowest`; a node with any other gap is left out.
    Past `MAX_TREE_DEPTH` levels, the lowest ones are kept and the rest named in a warning.
    """
    warnings: list[str] = []
    if len(levels_bottom_up) > MAX_TREE_DEPTH:
        left_out = [level.name for level in levels_bottom_up[MAX_TREE_DEPTH:]]
        warnings.append(
            f"topology levels above the lowest {MAX_TREE_DEPTH} left out: {', '.join(left_out[:3])}"
            f"{', ...' if len(left_out) > 3 else ''} ({len(left_out)} in all)"
        )
        levels_bottom_up = levels_bottom_up[:MAX_TREE_DEPTH]
    # path (tuple of values top-down) -> domain id, per tier
    nodes_by_path: dict[tuple[str, ...], list[str]] = defaultdict(list)
    paths: set[tuple[str, ...]] = set()
    n_levels = len(levels_bottom_up)
    if n_levels == 0:
        return TopologyTree.empty()
    for node in sorted(nodes, key=lambda n: natural_key(n.name)):
        labels = node.metadata.labels or {}
        values: list[str | None] = []
        for level in levels_bottom_up:
            values.append(next((labels[k] for k in level.label_keys if k in labels), None))
        missing = [levels_bottom_up[i].name for i, v in enumerate(values) if v is None]
        if missing:
            if stand_in_lowest and missing == [levels_bottom_up[0].name]:
                values[0] = node.name
            else:
                warnings.append(
                    f"node {node.name} left out of the topology: no label for {', '.join(missing)}"
                    f" (keys {', '.join(k for lv in levels_bottom_up if lv.name in missing for k in lv.label_keys)})"
                )
                continue
        top_down = tuple(v for v in reversed(values) if v is not None)
        nodes_by_path[top_down].append(node.name)
        for i in range(1, n_levels + 1):
            paths.add(top_down[:i])

    # Name each domain `<Level>/<value>`; fall back to the full path where a value repeats.
    by_level_value: dict[tuple[int, str], int] = defaultdict(int)
    for p in paths:
        by_level_value[(len(p), p[-1])] += 1

    def level_of(depth: int) -> LabelLevel:
        return levels_bottom_up[n_levels - depth]

    def ident(p: tuple[str, ...]) -> DomainId:
        level = level_of(len(p))
        if by_level_value[(len(p), p[-1])] == 1:
            return DomainId(f"{level.name}/{p[-1]}")
        return DomainId(f"{level.name}/{'/'.join(p)}")

    children: dict[tuple[str, ...], list[tuple[str, ...]]] = defaultdict(list)
    for p in paths:
        if len(p) > 1:
            children[p[:-1]].append(p)
    domains: dict[DomainId, TopologyDomain] = {}
    node_domain: dict[str, DomainId] = {}
    for p in paths:
        depth = len(p)
        level = level_of(depth)
        did = ident(p)
        direct = tuple(sorted(nodes_by_path.get(p, []), key=natural_key)) if depth == n_levels else ()
        for n in direct:
            node_domain[n] = did
        domains[did] = TopologyDomain(
            id=did,
            tier=n_levels - depth + 1,
            tier_name=level.name,
            parent=ident(p[:-1]) if depth > 1 else None,
            children=tuple(sorted((ident(c) for c in children.get(p, [])), key=natural_key)),
            nodes=direct,
            label_key=level.label_keys[0] if level.label_keys else None,
            label_value=p[-1],
        )
    return TopologyTree(domains=domains, node_domain=node_domain, source=source, warnings=tuple(warnings))


def from_cluster_network_topology(cnt: ClusterNetworkTopology, nodes: Iterable[Node]) -> TopologyTree:
    """Koordinator's layers + node labels. Raises InvalidSpecError if the layers do not chain."""
    levels = [
        LabelLevel(layer.topology_layer, tuple(layer.label_key or ()))
        for layer in cnt.layers_bottom_up()
        if layer.topology_layer != NODE_LAYER
    ]
    return from_label_levels(levels, nodes, source="koordinator")


def from_hypernodes(hypernodes: Iterable[HyperNode], nodes: Iterable[Node]) -> TopologyTree:
    """Volcano's HyperNodes, with Node members resolved against `nodes`.

    A Node or HyperNode claimed by two parents keeps the lower-tier one (then the first
    name) and a warning; a cycle is cut with a warning. HyperNodes deeper than
    `MAX_TREE_DEPTH` levels are left out with a warning naming them, their nodes counted in
    the deepest HyperNode kept above them. Unknown exactMatch Node names are kept: the node
    may join later. Linear in HyperNodes and members (besides regex and label matching).
    """
    hns = sorted(hypernodes, key=lambda h: h.name)
    node_list = sorted(nodes, key=lambda n: n.name)
    node_names = [n.name for n in node_list]
    hn_names = [h.name for h in hns]
    warnings: list[str] = []
    node_parent: dict[str, HyperNode] = {}
    hn_parent: dict[str, HyperNode] = {}

    def claim(table: dict[str, HyperNode], what: str, member: str, owner: HyperNode) -> None:
        prev = table.get(member)
        if prev is None:
            table[member] = owner
            return
        if (owner.spec.tier, owner.name) < (prev.spec.tier, prev.name):
            keep, drop = owner, prev
        else:
            keep, drop = prev, owner
        table[member] = keep
        warnings.append(f"{what} {member} has two parents ({keep.name}, {drop.name}); kept {keep.name}")

    for hn in hns:
        for m in hn.spec.member_list:
            sel = m.selector
            if m.type == "Node":
                if sel.exact_match is not None:
                    matched = [sel.exact_match.name]
                elif sel.regex_match is not None:
                    matched = _regex_members(sel.regex_match.pattern, node_names, hn.name, warnings)
                elif sel.label_match is not None:
                    lm = sel.label_match
                    matched = [n.name for n in node_list if lm.matches(n.metadata.labels or {})]
                else:
                    matched = []
                for name in matched:
                    claim(node_parent, "node", name, hn)
            else:
                if sel.exact_match is not None:
                    matched = [sel.exact_match.name] if sel.exact_match.name in hn_names else []
                    if not matched:
                        warnings.append(
                            f"hypernode {hn.name} names unknown member hypernode {sel.exact_match.name}"
                        )
                elif sel.regex_match is not None:
                    matched = _regex_members(sel.regex_match.pattern, hn_names, hn.name, warnings)
                else:
                    matched = []
                for name in matched:
                    if name == hn.name:
                        warnings.append(f"hypernode {hn.name} lists itself as a member; ignored")
                        continue
                    claim(hn_parent, "hypernode", name, hn)

    _cut_cycles(hn_names, hn_parent, warnings)
    dropped = _cut_below_max_depth(hn_names, hn_parent, node_parent, warnings)
    by_name = {h.name: h for h in hns}
    kids: dict[str, list[str]] = defaultdict(list)
    for child, parent in hn_parent.items():
        kids[parent.name].append(child)
    direct_nodes: dict[str, list[str]] = defaultdict(list)
    for node, parent in node_parent.items():
        direct_nodes[parent.name].append(node)
    domains = {
        DomainId(h.name): TopologyDomain(
            id=DomainId(h.name),
            tier=h.spec.tier,
            tier_name=h.spec.tier_name,
            parent=DomainId(hn_parent[h.name].name) if h.name in hn_parent else None,
            children=tuple(DomainId(c) for c in sorted(kids.get(h.name, []), key=natural_key)),
            nodes=tuple(sorted(direct_nodes.get(h.name, []), key=natural_key)),
        )
        for h in by_name.values()
        if h.name not in dropped
    }
    node_domain = {n: DomainId(p.name) for n, p in node_parent.items()}
    return TopologyTree(
        domains=domains, node_domain=node_domain, source="hypernode", warnings=tuple(warnings)
    )


def _cut_cycles(names: Sequence[str], parent: dict[str, HyperNode], warnings: list[str]) -> None:
    """Cut every cycle of the parent links at the HyperNode that closes it, walking up from
    each HyperNode in name order; each HyperNode is walked once (linear)."""
    done: set[str] = set()
    for start in names:
        path: list[str] = []
        on_path: set[str] = set()
        cur: str | None = start
        while cur is not None and cur not in done:
            if cur in on_path:
                child = path[-1]
                warnings.append(
                    f"hypernodes form a cycle through {' -> '.join([*path, cur])}; cut at {child}"
                )
                del parent[child]
                break
            path.append(cur)
            on_path.add(cur)
            up = parent.get(cur)
            cur = up.name if up is not None else None
        done.update(path)


def _cut_below_max_depth(
    names: Sequence[str], parent: dict[str, HyperNode], node_parent: dict[str, HyperNode], warnings: list[str]
) -> set[str]:
    """Leave out the HyperNodes more than MAX_TREE_DEPTH levels below a root (the parent links
    form a forest by now); nodes they held move to the deepest HyperNode kept above them."""
    depth: dict[str, int] = {}
    for start in names:
        path: list[str] = []
        cur: str | None = start
        while cur is not None and cur not in depth:
            path.append(cur)
            up = parent.get(cur)
            cur = up.name if up is not None else None
        base = depth[cur] if cur is not None else 0
        for i, name in enumerate(reversed(path)):
            depth[name] = base + i + 1
    dropped = {n for n in names if depth[n] > MAX_TREE_DEPTH}
    if not dropped:
        return dropped
    keeper: dict[str, HyperNode] = {}
    for name in sorted(dropped, key=lambda n: depth[n]):  # parents first
        up = parent.pop(name)
        keeper[name] = keeper[up.name] if up.name in dropped else up
    for node, owner in list(node_parent.items()):
        if owner.name in dropped:
            node_parent[node] = keeper[owner.name]
    shown = sorted(dropped, key=natural_key)
    listing = ", ".join(shown) if len(shown) <= 6 else ", ".join([*shown[:3], "...", *shown[-3:]])
    warnings.append(
        f"hypernodes deeper than {MAX_TREE_DEPTH} levels left out of the topology: {listing} "
        f"({len(shown)} in all); their nodes count in the deepest HyperNode kept above them"
    )
    return dropped


def _regex_members(pattern: str, names: Sequence[str], owner: str, warnings: list[str]) -> list[str]:
    try:
        compile_go_regex(pattern)
    except GoRegexError as exc:
        warnings.append(f"hypernode {owner}: regexMatch.pattern {go_quote(pattern)} does not compile: {exc}")
        return []
    return regex_matches(pattern, names)
