"""The rest of kube-scheduler's topology-aware PodGroup cases, step by step: `kubernetes/kubernetes`
`test/integration/scheduler/podgroup/topology_aware_scheduling/tas_test.go`,
TestTopologyAwareSchedulingWithGangPolicy and TestTopologyAwareSchedulingWithBasicPolicy, and
`test/integration/scheduler/podgroup/podgroup_affinity_test.go`
TestPodGroupSchedulingWithPodAntiAffinity, each row named `kube:<TestFunction>/<case>`.
Not ported: `tas_multi_placement_test.go` (it registers an out-of-tree PlacementGenerate plugin
through the scheduler's configuration, which topobridge does not take).

Kube's cases create objects one step after another and wait for the scheduler between steps;
a row here is the same steps: each runs `simulate` to quiescence on what the steps so far
created (minus what they deleted), and what it bound stays bound for the next step. The row's
fact is kube's: the nodes each pod may be on, the pods left pending, the pods sharing one value
of a label. Kube runs the basic-policy cases with the GangScheduling gate on and off; a basic
group never waits for a quorum, so one row stands for both runs.

The fixture is kube's (`test_upstream_podgroup_cases`): nodes of 2 CPUs labelled `rack` and
`zone`, pods of 1 CPU (large 2, unfittable 3), priority 100.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from placer_objects import Obj, run
from test_upstream_podgroup_cases import RACK_CNT, existing, keyed, nodes, pod_group, tas_pod

GANG = "kube:TestTopologyAwareSchedulingWithGangPolicy"
BASIC = "kube:TestTopologyAwareSchedulingWithBasicPolicy"


@dataclass(frozen=True)
class Step:
    add: Sequence[Obj] = ()
    delete: Sequence[str] = ()


@dataclass(frozen=True)
class Expect:
    on: dict[str, frozenset[str]] = field(default_factory=dict)
    """Pod name -> the nodes kube's `verifyAssignments` allows it."""
    pending: frozenset[str] = frozenset()
    one_rack: frozenset[str] = frozenset()
    """Pods kube's `verifyAssignedInOneDomain` checks for one `rack` value."""


def basic(name: str, key: str = "rack") -> Obj:
    pg = pod_group(name, min_count=None, priority=None)
    pg["spec"]["schedulingConstraints"] = {"topology": [{"key": key}]}
    return pg


def keyed_on(name: str, key: str, min_count: int) -> Obj:
    pg = keyed(name, min_count)
    pg["spec"]["schedulingConstraints"] = {"topology": [{"key": key}]}
    return pg


def pods(group: str, *names: str, cpu: str = "1") -> list[Obj]:
    return [tas_pod(n, group, cpu=cpu) for n in names]


def on(nodes_: str, *names: str) -> dict[str, frozenset[str]]:
    allowed = frozenset(nodes_.split())
    return dict.fromkeys(names, allowed)


def run_steps(steps: Sequence[Step]) -> tuple[dict[str, str], set[str], dict[str, str]]:
    """Bound pod -> node, pending pods, node -> rack after the last step."""
    objects: list[Obj] = [RACK_CNT]
    for step in steps:
        objects = [o for o in objects if o["metadata"]["name"] not in step.delete]
        objects += [copy.deepcopy(o) for o in step.add]
        result = run(objects, schedulers=("topobridge",))
        by_name = {k.split("/", 1)[1]: n for k, n in result.bound.items()}
        for o in objects:
            if o["kind"] == "Pod" and o["metadata"]["name"] in by_name:
                o["spec"]["nodeName"] = by_name[o["metadata"]["name"]]
    bound = {
        o["metadata"]["name"]: o["spec"]["nodeName"]
        for o in objects
        if o["kind"] == "Pod" and "schedulingGroup" in o["spec"] and o["spec"].get("nodeName")
    }
    pending = {
        o["metadata"]["name"]
        for o in objects
        if o["kind"] == "Pod" and "schedulingGroup" in o["spec"] and not o["spec"].get("nodeName")
    }
    racks = {o["metadata"]["name"]: o["metadata"]["labels"]["rack"] for o in objects if o["kind"] == "Node"}
    return bound, pending, racks


def N(spec: str) -> list[Obj]:
    """Nodes from `name:rack:zone` words."""
    return nodes({w.split(":")[0]: (w.split(":")[1], w.split(":")[2]) for w in spec.split()})


SIX_ZONES = N(
    "node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1 node3-rack2:rack-2:zone-1 "
    "node4-zone2:rack-3:zone-2 node5-zone2:rack-3:zone-2 node6-zone2:rack-3:zone-2"
)
ROWS = [
    pytest.param(
        [
            Step([*SIX_ZONES, keyed_on("pg1", "rack", 3), *pods("pg1", "p1", "p2", "p3", cpu="2")]),
            Step([keyed_on("pg2", "zone", 3), *pods("pg2", "p4", "p5", "p6", cpu="2")]),
        ],
        Expect(
            on=on("node4-zone2 node5-zone2 node6-zone2", "p1", "p2", "p3")
            | on("node1-rack1 node2-rack1 node3-rack2", "p4", "p5", "p6")
        ),
        id=f"{GANG}/two gangs schedule consecutively, different topology keys",
    ),
    pytest.param(
        [
            Step(
                [
                    *N("node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1"),
                    keyed("pg1", 3),
                    *pods("pg1", "p1", "p2", "p3"),
                ]
            ),
            Step([keyed("pg2", 2), *pods("pg2", "p4", "p5")]),
        ],
        Expect(on=on("node1-rack1 node2-rack1", "p1", "p2", "p3"), pending=frozenset({"p4", "p5"})),
        id=f"{GANG}/two gangs schedule consecutively, only one fits in the cluster",
    ),
    pytest.param(
        [
            Step(
                [
                    *N(
                        "node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1 node3-rack2:rack-2:zone-1 "
                        "node4-rack2:rack-2:zone-1"
                    ),
                    keyed("pg1", 2),
                    *pods("pg1", "p1", "p2", "p3"),
                ]
            ),
        ],
        Expect(
            on=on("node1-rack1 node2-rack1 node3-rack2 node4-rack2", "p1", "p2", "p3"),
            one_rack=frozenset({"p1", "p2", "p3"}),
        ),
        id=f"{GANG}/gang with minCount < pod count schedules on a single rack",
    ),
    pytest.param(
        [
            Step(
                [
                    *N(
                        "node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1 node3-rack1:rack-1:zone-1 "
                        "node4-rack2:rack-2:zone-1 node5-rack2:rack-2:zone-1 node6-rack3:rack-3:zone-2"
                    ),
                    keyed("pg1", 3),
                    *pods("pg1", "p1", "p2", "p3"),
                ]
            ),
            Step(pods("pg1", "p4")),
            Step(pods("pg1", "p5")),
        ],
        Expect(on=on("node4-rack2 node5-rack2", "p1", "p2", "p3", "p4"), pending=frozenset({"p5"})),
        id=f"{GANG}/gang with minCount < pod count schedules on a single rack, choosing smaller rack",
    ),
    pytest.param(
        [
            Step(
                [
                    *N("node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1"),
                    existing("existing1", "node2-rack1", "2"),
                    keyed("pg1", 3),
                    *pods("pg1", "p1", "p2", "p3"),
                ]
            ),
        ],
        Expect(pending=frozenset({"p1", "p2", "p3"})),
        id=f"{GANG}/gang does not schedule on a single rack when preemption could free up enough resources",
    ),
    pytest.param(
        [
            Step(
                [
                    *N("node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1"),
                    basic("pg1"),
                    *pods("pg1", "p1", "p2", "p3"),
                ]
            )
        ],
        Expect(on=on("node1-rack1 node2-rack1", "p1", "p2", "p3")),
        id=f"{BASIC}/basic podgroup schedules on the only rack in the cluster",
    ),
    pytest.param(
        [
            Step(
                [
                    *N(
                        "node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1 node3-rack2:rack-2:zone-1 "
                        "node4-rack2:rack-2:zone-1 node5-zone2:rack-3:zone-2 node6-zone2:rack-3:zone-2"
                    ),
                    basic("pg1"),
                    *pods("pg1", "p1", "p2", "p3"),
                ]
            )
        ],
        Expect(
            on=on(
                "node1-rack1 node2-rack1 node3-rack2 node4-rack2 node5-zone2 node6-zone2", "p1", "p2", "p3"
            ),
            one_rack=frozenset({"p1", "p2", "p3"}),
        ),
        id=f"{BASIC}/basic podgroup schedules all pods on a single rack, when there are multiple racks fitting "
        "in the cluster",
    ),
    pytest.param(
        [
            Step(
                [
                    *N("node1-rack1:rack-1:zone-1 node2-rack2:rack-2:zone-1"),
                    basic("pg1"),
                    *pods("pg1", "p1", "p2", "p3"),
                ]
            )
        ],
        Expect(
            on=on("node1-rack1 node2-rack2", "p1", "p2"),
            pending=frozenset({"p3"}),
            one_rack=frozenset({"p1", "p2"}),
        ),
        id=f"{BASIC}/basic podgroup cannot fit on a single rack, no pods get scheduled on a different rack",
    ),
    pytest.param(
        [
            Step(
                [
                    *N("node1-rack1:rack-1:zone-1 node2-rack2:rack-2:zone-1"),
                    basic("pg1"),
                    *pods("pg1", "p1", "p2", cpu="3"),
                ]
            )
        ],
        Expect(pending=frozenset({"p1", "p2"})),
        id=f"{BASIC}/basic podgroup does not schedule at all when no pods fit",
    ),
    pytest.param(
        [
            Step(
                [
                    *N("node1-rack1:rack-1:zone-1 node2-rack2:rack-2:zone-1"),
                    basic("pg1"),
                    *pods("pg1", "p1", cpu="3"),
                    *pods("pg1", "p2"),
                ]
            )
        ],
        Expect(on=on("node1-rack1 node2-rack2", "p2"), pending=frozenset({"p1"})),
        id=f"{BASIC}/basic podgroup schedules only some pods when others don't fit on any node",
    ),
    pytest.param(
        [
            Step(
                [
                    *N(
                        "node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1 node3-rack2:rack-2:zone-2 "
                        "node4-rack2:rack-2:zone-2 node5-rack2:rack-2:zone-2"
                    ),
                    basic("pg1"),
                    *pods("pg1", "p1", "p2", "p3"),
                ]
            )
        ],
        Expect(on=on("node1-rack1 node2-rack1", "p1", "p2", "p3")),
        id=f"{BASIC}/basic podgroup schedules on a single rack, choosing placement with highest allocation "
        "percentage (default placement scoring algorithm)",
    ),
    pytest.param(
        [
            Step(
                [
                    *N(
                        "node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1 node3-rack1:rack-1:zone-1 "
                        "node4-rack2:rack-2:zone-2 node5-rack2:rack-2:zone-2 node6-rack2:rack-2:zone-2 "
                        "node7-rack3:rack-3:zone-2 node8-rack3:rack-3:zone-2 node9-rack3:rack-3:zone-2 "
                        "node10-rack3:rack-3:zone-2"
                    ),
                    existing("existing1", "node1-rack1", "1"),
                    existing("existing2", "node5-rack2", "1"),
                    existing("existing3", "node6-rack2", "1"),
                    basic("pg1"),
                    *pods("pg1", "p1", "p2", "p3"),
                ]
            )
        ],
        Expect(on=on("node4-rack2 node5-rack2 node6-rack2", "p1", "p2", "p3")),
        id=f"{BASIC}/basic podgroup schedules on a single rack, choosing placement with highest allocation "
        "percentage with pre-existing pods",
    ),
    pytest.param(
        [
            Step(
                [
                    *N(
                        "node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1 node3-rack1:rack-1:zone-1 "
                        "node4-rack1:rack-1:zone-1 node5-rack2:rack-2:zone-1"
                    ),
                    existing("existing1", "node1-rack1", "2"),
                    basic("pg1"),
                    *pods("pg1", "p1"),
                ]
            ),
            Step(pods("pg1", "p2", "p3")),
        ],
        Expect(on=on("node5-rack2", "p1", "p2"), pending=frozenset({"p3"})),
        id=f"{BASIC}/basic podgroup schedules on a single rack, choosing best scoring placement that will not "
        "fit all podgroup",
    ),
    pytest.param(
        [
            Step(
                [
                    *N(
                        "node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1 node3-rack1:rack-1:zone-1 "
                        "node4-rack2:rack-2:zone-1"
                    ),
                    basic("pg1"),
                    *pods("pg1", "p1", "p2"),
                ]
            ),
            Step([basic("pg2"), *pods("pg2", "p3", "p4")]),
        ],
        Expect(on=on("node4-rack2", "p1", "p2") | on("node1-rack1 node2-rack1 node3-rack1", "p3", "p4")),
        id=f"{BASIC}/two basic podgroups schedule consecutively, each on a single rack",
    ),
    pytest.param(
        [
            Step(
                [
                    *N("node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1 node3-rack1:rack-1:zone-1"),
                    basic("pg1"),
                    *pods("pg1", "p1", "p2"),
                ]
            ),
            Step([basic("pg2"), *pods("pg2", "p3", "p4", "p5")]),
        ],
        Expect(on=on("node1-rack1 node2-rack1 node3-rack1", "p1", "p2", "p3", "p4", "p5")),
        id=f"{BASIC}/two basic podgroups schedule consecutively on the only rack",
    ),
    pytest.param(
        [
            Step(
                [
                    *N(
                        "node1-rack1:rack-1:zone-1 node2-zone2:rack-2:zone-2 node3-zone2:rack-2:zone-2 "
                        "node4-zone2:rack-3:zone-2 node5-zone2:rack-3:zone-2"
                    ),
                    basic("pg1"),
                    *pods("pg1", "p1", "p2"),
                ]
            ),
            Step([basic("pg2", "zone"), *pods("pg2", "p3", "p4", "p5", cpu="2")]),
        ],
        Expect(
            on=on("node1-rack1", "p1", "p2")
            | on("node2-zone2 node3-zone2 node4-zone2 node5-zone2", "p3", "p4", "p5")
        ),
        id=f"{BASIC}/two basic podgroups schedule consecutively, different topology keys",
    ),
    pytest.param(
        [
            Step(
                [
                    *N("node1-rack1:rack-1:zone-1 node2-rack1:rack-1:zone-1 node3-rack2:rack-2:zone-1"),
                    basic("pg1"),
                    *pods("pg1", "p1"),
                ]
            ),
            Step(pods("pg1", "p2", "p3")),
            Step([basic("pg2"), *pods("pg2", "p4", "p5", "p6")]),
        ],
        Expect(
            on=on("node3-rack2", "p1", "p2") | on("node1-rack1 node2-rack1", "p4", "p5", "p6"),
            pending=frozenset({"p3"}),
        ),
        id=f"{BASIC}/two basic podgroups schedule consecutively, one does not fit in the assigned rack",
    ),
    pytest.param(
        [
            Step(
                [
                    *N("node1-rack1:rack-1:zone-1 node2-rack2:rack-2:zone-1"),
                    existing("existing1", "node1-rack1", "1"),
                    basic("pg1"),
                    *pods("pg1", "p1"),
                ]
            ),
            Step(pods("pg1", "p2")),
            Step(delete=["existing1"]),
        ],
        Expect(on=on("node1-rack1", "p1", "p2")),
        id=f"{BASIC}/basic podgroup continues to schedule pods when more resources become available",
    ),
]


@pytest.mark.parametrize(("steps", "expect"), ROWS)
def test_kube_topology_aware_steps(steps: list[Step], expect: Expect) -> None:
    bound, pending, racks = run_steps(steps)
    assert pending == set(expect.pending), (bound, pending)
    for name, allowed in expect.on.items():
        assert bound.get(name) in allowed, (name, bound)
    assert len({racks[bound[p]] for p in expect.one_rack}) <= 1, bound


def test_intermediate_step_keeps_the_second_pod_pending() -> None:
    """kube's "continues to schedule" case checks p2 pending before the blocker goes."""
    steps = ROWS[-1].values[0]
    assert isinstance(steps, list)
    bound, pending, _ = run_steps(steps[:2])
    assert (bound, pending) == ({"p1": "node1-rack1"}, {"p2"})


def test_counts() -> None:
    assert (len(ROWS), len(AFFINITY_ROWS)) == (18, 2)


# --- test/integration/scheduler/podgroup/podgroup_affinity_test.go --------------------------------
# TestPodGroupSchedulingWithPodAntiAffinity: `anti-pod` (pinned to node-1) repels pods labelled
# app=foo from its host; `plain-pod` carries the label and no term of its own. Kube runs each case
# with the CompositePodGroup gate on and off; the group is a plain PodGroup either way.
AFFINITY = "kube:TestPodGroupSchedulingWithPodAntiAffinity"
HOST = "kubernetes.io/hostname"


def affinity_pods() -> list[Obj]:
    anti = tas_pod("anti-pod", "pg")
    anti["metadata"]["labels"] = {"app": "foo"}
    anti["spec"]["nodeSelector"] = {HOST: "node-1"}
    anti["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "foo"}}, "topologyKey": HOST}
            ]
        }
    }
    plain = tas_pod("plain-pod", "pg")
    plain["metadata"]["labels"] = {"app": "foo"}
    return [pod_group("pg", min_count=2, priority=100), anti, plain]


def host_nodes(*names: str) -> list[Obj]:
    out = N(" ".join(f"{n}:rack-1:zone-1" for n in names))
    for o in out:
        o["metadata"]["labels"][HOST] = o["metadata"]["name"]
    return out


AFFINITY_ROWS = [
    pytest.param(
        host_nodes("node-1", "node-2"),
        Expect(on=on("node-1", "anti-pod") | on("node-2", "plain-pod")),
        id=f"{AFFINITY}/anti-affinity honored across the cycle on a multi-topology cluster",
    ),
    pytest.param(
        host_nodes("node-1"),
        Expect(pending=frozenset({"anti-pod", "plain-pod"})),
        id=f"{AFFINITY}/anti-affinity keeps the group unschedulable on a single-topology cluster",
    ),
]


@pytest.mark.parametrize(("cluster", "expect"), AFFINITY_ROWS)
def test_kube_pod_group_anti_affinity(cluster: list[Obj], expect: Expect) -> None:
    bound, pending, _ = run_steps([Step([*cluster, *affinity_pods()])])
    assert pending == set(expect.pending), (bound, pending)
    for name, allowed in expect.on.items():
        assert bound.get(name) in allowed, (name, bound)


# --- an oracle for the placement choice ------------------------------------------------------------
# Fixed seeds: six racks of one to five 4-CPU nodes with random load, a gang of k 1-CPU pods keyed on
# rack. The oracle scores every rack that has k free CPUs as kube's PlacementScore does
# (PodGroupPodsCount is equal for all: the whole gang fits in each) and takes the best, the first
# in tree order on a tie; `simulate` must put the gang there.


@pytest.mark.parametrize("seed", range(16))
def test_the_chosen_rack_is_the_best_scored_one(seed: int) -> None:
    import random

    from controller.placer.plugins.topology_placement import bin_packing

    rng = random.Random(seed)
    objs: list[Obj] = []
    used: dict[str, int] = {}
    size = {r: rng.randint(1, 8) for r in range(6)}
    for r in range(6):
        for i in range(size[r]):
            name = f"n{r}-{i}"
            objs += nodes({name: (f"rack-{r}", "zone-1")})
            objs[-1]["status"]["allocatable"]["cpu"] = "4"
            load = rng.choice((0, 1, 2, 3, 4, 4))
            used[name] = load
            if load:
                objs.append(existing(f"busy-{name}", name, str(load)))
    k = rng.randint(2, 12)
    objs += [keyed("pg1", k), *pods("pg1", *(f"p{i}" for i in range(k)))]
    scores = {}
    for r in range(6):
        names = [f"n{r}-{i}" for i in range(size[r])]
        if sum(4 - used[n] for n in names) < k:
            continue
        scores[f"rack-{r}"] = bin_packing(
            [{"cpu": 4000}] * len(names),
            [{"cpu": used[n] * 1000} for n in names],
            [{"cpu": 1000}] * k,
            resources=(("cpu", 1),),
        )
    bound, pending, racks = run_steps([Step(objs)])
    if not scores:
        assert bound == {} and len(pending) == k
        return
    best = max(scores.values())
    want = min((r for r, s in scores.items() if s == best), key=lambda r: int(r.split("-")[1]))
    assert {racks[n] for n in bound.values()} == {want}, (scores, bound)
