"""Opportunistic batching of lone pods (`engine.place_alike`, `SchedulingCycle._alike`) places
exactly where one attempt per pod does.

Each seeded scenario is simulated twice: as the cycle runs (a lone pod like the one placed
before it reuses that pod's Filter and Score pass), and with batching switched off (every pod
its own full attempt). The `simulate -o json` object, the events and the final placement must
be the same. The scenarios mix what changes a lone pod's demand: requests, node selectors,
required and preferred node affinity, taints (NoSchedule, PreferNoSchedule) and tolerations,
priorities with bound pods to preempt, pods with a soft topology spread or a required
anti-affinity (never batched; placed between pods of other jobs, they change what those may
take), and bound pods whose anti-affinity reads the completion-index label each pod of an Indexed Job has
its own value of (so pods of one template are not alike there).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from controller.placer.demand import GangDemand
from controller.placer.filtering import build_demand
from controller.placer.scenario import load_scenario, simulate

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
INDEX = "batch.kubernetes.io/job-completion-index"


def _node(rng: random.Random, i: int) -> Obj:
    cpu = str(rng.choice([2, 4, 8]))
    alloc = {"cpu": cpu, "memory": "32Gi", "pods": str(rng.choice([4, 8, 110]))}
    node: Obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"n{i}",
            "labels": {
                "kubernetes.io/hostname": f"n{i}",
                ZONE: f"z{i % 3}",
                "disk": rng.choice(["ssd", "hdd"]),
                "network.topology.nvidia.com/block": f"b{i // 4}",
            },
        },
        "spec": {},
        "status": {"allocatable": alloc, "capacity": alloc},
    }
    taint = rng.random()
    if taint < 0.2:
        node["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    elif taint < 0.45:
        node["spec"]["taints"] = [{"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}]
    return node


def _spec(rng: random.Random, priority_class: str) -> Obj:
    spec: Obj = {
        "schedulerName": "topobridge",
        "restartPolicy": "Never",
        "containers": [
            {"name": "c", "image": "x", "resources": {"requests": {"cpu": rng.choice(["250m", "500m", "1"])}}}
        ],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"disk": "ssd"}
    if rng.random() < 0.4:
        spec["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": rng.randint(1, 100),
                        "preference": {
                            "matchExpressions": [
                                {"key": ZONE, "operator": "In", "values": [f"z{rng.randrange(3)}"]}
                            ]
                        },
                    }
                ]
            }
        }
    if rng.random() < 0.2:  # placed between pods of other jobs, it keeps them off its node
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app": "spread"}},
                    }
                ]
            }
        }
    if rng.random() < 0.3:
        spec["tolerations"] = [
            {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
        ]
    if rng.random() < 0.2:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "spread"}},
            }
        ]
    return spec


def _job(rng: random.Random, j: int, priority_class: str) -> Obj:
    pods = rng.randint(3, 14)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"job{j}", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "parallelism": pods,
            "completions": pods,
            "template": {"metadata": {"labels": {"app": "spread"}}, "spec": _spec(rng, priority_class)},
        },
    }


def _bound(rng: random.Random, i: int, node: str) -> Obj:
    spec = _spec(rng, "low")
    spec.pop("topologySpreadConstraints", None)
    spec["nodeName"] = node
    if i % 4 == 0:  # keeps one index of every job off its node
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {
                            "matchExpressions": [
                                {"key": INDEX, "operator": "In", "values": [str(rng.randrange(4))]}
                            ]
                        },
                    }
                ]
            }
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"old{i}", "namespace": "default", "labels": {"app": "old"}},
        "spec": spec,
        "status": {"phase": "Running"},
    }


def _between(rng: random.Random, i: int, jobs: int) -> Obj:
    """A pending pod whose name sorts among a job's pods (the queue's order after priority):
    its anti-affinity keeps the job's pods after it off its node."""
    spec = _spec(rng, "")
    spec.pop("topologySpreadConstraints", None)
    spec["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "spread"}}}
            ]
        }
    }
    name = f"job{rng.randrange(jobs)}-{rng.randrange(3)}-x{i}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _scenario(seed: int) -> list[Obj]:
    rng = random.Random(seed)
    nodes = [_node(rng, i) for i in range(rng.randint(6, 14))]
    classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
        for n, v in (("low", 10), ("high", 1000))
    ]
    bound = [_bound(rng, i, rng.choice(nodes)["metadata"]["name"]) for i in range(rng.randint(0, 10))]
    jobs = [_job(rng, j, rng.choice(["", "low", "high"])) for j in range(rng.randint(2, 5))]
    between = [_between(rng, i, len(jobs)) for i in range(rng.randint(0, 3))]
    return [*nodes, *classes, *bound, *jobs, *between]


def _run(objects: list[Obj]) -> tuple[Any, ...]:
    res = simulate(load_scenario(objects))
    events = [(e.round, e.gang, e.what, e.message) for e in res.events]
    return res.contract(), events, res.final_pods, res.conditions, res.waiting


class Filtered:
    """Counts the demands the engine builds (one per full attempt's Filter pass)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        monkeypatch.setattr("controller.placer.engine.build_demand", self)

    def __call__(self, *args: Any, **kwargs: Any) -> GangDemand:
        self.count += 1
        return build_demand(*args, **kwargs)


def one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """No pod is alike any other: every pod gets a full attempt."""
    monkeypatch.setattr("controller.placer.cycle.alike_key", lambda *a, **k: None)


@pytest.mark.parametrize("seed", range(16))
def test_batched_lone_pods_land_where_one_attempt_each_puts_them(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    objects = _scenario(seed)
    filtered = Filtered(monkeypatch)
    batched = _run(objects)
    batched_filtered, filtered.count = filtered.count, 0
    one_by_one(monkeypatch)
    assert _run(objects) == batched
    assert batched_filtered <= filtered.count


def test_a_job_of_lone_pods_is_filtered_once_per_run_of_alike_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    """40 pods of one template on roomy nodes: the first pod's attempt builds the demand, the
    other 39 reuse it, and land where one attempt each puts them."""
    nodes = [_node(random.Random(i), i) for i in range(8)]
    for n in nodes:
        n["spec"] = {}
        n["status"]["allocatable"] = n["status"]["capacity"] = {"cpu": "64", "memory": "64Gi", "pods": "110"}
    job = _job(random.Random(7), 0, "")
    job["spec"]["parallelism"] = job["spec"]["completions"] = 40
    job["spec"]["template"]["spec"].pop("topologySpreadConstraints", None)
    filtered = Filtered(monkeypatch)
    batched = _run([*nodes, job])
    assert len(batched[0]["bound"]) == 40
    assert filtered.count == 1
    one_by_one(monkeypatch)
    filtered.count = 0
    assert _run([*nodes, job]) == batched
    assert filtered.count == 40
