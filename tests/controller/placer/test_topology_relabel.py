"""A node moved to another topology domain: the view after the move equals a full rebuild.

Random single-node topology-label changes (a node's block or spine label set to another
value, a new one, or removed) on a small cluster under a ClusterNetworkTopology, with bound and
pending pods, a Koordinator gang and a node whose allocatable cannot be read: after each change
the incremental view (which reads again only the quantities of nodes whose model changed, and
carries the discovered gangs over while the tree's tiers are alike) equals a fresh state's
view built from the same objects, warnings included.

A node that stays in the tree of a ClusterNetworkTopology or a Kueue Topology is moved in
place (the view keeps its snapshot): the tree, every table of the index and the records on
shifted rows are compared with the fresh build's, where its domain is emptied (and goes), a
domain is made for it (a stand-in of its own among them), and where a move would rename
another domain (a build again).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from placer_objects import cnt, koord_gang, node, pod

from controller.placer.cluster import ClusterState, ClusterView, Kind
from controller.placer.snapshot import ClusterIndex
from translations import koordinator as koord
from translations import kueue
from translations.core import Node, Pod

BLOCK = "network.topology.nvidia.com/block"
SPINE = "network.topology.nvidia.com/spine"
HOSTNAME = "kubernetes.io/hostname"
NODES = 8


def _node(v: int, labels: dict[str, str], cpu: str = "8") -> Node:
    return Node.parse(node(f"n{v}", cpu=cpu, labels=labels))


def _state(*, described: bool = True) -> ClusterState:
    """`described`: under a ClusterNetworkTopology, else a tree of the nodes' labels alone."""
    state = ClusterState()
    if described:
        state.put(Kind.CNT, "default", koord.ClusterNetworkTopology.parse(cnt()))
    for v in range(NODES):
        state.put(Kind.NODE, f"n{v}", _node(v, {BLOCK: f"b{v // 2}", SPINE: f"s{v // 4}"}))
    state.put(Kind.NODE, "n8", _node(NODES, {BLOCK: "b0", SPINE: "s0"}, cpu="lots"))
    for i in range(5):
        bound = pod(f"p{i}", cpu="2", node_name=f"n{i}" if i < 4 else None)
        state.put(Kind.POD, f"default/p{i}", Pod.parse(bound))
    gang = koord_gang("g", 3, gather=[("BlockLayer", "MustGather")])
    state.put(Kind.SIGS_PODGROUP, "default/g", koord.SigsPodGroup.parse(gang))
    for i in range(3):
        member = pod(
            f"g{i}",
            cpu="1",
            node_name=f"n{4 + i}" if i < 2 else None,
            labels={koord.SIGS_POD_GROUP_LABEL: "g"},
        )
        state.put(Kind.POD, f"default/g{i}", Pod.parse(member))
    waiting = pod("w", cpu="1", scheduler="topobridge")
    waiting["status"] = {"nominatedNodeName": "n6"}  # its claim moves with its node's row
    state.put(Kind.POD, "default/w", Pod.parse(waiting))
    for i in range(2):  # a Kueue pod group held to one block: discovery reads the block tier
        member = pod(
            f"k{i}",
            cpu="1",
            scheduler="topobridge",
            labels={kueue.POD_GROUP_NAME_LABEL: "k"},
            annotations={kueue.POD_GROUP_TOTAL_COUNT: "2", kueue.REQUIRED_TOPOLOGY: BLOCK},
        )
        state.put(Kind.POD, f"default/k{i}", Pod.parse(member))
    return state


def _canonical(view: ClusterView) -> dict[str, Any]:
    index = view.index
    return {
        "tree": (dict(view.tree.domains), dict(view.tree.node_domain), view.tree.source),
        "tables": _tables(index),
        "nodes": index.node_names,
        "domains": [index.domain_label(d) for d in range(index.n_domains)],
        "ranges": (index.dom_start.tolist(), index.dom_end.tolist(), index.dom_tier.tolist()),
        "alloc": index.alloc.tolist(),
        "used": view.snapshot.used.tolist(),
        "pods": sorted((p.key, p.node, p.req.tolist(), p.gang) for p in view.snapshot.pods.values()),
        "nominations": sorted((n.pod, n.node, n.req.tolist()) for n in view.snapshot.nominations.values()),
        "gangs": {k: view.gangs[k] for k in sorted(view.gangs)},
        "pending": list(view.pending),
        "warnings": list(view.warnings),
    }


def _tables(index: ClusterIndex) -> dict[str, Any]:
    """Every table of the index a cycle reads, as plain values (taints per node: the numbering
    of distinct taint sets is the build's own)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(index):
        value = getattr(index, f.name)
        if f.name in (
            "tree",
            "memo",
            "_label_cache",
            "taint_group",
            "prefer_group",
            "taint_sets",
            "prefer_sets",
        ):
            continue
        if isinstance(value, np.ndarray):
            value = value.tolist()
        elif f.name == "tier_domains":
            value = {t: v.tolist() for t, v in value.items()}
        elif isinstance(value, Mapping):
            value = dict(value)
        out[f.name] = value
    out["taints"] = [index.taint_sets[g] for g in index.taint_group]
    out["prefer"] = [index.prefer_sets[g] for g in index.prefer_group]
    return out


def _full(state: ClusterState) -> ClusterView:
    fresh = ClusterState()
    for kind in Kind:
        for key, obj in state.store(kind).items():
            fresh.put(kind, key, obj)
    return fresh.view()


def _relabel(state: ClusterState, rng: random.Random) -> None:
    name = f"n{rng.randrange(NODES)}"
    labels = dict(state.nodes[name].metadata.labels or {})
    key = rng.choice((BLOCK, SPINE))
    value = rng.choice((f"b{rng.randrange(5)}", f"s{rng.randrange(3)}", None))
    if value is None:
        labels.pop(key, None)
    else:
        labels[key] = value
    state.put(Kind.NODE, name, _node(int(name[1:]), labels))


def test_a_node_moved_between_domains_equals_a_full_rebuild() -> None:
    rng = random.Random(36)
    state = _state()
    state.view()
    gang = state.view().gangs["koordinator:default/g"]
    in_place = 0
    for _ in range(60):
        before = state.view().snapshot
        _relabel(state, rng)
        view = state.view()
        assert _canonical(view) == _canonical(_full(state))
        assert any(w.startswith("node n8: left out") for w in view.warnings)
        in_place += view.snapshot is before
    # Every tree had a block and a spine tier: the gang was carried over, not discovered again.
    assert state.view().gangs["koordinator:default/g"] is gang
    assert in_place > 20  # a node that stays in the tree is moved, not the tree built again


def _move(state: ClusterState, name: str, labels: dict[str, str]) -> ClusterView:
    """`name` relabelled; its view, checked against a fresh state's."""
    state.put(Kind.NODE, name, _node(int(name[1:]), labels))
    view = state.view()
    assert _canonical(view) == _canonical(_full(state))
    return view


@pytest.mark.parametrize(
    ("name", "labels", "domains", "in_place"),
    [
        pytest.param("n0", {BLOCK: "b1", SPINE: "s0"}, 6, True, id="to-a-sibling"),
        pytest.param("n1", {BLOCK: "b2", SPINE: "s1"}, 6, True, id="to-another-spine"),
        pytest.param("n0", {BLOCK: "b9", SPINE: "s0"}, 7, True, id="a-domain-made"),
        pytest.param("n0", {BLOCK: "b9", SPINE: "s9"}, 8, True, id="a-branch-made"),
        pytest.param("n0", {SPINE: "s0"}, 7, True, id="its-own-stand-in"),
        pytest.param("n2", {BLOCK: "b1", SPINE: "s1"}, 7, False, id="a-name-repeated-renames"),
        pytest.param("n2", {BLOCK: "b2"}, 6, False, id="left-out-warns"),
    ],
)
def test_single_moves_equal_a_full_rebuild(
    name: str, labels: dict[str, str], domains: int, in_place: bool
) -> None:
    state = _state()
    before = state.view()
    assert before.index.n_domains == 6  # s0 > b0 b1, s1 > b2 b3
    view = _move(state, name, labels)
    assert view.index.n_domains == domains
    assert (view.snapshot is before.snapshot) == in_place


def test_domains_emptied_and_made_again_one_move_at_a_time() -> None:
    """The two nodes of block b1 leave for a new spine, one after the other: b1 goes, then s0
    keeps b0 alone; they come back, b1 is made again under s0; each step in place."""
    state = _state()
    snap = state.view().snapshot
    _move(state, "n2", {BLOCK: "b7", SPINE: "s7"})
    view = _move(state, "n3", {BLOCK: "b7", SPINE: "s7"})
    assert "BlockLayer/b1" not in view.tree.domains
    assert view.tree.domains["SpineLayer/s0"].children == ("BlockLayer/b0",)
    assert view.tree.nodes_under("SpineLayer/s7") == ("n2", "n3")
    _move(state, "n2", {BLOCK: "b1", SPINE: "s0"})
    view = _move(state, "n3", {BLOCK: "b1", SPINE: "s0"})
    assert "SpineLayer/s7" not in view.tree.domains
    assert view.tree.domains["SpineLayer/s0"].children == ("BlockLayer/b0", "BlockLayer/b1")
    assert view.snapshot is snap


def test_nodes_relabelled_between_two_views_move_one_after_the_other() -> None:
    """Three nodes relabelled before the next view (one of them twice, one back where it was):
    each is moved in turn, the records on every shifted row follow, as a fresh build has them."""
    state = _state()
    snap = state.view().snapshot
    state.put(Kind.NODE, "n0", _node(0, {BLOCK: "b3", SPINE: "s1"}))
    state.put(Kind.NODE, "n5", _node(5, {BLOCK: "b0", SPINE: "s0"}))
    state.put(Kind.NODE, "n0", _node(0, {BLOCK: "b2", SPINE: "s1"}))
    state.put(Kind.NODE, "n3", _node(3, {BLOCK: "b1", SPINE: "s0"}))
    view = state.view()
    assert _canonical(view) == _canonical(_full(state))
    assert view.snapshot is snap
    assert view.tree.domains["BlockLayer/b2"].nodes == ("n0", "n4")


def test_moves_under_a_kueue_topology_equal_a_full_rebuild() -> None:
    """A Kueue Topology's levels (its hostname level among them): a Kueue tree has no stand-in
    domains, so a node without a block label is left out (a build again); the others move in
    place."""
    state = ClusterState()
    topo = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Topology",
        "metadata": {"name": "default"},
        "spec": {"levels": [{"nodeLabel": SPINE}, {"nodeLabel": BLOCK}, {"nodeLabel": HOSTNAME}]},
    }
    state.put(Kind.KUEUE_TOPOLOGY, "default", kueue.Topology.parse(topo))
    for v in range(NODES):
        state.put(Kind.NODE, f"n{v}", _node(v, {BLOCK: f"b{v // 2}", SPINE: f"s{v // 4}"}))
    state.put(Kind.POD, "default/p", Pod.parse(pod("p", cpu="2", node_name="n1")))
    snap = state.view().snapshot
    assert state.view().tree.source == "kueue"
    _move(state, "n1", {BLOCK: "b3", SPINE: "s1"})
    view = _move(state, "n0", {BLOCK: "b5", SPINE: "s0"})
    assert view.snapshot is snap
    assert view.snapshot.pods["default/p"].node == view.index.node_pos["n1"]
    view = _move(state, "n4", {SPINE: "s1"})
    assert view.snapshot is not snap
    assert any(w.startswith("node n4 left out") for w in view.warnings)


def test_a_tier_gone_discovers_the_gangs_again() -> None:
    """A tree of node labels loses its block tier when no node has a block label left: the
    Kueue group held to a block is discovered again, and says so, as a fresh state's is."""
    state = _state(described=False)
    assert state.view().gangs["kueue:default/k"].error is None
    for v in range(NODES):
        state.put(Kind.NODE, f"n{v}", _node(v, {SPINE: f"s{v // 4}"}))
    state.put(Kind.NODE, "n8", _node(NODES, {SPINE: "s0"}, cpu="lots"))
    view = state.view()
    assert _canonical(view) == _canonical(_full(state))
    assert BLOCK in (view.gangs["kueue:default/k"].error or "")


def test_a_node_whose_quantities_changed_is_read_again() -> None:
    """The kept allocatable is the stored model's: a new model with new quantities is read."""
    state = _state()
    before = state.view().index
    state.put(Kind.NODE, "n1", _node(1, {BLOCK: "b0", SPINE: "s0"}, cpu="16"))
    after = state.view().index
    cpu = after.res_pos["cpu"]
    assert before.alloc[before.node_pos["n1"], cpu] == 8000
    assert after.alloc[after.node_pos["n1"], cpu] == 16000
    state.put(Kind.NODE, "n8", _node(NODES, {BLOCK: "b0", SPINE: "s0"}))
    view = state.view()
    assert "n8" in view.index.node_pos
    assert not any(w.startswith("node n8") for w in view.warnings)


def test_a_member_gone_with_a_node_in_one_batch_equals_a_full_rebuild() -> None:
    """A gang's member deleted (or moved to another gang) while a node goes: the new tree's
    gangs are carried over, but not one whose member is gone. Carrying it raised KeyError from
    `view()`, so no gang in the cluster was scheduled (found by `hack/livefuzz.py`: a round's
    ordinary gang and its nodes deleted at once)."""
    state = _state()
    state.view()
    state.delete(Kind.POD, "default/g2")
    state.delete(Kind.NODE, "n7")
    view = state.view()
    assert _canonical(view) == _canonical(_full(state))
    assert [m.key for m in view.gangs["koordinator:default/g"].pods] == ["default/g0", "default/g1"]
    moved = pod("k1", cpu="1", scheduler="topobridge", labels={kueue.POD_GROUP_NAME_LABEL: "other"})
    state.put(Kind.POD, "default/k1", Pod.parse(moved))
    state.delete(Kind.NODE, "n6")
    view = state.view()
    assert _canonical(view) == _canonical(_full(state))
    assert [m.key for m in view.gangs["kueue:default/k"].pods] == ["default/k0"]
