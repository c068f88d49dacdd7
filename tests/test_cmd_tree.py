"""`topobridge tree` on the real local kube-apiserver: the tree the scheduler builds from
HyperNodes, free/allocatable per domain, the gang placed there, a pending gang with the reason
its pod shows, the filters, every output format, and nothing written back."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from typing import Any

import pytest
import yaml

from controller.errors import NotFoundError
from controller.kube import Kube
from controller.resources import HYPERNODES, NODES, PODS, VOLCANO_PODGROUPS
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
