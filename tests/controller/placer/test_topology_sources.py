"""Which tree the scheduler uses (`cluster.choose_topology` / `topology_tree`): HyperNodes that
are not topobridge's copies of a description in view, then the ClusterNetworkTopology
`default`, then a Kueue Topology, then topograph / GPU Feature Discovery node labels, else none;
unusable sources are warnings, never exceptions. Also: `ClusterState` rebuilds the tree when a
Kueue Topology moves and only then, and scenarios load and simulate with Kueue Topologies."""

from __future__ import annotations

from typing import Any

import pytest
from nvl72_seed import CLIQUE, RACKS, TIER0, TIER1, nvl72_nodes
from placer_objects import cnt, hypernode, members, pod, volcano_gang

from controller.placer.cluster import ClusterState, Kind, choose_topology, pick_kueue_topology, topology_tree
from controller.placer.scenario import load_scenario, prepare, simulate
from translations import hypernodes as hntr
from translations import koordinator as koord
from translations import kueue, volcano
from translations.core import Node
from translations.errors import ScenarioError

Obj = dict[str, Any]
NODES = [Node.parse(n) for n in nvl72_nodes()]
FABRIC_CNT = cnt(levels=[("LeafLayer", TIER0), ("SpineLayer", TIER1)])
BROKEN_CNT: Obj = {
    **FABRIC_CNT,
    "spec": {
        "networkTopologySpec": [
            {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "LeafLayer"},
            {"topologyLayer": "LeafLayer", "labelKey": [TIER0], "parentTopologyLayer": "NoSuchLayer"},
        ]
    },
}


def kueue_topology(name: str, *levels: str) -> Obj:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Topology",
        "metadata": {"name": name},
        "spec": {"levels": [{"nodeLabel": lv} for lv in levels]},
    }


def ours(name: str, source: str) -> Obj:
    hn = hypernode(name, 1, [("Node", "gb200-r0-t0")])
    hn["metadata"]["labels"] = {hntr.MANAGED_BY_LABEL: hntr.MANAGED_BY, hntr.SOURCE_LABEL: source}
    return hn


FOREIGN = hypernode("volcano-own", 1, [("Node", "gb200-r0-t0"), ("Node", "gb200-r0-t1")])
RACK_LEVEL = kueue_topology("default", TIER1, TIER0)
OTHER = kueue_topology("other", TIER1)
DUPLICATE = kueue_topology("dup", TIER0, TIER0)
CNT_BROKEN = (
    "ClusterNetworkTopology default: left out: spec.networkTopologySpec[1].parentTopologyLayer: "
    'Not found: "NoSuchLayer": no layer has this topologyLayer'
)

PRECEDENCE = [
    pytest.param([FOREIGN, ours("c", "koordinator")], FABRIC_CNT, [RACK_LEVEL], None, "hypernode", [],
                 id="foreign-hypernodes-first"),
    pytest.param([ours("c", "koordinator")], FABRIC_CNT, [RACK_LEVEL], None, "koordinator", [],
                 id="hypernodes-copied-from-the-cnt-leave-it-in-charge"),
    pytest.param([ours("c", "koordinator")], None, [], None, "hypernode", [],
                 id="copies-of-a-cnt-no-longer-there-are-used"),
    pytest.param([ours("k", "kueue")], None, [RACK_LEVEL], None, "kueue", [],
                 id="hypernodes-copied-from-kueue-leave-it-in-charge"),
    pytest.param([ours("k", "kueue")], None, [], None, "hypernode", [],
                 id="copies-of-a-kueue-topology-not-in-view-are-used"),
    pytest.param([ours("t", "topograph")], None, [], None, "labels", [],
                 id="copies-of-node-labels-leave-the-labels-in-charge"),
    pytest.param([], FABRIC_CNT, [RACK_LEVEL], None, "koordinator", [], id="cnt-before-kueue"),
    pytest.param([], BROKEN_CNT, [RACK_LEVEL], None, "kueue", [CNT_BROKEN], id="unusable-cnt-warns-then-kueue"),
    pytest.param([], BROKEN_CNT, [], None, "labels", [CNT_BROKEN], id="unusable-cnt-warns-then-labels"),
    pytest.param([], None, [RACK_LEVEL], None, "kueue", [], id="the-only-kueue-topology"),
    pytest.param([], None, [RACK_LEVEL, OTHER], None, "kueue", [], id="several-kueue-the-one-named-default"),
    pytest.param([], None, [RACK_LEVEL, OTHER], "other", "kueue", [], id="several-kueue-the-one-named-by-the-setting"),
    pytest.param([], None, [OTHER, DUPLICATE], None, "labels",
                 ["Kueue Topologies dup, other: none read: more than one, none named default"],
                 id="several-kueue-none-named-default-warns-then-labels"),
    pytest.param([], None, [RACK_LEVEL], "absent", "labels",
                 ["Kueue Topology absent: not found (named as the scheduler's)"], id="kueue-named-but-absent"),
    pytest.param([], None, [DUPLICATE], None, "labels",
                 ['Kueue Topology dup: left out: spec.levels[1].nodeLabel: Duplicate value: '
                  '"fabric.topograph.run/tier-0"'],
                 id="unusable-kueue-warns-then-labels"),
    pytest.param([], None, [], None, "labels", [], id="node-labels-last"),
]  # fmt: skip


@pytest.mark.parametrize(("hns", "default", "topologies", "name", "source", "unusable"), PRECEDENCE)
def test_precedence_of_topology_sources(
    hns: list[Obj],
    default: Obj | None,
    topologies: list[Obj],
    name: str | None,
    source: str,
    unusable: list[str],
) -> None:
    hypernodes = [volcano.HyperNode.parse(h) for h in hns]
    the_cnt = koord.ClusterNetworkTopology.parse(default) if default else None
    topos = [kueue.Topology.parse(t) for t in topologies]
    choice = choose_topology(NODES, hypernodes, the_cnt, topos, kueue_topology=name)
    assert (choice.tree.source, list(choice.unusable)) == (source, unusable)
    tree = topology_tree(NODES, hypernodes, the_cnt, topos, kueue_topology=name)
    assert tree.source == source
    assert list(tree.warnings[: len(unusable)]) == unusable, "the sources passed over come first"


def test_the_kueue_topology_chosen_is_the_one_named() -> None:
    topos = [kueue.Topology.parse(t) for t in (RACK_LEVEL, OTHER)]
    assert pick_kueue_topology(topos, "other")[0] is topos[1]
    assert pick_kueue_topology(topos, None)[0] is topos[0]
    assert pick_kueue_topology([], None) == (None, None)


def test_no_labels_and_no_objects_is_no_topology() -> None:
    bare = [Node.parse({"metadata": {"name": "n0"}})]
    assert topology_tree(bare, [], None).source == "none"


def test_cluster_state_rebuilds_the_tree_when_a_kueue_topology_moves_and_only_then() -> None:
    state = ClusterState()
    for n in NODES:
        state.put(Kind.NODE, n.name, n)
    first = state.view()
    assert first.tree.source == "labels" and first.index.clique_tier == 1
    p = load_scenario([pod("p", cpu="1")]).pods[0]
    state.put(Kind.POD, p.key, p)
    assert state.view().index is first.index, "a pod does not rebuild the tree"
    generation = state.topology_generation
    state.put(Kind.KUEUE_TOPOLOGY, "default", kueue.Topology.parse(RACK_LEVEL))
    assert state.topology_generation == generation + 1
    second = state.view()
    assert second.tree.source == "kueue" and second.index is not first.index
    assert second.index.clique_tier is None
    state.put(Kind.KUEUE_TOPOLOGY, "dup", kueue.Topology.parse(DUPLICATE))
    assert state.view().tree.source == "kueue", "of two, the one named default"
    state.delete(Kind.KUEUE_TOPOLOGY, "default")
    third = state.view()
    assert third.tree.source == "labels"
    assert third.warnings[0].startswith("Kueue Topology dup: left out: spec.levels[1].nodeLabel")
    state.put(Kind.KUEUE_TOPOLOGY, "other", kueue.Topology.parse(OTHER))
    assert (
        state.view().warnings[0]
        == "Kueue Topologies dup, other: none read: more than one, none named default"
    )
    named = ClusterState(kueue_topology="other")
    for kind in (Kind.NODE, Kind.KUEUE_TOPOLOGY):
        for key, obj in state.store(kind).items():
            named.put(kind, key, obj)
    assert named.view().tree.source == "kueue" and not named.view().warnings


def test_scenarios_read_kueue_topologies_and_the_strict_ones_refuse_a_broken_one() -> None:
    sc = load_scenario(
        [*nvl72_nodes(), RACK_LEVEL, kueue_topology("other-group", TIER0) | {"apiVersion": "x.io/v1"}]
    )
    assert [t.name for t in sc.kueue_topologies] == ["default"]
    assert sc.warnings == [
        "object 15 (Topology other-group): skipped: kind Topology plays no part in placement"
    ]
    assert prepare(sc).tree.source == "kueue"
    with pytest.raises(ScenarioError, match=r"^Kueue Topology dup: left out: spec\.levels\[1\]\.nodeLabel"):
        prepare(load_scenario([*nvl72_nodes(), DUPLICATE]))
    lenient = prepare(load_scenario([*nvl72_nodes(), DUPLICATE], lenient=True))
    assert lenient.tree.source == "labels"
    assert lenient.warnings[0].startswith("Kueue Topology dup: left out:")


GANG = [
    volcano_gang("train", 2, mode="hard", tier=1),
    *members("train", 2, dialect="volcano", cpu="1", gpu="4"),
]
SIMULATED = [
    pytest.param([], "nvlink-clique/", 1, id="labels-tier-1-is-an-nvlink-clique"),
    pytest.param([RACK_LEVEL], f"{TIER0}/", 1, id="kueue-tier-1-is-a-leaf-switch"),
]


@pytest.mark.parametrize(("extra", "domain_prefix", "tier"), SIMULATED)
def test_simulate_places_a_tier_1_gang_in_the_chosen_trees_tier_1(
    extra: list[Obj], domain_prefix: str, tier: int
) -> None:
    result = simulate(load_scenario([*nvl72_nodes(), *extra, *GANG]))
    domain, got_tier = result.gangs["volcano:default/train"]
    assert domain.startswith(domain_prefix) and got_tier == tier
    assert len(result.bound) == 2


def test_a_gang_held_to_the_clique_tier_by_name_stays_in_one_clique() -> None:
    gang = [volcano_gang("nv", 2, mode="hard", tier_name="nvlink-clique")]
    gang += members("nv", 2, dialect="volcano", cpu="1", gpu="4")
    result = simulate(load_scenario([*nvl72_nodes(), *gang]))
    nodes = [result.bound[f"default/nv-{i}"] for i in range(2)]
    cliques = {n["metadata"]["labels"][CLIQUE] for n in nvl72_nodes() if n["metadata"]["name"] in nodes}
    assert len(cliques) == 1 and next(iter(cliques)).startswith(RACKS)
