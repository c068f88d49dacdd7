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
from collections.abc import Callable
from typing import Any

import pytest

from controller.placer.cluster import ClusterState, Kind
from controller.placer.cycle import GangTiming, SchedulingCycle
from controller.placer.demand import GangDemand
from controller.placer.filtering import build_demand
from controller.placer.framework import Code
from controller.placer.scenario import cluster_state, load_scenario, simulate
from translations.core import Namespace

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


# --- what may happen between two alike pods of one batch -----------------------------------------


def _roomy(n: int, cpu: str) -> list[Obj]:
    nodes = [_node(random.Random(i), i) for i in range(n)]
    for node in nodes:
        node["spec"] = {}
        node["status"]["allocatable"] = node["status"]["capacity"] = {
            "cpu": cpu,
            "memory": "32Gi",
            "pods": "110",
        }
    return nodes


def _pod(name: str, cpu: str, *, node: str = "", priority: str = "", labels: Obj | None = None) -> Obj:
    spec: Obj = {
        "schedulerName": "topobridge",
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node:
        spec["nodeName"] = node
    if priority:
        spec["priorityClassName"] = priority
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
        "spec": spec,
    }
    if node:
        pod["status"] = {"phase": "Running"}
    return pod


def _anti(pod: Obj, selector: Obj, namespaces: Obj | None = None) -> Obj:
    term: Obj = {"topologyKey": "kubernetes.io/hostname", "labelSelector": selector}
    if namespaces is not None:
        term["namespaceSelector"] = namespaces
    pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return pod


def _lone_job(pods: int, cpu: str, priority: str = "") -> Obj:
    job = _job(random.Random(0), 0, "")
    job["spec"]["parallelism"] = job["spec"]["completions"] = pods
    job["spec"]["template"]["spec"] = _pod("t", cpu, priority=priority)["spec"]
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    return job


class FilteredPerGang(Filtered):
    """Counts the demands built for the job's own pods (`job0-<index>-<suffix>`)."""

    def __call__(self, *args: Any, **kwargs: Any) -> GangDemand:
        if args[0].name.count("-") == 2 and not args[0].name.endswith("-x"):
            self.count += 1
        return build_demand(*args, **kwargs)


def test_a_preemption_between_alike_pods_leaves_their_demand_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pod of the job's priority whose name sorts among its pods preempts a bound pod that
    carries a term (it turns terminating) and is nominated: the snapshot changed, but nothing
    a demand reads did, so the job's six pods are filtered once and land where one attempt
    each puts them (the room the nomination holds is Select's to read)."""
    classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
        for n, v in (("low", 10), ("high", 1000))
    ]
    victim = _anti(
        _pod("old", "4", node="n0", priority="low", labels={"app": "old"}), {"matchLabels": {"app": "x"}}
    )
    keep = _pod("keep", "1", node="n1", priority="high")
    preemptor = _pod("job0-1-x", "4", priority="high")
    objects = [*_roomy(2, "4"), *classes, victim, keep, _lone_job(6, "500m", "high"), preemptor]
    filtered = FilteredPerGang(monkeypatch)
    batched = _run(objects)
    assert batched[0]["evicted"] == ["default/old"]
    assert batched[0]["nominated"] == {"default/job0-1-x": "n0"}
    assert len(batched[0]["bound"]) == 7
    assert filtered.count == 1
    one_by_one(monkeypatch)
    filtered.count = 0
    assert _run(objects) == batched
    assert filtered.count == 6


def test_an_errored_attempt_between_alike_pods_ends_their_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pod with a term placed between the job's pods errs after its reserve: the rollback
    takes its bind back and the batch ends, so the next pod of the job is filtered afresh,
    and the job's pods land where one attempt each puts them (off no node: the erring pod
    holds none)."""
    reserve = SchedulingCycle.reserve

    def failing(self: SchedulingCycle, gang: Any, placement: Any, profile: Any = None) -> Any:
        got = reserve(self, gang, placement, profile)
        if gang.name.endswith("-x"):
            raise RuntimeError("reserve plugin failed")
        return got

    monkeypatch.setattr(SchedulingCycle, "reserve", failing)
    between = _anti(_pod("job0-1-x", "1"), {"matchLabels": {"app": "spread"}})
    objects = [*_roomy(3, "4"), _lone_job(6, "500m"), between]
    filtered = FilteredPerGang(monkeypatch)
    batched = _run(objects)
    assert "default/job0-1-x" not in batched[0]["bound"]
    assert len(batched[0]["bound"]) == 6
    assert filtered.count == 2
    one_by_one(monkeypatch)
    filtered.count = 0
    assert _run(objects) == batched
    assert filtered.count == 6


def _cycle(
    objects: list[Obj], between: int, change: Callable[[ClusterState, SchedulingCycle], None]
) -> SchedulingCycle:
    """One cycle over `objects` as the live runner drives it (gang after gang), with `change`
    made before the attempt at position `between`."""
    state = cluster_state(load_scenario(objects))
    cycle = SchedulingCycle(state.view(), served=("topobridge",), now=0.0, timing=GangTiming())
    for i, gang in enumerate(cycle.queue()):
        if i == between:
            change(state, cycle)
        cycle.attempt(gang)
    return cycle


def _label_namespace(state: ClusterState, cycle: SchedulingCycle) -> None:
    """Namespace `default` gets the label team=a, as a Namespace event handled between two
    attempts puts it (the cycle's snapshot reads the same labels)."""
    ns = Namespace.model_validate({"metadata": {"name": "default", "labels": {"team": "a"}}})
    state.put(Kind.NAMESPACE, "default", ns)


def _cycle_placements(objects: list[Obj], label_after: int) -> list[tuple[str, str]]:
    cycle = _cycle(objects, label_after, _label_namespace)
    return [(b.gang, node) for b in cycle.plan.binds for _, node in b.pods]


@pytest.mark.parametrize(
    "selector", [{"matchLabels": {"app": "spread"}}, {}], ids=["app=spread", "every-pod"]
)
def test_a_namespace_relabelled_between_alike_pods_ends_their_batch(
    selector: Obj, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bound pod on n0 keeps pods labelled app=spread (or every pod: a term that reads no
    pod label) of namespaces labelled team=a off its node. The job's pods prefer n0; once their namespace is labelled team=a (an event handled
    between two attempts changes the labels the cycle's snapshot reads), the next pod's key
    differs from the batch's, its own attempt sees the term, and it and the pods after it
    land on n1, as one attempt each puts them."""
    objects = _guarded_job(selector)
    filtered = FilteredPerGang(monkeypatch)
    batched = _cycle_placements(objects, 2)
    assert [node for _, node in batched] == ["n0", "n0", "n1", "n1", "n1"]
    assert filtered.count == 2
    one_by_one(monkeypatch)
    assert _cycle_placements(objects, 2) == batched


def _guarded_job(selector: Obj | None = None) -> list[Obj]:
    if selector is None:
        selector = {"matchLabels": {"app": "spread"}}
    guard = _anti(_pod("guard", "100m", node="n0", labels={"app": "guard"}), selector)
    guard["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0][
        "namespaceSelector"
    ] = {"matchLabels": {"team": "a"}}
    job = _lone_job(5, "250m")
    job["spec"]["template"]["metadata"] = {"labels": {"app": "spread"}}
    job["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "preference": {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n0"]}
                        ]
                    },
                }
            ]
        }
    }
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}
    return [*_roomy(2, "8"), namespace, guard, job]


def test_a_term_changed_under_a_batch_is_the_next_pods_error_not_a_stale_place() -> None:
    """Within a cycle only a reserve changes the bound pods' terms, and it remakes the batch.
    A change made behind the cycle's back (the pod with a term gone from its snapshot) breaks
    that: the next alike pod's attempt errs, naming it, rather than reusing a demand its
    Filter pass would no longer give, and the pods after it are filtered afresh."""
    cycle = _cycle(_guarded_job(), 2, lambda _state, cycle: cycle.snapshot.evict("default/guard"))
    outcomes = list(cycle.plan.outcomes.values())
    assert [o.code for o in outcomes] == [Code.SUCCESS, Code.SUCCESS, Code.ERROR, Code.SUCCESS, Code.SUCCESS]
    assert isinstance(outcomes[2].exception, AssertionError)
    assert str(outcomes[2].exception) == "the snapshot changed under a batch of alike pods"
