"""LeaderWorkerSet -> per-group Volcano PodGroups: golden objects, resources, topology, subgroups."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from translations import lws as lwsmod
from translations import lws_to_volcano as l2v
from translations.core import Pod
from translations.errors import InvalidSpecError, MissingInputError
from translations.lws import LeaderWorkerSet

JsonDict = dict[str, Any]
NAME, GROUP, WORKER, REV = (
    "leaderworkerset.sigs.k8s.io/name",
    "leaderworkerset.sigs.k8s.io/group-index",
    "leaderworkerset.sigs.k8s.io/worker-index",
    "leaderworkerset.sigs.k8s.io/template-revision-hash",
)
SUBGROUP = "leaderworkerset.sigs.k8s.io/subgroup-index"


def lws(
    name: str = "lws-hard-topology",
    *,
    replicas: int = 2,
    size: int = 4,
    topology: JsonDict | None = None,
    annotations: dict[str, str] | None = None,
    **template: Any,
) -> JsonDict:
    """The seed plan's Example 1 by default (nginx workers, no requests)."""
    body: JsonDict = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {
            "name": name,
            "namespace": "default",
            **({"annotations": annotations} if annotations else {}),
        },
        "spec": {
            "replicas": replicas,
            "leaderWorkerTemplate": {
                "size": size,
                "workerTemplate": {"spec": {"containers": [{"name": "worker", "image": "nginx:latest"}]}},
                **template,
            },
        },
    }
    if topology is not None:
        body["spec"]["networkTopology"] = topology
    return body


def leader(
    lws_name: str,
    group: int,
    revision: str | None = "5d8f7c6b9",
    *,
    uid: str | None = "uid-",
    worker_index: str = "0",
) -> Pod:
    labels = {NAME: lws_name, GROUP: str(group), WORKER: worker_index}
    if revision:
        labels[REV] = revision
    meta: JsonDict = {"name": f"{lws_name}-{group}", "namespace": "default", "labels": labels}
    if uid:
        meta["uid"] = f"{uid}{group}"
    return Pod.parse({"metadata": meta, "spec": {"containers": [{"name": "leader"}]}})


def translate(raw: JsonDict, **kw: Any) -> l2v.LwsPodGroups:
    return l2v.translate(LeaderWorkerSet.parse(raw), **kw)


def spec_of(raw: JsonDict, **kw: Any) -> JsonDict:
    out: JsonDict = translate(raw, revision="r1", **kw).pod_groups[0].to_dict()["spec"]
    return out


# --- golden: the seed plan's examples -----------------------------------------------------------


def test_seed_example_1_hard_topology_gives_one_podgroup_per_group_named_like_lws() -> None:
    result = translate(
        lws(topology={"mode": "hard", "highestTierAllowed": 2}),
        pods=[leader("lws-hard-topology", 0), leader("lws-hard-topology", 1)],
    )
    assert [pg.to_dict() for pg in result.pod_groups] == [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {
                "name": f"lws-hard-topology-{i}-5d8f7c6b9",
                "labels": {NAME: "lws-hard-topology", GROUP: str(i), REV: "5d8f7c6b9"},
                "namespace": "default",
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": f"lws-hard-topology-{i}",
                        "uid": f"uid-{i}",
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"minMember": 4, "networkTopology": {"mode": "hard", "highestTierAllowed": 2}},
        }
        for i in (0, 1)
    ]
    assert (
        "networkTopology = {mode: hard, highestTierAllowed: 2} (spec.networkTopology)"
        in result.report.carried
    )


def test_seed_example_2_soft_topology_with_a_given_revision() -> None:
    result = translate(
        lws("lws-soft-topology", replicas=1, size=8, topology={"mode": "soft", "highestTierAllowed": 1}),
        revision="abc12",
    )
    assert [pg.to_dict() for pg in result.pod_groups] == [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {
                "name": "lws-soft-topology-0-abc12",
                "labels": {NAME: "lws-soft-topology", GROUP: "0", REV: "abc12"},
                "namespace": "default",
            },
            "spec": {"minMember": 8, "networkTopology": {"mode": "soft", "highestTierAllowed": 1}},
        }
    ]
    assert (
        "group 0: no ownerReference (leader pod not given); the PodGroup outlives its group until deleted"
        in result.report.defaulted
    )


# --- topology --------------------------------------------------------------------------------------


def test_unset_mode_is_hard_and_tier_zero_is_kept() -> None:
    result = translate(lws(topology={"highestTierAllowed": 0}), revision="r1")
    assert result.pod_groups[0].to_dict()["spec"]["networkTopology"] == {
        "mode": "hard",
        "highestTierAllowed": 0,
    }
    assert "networkTopology.mode unset: hard, as the LWS+Volcano plan defines it" in result.report.defaulted
    assert "highestTierAllowed 0: every pod of a group on one node" in result.report.carried


def test_tier_name_is_carried_as_volcano_highest_tier_name() -> None:
    assert spec_of(lws(topology={"mode": "soft", "highestTierName": "SpineLayer"}))["networkTopology"] == {
        "mode": "soft",
        "highestTierName": "SpineLayer",
    }


def test_a_topology_shared_between_readers_cannot_be_changed_by_one_of_them() -> None:
    first = lwsmod.topology_request(LeaderWorkerSet.parse(lws(topology={"highestTierAllowed": 2})))[0]
    second = lwsmod.topology_request(LeaderWorkerSet.parse(lws(topology={"highestTierAllowed": 2})))[0]
    assert first.network_topology is second.network_topology  # built once per value
    with pytest.raises(ValidationError, match="frozen"):
        first.network_topology.highest_tier_allowed = 3  # type: ignore[union-attr,misc]
    assert spec_of(lws(topology={"highestTierAllowed": 2}))["networkTopology"] == {
        "mode": "hard",
        "highestTierAllowed": 2,
    }


def test_tier_and_tier_name_together_are_refused() -> None:
    with pytest.raises(InvalidSpecError) as exc:
        translate(lws(topology={"highestTierAllowed": 1, "highestTierName": "x"}), revision="r1")
    assert str(exc.value) == (
        "spec.networkTopology: Forbidden: must not specify 'highestTierAllowed' and "
        "'highestTierName' simultaneously"
    )


def test_volcano_annotations_on_the_lws_give_the_topology() -> None:
    ann = {"volcano.sh/network-topology-mode": "soft", "volcano.sh/network-topology-highest-tier": "1"}
    assert spec_of(lws(annotations=ann))["networkTopology"] == {"mode": "soft", "highestTierAllowed": 1}
    only_tier = {"volcano.sh/network-topology-highest-tier": "0"}
    assert spec_of(lws(annotations=only_tier))["networkTopology"] == {"mode": "hard", "highestTierAllowed": 0}


def test_spec_network_topology_wins_over_annotations_and_says_so() -> None:
    ann = {"volcano.sh/network-topology-mode": "soft"}
    result = translate(
        lws(annotations=ann, topology={"mode": "hard", "highestTierAllowed": 2}), revision="r1"
    )
    assert result.pod_groups[0].to_dict()["spec"]["networkTopology"] == {
        "mode": "hard",
        "highestTierAllowed": 2,
    }
    assert result.report.refused == [
        "topology annotations {mode: soft}: spec.networkTopology takes precedence"
    ]


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        (
            {"volcano.sh/network-topology-mode": "hrad"},
            'metadata.annotations[volcano.sh/network-topology-mode]: Unsupported value: "hrad": '
            "supported values: "
            '"hard", "soft"',
        ),
        (
            {"volcano.sh/network-topology-highest-tier": "-1"},
            'metadata.annotations[volcano.sh/network-topology-highest-tier]: Invalid value: "-1": must be a '
            "non-negative decimal integer",
        ),
        (
            {"volcano.sh/network-topology-highest-tier": "99999999999"},
            "metadata.annotations[volcano.sh/network-topology-highest-tier]: Invalid value: "
            '"99999999999": must be a '
            "non-negative decimal integer",
        ),
    ],
    ids=["bad-mode", "negative-tier", "huge-tier"],
)
def test_bad_topology_annotations_are_refused_naming_the_annotation(
    annotations: dict[str, str], message: str
) -> None:
    with pytest.raises(InvalidSpecError) as exc:
        translate(lws(annotations=annotations), revision="r1")
    assert str(exc.value) == message


# --- gang sizing, resources, queue, priority -----------------------------------------------------------


def test_leader_ready_gangs_only_the_leader() -> None:
    raw = lws()
    raw["spec"]["startupPolicy"] = "LeaderReady"
    result = translate(raw, revision="r1")
    assert result.pod_groups[0].spec.min_member == 1
    assert (
        "minMember = 1: startupPolicy LeaderReady schedules the leader before its workers"
        in result.report.carried
    )


def test_min_resources_are_leader_plus_workers_effective_requests_in_canonical_form() -> None:
    raw = lws(
        size=3,
        leaderTemplate={
            "spec": {
                "containers": [{"name": "l", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
                # An init container larger than the containers decides; the overhead adds on top.
                "initContainers": [
                    {"name": "warm", "resources": {"requests": {"cpu": "2", "memory": "512Mi"}}}
                ],
                "overhead": {"cpu": "100m", "memory": "64Mi"},
            }
        },
    )
    raw["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"] = {
        # No request: the limit stands in. A sidecar (init, restartPolicy Always) adds to the containers.
        "containers": [
            {"name": "w", "resources": {"limits": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "8"}}}
        ],
        "initContainers": [
            {
                "name": "proxy",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}},
            }
        ],
    }
    assert spec_of(raw)["minResources"] == {
        # leader: max(500m, 2) + 100m = 2100m; workers: 2 x (1 + 250m) = 2500m
        "cpu": "4600m",
        # leader: max(1Gi, 512Mi) + 64Mi; workers: 2 x (2Gi + 128Mi) -> 5440Mi
        "memory": "5440Mi",
        "nvidia.com/gpu": "16",
    }


def test_decimal_quantities_stay_decimal() -> None:
    raw = lws(size=3)
    raw["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["resources"] = {
        "requests": {"memory": "1G", "cpu": "1"}
    }
    assert spec_of(raw)["minResources"] == {"cpu": "3", "memory": "3G"}


def test_a_malformed_quantity_is_refused_naming_the_template_field() -> None:
    raw = lws()
    raw["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "lots"}
    }
    with pytest.raises(InvalidSpecError) as exc:
        translate(raw, revision="r1")
    assert (
        exc.value.field_path
        == "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.requests[cpu]"
    )


def test_queue_annotation_and_priority_class_from_the_templates() -> None:
    raw = lws(
        annotations={"scheduling.volcano.sh/queue-name": "training"},
        leaderTemplate={"spec": {"priorityClassName": "high", "containers": [{"name": "l"}]}},
    )
    raw["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["priorityClassName"] = "low"
    result = translate(raw, revision="r1")
    spec = result.pod_groups[0].to_dict()["spec"]
    assert (spec["queue"], spec["priorityClassName"]) == ("training", "high")
    assert result.report.refused == [
        "workerTemplate priorityClassName low: a PodGroup has one priority; it carries the leader's (high)"
    ]


def test_an_invalid_queue_name_is_refused_naming_the_annotation() -> None:
    with pytest.raises(InvalidSpecError) as exc:
        translate(lws(annotations={"scheduling.volcano.sh/queue-name": "Not_A_Queue"}), revision="r1")
    assert exc.value.field_path == "metadata.annotations[scheduling.volcano.sh/queue-name]"
    assert exc.value.value == "Not_A_Queue"


# --- subgroups -----------------------------------------------------------------------------------------


def _subgroup_entry(size: int, count: int, **extra: Any) -> JsonDict:
    return {
        "name": "subgroup",
        "subGroupSize": size,
        "minSubGroups": count,
        "labelSelector": {
            "matchLabels": {NAME: "lws-hard-topology"},
            "matchExpressions": [{"key": SUBGROUP, "operator": "Exists"}],
        },
        "matchLabelKeys": [GROUP, SUBGROUP],
        **extra,
    }


def test_leader_worker_subgroups_key_on_group_and_subgroup_index() -> None:
    raw = lws(
        size=5,
        topology={"mode": "hard", "highestTierAllowed": 2},
        subGroupPolicy={"subGroupSize": 2},
        annotations={"topobridge.io/subgroup-network-topology-highest-tier": "1"},
    )
    result = translate(raw, revision="r1")
    assert result.pod_groups[0].to_dict()["spec"]["subGroupPolicy"] == [
        _subgroup_entry(2, 2, networkTopology={"mode": "hard", "highestTierAllowed": 1})
    ]
    assert (
        "subgroup 0 holds the leader and 2 workers (3 pods); subGroupSize counts 2" in result.report.carried
    )


def test_leader_excluded_and_size_divisible_subgroups() -> None:
    excluded = lws(size=7, subGroupPolicy={"subGroupSize": 3, "subGroupPolicyType": "LeaderExcluded"})
    assert spec_of(excluded)["subGroupPolicy"] == [_subgroup_entry(3, 2)]
    even = lws(size=6, subGroupPolicy={"subGroupSize": 3})
    assert spec_of(even)["subGroupPolicy"] == [_subgroup_entry(3, 2)]


@pytest.mark.parametrize(
    ("size", "policy", "message"),
    [
        (
            4,
            {"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"},
            "size-1 (3) must be divisible by subGroupSize with LeaderExcluded",
        ),
        (5, {"subGroupSize": 3}, "size (5) or size-1 (4) must be divisible by subGroupSize"),
        (2, {"subGroupSize": 3}, "must not be larger than size (2)"),
    ],
    ids=["leader-excluded-indivisible", "indivisible", "larger-than-size"],
)
def test_subgroup_sizes_lws_itself_rejects(size: int, policy: JsonDict, message: str) -> None:
    with pytest.raises(InvalidSpecError) as exc:
        translate(lws(size=size, subGroupPolicy=policy), revision="r1")
    assert exc.value.field_path == "spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize"
    assert exc.value.detail.endswith(message)


def test_a_subgroup_wider_than_its_group_is_refused() -> None:
    raw = lws(
        size=5,
        topology={"highestTierAllowed": 1},
        subGroupPolicy={"subGroupSize": 2},
        annotations={"topobridge.io/subgroup-network-topology-highest-tier": "2"},
    )
    with pytest.raises(InvalidSpecError) as exc:
        translate(raw, revision="r1")
    assert "a subgroup may not span a wider tier than its group (1)" in str(exc.value)


def test_a_subgroup_topology_without_subgroups_is_refused() -> None:
    with pytest.raises(InvalidSpecError) as exc:
        translate(lws(annotations={"topobridge.io/subgroup-network-topology-mode": "hard"}), revision="r1")
    assert exc.value.field_path == "metadata.annotations[topobridge.io/subgroup-network-topology-mode]"


def test_leader_ready_subgroups_require_no_subgroup_up_front() -> None:
    raw = lws(size=5, subGroupPolicy={"subGroupSize": 2})
    raw["spec"]["startupPolicy"] = "LeaderReady"
    assert "minSubGroups" not in spec_of(raw)["subGroupPolicy"][0]


# --- which groups, which revision ------------------------------------------------------------------------


def test_only_leader_pods_of_this_lws_count() -> None:
    pods = [
        leader("lws-hard-topology", 0),
        leader("lws-hard-topology", 0, worker_index="1"),
        leader("other", 1),
        leader("lws-hard-topology", 1, revision="newrev"),
    ]
    result = translate(lws(), pods=pods)
    assert [pg.name for pg in result.pod_groups] == [
        "lws-hard-topology-0-5d8f7c6b9",
        "lws-hard-topology-1-newrev",
    ]


def test_without_leader_pods_or_a_revision_the_missing_input_is_named() -> None:
    with pytest.raises(MissingInputError) as exc:
        translate(lws())
    assert "--revision HASH" in str(exc.value)
    assert exc.value.needed == "the leaderworkerset.sigs.k8s.io/template-revision-hash of its leader pods"


def test_a_leader_without_its_revision_label_is_named() -> None:
    with pytest.raises(MissingInputError) as exc:
        translate(lws(), pods=[leader("lws-hard-topology", 0, revision=None)])
    assert str(exc.value).startswith(
        "LeaderWorkerSet default/lws-hard-topology group 0: needs the "
        "leaderworkerset.sigs.k8s.io/template-revision-hash label of leader pod"
    )


def test_groups_whose_leader_is_missing_are_reported_not_invented() -> None:
    result = translate(lws(replicas=3), pods=[leader("lws-hard-topology", 0, uid=None)])
    assert [pg.name for pg in result.pod_groups] == ["lws-hard-topology-0-5d8f7c6b9"]
    assert "groups 1, 2: no leader pod in the input yet, so no PodGroup" in result.report.refused
    assert (
        "group 0: no ownerReference (leader pod has no uid); the PodGroup outlives its group until deleted"
        in result.report.defaulted
    )


def test_zero_replicas_make_no_podgroups() -> None:
    result = translate(lws(replicas=0), revision="r1")
    assert result.pod_groups == ()
    assert "spec.replicas = 0: no groups, no PodGroups" in result.report.carried


def test_translate_leader_is_one_group() -> None:
    pg, _ = l2v.translate_leader(LeaderWorkerSet.parse(lws(replicas=4)), leader("lws-hard-topology", 3))
    assert pg.name == "lws-hard-topology-3-5d8f7c6b9"
    with pytest.raises(MissingInputError):
        l2v.translate_leader(LeaderWorkerSet.parse(lws()), leader("other", 0))


def test_a_malformed_group_index_is_refused_naming_the_pod() -> None:
    pod = leader("lws-hard-topology", 0)
    raw = copy.deepcopy(pod.to_dict())
    raw["metadata"]["labels"][GROUP] = "zero"
    with pytest.raises(InvalidSpecError) as exc:
        translate(lws(), pods=[Pod.parse(raw)])
    assert exc.value.field_path == f"Pod default/lws-hard-topology-0: metadata.labels[{GROUP}]"
