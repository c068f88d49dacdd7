"""Gang discovery from every dialect: membership, minMember, priority, constraint, ranks, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from translations import koordinator as koord
from translations import schedplugins, volcano
from translations.constraints import TopologyConstraint
from translations.core import Node, Pod, PriorityClass
from translations.gangs import Gang, PodGroups, discover_gangs, gang_pod, resolve_priority
from translations.topology import from_cluster_network_topology

CNT = koord.ClusterNetworkTopology.parse(
    {
        "metadata": {"name": "default"},
        "spec": {
            "networkTopologySpec": [
                {"topologyLayer": "SpineLayer", "labelKey": ["spine"]},
                {"topologyLayer": "BlockLayer", "labelKey": ["block"], "parentTopologyLayer": "SpineLayer"},
                {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
            ]
        },
    }
)
NODES = [
    Node.parse({"metadata": {"name": f"n{i}", "labels": {"spine": "s", "block": f"b{i % 2}"}}})
    for i in range(4)
]
TREE = from_cluster_network_topology(CNT, NODES)
CLASSES = [
    PriorityClass.parse({"metadata": {"name": "high"}, "value": 1000}),
    PriorityClass.parse({"metadata": {"name": "never"}, "value": 50, "preemptionPolicy": "Never"}),
    PriorityClass.parse({"metadata": {"name": "base"}, "value": 7, "globalDefault": True}),
]


def make_pod(
    name: str, *, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None, **spec: Any
) -> Pod:
    body: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]
    }
    body.update(spec)
    return Pod.parse(
        {
            "metadata": {
                "name": name,
                "namespace": "ns",
                "labels": labels or {},
                "annotations": annotations or {},
            },
            "spec": body,
        }
    )


def gangs(pods: list[Pod], **kw: Any) -> dict[str, Gang]:
    return {g.key: g for g in discover_gangs(pods, priority_classes=CLASSES, tree=TREE, cnt=CNT, **kw)}


def test_volcano_podgroup_membership_constraint_and_priority() -> None:
    pg = volcano.PodGroup.parse(
        {
            "metadata": {"name": "job", "namespace": "ns"},
            "spec": {
                "minMember": 2,
                "priorityClassName": "high",
                "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
            },
        }
    )
    pods = [make_pod(f"p{i}", annotations={"scheduling.k8s.io/group-name": "job"}) for i in range(2)]
    g = gangs(pods, podgroups=PodGroups(volcano=[pg]))["volcano:ns/job"]
    assert g.source == "volcano" and g.min_member == 2 and g.priority == 1000
    assert g.constraint == TopologyConstraint("hard", 1)
    assert [p.key for p in g.pods] == ["ns/p0", "ns/p1"]
    assert g.pods[0].requests == {"cpu": 1000, "memory": 2**30, "pods": 1}


def test_volcano_pod_annotations_stand_in_for_a_podgroup_without_topology() -> None:
    pg = volcano.PodGroup.parse({"metadata": {"name": "job", "namespace": "ns"}, "spec": {"minMember": 1}})
    pods = [
        make_pod(
            "p",
            annotations={
                "scheduling.k8s.io/group-name": "job",
                "volcano.sh/network-topology-mode": "soft",
                "volcano.sh/network-topology-highest-tier": "2",
            },
        )
    ]
    assert gangs(pods, podgroups=PodGroups(volcano=[pg]))["volcano:ns/job"].constraint == TopologyConstraint(
        "soft", 2
    )


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        ([{"layer": "SpineLayer", "strategy": "MustGather"}], TopologyConstraint("hard", 2)),
        (
            [
                {"layer": "BlockLayer", "strategy": "MustGather"},
                {"layer": "SpineLayer", "strategy": "MustGather"},
            ],
            TopologyConstraint("hard", 1),
        ),
        (
            [
                {"layer": "BlockLayer", "strategy": "PreferGather"},
                {"layer": "SpineLayer", "strategy": "PreferGather"},
            ],
            TopologyConstraint("soft", 2),
        ),
        ([{"layer": "NodeTopologyLayer", "strategy": "MustGather"}], TopologyConstraint("hard", 0)),
    ],
    ids=["must-spine", "deepest-must-wins", "prefer-only-is-soft", "must-node"],
)
def test_koordinator_podgroup_gather_spec(rules: list[dict[str, str]], expected: TopologyConstraint) -> None:
    pg = koord.SigsPodGroup.parse(
        {
            "metadata": {
                "name": "job",
                "namespace": "ns",
                "annotations": {koord.NETWORK_TOPOLOGY_SPEC: json.dumps({"gatherStrategy": rules})},
            },
            "spec": {"minMember": 1},
        }
    )
    pods = [make_pod("p", labels={koord.SIGS_POD_GROUP_LABEL: "job"})]
    g = gangs(pods, podgroups=PodGroups(koordinator=[pg]))["koordinator:ns/job"]
    assert g.source == "koordinator" and g.constraint == expected and g.error is None


def test_scheduler_plugins_podgroup() -> None:
    pg = schedplugins.XPodGroup.parse(
        {"metadata": {"name": "job", "namespace": "ns"}, "spec": {"minMember": 3}}
    )
    pods = [make_pod(f"p{i}", labels={schedplugins.POD_GROUP_LABEL: "job"}) for i in range(3)]
    g = gangs(pods, podgroups=PodGroups(scheduler_plugins=[pg]))["scheduler-plugins:ns/job"]
    assert g.source == "scheduler-plugins" and g.min_member == 3 and len(g.pods) == 3


@pytest.mark.parametrize(
    ("annotations", "min_member"),
    [
        ({koord.GANG_MIN_AVAILABLE: "2"}, 2),
        ({koord.GANG_TOTAL_NUMBER: "3"}, 3),
        ({}, 4),
    ],
    ids=["min-available", "total-number", "member-count"],
)
def test_koordinator_annotation_gangs(annotations: dict[str, str], min_member: int) -> None:
    pods = [make_pod(f"p{i}", annotations={koord.GANG_NAME: "job", **annotations}) for i in range(4)]
    g = gangs(pods)["koordinator:ns/job"]
    assert g.source == "koordinator-annotations" and g.min_member == min_member


def test_gang_group_merges_listed_gangs_into_one() -> None:
    groups = json.dumps(["ns/master", "ns/worker"])
    spec = json.dumps({"gatherStrategy": [{"layer": "SpineLayer", "strategy": "MustGather"}]})
    pgs = [
        koord.SigsPodGroup.parse(
            {
                "metadata": {
                    "name": n,
                    "namespace": "ns",
                    "annotations": {koord.GANG_GROUPS: groups, koord.NETWORK_TOPOLOGY_SPEC: spec},
                },
                "spec": {"minMember": m},
            }
        )
        for n, m in (("master", 1), ("worker", 2))
    ]
    pods = [make_pod("m", labels={koord.SIGS_POD_GROUP_LABEL: "master"})]
    pods += [make_pod(f"w{i}", labels={koord.SIGS_POD_GROUP_LABEL: "worker"}) for i in range(2)]
    found = gangs(pods, podgroups=PodGroups(koordinator=pgs))
    assert list(found) == ["koordinator:ns/master"]
    g = found["koordinator:ns/master"]
    assert g.min_member == 3 and len(g.pods) == 3 and g.all_or_nothing
    assert g.constraint == TopologyConstraint("hard", 2)


def test_a_pod_without_a_gang_is_a_gang_of_one() -> None:
    g = gangs([make_pod("solo")])["pod:ns/solo"]
    assert g.source == "none" and g.min_member == 1 and g.constraint is None


def test_a_lone_pod_s_gang_takes_its_priority_policy_scheduler_and_age() -> None:
    """The gang of a pod alone is made without discovery's tables: everything it states about
    itself still reaches the gang, and a bad request still makes it unusable."""
    solo = Pod.parse(
        {
            **make_pod("solo", priorityClassName="never", schedulerName="topobridge").to_dict(),
            "metadata": {"name": "solo", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
        }
    )
    g = gangs([solo])["pod:ns/solo"]
    assert (g.priority, g.preemption_policy, g.scheduler_name) == (50, "Never", "topobridge")
    assert g.creation == "2026-01-01T00:00:00Z" and g.error is None and not g.all_or_nothing
    bad = make_pod("bad", containers=[{"name": "c", "resources": {"requests": {"cpu": "lots"}}}])
    assert "pod ns/bad" in (gangs([bad])["pod:ns/bad"].error or "")


def test_terminal_pods_are_left_out() -> None:
    done = Pod.parse({**make_pod("done").to_dict(), "status": {"phase": "Succeeded"}})
    failed = Pod.parse({**make_pod("failed").to_dict(), "status": {"phase": "Failed"}})
    assert list(gangs([done, failed, make_pod("live")])) == ["pod:ns/live"]


def test_one_name_in_four_dialects_is_four_gangs() -> None:
    """A Volcano PodGroup `x`, a Koordinator gang `x`, a scheduler-plugins PodGroup `x` and a
    loose pod `x` in one namespace are four gangs: the dialect is part of a gang's identity."""
    vpg = volcano.PodGroup.parse({"metadata": {"name": "x", "namespace": "ns"}, "spec": {"minMember": 1}})
    xpg = schedplugins.XPodGroup.parse(
        {"metadata": {"name": "x", "namespace": "ns"}, "spec": {"minMember": 1}}
    )
    pods = [
        make_pod("v", annotations={volcano.GROUP_NAME_ANNOTATION: "x"}),
        make_pod("k", annotations={koord.GANG_NAME: "x"}),
        make_pod("s", labels={schedplugins.POD_GROUP_LABEL: "x"}),
        make_pod("x"),
    ]
    found = gangs(pods, podgroups=PodGroups(volcano=[vpg], scheduler_plugins=[xpg]))
    assert {k: [p.key for p in g.pods] for k, g in found.items()} == {
        "volcano:ns/x": ["ns/v"],
        "koordinator:ns/x": ["ns/k"],
        "scheduler-plugins:ns/x": ["ns/s"],
        "pod:ns/x": ["ns/x"],
    }
    assert {g.name for g in found.values()} == {"ns/x"}
    assert all(g.error is None for g in found.values())


def test_a_pending_pod_being_deleted_is_left_out_and_a_bound_one_stays() -> None:
    """kube-scheduler never places a pod with a deletionTimestamp; a bound one still holds room."""
    going = {"deletionTimestamp": "2026-11-26T00:00:00Z"}
    pending = Pod.parse({**make_pod("p0").to_dict(), "metadata": {"name": "p0", "namespace": "ns", **going}})
    bound_pod = make_pod("p1", nodeName="n1").to_dict()
    bound_pod["metadata"].update(going)
    found = gangs([pending, Pod.parse(bound_pod), make_pod("p2")])
    assert sorted(found) == ["pod:ns/p1", "pod:ns/p2"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"priority": 5, "priorityClassName": "high"}, (5, "PreemptLowerPriority")),
        ({"priorityClassName": "high"}, (1000, "PreemptLowerPriority")),
        ({"priorityClassName": "never"}, (50, "Never")),
        ({"priorityClassName": "high", "preemptionPolicy": "Never"}, (1000, "Never")),
        ({}, (7, "PreemptLowerPriority")),
        ({"priorityClassName": "unknown"}, (0, "PreemptLowerPriority")),
    ],
    ids=[
        "spec-priority-wins",
        "from-class",
        "policy-from-class",
        "policy-from-spec",
        "global-default",
        "unknown-class",
    ],
)
def test_priority_resolution(spec: dict[str, Any], expected: tuple[int, str]) -> None:
    assert resolve_priority(make_pod("p", **spec), {c.name: c for c in CLASSES}) == expected


def test_gang_priority_is_its_lowest_member_and_never_if_any_member_says_so() -> None:
    pods = [
        make_pod("a", annotations={koord.GANG_NAME: "job"}, priorityClassName="high"),
        make_pod("b", annotations={koord.GANG_NAME: "job"}, priorityClassName="never"),
    ]
    g = gangs(pods)["koordinator:ns/job"]
    assert g.priority == 50 and g.preemption_policy == "Never"


def test_ranks_order_members_index_then_worker_index_then_name() -> None:
    pods = [
        make_pod("z", annotations={koord.GANG_NAME: "job", koord.NETWORK_TOPOLOGY_INDEX: "0"}),
        make_pod("a", annotations={koord.GANG_NAME: "job", koord.NETWORK_TOPOLOGY_INDEX: "2"}),
        make_pod(
            "m",
            annotations={koord.GANG_NAME: "job"},
            labels={"leaderworkerset.sigs.k8s.io/worker-index": "1"},
        ),
        make_pod("p10", annotations={koord.GANG_NAME: "job"}),
        make_pod("p9", annotations={koord.GANG_NAME: "job"}),
    ]
    g = gangs(pods)["koordinator:ns/job"]
    assert [p.key for p in g.pods] == ["ns/z", "ns/m", "ns/a", "ns/p9", "ns/p10"]
    assert [p.rank for p in g.pods] == [0, 1, 2, None, None]


@pytest.mark.parametrize(
    ("setup", "fragment"),
    [
        (
            {"annotations": {koord.GANG_NAME: "job", koord.NETWORK_TOPOLOGY_INDEX: "-1"}},
            "pod ns/p0: metadata.annotations[gang.scheduling.koordinator.sh/network-topology-index]: "
            'Invalid value: "-1"',
        ),
        (
            {
                "annotations": {
                    koord.GANG_NAME: "job",
                    koord.NETWORK_TOPOLOGY_SPEC: json.dumps(
                        {"gatherStrategy": [{"layer": "RackLayer", "strategy": "MustGather"}]}
                    ),
                }
            },
            'Not found: "RackLayer": no such layer in ClusterNetworkTopology "default"',
        ),
        (
            {"annotations": {koord.GANG_NAME: "job", koord.GANG_MIN_AVAILABLE: "two"}},
            "pod ns/p0: metadata.annotations[gang.scheduling.koordinator.sh/min-available]: "
            'Invalid value: "two"',
        ),
        (
            {"annotations": {"scheduling.k8s.io/group-name": "job"}},
            "PodGroup ns/job (scheduling.volcano.sh) not found",
        ),
    ],
    ids=["bad-index", "unknown-layer", "bad-min-available", "missing-podgroup"],
)
def test_errors_name_the_object_and_field(setup: dict[str, Any], fragment: str) -> None:
    g = next(iter(gangs([make_pod("p0", **setup)]).values()))
    assert g.error is not None and fragment in g.error, g.error


def test_volcano_subgroups_by_match_label_keys() -> None:
    pg = volcano.PodGroup.parse(
        {
            "metadata": {"name": "job", "namespace": "ns"},
            "spec": {
                "minMember": 4,
                "subGroupPolicy": [
                    {
                        "name": "tp",
                        "matchLabelKeys": ["sg"],
                        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                    }
                ],
            },
        }
    )
    pods = [
        make_pod(f"p{i}", annotations={"scheduling.k8s.io/group-name": "job"}, labels={"sg": str(i // 2)})
        for i in range(4)
    ]
    g = gangs(pods, podgroups=PodGroups(volcano=[pg]))["volcano:ns/job"]
    assert [(s.pods, s.constraint) for s in g.subgroups] == [
        (("ns/p0", "ns/p1"), TopologyConstraint("hard", 1)),
        (("ns/p2", "ns/p3"), TopologyConstraint("hard", 1)),
    ]


def test_volcano_pods_lacking_a_match_label_key_join_no_subgroup() -> None:
    """Volcano (getSubJobMatchValues): a pod without one of the policy's matchLabelKeys, or with
    it empty, does not match the policy; it stays with the job, in no subgroup."""
    pg = volcano.PodGroup.parse(
        {
            "metadata": {"name": "job", "namespace": "ns"},
            "spec": {
                "minMember": 3,
                "subGroupPolicy": [
                    {
                        "name": "tp",
                        "matchLabelKeys": ["sg"],
                        "minSubGroups": 1,
                        "subGroupSize": 2,
                        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                    }
                ],
            },
        }
    )
    group = {"scheduling.k8s.io/group-name": "job"}
    pods = [
        make_pod("p0", annotations=group, labels={"sg": "a"}),
        make_pod("p1", annotations=group, labels={"sg": "a"}),
        make_pod("p2", annotations=group, labels={"other": "a"}),
        make_pod("p3", annotations=group, labels={"sg": ""}),
    ]
    g = gangs(pods, podgroups=PodGroups(volcano=[pg]))["volcano:ns/job"]
    assert [(s.pods, s.policy, s.ready_size) for s in g.subgroups] == [(("ns/p0", "ns/p1"), "tp", 2)]
    assert g.min_sub_groups == (("tp", 1),)


def test_pod_count_multiple_becomes_rank_chunks_at_its_layer() -> None:
    spec = json.dumps(
        {
            "gatherStrategy": [
                {"layer": "BlockLayer", "strategy": "PreferGather", "podCountMultiple": 2},
                {"layer": "SpineLayer", "strategy": "MustGather"},
            ]
        }
    )
    pods = [
        make_pod(
            f"p{i}",
            annotations={
                koord.GANG_NAME: "job",
                koord.NETWORK_TOPOLOGY_SPEC: spec,
                koord.NETWORK_TOPOLOGY_INDEX: str(i),
            },
        )
        for i in range(5)
    ]
    g = gangs(pods)["koordinator:ns/job"]
    assert g.constraint == TopologyConstraint("hard", 2)
    assert [s.pods for s in g.subgroups] == [("ns/p0", "ns/p1"), ("ns/p2", "ns/p3"), ("ns/p4",)]
    assert all(s.constraint == TopologyConstraint("hard", 1) for s in g.subgroups)


def test_members_asking_the_same_requests_share_one_read_only_dict() -> None:
    """A large cluster's pods ask a few shapes: members asking alike hold one dict between
    them (bytes per pod), and it reads as each one's own requests."""
    one, two = (gang_pod(make_pod(n), {})[0] for n in ("one", "two"))
    other = gang_pod(
        make_pod("other", containers=[{"name": "c", "resources": {"requests": {"cpu": "2"}}}]), {}
    )[0]
    assert one.requests is two.requests
    assert dict(one.requests) == {"cpu": 1000, "memory": 2**30, "pods": 1}
    assert dict(other.requests) == {"cpu": 2000, "pods": 1}
