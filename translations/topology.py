"""The topology tree: one model of the network hierarchy, whichever dialect described it.

Tiers count up from the nodes: tier 1 is the domain directly above nodes (a block, an NVLink
rack), higher tiers are wider (spine, datacenter). Tier 0 would be a single node; nodes are
not domains here, they hang off the domain that holds them directly. A node may hang off a
domain above tier 1 (its branch has no domain of the lower tiers); a parent's tier is always
above its children's.

Builders turn each dialect into a tree:
* `from_cluster_network_topology`: Koordinator's layers + node labels. A domain is named
  `<Layer>/<label value>`; one value under two different parents is two domains.
* `from_hypernodes`: Volcano's HyperNodes, members resolved against the nodes.
* `from_label_levels`: an ordered list of node label keys, highest first (a Kueue Topology's
  levels, `from_kueue_topology`). Koordinator's gap rule: a node missing only the lowest label
  gets a stand-in domain named after it; any other gap leaves it out.
* `from_node_labels`: what labelling tools write on nodes, with no description object:
  topograph v1.0 `fabric.topograph.run/tier-N` and `accelerator.topograph.run/{domain,
  sub-domain}`, topograph v0.x `network.topology.nvidia.com/*`, and GPU Feature Discovery's
  `nvidia.com/gpu.clique`. Its rules:
  - Two families of levels. Fabric levels (switches) come from topograph: v1.0's tiers when
    any node carries one (a node with only v0.x fabric labels is then left out of the fabric,
    with a warning), else v0.x's `block`/`leaf`, `spine`, `datacenter`/`core`. NVLink levels,
    top-down: `nvlink-domain` (v1.0 `accelerator.topograph.run/domain`, or v0.x
    `accelerator`), `nvlink-sub-domain` (v1.0 `sub-domain`), `nvlink-rack` (the ClusterUUID
    before the last dot of `nvidia.com/gpu.clique`) and `nvlink-clique` (its whole value).
    A clique value without a dot (or with an empty part) names a clique with no rack.
  - Fabric values are unique only within their parent (Kueue's rule): a node's fabric path is
    its tiers top-down, skipping tiers it lacks (a gap between two of its tiers is warned of).
    NVLink values name one domain cluster-wide, wherever its nodes sit in the fabric; a
    sub-domain is one within its domain.
  - A topograph accelerator domain or sub-domain whose value equals the node's clique or rack
    value is that clique or rack (topograph copies the ID on InfiniBand providers): not a level
    of its own. The nodes of one rack must agree on their accelerator domain and sub-domain;
    where they do not, the rack's nodes keep only their GFD levels, with a warning.
  - NVLink domains sit below the fabric: the top NVLink domain of a branch (the accelerator
    domain, else the sub-domain, else the rack, else the clique) nests inside the lowest fabric
    domain holding all of its nodes that carry fabric labels, so a rack cabled to two leaf
    switches nests in their spine, and those nodes leave the leaves. When no fabric domain
    holds them all it becomes a root, with a warning naming a node under each fabric root.
  - Tiers: every level some domain has, in the order clique, rack, sub-domain, domain, then
    fabric tiers closest-first, numbered from 1. Without NVLink labels topograph's
    `tier-(T-1)` is tier T, as Volcano's label discovery counts; levels no node carries are
    skipped. NVLink tiers are named `nvlink-*` (`clique_tier` finds the clique tier).

Domain ids are `<level>/<value>`, or `<level>/<the path's values joined by />` where one value
of a level appears under two parents. Builders never raise on a messy cluster: what they cannot
place in the tree is reported as warnings naming the node or HyperNode, and left out.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Literal, NewType

from translations.core import Node
from translations.errors import go_quote
from translations.goregex import GoRegexError, compile_go_regex, regex_matches
from translations.koordinator import NODE_LAYER, ClusterNetworkTopology
from translations.volcano import HyperNode, MemberSelector

if TYPE_CHECKING:
    from translations import kueue

DomainId = NewType("DomainId", str)

MAX_TREE_DEPTH = 16
"""Levels of domains a tree keeps (Kueue's Topology allows 16 levels; Volcano sets no limit).
A HyperNode deeper than this is left out of the tree, with a warning; a label-described tree
keeps its lowest 16 levels. Walks over the tree, and the placer's per-node ancestor arrays,
are then bounded by it."""


NaturalKey = tuple[tuple[int, int, str], ...]
NATURAL_KEYS = 1 << 17
"""Names whose sort keys are kept (a cluster's nodes, up to 131,072)."""
_DIGIT_RUN = re.compile(r"([0-9]+)")


@functools.lru_cache(maxsize=NATURAL_KEYS)
def natural_key(name: str) -> NaturalKey:
    """Sort key that puts node-2 before node-10: runs of ASCII digits compare as numbers.

    A run compares by its length without leading zeros, then digit by digit: the order of the
    numbers, with no `int()` of a run (names and annotations may carry thousands of digits,
    past the 4,300 Python converts). Other text, Unicode digits included, compares as text.

    Kept for the last `NATURAL_KEYS` names: building a tree and its index sorts the same node
    names four times."""
    return tuple(
        (0, len(part.lstrip("0")), part.lstrip("0")) if i % 2 else (1, 0, part)
        for i, part in enumerate(_DIGIT_RUN.split(name))
        if part
    )


HOSTNAME_LABEL = "kubernetes.io/hostname"
"""Every node's own value: the level of single nodes (tier 0)."""

TopologySource = Literal["hypernode", "koordinator", "kueue", "labels", "none"]


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
    """For label-built trees: the node label and the value that make this domain (no key when
    the value is part of a label's value, as a rack's ClusterUUID)."""
    source: str | None = None
    """For label-built trees, what made the domain, for people: the label key, or e.g.
    `nvidia.com/gpu.clique ClusterUUID`."""


def tier_named(carrier_tiers: Collection[int]) -> int | None:
    """The tier a `highestTierName` stands for, given the tiers of the HyperNodes carrying that
    tierName: Volcano maps each tierName to its HyperNodes' tier, so other names at that tier
    do not matter. Carried at several tiers, Volcano keeps whichever HyperNode it read last; the
    lowest such tier is taken here, the one every reading's limit holds under. None: no
    HyperNode carries it (Volcano then applies no limit). The one reading of a tier name: the
    webhook, `translate` and the scheduler call it."""
    return min(carrier_tiers) if carrier_tiers else None


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
        """The tier a HyperNode tierName stands for (`tier_named` over the tiers of the
        domains carrying it, whatever the other domains of those tiers are named)."""
        return tier_named({d.tier for d in self.domains.values() if d.tier_name == tier_name})

    @cached_property
    def tier_labels(self) -> dict[int, str]:
        """tier -> the node label key whose values make its domains, where they agree on one
        (label-built trees: a ClusterNetworkTopology's layers, a Kueue Topology's levels, node
        labels; HyperNode trees name none), lowest tier first (messages list them so)."""
        keys: dict[int, set[str | None]] = defaultdict(set)
        for d in self.domains.values():
            keys[d.tier].add(d.label_key)
        return {t: next(iter(k)) for t, k in sorted(keys.items()) if len(k) == 1 and None not in k}  # type: ignore[misc]

    def tier_of_label(self, key: str) -> int | None:
        """The tier whose domains are the values of node label `key` (0 for the hostname)."""
        if key == HOSTNAME_LABEL:
            return 0
        return next((t for t, k in self.tier_labels.items() if k == key), None)

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
    part: str | None = None
    """Which part of the label's value names the domain (e.g. `ClusterUUID`); None: all of it."""


Step = tuple[int, str]
"""(level, value): one domain of a node's branch; `level` indexes the levels bottom-up."""
Path = tuple[Step, ...]
"""A branch top-down; the node hangs off the domain its last step names."""


def from_label_levels(
    levels_bottom_up: Sequence[LabelLevel],
    nodes: Iterable[Node],
    *,
    source: TopologySource = "labels",
    stand_in_lowest: bool = True,
) -> TopologyTree:
    """Build a tree from node labels. `levels_bottom_up[0]` is tier 1.

    A node missing only the tier-1 label gets a stand-in tier-1 domain named after the node
    (Koordinator's rule) when `stand_in_lowest`; a node with any other gap is left out
    (`level_path`). Past `MAX_TREE_DEPTH` levels, the lowest ones are kept and the rest named in
    a warning.
    """
    warnings: list[str] = []
    if len(levels_bottom_up) > MAX_TREE_DEPTH:
        left_out = [level.name for level in levels_bottom_up[MAX_TREE_DEPTH:]]
        warnings.append(
            f"topology levels above the lowest {MAX_TREE_DEPTH} left out: {', '.join(left_out[:3])}"
            f"{', ...' if len(left_out) > 3 else ''} ({len(left_out)} in all)"
        )
        levels_bottom_up = levels_bottom_up[:MAX_TREE_DEPTH]
    if not levels_bottom_up:
        return TopologyTree.empty()
    paths: dict[str, Path] = {}
    for node in sorted(nodes, key=lambda n: natural_key(n.name)):
        path = level_path(levels_bottom_up, node, stand_in_lowest=stand_in_lowest)
        if isinstance(path, str):
            warnings.append(path)
        else:
            paths[node.name] = path
    return tree_from_paths(levels_bottom_up, paths, source=source, warnings=warnings)


def level_path(levels_bottom_up: Sequence[LabelLevel], node: Node, *, stand_in_lowest: bool) -> Path | str:
    """A node's branch over label levels, top-down (`from_label_levels`' rules), or the warning
    that leaves it out of the tree."""
    labels = node.metadata.labels or {}
    values: list[str | None] = []
    for level in levels_bottom_up:  # the first of a level's keys the node has (asked of every node)
        value = None
        for k in level.label_keys:
            if k in labels:
                value = labels[k]
                break
        values.append(value)
    found = [v for v in values if v is not None]
    if len(found) == len(values):  # every level's label: the branch as read, top-down
        return tuple(zip(range(len(found) - 1, -1, -1), reversed(found), strict=True))
    missing = [levels_bottom_up[i].name for i, v in enumerate(values) if v is None]
    if missing:
        if stand_in_lowest and missing == [levels_bottom_up[0].name]:
            values[0] = node.name
        else:
            return (
                f"node {node.name} left out of the topology: no label for {', '.join(missing)}"
                f" (keys {', '.join(k for lv in levels_bottom_up if lv.name in missing for k in lv.label_keys)})"
            )
    return tuple((i, v) for i, v in reversed(list(enumerate(values))) if v is not None)


def tree_from_paths(
    levels_bottom_up: Sequence[LabelLevel],
    paths: Mapping[str, Path],
    *,
    source: TopologySource,
    warnings: Sequence[str] = (),
    keys: Mapping[Path, str] | None = None,
) -> TopologyTree:
    """The tree of the nodes' branches: one domain per distinct path prefix, tiers numbered by
    the levels some domain has. `keys`: the label key that made a domain, where it is not the
    level's first (a level read from one of several keys)."""
    nodes_by_path: dict[Path, list[str]] = defaultdict(list)
    prefixes: set[Path] = set()
    for node, path in paths.items():
        nodes_by_path[path].append(node)
    for path in nodes_by_path:  # nodes share branches: each distinct one is cut once
        prefixes.update(path[:i] for i in range(1, len(path) + 1))
    tier_of = {lv: t for t, lv in enumerate(sorted({p[-1][0] for p in prefixes}), start=1)}
    ident = _domain_ids(levels_bottom_up, prefixes)
    children: dict[Path, list[Path]] = defaultdict(list)
    for p in prefixes:
        if len(p) > 1:
            children[p[:-1]].append(p)
    domains: dict[DomainId, TopologyDomain] = {}
    node_domain: dict[str, DomainId] = {}
    for p in prefixes:
        did = ident[p]
        direct = tuple(sorted(nodes_by_path.get(p, ()), key=natural_key))
        for n in direct:
            node_domain[n] = did
        domains[did] = _path_domain(
            levels_bottom_up,
            p,
            did,
            tier=tier_of[p[-1][0]],
            parent=ident[p[:-1]] if len(p) > 1 else None,
            children=tuple(sorted((ident[c] for c in children.get(p, [])), key=natural_key)),
            nodes=direct,
            key=(keys or {}).get(p),
        )
    return TopologyTree(domains=domains, node_domain=node_domain, source=source, warnings=tuple(warnings))


def _path_domain(
    levels: Sequence[LabelLevel],
    p: Path,
    did: DomainId,
    *,
    tier: int,
    parent: DomainId | None,
    children: tuple[DomainId, ...],
    nodes: tuple[str, ...],
    key: str | None = None,
) -> TopologyDomain:
    """The domain of branch prefix `p` (its last step's level and value); `key`: the label key
    that made it, where it is not the level's first."""
    lv, value = p[-1]
    level = levels[lv]
    key = key or (level.label_keys[0] if level.label_keys else None)
    return TopologyDomain(
        id=did,
        tier=tier,
        tier_name=level.name,
        parent=parent,
        children=children,
        nodes=nodes,
        label_key=key if level.part is None else None,
        label_value=value,
        source=key if level.part is None or key is None else f"{level.part} of {key}",
    )


def _domain_ids(levels: Sequence[LabelLevel], prefixes: Iterable[Path]) -> dict[Path, DomainId]:
    """`<level>/<value>`; `<level>/<path values>` where the value repeats at its level; and,
    should two such paths still read alike (they skip different levels), the levels too."""
    by_level_value: dict[Step, int] = defaultdict(int)
    for p in prefixes:
        by_level_value[p[-1]] += 1
    out: dict[Path, DomainId] = {}
    taken: dict[DomainId, Path] = {}
    for p in sorted(prefixes, key=lambda p: (len(p), p)):
        name = levels[p[-1][0]].name
        if by_level_value[p[-1]] == 1:
            did = DomainId(f"{name}/{p[-1][1]}")
        else:
            did = DomainId(f"{name}/{'/'.join(v for _, v in p)}")
            if did in taken and taken[did] != p:
                did = DomainId(f"{name}/{'/'.join(f'{levels[lv].name}={v}' for lv, v in p)}")
        taken[did] = p
        out[p] = did
    return out


@dataclass(frozen=True)
class Branches:
    """A tree built from label levels (`from_label_levels`) with each domain's branch: what
    moving one relabelled node between domains reads (`move`), so that the tree is not built
    again from every node. Only trees whose domains are named by their value alone where a
    move touches them, over levels that stay, are moved this way; else `move` says no."""

    tree: TopologyTree
    levels: tuple[LabelLevel, ...]
    """Bottom-up, as the tree was built over (at most `MAX_TREE_DEPTH`)."""
    stand_in_lowest: bool
    required: str | None
    """A label a node must carry to be in the tree at all (a Kueue Topology's hostname level)."""
    ident: Mapping[Path, DomainId]
    steps: Mapping[Step, int]
    """(level, value) -> domains with that last step (a value repeated at its level names its
    domains by their whole branch: `_domain_ids`)."""
    level_tier: Mapping[int, int]
    """Level -> the tier of its domains (levels no domain has are not tiers)."""
    level_domains: Mapping[int, int]

    @classmethod
    def of(
        cls,
        tree: TopologyTree,
        levels_bottom_up: Sequence[LabelLevel],
        *,
        stand_in_lowest: bool = True,
        required: str | None = None,
    ) -> Branches | None:
        """The branches of `tree`'s domains; None when the levels' names do not tell a domain's
        level (two levels of one name)."""
        levels = tuple(levels_bottom_up[:MAX_TREE_DEPTH])
        level_of = {lv.name: i for i, lv in enumerate(levels)}
        if len(level_of) != len(levels):
            return None
        paths: dict[DomainId, Path] = {}
        for did in tree.domains:
            chain: list[TopologyDomain] = []
            cur: DomainId | None = did
            while cur is not None and cur not in paths:
                chain.append(tree.domains[cur])
                cur = tree.domains[cur].parent
            base = paths[cur] if cur is not None else ()
            for dom in reversed(chain):
                lv = level_of.get(dom.tier_name or "")
                if lv is None or dom.label_value is None:
                    return None
                base = paths[dom.id] = (*base, (lv, dom.label_value))
        steps: dict[Step, int] = defaultdict(int)
        level_domains: dict[int, int] = defaultdict(int)
        level_tier: dict[int, int] = {}
        for did, p in paths.items():
            steps[p[-1]] += 1
            level_domains[p[-1][0]] += 1
            level_tier[p[-1][0]] = tree.domains[did].tier
        ident = {p: did for did, p in paths.items()}
        return cls(
            tree, levels, stand_in_lowest, required, ident, dict(steps), level_tier, dict(level_domains)
        )

    def path(self, node: Node) -> Path | None:
        """`node`'s branch as the builder reads it; None: it is left out (with a warning)."""
        if self.required is not None and self.required not in (node.metadata.labels or {}):
            return None
        got = level_path(self.levels, node, stand_in_lowest=self.stand_in_lowest)
        return None if isinstance(got, str) else got

    def move(self, node: str, old: Path, new: Path) -> Branches | None:
        """The tree with `node` moved from branch `old` to `new`: domains left empty go, domains
        of the new branch are made. None (build the tree again): the tree does not hold the
        node on `old`, a level would appear or go (tiers are numbered over the levels there
        are), or a domain taken or made has a value repeated at its level (names would change)."""
        if self.tree.node_domain.get(node) != self.ident.get(old):
            return None
        if old == new:
            return self
        move = _Move(self, dict(self.tree.domains), dict(self.ident))
        move.leave(node, old)
        if not move.join(node, new) or not move.same_names_and_tiers():
            return None
        node_domain = dict(self.tree.node_domain)
        node_domain[node] = move.ident[new]
        tree = TopologyTree(move.domains, node_domain, source=self.tree.source, warnings=self.tree.warnings)
        return replace(
            self,
            tree=tree,
            ident=move.ident,
            steps=move.steps,
            level_domains=move.level_domains,
        )


@dataclass
class _Move:
    """One node's move between branches, on copies of a `Branches`' tables."""

    was: Branches
    domains: dict[DomainId, TopologyDomain]
    ident: dict[Path, DomainId]
    touched: set[Step] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.steps = dict(self.was.steps)
        self.level_domains = dict(self.was.level_domains)

    def leave(self, node: str, old: Path) -> None:
        """`node` out of its domain; domains left with nothing go, up the branch."""
        did = self.ident[old]
        dom = self.domains[did]
        self.domains[did] = replace(dom, nodes=tuple(n for n in dom.nodes if n != node))
        p = old
        while p:
            did = self.ident[p]
            dom = self.domains[did]
            if dom.nodes or dom.children:
                return
            del self.domains[did], self.ident[p]
            self._count(p[-1], -1)
            p = p[:-1]
            if p:
                up = self.domains[self.ident[p]]
                self.domains[up.id] = replace(up, children=tuple(c for c in up.children if c != did))

    def join(self, node: str, new: Path) -> bool:
        """`node` into the domain of branch `new`, made (with the domains above it) where there
        is none. False: a domain's name is taken by another branch."""
        for k in range(1, len(new) + 1):
            p = new[:k]
            if p in self.ident:
                continue
            lv, value = p[-1]
            did = DomainId(f"{self.was.levels[lv].name}/{value}")
            tier = self.was.level_tier.get(lv)
            if did in self.domains or tier is None:
                return False
            parent = self.ident[p[:-1]] if k > 1 else None
            self.domains[did] = _path_domain(
                self.was.levels, p, did, tier=tier, parent=parent, children=(), nodes=()
            )
            self.ident[p] = did
            self._count(p[-1], +1)
            if parent is not None:
                up = self.domains[parent]
                kids = tuple(sorted((*up.children, did), key=natural_key))
                self.domains[parent] = replace(up, children=kids)
        did = self.ident[new]
        dom = self.domains[did]
        self.domains[did] = replace(dom, nodes=tuple(sorted((*dom.nodes, node), key=natural_key)))
        return True

    def _count(self, step: Step, sign: int) -> None:
        self.touched.add(step)
        self.steps[step] = self.steps.get(step, 0) + sign
        self.level_domains[step[0]] = self.level_domains.get(step[0], 0) + sign

    def same_names_and_tiers(self) -> bool:
        """Every step taken or made names one domain at most, before and after (no other
        domain's name changes), and every level has domains after iff it had before."""
        before, after = self.was.steps, self.steps
        if any(before.get(s, 0) > 1 or after.get(s, 0) > 1 for s in self.touched):
            return False
        levels = {s[0] for s in self.touched}
        return all((self.was.level_domains.get(lv, 0) > 0) == (self.level_domains[lv] > 0) for lv in levels)


def from_kueue_topology(topology: kueue.Topology, nodes: Iterable[Node]) -> TopologyTree:
    """A Kueue Topology's levels over node labels (`kueue.label_levels`: the hostname level is
    the nodes themselves). Raises InvalidSpecError for levels Kueue's CRD would refuse.

    A node lacking any level's label, the hostname level's included, is in no domain: Kueue's
    TAS reads only the nodes that carry every level (`NodeMatchesFlavor`), so it has no
    stand-in domain and a Kueue TAS gang does not go there (NetworkTopology's Filter)."""
    from translations import kueue as kueue_module

    levels = kueue_module.label_levels(topology)
    kept = list(nodes)
    warnings: list[str] = []
    if any(level.node_label == kueue_module.HOSTNAME_LABEL for level in topology.spec.levels):
        lacking = {n.name for n in kept if kueue_module.HOSTNAME_LABEL not in (n.metadata.labels or {})}
        warnings = [
            f"node {name} left out of the topology: no label for {kueue_module.HOSTNAME_LABEL}"
            for name in sorted(lacking, key=natural_key)
        ]
        kept = [n for n in kept if n.name not in lacking]
    tree = from_label_levels(levels, kept, source="kueue", stand_in_lowest=False)
    return replace(tree, warnings=(*warnings, *tree.warnings)) if warnings else tree


# --- node labels: topograph v1.0 and v0.x, GPU Feature Discovery cliques ---------------------

FABRIC_TIER_PREFIX = "fabric.topograph.run/tier-"
"""topograph v1.0: `fabric.topograph.run/tier-N`, tier 0 the switch closest to the node."""
ACCELERATOR_DOMAIN_LABEL = "accelerator.topograph.run/domain"
ACCELERATOR_SUB_DOMAIN_LABEL = "accelerator.topograph.run/sub-domain"
GPU_CLIQUE_LABEL = "nvidia.com/gpu.clique"
"""GPU Feature Discovery: `<ClusterUUID>.<CliqueID>`, an NVLink partition inside a rack."""
OLD_TOPOGRAPH_PREFIXES = ("network.topology.nvidia.com/", "network.topology.kubernetes.io/")
"""topograph v0.x label prefixes."""

NVLINK_CLIQUE, NVLINK_RACK = "nvlink-clique", "nvlink-rack"
NVLINK_SUB_DOMAIN, NVLINK_DOMAIN = "nvlink-sub-domain", "nvlink-domain"
NVLINK_TIER_NAMES = (NVLINK_CLIQUE, NVLINK_RACK, NVLINK_SUB_DOMAIN, NVLINK_DOMAIN)
"""The NVLink levels' tier names, bottom-up."""


def _old_keys(*names: str) -> tuple[str, ...]:
    return tuple(prefix + name for name in names for prefix in OLD_TOPOGRAPH_PREFIXES)


_CLIQUE, _RACK, _SUB_DOMAIN, _DOMAIN = range(4)
NVLINK_LEVELS = (
    LabelLevel(NVLINK_CLIQUE, (GPU_CLIQUE_LABEL,)),
    LabelLevel(NVLINK_RACK, (GPU_CLIQUE_LABEL,), part="ClusterUUID"),
    LabelLevel(NVLINK_SUB_DOMAIN, (ACCELERATOR_SUB_DOMAIN_LABEL,)),
    LabelLevel(NVLINK_DOMAIN, (ACCELERATOR_DOMAIN_LABEL, *_old_keys("accelerator"))),
)
"""Bottom-up; v0.x's `accelerator` label is the NVLink domain too."""
OLD_FABRIC_LEVELS = (
    LabelLevel("block", _old_keys("block", "leaf")),
    LabelLevel("spine", _old_keys("spine")),
    LabelLevel("datacenter", _old_keys("datacenter", "core")),
)
"""topograph v0.x's switch levels, closest first (v0.x wrote `block`, later `leaf`; `datacenter`,
later `core`)."""


def carries_topology_labels(node: Node) -> bool:
    """Whether `node` carries a label `from_node_labels` reads."""
    return any(_is_topology_key(k) for k in node.metadata.labels or {})


def _is_topology_key(key: str) -> bool:
    return key.startswith((FABRIC_TIER_PREFIX, *OLD_TOPOGRAPH_PREFIXES)) or key in (
        ACCELERATOR_DOMAIN_LABEL,
        ACCELERATOR_SUB_DOMAIN_LABEL,
        GPU_CLIQUE_LABEL,
    )


def clique_tier(tree: TopologyTree) -> int | None:
    """The tier of NVLink cliques, or None: the tier named `nvlink-clique`, else one whose
    domains all come from `nvidia.com/gpu.clique` values (a Kueue level or Koordinator layer
    on that label)."""
    named = tree.tier_of_name(NVLINK_CLIQUE)
    if named is not None:
        return named
    keys: dict[int, set[str | None]] = defaultdict(set)
    for d in tree.domains.values():
        keys[d.tier].add(d.label_key)
    return min((t for t, k in keys.items() if k == {GPU_CLIQUE_LABEL}), default=None)


@dataclass(frozen=True, slots=True)
class _Labelled:
    """One node's reading of the labels: its fabric branch and its NVLink branch, top-down."""

    name: str
    fabric: Path
    nvlink: Path


def from_node_labels(nodes: Iterable[Node]) -> TopologyTree:
    """The tree topograph's and GPU Feature Discovery's node labels describe (the rules are in
    the module docstring). Nodes with none of these labels are in no domain."""
    node_list = sorted(nodes, key=lambda n: natural_key(n.name))
    warnings: list[str] = []
    keys: dict[Step, str] = {}
    fabric_levels, fabric_of = _fabric_reader(node_list, warnings)
    levels = [*NVLINK_LEVELS, *fabric_levels]
    odd: dict[str, list[str]] = {}
    read = [_Labelled(n.name, fabric_of(n, keys), _nvlink_path(n, keys, odd, warnings)) for n in node_list]
    warnings.extend(_odd_cliques(odd))
    read = _agreeing_racks(read, warnings)
    attach = _attach_points(read, levels, warnings)
    paths: dict[str, Path] = {}
    for r in read:
        path = (*attach[r.nvlink[:1]], *r.nvlink) if r.nvlink else r.fabric
        if path:
            paths[r.name] = path
    prefixes = {p[:i] for p in paths.values() for i in range(1, len(p) + 1)}
    return tree_from_paths(
        levels, paths, source="labels", warnings=warnings, keys={p: keys[p[-1]] for p in prefixes}
    )


FabricOf = Callable[[Node, dict[Step, str]], Path]


def _fabric_reader(nodes: Sequence[Node], warnings: list[str]) -> tuple[list[LabelLevel], FabricOf]:
    """The fabric levels (bottom-up, after the NVLink ones) and how to read a node's branch:
    topograph v1.0's tiers when any node has one, else v0.x's levels."""
    tiers: set[int] = set()
    for node in nodes:
        for key in node.metadata.labels or {}:
            tier = _fabric_tier(node.name, key, warnings)
            if tier is not None:
                tiers.add(tier)
    base = len(NVLINK_LEVELS)
    if tiers:
        ordered = sorted(tiers)
        levels = [LabelLevel(f"fabric-tier-{t}", (f"{FABRIC_TIER_PREFIX}{t}",)) for t in ordered]
        old_only = [
            n.name
            for n in nodes
            if not any(k.startswith(FABRIC_TIER_PREFIX) for k in n.metadata.labels or {})
            and any(k in (n.metadata.labels or {}) for lv in OLD_FABRIC_LEVELS for k in lv.label_keys)
        ]
        if old_only:
            more = f" and {len(old_only) - 1} more" if len(old_only) > 1 else ""
            warnings.append(
                f"node {old_only[0]}{more}: only topograph v0.x fabric labels "
                f"({OLD_TOPOGRAPH_PREFIXES[0]}...), while other nodes carry {FABRIC_TIER_PREFIX}N: "
                "left out of the fabric levels"
            )
    else:
        levels = list(OLD_FABRIC_LEVELS)

    def fabric_of(node: Node, keys: dict[Step, str]) -> Path:
        return _branch(node, levels, base, keys, warnings)

    return levels, fabric_of


def _fabric_tier(node: str, key: str, warnings: list[str]) -> int | None:
    if not key.startswith(FABRIC_TIER_PREFIX):
        return None
    suffix = key[len(FABRIC_TIER_PREFIX) :]
    if not suffix.isdecimal() or str(int(suffix)) != suffix:
        warnings.append(f"node {node}: label {key} ignored: the tier is not a number like tier-0")
        return None
    return int(suffix)


def _branch(
    node: Node, levels: Sequence[LabelLevel], base: int, keys: dict[Step, str], warnings: list[str]
) -> Path:
    """A node's steps over `levels` (numbered from `base`), top-down; empty values are no label."""
    labels = node.metadata.labels or {}
    steps: list[Step] = []
    for i, level in enumerate(levels):
        key = next((k for k in level.label_keys if labels.get(k)), None)
        if key is None:
            empty = next((k for k in level.label_keys if k in labels), None)
            if empty is not None:
                warnings.append(f"node {node.name}: label {empty} ignored: its value is empty")
            continue
        step = (base + i, labels[key])
        keys.setdefault(step, key)
        steps.append(step)
    if steps:
        held = [lv for lv, _ in steps]
        gaps = [levels[i - base].name for i in range(held[0], held[-1]) if i not in held]
        if gaps:
            warnings.append(f"node {node.name}: no {', '.join(gaps)} label between its other fabric labels")
    return tuple(reversed(steps))


def _nvlink_path(node: Node, keys: dict[Step, str], odd: dict[str, list[str]], warnings: list[str]) -> Path:
    """A node's NVLink steps, top-down: accelerator domain, sub-domain, rack, clique. An
    accelerator value equal to the clique or rack value is that domain, not one more."""
    labels = node.metadata.labels or {}
    steps: dict[int, str] = {}
    clique = labels.get(GPU_CLIQUE_LABEL)
    if clique == "":
        warnings.append(f"node {node.name}: label {GPU_CLIQUE_LABEL} ignored: its value is empty")
    elif clique is not None:
        steps[_CLIQUE] = clique
        rack, dot, clique_id = clique.rpartition(".")
        if dot and rack and clique_id:
            steps[_RACK] = rack
        else:
            odd.setdefault(clique, []).append(node.name)
    gfd = set(steps.values())
    for lv in (_DOMAIN, _SUB_DOMAIN):
        for key in NVLINK_LEVELS[lv].label_keys:
            value = labels.get(key)
            if value:
                if value not in gfd:
                    steps[lv] = value
                    keys.setdefault((lv, value), key)
                break
    for lv in (_CLIQUE, _RACK):
        if lv in steps:
            keys.setdefault((lv, steps[lv]), GPU_CLIQUE_LABEL)
    return tuple((lv, steps[lv]) for lv in sorted(steps, reverse=True))


def _odd_cliques(odd: Mapping[str, Sequence[str]]) -> list[str]:
    out = []
    for value, names in odd.items():
        more = f" and {len(names) - 1} more" if len(names) > 1 else ""
        out.append(
            f"node {names[0]}{more}: {GPU_CLIQUE_LABEL}={go_quote(value)} is not <ClusterUUID>.<CliqueID>: "
            "a clique in no rack"
        )
    return out


def _agreeing_racks(read: Sequence[_Labelled], warnings: list[str]) -> list[_Labelled]:
    """The nodes of one rack (or of one rack-less clique) must agree on their accelerator
    domain and sub-domain; where they do not, they keep only their GFD steps."""
    by_rack: dict[Step, list[_Labelled]] = defaultdict(list)
    for r in read:
        gfd = [s for s in r.nvlink if s[0] in (_RACK, _CLIQUE)]
        if gfd:
            by_rack[gfd[0]].append(r)
    strip: set[str] = set()
    for (lv, value), members in by_rack.items():
        above = {r.name: tuple(s for s in r.nvlink if s[0] not in (_RACK, _CLIQUE)) for r in members}
        first = members[0]
        other = next((r for r in members if above[r.name] != above[first.name]), None)
        if other is None:
            continue

        said = ["/".join(v for _, v in above[r.name]) or "none" for r in (first, other)]
        warnings.append(
            f"{NVLINK_LEVELS[lv].name} {value}: nodes {first.name} and {other.name} disagree on the "
            f"accelerator domain ({said[0]} vs {said[1]}): its nodes keep only "
            f"their {GPU_CLIQUE_LABEL} levels"
        )
        strip.update(above)
    return [
        _Labelled(r.name, r.fabric, tuple(s for s in r.nvlink if s[0] in (_RACK, _CLIQUE)))
        if r.name in strip
        else r
        for r in read
    ]


def _attach_points(
    read: Sequence[_Labelled], levels: Sequence[LabelLevel], warnings: list[str]
) -> dict[Path, Path]:
    """Top NVLink step -> the fabric branch it hangs below: the lowest fabric domain holding
    all its nodes that carry fabric labels (none: the top of the tree)."""
    groups: dict[Path, list[_Labelled]] = defaultdict(list)
    for r in read:
        if r.nvlink:
            groups[r.nvlink[:1]].append(r)
    out: dict[Path, Path] = {}
    for top, members in groups.items():
        placed = [r for r in members if r.fabric]
        prefix: Path = placed[0].fabric if placed else ()
        for r in placed[1:]:
            n = 0
            while n < min(len(prefix), len(r.fabric)) and prefix[n] == r.fabric[n]:
                n += 1
            prefix = prefix[:n]
        if placed and not prefix:
            a = placed[0]
            b = next(r for r in placed if r.fabric[0] != a.fabric[0])
            (lv, value) = top[0]

            def root(r: _Labelled) -> str:
                return f"{levels[r.fabric[0][0]].name} {r.fabric[0][1]}"

            warnings.append(
                f"{levels[lv].name} {value}: no fabric domain holds all its nodes (node {a.name} is "
                f"under {root(a)}, node {b.name} under {root(b)}): it is placed at the top of the tree"
            )
        out[top] = prefix
    return out


def from_cluster_network_topology(cnt: ClusterNetworkTopology, nodes: Iterable[Node]) -> TopologyTree:
    """Koordinator's layers + node labels. Raises InvalidSpecError if the layers do not chain."""
    return from_label_levels(cnt_levels(cnt), nodes, source="koordinator")


def cnt_levels(cnt: ClusterNetworkTopology) -> list[LabelLevel]:
    """Koordinator's layers as label levels, bottom-up. Raises InvalidSpecError if the layers
    do not chain."""
    return [
        LabelLevel(layer.topology_layer, tuple(layer.label_key or ()))
        for layer in cnt.layers_bottom_up()
        if layer.topology_layer != NODE_LAYER
    ]


class ParentClaims:
    """Which parent each child keeps when HyperNodes claim it: Volcano allows one, so of two
    claimants the lower tier wins, then the first name (the narrowest domain that says it holds
    the child). Resolution does not depend on the order of the claims. The one rule of HyperNode
    parents: the scheduler's tree (`from_hypernodes`) and admission's view of the cluster
    (`webhooks.rules.cluster_state`) both resolve parents here. `what` names the children in
    the warnings (`node`, `hypernode`); `warnings` is where they go."""

    def __init__(self, what: str, warnings: list[str] | None = None) -> None:
        self.what = what
        self.warnings: list[str] = warnings if warnings is not None else []
        self.parent: dict[str, str] = {}
        """child -> the parent it keeps (before `resolved` cuts cycles)."""
        self._held: dict[str, tuple[int, str, int]] = {}  # child -> (parent tier, parent, member index)

    def claim(self, child: str, parent: str, tier: int, index: int = 0) -> None:
        """`parent` (of `tier`) selects `child` with its members[`index`]."""
        held = self._held.get(child)
        if held is not None and held[1] == parent:  # two selectors of one HyperNode: a repeat
            if held[2] != index:
                self.warnings.append(
                    f"{self.what} {child} is selected twice by hypernode {parent} (members[{held[2]}] and "
                    f"members[{index}]); counted once"
                )
            return
        if held is None or (tier, parent) < held[:2]:
            self._held[child], self.parent[child] = (tier, parent, index), parent
        if held is not None:
            keep, drop = self.parent[child], parent if self.parent[child] != parent else held[1]
            self.warnings.append(f"{self.what} {child} has two parents ({keep}, {drop}); kept {keep}")

    def resolved(self, names: Sequence[str]) -> dict[str, str]:
        """Each child's parent with every cycle cut, walking up from each of `names` (the
        HyperNodes, in name order) and cutting at the one that closes the cycle."""
        parent = dict(self.parent)
        _cut_cycles(names, parent, self.warnings)
        return parent


def from_hypernodes(hypernodes: Iterable[HyperNode], nodes: Iterable[Node]) -> TopologyTree:
    """Volcano's HyperNodes, with Node members resolved against `nodes`.

    A Node or HyperNode claimed by two parents keeps the lower-tier one (then the first
    name) and a warning (`ParentClaims`); a cycle is cut with a warning. HyperNodes deeper than
    `MAX_TREE_DEPTH` levels are left out with a warning naming them, their nodes counted in
    the deepest HyperNode kept above them. Unknown exactMatch Node names are kept: the node
    may join later. Linear in HyperNodes and members (besides regex and label matching).
    """
    hns = sorted(hypernodes, key=lambda h: h.name)
    node_list = sorted(nodes, key=lambda n: n.name)
    warnings: list[str] = []
    node_claims, hn_claims = ParentClaims("node", warnings), ParentClaims("hypernode", warnings)
    hn_names = [h.name for h in hns]
    for hn in hns:
        for i, m in enumerate(hn.spec.member_list):
            if m.type == "Node":
                for name in _node_members(hn.name, i, m.selector, node_list, warnings):
                    node_claims.claim(name, hn.name, hn.spec.tier, i)
            else:
                for name in _hypernode_members(hn.name, m.selector, hn_names, warnings):
                    hn_claims.claim(name, hn.name, hn.spec.tier, i)
    hn_parent = hn_claims.resolved(hn_names)
    node_parent = node_claims.parent
    dropped = _cut_below_max_depth(hn_names, hn_parent, node_parent, warnings)
    return _hypernode_tree([h for h in hns if h.name not in dropped], hn_parent, node_parent, warnings)


def _node_members(
    owner: str, index: int, sel: MemberSelector, node_list: Sequence[Node], warnings: list[str]
) -> list[str]:
    """The Nodes one member selects: its exactMatch name (known or not), else its regexMatch or
    labelMatch against `node_list` (none, with a warning, when no Node was given)."""
    if sel.exact_match is not None:
        return [sel.exact_match.name]
    if not node_list and (sel.regex_match is not None or sel.label_match is not None):
        how = "regexMatch" if sel.regex_match is not None else "labelMatch"
        warnings.append(
            f"hypernode {owner} members[{index}]: {how} selects Nodes and no Node was given, "
            "so it selects none (give the Nodes with the HyperNodes)"
        )
        return []
    if sel.regex_match is not None:
        return _regex_members(sel.regex_match.pattern, [n.name for n in node_list], owner, warnings)
    if sel.label_match is not None:
        lm = sel.label_match
        return [n.name for n in node_list if lm.matches(n.metadata.labels or {})]
    return []


def _hypernode_members(
    owner: str, sel: MemberSelector, hn_names: Sequence[str], warnings: list[str]
) -> list[str]:
    """The HyperNodes one member selects, among `hn_names`: its exactMatch name, else its
    regexMatch (labelMatch never selects HyperNodes); never the owner itself."""
    if sel.exact_match is not None:
        matched = [sel.exact_match.name] if sel.exact_match.name in hn_names else []
        if not matched:
            warnings.append(f"hypernode {owner} names unknown member hypernode {sel.exact_match.name}")
    elif sel.regex_match is not None:
        matched = _regex_members(sel.regex_match.pattern, hn_names, owner, warnings)
    else:
        matched = []
    if owner in matched:
        warnings.append(f"hypernode {owner} lists itself as a member; ignored")
    return [name for name in matched if name != owner]


def _hypernode_tree(
    kept: Sequence[HyperNode],
    hn_parent: Mapping[str, str],
    node_parent: Mapping[str, str],
    warnings: list[str],
) -> TopologyTree:
    kids: dict[str, list[str]] = defaultdict(list)
    for child, parent in hn_parent.items():
        kids[parent].append(child)
    direct_nodes: dict[str, list[str]] = defaultdict(list)
    for node, parent in node_parent.items():
        direct_nodes[parent].append(node)
    domains = {
        DomainId(h.name): TopologyDomain(
            id=DomainId(h.name),
            tier=h.spec.tier,
            tier_name=h.spec.tier_name,
            parent=DomainId(hn_parent[h.name]) if h.name in hn_parent else None,
            children=tuple(DomainId(c) for c in sorted(kids.get(h.name, []), key=natural_key)),
            nodes=tuple(sorted(direct_nodes.get(h.name, []), key=natural_key)),
        )
        for h in kept
    }
    node_domain = {n: DomainId(p) for n, p in node_parent.items()}
    return TopologyTree(
        domains=domains, node_domain=node_domain, source="hypernode", warnings=tuple(warnings)
    )


def _cut_cycles(names: Sequence[str], parent: dict[str, str], warnings: list[str]) -> None:
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
            cur = parent.get(cur)
        done.update(path)


def _cut_below_max_depth(
    names: Sequence[str], parent: dict[str, str], node_parent: dict[str, str], warnings: list[str]
) -> set[str]:
    """Leave out the HyperNodes more than MAX_TREE_DEPTH levels below a root (the parent links
    form a forest by now); nodes they held move to the deepest HyperNode kept above them."""
    depth: dict[str, int] = {}
    for start in names:
        path: list[str] = []
        cur: str | None = start
        while cur is not None and cur not in depth:
            path.append(cur)
            cur = parent.get(cur)
        base = depth[cur] if cur is not None else 0
        for i, name in enumerate(reversed(path)):
            depth[name] = base + i + 1
    dropped = {n for n in names if depth[n] > MAX_TREE_DEPTH}
    if not dropped:
        return dropped
    keeper: dict[str, str] = {}
    for name in sorted(dropped, key=lambda n: depth[n]):  # parents first
        up = parent.pop(name)
        keeper[name] = keeper[up] if up in dropped else up
    for node, owner in list(node_parent.items()):
        if owner in dropped:
            node_parent[node] = keeper[owner]
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
