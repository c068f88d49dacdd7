"""Objects the ui tests share: the demo scenarios, small HyperNode trees, a pasted job."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from topobridge.inputs import read_inputs

DEMO = Path(__file__).resolve().parents[2] / "controller" / "placer" / "demo"
Obj = dict[str, Any]


def demo(name: str) -> list[Obj]:
    return [loc.obj for loc in read_inputs([str(DEMO / f"{name}.yaml")]).objects]


def node(name: str, labels: dict[str, str], *, cpu: str = "8", gpus: int = 0) -> Obj:
    alloc = {"cpu": cpu, "memory": "32Gi", "pods": "110"}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def hypernode(name: str, tier: int, kind: str, members: list[str]) -> Obj:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {
            "tier": tier,
            "members": [{"type": kind, "selector": {"exactMatch": {"name": m}}} for m in members],
        },
    }


def tree_cluster(fanout: tuple[int, ...], per_leaf: int, *, gpus: int = 0) -> list[Obj]:
    """HyperNodes `fanout` wide from the top down (`h<tier>-<i>`), `per_leaf` nodes under each leaf."""
    out: list[Obj] = []
    tiers = len(fanout)
    count = 1
    for depth, wide in enumerate(fanout):
        tier = tiers - depth
        children = count * wide
        if depth + 1 < tiers:
            kids = [f"h{tier - 1}-{i}" for i in range(children * fanout[depth + 1])]
            per = fanout[depth + 1]
            out += [
                hypernode(f"h{tier}-{i}", tier, "HyperNode", kids[i * per : (i + 1) * per])
                for i in range(children)
            ]
        else:
            out += [
                hypernode(f"h{tier}-{i}", tier, "Node", [f"n{i * per_leaf + j}" for j in range(per_leaf)])
                for i in range(children)
            ]
            out += [node(f"n{v}", {}, gpus=gpus) for v in range(children * per_leaf)]
        count = children
    return out


def walk(data: Obj) -> Iterator[Obj]:
    yield data
    for d in data.get("domains") or []:
        yield from walk(d)


JOB = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: try-me, namespace: default}
spec: {minMember: 2, networkTopology: {mode: hard, highestTierAllowed: 1}}
"""


def job(pods: int, cpu: str, *, name: str = "try-me") -> str:
    docs = [JOB.replace("try-me", name).replace("minMember: 2", f"minMember: {pods}")]
    for i in range(pods):
        docs.append(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{name}-{i}",
                        "namespace": "default",
                        "annotations": {"scheduling.k8s.io/group-name": name},
                    },
                    "spec": {
                        "schedulerName": "volcano",
                        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
                    },
                }
            )
        )
    return "\n---\n".join(docs)
