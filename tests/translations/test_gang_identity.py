"""One reading of a pod's gang and of a tier name, shared by the webhook, `translate` and the
scheduler: each test feeds every side the case where they used to disagree."""

from __future__ import annotations

import json

from translations import constraints, volcano
from translations import koordinator as koord
from translations import volcano_to_koordinator as v2k
from translations.core import Node, Pod
from translations.gangs import discover_gangs, gang_key, koordinator_gang_of, membership
from translations.koordinator_to_volcano import gangs_from_pods
from translations.topology import from_hypernodes, tier_named
from translations.volcano import HyperNode
from webhooks.rules._common import tier_of_name
from webhooks.rules.cluster_state import ClusterState, HyperNodeFacts, gang_of

LABEL_AND_ANNOTATION = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p0",
        "namespace": "ns",
        "labels": {koord.SIGS_POD_GROUP_LABEL: "by-label"},
        "annotations": {koord.GANG_NAME: "by-annotation", koord.GANG_MIN_AVAILABLE: "1"},
    },
    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
}


def test_a_pod_group_label_names_the_gang_before_the_gang_name_annotation_everywhere() -> None:
    """Koordinator reads the PodGroup label first; the webhook used to read the annotation first
    and so checked the pod's network-topology index against another gang's."""
    pod = Pod.parse(LABEL_AND_ANNOTATION)
    assert koordinator_gang_of(pod.metadata.labels or {}, pod.metadata.annotations or {}) == (
        "by-label",
        "koordinator",
    )
    assert membership(pod)[0] == gang_key("koordinator", "ns/by-label")  # the scheduler
    assert gang_of(pod.metadata) == "by-label"  # the webhook
    assert gangs_from_pods([pod]) == []  # translate: no annotation-only gang "by-annotation"


def test_the_annotation_names_the_gang_when_no_label_does() -> None:
    raw = {**LABEL_AND_ANNOTATION, "metadata": {**LABEL_AND_ANNOTATION["metadata"], "labels": {}}}
    pod = Pod.parse(raw)
    assert membership(pod)[0] == gang_key("koordinator-annotations", "ns/by-annotation")
    assert gang_of(pod.metadata) == "by-annotation"
    assert [g.name for g in gangs_from_pods([pod])] == ["by-annotation"]


def _hypernode(name: str, tier: int, tier_name: str, nodes: list[str]) -> HyperNode:
    return HyperNode.parse(
        {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": name},
            "spec": {
                "tier": tier,
                "tierName": tier_name,
                "members": [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in nodes],
            },
        }
    )


def _node(name: str) -> Node:
    return Node.parse({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})


def _both_sides(hypernodes: list[HyperNode], name: str) -> tuple[int | None, int | None]:
    """(the webhook's tier for `name`, the scheduler's)."""
    state = ClusterState.build(hypernodes=[HyperNodeFacts.of(h) for h in hypernodes])
    nodes = sorted(
        {
            m.selector.exact_match.name
            for h in hypernodes
            for m in h.spec.member_list
            if m.selector.exact_match
        }
    )
    tree = from_hypernodes(hypernodes, [_node(n) for n in nodes])
    spec = volcano.NetworkTopologySpec(mode="hard", highest_tier_name=name)
    constraint = constraints.from_volcano(spec, tree)
    return tier_of_name(state, name), constraint.highest_tier if constraint is not None else None


def test_a_tier_name_among_other_names_at_its_tier_resolves_alike() -> None:
    """tier 1 carries "rack" and "leaf": "rack" is tier 1 for Volcano. The scheduler used to
    apply no limit (the tier's names disagree), while the webhook resolved tier 1."""
    hns = [_hypernode("a", 1, "rack", ["n0"]), _hypernode("b", 1, "leaf", ["n1"])]
    assert _both_sides(hns, "rack") == (1, 1)


def test_a_tier_name_carried_at_two_tiers_resolves_alike_to_the_lowest() -> None:
    """ "zone" on tier 1 and on tier 2: the webhook used to resolve nothing (no check), the
    scheduler tier 1; both now take the lowest, the limit every Volcano reading holds."""
    hns = [_hypernode("a", 1, "zone", ["n0"]), _hypernode("b", 2, "zone", ["n1"])]
    assert _both_sides(hns, "zone") == (1, 1)
    assert tier_named(()) is None


def _koordinator_gang_gathering_by(layer: str, hypernodes: list[HyperNode]) -> int | None:
    """The scheduler's tier for a Koordinator gang that must gather by `layer` over the
    HyperNodes' tree (no ClusterNetworkTopology: a layer is a HyperNode tierName)."""
    pod = Pod.parse(
        {
            **LABEL_AND_ANNOTATION,
            "metadata": {
                "name": "p0",
                "namespace": "ns",
                "annotations": {
                    koord.GANG_NAME: "g",
                    koord.GANG_MIN_AVAILABLE: "1",
                    koord.NETWORK_TOPOLOGY_SPEC: json.dumps(
                        {"gatherStrategy": [{"layer": layer, "strategy": "MustGather"}]}
                    ),
                },
            },
        }
    )
    nodes = sorted(
        {
            m.selector.exact_match.name
            for h in hypernodes
            for m in h.spec.member_list
            if m.selector.exact_match
        }
    )
    (gang,) = discover_gangs([pod], tree=from_hypernodes(hypernodes, [_node(n) for n in nodes]))
    assert gang.error is None, gang.error
    return gang.constraint.highest_tier if gang.constraint is not None else None


def _translated_tier(hypernodes: list[HyperNode], name: str) -> str:
    """What `translate` (Volcano PodGroup -> Koordinator) reports for `highestTierName: name`."""
    nodes = sorted(
        {
            m.selector.exact_match.name
            for h in hypernodes
            for m in h.spec.member_list
            if m.selector.exact_match
        }
    )
    tree = from_hypernodes(hypernodes, [_node(n) for n in nodes])
    pg = volcano.PodGroup.parse(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": "ns"},
            "spec": {"minMember": 1, "networkTopology": {"mode": "hard", "highestTierName": name}},
        }
    )
    out = v2k.translate(pg, tree=tree)
    return next(line for line in out.report.carried if line.startswith("networkTopology"))


def test_a_layer_named_as_a_tier_carried_at_two_tiers_is_its_lowest_everywhere() -> None:
    """A Koordinator gang gathering by "zone" (a tierName on tier 1 and tier 2): the scheduler
    used to read the last tier carrying the name (2), `translate` reported tier 2 for a
    Volcano PodGroup's `highestTierName: zone`; the webhook and the Volcano reading take 1."""
    hns = [_hypernode("a", 1, "zone", ["n0"]), _hypernode("b", 2, "zone", ["n1"])]
    assert _both_sides(hns, "zone") == (1, 1)
    assert _koordinator_gang_gathering_by("zone", hns) == 1
    assert "tier 1}" in _translated_tier(hns, "zone")


def test_a_layer_named_as_one_of_a_tiers_names_is_that_tier_everywhere() -> None:
    """Tier 1 carries "rack" and "leaf": a Koordinator gang gathering by "rack" used to be
    refused by the scheduler (no layer "rack", the tier's names disagree), though the webhook
    and a Volcano PodGroup naming "rack" resolve tier 1."""
    hns = [_hypernode("a", 1, "rack", ["n0"]), _hypernode("b", 1, "leaf", ["n1"])]
    assert _koordinator_gang_gathering_by("rack", hns) == 1
