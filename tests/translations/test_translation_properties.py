"""Properties of the translations on random inputs.

* Random HyperNode trees (1-5 tiers, 1-5,000 nodes) -> ClusterNetworkTopology + node labels ->
  HyperNodes is the identity up to HyperNode names; a second trip changes nothing at all.
* Random Koordinator gather specs -> Volcano -> Koordinator keep the hard/soft tier.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from translations import constraints
from translations import hypernodes as hn
from translations import koordinator as koord
from translations import koordinator_to_volcano as k2v
from translations import volcano_to_koordinator as v2k
from translations.core import Node
from translations.patches import NodeLabelPatch
from translations.volcano import HyperNode

JsonDict = dict[str, Any]


@dataclass(frozen=True)
class RandomTree:
    hypernodes: list[HyperNode]
    nodes: list[Node]
    tier_names: dict[int, str | None]


def build_tree(tiers: int, n_nodes: int, seed: int, named: list[bool], repeated_values: bool) -> RandomTree:
    """A random forest: domain counts shrink going up, every domain has a member. With
    `repeated_values`, HyperNodes remember label values that repeat (under other parents)."""
    rng = random.Random(seed)
    tier_names = {t: (f"Layer{t}" if named[t - 1] else None) for t in range(1, tiers + 1)}
    counts = {1: rng.randint(1, max(1, min(n_nodes, 600)))}
    for t in range(2, tiers + 1):
        counts[t] = rng.randint(1, counts[t - 1])
    members: dict[tuple[int, int], list[str]] = {(t, j): [] for t in counts for j in range(counts[t])}
    for i in range(n_nodes):
        members[(1, i if i < counts[1] else rng.randrange(counts[1]))].append(f"node-{i}")
    for t in range(2, tiers + 1):
        for j in range(counts[t - 1]):
            members[(t, j if j < counts[t] else rng.randrange(counts[t]))].append(f"t{t - 1}-{j}")
    hypernodes = []
    for (t, j), names in members.items():
        kind = "Node" if t == 1 else "HyperNode"
        spec: JsonDict = {
            "tier": t,
            "members": [{"type": kind, "selector": {"exactMatch": {"name": n}}} for n in names],
        }
        if tier_names[t]:
            spec["tierName"] = tier_names[t]
        meta: JsonDict = {"name": f"t{t}-{j}"}
        if repeated_values:
            meta["annotations"] = {hn.LABEL_VALUE_ANNOTATION: f"v{j % 3}"}
        hypernodes.append(HyperNode.parse({"metadata": meta, "spec": spec}))
    rng.shuffle(hypernodes)
    nodes = [Node.parse({"metadata": {"name": f"node-{i}"}}) for i in range(n_nodes)]
    return RandomTree(hypernodes, nodes, tier_names)


@st.composite
def random_trees(draw: st.DrawFn) -> RandomTree:
    tiers = draw(st.integers(1, 5), label="tiers")
    return build_tree(
        tiers,
        draw(st.integers(1, 5000), label="nodes"),
        draw(st.integers(0, 2**32 - 1), label="seed"),
        draw(st.lists(st.booleans(), min_size=tiers, max_size=tiers), label="tier has a tierName"),
        draw(st.booleans(), label="repeated label values"),
    )


def canonical(hypernodes: list[HyperNode], tier_names: dict[int, str | None]) -> frozenset[Any]:
    """The forest without HyperNode names: each root as (tier, tierName, nodes, children)."""
    by_name = {h.name: h for h in hypernodes}
    children = {
        m.selector.exact_match.name
        for h in hypernodes
        for m in h.spec.members
        if m.type == "HyperNode" and m.selector.exact_match is not None
    }

    def canon(name: str) -> Any:
        h = by_name[name]
        nodes = frozenset(
            m.selector.exact_match.name
            for m in h.spec.members
            if m.type == "Node" and m.selector.exact_match is not None
        )
        kids = frozenset(
            canon(m.selector.exact_match.name)
            for m in h.spec.members
            if m.type == "HyperNode" and m.selector.exact_match is not None
        )
        tier_name = h.spec.tier_name if tier_names.get(h.spec.tier) else None
        return (h.spec.tier, tier_name, nodes, kids)

    return frozenset(canon(h.name) for h in hypernodes if h.name not in children)


def relabel(nodes: list[Node], patches: tuple[NodeLabelPatch, ...]) -> list[Node]:
    by_node = {p.node: p for p in patches}
    return [Node.parse(by_node[n.name].apply(n.to_dict())) if n.name in by_node else n for n in nodes]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(random_trees())
@example(build_tree(5, 5000, 1, [True] * 5, repeated_values=True))
@example(build_tree(1, 1, 2, [False], repeated_values=False))
def test_hypernodes_to_koordinator_and_back_is_the_identity_up_to_names(tree: RandomTree) -> None:
    there = hn.to_cluster_network_topology(tree.hypernodes, tree.nodes)
    assert there.report.refused == []
    back = hn.from_cluster_network_topology(
        there.cluster_network_topology, relabel(tree.nodes, there.node_patches)
    )
    assert back.report.refused == []
    assert canonical(list(back.hypernodes), tree.tier_names) == canonical(tree.hypernodes, tree.tier_names)
    assert len(back.tree.node_domain) == len(tree.nodes)
    # Layers are named by tierName where the tier had one.
    layers = [s.topology_layer for s in there.cluster_network_topology.spec.network_topology_spec]
    assert layers[:-1] == [tree.tier_names[t] or f"Tier{t}Layer" for t in range(len(tree.tier_names), 0, -1)]

    # HyperNodes made by topobridge remember their labels: a second trip is exact, names included.
    again = hn.to_cluster_network_topology(back.hypernodes, relabel(tree.nodes, there.node_patches))
    assert again.node_patches == ()
    assert again.cluster_network_topology == there.cluster_network_topology
    assert [
        h.to_dict()
        for h in hn.from_cluster_network_topology(
            again.cluster_network_topology, relabel(tree.nodes, there.node_patches)
        ).hypernodes
    ] == [h.to_dict() for h in back.hypernodes]


# --- Koordinator -> Volcano -> Koordinator ------------------------------------------------------


@st.composite
def gather_specs(draw: st.DrawFn) -> tuple[koord.ClusterNetworkTopology, str]:
    depth = draw(st.integers(1, 5))
    layers = [f"L{t}Layer" for t in range(1, depth + 1)]  # bottom-up
    specs: list[JsonDict] = []
    for t in range(depth, 0, -1):
        spec: JsonDict = {"topologyLayer": layers[t - 1], "labelKey": [f"example.com/l{t}"]}
        if t < depth:
            spec["parentTopologyLayer"] = layers[t]
        specs.append(spec)
    specs.append({"topologyLayer": koord.NODE_LAYER, "parentTopologyLayer": layers[0]})
    cnt = koord.ClusterNetworkTopology.parse(
        {"metadata": {"name": "default"}, "spec": {"networkTopologySpec": specs}}
    )
    chosen = draw(
        st.lists(st.sampled_from([koord.NODE_LAYER, *layers]), min_size=1, max_size=depth + 1, unique=True)
    )
    rules = [{"layer": layer, "strategy": draw(st.sampled_from(koord.GATHER_STRATEGIES))} for layer in chosen]
    return cnt, json.dumps({"gatherStrategy": rules})


@settings(max_examples=300, deadline=None)
@given(gather_specs(), st.integers(1, 64))
def test_koordinator_to_volcano_and_back_keeps_the_hard_or_soft_tier(
    case: tuple[koord.ClusterNetworkTopology, str], min_member: int
) -> None:
    cnt, annotation = case
    tiers = constraints.layer_tiers(None, cnt)
    original = constraints.from_koordinator(koord.parse_network_topology_spec(annotation), tiers)
    assert original is not None
    source = koord.SigsPodGroup.parse(
        {
            "metadata": {
                "name": "job",
                "namespace": "default",
                "annotations": {koord.NETWORK_TOPOLOGY_SPEC: annotation},
            },
            "spec": {"minMember": min_member},
        }
    )
    volcano = k2v.translate_all([source], cnt=cnt)[0].pod_group
    assert volcano.spec.network_topology is not None
    assert (volcano.spec.network_topology.mode, volcano.spec.network_topology.highest_tier_allowed) == (
        original.mode,
        original.highest_tier,
    )
    back = v2k.translate(volcano, cnt=cnt).pod_group
    raw = back.metadata.annotation(koord.NETWORK_TOPOLOGY_SPEC)
    assert raw is not None
    assert constraints.from_koordinator(koord.parse_network_topology_spec(raw), tiers) == original
    assert back.spec.min_member == min_member
