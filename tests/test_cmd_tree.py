"""`topobridge tree` on the real local kube-apiserver: the tree the scheduler builds from
HyperNodes, free/allocatable per domain, the gang placed there, a pending gang with the reason
its pod shows, the filters, every output format, and nothing written back. A batch/v1 Job of
the GPU dialect is one gang to `tree` and to `simulate --from-cluster` alike, as to the live
scheduler: both read the kinds it watches."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from typing import Any

import pytest
import yaml
from gpu_seed import SEED_ANNOTATIONS

from controller.errors import NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import HYPERNODES, JOBS, NODES, PODS, VOLCANO_PODGROUPS
from topobridge import cmd_simulate
from topobridge.cmd_tree import run

pytestmark = pytest.mark.integration
REASON = "0/3 nodes are available: 3 Insufficient cpu."


def _pod(name: str, *, node: str | None = None, group: str | None = None, cpu: str = "2") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if group is not None:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    spec: dict[str, Any] = {
        "schedulerName": "volcano",
        "containers": [
            {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "1536Mi"}}}
        ],
    }
    if node is not None:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _hypernode(name: str, tier: int, members: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {
            "tier": tier,
            "members": [{"type": kind, "selector": {"exactMatch": {"name": n}}} for kind, n in members],
        },
    }


async def _tree(kubeconfig: str, **kw: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await asyncio.to_thread(run, kubeconfig=kubeconfig, context=None, out=out, err=err, **kw)
    return code, out.getvalue(), err.getvalue()


async def test_tree_of_the_live_cluster(control_plane: Any, kube: Any, namespace: str) -> None:
    k = Kube.from_api_client(kube)
    nodes = [f"{namespace}-{i}" for i in range(3)]
    blocks = [f"{namespace}-b0", f"{namespace}-b1"]
    spine = f"{namespace}-s0"
    try:
        for n in nodes:
            await k.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}})
            await k.merge_patch(
                NODES,
                n,
                {"status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}},
                subresource="status",
            )
        await k.create(HYPERNODES, _hypernode(blocks[0], 1, [("Node", nodes[0]), ("Node", nodes[1])]))
        await k.create(HYPERNODES, _hypernode(blocks[1], 1, [("Node", nodes[2])]))
        await k.create(HYPERNODES, _hypernode(spine, 2, [("HyperNode", blocks[0]), ("HyperNode", blocks[1])]))
        for name, min_member in (("train", 2), ("waiting", 1)):
            await k.create(
                VOLCANO_PODGROUPS,
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": name},
                    "spec": {"minMember": min_member, "queue": "default"},
                },
                namespace=namespace,
            )
        await k.create(PODS, _pod("train-0", node=nodes[0], group="train"), namespace=namespace)
        await k.create(PODS, _pod("train-1", node=nodes[1], group="train"), namespace=namespace)
        await k.create(PODS, _pod("waiting-0", group="waiting", cpu="16"), namespace=namespace)
        condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": REASON}
        await k.merge_patch(
            PODS,
            "waiting-0",
            {"status": {"conditions": [condition]}},
            namespace=namespace,
            subresource="status",
        )
        before = {p["metadata"]["name"]: p for p in (await k.list(PODS, namespace=namespace)).items}

        code, text, err = await _tree(control_plane.kubeconfig, namespace=namespace)
        assert code == 0, err
        lines = text.splitlines()
        assert lines[0] == "topology from HyperNodes: tier 2 > tier 1"
        block0 = next(line for line in lines if f"{blocks[0]}  " in line)
        # 2 of 8 cpu and 1536Mi of 32Gi taken on each of its two nodes: free 12/16 and 61Gi/64Gi.
        assert "free cpu 12/16 mem 61Gi/64Gi" in block0 and f"gangs: volcano:{namespace}/train" in block0
        node0 = next(line for line in lines if f"{nodes[0]}  " in line)
        assert "free cpu 6/8 mem 31232Mi/32Gi" in node0 and "● train-0" in node0
        assert f"  volcano:{namespace}/train  in {blocks[0]} (tier 1), 2/2 bound" in lines
        assert f"  volcano:{namespace}/waiting  1 pending, 0/1 bound: {REASON}" in lines
        assert "None" not in text and "{'" not in text, "no Python repr"

        code, out, _ = await _tree(control_plane.kubeconfig, namespace=namespace, output_format="json")
        doc = json.loads(out)
        spine_doc = next(d for d in doc["domains"] if d["name"] == spine)
        block_doc = next(d for d in spine_doc["domains"] if d["name"] == blocks[0])
        assert block_doc["free"] == {"cpu": "12", "memory": "61Gi"}
        assert block_doc["allocatable"] == {"cpu": "16", "memory": "64Gi"}
        assert block_doc["gangs"] == [f"volcano:{namespace}/train"]
        assert doc["gangs"]["pending"] == [
            {
                "gang": f"volcano:{namespace}/waiting",
                "pending": 1,
                "bound": 0,
                "minMember": 1,
                "reason": REASON,
            }
        ]
        code, out, _ = await _tree(control_plane.kubeconfig, namespace=namespace, output_format="yaml")
        assert yaml.safe_load(out) == doc

        code, text, _ = await _tree(control_plane.kubeconfig, gang=f"{namespace}/train")
        assert code == 0
        assert nodes[2] not in text and blocks[1] not in text, "--gang shows only the branches holding it"
        assert f"{namespace}/waiting" not in text
        code, _, err = await _tree(control_plane.kubeconfig, gang=f"{namespace}/nope")
        assert code == 1 and err.endswith(f"error: --gang {namespace}/nope: no gang of that name\n")

        after = {p["metadata"]["name"]: p for p in (await k.list(PODS, namespace=namespace)).items}
        assert {n: p["metadata"]["resourceVersion"] for n, p in after.items()} == {
            n: p["metadata"]["resourceVersion"] for n, p in before.items()
        }, "read-only"
    finally:
        for hn in (spine, *blocks):
            await _ignore_missing(k.delete(HYPERNODES, hn))
        for n in nodes:
            await _ignore_missing(k.delete(NODES, n))


async def _ignore_missing(call: Any) -> None:
    with contextlib.suppress(NotFoundError):
        await call


# --- a GPU-dialect Job ---------------------------------------------------------------------------

NVLINK = "topobridge.io/gpu-nvlink"
JOB = "distributed-training"


def _gpu_node(name: str, pool: str) -> JsonDict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"topobridge.test/pool": pool, NVLINK: "true"}},
    }


def _seed_job(namespace: str, pool: str, scheduler: str) -> JsonDict:
    """The GPU seed's Job: 2 pods of 4 GPUs, at most 2 nodes, packed, NVLink."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": JOB, "namespace": namespace, "annotations": dict(SEED_ANNOTATIONS)},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "template": {
                "spec": {
                    "schedulerName": scheduler,
                    "nodeSelector": {"topobridge.test/pool": pool},
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "trainer",
                            "image": "busybox",
                            "resources": {
                                "requests": {"nvidia.com/gpu": "4", "cpu": "16", "memory": "64Gi"},
                                "limits": {"nvidia.com/gpu": "4"},
                            },
                        }
                    ],
                },
            },
        },
    }


async def _gpu_cluster(k: Kube, namespace: str, nodes: list[str], pool: str) -> list[str]:
    """Three 4-GPU nodes: block b0 holds the first two, b1 the third, a spine s0 above both.
    Returns the HyperNodes, lowest first."""
    for n in nodes:
        await k.create(NODES, _gpu_node(n, pool))
        alloc = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "4"}
        await k.merge_patch(NODES, n, {"status": {"allocatable": alloc}}, subresource="status")
        await k.merge_patch(NODES, n, {"spec": {"taints": None}})
    b0, b1, s0 = f"{namespace}-b0", f"{namespace}-b1", f"{namespace}-s0"
    await k.create(HYPERNODES, _hypernode(b0, 1, [("Node", nodes[0]), ("Node", nodes[1])]))
    await k.create(HYPERNODES, _hypernode(b1, 1, [("Node", nodes[2])]))
    await k.create(HYPERNODES, _hypernode(s0, 2, [("HyperNode", b0), ("HyperNode", b1)]))
    return [b0, b1, s0]


async def _job_pods(k: Kube, namespace: str, count: int) -> list[str]:
    """The Job's pods once the Job controller has created them all."""
    for _ in range(300):
        pods = (await k.list(PODS, namespace=namespace, label_selector=f"job-name={JOB}")).items
        if len(pods) == count:
            return sorted(p["metadata"]["name"] for p in pods)
        await asyncio.sleep(0.1)
    raise AssertionError(f"the Job controller made {len(pods)} of {count} pods in 30s")


async def test_tree_and_simulate_from_cluster_see_a_gpu_jobs_pods_as_its_one_gang(
    control_plane: Any, kube: Any, namespace: str
) -> None:
    k = Kube.from_api_client(kube)
    pool = namespace.rsplit("-", 1)[-1]
    scheduler = f"sim-{pool}"
    nodes = [f"{namespace}-g{i}" for i in range(3)]
    hypernodes: list[str] = []
    try:
        hypernodes = await _gpu_cluster(k, namespace, nodes, pool)
        await k.create(JOBS, _seed_job(namespace, pool, scheduler), namespace=namespace)
        pods = await _job_pods(k, namespace, 2)
        gang = f"job:{namespace}/{JOB}"

        code, text, err = await _tree(control_plane.kubeconfig, namespace=namespace)
        assert code == 0, err
        print(f"topobridge tree -n {namespace}:\n{text}")
        assert f"  {gang}  2 pending, 0/2 bound: waiting for the scheduler" in text.splitlines()
        assert "pod:" not in text, "the Job's pods are not gangs of one"
        code, out, _ = await _tree(control_plane.kubeconfig, gang=f"{namespace}/{JOB}", output_format="json")
        assert code == 0
        assert json.loads(out)["gangs"]["pending"] == [
            {"gang": gang, "pending": 2, "bound": 0, "minMember": 2, "reason": "waiting for the scheduler"}
        ]

        out_io, err_io = io.StringIO(), io.StringIO()
        code = await asyncio.to_thread(
            cmd_simulate.run,
            cmd_simulate.Source(from_cluster=True, kubeconfig=control_plane.kubeconfig),
            scheduler_names=scheduler,
            output="json",
            out=out_io,
            err=err_io,
        )
        assert code == 0, err_io.getvalue()
        result = json.loads(out_io.getvalue())
        # One gang, packed into the block of two 4-GPU nodes (max-nodes 2), never split.
        assert result["gangs"] == {gang: {"domain": hypernodes[0], "tier": 1}}
        assert sorted(result["bound"]) == [f"{namespace}/{p}" for p in pods]
        assert sorted(result["bound"].values()) == nodes[:2]
    finally:
        with contextlib.suppress(NotFoundError):
            await k.delete(JOBS, JOB, namespace=namespace)
        for hn in reversed(hypernodes):
            await _ignore_missing(k.delete(HYPERNODES, hn))
        for n in nodes:
            await _ignore_missing(k.delete(NODES, n))
