"""Kueue TAS <-> Volcano: levels as tiers, required/preferred as hard/soft, slices as a subgroup,
both ways; a missing level order is an error naming where to give it; the scheduling-gate
predicate."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from translations import kueue, volcano
from translations import kueue_to_volcano as q2v
from translations.core import Pod
from translations.errors import InvalidSpecError, MissingInputError

K = "kueue.x-k8s.io/"
BLOCK, RACK = "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"
TOPOLOGY = kueue.Topology.parse(
    {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Topology",
        "metadata": {"name": "default"},
        "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": RACK}, {"nodeLabel": kueue.HOSTNAME_LABEL}]},
    }
)
ORDER = kueue.LevelOrder.of(TOPOLOGY)


def _job(annotations: dict[str, str], parallelism: int = 4) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "tas-sample", "namespace": "default"},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "completionMode": "Indexed",
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {"containers": [{"name": "c", "image": "agnhost"}], "restartPolicy": "Never"},
            },
        },
    }


@pytest.mark.parametrize(
    ("label", "tier"),
    [(BLOCK, 2), (RACK, 1), (kueue.HOSTNAME_LABEL, 0), ("cloud.provider.com/topology-zone", None)],
)
def test_levels_are_tiers_counted_from_the_nodes(label: str, tier: int | None) -> None:
    assert ORDER.tier_of(label) == tier
    if tier is not None:
        assert ORDER.label_of(tier) == label


@pytest.mark.parametrize(
    ("annotations", "network_topology", "subgroups"),
    [
        pytest.param(
            {f"{K}podset-required-topology": RACK},
            {"mode": "hard", "highestTierAllowed": 1},
            None,
            id="required",
        ),
        pytest.param(
            {f"{K}podset-preferred-topology": BLOCK},
            {"mode": "soft", "highestTierAllowed": 2},
            None,
            id="preferred",
        ),
        pytest.param(
            {f"{K}podset-required-topology": kueue.HOSTNAME_LABEL},
            {"mode": "hard", "highestTierAllowed": 0},
            None,
            id="one-node",
        ),
        pytest.param({f"{K}podset-unconstrained-topology": "true"}, None, None, id="unconstrained"),
        pytest.param(
            {
                f"{K}podset-required-topology": BLOCK,
                f"{K}podset-slice-required-topology": RACK,
                f"{K}podset-slice-size": "2",
            },
            {"mode": "hard", "highestTierAllowed": 2},
            (2, 1, 2),
            id="slices",
        ),
    ],
)
def test_a_job_becomes_a_pod_group(
    annotations: dict[str, str],
    network_topology: dict[str, Any] | None,
    subgroups: tuple[int, int, int] | None,
) -> None:
    result = q2v.job_to_volcano(_job(annotations), ORDER)
    assert result is not None
    spec = result.pod_group.to_dict()["spec"]
    assert spec["minMember"] == 4
    assert spec.get("networkTopology") == network_topology
    if subgroups is None:
        assert "subGroupPolicy" not in spec
    else:
        (policy,) = spec["subGroupPolicy"]
        size, tier, count = subgroups
        assert (
            policy["subGroupSize"],
            policy["networkTopology"]["highestTierAllowed"],
            policy["minSubGroups"],
        ) == (size, tier, count)
        assert policy["matchLabelKeys"] == ["topobridge.io/subgroup-index"]
        assert any("topobridge.io/subgroup-index" in line for line in result.report.refused)
    template = result.job["spec"]["template"]
    assert template["metadata"]["annotations"][volcano.GROUP_NAME_ANNOTATION] == "tas-sample"
    assert template["spec"]["schedulerName"] == "volcano"


def test_a_job_without_tas_annotations_is_not_kueues() -> None:
    assert q2v.job_to_volcano(_job({}), ORDER) is None


def test_a_named_level_needs_the_topology() -> None:
    with pytest.raises(MissingInputError) as exc:
        q2v.job_to_volcano(_job({f"{K}podset-required-topology": RACK}), None)
    assert str(exc.value) == (
        "Job default/tas-sample: needs the level order of a Kueue Topology: "
        f"spec.template.metadata.annotations[{K}podset-required-topology] names the level {RACK}, a node label key; "
        "give --kueue-topology FILE (a kueue.x-k8s.io Topology) or put the Topology in the input"
    )


def test_the_hostname_level_needs_no_topology() -> None:
    result = q2v.job_to_volcano(_job({f"{K}podset-required-topology": kueue.HOSTNAME_LABEL}), None)
    assert result is not None
    assert result.pod_group.spec.network_topology == volcano.NetworkTopologySpec(
        mode="hard", highest_tier_allowed=0
    )


def test_a_level_the_topology_lacks_is_named() -> None:
    with pytest.raises(InvalidSpecError) as exc:
        q2v.job_to_volcano(_job({f"{K}podset-required-topology": "cloud.provider.com/topology-zone"}), ORDER)
    assert exc.value.field_path == f"spec.template.metadata.annotations[{K}podset-required-topology]"
    assert exc.value.detail.startswith(
        'Not found: "cloud.provider.com/topology-zone": not a level of Topology default'
    )


def test_inner_slice_layers_and_group_names_are_refused() -> None:
    layers = f'[{{"topology": "{RACK}", "size": 4}}, {{"topology": "{kueue.HOSTNAME_LABEL}", "size": 2}}]'
    result = q2v.job_to_volcano(
        _job(
            {f"{K}podset-required-topology": BLOCK, f"{K}podset-slice-required-topology-constraints": layers},
            8,
        ),
        ORDER,
    )
    assert result is not None
    assert result.pod_group.spec.sub_group_policy is not None
    assert result.pod_group.spec.sub_group_policy[0].sub_group_size == 4
    assert any("do not nest" in line and "size: 2" in line for line in result.report.refused)


ROUND_TRIPS = [
    {f"{K}podset-required-topology": RACK},
    {f"{K}podset-preferred-topology": BLOCK},
    {f"{K}podset-required-topology": kueue.HOSTNAME_LABEL},
    {
        f"{K}podset-required-topology": BLOCK,
        f"{K}podset-slice-required-topology": RACK,
        f"{K}podset-slice-size": "2",
    },
    {
        f"{K}podset-preferred-topology": RACK,
        f"{K}podset-slice-required-topology": kueue.HOSTNAME_LABEL,
        f"{K}podset-slice-size": "1",
    },
]


@pytest.mark.parametrize(
    "annotations", ROUND_TRIPS, ids=lambda a: ",".join(k.rsplit("/", 1)[1] + "=" + v for k, v in a.items())
)
def test_kueue_to_volcano_and_back_is_the_identity(annotations: dict[str, str]) -> None:
    original = _job(annotations)
    there = q2v.job_to_volcano(original, ORDER)
    assert there is not None
    back = q2v.job_to_kueue(there.job, there.pod_group, ORDER)
    assert back.job == original
    assert back.report.refused == []


def test_volcano_to_kueue_names_what_kueue_cannot_hold() -> None:
    pod_group = volcano.PodGroup.parse(
        {
            "metadata": {"name": "tas-sample", "namespace": "default"},
            "spec": {
                "minMember": 2,
                "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                "subGroupPolicy": [
                    {
                        "name": "x",
                        "subGroupSize": 2,
                        "matchLabelKeys": ["rank"],
                        "networkTopology": {"highestTierAllowed": 0},
                    }
                ],
            },
        }
    )
    result = q2v.job_to_kueue(_job({}), pod_group, ORDER)
    assert result.job["spec"]["template"]["metadata"]["annotations"] == {f"{K}podset-required-topology": RACK}
    assert [line.split(":")[0] for line in result.report.refused] == [
        "spec.subGroupPolicy[0] (x)",
        "minMember 2",
    ]


def test_a_tier_beyond_the_levels_is_missing_input() -> None:
    pod_group = volcano.PodGroup.parse(
        {"metadata": {"name": "j"}, "spec": {"networkTopology": {"mode": "hard", "highestTierAllowed": 5}}}
    )
    with pytest.raises(MissingInputError) as exc:
        q2v.job_to_kueue(_job({}), pod_group, ORDER)
    assert "a level for tier 5" in str(exc.value)


def test_hypernodes_become_a_kueue_topology() -> None:
    def hn(name: str, tier: int, members: list[dict[str, Any]]) -> volcano.HyperNode:
        return volcano.HyperNode.parse(
            {"metadata": {"name": name}, "spec": {"tier": tier, "members": members}}
        )

    made = q2v.topology_from_hypernodes(
        [
            hn("spine-0", 2, [{"type": "HyperNode", "selector": {"exactMatch": {"name": "block-0"}}}]),
            hn("block-0", 1, [{"type": "Node", "selector": {"exactMatch": {"name": "node-0"}}}]),
        ],
        [],
    )
    labels = [level.node_label for level in made.topology.spec.levels]
    assert labels == ["topology.topobridge.io/tier-2", "topology.topobridge.io/tier-1", kueue.HOSTNAME_LABEL]
    assert [(p.node, dict(p.set)) for p in made.node_patches] == [
        ("node-0", {"topology.topobridge.io/tier-1": "block-0", "topology.topobridge.io/tier-2": "spine-0"})
    ]
    order = kueue.LevelOrder.of(made.topology)
    assert order.tier_of("topology.topobridge.io/tier-2") == 2


def _pod(gates: Any) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if gates is not None:
        spec["schedulingGates"] = gates
    return Pod.parse({"metadata": {"name": "p", "namespace": "d"}, "spec": spec})


@pytest.mark.parametrize(
    ("gates", "gated"),
    [
        pytest.param([{"name": "kueue.x-k8s.io/topology"}], True, id="kueue-topology-gate"),
        pytest.param(
            [{"name": "example.com/other"}, {"name": "kueue.x-k8s.io/topology"}], True, id="among-others"
        ),
        pytest.param([{"name": "kueue.x-k8s.io/admission"}], False, id="another-kueue-gate"),
        pytest.param([], False, id="no-gates"),
        pytest.param(None, False, id="no-field"),
    ],
)
def test_a_pod_gated_for_topology_belongs_to_kueue(gates: Any, gated: bool) -> None:
    pod = _pod(copy.deepcopy(gates))
    assert kueue.gated_by_kueue(pod) is gated
