"""A node moved to another topology domain: the view after the move equals a full rebuild.

Random single-node topology-label changes (a node's block or spine label set to another
value, a new one, or removed) on a small cluster under a ClusterNetworkTopology, with bound and
pending pods and a node whose allocatable cannot be read: after each change the incremental
view (which reads again only the quantities of nodes whose model changed) equals a fresh
state's view built from the same objects, warnings included.
"""

from __future__ import annotations

import random
from typing import Any

from placer_objects import cnt, node, pod

from controller.placer.cluster import ClusterState, ClusterView, Kind
from translations import koordinator as koord
from translations.core import Node, Pod

BLOCK = "network.topology.nvidia.com/block"
SPINE = "network.topology.nvidia.com/spine"
NODES = 8


def _node(v: int, labels: dict[str, str], cpu: str = "8") -> Node:
    return Node.parse(node(f"n{v}", cpu=cpu, labels=labels))


def _state() -> ClusterState:
    state = ClusterState()
    state.put(Kind.CNT, "default", koord.ClusterNetworkTopology.parse(cnt()))
    for v in range(NODES):
        state.put(Kind.NODE, f"n{v}", _node(v, {BLOCK: f"b{v // 2}", SPINE: f"s{v // 4}"}))
    state.put(Kind.NODE, "n8", _node(NODES, {BLOCK: "b0", SPINE: "s0"}, cpu="lots"))
    for i in range(5):
        bound = pod(f"p{i}", cpu="2", node_name=f"n{i}" if i < 4 else None)
        state.put(Kind.POD, f"default/p{i}", Pod.parse(bound))
    return state


def _canonical(view: ClusterView) -> dict[str, Any]:
    index = view.index
    return {
        "nodes": index.node_names,
        "domains": [index.domain_label(d) for d in range(index.n_domains)],
        "ranges": (index.dom_start.tolist(), index.dom_end.tolist(), index.dom_tier.tolist()),
        "alloc": index.alloc.tolist(),
        "used": view.snapshot.used.tolist(),
        "pods": sorted((p.key, p.node, p.req.tolist(), p.gang) for p in view.snapshot.pods.values()),
        "gangs": {k: view.gangs[k] for k in sorted(view.gangs)},
        "pending": list(view.pending),
        "warnings": list(view.warnings),
    }


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
    for _ in range(60):
        _relabel(state, rng)
        view = state.view()
        assert _canonical(view) == _canonical(_full(state))
        assert any(w.startswith("node n8: left out") for w in view.warnings)


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
