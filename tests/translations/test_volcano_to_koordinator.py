"""Volcano PodGroup -> Koordinator PodGroup + gang annotations."""

from __future__ import annotations

import json
from typing import Any

import pytest
from translation_seeds import cnt, parse_nodes, seed_nodes

from translations import hypernodes as hn
from translations import koordinator as koord
from translations import volcano_to_koordinator as v2k
from translations.core import Pod
from translations.errors import MissingInputError, NotExpressibleError
from translations.volcano import PodGroup

JsonDict = dict[str, Any]


def pg(spec: JsonDict, name: str = "job") -> PodGroup:
    return PodGroup.parse(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    )


def rules(result: v2k.KoordinatorGang) -> list[JsonDict] | None:
    raw = result.pod_group.metadata.annotation(koord.NETWORK_TOPOLOGY_SPEC)
    return None if raw is None else list(json.loads(raw)["gatherStrategy"])


@pytest.mark.parametrize(
    ("topology", "expected"),
    [
        ({"mode": "hard", "highestTierAllowed": 2}, [{"layer": "SpineLayer", "strategy": "MustGather"}]),
        ({"mode": "hard", "highestTierAllowed": 1}, [{"layer": "BlockLayer", "strategy": "MustGather"}]),
        (
            {"mode": "hard", "highestTierAllowed": 0},
            [{"layer": "NodeTopologyLayer", "strategy": "MustGather"}],
        ),
        ({"highestTierAllowed": 1}, [{"layer": "BlockLayer", "strategy": "MustGather"}]),
        (
            {"mode": "soft", "highestTierAllowed": 2},
            [
                {"layer": "BlockLayer", "strategy": "PreferGather"},
                {"layer": "SpineLayer", "strategy": "PreferGather"},
            ],
        ),
        (
            {"mode": "soft", "highestTierAllowed": 0},
            [{"layer": "NodeTopologyLayer", "strategy": "PreferGather"}],
        ),
        (
            {"mode": "soft"},
            [
                {"layer": "BlockLayer", "strategy": "PreferGather"},
                {"layer": "SpineLayer", "strategy": "PreferGather"},
            ],
        ),
        (
            {"mode": "hard", "highestTierName": "BlockLayer"},
            [{"layer": "BlockLayer", "strategy": "MustGather"}],
        ),
        ({"mode": "hard"}, None),
    ],
    ids=[
        "hard-2",
        "hard-1",
        "hard-0",
        "default-mode",
        "soft-2",
        "soft-0",
        "soft-no-tier",
        "tier-name",
        "hard-no-tier",
    ],
)
def test_volcano_topology_becomes_gather_rules(topology: JsonDict, expected: list[JsonDict] | None) -> None:
    result = v2k.translate(pg({"minMember": 4, "networkTopology": topology}), cnt=cnt())
    assert rules(result) == expected
    assert result.pod_group.spec.min_member == 4


def test_layers_from_hypernode_tier_names() -> None:
    tree = hn.from_cluster_network_topology(cnt(), parse_nodes(seed_nodes())).tree
    result = v2k.translate(pg({"networkTopology": {"mode": "hard", "highestTierAllowed": 2}}), tree=tree)
    assert rules(result) == [{"layer": "SpineLayer", "strategy": "MustGather"}]


def test_a_tier_name_without_layers_is_taken_as_the_layer() -> None:
    result = v2k.translate(pg({"networkTopology": {"mode": "soft", "highestTierName": "RackLayer"}}))
    assert rules(result) == [{"layer": "RackLayer", "strategy": "PreferGather"}]
    assert result.report.defaulted == ["PreferGather RackLayer: highestTierName taken as the layer name"]


def test_a_tier_number_needs_the_layers() -> None:
    with pytest.raises(MissingInputError):
        v2k.translate(pg({"networkTopology": {"mode": "hard", "highestTierAllowed": 1}}))
    with pytest.raises(NotExpressibleError) as exc:
        v2k.translate(pg({"networkTopology": {"mode": "hard", "highestTierAllowed": 5}}), cnt=cnt())
    assert "tier 5 has no layer" in str(exc.value)


def test_fields_koordinator_lacks_are_refused_in_the_report() -> None:
    result = v2k.translate(
        pg({"minMember": 2, "queue": "q", "priorityClassName": "high", "minResources": {"cpu": "4"}}),
        cnt=cnt(),
    )
    assert result.pod_group.to_dict()["spec"] == {"minMember": 2, "minResources": {"cpu": "4"}}
    assert result.report.refused == [
        "queue q: Koordinator's PodGroup has no such field",
        "priorityClassName high: Koordinator's PodGroup has no such field; the member pods' own "
        "priorityClassName "
        "decides",
    ]


def test_a_hard_subgroup_cannot_be_said_in_koordinator_but_a_soft_one_is_reported() -> None:
    lws_like = {
        "name": "subgroup",
        "subGroupSize": 2,
        "matchLabelKeys": ["a", "b"],
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
    }
    with pytest.raises(NotExpressibleError) as exc:
        v2k.translate(pg({"minMember": 4, "subGroupPolicy": [lws_like]}), cnt=cnt())
    assert exc.value.field_path == "spec.subGroupPolicy[0].networkTopology"
    soft = {**lws_like, "networkTopology": {"mode": "soft", "highestTierAllowed": 1}}
    result = v2k.translate(pg({"minMember": 4, "subGroupPolicy": [soft]}), cnt=cnt())
    assert result.report.refused == [
        "spec.subGroupPolicy[0] (subgroup): Koordinator has no subgroups; its soft topology is dropped"
    ]


def test_member_pods_get_the_pod_group_label_and_koord_scheduler() -> None:
    pods = [
        Pod.parse(
            {
                "metadata": {
                    "name": n,
                    "namespace": "default",
                    "annotations": {"scheduling.k8s.io/group-name": g},
                }
            }
        )
        for n, g in (("p0", "job"), ("p1", "other"))
    ]
    result = v2k.translate(pg({"minMember": 1}), pods=pods)
    assert [(p.name, p.merge_patch()) for p in result.pod_patches] == [
        (
            "p0",
            {
                "metadata": {"labels": {koord.SIGS_POD_GROUP_LABEL: "job"}},
                "spec": {"schedulerName": "koord-scheduler"},
            },
        )
    ]
