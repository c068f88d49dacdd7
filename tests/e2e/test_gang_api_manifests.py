"""The 1.37 kind manifests for Kubernetes' own gang API (`e2e/kind/gang-api/`, for users: this
machine cannot run kind) stay what their README says: the gates on, the versions served, two
blocks of workers, and a PodGroup topobridge's rules admit and its scheduler keeps in one block."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from controller.placer.scenario import load_scenario, simulate
from webhooks.rules import ClusterState, validate_object

DIR = Path(__file__).resolve().parents[2] / "e2e" / "kind" / "gang-api"
BLOCK = "topology.example.com/block"


def _load(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DIR / name).read_text()) if d]


def test_the_cluster_serves_the_api_with_its_gates_on() -> None:
    (cluster,) = _load("cluster-1.37.yaml")
    gates = cluster["featureGates"]
    assert {"GenericWorkload", "GangScheduling", "TopologyAwareWorkloadScheduling"} <= set(gates)
    assert all(gates.values())
    assert cluster["runtimeConfig"] == {
        "scheduling.k8s.io/v1beta1": "true",
        "scheduling.k8s.io/v1alpha3": "true",
    }
    assert {n["image"] for n in cluster["nodes"]} == {"kindest/node:v1.37.0"}
    blocks = [n["labels"][BLOCK] for n in cluster["nodes"] if n["role"] == "worker"]
    assert sorted(blocks) == ["block-0", "block-0", "block-1", "block-1"]


def test_the_gang_is_admitted_and_lands_in_one_block() -> None:
    objects = _load("gang.yaml")
    for obj in objects:
        _, decision = validate_object(
            {**obj, "metadata": {**obj["metadata"], "namespace": "gangs"}}, ClusterState.unknown()
        )
        assert decision.allowed, decision.message
    (cluster,) = _load("cluster-1.37.yaml")
    workers = [n for n in cluster["nodes"] if n["role"] == "worker"]
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"kind-worker{i or ''}",
                "labels": {BLOCK: n["labels"][BLOCK], "kubernetes.io/hostname": f"kind-worker{i or ''}"},
            },
            "status": {"allocatable": {"cpu": "1", "memory": "4Gi", "pods": "110"}},
        }
        for i, n in enumerate(workers)
    ]
    result = simulate(load_scenario([*nodes, *_load("topology.yaml"), *objects]), schedulers=("topobridge",))
    assert len(result.bound) == 3
    by_node = {n["metadata"]["name"]: n["metadata"]["labels"][BLOCK] for n in nodes}
    assert len({by_node[n] for n in result.bound.values()}) == 1
