"""Koordinator gangs -> Volcano PodGroups: the seed PodGroups, GangGroups, podCountMultiple,
annotation-only gangs, and every refusal naming its field."""

from __future__ import annotations

from typing import Any

import pytest
from translation_seeds import (
    cnt,
    gather,
    member_pod,
    parse_pods,
    seed_member_pods,
    seed_pod_groups,
    sigs_pod_group,
)

from translations import hypernodes as hn
from translations import koordinator as koord
from translations import koordinator_to_volcano as k2v
from translations.core import Pod
from translations.errors import InvalidSpecError, MissingInputError, NotExpressibleError
from translations.schedplugins import XPodGroup

JsonDict = dict[str, Any]
SPEC = koord.NETWORK_TOPOLOGY_SPEC
GROUP_NAME = "scheduling.k8s.io/group-name"


def volcano_pg(name: str, spec: JsonDict) -> JsonDict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def run(pod_groups: list[JsonDict], pods: list[JsonDict] = (), **kw: Any) -> list[k2v.VolcanoGang]:  # type: ignore[assignment]
    return k2v.translate_all(
        [koord.SigsPodGroup.parse(pg) for pg in pod_groups], parse_pods(list(pods)), **kw
    )


def by_name(results: list[k2v.VolcanoGang]) -> dict[str, k2v.VolcanoGang]:
    return {r.pod_group.name: r for r in results}


# --- golden: the seed PodGroups ------------------------------------------------------------------


def test_seed_pod_groups_give_the_expected_volcano_pod_groups() -> None:
    results = by_name(run(seed_pod_groups(), seed_member_pods(), cnt=cnt()))
    assert {name: r.pod_group.to_dict() for name, r in results.items()} == {
        # Example 1: PreferGather BlockLayer + SpineLayer -> soft up to the spine (tier 2).
        "topology-demo-job": volcano_pg(
            "topology-demo-job",
            {"minMember": 4, "networkTopology": {"mode": "soft", "highestTierAllowed": 2}},
        ),
        # Example 2: MustGather SpineLayer -> hard at tier 2; priority from the member pods.
        "high-priority-training": volcano_pg(
            "high-priority-training",
            {
                "minMember": 4,
                "priorityClassName": "high-priority",
                "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            },
        ),
        # Job-level preemption guide: a plain gang of two.
        "hp-training-job": volcano_pg(
            "hp-training-job", {"minMember": 2, "priorityClassName": "high-priority"}
        ),
    }
    for r in results.values():
        assert r.report.refused == ["scheduleTimeoutSeconds 300: Volcano PodGroups have no gang timeout"]


def test_seed_member_pods_are_patched_to_join_their_volcano_pod_group() -> None:
    results = by_name(run(seed_pod_groups(), seed_member_pods(), cnt=cnt()))
    patches = results["high-priority-training"].pod_patches
    assert [(p.name, p.merge_patch()) for p in patches] == [
        (
            f"hp-training-pod-{i}",
            {
                "metadata": {"annotations": {GROUP_NAME: "high-priority-training"}},
                "spec": {"schedulerName": "volcano"},
            },
        )
        for i in range(4)
    ]
    patched = patches[0].apply(member_pod("hp-training-pod-0", "high-priority-training", index=0))
    assert patched["metadata"]["annotations"] == {
        koord.NETWORK_TOPOLOGY_INDEX: "0",
        GROUP_NAME: "high-priority-training",
    }
    assert patched["spec"]["schedulerName"] == "volcano"
    assert patched["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "8", "memory": "32Gi"}


def test_layers_can_come_from_hypernode_tier_names_instead_of_the_cluster_network_topology() -> None:
    from translation_seeds import parse_nodes, seed_nodes

    nodes = parse_nodes(seed_nodes())
    tree = hn.from_cluster_network_topology(cnt(), nodes).tree
    results = by_name(run(seed_pod_groups(), tree=tree))
    assert results["high-priority-training"].pod_group.to_dict()["spec"]["networkTopology"] == {
        "mode": "hard",
        "highestTierAllowed": 2,
    }


def test_without_layers_one_named_layer_becomes_a_tier_name_and_two_need_the_chain() -> None:
    must = run([seed_pod_groups()[1]])[0]
    assert must.pod_group.to_dict()["spec"]["networkTopology"] == {
        "mode": "hard",
        "highestTierName": "SpineLayer",
    }
    assert (
        "networkTopology = {mode: hard, highestTierName: SpineLayer}: no "
        "ClusterNetworkTopology given, "
        "so the layer is named, not numbered" in must.report.defaulted
    )
    with pytest.raises(MissingInputError) as exc:
        run([seed_pod_groups()[0]])
    assert "layers BlockLayer, SpineLayer can only be ordered by the cluster's layer chain" in str(exc.value)
    node_layer = run([sigs_pod_group("one-node", 2, {SPEC: gather(("NodeTopologyLayer", "MustGather"))})])[0]
    assert node_layer.pod_group.to_dict()["spec"]["networkTopology"] == {
        "mode": "hard",
        "highestTierAllowed": 0,
    }


def test_must_gather_with_prefer_gather_keeps_the_hard_tier_and_reports_the_preference() -> None:
    pg = sigs_pod_group(
        "mixed", 4, {SPEC: gather(("BlockLayer", "PreferGather"), ("SpineLayer", "MustGather"))}
    )
    result = run([pg], cnt=cnt())[0]
    assert result.pod_group.to_dict()["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
    assert result.report.refused == [
        "PreferGather BlockLayer (tier 1): Volcano holds one constraint per job; the hard tier 2 of "
        "the MustGather "
        "layer is kept"
    ]


def test_the_deepest_must_gather_layer_decides() -> None:
    pg = sigs_pod_group(
        "two-musts", 4, {SPEC: gather(("SpineLayer", "MustGather"), ("BlockLayer", "MustGather"))}
    )
    assert run([pg], cnt=cnt())[0].pod_group.to_dict()["spec"]["networkTopology"] == {
        "mode": "hard",
        "highestTierAllowed": 1,
    }


def test_an_unknown_layer_is_refused_naming_the_rule() -> None:
    pg = sigs_pod_group("typo", 4, {SPEC: gather(("SpinLayer", "MustGather"))})
    with pytest.raises(InvalidSpecError) as exc:
        run([pg], cnt=cnt())
    assert (
        exc.value.field_path == f"PodGroup default/typo: metadata.annotations[{SPEC}].gatherStrategy[0].layer"
    )
    assert exc.value.detail.startswith('Not found: "SpinLayer"')


def test_a_malformed_annotation_is_refused_naming_the_pod_group() -> None:
    with pytest.raises(InvalidSpecError) as exc:
        run([sigs_pod_group("bad", 4, {SPEC: "{not json"})])
    assert exc.value.field_path == f"PodGroup default/bad: metadata.annotations[{SPEC}]"


def test_koordinator_only_knobs_are_refused_in_the_report() -> None:
    pg = sigs_pod_group(
        "knobs",
        2,
        {
            koord.GANG_MODE: "NonStrict",
            koord.GANG_WAITING_TIME: "60s",
            koord.GANG_MATCH_POLICY: "only-waiting",
            koord.GANG_TOTAL_NUMBER: "3",
        },
    )
    assert run([pg])[0].report.refused == [
        "gang.scheduling.koordinator.sh/waiting-time: Volcano PodGroups have no gang timeout",
        "gang.scheduling.koordinator.sh/mode NonStrict: Volcano always retries the whole gang (Strict)",
        "gang.scheduling.koordinator.sh/match-policy only-waiting: no Volcano equivalent",
        "gang.scheduling.koordinator.sh/total-number 3: Volcano counts members by their annotation",
    ]


def test_a_negative_min_resource_is_refused_by_field_not_written_to_be_denied() -> None:
    """A Koordinator PodGroup may be stored with a negative minResources (its CRD has no
    minimum); Volcano's admission refuses one. The translation refuses it by field and value
    (the reconciler reports that on the source) instead of writing a PodGroup to be denied
    (found by the live fuzzer: the reconciler retried a denied write with a traceback)."""
    pg = sigs_pod_group("res", 2, minResources={"cpu": "1", "example.com/widget": "-1"})
    with pytest.raises(InvalidSpecError) as got:
        run([pg])
    assert "spec.minResources[example.com/widget]" in str(got.value)
    assert "-1" in str(got.value)


def test_min_resources_are_carried_in_canonical_form() -> None:
    pg = sigs_pod_group("res", 2, minResources={"cpu": "16000m", "memory": "64Gi", "nvidia.com/gpu": 16})
    assert run([pg])[0].pod_group.to_dict()["spec"]["minResources"] == {
        "cpu": "16",
        "memory": "64Gi",
        "nvidia.com/gpu": "16",
    }


def test_scheduler_plugins_pod_groups_use_their_own_member_label() -> None:
    x = XPodGroup.parse(
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "xg", "namespace": "default"},
            "spec": {"minMember": 1},
        }
    )
    pods = parse_pods(
        [member_pod("x-0", "xg", label_key="scheduling.x-k8s.io/pod-group"), member_pod("s-0", "xg")]
    )
    result = k2v.translate_all([x], pods)[0]
    assert [p.name for p in result.pod_patches] == ["x-0"]


# --- GangGroups -------------------------------------------------------------------------------------


def gang_group(
    *members: tuple[str, int], spec: str | None = None, namespace: str = "default"
) -> list[JsonDict]:
    ids = [f"{namespace}/{name}" for name, _ in members]
    out = []
    for name, minimum in members:
        annotations = {koord.GANG_GROUPS: str(ids).replace("'", '"')}
        if spec:
            annotations[SPEC] = spec
        pg = sigs_pod_group(name, minimum, annotations)
        pg["metadata"]["namespace"] = namespace
        out.append(pg)
    return out


def test_a_gang_group_becomes_one_pod_group_with_a_subgroup_per_member() -> None:
    groups = gang_group(("llm-master", 1), ("llm-worker", 4), spec=gather(("SpineLayer", "MustGather")))
    groups[0]["spec"]["minResources"] = {"cpu": "4"}
    groups[1]["spec"]["minResources"] = {"cpu": "32", "memory": "128Gi"}
    pods = [
        member_pod("master-0", "llm-master"),
        *(member_pod(f"worker-{i}", "llm-worker") for i in range(4)),
    ]
    results = run(groups, pods, cnt=cnt())
    assert len(results) == 1
    assert results[0].pod_group.to_dict() == volcano_pg(
        "llm-master-ganggroup",
        {
            "minMember": 5,
            "minResources": {"cpu": "36", "memory": "128Gi"},
            "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            "subGroupPolicy": [
                {
                    "name": "llm-master",
                    "labelSelector": {"matchLabels": {koord.SIGS_POD_GROUP_LABEL: "llm-master"}},
                    "matchLabelKeys": [koord.SIGS_POD_GROUP_LABEL],
                    "minSubGroups": 1,
                    "subGroupSize": 1,
                },
                {
                    "name": "llm-worker",
                    "labelSelector": {"matchLabels": {koord.SIGS_POD_GROUP_LABEL: "llm-worker"}},
                    "matchLabelKeys": [koord.SIGS_POD_GROUP_LABEL],
                    "minSubGroups": 1,
                    "subGroupSize": 4,
                },
            ],
        },
    )
    assert {p.name: p.annotations[GROUP_NAME] for p in results[0].pod_patches} == {
        n: "llm-master-ganggroup" for n in ("master-0", "worker-0", "worker-1", "worker-2", "worker-3")
    }
    assert results[0].sources == ("default/llm-master", "default/llm-worker")
    assert "minMember = 5 (llm-master 1 + llm-worker 4)" in results[0].report.carried


def test_a_gang_group_needs_every_member() -> None:
    with pytest.raises(MissingInputError) as exc:
        run(gang_group(("a", 1), ("b", 1))[:1])
    assert exc.value.needed == "member default/b"


def test_gang_group_members_must_agree_on_their_topology() -> None:
    groups = gang_group(("a", 1), ("b", 1), spec=gather(("SpineLayer", "MustGather")))
    groups[1]["metadata"]["annotations"][SPEC] = gather(("BlockLayer", "MustGather"))
    with pytest.raises(InvalidSpecError) as exc:
        run(groups, cnt=cnt())
    assert exc.value.field_path == f"PodGroup default/b: metadata.annotations[{SPEC}]"


def test_a_gang_group_across_namespaces_is_not_expressible() -> None:
    a = gang_group(("a", 1), ("b", 1))
    a[1]["metadata"]["namespace"] = "other"
    ids = '["default/a", "other/b"]'
    for pg in a:
        pg["metadata"]["annotations"][koord.GANG_GROUPS] = ids
    with pytest.raises(NotExpressibleError) as exc:
        run(a)
    assert "members span namespaces default, other" in str(exc.value)


def test_pod_count_multiple_on_a_gang_group_is_not_expressible() -> None:
    groups = gang_group(("a", 2), ("b", 2), spec=gather(("BlockLayer", "PreferGather", 2)))
    with pytest.raises(NotExpressibleError) as exc:
        run(groups, cnt=cnt())
    assert exc.value.target == "Volcano"


# --- podCountMultiple ------------------------------------------------------------------------------


def tp_job(
    n: int = 4, rules: str | None = None, *, indexes: list[int | None] | None = None
) -> tuple[JsonDict, list[JsonDict]]:
    spec = rules or gather(("BlockLayer", "PreferGather", 2), ("SpineLayer", "MustGather"))
    pg = sigs_pod_group("tp", n, {SPEC: spec})
    idx = indexes if indexes is not None else list(range(n))
    return pg, [member_pod(f"tp-{i}", "tp", index=ix) for i, ix in enumerate(idx)]


def test_pod_count_multiple_becomes_hard_subgroups_of_n_labelled_by_rank() -> None:
    pg, pods = tp_job()
    result = run([pg], pods, cnt=cnt())[0]
    assert result.pod_group.to_dict()["spec"] == {
        "minMember": 4,
        "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
        "subGroupPolicy": [
            {
                "name": "pod-count-multiple",
                "subGroupSize": 2,
                "labelSelector": {
                    "matchExpressions": [{"key": k2v.SUBGROUP_INDEX_LABEL, "operator": "Exists"}]
                },
                "matchLabelKeys": [k2v.SUBGROUP_INDEX_LABEL],
                "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                "minSubGroups": 2,
            }
        ],
    }
    assert [dict(p.labels) for p in result.pod_patches] == [{k2v.SUBGROUP_INDEX_LABEL: s} for s in "0011"]


def test_pod_count_multiple_at_or_above_the_hard_layer_is_implied() -> None:
    pg, pods = tp_job(rules=gather(("BlockLayer", "MustGather"), ("SpineLayer", "PreferGather", 2)))
    result = run([pg], pods, cnt=cnt())[0]
    assert "subGroupPolicy" not in result.pod_group.to_dict()["spec"]
    assert any("implied" in line for line in result.report.carried)


@pytest.mark.parametrize(
    ("n", "rules", "indexes", "phrase"),
    [
        (
            4,
            gather(("BlockLayer", "PreferGather", 2), ("SpineLayer", "PreferGather", 4)),
            None,
            "podCountMultiple on 2 layers (BlockLayer, SpineLayer)",
        ),
        (5, gather(("BlockLayer", "PreferGather", 2)), None, "minMember 5 is not a multiple of 2"),
        (4, None, [0, 1, 2, None], "podCountMultiple needs every member's rank"),
        (4, None, [0, 1, 2, 4], "ranks // 2 must give groups of exactly 2 pods; got {1: 1, 2: 1}"),
    ],
    ids=["two-layers", "min-member-not-a-multiple", "pod-without-rank", "uneven-ranks"],
)
def test_pod_count_multiple_volcano_cannot_hold_is_a_typed_error(
    n: int, rules: str | None, indexes: list[int | None] | None, phrase: str
) -> None:
    pg, pods = tp_job(n, rules, indexes=indexes)
    with pytest.raises(NotExpressibleError) as exc:
        run([pg], pods, cnt=cnt())
    assert phrase in str(exc.value)
    assert exc.value.target == "Volcano"


def test_subgroup_index_for_a_single_pod_at_admission() -> None:
    pod = Pod.parse(member_pod("tp-5", "tp", index=5))
    assert k2v.subgroup_index(pod, 4) == "1"


# --- gangs declared on pods alone --------------------------------------------------------------------


def annotated_pod(name: str, gang: str, **annotations: str) -> JsonDict:
    pod = member_pod(name, gang)
    pod["metadata"]["labels"] = {}
    pod["metadata"]["annotations"] = {koord.GANG_NAME: gang, **annotations}
    return pod


def test_annotation_only_gangs_become_pod_groups_named_after_the_gang() -> None:
    pods = [
        annotated_pod(
            f"a-{i}", "ann", **{koord.GANG_MIN_AVAILABLE: "2", SPEC: gather(("BlockLayer", "MustGather"))}
        )
        for i in range(2)
    ]
    result = run([], pods, cnt=cnt())[0]
    assert result.pod_group.to_dict() == volcano_pg(
        "ann", {"minMember": 2, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
    )
    assert [p.name for p in result.pod_patches] == ["a-0", "a-1"]


def test_annotation_gangs_need_min_available_and_agreeing_pods() -> None:
    with pytest.raises(InvalidSpecError) as exc:
        run([], [annotated_pod("a-0", "ann")])
    assert "has no min-available" in str(exc.value)
    pods = [
        annotated_pod("a-0", "ann", **{koord.GANG_MIN_AVAILABLE: "2"}),
        annotated_pod("a-1", "ann", **{koord.GANG_MIN_AVAILABLE: "3"}),
    ]
    with pytest.raises(InvalidSpecError) as exc:
        run([], pods)
    assert exc.value.field_path == f"Pod default/a-1: metadata.annotations[{koord.GANG_MIN_AVAILABLE}]"


def test_annotation_gangs_in_a_gang_group_are_selected_by_a_label_the_patch_adds() -> None:
    groups = '["default/m", "default/w"]'
    pods = [
        annotated_pod("m-0", "m", **{koord.GANG_MIN_AVAILABLE: "1", koord.GANG_GROUPS: groups}),
        annotated_pod("w-0", "w", **{koord.GANG_MIN_AVAILABLE: "1", koord.GANG_GROUPS: groups}),
    ]
    result = run([], pods)[0]
    assert result.pod_group.name == "m-ganggroup"
    assert [s["labelSelector"] for s in result.pod_group.to_dict()["spec"]["subGroupPolicy"]] == [
        {"matchLabels": {k2v.GANG_LABEL: "m"}},
        {"matchLabels": {k2v.GANG_LABEL: "w"}},
    ]
    assert [dict(p.labels) for p in result.pod_patches] == [{k2v.GANG_LABEL: "m"}, {k2v.GANG_LABEL: "w"}]


def test_gang_group_names_are_stable_and_bounded() -> None:
    assert k2v.gang_group_name(["ns/b", "ns/a"]) == "a-ganggroup"
    long = k2v.gang_group_name([f"ns/{'x' * 250}", "ns/y"])
    assert len(long) <= 253 and long.startswith("x") and "-ganggroup-" in long
