"""The scheduler's view survives objects the API server accepts and that used to raise or
stall where they are read: quantities past int64 (a pod's, a node's, a sum of containers'),
a HyperNode chain deeper than the recursion limit, about a thousand Koordinator gangs chained
through `groups`, a ClusterNetworkTopology whose parent names no layer, and a budget whose
percentage carries thousands of leading zeros. Each time a healthy gang still binds."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from oracle import _percent_of
from placer_objects import cnt, hypernode, koord_gang, node, pdb, pod

from controller.placer.budgets import _scaled
from controller.placer.cluster import ClusterState, Kind
from controller.placer.cycle import GangTiming, SchedulingCycle
from tests.strategies.feed import placer_state
from translations.core import Pod
from translations.quantity import SCHEDULER_UNIT_BOUND
from translations.topology import MAX_TREE_DEPTH

Obj = dict[str, Any]
SERVED = ("koord-scheduler", "volcano")
GANG = "gang.scheduling.koordinator.sh/"


def healthy(name: str = "healthy", n: int = 2) -> list[Obj]:
    """A Koordinator gang of `n` one-cpu pods, and the PodGroup saying so."""
    pods = [
        pod(f"{name}-{i}", cpu="1", memory="1Gi", labels={"pod-group.scheduling.sigs.k8s.io": name})
        for i in range(n)
    ]
    return [koord_gang(name, n), *pods]


def cycle(state: ClusterState) -> tuple[dict[str, str], dict[str, str]]:
    """One scheduling cycle: (pod -> node bound, gang -> message of the gangs left pending)."""
    plan = SchedulingCycle(state.view(), served=SERVED, now=0.0, timing=GangTiming()).run()
    bound = {pod: node for b in plan.binds for pod, node in b.pods}
    return bound, {g: o.message for g, o in plan.outcomes.items() if not any(b.gang == g for b in plan.binds)}


def test_absurd_quantities_saturate_and_the_healthy_gang_binds() -> None:
    two_5ei = pod("two-5ei", cpu="1", memory="1Gi")
    two_5ei["spec"]["containers"] = [
        {"name": f"c{i}", "image": "busybox", "resources": {"requests": {"memory": "5Ei"}}} for i in range(2)
    ]
    objects = [
        node("n1", cpu="8"),
        node("n-huge", cpu="10P", memory="1Gi"),
        pod("asks-10P", cpu="20P", memory="1Gi"),
        two_5ei,
        *healthy(),
    ]
    state, refused = placer_state(objects)
    assert refused == {}
    view = state.view()
    assert (
        int(view.index.alloc[view.index.node_pos["n-huge"], view.index.res_pos["cpu"]])
        == SCHEDULER_UNIT_BOUND
    )
    bound, pending = cycle(state)
    assert bound["default/asks-10P"] == "n-huge"  # a saturated request fits a saturated, empty node
    assert {bound["default/healthy-0"], bound["default/healthy-1"]} == {"n1"}
    assert "default/two-5ei" not in bound and "pod:default/two-5ei" in pending


def _chain(depth: int) -> list[Obj]:
    out = [hypernode("hn-0", 1, [("Node", "n1")])]
    out += [hypernode(f"hn-{i}", i + 1, [("HyperNode", f"hn-{i - 1}")]) for i in range(1, depth)]
    return out


def test_a_hypernode_chain_past_the_recursion_limit_keeps_the_top_levels() -> None:
    state, _ = placer_state([node("n1"), *_chain(986), *healthy()])
    view = state.view()
    assert view.index.n_domains == MAX_TREE_DEPTH
    assert view.index.node_anc.shape == (1, MAX_TREE_DEPTH)  # its domain and 15 above
    assert any("deeper than 16 levels" in w and "hn-969" in w for w in view.warnings)
    assert view.tree.ancestors("n1")[0] == "hn-970"  # its HyperNode left out, the node stays inside
    bound, _ = cycle(state)
    assert set(bound.values()) == {"n1"}


def test_a_thousand_gangs_chained_through_groups_are_discovered_again_after_a_change() -> None:
    gangs = [f"g{i}" for i in range(1000)]
    objects: list[Obj] = [node("n1")]
    for i, name in enumerate(gangs):
        links = [f"default/{name}"] + ([f"default/{gangs[i + 1]}"] if i + 1 < len(gangs) else [])
        objects.append(
            pod(name, cpu="1", annotations={GANG + "name": name, GANG + "groups": json.dumps(links)})
        )
    state, _ = placer_state(objects)
    assert len(state.view().gangs) == 1  # one GangGroup of them all
    last = Pod.parse({**objects[-1], "metadata": {**objects[-1]["metadata"], "labels": {"x": "y"}}})
    state.put(Kind.POD, "default/g999", last)  # the last gang is listed by the one before it, only
    view = state.view()
    assert len(view.gangs) == 1 and len(next(iter(view.gangs.values())).pods) == 1000


def test_a_layer_whose_parent_names_no_layer_leaves_only_its_gangs_pending() -> None:
    broken = cnt()
    broken["spec"]["networkTopologySpec"][1]["parentTopologyLayer"] = "Missing"
    needs_block = koord_gang("needs-block", 1, gather=[("BlockLayer", "MustGather")])
    objects = [
        node("n1", labels={"network.topology.nvidia.com/block": "b1"}),
        broken,
        needs_block,
        pod("needs-block-0", cpu="1", labels={"pod-group.scheduling.sigs.k8s.io": "needs-block"}),
        *healthy(),
    ]
    state, _ = placer_state(objects)
    view = state.view()
    assert any("ClusterNetworkTopology default" in w for w in view.warnings)
    gang = view.gangs["koordinator:default/needs-block"]
    assert gang.error is not None and "ClusterNetworkTopology" in gang.error and "Missing" in gang.error
    bound, pending = cycle(state)
    assert set(bound) == {"default/healthy-0", "default/healthy-1"}
    assert "ClusterNetworkTopology" in pending["koordinator:default/needs-block"]


@pytest.mark.parametrize(
    ("value", "total", "scaled"),
    [
        pytest.param("0" * 4400 + "50%", 10, 5, id="4400-leading-zeros"),
        pytest.param("0" * 4400 + "0%", 10, 0, id="zero-with-zeros"),
        pytest.param("1" + "0" * 5000 + "%", 10, 10, id="over-100-percent-counts-as-100"),
        pytest.param("67%", 3, 3, id="rounds-up"),
        pytest.param("0" * 5000 + "7", 10, 7, id="huge-integer-text"),
    ],
)
@pytest.mark.parametrize("scale", [_scaled, _percent_of], ids=["preempt", "oracle"])
def test_budget_percentages_scale_without_converting_long_digit_runs(
    scale: Callable[[int | str, int], int], value: str, total: int, scaled: int
) -> None:
    assert scale(value, total) == scaled


def test_a_budget_with_thousands_of_leading_zeros_counts_and_the_gang_binds() -> None:
    budget = pdb("zeros", {"app": "x"}, min_available="0" * 4400 + "50%")
    covered = pod("covered", cpu="1", memory="1Gi", node_name="n1", labels={"app": "x"})
    state, refused = placer_state([node("n1"), budget, covered, *healthy()])
    assert refused == {}
    bound, _ = cycle(state)
    assert set(bound) == {"default/healthy-0", "default/healthy-1"}
