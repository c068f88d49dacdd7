"""The framework issue's defects that no upstream table row covers, each as the case the issue
names: a gang's members count as reserved for spread as they do for kube's pods placed one
after another, and Volcano's virtual HyperNode above the highest tier."""

from __future__ import annotations

from collections import Counter

from placer_objects import Obj, hypernode, members, node, run, volcano_gang

from controller.placer.framework import Step
from controller.placer.plugins import default_profile

HOST = "kubernetes.io/hostname"


def _spread_gang(n: int) -> list[Obj]:
    gang = members("job", n, dialect="volcano", cpu="1", memory="1Gi")
    for p in gang:
        p["metadata"].setdefault("labels", {})["app"] = "job"
        p["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": HOST,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "job"}},
            }
        ]
    return [volcano_gang("job", n), *gang]


def test_a_gang_of_four_with_max_skew_one_over_two_empty_nodes_ends_two_and_two() -> None:
    """kube-scheduler places the pods one by one, each seeing the ones before: 1/0, 1/1, 2/1,
    2/2. Members used to be capped at the room before the gang (one per node): it stayed
    pending with "desiredOfferSlot: 4, offerSlot: 2"."""
    result = run([node("a"), node("b"), *_spread_gang(4)])
    assert Counter(result.bound.values()) == {"a": 2, "b": 2}


def test_a_gang_that_would_break_max_skew_still_waits() -> None:
    """Three nodes, but only two have room for two pods each: 4 members with maxSkew 1 would
    end 2/2/0, a skew of 2 (the empty node is a domain too). kube places 1/1/0 then stops."""
    nodes = [node("a", cpu="2"), node("b", cpu="2"), node("c", cpu="0")]
    result = run([*nodes, *_spread_gang(4)])
    assert result.bound == {}
    assert "volcano:default/job" in result.unschedulable


def test_a_hard_tier_above_the_highest_hypernode_spans_the_cluster() -> None:
    """Only tier-1 HyperNodes; highestTierAllowed 2 is Volcano's virtual top HyperNode, one tier
    above the highest real one: the gang may span the cluster. It used to stay pending."""
    nodes = [node(f"n{i}", cpu="4") for i in range(4)]
    hns = [
        hypernode("r0", 1, [("Node", "n0"), ("Node", "n1")]),
        hypernode("r1", 1, [("Node", "n2"), ("Node", "n3")]),
    ]
    gang = [volcano_gang("wide", 4, mode="hard", tier=2), *members("wide", 4, dialect="volcano", cpu="3")]
    result = run([*nodes, *hns, *gang])
    assert sorted(result.bound.values()) == ["n0", "n1", "n2", "n3"]
    assert result.gangs["volcano:default/wide"] == ("cluster", 2)


def test_a_hard_tier_at_the_highest_hypernode_still_binds() -> None:
    nodes = [node(f"n{i}", cpu="4") for i in range(4)]
    hns = [
        hypernode("r0", 1, [("Node", "n0"), ("Node", "n1")]),
        hypernode("r1", 1, [("Node", "n2"), ("Node", "n3")]),
    ]
    gang = [volcano_gang("narrow", 4, mode="hard", tier=1), *members("narrow", 4, dialect="volcano", cpu="3")]
    result = run([*nodes, *hns, *gang])
    assert result.bound == {} and "volcano:default/narrow" in result.unschedulable


def test_the_default_profile_names_every_plugin_at_its_extension_points() -> None:
    names = default_profile().names()
    assert names["filter"] == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "GPU",
        "NetworkTopology",
    ]
    assert names["pre_enqueue"] == ["SchedulingGates"]
    assert names["post_filter"] == ["DefaultPreemption"]
    assert names["permit"] == ["Coscheduling"]
    assert default_profile(preemption=False).names()["post_filter"] == []
    assert {s.value for s in Step} >= {"PreEnqueue", "PreFilter", "Filter", "PostFilter", "Permit"}
