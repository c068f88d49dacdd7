"""Network trees between dialects: label-described trees -> Volcano HyperNodes, HyperNodes ->
a ClusterNetworkTopology plus the node labels that rebuild the same tree, and the
ClusterNetworkTopology status Koordinator would write.

Sources of a label-described tree (all through `topology.from_label_levels`, so nodes missing a
label follow Koordinator's rule: missing only the lowest level gives a stand-in domain named
after the node, any other gap leaves the node out, with a warning):
* ClusterNetworkTopology layers (tier = layers above NodeTopologyLayer, tierName = layer name),
* a Kueue Topology's levels.

Node labels with no description object (topograph v1.0 and v0.x, GPU Feature Discovery's
`nvidia.com/gpu.clique`) go through `topology.from_node_labels` instead, the same tree the
scheduler builds from them: NVLink levels need no stand-ins (a node with none hangs off its
lowest fabric domain), and levels no node carries are skipped.

HyperNode names are `<level>-<value>`, lower-cased and made DNS-1123-safe, with an 8-hex
suffix hashed from the domain's full path when that name is not unique (a value repeated
under two parents, or two values that sanitize alike). Names depend only on the tree, so
they are stable across runs. Each HyperNode remembers its label key and value in annotations,
which lets the way back reproduce the original labels exactly.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from translations import collector, kueue, volcano
from translations import koordinator as koord
from translations import topology as topo
from translations._base import JsonDict
from translations.core import Node
from translations.errors import InvalidSpecError
from translations.patches import NodeLabelPatch
from translations.report import TranslationReport
from translations.topology import (
    DomainId,
    LabelLevel,
    TopologyTree,
    from_hypernodes,
    from_label_levels,
    natural_key,
)

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "topobridge"
SOURCE_LABEL = "topobridge.io/topology-source"
"""Which description a HyperNode was made from: koordinator, kueue, or topograph (node labels:
topograph's and GPU Feature Discovery's)."""
SOURCE_KOORDINATOR, SOURCE_KUEUE, SOURCE_NODE_LABELS = "koordinator", "kueue", "topograph"
LABEL_KEY_ANNOTATION = "topobridge.io/label-key"
LABEL_VALUE_ANNOTATION = "topobridge.io/label-value"
TIER_LABEL_PREFIX = "topology.topobridge.io/tier-"
"""Node label key for a tier whose HyperNodes name no label key of their own."""

_MAX_NAME = 253
_HASH_LEN = 8
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


@dataclass(frozen=True)
class HyperNodeSet:
    """HyperNodes for one tree, the tree itself, and what the translation did."""

    hypernodes: tuple[volcano.HyperNode, ...]
    tree: TopologyTree
    report: TranslationReport


# --- label trees -> HyperNodes ---------------------------------------------------------------


def from_cluster_network_topology(cnt: koord.ClusterNetworkTopology, nodes: Iterable[Node]) -> HyperNodeSet:
    """Koordinator layers + node labels -> HyperNodes."""
    report = TranslationReport(f"ClusterNetworkTopology {cnt.name}", "Volcano")
    chain = cnt.layers_bottom_up()
    for i, layer in enumerate(chain):
        if not layer.label_key:
            raise InvalidSpecError(
                f"spec.networkTopologySpec[{cnt.spec.network_topology_spec.index(layer)}].labelKey",
                None,
                f'Required value: layer "{layer.topology_layer}" names no node label, so no node '
                "can be placed in it",
            )
        report.carry(
            f"layer {layer.topology_layer} (labels {', '.join(layer.label_key)}) -> HyperNode tier {i + 1}"
        )
    levels = [LabelLevel(layer.topology_layer, tuple(layer.label_key or ())) for layer in chain]
    return _from_levels(levels, list(nodes), source=SOURCE_KOORDINATOR, report=report)


def from_node_labels(nodes: Iterable[Node]) -> HyperNodeSet:
    """topograph's and GPU Feature Discovery's node labels -> HyperNodes (`topology.from_node_labels`)."""
    node_list = list(nodes)
    report = TranslationReport("topology node labels", "Volcano")
    with collector.paused():
        tree = topo.from_node_labels(node_list)
        hypernodes = hypernodes_from_tree(tree, source=SOURCE_NODE_LABELS)
    if tree.domains:
        tiers = range(1, tree.max_tier + 1)
        report.carry("levels " + ", ".join(f"{tree.tier_names.get(t, t)} -> tier {t}" for t in tiers))
        for t in tiers:
            first = tree.domains[tree.domains_at_tier(t)[0]]
            report.carry(f"{first.source}: HyperNode tier {t} ({first.tier_name})")
    else:
        report.refuse("no node carries a topology label (topograph's, nvidia.com/gpu.clique): no HyperNodes")
    return _finish(tree, hypernodes, report)


def from_kueue_topology(topology: kueue.Topology, nodes: Iterable[Node]) -> HyperNodeSet:
    """A Kueue Topology's levels + node labels -> HyperNodes (the hostname level is the nodes)."""
    report = TranslationReport(f"Topology {topology.name}", "Volcano")
    levels = kueue.label_levels(topology)
    for i, lv in enumerate(levels):
        report.carry(f"level {lv.name} -> HyperNode tier {i + 1}")
    if any(level.node_label == kueue.HOSTNAME_LABEL for level in topology.spec.levels):
        report.carry(f"level {kueue.HOSTNAME_LABEL}: the nodes themselves (HyperNode members)")
    return _from_levels(levels, list(nodes), source=SOURCE_KUEUE, report=report)


def _from_levels(
    levels: Sequence[LabelLevel], nodes: list[Node], *, source: str, report: TranslationReport
) -> HyperNodeSet:
    with collector.paused():
        tree = from_label_levels(levels, nodes, source="labels" if source != "koordinator" else "koordinator")
        hypernodes = hypernodes_from_tree(tree, source=source)
    if levels:
        lowest = levels[0]
        for node in nodes:
            labels = node.metadata.labels or {}
            if node.name in tree.node_domain and not any(k in labels for k in lowest.label_keys):
                report.default(
                    f"node {node.name} has no {lowest.name} label: a stand-in {lowest.name} domain "
                    "holds it alone"
                )
    return _finish(tree, hypernodes, report)


def _finish(
    tree: TopologyTree, hypernodes: tuple[volcano.HyperNode, ...], report: TranslationReport
) -> HyperNodeSet:
    for warning in tree.warnings:
        report.refuse(warning)
    report.carry(f"{len(hypernodes)} HyperNodes over {len(tree.node_domain)} nodes")
    return HyperNodeSet(hypernodes, tree, report)


def hypernode_names(tree: TopologyTree) -> dict[DomainId, str]:
    """Deterministic DNS-1123 names for every domain of `tree`."""
    base: dict[DomainId, str] = {}
    for d in tree.domains.values():
        level = (d.tier_name or f"tier{d.tier}").rsplit("/", 1)[-1]
        value = d.label_value if d.label_value is not None else d.id.rsplit("/", 1)[-1]
        base[d.id] = _dns1123(f"{_dns1123(level)}-{_dns1123(value)}")
    counts: dict[str, int] = defaultdict(int)
    for name in base.values():
        counts[name] += 1
    out: dict[DomainId, str] = {}
    for did, name in base.items():
        d = tree.domains[did]
        # A label tree names a domain `<Level>/<value>` unless the value repeats under two
        # parents, in which case its id carries the whole path.
        repeated = (
            d.label_value is not None and d.tier_name is not None and did != f"{d.tier_name}/{d.label_value}"
        )
        if counts[name] > 1 or repeated:
            digest = hashlib.sha256(did.encode()).hexdigest()[:_HASH_LEN]
            name = f"{name[: _MAX_NAME - _HASH_LEN - 1].rstrip('-.')}-{digest}"
        out[did] = name
    return out


def hypernodes_from_tree(tree: TopologyTree, *, source: str) -> tuple[volcano.HyperNode, ...]:
    """One HyperNode per domain, members by exact name, in depth-first order."""
    names = hypernode_names(tree)
    out: list[volcano.HyperNode] = []
    for _, did in tree.depth_first():
        d = tree.domains[did]
        members: list[JsonDict] = [
            {"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in d.nodes
        ] + [{"type": "HyperNode", "selector": {"exactMatch": {"name": names[c]}}} for c in d.children]
        meta: JsonDict = {"name": names[did], "labels": {MANAGED_BY_LABEL: MANAGED_BY, SOURCE_LABEL: source}}
        annotations: dict[str, str] = {}
        if d.label_key is not None:
            annotations[LABEL_KEY_ANNOTATION] = d.label_key
        if d.label_value is not None:
            annotations[LABEL_VALUE_ANNOTATION] = d.label_value
        if annotations:
            meta["annotations"] = annotations
        spec: JsonDict = {"tier": d.tier, "members": members}
        if d.tier_name:
            spec["tierName"] = d.tier_name
        out.append(
            volcano.HyperNode.parse(
                {
                    "apiVersion": volcano.HYPERNODE_API_VERSION,
                    "kind": "HyperNode",
                    "metadata": meta,
                    "spec": spec,
                }
            )
        )
    return tuple(out)


def _dns1123(text: str) -> str:
    """Lower-cased, anything but [a-z0-9.-] replaced, each dot-separated part trimmed."""
    lowered = re.sub(r"[^a-z0-9.-]+", "-", text.lower())
    parts = [re.sub(r"-+", "-", p).strip("-") for p in lowered.split(".")]
    name = ".".join(p for p in parts if p) or "domain"
    if len(name) > _MAX_NAME:
        digest = hashlib.sha256(text.encode()).hexdigest()[:_HASH_LEN]
        name = f"{name[: _MAX_NAME - _HASH_LEN - 1].rstrip('-.')}-{digest}"
    return name


# --- HyperNodes -> ClusterNetworkTopology + node labels ---------------------------------------


@dataclass(frozen=True)
class KoordinatorTopology:
    """A ClusterNetworkTopology and the node label changes that rebuild the HyperNode tree."""

    cluster_network_topology: koord.ClusterNetworkTopology
    node_patches: tuple[NodeLabelPatch, ...]
    tree: TopologyTree
    report: TranslationReport


MAX_LAYER_TIER = 64
"""The highest HyperNode tier a layer chain is written for (Kueue allows 16 levels; Volcano's
clusters use a handful of tiers)."""


def to_cluster_network_topology(
    hypernodes: Iterable[volcano.HyperNode], nodes: Iterable[Node]
) -> KoordinatorTopology:
    """The layer chain (one layer per tier, named by tierName) and each node's labels.

    Koordinator needs every node labelled at every layer; a HyperNode tree may skip a tier or
    end lower in one branch. A stand-in label then repeats the nearest domain's value, which
    keeps every tier-bound placement the same; a node hanging directly off a tier above 1
    gets stand-ins named after itself below that tier.
    """
    node_list = list(nodes)
    hn_list = list(hypernodes)
    report = TranslationReport(f"{len(hn_list)} HyperNodes", "Koordinator")
    with collector.paused():
        tree = from_hypernodes(hn_list, node_list)
    for warning in tree.warnings:
        report.refuse(warning)
    by_name = {h.name: h for h in hn_list}
    tiers = _layer_tiers(tree)
    layer_names = _layer_names(tree, tiers, report)
    label_keys = _label_keys(tree, by_name, tiers, report)
    values = _domain_values(tree, by_name)

    specs: list[JsonDict] = []
    for i in range(len(tiers) - 1, -1, -1):
        spec: JsonDict = {"topologyLayer": layer_names[tiers[i]], "labelKey": [label_keys[tiers[i]]]}
        if i + 1 < len(tiers):
            spec["parentTopologyLayer"] = layer_names[tiers[i + 1]]
        specs.append(spec)
    node_spec: JsonDict = {"topologyLayer": koord.NODE_LAYER}
    if tiers:
        node_spec["parentTopologyLayer"] = layer_names[tiers[0]]
    specs.append(node_spec)
    cnt = koord.ClusterNetworkTopology.parse(
        {
            "apiVersion": koord.CNT_API_VERSION,
            "kind": "ClusterNetworkTopology",
            "metadata": {"name": koord.CNT_DEFAULT_NAME},
            "spec": {"networkTopologySpec": specs},
        }
    )
    report.carry(
        f"{len(tiers)} layers: "
        + ", ".join(f"{layer_names[t]} (tier {t}, label {label_keys[t]})" for t in tiers)
    )

    ours = set(label_keys.values())
    all_nodes = {n.name: n for n in node_list}
    for name in tree.node_domain:
        all_nodes.setdefault(name, Node.parse({"metadata": {"name": name}}))
    patches: list[NodeLabelPatch] = []
    stand_ins = 0
    for name in sorted(all_nodes, key=natural_key):
        wanted, filled = _node_labels(tree, name, values, label_keys, tiers)
        stand_ins += filled
        current = all_nodes[name].metadata.labels or {}
        remove = tuple(sorted(k for k in ours if k in current and k not in wanted))
        changes = {k: v for k, v in wanted.items() if current.get(k) != v}
        if changes or remove:
            patches.append(NodeLabelPatch(name, changes, remove))
    if stand_ins:
        report.default(f"{stand_ins} stand-in labels where a branch skips a tier or ends below the top tier")
    outside = [n for n in all_nodes if n not in tree.node_domain]
    if outside:
        report.carry(f"{len(outside)} nodes in no HyperNode stay unlabelled (in no domain, as in Volcano)")
    return KoordinatorTopology(cnt, tuple(patches), tree, report)


def _layer_tiers(tree: TopologyTree) -> range:
    """Every tier from 1 to the highest, one layer each: Koordinator counts layers from the nodes
    up, so a layer stands for the tier of its place in the chain, and a tier no HyperNode holds
    still needs one (its labels repeat the tier below). Bounded: a tier may say 2147483647."""
    top = tree.max_tier
    if top > MAX_LAYER_TIER:
        highest = min((d for d in tree.domains.values() if d.tier == top), key=lambda d: natural_key(d.id))
        raise InvalidSpecError(
            f"HyperNode {highest.id}: spec.tier",
            top,
            f"Invalid value: {top}: Koordinator's layers are one per tier, from the nodes up;"
            f" at most {MAX_LAYER_TIER} tiers translate",
        )
    return range(1, top + 1)


def _layer_names(tree: TopologyTree, tiers: Sequence[int], report: TranslationReport) -> dict[int, str]:
    names: dict[int, str] = {}
    used: set[str] = {koord.NODE_LAYER, koord.CLUSTER_LAYER}
    for t in tiers:
        name = tree.tier_names.get(t)
        if name is None or name in used:
            fallback = f"Tier{t}Layer"
            why = (
                "its HyperNodes share no single tierName"
                if name is None
                else f"tierName {name} is already a layer"
            )
            report.default(f"tier {t}: layer {fallback} ({why})")
            name = fallback
        used.add(name)
        names[t] = name
    return names


def _remembered_label(hn: volcano.HyperNode | None) -> tuple[str | None, str | None]:
    """The node label (key, value) a HyperNode stands for, when it says: topobridge's
    annotations, or Volcano's label discovery (tierName is the label key, and the HyperNode
    carries that label with the domain's value)."""
    if hn is None:
        return None, None
    key = hn.metadata.annotation(LABEL_KEY_ANNOTATION)
    if key is not None:
        return key, hn.metadata.annotation(LABEL_VALUE_ANNOTATION)
    tier_name = hn.spec.tier_name
    if tier_name and hn.metadata.label(tier_name) is not None:
        return tier_name, hn.metadata.label(tier_name)
    return None, hn.metadata.annotation(LABEL_VALUE_ANNOTATION)


def _label_keys(
    tree: TopologyTree,
    by_name: Mapping[str, volcano.HyperNode],
    tiers: Sequence[int],
    report: TranslationReport,
) -> dict[int, str]:
    keys: dict[int, str] = {}
    taken: set[str] = set()
    by_tier: dict[int, list[DomainId]] = defaultdict(list)
    for d in tree.domains.values():
        by_tier[d.tier].append(d.id)
    for t in tiers:
        found = {_remembered_label(by_name.get(d))[0] for d in by_tier[t]}
        key = next(iter(found)) if len(found) == 1 else None
        if key is None or key in taken:
            key = f"{TIER_LABEL_PREFIX}{t}"
            report.default(f"tier {t}: node label {key} (its HyperNodes name no single label key)")
        keys[t] = key
        taken.add(key)
    return keys


def _domain_values(tree: TopologyTree, by_name: Mapping[str, volcano.HyperNode]) -> dict[DomainId, str]:
    """A label value per domain: the remembered one (ours, or Volcano label discovery's) when
    valid, else the HyperNode name; a value repeated among siblings (which would merge them)
    gets a hash of the name."""
    out: dict[DomainId, str] = {}
    for d in tree.domains.values():
        remembered = _remembered_label(by_name.get(d.id))[1]
        out[d.id] = (
            remembered if remembered is not None and _valid_label_value(remembered) else _label_value(d.id)
        )
    siblings: dict[tuple[DomainId | None, int], list[DomainId]] = defaultdict(list)
    for d in tree.domains.values():
        siblings[(d.parent, d.tier)].append(d.id)
    for group in siblings.values():
        seen: dict[str, int] = defaultdict(int)
        for did in group:
            seen[out[did]] += 1
        for did in group:
            if seen[out[did]] > 1:
                out[did] = _label_value(did, force_hash=True)
    return out


def _node_labels(
    tree: TopologyTree,
    node: str,
    values: Mapping[DomainId, str],
    keys: Mapping[int, str],
    tiers: Sequence[int],
) -> tuple[dict[str, str], int]:
    chain = tree.ancestors(node)
    if not chain:
        return {}, 0
    at_tier = {tree.domains[d].tier: d for d in chain}
    out: dict[str, str] = {}
    filled = 0
    innermost = tree.domains[chain[0]].tier
    below: str | None = None  # the value of the nearest domain of the node's below this tier
    for t in tiers:
        if t in at_tier:
            below = out[keys[t]] = values[at_tier[t]]
            continue
        filled += 1
        out[keys[t]] = below if t >= innermost and below is not None else _label_value(node)
    return out, filled


def _valid_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(_LABEL_VALUE.match(value))


def _label_value(text: str, *, force_hash: bool = False) -> str:
    if not force_hash and _valid_label_value(text):
        return text
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-_.") or "domain"
    digest = hashlib.sha256(text.encode()).hexdigest()[:_HASH_LEN]
    return f"{cleaned[: 63 - _HASH_LEN - 1].rstrip('-_.')}-{digest}"


# --- ClusterNetworkTopology status --------------------------------------------------------------


def detail_status(
    cnt: koord.ClusterNetworkTopology, nodes: Iterable[Node]
) -> koord.ClusterNetworkTopologyStatus:
    """`status.detailStatus` as Koordinator writes it: the cluster root, then every domain in
    depth-first order, each with its parent, its children's layer and names, and its node count."""
    node_list = list(nodes)
    chain = [layer.topology_layer for layer in cnt.layers_bottom_up()]
    levels = [
        LabelLevel(layer.topology_layer, tuple(layer.label_key or ())) for layer in cnt.layers_bottom_up()
    ]
    tree = from_label_levels(levels, node_list, source="koordinator")

    def layer(tier: int) -> str:
        return (
            koord.CLUSTER_LAYER if tier > len(chain) else koord.NODE_LAYER if tier == 0 else chain[tier - 1]
        )

    def info(did: DomainId | None, tier: int) -> JsonDict:
        if did is None:
            return {"topologyLayer": koord.CLUSTER_LAYER, "topologyName": ""}
        return {"topologyLayer": layer(tier), "topologyName": tree.domains[did].label_value or ""}

    top = len(chain)
    root: JsonDict = {
        "topologyInfo": info(None, top + 1),
        "childTopologyLayer": layer(top),
        "nodeNum": len(tree.node_domain) if top else len(node_list),
    }
    if tree.roots:
        root["childTopologyNames"] = [tree.domains[r].label_value or "" for r in tree.roots]
    entries: list[JsonDict] = [root]
    for _, did in tree.depth_first():
        d = tree.domains[did]
        entry: JsonDict = {
            "topologyInfo": info(did, d.tier),
            "parentTopologyInfo": info(d.parent, d.tier + 1),
            "childTopologyLayer": layer(d.tier - 1),
            "nodeNum": len(tree.nodes_under(did)),
        }
        if d.children:
            entry["childTopologyNames"] = [tree.domains[c].label_value or "" for c in d.children]
        entries.append(entry)
    return koord.ClusterNetworkTopologyStatus.parse({"detailStatus": entries})
