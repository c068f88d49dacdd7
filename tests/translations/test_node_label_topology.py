"""The tree node labels describe with no description object (`topology.from_node_labels`):
topograph v1.0 fabric tiers and accelerator domains, topograph v0.x labels, GPU Feature
Discovery cliques, how they nest, the tiers each level gets, and the warnings odd labels give;
plus `clique_tier` and the Kueue Topology builder."""

from __future__ import annotations

import random
from typing import Any

import pytest
from nvl72_seed import (
    CLIQUE,
    DOMAIN,
    NVL72_TREE,
    RACKS,
    SUB_DOMAIN,
    TIER0,
    TIER1,
    TIER2,
    node,
    nvl72_nodes,
    outline,
)

from controller.placer.snapshot import ClusterIndex
from translations import kueue
from translations import topology as topo
from translations.core import Node
from translations.errors import InvalidSpecError
from translations.volcano import HyperNode

JsonDict = dict[str, Any]
U0, U1 = RACKS[0], RACKS[1]
OLD = "network.topology.nvidia.com/"


def tree_of(raw: list[JsonDict]) -> topo.TopologyTree:
    return topo.from_node_labels([Node.parse(n) for n in raw])


def nodes(*specs: tuple[str, dict[str, str]]) -> list[JsonDict]:
    return [node(name, labels) for name, labels in specs]


def _with_domain_from_clique(raw: JsonDict) -> JsonDict:
    labels = raw["metadata"]["labels"]
    if CLIQUE in labels:
        labels[DOMAIN] = labels[CLIQUE]
    return raw


CASES = [
    pytest.param(
        nvl72_nodes(),
        NVL72_TREE,
        [],
        id="nvl72-3-racks-2-cliques-under-2-fabric-tiers",
    ),
    pytest.param(
        nvl72_nodes(fabric=False),
        [
            f"nvlink-rack/{RACKS[0]} t2",
            f"  nvlink-clique/{RACKS[0]}.1 t1: gb200-r0-t0 gb200-r0-t1",
            f"  nvlink-clique/{RACKS[0]}.2 t1: gb200-r0-t2 gb200-r0-t3",
            f"nvlink-rack/{RACKS[1]} t2",
            f"  nvlink-clique/{RACKS[1]}.1 t1: gb200-r1-t0 gb200-r1-t1",
            f"  nvlink-clique/{RACKS[1]}.2 t1: gb200-r1-t2 gb200-r1-t3",
            f"nvlink-rack/{RACKS[2]} t2",
            f"  nvlink-clique/{RACKS[2]}.1 t1: gb200-r2-t0 gb200-r2-t1",
            f"  nvlink-clique/{RACKS[2]}.2 t1: gb200-r2-t2 gb200-r2-t3",
        ],
        [],
        id="gfd-cliques-only-racks-are-roots-cpu-node-in-none",
    ),
    pytest.param(
        nvl72_nodes(cliques=False),
        [
            "fabric-tier-1/S-spine-0 t2",
            "  fabric-tier-0/S-leaf-0 t1: gb200-r0-t0 gb200-r0-t1 gb200-r0-t2 gb200-r0-t3 gb200-r1-t0 gb200-r1-t1",
            "  fabric-tier-0/S-leaf-1 t1: cpu-0 gb200-r1-t2 gb200-r1-t3",
            "fabric-tier-1/S-spine-1 t2",
            "  fabric-tier-0/S-leaf-2 t1: gb200-r2-t0 gb200-r2-t1 gb200-r2-t2 gb200-r2-t3",
        ],
        [],
        id="fabric-only-tier-N-is-volcano-tier-N+1",
    ),
    pytest.param(
        # topograph's documented node: NVLink domain nvl1, sub-domain nvl1.rack01, switches s1 < s2 < s3.
        nodes(
            ("a", {DOMAIN: "nvl1", SUB_DOMAIN: "nvl1.rack01", TIER0: "s1", TIER1: "s2", TIER2: "s3"}),
            ("b", {DOMAIN: "nvl1", SUB_DOMAIN: "nvl1.rack02", TIER0: "s1", TIER1: "s2", TIER2: "s3"}),
            ("c", {DOMAIN: "nvl1", TIER0: "s1", TIER1: "s2", TIER2: "s3"}),
        ),
        [
            "fabric-tier-2/s3 t5",
            "  fabric-tier-1/s2 t4",
            "    fabric-tier-0/s1 t3",
            "      nvlink-domain/nvl1 t2: c",
            "        nvlink-sub-domain/nvl1.rack01 t1: a",
            "        nvlink-sub-domain/nvl1.rack02 t1: b",
        ],
        [],
        id="topograph-accelerator-domain-and-sub-domain-under-3-switches",
    ),
    pytest.param(
        # InfiniBand providers copy the clique ID into the accelerator domain: one domain, not two.
        [_with_domain_from_clique(n) for n in nvl72_nodes()],
        NVL72_TREE,
        [],
        id="accelerator-domain-equal-to-the-clique-is-the-clique",
    ),
    pytest.param(
        nodes(
            ("a", {DOMAIN: U0, CLIQUE: f"{U0}.1"}),
            ("b", {DOMAIN: U0, CLIQUE: f"{U0}.2"}),
        ),
        [f"nvlink-rack/{U0} t2", f"  nvlink-clique/{U0}.1 t1: a", f"  nvlink-clique/{U0}.2 t1: b"],
        [],
        id="accelerator-domain-equal-to-the-rack-is-the-rack",
    ),
    pytest.param(
        # AWS: the accelerator domain is the capacity block, one NVL72 rack.
        nodes(
            ("a", {DOMAIN: "cr-0123", CLIQUE: f"{U0}.1", TIER0: "l1"}),
            ("b", {DOMAIN: "cr-0123", CLIQUE: f"{U0}.2", TIER0: "l1"}),
            ("c", {TIER0: "l1"}),
        ),
        [
            "fabric-tier-0/l1 t4: c",
            "  nvlink-domain/cr-0123 t3",
            f"    nvlink-rack/{U0} t2",
            f"      nvlink-clique/{U0}.1 t1: a",
            f"      nvlink-clique/{U0}.2 t1: b",
        ],
        [],
        id="capacity-block-domain-holds-its-rack",
    ),
    pytest.param(
        nodes(
            ("a", {OLD + "block": "b1", OLD + "spine": "s1", CLIQUE: f"{U0}.1"}),
            ("b", {OLD + "leaf": "b2", OLD + "spine": "s1", CLIQUE: f"{U0}.1"}),
            ("c", {OLD + "block": "b2", OLD + "spine": "s1", OLD + "accelerator": "nvl9"}),
        ),
        [
            "spine/s1 t5",
            "  block/b2 t4",
            "    nvlink-domain/nvl9 t3: c",
            f"  nvlink-rack/{U0} t2",
            f"    nvlink-clique/{U0}.1 t1: a b",
        ],
        [],
        id="topograph-v0-labels-with-gfd-cliques",
    ),
    pytest.param(
        nodes(
            ("a", {TIER0: "leaf-1", TIER1: "spine-a"}),
            ("b", {TIER0: "leaf-1", TIER1: "spine-b"}),
            ("c", {TIER0: "leaf-2", TIER1: "spine-b"}),
        ),
        [
            "fabric-tier-1/spine-a t2",
            "  fabric-tier-0/spine-a/leaf-1 t1: a",
            "fabric-tier-1/spine-b t2",
            "  fabric-tier-0/leaf-2 t1: c",
            "  fabric-tier-0/spine-b/leaf-1 t1: b",
        ],
        [],
        id="fabric-values-unique-only-within-their-parent",
    ),
    pytest.param(
        nodes(
            ("bare", {}),
            ("gpu-no-fabric", {CLIQUE: f"{U0}.2"}),
            ("spine-only", {TIER1: "s"}),
            ("a", {TIER0: "l", TIER1: "s", CLIQUE: f"{U0}.1"}),
        ),
        [
            "fabric-tier-1/s t4: spine-only",
            "  fabric-tier-0/l t3",
            f"    nvlink-rack/{U0} t2",
            f"      nvlink-clique/{U0}.1 t1: a",
            f"      nvlink-clique/{U0}.2 t1: gpu-no-fabric",
        ],
        [],
        id="nodes-missing-labels-follow-what-they-carry",
    ),
]


@pytest.mark.parametrize(("raw", "want", "warnings"), CASES)
def test_node_label_trees(raw: list[JsonDict], want: list[str], warnings: list[str]) -> None:
    tree = tree_of(raw)
    assert outline(tree) == want
    assert list(tree.warnings) == warnings
    assert tree.source == "labels"


ODD = [
    pytest.param(
        nodes(
            ("a", {CLIQUE: "abc"}), ("b", {CLIQUE: "abc"}), ("c", {CLIQUE: ".7"}), ("d", {CLIQUE: f"{U0}."})
        ),
        [f"nvlink-clique/{U0}. t1: d", "nvlink-clique/.7 t1: c", "nvlink-clique/abc t1: a b"],
        [
            'node a and 1 more: nvidia.com/gpu.clique="abc" is not <ClusterUUID>.<CliqueID>: a clique in no rack',
            'node c: nvidia.com/gpu.clique=".7" is not <ClusterUUID>.<CliqueID>: a clique in no rack',
            f'node d: nvidia.com/gpu.clique="{U0}." is not <ClusterUUID>.<CliqueID>: a clique in no rack',
        ],
        id="clique-values-without-a-dot-or-with-an-empty-part",
    ),
    pytest.param(
        nodes(("a", {CLIQUE: "", TIER0: ""}), ("b", {TIER0: "l"})),
        ["fabric-tier-0/l t1: b"],
        [
            "node a: label fabric.topograph.run/tier-0 ignored: its value is empty",
            "node a: label nvidia.com/gpu.clique ignored: its value is empty",
        ],
        id="empty-values-are-no-label",
    ),
    pytest.param(
        nodes(("a", {"fabric.topograph.run/tier-x": "q", "fabric.topograph.run/tier-01": "r", TIER0: "l"})),
        ["fabric-tier-0/l t1: a"],
        [
            "node a: label fabric.topograph.run/tier-x ignored: the tier is not a number like tier-0",
            "node a: label fabric.topograph.run/tier-01 ignored: the tier is not a number like tier-0",
        ],
        id="tier-keys-that-are-not-numbers",
    ),
    pytest.param(
        nodes(("a", {TIER0: "l", TIER2: "c"}), ("b", {TIER0: "l", TIER1: "s", TIER2: "c"})),
        [
            "fabric-tier-2/c t3",
            "  fabric-tier-0/c/l t1: a",
            "  fabric-tier-1/s t2",
            "    fabric-tier-0/c/s/l t1: b",
        ],
        ["node a: no fabric-tier-1 label between its other fabric labels"],
        id="a-tier-missing-between-two-others",
    ),
    pytest.param(
        nodes(
            ("a", {DOMAIN: "d1", CLIQUE: f"{U0}.1"}),
            ("b", {DOMAIN: "d2", CLIQUE: f"{U0}.2"}),
            ("c", {DOMAIN: "d2", CLIQUE: f"{U1}.1"}),
        ),
        [
            "nvlink-domain/d2 t3",
            f"  nvlink-rack/{U1} t2",
            f"    nvlink-clique/{U1}.1 t1: c",
            f"nvlink-rack/{U0} t2",
            f"  nvlink-clique/{U0}.1 t1: a",
            f"  nvlink-clique/{U0}.2 t1: b",
        ],
        [
            f"nvlink-rack {U0}: nodes a and b disagree on the accelerator domain (d1 vs d2): its nodes "
            "keep only their nvidia.com/gpu.clique levels"
        ],
        id="a-rack-split-between-two-accelerator-domains",
    ),
    pytest.param(
        nodes(
            ("a", {TIER0: "l1", TIER1: "east", CLIQUE: f"{U0}.1"}),
            ("b", {TIER0: "l2", TIER1: "west", CLIQUE: f"{U0}.1"}),
        ),
        [f"nvlink-rack/{U0} t2", f"  nvlink-clique/{U0}.1 t1: a b"],
        [
            f"nvlink-rack {U0}: no fabric domain holds all its nodes (node a is under fabric-tier-1 east, "
            "node b under fabric-tier-1 west): it is placed at the top of the tree"
        ],
        id="a-rack-under-two-fabric-roots",
    ),
    pytest.param(
        nodes(("a", {TIER0: "l"}), ("b", {OLD + "block": "b1"}), ("c", {OLD + "spine": "s"})),
        ["fabric-tier-0/l t1: a"],
        [
            "node b and 1 more: only topograph v0.x fabric labels (network.topology.nvidia.com/...), "
            "while other nodes carry fabric.topograph.run/tier-N: left out of the fabric levels"
        ],
        id="v0-fabric-labels-beside-v1-tiers",
    ),
]


@pytest.mark.parametrize(("raw", "want", "warnings"), ODD)
def test_odd_labels_are_warnings_naming_the_node(
    raw: list[JsonDict], want: list[str], warnings: list[str]
) -> None:
    tree = tree_of(raw)
    assert outline(tree) == want
    assert list(tree.warnings) == warnings


def test_every_parent_is_above_its_children_and_domains_keep_their_source() -> None:
    tree = tree_of(nvl72_nodes())
    for dom in tree.domains.values():
        if dom.parent is not None:
            assert tree.domains[dom.parent].tier > dom.tier, dom.id
    rack = tree.domains[topo.DomainId(f"nvlink-rack/{U0}")]
    assert (rack.label_key, rack.label_value, rack.source) == (None, U0, f"ClusterUUID of {CLIQUE}")
    one = tree.domains[topo.DomainId(f"nvlink-clique/{U0}.1")]
    assert (one.label_key, one.label_value, one.source) == (CLIQUE, f"{U0}.1", CLIQUE)
    spine = tree.domains[topo.DomainId("fabric-tier-1/S-spine-0")]
    assert (spine.label_key, spine.source) == (TIER1, TIER1)
    assert tree.tier_names == {1: "nvlink-clique", 2: "nvlink-rack", 3: "fabric-tier-0", 4: "fabric-tier-1"}


def test_the_tree_does_not_depend_on_node_order() -> None:
    raw = nvl72_nodes()
    want = outline(tree_of(raw))
    for seed in range(5):
        shuffled = raw[:]
        random.Random(seed).shuffle(shuffled)
        assert outline(tree_of(shuffled)) == want


def _hypernode(name: str, tier: int, tier_name: str, nodes: list[str], kind: str = "Node") -> HyperNode:
    return HyperNode.parse(
        {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": name},
            "spec": {
                "tier": tier,
                "tierName": tier_name,
                "members": [{"type": kind, "selector": {"exactMatch": {"name": n}}} for n in nodes],
            },
        }
    )


def _kueue(*levels: str) -> kueue.Topology:
    return kueue.Topology.parse(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Topology",
            "metadata": {"name": "default"},
            "spec": {"levels": [{"nodeLabel": lv} for lv in levels]},
        }
    )


NVL72 = [Node.parse(n) for n in nvl72_nodes()]
CLIQUE_TIERS = [
    pytest.param(topo.from_node_labels(NVL72), 1, id="gfd-labels"),
    pytest.param(
        topo.from_node_labels([Node.parse(n) for n in nvl72_nodes(cliques=False)]), None, id="fabric-only"
    ),
    pytest.param(
        topo.from_hypernodes(
            [
                _hypernode("c1", 1, "nvlink-clique", ["a"]),
                _hypernode("r", 2, "nvlink-rack", ["c1"], "HyperNode"),
            ],
            [],
        ),
        1,
        id="hypernodes-named-by-translate",
    ),
    pytest.param(
        topo.from_kueue_topology(_kueue(TIER1, CLIQUE), NVL72), 1, id="kueue-level-on-the-clique-label"
    ),
    pytest.param(
        topo.from_kueue_topology(_kueue(CLIQUE, TIER0), NVL72), 2, id="kueue-clique-level-above-leaves"
    ),
    pytest.param(topo.TopologyTree.empty(), None, id="no-tree"),
]


@pytest.mark.parametrize(("tree", "want"), CLIQUE_TIERS)
def test_clique_tier_names_the_tier_gpu_gangs_are_held_to(tree: topo.TopologyTree, want: int | None) -> None:
    assert topo.clique_tier(tree) == want
    assert ClusterIndex.build(NVL72, tree).clique_tier == want


def test_kueue_topology_tree_and_its_refusals() -> None:
    tree = topo.from_kueue_topology(_kueue(TIER1, TIER0, "kubernetes.io/hostname"), NVL72)
    assert tree.source == "kueue"
    assert [d for d in tree.roots] == [
        "fabric.topograph.run/tier-1/S-spine-0",
        "fabric.topograph.run/tier-1/S-spine-1",
    ]
    with pytest.raises(InvalidSpecError, match=r'spec\.levels\[1\]\.nodeLabel: Duplicate value: "x"'):
        topo.from_kueue_topology(_kueue("x", "x"), NVL72)


@pytest.mark.parametrize(
    ("labels", "want"),
    [
        pytest.param({TIER0: "l"}, True, id="fabric-tier"),
        pytest.param({DOMAIN: "d"}, True, id="accelerator-domain"),
        pytest.param({CLIQUE: f"{U0}.1"}, True, id="gfd-clique"),
        pytest.param({OLD + "spine": "s"}, True, id="topograph-v0"),
        pytest.param({"topology.kubernetes.io/zone": "z"}, False, id="zone-is-not-read"),
        pytest.param({}, False, id="none"),
    ],
)
def test_which_nodes_carry_topology_labels(labels: dict[str, str], want: bool) -> None:
    assert topo.carries_topology_labels(Node.parse(node("n", labels))) is want


def test_kueue_topology_leaves_out_nodes_lacking_a_level() -> None:
    """Kueue reads only nodes carrying every level's label (`NodeMatchesFlavor`): no stand-in
    domain for a node missing the lowest one, and none for a node without the hostname label
    when hostname is a level."""
    host = "kubernetes.io/hostname"
    nodes = [
        Node.parse(node("full", {"block": "b1", "rack": "r1", host: "full"})),
        Node.parse(node("no-rack", {"block": "b1", host: "no-rack"})),
        Node.parse(node("no-host", {"block": "b1", "rack": "r1"})),
    ]
    nodes[2].metadata.labels.pop(host, None)  # type: ignore[union-attr]
    tree = topo.from_kueue_topology(_kueue("block", "rack", host), nodes)
    assert set(tree.node_domain) == {"full"}
    assert any("no-rack left out" in w for w in tree.warnings)
    assert any(f"no-host left out of the topology: no label for {host}" in w for w in tree.warnings)
    without_host_level = topo.from_kueue_topology(_kueue("block", "rack"), nodes)
    assert set(without_host_level.node_domain) == {"full", "no-host"}
