"""Kubernetes' own gang API in `translate`: dialect -> upstream -> dialect round trips on the
upstream example objects, every drop named (and `--strict` failing on it), and the version
each `--kubernetes-version` writes.

The upstream example is KEP-5732's (one gang PodGroup made from a Workload template, with a
topology key), on the 12-node spine/block cluster of Koordinator's guide
(`translation_seeds`), whose ClusterNetworkTopology maps BlockLayer/SpineLayer to the node
labels that make tiers 1 and 2.
"""

from __future__ import annotations

import copy
import io
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from translation_seeds import BLOCK_KEY, SPINE_KEY, gather, member_pod, seed_cnt, seed_nodes, sigs_pod_group

from tests.strategies import objects as gen
from topobridge import cmd_translate
from topobridge.cmd_translate import translate_objects
from translations import koordinator as koord
from translations import volcano

K8S = "scheduling.k8s.io"


def upstream_pod_group(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{K8S}/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "train-0", "namespace": "default"},
        "spec": {
            "workloadRef": {"workloadName": "train", "templateName": "workers"},
            "schedulingPolicy": {"gang": {"minCount": 4}},
            "schedulingConstraints": {"topology": [{"key": BLOCK_KEY}]},
            "priorityClassName": "high",
            "disruptionMode": {"all": {}},
            "preemptionPolicy": "Never",
            **spec,
        },
    }


def upstream_pod(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"train-0-{i}", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x"}], "schedulingGroup": {"podGroupName": "train-0"}},
    }


def context() -> list[dict[str, Any]]:
    return [*seed_nodes(), seed_cnt()]


def of_kind(objects: list[dict[str, Any]], api_version: str, kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("apiVersion") == api_version and o.get("kind") == kind]


def refused(lines: list[str]) -> list[str]:
    return [line.split(": refused: ", 1)[1] for line in lines if ": refused: " in line]


def test_upstream_to_volcano_and_back() -> None:
    pods = [upstream_pod(i) for i in range(4)]
    there = translate_objects([*context(), upstream_pod_group(), *pods], to="volcano")
    assert there.errors == []
    (pg,) = of_kind(there.objects, volcano.PODGROUP_API_VERSION, "PodGroup")
    assert pg["spec"] == {
        "minMember": 4,
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        "priorityClassName": "high",
    }
    assert refused(there.report_lines) == [
        "spec.preemptionPolicy: Volcano has no such field",
        "spec.disruptionMode: Volcano has no such field",
        "spec.workloadRef (the template link): Volcano has no such field",
    ]
    members = of_kind(there.objects, "v1", "Pod")
    assert [p["metadata"]["annotations"] for p in members] == [{volcano.GROUP_NAME_ANNOTATION: "train-0"}] * 4

    back = translate_objects([*context(), pg, *members], to="upstream")
    assert back.errors == [] and refused(back.report_lines) == []
    (again,) = of_kind(back.objects, f"{K8S}/v1beta1", "PodGroup")
    dropped = ("workloadRef", "disruptionMode", "preemptionPolicy")
    assert again["spec"] == {k: v for k, v in upstream_pod_group()["spec"].items() if k not in dropped}
    assert [p["spec"]["schedulingGroup"] for p in of_kind(back.objects, "v1", "Pod")] == [
        {"podGroupName": "train-0"}
    ] * 4
    assert all("annotations" not in p["metadata"] for p in of_kind(back.objects, "v1", "Pod"))


def test_volcano_to_upstream_and_back_names_soft_mode_and_queue() -> None:
    soft = {
        "apiVersion": volcano.PODGROUP_API_VERSION,
        "kind": "PodGroup",
        "metadata": {"name": "soft", "namespace": "default"},
        "spec": {
            "minMember": 2,
            "queue": "research",
            "networkTopology": {"mode": "soft", "highestTierAllowed": 2},
        },
    }
    hard = copy.deepcopy(soft) | {"metadata": {"name": "hard", "namespace": "default"}}
    hard["spec"] = {"minMember": 3, "networkTopology": {"mode": "hard", "highestTierAllowed": 2}}
    there = translate_objects([*context(), soft, hard], to="upstream")
    assert there.errors == []
    assert refused(there.report_lines) == [
        "spec.networkTopology: soft mode (upstream's topology is required only): no topology constraint",
        "spec.queue: upstream has no such field",
    ]
    by_name = {o["metadata"]["name"]: o for o in of_kind(there.objects, f"{K8S}/v1beta1", "PodGroup")}
    assert by_name["hard"]["spec"]["schedulingConstraints"] == {"topology": [{"key": SPINE_KEY}]}
    assert "schedulingConstraints" not in by_name["soft"]["spec"]
    back = translate_objects([*context(), *by_name.values()], to="volcano")
    got = {
        o["metadata"]["name"]: o["spec"]
        for o in of_kind(back.objects, volcano.PODGROUP_API_VERSION, "PodGroup")
    }
    assert got == {"hard": hard["spec"], "soft": {"minMember": 2}}


def test_koordinator_to_upstream_and_back() -> None:
    group = sigs_pod_group(
        "high-priority-training",
        4,
        {koord.NETWORK_TOPOLOGY_SPEC: gather(("SpineLayer", "MustGather"))},
        scheduleTimeoutSeconds=300,
    )
    pods = [member_pod(f"hp-training-pod-{i}", "high-priority-training", index=i) for i in range(4)]
    there = translate_objects([*context(), group, *pods], to="upstream")
    assert there.errors == []
    (pg,) = of_kind(there.objects, f"{K8S}/v1beta1", "PodGroup")
    assert pg["spec"] == {
        "schedulingPolicy": {"gang": {"minCount": 4}},
        "schedulingConstraints": {"topology": [{"key": SPINE_KEY}]},
    }
    assert any("scheduleTimeoutSeconds" in r for r in refused(there.report_lines))
    members = of_kind(there.objects, "v1", "Pod")
    assert [p["spec"]["schedulingGroup"]["podGroupName"] for p in members] == ["high-priority-training"] * 4

    back = translate_objects([*context(), pg, *members], to="koordinator")
    assert back.errors == []
    (sigs,) = of_kind(back.objects, f"{koord.SIGS_GROUP}/v1alpha1", "PodGroup")
    assert sigs["spec"]["minMember"] == 4
    spec = json.loads(sigs["metadata"]["annotations"][koord.NETWORK_TOPOLOGY_SPEC])
    assert spec == {"gatherStrategy": [{"layer": "SpineLayer", "strategy": "MustGather"}]}


def kueue_job() -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "sim", "namespace": "default"},
        "spec": {
            "parallelism": 4,
            "completions": 4,
            "template": {
                "metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": BLOCK_KEY}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]},
            },
        },
    }


def kueue_topology() -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Topology",
        "metadata": {"name": "default"},
        "spec": {
            "levels": [
                {"nodeLabel": SPINE_KEY},
                {"nodeLabel": BLOCK_KEY},
                {"nodeLabel": "kubernetes.io/hostname"},
            ]
        },
    }


def test_kueue_job_to_upstream_and_back() -> None:
    there = translate_objects([*seed_nodes(), kueue_topology(), kueue_job()], to="upstream")
    assert there.errors == []
    (pg,) = of_kind(there.objects, f"{K8S}/v1beta1", "PodGroup")
    assert pg["spec"]["schedulingConstraints"] == {"topology": [{"key": BLOCK_KEY}]}
    assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    (job,) = of_kind(there.objects, "batch/v1", "Job")
    assert job["spec"]["template"]["spec"]["schedulingGroup"] == {"podGroupName": pg["metadata"]["name"]}

    back = translate_objects([*seed_nodes(), kueue_topology(), pg, job], to="kueue")
    assert back.errors == []
    (kjob,) = of_kind(back.objects, "batch/v1", "Job")
    annotations = kjob["spec"]["template"]["metadata"]["annotations"]
    assert annotations["kueue.x-k8s.io/podset-required-topology"] == BLOCK_KEY


def lws(topology: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "llm", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "networkTopology": topology,
            "leaderWorkerTemplate": {
                "size": 4,
                "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "x"}]}},
            },
        },
    }


def test_lws_to_upstream_one_pod_group_per_group() -> None:
    """LWS -> upstream (there is no `--to lws`: the round trip ends at the PodGroup)."""
    there = translate_objects(
        [*context(), lws({"mode": "hard", "highestTierAllowed": 1})], to="upstream", revision="abc"
    )
    assert there.errors == []
    (pg,) = of_kind(there.objects, f"{K8S}/v1beta1", "PodGroup")
    assert pg["spec"] == {
        "schedulingPolicy": {"gang": {"minCount": 4}},
        "schedulingConstraints": {"topology": [{"key": BLOCK_KEY}]},
    }


@pytest.mark.parametrize(
    ("release", "api_version", "kind"),
    [("1.35", "v1alpha1", "Workload"), ("1.36", "v1alpha2", "PodGroup"), ("1.37", "v1beta1", "PodGroup")],
)
def test_kubernetes_version_picks_the_api_version(release: str, api_version: str, kind: str) -> None:
    there = translate_objects([*context(), upstream_pod_group(), upstream_pod(0)], to="volcano")
    pg = of_kind(there.objects, volcano.PODGROUP_API_VERSION, "PodGroup")
    pod = of_kind(there.objects, "v1", "Pod")
    out = translate_objects([*context(), *pg, *pod], to="upstream", kubernetes_version=release)
    (made,) = of_kind(out.objects, f"{K8S}/{api_version}", kind)
    (member,) = of_kind(out.objects, "v1", "Pod")
    if release == "1.35":
        assert made["spec"] == {"podGroups": [{"name": "group", "policy": {"gang": {"minCount": 4}}}]}
        assert member["spec"]["workloadRef"] == {"name": "train-0", "podGroup": "group"}
        assert refused(out.report_lines) == [
            "spec.networkTopology: Kubernetes 1.35 has no topology constraint",
            "spec.priorityClassName: a 1.35 Workload has no priority",
        ]
    else:
        assert made["spec"]["schedulingConstraints"] == {"topology": [{"key": BLOCK_KEY}]}
        assert member["spec"]["schedulingGroup"] == {"podGroupName": "train-0"}


def test_strict_fails_on_any_drop(tmp_path: Any) -> None:
    path = tmp_path / "in.json"
    path.write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [*context(), upstream_pod_group()]})
    )
    out, err = io.StringIO(), io.StringIO()
    options = cmd_translate.TranslateOptions(to="volcano", strict=True)
    assert cmd_translate.run([str(path)], options, out=out, err=err) == cmd_translate.EXIT_UNTRANSLATABLE
    assert out.getvalue() == ""
    assert "error: --strict: 3 field(s) not carried" in err.getvalue()


def test_a_key_the_topology_has_no_tier_for_is_an_error() -> None:
    bad = upstream_pod_group(schedulingConstraints={"topology": [{"key": "example.com/pod"}]})
    out = translate_objects([*context(), bad], to="volcano")
    assert out.objects == [] or not of_kind(out.objects, volcano.PODGROUP_API_VERSION, "PodGroup")
    (error,) = out.errors
    assert error.startswith("PodGroup default/train-0: spec.schedulingConstraints.topology[0].key")
    assert "not expressible in Volcano" in error


def test_invalid_upstream_objects_are_refused_as_the_api_server_would() -> None:
    bad = upstream_pod_group(schedulingPolicy={"gang": {"minCount": 0}})
    out = translate_objects([bad], to="volcano")
    assert out.errors == ["PodGroup default/train-0: spec.schedulingPolicy.gang.minCount: Required value"]


def test_a_composite_pod_group_is_named_as_not_carried() -> None:
    composite = {
        "apiVersion": f"{K8S}/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": "replicas", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}},
    }
    out = translate_objects([composite], to="volcano")
    assert out.errors == [] and out.refused == 1
    assert "CompositePodGroup" in refused(out.report_lines)[0]


HOSTILE = st.lists(
    st.one_of(gen.upstream_podgroups(), gen.upstream_workloads(), gen.upstream_composite_podgroups()),
    max_size=3,
)


@settings(
    max_examples=40, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(HOSTILE, st.sampled_from([*cmd_translate.TARGETS]), st.sampled_from(cmd_translate.KUBERNETES_VERSIONS))
def test_hostile_upstream_objects_never_raise(objects: list[dict[str, Any]], to: str, release: str) -> None:
    """Whatever a tenant writes, `translate` answers with objects or error lines naming them."""
    out = translate_objects([*context(), *objects], to=to, kubernetes_version=release)
    for error in out.errors:
        assert error.split(":", 1)[0].split(" ", 1)[0] in ("Workload", "PodGroup", "CompositePodGroup"), error
