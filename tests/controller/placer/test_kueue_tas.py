"""Kueue's topology-aware scheduling annotations, honoured by the fallback scheduler for the pods
it serves: an Indexed Job whose pod template carries `kueue.x-k8s.io/podset-*` is one gang of
`parallelism` pods ranked by completion index; required keeps it in one domain of the level,
preferred tries the level first, slices keep `size` consecutive ranks in one domain; a pod Kueue
gates (`kueue.x-k8s.io/topology`) is Kueue's to place. The tree is a Kueue Topology's levels
over node labels."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from placer_objects import Obj, node, pod, run

from translations import gpu, kueue, lws

BLOCK, RACK = "cloud.example.com/block", "cloud.example.com/rack"
HOST = "kubernetes.io/hostname"
TOPOLOGY: Obj = {
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "Topology",
    "metadata": {"name": "default"},
    "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": RACK}, {"nodeLabel": HOST}]},
}


def cluster() -> list[Obj]:
    """Two blocks of two racks of two nodes (4 CPU each): b0/r0 = n0, n1 ... b1/r3 = n6, n7."""
    out: list[Obj] = [TOPOLOGY]
    for i in range(8):
        out.append(node(f"n{i}", cpu="4", labels={BLOCK: f"b{i // 4}", RACK: f"r{i // 2}"}))
    return out


def kueue_job(
    name: str, parallelism: int, annotations: dict[str, str], *, cpu: str = "2", gated: bool = False
) -> list[Obj]:
    uid = f"uid-{name}"
    out: list[Obj] = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "uid": uid},
            "spec": {
                "parallelism": parallelism,
                "completions": parallelism,
                "completionMode": "Indexed",
                "template": {"metadata": {"annotations": annotations}, "spec": {"containers": []}},
            },
        }
    ]
    for i in range(parallelism):
        p = pod(
            f"{name}-{i}",
            cpu=cpu,
            memory="1Gi",
            scheduler="topobridge",
            labels={"job-name": name, "controller-uid": uid},
            annotations={**annotations, gpu.COMPLETION_INDEX: str(i)},
        )
        if gated:
            p["spec"]["schedulingGates"] = [{"name": kueue.TOPOLOGY_GATE}]
        out.append(p)
    return out


def racks(bound: dict[str, str], name: str) -> Counter[str]:
    return Counter(f"r{int(n[1:]) // 2}" for k, n in bound.items() if k.startswith(f"default/{name}-"))


def test_required_rack_keeps_the_job_in_one_rack() -> None:
    result = run([*cluster(), *kueue_job("train", 4, {kueue.REQUIRED_TOPOLOGY: RACK})])
    assert len(racks(result.bound, "train")) == 1 and sum(racks(result.bound, "train").values()) == 4
    assert result.gangs["job:default/train"][1] == 1  # a rack: the lowest domain tier (block is 2)


def test_required_rack_too_big_for_any_rack_waits() -> None:
    result = run([*cluster(), *kueue_job("big", 6, {kueue.REQUIRED_TOPOLOGY: RACK})])
    assert not any(k.startswith("default/big-") for k in result.bound)
    assert "job:default/big" in result.unschedulable


def test_preferred_rack_falls_back_to_the_block_above() -> None:
    result = run([*cluster(), *kueue_job("wide", 6, {kueue.PREFERRED_TOPOLOGY: RACK})])
    placed = racks(result.bound, "wide")
    assert sum(placed.values()) == 6
    assert set(placed) <= {"r0", "r1"} or set(placed) <= {"r2", "r3"}  # one block, the level above


def test_slices_keep_consecutive_ranks_in_one_rack() -> None:
    annotations = {kueue.REQUIRED_TOPOLOGY: BLOCK, kueue.SLICE_REQUIRED_TOPOLOGY: RACK, kueue.SLICE_SIZE: "2"}
    result = run([*cluster(), *kueue_job("sliced", 4, annotations, cpu="1")])
    node_of = {
        int(k.rsplit("-", 1)[1]): n for k, n in result.bound.items() if k.startswith("default/sliced-")
    }
    assert len(node_of) == 4
    rack = {i: int(n[1:]) // 2 for i, n in node_of.items()}
    assert rack[0] == rack[1] and rack[2] == rack[3]
    assert len({int(n[1:]) // 4 for n in node_of.values()}) == 1  # one block


def test_a_required_level_the_tree_lacks_leaves_the_job_pending_saying_so() -> None:
    result = run([*cluster(), *kueue_job("odd", 2, {kueue.REQUIRED_TOPOLOGY: "cloud.example.com/pod"})])
    message = result.unschedulable["job:default/odd"]
    assert "'cloud.example.com/pod' is no level of the topology tree" in message


@pytest.mark.parametrize("gated", [True, False], ids=["kueue-gated", "ungated"])
def test_a_pod_kueue_gates_is_kueues(gated: bool) -> None:
    result: Any = run([*cluster(), *kueue_job("gated", 2, {kueue.REQUIRED_TOPOLOGY: RACK}, gated=gated)])
    bound = [k for k in result.bound if k.startswith("default/gated-")]
    if gated:
        assert bound == []
        assert "Kueue's topology-aware scheduling places it" in result.unschedulable["job:default/gated"]
    else:
        assert len(bound) == 2


def _kueue_pods(name: str, count: int, annotations: dict[str, str]) -> list[Obj]:
    """A Kueue plain-pod group: the group label, its size and the TAS annotations on each pod."""
    return [
        pod(
            f"{name}-{i}",
            cpu="2",
            memory="1Gi",
            scheduler="topobridge",
            labels={kueue.POD_GROUP_NAME_LABEL: name, kueue.POD_GROUP_POD_INDEX_LABEL: str(i)},
            annotations={**annotations, kueue.POD_GROUP_TOTAL_COUNT: str(count)},
        )
        for i in range(count)
    ]


def test_a_kueue_pod_group_with_required_rack_lands_in_one_rack() -> None:
    """Kueue's pod integration reads the TAS annotations from the pods: a "rack required" group
    of plain pods is one gang in one rack, not four pods each placed on its own (rack r0 has
    room for two of them only, and single pods binpack into it)."""
    fillers = [
        pod(f"filler-{n}", cpu="2", memory="1Gi", node_name=n, scheduler="topobridge") for n in ("n0", "n1")
    ]
    result = run([*cluster(), *fillers, *_kueue_pods("group", 4, {kueue.REQUIRED_TOPOLOGY: RACK})])
    placed = racks(result.bound, "group")
    assert sum(placed.values()) == 4
    assert len(placed) == 1, placed
    assert "kueue:default/group" in result.gangs


def test_a_kueue_pod_group_waits_whole_until_it_has_its_total_count() -> None:
    result = run([*cluster(), *_kueue_pods("group", 4, {kueue.REQUIRED_TOPOLOGY: RACK})[:3]])
    assert not any(k.startswith("default/group-") for k in result.bound)


def test_lws_leader_and_workers_sharing_a_podset_group_name_land_in_one_rack() -> None:
    """Kueue's LWS integration: the leader's and the workers' templates carry one
    `podset-group-name`, so the group (leader + workers) is placed in one domain of the
    required level, not pod by pod."""
    tas = {kueue.REQUIRED_TOPOLOGY: RACK, kueue.GROUP_NAME: "lws-group"}
    pods = [
        pod(
            f"serve-0-{i}" if i else "serve-0",
            cpu="2",
            memory="1Gi",
            scheduler="topobridge",
            labels={lws.NAME_LABEL: "serve", lws.GROUP_INDEX_LABEL: "0", lws.WORKER_INDEX_LABEL: str(i)},
            annotations={**tas, lws.SIZE_ANNOTATION: "4"},
        )
        for i in range(4)
    ]
    fillers = [
        pod(f"filler-{n}", cpu="2", memory="1Gi", node_name=n, scheduler="topobridge") for n in ("n0", "n1")
    ]
    result = run([*cluster(), *fillers, *pods])
    placed = racks(result.bound, "serve")
    assert sum(placed.values()) == 4
    assert len(placed) == 1, placed
    assert "kueue:default/serve-0" in result.gangs
