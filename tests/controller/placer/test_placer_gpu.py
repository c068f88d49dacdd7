"""GPU-dialect gangs in the engine: an Indexed Job's pods placed whole, within max-nodes,
min-gpus-per-node, pack / spread / best-fit, and NVLink nodes only when asked."""

from __future__ import annotations

from typing import Any

from gpu_seed import SEED_ANNOTATIONS
from placer_objects import Obj, attempt, hypernode, node, pod, run

from controller.placer.framework import Code
from controller.placer.gpu import (
    NVLINK_EXCLUSION,
    RING_ORDER_ANNOTATION,
    TOPOLOGY_PATH_ANNOTATION,
    GpuRules,
    choose,
    fewest_nodes,
    rank_annotations,
    topology_path,
    usable_slots,
)
from controller.placer.scenario import load_scenario, prepare
from translations import gpu

G = gpu.PREFIX
SEED = SEED_ANNOTATIONS


def job(
    name: str,
    parallelism: int,
    annotations: dict[str, str],
    *,
    gpus: str = "4",
    indexes: list[int] | None = None,
    namespace: str = "ml",
    anti_affinity: bool = False,
) -> list[Obj]:
    """A Job and the pods its controller made (`<job>-<suffix>`, completion index annotated)."""
    uid = f"uid-{name}"
    out: list[Obj] = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "uid": uid, "annotations": annotations},
            "spec": {"parallelism": parallelism, "completions": parallelism, "completionMode": "Indexed"},
        }
    ]
    suffixes = "abcdefghij"
    for i, index in enumerate(indexes if indexes is not None else range(parallelism)):
        p = pod(
            f"{name}-{suffixes[i]}",
            cpu="1",
            memory="1Gi",
            gpu=gpus,
            namespace=namespace,
            scheduler="topobridge",
            labels={"job-name": name, "controller-uid": uid},
            annotations={gpu.COMPLETION_INDEX: str(index)},
            affinity=_hostname_anti_affinity(name) if anti_affinity else None,
        )
        p["metadata"]["ownerReferences"] = [
            {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid, "controller": True}
        ]
        out.append(p)
    return out


def _hostname_anti_affinity(job_name: str) -> Obj:
    """The seed's: no two pods of the Job on one node."""
    term = {"labelSelector": {"matchLabels": {"job-name": job_name}}, "topologyKey": "kubernetes.io/hostname"}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def gpu_nodes(layout: dict[str, dict[str, dict[str, int]]], **labels: str) -> list[Obj]:
    """spine -> block -> node -> GPUs, labelled as the seed's tree (and with `labels`)."""
    return [
        node(
            n,
            cpu="64",
            memory="512Gi",
            gpu=str(g),
            labels={
                "network.topology.nvidia.com/spine": spine,
                "network.topology.nvidia.com/block": block,
                **labels,
            },
        )
        for spine, blocks in layout.items()
        for block, nodes in blocks.items()
        for n, g in nodes.items()
    ]


def hypernodes(layout: dict[str, dict[str, dict[str, int]]]) -> list[Obj]:
    out: list[Obj] = []
    for spine, blocks in layout.items():
        for block, nodes in blocks.items():
            out.append(hypernode(block, 1, [("Node", n) for n in nodes]))
        out.append(hypernode(spine, 2, [("HyperNode", b) for b in blocks]))
    return out


def busy(name: str, node_name: str, gpus: str) -> Obj:
    return pod(name, cpu="1", memory="1Gi", gpu=gpus, node_name=node_name, scheduler="other")


def cluster(layout: dict[str, dict[str, dict[str, int]]], **labels: str) -> list[Obj]:
    return [*gpu_nodes(layout, **labels), *hypernodes(layout)]


NVL = {gpu.NVLINK_LABEL: "true"}


def placed(objects: list[Obj], gang: str) -> dict[str, str]:
    verdict = attempt(objects, gang)
    assert verdict.code is Code.SUCCESS, verdict.message
    assert verdict.placement is not None
    return dict(verdict.placement.pods)


def test_the_seed_job_is_one_gang_of_parallelism_pods_ranked_by_completion_index() -> None:
    objects = [*cluster({"s0": {"b0": {"n0": 4, "n1": 4}}}, **NVL), *job("dt", 2, SEED, indexes=[1, 0])]
    sc = load_scenario(objects)
    (gang,) = prepare(sc).gangs(sc)
    assert gang.key == "job:ml/dt" and gang.source == "job"
    assert gang.min_member == 2 and gang.all_or_nothing
    assert [(m.key, m.rank) for m in gang.pods] == [("ml/dt-b", 0), ("ml/dt-a", 1)]
    assert gang.gpu is not None and gang.gpu.request.max_nodes == 2


def test_the_seed_job_lands_on_two_nodes_of_the_narrowest_block() -> None:
    layout = {
        "s0": {"b0": {"n0": 4, "n1": 4, "n2": 4}, "b1": {"n3": 4, "n4": 4, "n5": 4, "n6": 4}},
        "s1": {"b2": {"n7": 4, "n8": 4}},
    }
    # n0 and n8 are half used: b0 offers exactly two free nodes, the tightest block that holds
    # the gang (b1 has four, b2 one).
    base = [*cluster(layout, **NVL), busy("x", "n0", "2"), busy("y", "n8", "2")]
    for anti_affinity in (False, True):
        objects = [*base, *job("dt", 2, SEED, anti_affinity=anti_affinity)]
        assert placed(objects, "ml/dt") == {"ml/dt-a": "n1", "ml/dt-b": "n2"}, anti_affinity
        verdict = attempt(objects, "ml/dt")
        assert verdict.placement is not None
        assert (verdict.placement.domain, verdict.placement.tier) == ("b0", 1)


def test_hostname_anti_affinity_and_max_nodes_together() -> None:
    # 8-GPU nodes would take both pods on one node; the seed's anti-affinity forbids it, and
    # max-nodes 1 then leaves no placement.
    layout = {"s0": {"b0": {"n0": 8, "n1": 8}}}
    one_node = {f"{G}multi-node-policy": "pack", f"{G}max-nodes": "1"}
    assert set(placed([*cluster(layout), *job("dt", 2, one_node)], "ml/dt").values()) == {"n0"}
    verdict = attempt([*cluster(layout), *job("dt", 2, one_node, anti_affinity=True)], "ml/dt")
    assert verdict.code is not Code.SUCCESS
    two = placed(
        [*cluster(layout), *job("dt", 2, SEED | {f"{G}policy": "best-effort"}, anti_affinity=True)], "ml/dt"
    )
    assert sorted(two.values()) == ["n0", "n1"]


def test_max_nodes_that_cannot_be_met_keeps_the_whole_gang_pending_with_the_reason() -> None:
    # 8-GPU nodes (so admission accepts max-nodes 1), but each already lends 4 GPUs out.
    layout = {"s0": {"b0": {"n0": 8, "n1": 8}}}
    annotations = {f"{G}multi-node-policy": "pack", f"{G}max-nodes": "1"}
    objects = [*cluster(layout), busy("a", "n0", "4"), busy("b", "n1", "4"), *job("dt", 2, annotations)]
    verdict = attempt(objects, "ml/dt")
    assert verdict.code is Code.UNRESOLVABLE
    assert "the gang's 2 pods need at least 2 nodes now, gpu.topology/max-nodes 1 allows 1" in verdict.message
    result = run(objects, schedulers=("topobridge",))
    assert not any(p.startswith("ml/dt") for p in result.bound)
    assert "gpu.topology/max-nodes 1 allows 1" in result.unschedulable["job:ml/dt"]


def test_min_gpus_per_node_doubles_pods_up() -> None:
    # 4 pods of 4 GPUs with at least 8 GPUs per node: two nodes of two pods, never four of one.
    layout = {"s0": {"b0": {"n0": 8, "n1": 8, "n2": 8, "n3": 8}}}
    objects = [*cluster(layout), busy("x", "n0", "4"), *job("dt", 4, {f"{G}min-gpus-per-node": "8"})]
    nodes = placed(objects, "ml/dt")
    assert sorted(nodes.values()) == ["n1", "n1", "n2", "n2"]
    assert (nodes["ml/dt-a"], nodes["ml/dt-c"]) == ("n1", "n2")  # ranks fill nodes in tree order


def test_pack_takes_fewest_nodes_where_best_fit_takes_the_lowest_domain() -> None:
    layout = {"s0": {"b0": {"a1": 4, "a2": 4, "a3": 4}, "b1": {"x": 8}, "b2": {"y": 8}}}
    best_fit = placed([*cluster(layout), *job("dt", 3, {f"{G}max-nodes": "3"})], "ml/dt")
    assert sorted(best_fit.values()) == ["a1", "a2", "a3"]
    pack = placed([*cluster(layout), *job("dt", 3, {f"{G}multi-node-policy": "pack"})], "ml/dt")
    # Two nodes instead of three; binpack completes x with the smallest node that does (a1), not y.
    assert sorted(pack.values()) == ["a1", "x", "x"]


def test_spread_puts_one_pod_per_node_across_the_widest_domains() -> None:
    layout = {"s0": {"b0": {"n0": 8, "n1": 8}}, "s1": {"b1": {"n2": 8, "n3": 8}}}
    objects = [*cluster(layout), *job("dt", 2, {f"{G}multi-node-policy": "spread"})]
    nodes = placed(objects, "ml/dt")
    assert len(set(nodes.values())) == 2
    assert {n[:2] for n in nodes.values()} == {"n0", "n2"}  # one per spine


def test_nvlink_keeps_the_gang_off_nodes_known_without_it() -> None:
    """n0 and n1 say they have no NVLink (the label set to false): a gang that requires it
    stays off them. A node that says nothing passes (the seed's Filter: unknown passes)."""
    nodes = [
        *gpu_nodes({"s0": {"b0": {"n0": 8, "n1": 8}}}, **{gpu.NVLINK_LABEL: "false"}),
        *gpu_nodes({"s0": {"b0": {"n2": 4, "n3": 4}}}, **NVL),
    ]
    objects = [*nodes, *hypernodes({"s0": {"b0": {"n0": 8, "n1": 8, "n2": 4, "n3": 4}}})]
    on_nvlink = placed(
        [*objects, *job("dt", 2, {f"{G}require-nvlink": "true", f"{G}max-nodes": "2"})], "ml/dt"
    )
    assert sorted(on_nvlink.values()) == ["n2", "n3"]
    too_big = attempt([*objects, *job("dt", 3, {f"{G}policy": "nvlink", f"{G}max-nodes": "3"})], "ml/dt")
    assert too_big.code is not Code.SUCCESS
    assert f"2 {NVLINK_EXCLUSION}" in too_big.message
    assert "only 2 of the gang's 3 pods fit on nodes" in too_big.message


def test_a_job_without_multi_node_keys_is_no_gang() -> None:
    objects = [*cluster({"s0": {"b0": {"n0": 8}}}), *job("dt", 2, {f"{G}policy": "single-numa"})]
    sc = load_scenario(objects)
    assert sorted(g.key for g in prepare(sc).gangs(sc)) == ["pod:ml/dt-a", "pod:ml/dt-b"]


def _rules(**kw: Any) -> GpuRules:
    base: dict[str, Any] = {
        "policy": "best-fit",
        "max_nodes": None,
        "floor": 1,
        "min_gpus_per_node": None,
        "gpus_per_pod": 4,
        "nvlink_label": None,
    }
    return GpuRules(**{**base, **kw})


def test_fewest_nodes_and_usable_slots() -> None:
    import numpy as np

    slots = np.array([3, 1, 2, 0], dtype=np.int64)
    assert fewest_nodes(slots, 4) == 2
    assert fewest_nodes(slots, 7) is None
    assert usable_slots(_rules(policy="spread"), slots, 4).tolist() == [1, 1, 1, 0]
    assert usable_slots(_rules(floor=2), slots, 4).tolist() == [3, 0, 2, 0]
    assert usable_slots(_rules(floor=0), slots, 4).tolist() == [0, 0, 0, 0]


def test_choose_swaps_in_the_smallest_node_that_completes() -> None:
    import numpy as np

    sc = load_scenario(cluster({"s0": {"b0": {f"n{i}": 8 for i in range(4)}}}))
    index = prepare(sc).index
    usable = np.array([4, 1, 3, 2], dtype=np.int64)
    # Fullest first takes n0 (4); the 2 left go to the smallest node that holds 2: n3.
    assert choose(_rules(), usable, 0, 4, 6, index) == [(0, 4), (3, 2)]
    assert choose(_rules(max_nodes=1), usable, 0, 4, 6, index) is None
    assert choose(_rules(floor=2), usable, 0, 4, 4, index) == [(0, 2), (2, 2)] or choose(
        _rules(floor=2), usable, 0, 4, 4, index
    ) == [(0, 4)]


def test_rank_annotations_give_each_pod_its_path_and_the_ring_in_tree_order() -> None:
    layout = {"s0": {"b0": {"n0": 4, "n1": 4}}, "s1": {"b1": {"n2": 4}}}
    objects = [*cluster(layout), *job("dt", 3, {f"{G}max-nodes": "3"}, indexes=[2, 0, 1])]
    sc = load_scenario(objects)
    prep = prepare(sc)
    (gang,) = prep.gangs(sc)
    # Rank 2 on n0, rank 0 on n2, rank 1 on n1: tree order n0, n1, n2 gives the ring 2,1,0.
    placement = [("ml/dt-a", "n0"), ("ml/dt-b", "n2"), ("ml/dt-c", "n1")]
    notes = rank_annotations(gang, placement, prep.index)
    assert notes["ml/dt-a"] == {TOPOLOGY_PATH_ANNOTATION: "s0/b0/n0", RING_ORDER_ANNOTATION: "2,1,0"}
    assert notes["ml/dt-b"][TOPOLOGY_PATH_ANNOTATION] == "s1/b1/n2"
    assert {n[RING_ORDER_ANNOTATION] for n in notes.values()} == {"2,1,0"}
    assert topology_path(prep.index, "nowhere") == "nowhere"


def test_rank_annotations_are_for_gpu_gangs_only() -> None:
    objects = [
        *cluster({"s0": {"b0": {"n0": 8}}}),
        pod("solo", cpu="1", memory="1Gi", scheduler="topobridge"),
    ]
    sc = load_scenario(objects)
    prep = prepare(sc)
    (gang,) = prep.gangs(sc)
    assert rank_annotations(gang, [("default/solo", "n0")], prep.index) == {}


def test_nvlink_unknown_passes_and_known_false_fails() -> None:
    """The GPU seed's Job (`policy: nvlink`) on nodes that carry no NVLink label is placed; a
    node whose label says false is the only one left out."""
    layout = {"s0": {"b0": {"n0": 8, "n1": 8, "n2": 8}}}
    objects = [*gpu_nodes(layout), *hypernodes(layout)]
    objects[0]["metadata"]["labels"][gpu.NVLINK_LABEL] = "false"
    nodes = placed([*objects, *job("dt", 2, {f"{G}policy": "nvlink", f"{G}max-nodes": "2"})], "ml/dt")
    assert "n0" not in nodes.values() and len(nodes) == 2


def test_bound_members_count_against_max_nodes() -> None:
    """max-nodes 2, one member already bound on n0: the two pending pods (one node's room each
    elsewhere) would make three nodes. The gang waits, and says why."""
    layout = {"s0": {"b0": {"n0": 4, "n1": 4, "n2": 4}}}
    objects = [*cluster(layout), busy("a", "n0", "4"), *job("dt", 3, {f"{G}max-nodes": "2"})]
    objects[-3]["spec"]["nodeName"] = "n0"
    verdict = attempt(objects, "ml/dt")
    assert verdict.code is not Code.SUCCESS
    assert "1 node(s) its bound members use count too" in verdict.message
