"""The GPU dialect end to end: `topobridge run` against kube-apiserver 1.20.2 (with its Job
controller), GPU nodes as API objects, the kubelet stand-in running what is bound."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest
from gpu_seed import SEED_ANNOTATIONS

from controller.errors import ApiError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import JOBS, PODS
from e2e import cluster as clustermod
from e2e import local
from e2e.cluster import ClusterSpec
from e2e.kubelet import Kubelet

pytestmark = pytest.mark.integration

G = "gpu.topology/"
SEED = SEED_ANNOTATIONS
NVLINK = "topobridge.io/gpu-nvlink"
LAYERS = [
    {"layer": "SpineLayer", "labelKey": "network.topology.nvidia.com/spine"},
    {"layer": "BlockLayer", "labelKey": "network.topology.nvidia.com/block"},
]
# block-0 has exactly two 4-GPU nodes: the narrowest domain that holds the seed's Job.
GPU4 = ClusterSpec.model_validate(
    {
        "name": "gpu-4",
        "nodeResources": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "4"},
        "layers": LAYERS,
        "nodes": {
            "gpu-0": ["spine-0", "block-0"],
            "gpu-1": ["spine-0", "block-0"],
            "gpu-2": ["spine-0", "block-1"],
            "gpu-3": ["spine-0", "block-1"],
            "gpu-4": ["spine-0", "block-1"],
        },
    }
)
# One 8-GPU node (so admission accepts max-nodes 1 for 8 GPUs), half of it already in use.
GPU8 = ClusterSpec.model_validate(
    {
        "name": "gpu-8",
        "nodeResources": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"},
        "layers": LAYERS,
        "nodes": {"gpu-big": ["spine-1", "block-2"]},
    }
)


def seed_job(
    namespace: str,
    annotations: dict[str, str],
    *,
    name: str = "distributed-training",
    anti_affinity: bool = True,
) -> dict[str, Any]:
    """The seed's distributed-training Job (schedulerName: topobridge's)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "template": {
                "metadata": {"labels": {"job-name": name}},
                "spec": {
                    "schedulerName": "topobridge",
                    "affinity": None
                    if not anti_affinity
                    else {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {"matchLabels": {"job-name": name}},
                                    "topologyKey": "kubernetes.io/hostname",
                                }
                            ]
                        }
                    },
                    "containers": [
                        {
                            "name": "trainer",
                            "image": "busybox",
                            "command": ["sleep", "365d"],
                            "resources": {
                                "limits": {"nvidia.com/gpu": "4"},
                                "requests": {"nvidia.com/gpu": "4", "cpu": "16", "memory": "64Gi"},
                            },
                        }
                    ],
                    "restartPolicy": "Never",
                },
            },
        },
    }


async def test_the_running_webhook_denies_a_bad_gpu_annotation(
    topobridge: local.TopobridgeState, admin: Kube, make_namespace: Any
) -> None:
    namespace = await make_namespace("e2e-gpu-webhook")
    bad = seed_job(
        namespace, {f"{G}multi-node-policy": "pack", f"{G}max-nodes": "0", f"{G}require-nvlink": "yes"}
    )
    with pytest.raises(ApiError) as denied:
        await admin.create(JOBS, bad)
    message = str(denied.value)
    assert "jobs.validate.topobridge.io" in message
    assert (
        f'metadata.annotations[{G}max-nodes]: Invalid value: "0": must be a decimal integer from 1 to 2147483647'
        in message
    )
    assert f'metadata.annotations[{G}require-nvlink]: Unsupported value: "yes"' in message
    good = seed_job(namespace, {f"{G}multi-node-policy": "pack", f"{G}max-nodes": "2"})
    good["spec"]["parallelism"] = 0  # admitted, but no pod to schedule in this test
    created = await admin.create(JOBS, good)
    assert created["metadata"]["name"] == "distributed-training"


async def _job_pods(admin: Kube, namespace: str, job: str) -> list[JsonDict]:
    pods = (await admin.list(PODS, namespace=namespace, label_selector=f"job-name={job}")).items
    return sorted(pods, key=lambda p: p["metadata"]["name"])


async def _wait(admin: Kube, namespace: str, job: str, done: Any, timeout: float = 60.0) -> list[JsonDict]:
    deadline = time.monotonic() + timeout
    while True:
        pods = await _job_pods(admin, namespace, job)
        if done(pods) or time.monotonic() > deadline:
            return pods
        await asyncio.sleep(0.3)


def _unschedulable(pod: JsonDict) -> str:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return str(cond.get("message") or "")
    return ""


async def test_the_seed_job_is_placed_as_one_gang_and_an_impossible_one_waits_whole(
    topobridge: local.TopobridgeState, admin: Kube, kubelet: Kubelet, make_namespace: Any
) -> None:
    namespace = await make_namespace("e2e-gpu")
    await clustermod.create_nodes(admin, GPU4, labels={NVLINK: "true"})
    await clustermod.create_nodes(admin, GPU8, labels={NVLINK: "true"})
    await clustermod.create_topology(admin, GPU4)
    try:
        # The seed's Job: both pods as one gang on the two nodes of block-0, with their path.
        await admin.create(JOBS, seed_job(namespace, SEED))
        pods = await _wait(
            admin,
            namespace,
            "distributed-training",
            lambda ps: len(ps) == 2 and all(p["spec"].get("nodeName") for p in ps),
        )
        where = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods}
        assert sorted(n for n in where.values() if n) == ["gpu-0", "gpu-1"], (
            where,
            local.log_tail(topobridge, 30),
        )
        for p in pods:
            notes = p["metadata"].get("annotations") or {}
            assert notes["topobridge.io/topology-path"] == f"spine-0/block-0/{p['spec']['nodeName']}"
            assert notes["topobridge.io/ring-order"] == "0,1"

        # Half of the 8-GPU node in use: no node can take both pods of a max-nodes 1 Job now.
        filler = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "filler", "namespace": namespace},
            "spec": {
                "nodeName": "gpu-big",
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox",
                        "resources": {"requests": {"nvidia.com/gpu": "4"}, "limits": {"nvidia.com/gpu": "4"}},
                    }
                ],
            },
        }
        await admin.create(PODS, filler)
        one_node = {f"{G}multi-node-policy": "pack", f"{G}max-nodes": "1"}
        await admin.create(JOBS, seed_job(namespace, one_node, name="one-node", anti_affinity=False))
        reason = "the gang's 2 pods need at least 2 nodes now, gpu.topology/max-nodes 1 allows 1"
        pods = await _wait(
            admin,
            namespace,
            "one-node",
            lambda ps: len(ps) == 2 and all(reason in _unschedulable(p) for p in ps),
        )
        assert [p["spec"].get("nodeName") for p in pods] == [None, None]
        assert all(reason in _unschedulable(p) for p in pods), [_unschedulable(p) for p in pods]
    finally:
        for job in (await admin.list(JOBS, namespace=namespace)).items:
            with contextlib.suppress(NotFoundError):
                await admin.delete(
                    JOBS, job["metadata"]["name"], namespace=namespace, propagation="Background"
                )
        for pod in await clustermod.list_pods(admin, namespace):
            with contextlib.suppress(NotFoundError):
                await admin.delete(PODS, pod["metadata"]["name"], namespace=namespace, grace_period_seconds=0)
        await clustermod.delete_cluster(admin, GPU8)
        await clustermod.delete_cluster(admin, GPU4)
