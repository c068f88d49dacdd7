"""`explain` names the limits that hold a gang where room would otherwise hold it, with the
field and its value, in its text, its JSON and its brief, and suggests the change that lets it
start, checked by the runner; each suggestion is then made to the objects and comes true.

* the GPU dialect's `gpu.topology/max-nodes` and `gpu.topology/min-gpus-per-node`;
* the members' required anti-affinity among themselves (one pod per host, too few hosts in the
  domain the gang may use);
* the nodes' `pods` allocatable (NodeResourcesFit's count, kube's "Too many pods").
"""

from __future__ import annotations

import copy
import io
import json

from placer_objects import Obj, koord_gang, members, pod, spine_block_nodes, volcano_gang
from test_placer_gpu import G, busy, cluster, job

from controller.placer.explain import Explanation, brief, render
from controller.placer.scenario import DEFAULT_SCHEDULERS, load_scenario, prepare
from topobridge import cmd_explain

LAYOUT = {"spine-0": {"block-0": ["n0", "n1"], "block-1": ["n2", "n3"]}, "spine-1": {"block-2": ["n4", "n5"]}}
GPU_LAYOUT = {"s0": {"b0": {"n0": 8, "n1": 8}}}


def _one(objects: list[Obj], wanted: str, served: tuple[str, ...] = DEFAULT_SCHEDULERS) -> Explanation:
    sc = load_scenario(objects, lenient=True)
    (e,) = cmd_explain.explain_all(sc, prepare(sc), wanted, served=served)
    return e


def _brief(objects: list[Obj], wanted: str) -> str:
    sc = load_scenario(objects, lenient=True)
    prep = prepare(sc)
    (gang,) = [g for g in prep.gangs() if cmd_explain.named(g, wanted, None)]
    return brief(gang, prep.snapshot)


def _gpu_job(annotations: dict[str, str]) -> list[Obj]:
    """Two 8-GPU nodes, each lending 4 out: room for one 4-GPU pod on each."""
    return [*cluster(GPU_LAYOUT), busy("a", "n0", "4"), busy("b", "n1", "4"), *job("dt", 2, annotations)]


def test_max_nodes_is_named_with_its_field_and_its_suggestion_comes_true() -> None:
    e = _one(_gpu_job({f"{G}multi-node-policy": "pack", f"{G}max-nodes": "1"}), "ml/dt", ("topobridge",))
    assert not e.placed
    assert e.held == (
        "gpu.topology/max-nodes 1 (metadata.annotations[gpu.topology/max-nodes]) holds it: its 2 "
        "pending pod(s) need at least 2 nodes in any place it may use now",
    )
    assert 'Job dt: metadata.annotations[gpu.topology/max-nodes]: "2" would place it in b0' in e.suggestions
    # Under max-nodes 1 no place holds more than one node's pod: the best per tier says so.
    assert [(t.domain, t.holds) for t in e.tiers] == [("n0", 1), ("b0", 1), ("s0", 1), ("cluster", 1)]
    assert e.held[0] in render(e) and e.to_dict()["heldBy"] == list(e.held)
    assert _brief(_gpu_job({f"{G}multi-node-policy": "pack", f"{G}max-nodes": "1"}), "ml/dt").startswith(
        "held by gpu.topology/max-nodes 1: it needs 2 nodes; "
    )
    fixed = _one(_gpu_job({f"{G}multi-node-policy": "pack", f"{G}max-nodes": "2"}), "ml/dt", ("topobridge",))
    assert fixed.placed and fixed.lands is not None and fixed.lands.domain == "b0"


def test_min_gpus_per_node_is_named_with_its_field_and_its_suggestion_comes_true() -> None:
    e = _one(_gpu_job({f"{G}min-gpus-per-node": "8"}), "ml/dt", ("topobridge",))
    assert not e.placed
    (held,) = e.held
    assert held.startswith(
        "gpu.topology/min-gpus-per-node 8 (metadata.annotations[gpu.topology/min-gpus-per-node]) holds "
        "it: every node it uses must take 2 of its pods (4 nvidia.com/gpu each)"
    )
    assert (
        'Job dt: metadata.annotations[gpu.topology/min-gpus-per-node]: "4" would place it in b0'
        in e.suggestions
    )
    assert _brief(_gpu_job({f"{G}min-gpus-per-node": "8"}), "ml/dt").startswith(
        "held by gpu.topology/min-gpus-per-node 8; "
    )
    assert [t.holds for t in e.tiers] == [0, 0, 0, 0]  # no node gives 8 GPUs free
    assert _one(_gpu_job({f"{G}min-gpus-per-node": "4"}), "ml/dt", ("topobridge",)).placed


ONE_PER_HOST = {"labelSelector": {"matchLabels": {"app": "ring"}}, "topologyKey": "kubernetes.io/hostname"}


def _ring(*, required: bool) -> list[Obj]:
    """Three pods, one per host, in one block of two hosts (a hard tier-1 limit)."""
    if required:
        affinity: Obj = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [ONE_PER_HOST]}
        }
    else:
        preferred = {"weight": 100, "podAffinityTerm": copy.deepcopy(ONE_PER_HOST)}
        affinity = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [preferred]}}
    ring = [
        pod(
            f"ring-{i}",
            cpu="1",
            memory="1Gi",
            annotations={"scheduling.k8s.io/group-name": "ring"},
            scheduler="volcano",
            labels={"app": "ring"},
            affinity=affinity,
        )
        for i in range(3)
    ]
    return [*spine_block_nodes(LAYOUT), volcano_gang("ring", 3, mode="hard", tier=1), *ring]


def test_the_members_own_anti_affinity_is_named_with_its_term_and_its_suggestion_comes_true() -> None:
    e = _one(_ring(required=True), "ring")
    assert not e.placed
    term = (
        "pod default/ring-0: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    )
    assert e.held == (
        f"its members' required anti-affinity among themselves ({term}, topologyKey kubernetes.io/hostname) "
        "holds it: one member per kubernetes.io/hostname value, 3 members, and the place it may use with the "
        "most values with room has 2 (block/block-0)",
    )
    loosened = [s for s in e.suggestions if s.startswith(term)]
    assert loosened == [
        f"{term} as a preferredDuringSchedulingIgnoredDuringExecution term would place it in n4"
    ]
    assert _brief(_ring(required=True), "ring").startswith(
        "held by its members' anti-affinity on kubernetes.io/hostname: 2 values for 3 members; "
    )
    assert _one(_ring(required=False), "ring").placed


def _crowded(n4_pods: str = "2") -> list[Obj]:
    """Nodes of at most 2 pods: n0..n3 full, n4 and n5 with room for one more each; a gang of
    four small pods that one block's CPU and memory would hold."""
    nodes = spine_block_nodes(LAYOUT, pods="2")
    for n in nodes:
        if n["metadata"]["name"] == "n4":
            n["status"]["allocatable"]["pods"] = n4_pods
    running = [
        pod(f"busy-{i}-{j}", cpu="1", memory="1Gi", node_name=f"n{i}", scheduler="other")
        for i in range(6)
        for j in range(2 if i < 4 else 1)
    ]
    gang = [
        volcano_gang("many", 4, mode="hard", tier=1),
        *members("many", 4, dialect="volcano", cpu="1", memory="1Gi"),
    ]
    return [*nodes, *running, *gang]


def test_the_nodes_pods_allocatable_is_named_when_it_is_the_blocker_and_its_suggestion_comes_true() -> None:
    e = _one(_crowded(), "many")
    assert not e.placed
    (held,) = e.held
    assert held.startswith(
        "the nodes' pods allocatable (status.allocatable.pods, the kubelet's maxPods) holds it: 4 "
    )
    assert "with room for more pods, a place it may use would hold it" in held
    assert (
        "status.allocatable.pods (the kubelet's maxPods) of n4 5 (now 2) would place it in n4"
        in e.suggestions
    )
    assert _brief(_crowded(), "many").startswith("held by the nodes' pods allocatable: 4 ")
    assert _one(_crowded(n4_pods="5"), "many").placed


def test_pods_allocatable_is_not_named_where_other_room_holds_the_gang_too() -> None:
    """With the pods count unbounded the gang still does not fit (each node has 1 CPU free):
    the count is not what holds it."""
    objects = _crowded()
    for o in objects:
        if o["kind"] == "Pod" and o["metadata"]["name"].startswith("many-"):
            o["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "8"
    e = _one(objects, "many")
    assert not e.placed and e.held == ()


def test_held_limits_are_in_the_json_of_the_cli(tmp_path: object) -> None:
    import pathlib

    import yaml

    path = pathlib.Path(str(tmp_path)) / "ring.yaml"
    path.write_text(yaml.safe_dump_all(_ring(required=True)))
    out, err = io.StringIO(), io.StringIO()
    from topobridge.inputs import Snapshot

    code = cmd_explain.run(
        gang="ring", snapshot=Snapshot((str(path),)), output_format="json", out=out, err=err
    )
    assert code == cmd_explain.EXIT_OK, err.getvalue()
    (held,) = json.loads(out.getvalue())["heldBy"]
    assert (
        "topologyKey kubernetes.io/hostname" in held
        and "requiredDuringSchedulingIgnoredDuringExecution[0]" in held
    )


def test_pods_allocatable_is_named_for_a_gang_bound_to_one_node() -> None:
    """A gang that must gather on one node: the places are single nodes (their offers' fit)."""
    nodes = spine_block_nodes(LAYOUT, pods="2")
    running = [
        pod(f"busy-{i}-{j}", cpu="1", memory="1Gi", node_name=f"n{i}", scheduler="other")
        for i in range(6)
        for j in range(2 if i < 4 else 1)
    ]
    pair = koord_gang("pair", 2, gather=[("NodeTopologyLayer", "MustGather")])
    e = _one([*nodes, *running, pair, *members("pair", 2, cpu="1", memory="1Gi")], "pair")
    assert not e.placed and len(e.held) == 1 and e.held[0].startswith("the nodes' pods allocatable")
    assert (
        "status.allocatable.pods (the kubelet's maxPods) of n4 3 (now 2) would place it in n4"
        in e.suggestions
    )


def test_a_jobs_anti_affinity_is_named_in_its_pod_template() -> None:
    """The seed's one-pod-per-host Job of three pods on two nodes: the term is the Job's to change."""
    objects = [*cluster(GPU_LAYOUT), *job("dt", 3, {f"{G}max-nodes": "3"}, gpus="2", anti_affinity=True)]
    e = _one(objects, "ml/dt", ("topobridge",))
    term = "Job dt: spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    (held,) = e.held
    assert held.startswith(f"its members' required anti-affinity among themselves ({term}, topologyKey ")
    assert (
        f"{term} as a preferredDuringSchedulingIgnoredDuringExecution term would place it in n0"
        in e.suggestions
    )
    assert _one(
        [*cluster(GPU_LAYOUT), *job("dt", 3, {f"{G}max-nodes": "3"}, gpus="2")], "ml/dt", ("topobridge",)
    ).placed
