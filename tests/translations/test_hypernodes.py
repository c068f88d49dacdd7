"""Network trees between dialects: golden HyperNode trees for the seed clusters, the
ClusterNetworkTopology status Koordinator would write, and the way back to node labels."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from translation_seeds import (
    BLOCK_KEY,
    SPINE_KEY,
    cnt,
    node,
    parse_nodes,
    preemption_nodes,
    seed_cnt,
    seed_nodes,
)

from translations import hypernodes as hn
from translations import kueue
from translations.core import Node
from translations.errors import InvalidSpecError
from translations.volcano import HyperNode

JsonDict = dict[str, Any]
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
OURS = {"app.kubernetes.io/managed-by": "topobridge", "topobridge.io/topology-source": "koordinator"}


def expected(
    name: str,
    tier: int,
    tier_name: str,
    key: str,
    value: str,
    *,
    nodes: tuple[str, ...] = (),
    children: tuple[str, ...] = (),
    source: str = "koordinator",
) -> JsonDict:
    members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in nodes]
    members += [{"type": "HyperNode", "selector": {"exactMatch": {"name": c}}} for c in children]
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/managed-by": "topobridge", "topobridge.io/topology-source": source},
            "annotations": {"topobridge.io/label-key": key, "topobridge.io/label-value": value},
        },
        "spec": {"tier": tier, "tierName": tier_name, "members": members},
    }


SEED_HYPERNODES = [
    expected(
        "spinelayer-spine-0",
        2,
        "SpineLayer",
        SPINE_KEY,
        "spine-0",
        children=("blocklayer-block-0", "blocklayer-block-1"),
    ),
    expected(
        "blocklayer-block-0", 1, "BlockLayer", BLOCK_KEY, "block-0", nodes=("node-0", "node-1", "node-2")
    ),
    expected("blocklayer-block-1", 1, "BlockLayer", BLOCK_KEY, "block-1", nodes=("node-3", "node-4")),
    expected(
        "spinelayer-spine-1",
        2,
        "SpineLayer",
        SPINE_KEY,
        "spine-1",
        children=("blocklayer-block-2", "blocklayer-block-3"),
    ),
    expected("blocklayer-block-2", 1, "BlockLayer", BLOCK_KEY, "block-2", nodes=("node-5", "node-6")),
    expected("blocklayer-block-3", 1, "BlockLayer", BLOCK_KEY, "block-3", nodes=("node-7", "node-8")),
    expected("spinelayer-spine-2", 2, "SpineLayer", SPINE_KEY, "spine-2", children=("blocklayer-block-4",)),
    expected(
        "blocklayer-block-4", 1, "BlockLayer", BLOCK_KEY, "block-4", nodes=("node-9", "node-10", "node-11")
    ),
]


def dump(result: hn.HyperNodeSet) -> list[JsonDict]:
    return [h.to_dict() for h in result.hypernodes]


# --- golden: the seed clusters ----------------------------------------------------------------


def test_seed_spine_block_cluster_gives_the_expected_hypernode_tree() -> None:
    result = hn.from_cluster_network_topology(cnt(), parse_nodes(seed_nodes()))
    assert dump(result) == SEED_HYPERNODES
    assert result.report.refused == []
    assert "8 HyperNodes over 12 nodes" in result.report.carried


def test_seed_hypernodes_are_stable_whatever_the_node_order() -> None:
    shuffled = seed_nodes()
    random.Random(7).shuffle(shuffled)
    assert dump(hn.from_cluster_network_topology(cnt(), parse_nodes(shuffled))) == SEED_HYPERNODES


def _two_node_cnt(*layers: str) -> JsonDict:
    """Layers top-down, each labelled by `example.com/<layer lower-cased>`."""
    specs: list[JsonDict] = []
    parent = None
    for layer in layers:
        spec: JsonDict = {"topologyLayer": layer, "labelKey": [f"example.com/{layer.lower()}"]}
        if parent:
            spec["parentTopologyLayer"] = parent
        specs.append(spec)
        parent = layer
    specs.append(
        {"topologyLayer": "NodeTopologyLayer", **({"parentTopologyLayer": parent} if parent else {})}
    )
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "ClusterNetworkTopology",
        "metadata": {"name": "default"},
        "spec": {"networkTopologySpec": specs},
    }


def test_preemption_cluster_under_the_spine_block_layers_has_no_domains_and_says_why() -> None:
    # The two nodes carry no topology label at all: missing more than the lowest layer
    # leaves a node out (Koordinator's rule), so there is no HyperNode to make.
    result = hn.from_cluster_network_topology(cnt(), parse_nodes(preemption_nodes()))
    assert dump(result) == []
    assert result.report.refused == [
        "node cn-beijing.1 left out of the topology: no label for BlockLayer, SpineLayer (keys "
        f"{BLOCK_KEY}, {SPINE_KEY})",
        "node cn-beijing.2 left out of the topology: no label for BlockLayer, SpineLayer (keys "
        f"{BLOCK_KEY}, {SPINE_KEY})",
    ]


def test_preemption_cluster_under_one_block_layer_gets_a_stand_in_domain_per_node() -> None:
    result = hn.from_cluster_network_topology(
        cnt(_two_node_cnt("BlockLayer")), parse_nodes(preemption_nodes())
    )
    assert dump(result) == [
        expected(
            "blocklayer-cn-beijing.1",
            1,
            "BlockLayer",
            "example.com/blocklayer",
            "cn-beijing.1",
            nodes=("cn-beijing.1",),
        ),
        expected(
            "blocklayer-cn-beijing.2",
            1,
            "BlockLayer",
            "example.com/blocklayer",
            "cn-beijing.2",
            nodes=("cn-beijing.2",),
        ),
    ]
    assert result.report.defaulted == [
        "node cn-beijing.1 has no BlockLayer label: a stand-in BlockLayer domain holds it alone",
        "node cn-beijing.2 has no BlockLayer label: a stand-in BlockLayer domain holds it alone",
    ]


def test_preemption_cluster_with_only_the_node_layer_has_no_hypernodes() -> None:
    result = hn.from_cluster_network_topology(cnt(_two_node_cnt()), parse_nodes(preemption_nodes()))
    assert dump(result) == []
    assert result.report.refused == []


# --- ClusterNetworkTopology status --------------------------------------------------------------


def _info(layer: str, name: str) -> JsonDict:
    return {"topologyLayer": layer, "topologyName": name}


SEED_DETAIL_STATUS = [
    {
        "childTopologyLayer": "SpineLayer",
        "childTopologyNames": ["spine-0", "spine-1", "spine-2"],
        "nodeNum": 12,
        "topologyInfo": _info("ClusterTopologyLayer", ""),
    },
    {
        "childTopologyLayer": "BlockLayer",
        "childTopologyNames": ["block-0", "block-1"],
        "nodeNum": 5,
        "parentTopologyInfo": _info("ClusterTopologyLayer", ""),
        "topologyInfo": _info("SpineLayer", "spine-0"),
    },
    {
        "childTopologyLayer": "NodeTopologyLayer",
        "nodeNum": 3,
        "parentTopologyInfo": _info("SpineLayer", "spine-0"),
        "topologyInfo": _info("BlockLayer", "block-0"),
    },
    {
        "childTopologyLayer": "NodeTopologyLayer",
        "nodeNum": 2,
        "parentTopologyInfo": _info("SpineLayer", "spine-0"),
        "topologyInfo": _info("BlockLayer", "block-1"),
    },
    {
        "childTopologyLayer": "BlockLayer",
        "childTopologyNames": ["block-2", "block-3"],
        "nodeNum": 4,
        "parentTopologyInfo": _info("ClusterTopologyLayer", ""),
        "topologyInfo": _info("SpineLayer", "spine-1"),
    },
    {
        "childTopologyLayer": "NodeTopologyLayer",
        "nodeNum": 2,
        "parentTopologyInfo": _info("SpineLayer", "spine-1"),
        "topologyInfo": _info("BlockLayer", "block-2"),
    },
    {
        "childTopologyLayer": "NodeTopologyLayer",
        "nodeNum": 2,
        "parentTopologyInfo": _info("SpineLayer", "spine-1"),
        "topologyInfo": _info("BlockLayer", "block-3"),
    },
    {
        "childTopologyLayer": "BlockLayer",
        "childTopologyNames": ["block-4"],
        "nodeNum": 3,
        "parentTopologyInfo": _info("ClusterTopologyLayer", ""),
        "topologyInfo": _info("SpineLayer", "spine-2"),
    },
    {
        "childTopologyLayer": "NodeTopologyLayer",
        "nodeNum": 3,
        "parentTopologyInfo": _info("SpineLayer", "spine-2"),
        "topologyInfo": _info("BlockLayer", "block-4"),
    },
]


def _sorted_keys(value: Any) -> Any:
    """The object as kubectl prints it: keys in order, so comparisons see order too."""
    if isinstance(value, dict):
        return {k: _sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(v) for v in value]
    return value


def test_detail_status_is_exactly_what_koordinator_writes_for_the_seed_cluster() -> None:
    status = hn.detail_status(cnt(), parse_nodes(seed_nodes())).to_dict()
    assert list(status) == ["detailStatus"]
    assert [_sorted_keys(e) for e in status["detailStatus"]] == SEED_DETAIL_STATUS


def test_detail_status_counts_nodes_when_there_are_no_layers_and_skips_unlabelled_nodes() -> None:
    only_nodes = hn.detail_status(cnt(_two_node_cnt()), parse_nodes(preemption_nodes())).to_dict()
    assert only_nodes == {
        "detailStatus": [
            {
                "topologyInfo": _info("ClusterTopologyLayer", ""),
                "childTopologyLayer": "NodeTopologyLayer",
                "nodeNum": 2,
            },
        ]
    }
    unlabelled = hn.detail_status(cnt(), parse_nodes(preemption_nodes())).to_dict()
    assert unlabelled == {
        "detailStatus": [
            {
                "topologyInfo": _info("ClusterTopologyLayer", ""),
                "childTopologyLayer": "SpineLayer",
                "nodeNum": 0,
            },
        ]
    }


# --- names ----------------------------------------------------------------------------------------


def test_a_value_under_two_parents_is_two_hypernodes_with_stable_hashed_names() -> None:
    nodes = [
        node("n1", {SPINE_KEY: "s1", BLOCK_KEY: "b0"}),
        node("n2", {SPINE_KEY: "s2", BLOCK_KEY: "b0"}),
        node("n3", {SPINE_KEY: "s2", BLOCK_KEY: "b1"}),
    ]
    first = hn.from_cluster_network_topology(cnt(), parse_nodes(nodes))
    again = hn.from_cluster_network_topology(cnt(), parse_nodes(list(reversed(nodes))))
    names = [h.name for h in first.hypernodes]
    assert names == [h.name for h in again.hypernodes]
    b0 = [n for n in names if n.startswith("blocklayer-b0")]
    assert len(b0) == 2 and len(set(b0)) == 2
    assert all(re.fullmatch(r"blocklayer-b0-[0-9a-f]{8}", n) for n in b0)
    assert "blocklayer-b1" in names  # unique values keep the plain name
    by_name = {h.name: h for h in first.hypernodes}
    parents = {
        m.selector.exact_match.name: h.name
        for h in first.hypernodes
        for m in h.spec.members
        if m.type == "HyperNode" and m.selector.exact_match
    }
    assert {parents[n] for n in b0} == {"spinelayer-s1", "spinelayer-s2"}
    assert {by_name[n].metadata.annotation(hn.LABEL_VALUE_ANNOTATION) for n in b0} == {"b0"}


def test_values_that_sanitize_alike_get_distinct_names_and_every_name_is_dns1123() -> None:
    nodes = [
        node("n1", {SPINE_KEY: "S1", BLOCK_KEY: "Rack_A"}),
        node("n2", {SPINE_KEY: "S1", BLOCK_KEY: "rack-a"}),
        node("n3", {SPINE_KEY: "S1", BLOCK_KEY: "x" * 62 + "Z"}),
        node("n4", {SPINE_KEY: "S1", BLOCK_KEY: "..weird..value.."}),
    ]
    result = hn.from_cluster_network_topology(cnt(), parse_nodes(nodes))
    names = [h.name for h in result.hypernodes]
    assert len(names) == len(set(names)) == 5
    assert all(DNS1123.match(n) and len(n) <= 253 for n in names)
    racks = sorted(n for n in names if n.startswith("blocklayer-rack-a"))
    assert len(racks) == 2 and all(re.fullmatch(r"blocklayer-rack-a-[0-9a-f]{8}", n) for n in racks)
    assert "spinelayer-s1" in names
    assert "blocklayer-weird.value" in names


# --- other label dialects --------------------------------------------------------------------------


def test_topograph_labels_skip_levels_no_node_carries() -> None:
    result = hn.from_node_labels(parse_nodes(seed_nodes()))
    assert [(h.name, h.spec.tier, h.spec.tier_name) for h in result.hypernodes] == [
        ("spine-spine-0", 2, "spine"),
        ("block-block-0", 1, "block"),
        ("block-block-1", 1, "block"),
        ("spine-spine-1", 2, "spine"),
        ("block-block-2", 1, "block"),
        ("block-block-3", 1, "block"),
        ("spine-spine-2", 2, "spine"),
        ("block-block-4", 1, "block"),
    ]
    assert result.report.carried[0] == "levels block -> tier 1, spine -> tier 2"


def test_topograph_accelerator_and_datacenter_levels_and_the_kubernetes_io_prefix() -> None:
    nodes = [
        node(
            "n0",
            {
                "network.topology.nvidia.com/accelerator": "nvl1",
                BLOCK_KEY: "b1",
                "network.topology.nvidia.com/datacenter": "dc1",
            },
        ),
        node(
            "n1",
            {
                "network.topology.nvidia.com/accelerator": "nvl1",
                BLOCK_KEY: "b1",
                "network.topology.nvidia.com/datacenter": "dc1",
            },
        ),
        # Only the kubernetes.io spelling, and no accelerator: no NVLink domain, so it hangs
        # off its block (NVLink levels get no stand-ins).
        node(
            "n2",
            {
                "network.topology.kubernetes.io/block": "b1",
                "network.topology.kubernetes.io/datacenter": "dc1",
            },
        ),
    ]
    result = hn.from_node_labels(parse_nodes(nodes))
    got = {
        h.name: (
            h.spec.tier,
            h.spec.tier_name,
            sorted(m.selector.exact_match.name for m in h.spec.members if m.selector.exact_match),
        )
        for h in result.hypernodes
    }
    assert got == {
        "datacenter-dc1": (3, "datacenter", ["block-b1"]),
        "block-b1": (2, "block", ["n2", "nvlink-domain-nvl1"]),
        "nvlink-domain-nvl1": (1, "nvlink-domain", ["n0", "n1"]),
    }
    assert result.report.defaulted == []
    assert result.report.carried[:4] == [
        "levels nvlink-domain -> tier 1, block -> tier 2, datacenter -> tier 3",
        "network.topology.nvidia.com/accelerator: HyperNode tier 1 (nvlink-domain)",
        "network.topology.nvidia.com/block: HyperNode tier 2 (block)",
        "network.topology.nvidia.com/datacenter: HyperNode tier 3 (datacenter)",
    ]


def test_kueue_topology_levels_become_tiers_and_hostname_is_the_nodes() -> None:
    topo = kueue.Topology.parse(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Topology",
            "metadata": {"name": "default"},
            "spec": {
                "levels": [
                    {"nodeLabel": "cloud.example.com/block"},
                    {"nodeLabel": "cloud.example.com/rack"},
                    {"nodeLabel": "kubernetes.io/hostname"},
                ]
            },
        }
    )
    nodes = [
        node(f"n{i}", {"cloud.example.com/block": "b1", "cloud.example.com/rack": f"r{i // 2}"})
        for i in range(4)
    ]
    result = hn.from_kueue_topology(topo, parse_nodes(nodes))
    assert [h.to_dict()["spec"] for h in result.hypernodes] == [
        {
            "tier": 2,
            "tierName": "cloud.example.com/block",
            "members": [
                {"type": "HyperNode", "selector": {"exactMatch": {"name": "rack-r0"}}},
                {"type": "HyperNode", "selector": {"exactMatch": {"name": "rack-r1"}}},
            ],
        },
        {
            "tier": 1,
            "tierName": "cloud.example.com/rack",
            "members": [
                {"type": "Node", "selector": {"exactMatch": {"name": "n0"}}},
                {"type": "Node", "selector": {"exactMatch": {"name": "n1"}}},
            ],
        },
        {
            "tier": 1,
            "tierName": "cloud.example.com/rack",
            "members": [
                {"type": "Node", "selector": {"exactMatch": {"name": "n2"}}},
                {"type": "Node", "selector": {"exactMatch": {"name": "n3"}}},
            ],
        },
    ]
    assert [h.name for h in result.hypernodes] == ["block-b1", "rack-r0", "rack-r1"]
    assert {h.metadata.label(hn.SOURCE_LABEL) for h in result.hypernodes} == {"kueue"}


@pytest.mark.parametrize(
    ("levels", "field", "detail"),
    [
        (
            ["kubernetes.io/hostname", "example.com/rack"],
            "spec.levels[0].nodeLabel",
            'Invalid value: "kubernetes.io/hostname": the kubernetes.io/hostname label can only be '
            "used at the lowest "
            "level of topology",
        ),
        (
            ["example.com/rack", "example.com/rack"],
            "spec.levels[1].nodeLabel",
            'Duplicate value: "example.com/rack"',
        ),
    ],
    ids=["hostname-not-lowest", "duplicate-level"],
)
def test_kueue_topology_rules_old_apiservers_do_not_enforce(
    levels: list[str], field: str, detail: str
) -> None:
    topo = kueue.Topology.parse(
        {"metadata": {"name": "t"}, "spec": {"levels": [{"nodeLabel": k} for k in levels]}}
    )
    with pytest.raises(InvalidSpecError) as exc:
        hn.from_kueue_topology(topo, [])
    assert (exc.value.field_path, exc.value.detail) == (field, detail)


def test_a_layer_without_label_keys_is_refused_naming_it() -> None:
    raw = seed_cnt()
    del raw["spec"]["networkTopologySpec"][1]["labelKey"]
    with pytest.raises(InvalidSpecError) as exc:
        hn.from_cluster_network_topology(cnt(raw), [])
    assert exc.value.field_path == "spec.networkTopologySpec[1].labelKey"
    assert 'layer "BlockLayer" names no node label' in exc.value.detail


# --- HyperNodes -> ClusterNetworkTopology + labels ---------------------------------------------------


def test_seed_hypernodes_give_back_the_seed_layers_and_need_no_relabelling() -> None:
    hypernodes = [HyperNode.parse(h) for h in SEED_HYPERNODES]
    result = hn.to_cluster_network_topology(hypernodes, parse_nodes(seed_nodes()))
    assert result.cluster_network_topology.to_dict() == seed_cnt() | {
        "spec": {
            "networkTopologySpec": [
                {"topologyLayer": "SpineLayer", "labelKey": [SPINE_KEY]},
                {"topologyLayer": "BlockLayer", "parentTopologyLayer": "SpineLayer", "labelKey": [BLOCK_KEY]},
                {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
            ]
        }
    }
    assert result.node_patches == ()


def test_unlabelled_nodes_get_the_labels_that_rebuild_the_tree_and_stale_ones_go() -> None:
    hypernodes = [HyperNode.parse(h) for h in SEED_HYPERNODES]
    nodes = [node(f"node-{i}") for i in range(12)]
    nodes[4]["metadata"]["labels"][BLOCK_KEY] = "block-9"  # stale, must be corrected
    nodes.append(node("node-12", {SPINE_KEY: "spine-0", "other": "x"}))  # in no HyperNode: loses ours only
    result = hn.to_cluster_network_topology(hypernodes, parse_nodes(nodes))
    patches = {p.node: p.merge_patch() for p in result.node_patches}
    assert patches["node-0"] == {"metadata": {"labels": {SPINE_KEY: "spine-0", BLOCK_KEY: "block-0"}}}
    assert patches["node-4"] == {"metadata": {"labels": {SPINE_KEY: "spine-0", BLOCK_KEY: "block-1"}}}
    assert patches["node-11"] == {"metadata": {"labels": {SPINE_KEY: "spine-2", BLOCK_KEY: "block-4"}}}
    assert patches["node-12"] == {"metadata": {"labels": {SPINE_KEY: None}}}
    assert len(patches) == 13
    relabelled = parse_nodes(
        [
            p.apply(n)
            for p, n in zip(
                sorted(result.node_patches, key=lambda p: int(p.node.split("-")[1])), nodes, strict=True
            )
        ]
    )
    again = hn.from_cluster_network_topology(result.cluster_network_topology, relabelled)
    assert dump(again) == SEED_HYPERNODES


def _hn(
    name: str,
    tier: int,
    *,
    nodes: tuple[str, ...] = (),
    children: tuple[str, ...] = (),
    tier_name: str | None = None,
) -> HyperNode:
    members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in nodes]
    members += [{"type": "HyperNode", "selector": {"exactMatch": {"name": c}}} for c in children]
    spec: JsonDict = {"tier": tier, "members": members}
    if tier_name:
        spec["tierName"] = tier_name
    return HyperNode.parse({"metadata": {"name": name}, "spec": spec})


def test_skipped_tiers_and_short_branches_get_stand_in_labels_that_keep_every_tier_bound() -> None:
    hypernodes = [
        _hn("dc", 3, children=("rack-a", "row-b"), tier_name="dc"),
        _hn("rack-a", 1, nodes=("n1", "n2"), tier_name="rack"),  # tier 2 skipped under dc
        _hn("row-b", 2, children=("rack-b",), tier_name="row"),
        _hn("rack-b", 1, nodes=("n3",), tier_name="rack"),
        _hn("row-c", 2, nodes=("n4",), tier_name="row"),  # a root below the top, nodes without a rack
    ]
    nodes = [Node.parse(node(n)) for n in ("n1", "n2", "n3", "n4", "n5")]
    result = hn.to_cluster_network_topology(hypernodes, nodes)
    t = hn.TIER_LABEL_PREFIX
    assert {p.node: dict(p.set) for p in result.node_patches} == {
        "n1": {f"{t}1": "rack-a", f"{t}2": "rack-a", f"{t}3": "dc"},
        "n2": {f"{t}1": "rack-a", f"{t}2": "rack-a", f"{t}3": "dc"},
        "n3": {f"{t}1": "rack-b", f"{t}2": "row-b", f"{t}3": "dc"},
        "n4": {f"{t}1": "n4", f"{t}2": "row-c", f"{t}3": "row-c"},
    }
    assert [s.to_dict() for s in result.cluster_network_topology.spec.network_topology_spec] == [
        {"topologyLayer": "dc", "labelKey": [f"{t}3"]},
        {"topologyLayer": "row", "parentTopologyLayer": "dc", "labelKey": [f"{t}2"]},
        {"topologyLayer": "rack", "parentTopologyLayer": "row", "labelKey": [f"{t}1"]},
        {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "rack"},
    ]
    assert (
        "4 stand-in labels where a branch skips a tier or ends below the top tier" in result.report.defaulted
    )
    assert "1 nodes in no HyperNode stay unlabelled (in no domain, as in Volcano)" in result.report.carried


def test_tiers_without_a_shared_tier_name_get_numbered_layers() -> None:
    hypernodes = [
        _hn("top", 2, children=("a", "b")),
        _hn("a", 1, nodes=("n1",), tier_name="x"),
        _hn("b", 1, nodes=("n2",), tier_name="y"),
    ]
    result = hn.to_cluster_network_topology(hypernodes, [])
    layers = [s.topology_layer for s in result.cluster_network_topology.spec.network_topology_spec]
    assert layers == ["Tier2Layer", "Tier1Layer", "NodeTopologyLayer"]
    assert "tier 1: layer Tier1Layer (its HyperNodes share no single tierName)" in result.report.defaulted
    # Nodes named only by HyperNodes (not in the input) still get their labels.
    assert {p.node for p in result.node_patches} == {"n1", "n2"}


def test_hypernode_tree_problems_are_reported_not_raised() -> None:
    hypernodes = [_hn("a", 1, nodes=("n1",), tier_name="rack"), _hn("b", 1, nodes=("n1",), tier_name="rack")]
    result = hn.to_cluster_network_topology(hypernodes, [])
    assert result.report.refused == ["node n1 has two parents (a, b); kept a"]


def test_hypernodes_from_volcano_label_discovery_keep_their_node_labels() -> None:
    # Volcano's label discoverer names the tier after the node label and puts that label,
    # with the domain's value, on the HyperNode (its names end in a random suffix).
    def discovered(name: str, tier: int, key: str, value: str, members: list[tuple[str, str]]) -> HyperNode:
        return HyperNode.parse(
            {
                "metadata": {
                    "name": name,
                    "labels": {"volcano.sh/network-topology-source": "label", key: value},
                },
                "spec": {
                    "tier": tier,
                    "tierName": key,
                    "members": [
                        {"type": kind, "selector": {"exactMatch": {"name": n}}} for kind, n in members
                    ],
                },
            }
        )

    hypernodes = [
        discovered(
            "hypernode-x7k2p",
            2,
            "volcano.sh/hypercluster",
            "s4",
            [("HyperNode", "hypernode-a1b2c"), ("HyperNode", "hypernode-d3e4f")],
        ),
        discovered(
            "hypernode-a1b2c", 1, "volcano.sh/hypernode", "s0", [("Node", "node0"), ("Node", "node1")]
        ),
        discovered("hypernode-d3e4f", 1, "volcano.sh/hypernode", "s1", [("Node", "node2")]),
    ]
    nodes = [
        node("node0", {"volcano.sh/hypernode": "s0", "volcano.sh/hypercluster": "s4"}),
        node("node1", {"volcano.sh/hypernode": "s0", "volcano.sh/hypercluster": "s4"}),
        node("node2", {"volcano.sh/hypernode": "s1"}),  # missing its hypercluster label
    ]
    result = hn.to_cluster_network_topology(hypernodes, parse_nodes(nodes))
    assert [s.to_dict() for s in result.cluster_network_topology.spec.network_topology_spec] == [
        {"topologyLayer": "volcano.sh/hypercluster", "labelKey": ["volcano.sh/hypercluster"]},
        {
            "topologyLayer": "volcano.sh/hypernode",
            "parentTopologyLayer": "volcano.sh/hypercluster",
            "labelKey": ["volcano.sh/hypernode"],
        },
        {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "volcano.sh/hypernode"},
    ]
    assert [(p.node, dict(p.set), p.remove) for p in result.node_patches] == [
        ("node2", {"volcano.sh/hypercluster": "s4"}, ())
    ]
