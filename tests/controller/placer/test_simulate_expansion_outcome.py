"""What `simulate` does with expanded jobs is pinned: the same output, event for event, as the
code before expansion and binding shared their per-pod work (one parsed template per job,
bookkeeping per gang rather than per bind).

Each scenario's `simulate -o json` object, with the final placement, the events and the
warnings beside it, was recorded from that code (`simulate_expansion_outcome.json`); any change
in what the simulator decides for these jobs shows here as a diff. The scenarios: an Indexed
Job that is one gang (the benchmark's shape, small), an Indexed Job of pods alone, one that
preempts bound pods, one too big to place, a Kueue Job that must share a rack, a Volcano Job with partitions, and
two LeaderWorkerSets (exclusive placement; a topology with subgroups).

To record again after an intended change:
`.venv/bin/python tests/controller/placer/test_simulate_expansion_outcome.py --record`.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from controller.placer.scenario import load_scenario, simulate

Obj = dict[str, Any]
HERE = Path(__file__).resolve().parent
RECORDED = HERE / "simulate_expansion_outcome.json"
FIXTURES = HERE.parents[1] / "translations" / "expand_fixtures"
SPINE = "network.topology.nvidia.com/spine"
BLOCK = "network.topology.nvidia.com/block"
RACK = "cloud.provider.com/topology-rack"


def _nodes(count: int, cpu: str = "8") -> list[Obj]:
    alloc = {"cpu": cpu, "memory": "64Gi", "pods": "110"}
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"n{i}",
                "labels": {
                    "kubernetes.io/hostname": f"n{i}",
                    SPINE: f"s{i // 10}",
                    BLOCK: f"b{i // 5}",
                    RACK: f"r{i // 5}",
                    "cloud.google.com/gke-nodepool": f"pool{i // 4}",
                },
            },
            "status": {"allocatable": alloc, "capacity": alloc},
        }
        for i in range(count)
    ]


def _indexed_job(name: str, pods: int, cpu: str, annotations: Obj, priority_class: str = "") -> Obj:
    spec: Obj = {
        "schedulerName": "topobridge",
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "parallelism": pods,
            "completions": pods,
            "template": {"metadata": {"annotations": annotations}, "spec": spec},
        },
    }


def _bound(name: str, node: str, cpu: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "topobridge",
            "nodeName": node,
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def _priority(name: str, value: int) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def _kueue_topology() -> Obj:
    levels = [{"nodeLabel": RACK}, {"nodeLabel": "kubernetes.io/hostname"}]
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Topology",
        "metadata": {"name": "default"},
        "spec": {"levels": levels},
    }


def _fixture(name: str) -> Obj:
    loaded: Obj = yaml.safe_load((FIXTURES / f"{name}.yaml").read_text())
    return loaded


def _served(lws: Obj) -> Obj:
    """The LeaderWorkerSet with its pods given to topobridge (the sample names no scheduler)."""
    lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["schedulerName"] = "topobridge"
    return lws


def scenarios() -> dict[str, list[Obj]]:
    preferred_spine = {"kueue.x-k8s.io/podset-preferred-topology": SPINE}
    return {
        "indexed-one-gang": [*_nodes(20), _indexed_job("big", 120, "100m", preferred_spine)],
        "indexed-pods-alone": [*_nodes(4), _indexed_job("loose", 40, "700m", {})],
        "indexed-preempts": [
            *_nodes(4),
            *(_bound(f"low-{i}", f"n{i // 2}", "4") for i in range(8)),
            _priority("high", 1000),
            _indexed_job("urgent", 4, "6", {"kueue.x-k8s.io/podset-preferred-topology": BLOCK}, "high"),
        ],
        "indexed-too-big": [*_nodes(4), _indexed_job("huge", 10, "7", preferred_spine)],
        "kueue-required-rack": [*_nodes(10, cpu="8"), _kueue_topology(), _fixture("kueue-job-required")],
        "volcano-partitions": [
            *_nodes(20),
            _priority("training", 100),
            _priority("training-workers", 200),
            _fixture("volcano-job-ps-worker"),
        ],
        "lws-exclusive": [*_nodes(12), _served(_fixture("lws-exclusive"))],
        "lws-subgroups": [
            *_nodes(20),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "serving"}},
            _fixture("lws-multi-template-subgroups"),
        ],
    }


def outcome(objects: list[Obj]) -> Obj:
    """The `simulate -o json` object, the final placement, the events and the warnings."""
    result = simulate(load_scenario(copy.deepcopy(objects)))
    return {
        "contract": result.contract(),
        "final_pods": dict(sorted(result.final_pods.items())),
        "events": [[e.round, e.gang, e.what, e.message] for e in result.events],
        "warnings": result.warnings,
        "evicted_conditions": {k: dict(v) for k, v in sorted(result.conditions.items())},
    }


@pytest.mark.parametrize("name", sorted(scenarios()))
def test_simulate_of_expanded_jobs_is_as_recorded(name: str) -> None:
    recorded = json.loads(RECORDED.read_text())[name]
    assert json.loads(json.dumps(outcome(scenarios()[name]))) == recorded


def test_the_recorded_scenarios_bind_preempt_and_leave_pending() -> None:
    """The record covers each thing a bind-path change could get wrong."""
    recorded = json.loads(RECORDED.read_text())
    assert len(recorded["indexed-one-gang"]["contract"]["bound"]) == 120
    assert len(recorded["indexed-pods-alone"]["contract"]["bound"]) == 40
    assert recorded["indexed-preempts"]["contract"]["evicted"]
    assert any(o["contract"]["unschedulable"] for o in recorded.values())


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    RECORDED.write_text(json.dumps({k: outcome(v) for k, v in scenarios().items()}, indent=1) + "\n")
