"""The cycle places Kubernetes' own `scheduling.k8s.io` PodGroups as kube-scheduler 1.37 does
(`translations.upstream_gangs`), and `simulate` takes them as written: topobridge's own cases,
on the seed's spine/block cluster (its nodes carry topograph's labels, so the scheduler's tree
has tier 1 = `network.topology.nvidia.com/block`). kube's own test cases are ported as rows in
`test_upstream_podgroup_cases.py`.
"""

from __future__ import annotations

from typing import Any

import pytest
from placer_objects import SEED_LAYOUT, Obj, pod, run, spine_block_nodes

from controller.placer.demand import GangDemand
from controller.placer.engine import demand_of
from controller.placer.scenario import load_scenario, prepare
from controller.placer.snapshot import ClusterIndex
from controller.placer.tiers import PlacementGenerateError, label_domains
from translations.constraints import TopologyConstraint
from translations.gangs import discover_gangs

BLOCK = "network.topology.nvidia.com/block"
SCHEDULERS = ("topobridge",)


def pod_group(name: str, *, min_count: int | None, key: str | None = BLOCK, **spec: Any) -> Obj:
    body: Obj = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if key is not None:
        body["schedulingConstraints"] = {"topology": [{"key": key}]}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {**body, **spec},
    }


def member(group: str, i: int, **kw: Any) -> Obj:
    obj = pod(f"{group}-{i}", scheduler=kw.pop("scheduler", "topobridge"), **kw)
    obj["spec"]["schedulingGroup"] = {"podGroupName": group}
    return obj


def busy(name: str, node_name: str, **kw: Any) -> Obj:
    return pod(name, node_name=node_name, scheduler="other", **kw)


def cluster() -> list[Obj]:
    """Block-0's node-0 is taken: only block-4 still has three free nodes."""
    return [*spine_block_nodes(SEED_LAYOUT), busy("taken", "node-0")]


def blocks_of(nodes: list[str]) -> set[str]:
    return {b for blocks in SEED_LAYOUT.values() for b, names in blocks.items() if set(names) & set(nodes)}


LWS: Obj = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "trainer", "namespace": "default"},
    "spec": {
        "replicas": 1,
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        "leaderWorkerTemplate": {
            "size": 3,
            "workerTemplate": {
                "spec": {
                    "schedulerName": "topobridge",
                    "containers": [
                        {"name": "w", "image": "x", "resources": {"requests": {"cpu": "8", "memory": "32Gi"}}}
                    ],
                }
            },
        },
    },
}


def test_an_lws_and_the_same_job_as_a_pod_group_land_in_the_same_domain() -> None:
    """Acceptance: `spec.networkTopology` hard at tier 1 and a PodGroup keyed by the label that
    makes tier 1 are one constraint."""
    as_lws = run([*cluster(), LWS], schedulers=SCHEDULERS)
    as_pod_group = run(
        [*cluster(), pod_group("trainer", min_count=3), *(member("trainer", i) for i in range(3))],
        schedulers=SCHEDULERS,
    )
    assert len(as_lws.bound) == len(as_pod_group.bound) == 3
    assert (
        blocks_of(list(as_lws.bound.values())) == blocks_of(list(as_pod_group.bound.values())) == {"block-4"}
    )
    assert as_pod_group.gangs["upstream:default/trainer"] == ("block/block-4", 1)


def test_gang_identity_is_upstream_namespace_name() -> None:
    sc = load_scenario([*cluster(), pod_group("g", min_count=2, key=None), member("g", 0)])
    (gang,) = [g for g in discover_gangs(sc.pods, podgroups=sc.podgroups) if g.source == "upstream"]
    assert (gang.key, gang.name, gang.min_member) == ("upstream:default/g", "default/g", 2)


def test_pods_wait_until_their_pod_group_exists() -> None:
    result = run([*cluster(), *(member("late", i) for i in range(2))], schedulers=SCHEDULERS)
    assert result.bound == {}
    assert (
        "PodGroup default/late (scheduling.k8s.io) not found" in result.unschedulable["upstream:default/late"]
    )


def test_a_gang_waits_until_min_count_pods_exist() -> None:
    result = run(
        [*cluster(), pod_group("g", min_count=3), member("g", 0), member("g", 1)], schedulers=SCHEDULERS
    )
    assert result.bound == {}
    assert "upstream:default/g" in result.unschedulable


def test_all_or_nothing_at_min_count() -> None:
    result = run(
        [*cluster(), pod_group("g", min_count=4), *(member("g", i) for i in range(4))], schedulers=SCHEDULERS
    )
    assert result.bound == {}


def test_min_count_below_the_pods_binds_at_quorum() -> None:
    """The first attempt binds as soon as minCount fit: 4 pods, minCount 3, the one block with
    three free nodes takes three."""
    result = run(
        [*cluster(), pod_group("g", min_count=3), *(member("g", i) for i in range(4))], schedulers=SCHEDULERS
    )
    assert len(result.bound) == 3
    assert blocks_of(list(result.bound.values())) == {"block-4"}


def test_bound_members_pin_the_domain() -> None:
    """A member on node-5 keeps the rest in block-2, though block-4 is free."""
    result = run(
        [
            *cluster(),
            pod_group("g", min_count=2),
            member("g", 0, node_name="node-5"),
            member("g", 1),
        ],
        schedulers=SCHEDULERS,
    )
    assert result.bound == {"default/g-1": "node-6"}


def test_bound_members_pin_a_domain_too_small_for_the_rest() -> None:
    result = run(
        [
            *cluster(),
            pod_group("g", min_count=3),
            member("g", 0, node_name="node-5"),
            member("g", 1),
            member("g", 2),
        ],
        schedulers=SCHEDULERS,
    )
    assert result.bound == {}


def test_a_basic_group_with_a_key_stays_in_one_domain() -> None:
    result = run(
        [
            *cluster(),
            pod_group("b", min_count=None),
            *(member("b", i, cpu="4", memory="1Gi") for i in range(4)),
        ],
        schedulers=SCHEDULERS,
    )
    assert len(result.bound) == 4
    assert len(blocks_of(list(result.bound.values()))) == 1


ROOM = "example.com/room"
ROOMS = {"node-2": "room-a", "node-3": "room-a", "node-5": "room-b", "node-9": "room-b", "node-10": "room-b"}
"""A bare node label, no level of the tree: room-a spans two blocks, room-b two spines; the
other nodes carry no room."""


def roomed(nodes: list[Obj]) -> list[Obj]:
    for n in nodes:
        room = ROOMS.get(n["metadata"]["name"])
        if room is not None:
            n["metadata"]["labels"][ROOM] = room
    return nodes


def test_a_bare_label_key_keeps_the_group_in_one_value() -> None:
    """kube-scheduler takes any node label as a level: the three members need one room with
    three free nodes (room-b, across spines); nodes without the label are in no room."""
    result = run(
        [*roomed(spine_block_nodes(SEED_LAYOUT)), pod_group("g", min_count=3, key=ROOM)]
        + [member("g", i) for i in range(3)],
        schedulers=SCHEDULERS,
    )
    assert sorted(result.bound.values()) == ["node-10", "node-5", "node-9"]


def test_a_bare_label_key_scores_its_values_by_bin_packing() -> None:
    """Both rooms hold two members: PlacementBinPacking (MostAllocated) takes the fuller one."""
    result = run(
        [*roomed(spine_block_nodes(SEED_LAYOUT)), pod_group("g", min_count=2, key=ROOM)]
        + [member("g", i) for i in range(2)],
        schedulers=SCHEDULERS,
    )
    assert sorted(result.bound.values()) == ["node-2", "node-3"]


def test_a_bound_member_pins_the_value_of_a_bare_label_key() -> None:
    result = run(
        [
            *roomed(spine_block_nodes(SEED_LAYOUT)),
            pod_group("g", min_count=1, key=ROOM),
            member("g", 0, node_name="node-9"),
            member("g", 1),
        ],
        schedulers=SCHEDULERS,
    )
    assert result.bound["default/g-1"] in ("node-5", "node-10")


def test_a_key_no_node_carries_leaves_the_gang_waiting_naming_it() -> None:
    result = run(
        [*cluster(), pod_group("g", min_count=1, key="example.com/nowhere"), member("g", 0)],
        schedulers=SCHEDULERS,
    )
    assert result.bound == {}
    said = result.unschedulable["upstream:default/g"]
    assert "no node carries label 'example.com/nowhere'" in said
    assert "spec.schedulingConstraints.topology[0].key" in said


def test_a_bare_label_key_preempts_inside_one_value() -> None:
    """Every node is full; room-b's pods outrank the group, room-a's do not: the plan evicts in
    room-a alone, and nothing on the nodes no room holds."""
    nodes = roomed(spine_block_nodes(SEED_LAYOUT))
    held = [
        busy(f"low-{name}", name, priority=500 if ROOMS.get(name) == "room-b" else 1)
        for name in (n["metadata"]["name"] for n in nodes)
    ]
    result = run(
        [*nodes, *held, pod_group("hi", min_count=2, key=ROOM, priority=100)]
        + [member("hi", i, priority=100) for i in range(2)],
        schedulers=SCHEDULERS,
    )
    assert sorted(result.evicted) == ["default/low-node-2", "default/low-node-3"]
    assert sorted(result.bound.values()) == ["node-2", "node-3"]


def test_members_that_disagree_fail_the_group() -> None:
    """Members must share schedulerName, priority and preemptionPolicy (kube's SchedulerError)."""
    result = run(
        [*cluster(), pod_group("g", min_count=2), member("g", 0, priority=5), member("g", 1, priority=7)],
        schedulers=SCHEDULERS,
    )
    assert result.bound == {}
    assert "SchedulerError: its pods disagree on priority" in result.unschedulable["upstream:default/g"]


def full_cluster() -> list[Obj]:
    """Every node holds a low-priority pod using all its CPU."""
    nodes = spine_block_nodes(SEED_LAYOUT)
    return [*nodes, *(busy(f"low-{n['metadata']['name']}", n["metadata"]["name"], priority=1) for n in nodes)]


def test_the_group_priority_preempts() -> None:
    result = run(
        [
            *full_cluster(),
            pod_group("hi", min_count=2, priority=1000),
            *(member("hi", i, priority=1000) for i in range(2)),
        ],
        schedulers=SCHEDULERS,
    )
    assert len(result.evicted) == 2
    assert len(result.bound) == 2 and len(blocks_of(list(result.bound.values()))) == 1


def test_preemption_policy_never_on_the_group_never_preempts() -> None:
    result = run(
        [
            *full_cluster(),
            pod_group("hi", min_count=2, priority=1000, preemptionPolicy="Never"),
            *(member("hi", i, priority=1000) for i in range(2)),
        ],
        schedulers=SCHEDULERS,
    )
    assert result.evicted == [] and result.bound == {}


def two_nodes_held_by(mode: dict[str, Any] | None) -> list[Obj]:
    """Two 8-CPU nodes, each holding one member of a low-priority gang of two."""
    nodes = [n for n in spine_block_nodes(SEED_LAYOUT) if n["metadata"]["name"] in ("node-9", "node-10")]
    low = pod_group("low", min_count=2, key=None, **({"disruptionMode": mode} if mode else {}))
    held = [member("low", i, node_name=n["metadata"]["name"], priority=1) for i, n in enumerate(nodes)]
    high = [pod_group("high", min_count=1, key=None, priority=100), member("high", 0, priority=100)]
    return [*nodes, low, *held, *high]


def test_disruption_mode_single_lets_a_member_go_alone() -> None:
    """KEP-5710: `single` (the default) lets members be taken even below minCount."""
    for mode in (None, {"single": {}}):
        result = run(two_nodes_held_by(mode), schedulers=SCHEDULERS)
        assert len(result.evicted) == 1, mode
        assert list(result.bound) == ["default/high-0"]


def test_disruption_mode_all_gives_the_group_up_whole() -> None:
    """KEP-5710: an `all` group is a victim whole or not at all."""
    result = run(two_nodes_held_by({"all": {}}), schedulers=SCHEDULERS)
    assert sorted(result.evicted) == ["default/low-0", "default/low-1"]
    assert list(result.bound) == ["default/high-0"]


def test_explain_suggests_a_wider_key_never_soft_mode() -> None:
    """A PodGroup's key is required only: `explain` offers the label of a wider level instead."""
    from controller.placer.explain import explain
    from controller.placer.scenario import prepare

    sc = load_scenario([*cluster(), pod_group("g", min_count=4), *(member("g", i) for i in range(4))])
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.key == "upstream:default/g")
    e = explain(gang, prep.snapshot)
    assert "topologyKey: network.topology.nvidia.com/spine would place it in spine/spine-0" in e.suggestions
    assert not any("soft" in s or "highestTier" in s for s in e.suggestions)


def workload_v1alpha1(min_count: int) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": min_count}}}]},
    }


def ref_member(i: int, replica: str) -> Obj:
    obj = pod(f"train-{replica}-{i}", scheduler="topobridge", cpu="1", memory="1Gi")
    obj["spec"]["workloadRef"] = {"name": "train", "podGroup": "workers", "podGroupReplicaKey": replica}
    return obj


def test_kubernetes_1_35_each_replica_key_is_its_own_gang() -> None:
    """1.35: pods join a Workload group by spec.workloadRef; each replica key is a gang."""
    pods = [ref_member(i, r) for r in ("r0", "r1") for i in range(2)] + [ref_member(2, "r1")]
    result = run([*cluster(), workload_v1alpha1(3), *pods], schedulers=SCHEDULERS)
    assert sorted(result.bound) == [f"default/train-r1-{i}" for i in range(3)]
    assert "upstream:default/train/workers/r0" in result.unschedulable  # two of three: no quorum


def test_kubernetes_1_35_pods_wait_for_their_workload() -> None:
    from controller.placer.cluster import Kind
    from controller.placer.scenario import cluster_state
    from translations import workload

    sc = load_scenario([*cluster(), *(ref_member(i, "r0") for i in range(2))])
    state = cluster_state(sc)
    view = state.view()
    gang = view.gangs["upstream:default/train/workers/r0"]
    assert gang.error == "Workload default/train (scheduling.k8s.io) not found: its pods wait until it exists"
    state.put(Kind.K8S_WORKLOAD, "default/train", workload.WorkloadV1alpha1.parse(workload_v1alpha1(2)))
    again = state.view().gangs["upstream:default/train/workers/r0"]
    assert again.error is None and again.min_member == 2


def test_kubernetes_1_36_pod_groups_are_read_in_the_v1beta1_shape() -> None:
    """A 1.36 cluster serves v1alpha2 only: its PodGroups are gangs all the same."""
    v1alpha2 = pod_group("trainer", min_count=3)
    v1alpha2["apiVersion"] = "scheduling.k8s.io/v1alpha2"
    v1alpha2["spec"]["disruptionMode"] = "PodGroup"
    v1alpha2["spec"]["podGroupTemplateRef"] = {"workload": {"workloadName": "w", "podGroupTemplateName": "t"}}
    result = run([*cluster(), v1alpha2, *(member("trainer", i) for i in range(3))], schedulers=SCHEDULERS)
    assert result.gangs["upstream:default/trainer"] == ("block/block-4", 1)
    sc = load_scenario([*cluster(), v1alpha2, member("trainer", 0)])
    (pg,) = sc.podgroups.upstream
    assert pg.spec.workload_ref is not None and pg.spec.workload_ref.template_name == "t"
    assert pg.spec.disruption_mode is not None and pg.spec.disruption_mode.all is not None


async def test_discovery_reads_the_pod_group_version_the_cluster_serves() -> None:
    from controller.resources import Resource, served_resources
    from translations import kinds

    async def serves_v1alpha2(res: Resource) -> bool:
        return res.group != "scheduling.k8s.io" or res.version == "v1alpha2" or res.kind == "PriorityClass"

    got = await served_resources(serves_v1alpha2)
    assert got[kinds.K8S_PODGROUP] == Resource.of(kinds.K8S_PODGROUP_V1ALPHA2)


def test_a_composite_pod_groups_member_groups_wait_saying_why() -> None:
    """A CompositePodGroup's minGroupCount and shared key bind its groups together; topobridge
    cannot hold that, so its member groups wait (a group alone would be placed)."""
    composite: Obj = {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": "cpg", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}},
    }
    child = pod_group(
        "leaf",
        min_count=2,
        parentCompositePodGroupName="cpg",
        workloadRef={"workloadName": "train", "templateName": "leaf"},
    )
    child["apiVersion"] = "scheduling.k8s.io/v1alpha3"
    members = [member("leaf", i) for i in range(2)]
    result = run([*cluster(), composite, child, *members], schedulers=SCHEDULERS)
    assert result.bound == {}
    why = result.unschedulable["upstream:default/leaf"]
    assert "part of CompositePodGroup default/cpg (v1alpha3), which topobridge cannot hold" in why
    del child["spec"]["parentCompositePodGroupName"]
    alone = run([*cluster(), child, *members], schedulers=SCHEDULERS)
    assert len(alone.bound) == 2


def test_a_bare_label_key_preempts_what_keeps_it_out_by_anti_affinity() -> None:
    """The filters, run again without candidate victims, are kept to one value's nodes too:
    room-a has CPU but its low-priority pods' anti-affinity keeps the group out, room-b is
    full of higher priorities, the nodes outside the rooms are free and in no room: the plan
    takes a pod of room-a."""
    shun = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "hi"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    nodes = roomed(spine_block_nodes(SEED_LAYOUT))
    held = [
        busy(f"low-{n}", n, priority=1, cpu="1", memory="1Gi", affinity=shun) for n in ("node-2", "node-3")
    ]
    held += [busy(f"mid-{n}", n, priority=500) for n in ("node-5", "node-9", "node-10")]
    group = [pod_group("hi", min_count=2, key=ROOM, priority=100)]
    group += [member("hi", i, priority=100, cpu="4", memory="1Gi", labels={"app": "hi"}) for i in range(2)]
    result = run([*nodes, *held, *group], schedulers=SCHEDULERS)
    # One victim is the cheapest plan: the two members share the node it frees.
    assert len(result.evicted) == 1 and result.evicted[0] in ("default/low-node-2", "default/low-node-3")
    freed = result.evicted[0].removeprefix("default/low-")
    assert sorted(result.bound.values()) == [freed, freed]


def roomed_demand(*bound_on: str) -> tuple[GangDemand, ClusterIndex]:
    """The demand of a room-keyed group of two, with members bound on `bound_on`."""
    objects = [*roomed(spine_block_nodes(SEED_LAYOUT)), pod_group("g", min_count=1, key=ROOM)]
    objects += [member("g", i, node_name=n) for i, n in enumerate(bound_on)]
    objects += [member("g", len(bound_on) + i) for i in range(2)]
    sc = load_scenario(objects)
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.key == "upstream:default/g")
    return demand_of(gang, prep.snapshot), prep.snapshot.index


def test_label_domains_are_the_values_nodes_and_bound_members_pin_one() -> None:
    demand, index = roomed_demand()
    assert demand.constraint == TopologyConstraint("hard", None, label_key=ROOM)
    named = {v: sorted(index.node_names[i] for i in nodes) for v, nodes in label_domains(demand, index)}
    assert named == {"room-a": ["node-2", "node-3"], "room-b": ["node-10", "node-5", "node-9"]}
    demand, index = roomed_demand("node-5")
    assert [v for v, _ in label_domains(demand, index)] == ["room-b"]
    for split in (("node-2", "node-9"), ("node-0",)):  # two values; a node with no room
        demand, index = roomed_demand(*split)
        with pytest.raises(PlacementGenerateError):
            label_domains(demand, index)
