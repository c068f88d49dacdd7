"""The free room per tier (`controller.placer.room`) against sums worked out by hand, and its
metrics (`controller.metrics.set_tier_room`) as Prometheus reads them."""

from __future__ import annotations

from typing import Any, cast

from prometheus_client import REGISTRY, generate_latest

from controller import metrics
from controller.placer.room import tier_room
from controller.placer.scenario import load_scenario, prepare
from controller.runtime.scheduler import GangScheduler, SchedulerConfig
from tests.controller.placer.placer_objects import SEED_LAYOUT, cnt, node, pod, spine_block_nodes


def _rooms(objects: list[dict]) -> dict[int, object]:
    return {r.tier: r for r in tier_room(prepare(load_scenario(objects)).snapshot)}


def _cluster() -> list[dict]:
    nodes = spine_block_nodes(SEED_LAYOUT, cpu="8", gpu="8")
    nodes[1]["spec"]["unschedulable"] = True  # node-1, block-0: cordoned, no room
    return [
        *nodes,
        cnt(),
        pod("a", cpu="2", gpu="8", node_name="node-0"),  # block-0
        pod("b", cpu="8", gpu="3", node_name="node-9"),  # block-4
    ]


def test_each_tier_sums_its_domains_and_names_the_fullest_one() -> None:
    rooms = _rooms(_cluster())
    block, spine = sorted(rooms)
    # 12 nodes of 8 GPUs; node-1 cordoned (8 GPUs gone), 8 + 3 GPUs used.
    assert rooms[block].free["nvidia.com/gpu"] == 12 * 8 - 8 - 8 - 3
    assert rooms[spine].free["nvidia.com/gpu"] == rooms[block].free["nvidia.com/gpu"]
    # block-0: node-0 has 0 GPUs free, node-1 is cordoned, node-2 has 8: 8. block-4: 8 + 8 + 5.
    assert rooms[block].largest["nvidia.com/gpu"] == 21
    # spine-0 = block-0 (8) + block-1 (16); spine-1 = 32; spine-2 = block-4 (21).
    assert rooms[spine].largest["nvidia.com/gpu"] == 32
    assert rooms[block].largest["cpu"] == 3 * 8000 - 8000  # block-4: node-9's 8 cores taken
    assert (rooms[block].domains, rooms[spine].domains) == (5, 3)
    assert (rooms[block].name, rooms[spine].name) == ("BlockLayer", "SpineLayer")  # the layers' names


def test_an_overcommitted_node_counts_as_no_room_not_negative_room() -> None:
    objects = [
        node("n0", cpu="4", labels={"rack": "r0"}),
        node("n1", cpu="4", labels={"rack": "r0"}),
        pod("big", cpu="6", node_name="n0"),  # bound past allocatable (kubelet admitted it first)
        cnt(levels=[("RackLayer", "rack")]),
    ]
    (room,) = _rooms(objects).values()
    assert room.free["cpu"] == 4000
    assert room.largest["cpu"] == 4000


def test_room_nominated_for_a_preempting_gang_is_not_free() -> None:
    import numpy as np

    from controller.placer.records import Nomination

    snap = prepare(load_scenario(_cluster())).snapshot
    before = {r.tier: r.largest["nvidia.com/gpu"] for r in tier_room(snap)}
    req = np.zeros(len(snap.index.resources), dtype=np.int64)
    req[snap.index.res_pos["nvidia.com/gpu"]] = 8
    node_10 = snap.index.node_pos["node-10"]  # block-4, the fullest block
    snap.nominate(Nomination("default/p", "volcano:default/g", node_10, req, -5))
    after = {r.tier: r.largest["nvidia.com/gpu"] for r in tier_room(snap)}
    block = min(before)
    assert (before[block], after[block]) == (21, 16)  # block-4 21 -> 13, block-1 and spine-1's blocks 16


def test_a_cluster_without_a_tree_has_no_tiers() -> None:
    assert _rooms([node("n0"), node("n1")]) == {}


def test_the_metrics_hold_base_units_and_forget_a_tier_that_is_gone() -> None:
    metrics.set_tier_room(tier_room(prepare(load_scenario(_cluster())).snapshot))
    samples = {
        (s.labels["tier_name"], s.labels["resource"]): s.value
        for fam in metrics.registry().collect()
        if fam.name == "topobridge_tier_largest_free"
        for s in fam.samples
    }
    assert samples[("BlockLayer", "cpu")] == 16.0  # cores, not millicores
    assert samples[("SpineLayer", "nvidia.com/gpu")] == 32.0
    metrics.set_tier_room(())
    assert "topobridge_tier_largest_free{" not in generate_latest(metrics.registry()).decode()


def _largest_rack_gpus() -> float | None:
    labels = {"tier": "1", "tier_name": "RackLayer", "resource": "nvidia.com/gpu"}
    return REGISTRY.get_sample_value("topobridge_tier_largest_free", labels)


async def test_the_scheduler_publishes_the_room_even_when_nothing_is_pending() -> None:
    sched = GangScheduler(cast(Any, None), cast(Any, None), SchedulerConfig(room_period=3600.0))
    nodes = [node(f"n{i}", gpu="8", labels={"rack": f"r{i % 2}"}) for i in range(4)]
    for n in nodes:
        sched.cache.nodes.put(n)
    sched.cache.cnts.put(cnt(levels=[("RackLayer", "rack")]))
    try:
        await sched.run_cycle()  # no pending pod: no cycle, but the room is published
        assert _largest_rack_gpus() == 16.0
        sched.cache.pods.put(pod("p", gpu="8", node_name="n0"))
        await sched.run_cycle()
        assert _largest_rack_gpus() == 16.0, "refreshed at most every room_period"
        sched._room_at = float("-inf")
        await sched.run_cycle()
        assert _largest_rack_gpus() == 16.0  # r1 still has two idle nodes
        sched.cache.pods.put(pod("q", gpu="8", node_name="n1"))
        sched._room_at = float("-inf")
        await sched.run_cycle()
        assert _largest_rack_gpus() == 8.0
    finally:
        metrics.set_tier_room(())
