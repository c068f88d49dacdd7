"""`topobridge tree` on nodes labelled only by topograph v1.0 and GPU Feature Discovery: the
tree the scheduler builds from those labels (fabric tiers, NVLink racks, cliques), each domain
with the label that made it; from plain objects, and from the real local kube-apiserver."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from typing import Any

import pytest
from nvl72_seed import CLIQUE, RACKS, TIER0, TIER1, nvl72_nodes

from controller.errors import NotFoundError
from controller.kube import Kube
from controller.resources import NODES, PODS, VOLCANO_PODGROUPS
from topobridge.cmd_tree import cluster_view, render, run

TOPOLOGY = "topology from node labels: fabric-tier-1 > fabric-tier-0 > nvlink-rack > nvlink-clique"
RACK = "(ClusterUUID of nvidia.com/gpu.clique)"
GPUS = {"nvidia.com/gpu": "4"}


def test_tree_of_topograph_and_gfd_labels_names_each_domains_label() -> None:
    lines = render(cluster_view(nvl72_nodes())).splitlines()
    assert lines[0] == TOPOLOGY
    assert lines[2:10] == [
        "cluster  free cpu 104/104 mem 416Gi/416Gi gpu 48/48",
        "├── fabric-tier-1/S-spine-0 (fabric.topograph.run/tier-1)  free cpu 72/72 mem 288Gi/288Gi gpu 32/32",
        "│   ├── fabric-tier-0/S-leaf-0 (fabric.topograph.run/tier-0)  free cpu 32/32 mem 128Gi/128Gi gpu 16/16",
        f"│   │   └── nvlink-rack/{RACKS[0]} {RACK}  free cpu 32/32 mem 128Gi/128Gi gpu 16/16",
        f"│   │       ├── nvlink-clique/{RACKS[0]}.1 (nvidia.com/gpu.clique)  free cpu 16/16 mem 64Gi/64Gi gpu 8/8",
        "│   │       │   ├── gb200-r0-t0  free cpu 8/8 mem 32Gi/32Gi gpu 4/4",
        "│   │       │   └── gb200-r0-t1  free cpu 8/8 mem 32Gi/32Gi gpu 4/4",
        f"│   │       └── nvlink-clique/{RACKS[0]}.2 (nvidia.com/gpu.clique)  free cpu 16/16 mem 64Gi/64Gi gpu 8/8",
    ]
    # Rack 1 is cabled to two leaves: it hangs off the spine, beside the leaf keeping the CPU node.
    assert lines[12:15] == [
        "│   ├── fabric-tier-0/S-leaf-1 (fabric.topograph.run/tier-0)  free cpu 8/8 mem 32Gi/32Gi",
        "│   │   └── cpu-0        free cpu 8/8 mem 32Gi/32Gi",
        f"│   └── nvlink-rack/{RACKS[1]} {RACK}  free cpu 32/32 mem 128Gi/128Gi gpu 16/16",
    ]


def test_tree_data_carries_each_domains_source_and_hypernode_domains_have_none() -> None:
    doc = cluster_view(nvl72_nodes()).to_dict()
    spine = doc["domains"][0]
    assert (spine["name"], spine["tier"], spine["source"]) == ("fabric-tier-1/S-spine-0", 4, TIER1)
    rack = spine["domains"][-1]
    assert (rack["tier"], rack["source"]) == (2, f"ClusterUUID of {CLIQUE}")
    assert [(c["tier"], c["source"]) for c in rack["domains"]] == [(1, CLIQUE), (1, CLIQUE)]
    hypernode = {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "b0"},
        "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "cpu-0"}}}]},
    }
    from_hypernodes = cluster_view([*nvl72_nodes(), hypernode])
    assert from_hypernodes.topology == "topology from HyperNodes: tier 1"
    assert [(d.name, d.source) for d in from_hypernodes.domains] == [("b0", None)]
    assert "b0  free" in render(from_hypernodes), "no source in brackets for a HyperNode"


def _renamed(tag: str) -> list[dict[str, Any]]:
    out = []
    for raw in nvl72_nodes():
        name = f"{tag}-{raw['metadata']['name']}"
        raw["metadata"]["name"] = name
        raw["metadata"]["labels"]["kubernetes.io/hostname"] = name
        out.append(raw)
    return out


def _pod(name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {"scheduling.k8s.io/group-name": "train"}},
        "spec": {
            "schedulerName": "volcano",
            "nodeName": node,
            "containers": [{"name": "c", "image": "x", "resources": {"requests": GPUS, "limits": GPUS}}],
        },
    }


@pytest.mark.integration
async def test_tree_of_a_live_cluster_labelled_by_topograph_and_gfd(
    control_plane: Any, kube: Any, namespace: str
) -> None:
    k = Kube.from_api_client(kube)
    tag = namespace.rsplit("-", 1)[-1]
    nodes = _renamed(tag)
    try:
        for raw in nodes:
            status = raw.pop("status")
            await k.create(NODES, raw)
            await k.merge_patch(NODES, raw["metadata"]["name"], {"status": status}, subresource="status")
        await k.create(
            VOLCANO_PODGROUPS,
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "train"},
                "spec": {"minMember": 2, "queue": "default"},
            },
            namespace=namespace,
        )
        for i in range(2):
            await k.create(PODS, _pod(f"train-{i}", f"{tag}-gb200-r1-t{i}"), namespace=namespace)

        out, err = io.StringIO(), io.StringIO()
        code = await asyncio.to_thread(
            run, kubeconfig=control_plane.kubeconfig, context=None, namespace=namespace, out=out, err=err
        )
        text = out.getvalue()
        print(text)  # the report quotes it
        # Other tests' pods may linger while their namespaces go; nothing may be about ours.
        assert code == 0 and [w for w in err.getvalue().splitlines() if tag in w] == [], err.getvalue()
        lines = text.splitlines()
        assert lines[0] == TOPOLOGY
        spine = next(
            i for i, line in enumerate(lines) if line.startswith("├── fabric-tier-1/S-spine-0 (fabric")
        )
        leaf = lines[spine + 1]
        assert leaf.startswith(f"│   ├── fabric-tier-0/S-leaf-0 ({TIER0})  free cpu 32/32")
        assert lines[spine + 2].startswith(f"│   │   └── nvlink-rack/{RACKS[0]} {RACK}  free cpu 32/32")
        rack1 = next(line for line in lines if f"nvlink-rack/{RACKS[1]}" in line)
        assert rack1.startswith(
            f"│   └── nvlink-rack/{RACKS[1]} {RACK}  free cpu 32/32 mem 128Gi/128Gi gpu 8/16"
        )
        clique = next(line for line in lines if f"nvlink-clique/{RACKS[1]}.1 " in line)
        assert clique.endswith(f"gpu 0/8   gangs: volcano:{namespace}/train")
        assert f"  volcano:{namespace}/train  in nvlink-clique/{RACKS[1]}.1 (tier 1), 2/2 bound" in lines

        out = io.StringIO()
        await asyncio.to_thread(
            run, kubeconfig=control_plane.kubeconfig, context=None, output_format="json", out=out, err=err
        )
        doc = json.loads(out.getvalue())
        roots = {d["name"]: d for d in doc["domains"]}
        assert roots["fabric-tier-1/S-spine-1"]["source"] == TIER1
        rack2 = roots["fabric-tier-1/S-spine-1"]["domains"][0]["domains"][0]
        assert (rack2["name"], rack2["source"]) == (f"nvlink-rack/{RACKS[2]}", f"ClusterUUID of {CLIQUE}")
    finally:
        for raw in nodes:
            with contextlib.suppress(NotFoundError):
                await k.delete(NODES, raw["metadata"]["name"])
