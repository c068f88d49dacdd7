"""Jobs as users write them -> the pods (and PodGroups) their controllers would create: names,
labels, annotations, indexes and owners per kind, what the input already holds, and bad input."""

from __future__ import annotations

import copy
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from translations import expand as ex
from translations.core import Job, Pod
from translations.errors import InvalidSpecError
from translations.lws import LeaderWorkerSet
from translations.volcano_job import VolcanoJob

JsonDict = dict[str, Any]
FIXTURES = Path(__file__).resolve().parent / "expand_fixtures"
LWS = "leaderworkerset.sigs.k8s.io/"
GROUP_NAME = "scheduling.k8s.io/group-name"
INDEX = "batch.kubernetes.io/job-completion-index"


def fixture(name: str) -> JsonDict:
    loaded = yaml.safe_load((FIXTURES / name).read_text())
    assert isinstance(loaded, dict)
    return loaded


def by_name(expansion: ex.Expansion) -> dict[str, JsonDict]:
    return {p["metadata"]["name"]: p for p in expansion.pods}


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def multi(**changes: Any) -> LeaderWorkerSet:
    raw = fixture("lws-multi-template-subgroups.yaml")
    raw["spec"]["leaderWorkerTemplate"].update(changes)
    return LeaderWorkerSet.parse(raw)


# --- LeaderWorkerSet --------------------------------------------------------------------------


def test_lws_groups_are_a_leader_and_its_numbered_workers() -> None:
    got = ex.expand_lws(multi())
    assert [p["metadata"]["name"] for p in got.pods] == [
        *("lws-multi-0", "lws-multi-0-1", "lws-multi-0-2", "lws-multi-0-3", "lws-multi-0-4"),
        *("lws-multi-1", "lws-multi-1-1", "lws-multi-1-2", "lws-multi-1-3", "lws-multi-1-4"),
    ]
    assert {p["metadata"]["namespace"] for p in got.pods} == {"serving"}


@pytest.mark.parametrize(
    ("pod", "labels"),
    [
        pytest.param(
            "lws-multi-0",
            {
                LWS + "name": "lws-multi",
                LWS + "group-index": "0",
                LWS + "worker-index": "0",
                LWS + "subgroup-index": "0",
                "statefulset.kubernetes.io/pod-name": "lws-multi-0",
                "apps.kubernetes.io/pod-index": "0",
                "role": "leader",
            },
            id="leader-of-group-0",
        ),
        pytest.param(
            "lws-multi-1",
            {LWS + "group-index": "1", LWS + "worker-index": "0", "apps.kubernetes.io/pod-index": "1"},
            id="leader-of-group-1-is-ordinal-1-of-the-leader-set",
        ),
        pytest.param(
            "lws-multi-1-3",
            {
                LWS + "group-index": "1",
                LWS + "worker-index": "3",
                LWS + "subgroup-index": "1",
                "statefulset.kubernetes.io/pod-name": "lws-multi-1-3",
                "apps.kubernetes.io/pod-index": "3",
                "role": "worker",
            },
            id="worker-3-of-group-1",
        ),
    ],
)
def test_lws_pod_labels(pod: str, labels: dict[str, str]) -> None:
    got = by_name(ex.expand_lws(multi()))[pod]["metadata"]["labels"]
    assert {k: got.get(k) for k in labels} == labels


def test_lws_group_and_subgroup_keys_are_the_webhooks_hashes() -> None:
    pods = by_name(ex.expand_lws(multi()))
    for name, pod in pods.items():
        labels = pod["metadata"]["labels"]
        group = labels[LWS + "group-index"]
        leader = f"lws-multi-{group}"
        assert labels[LWS + "group-key"] == sha1(f"serving/{leader}"), name
        assert labels[LWS + "subgroup-key"] == sha1(f"{leader}/{labels[LWS + 'subgroup-index']}"), name
    keys = {p["metadata"]["labels"][LWS + "group-key"] for p in pods.values()}
    assert len(keys) == 2


@pytest.mark.parametrize(
    ("size", "subgroup_size", "kind", "indexes"),
    [
        pytest.param(5, 2, None, ["0", "0", "0", "1", "1"], id="leader-joins-subgroup-0"),
        pytest.param(4, 2, None, ["0", "0", "1", "1"], id="size-divisible-workers-by-ordinal"),
        pytest.param(5, 2, "LeaderExcluded", [None, "0", "0", "1", "1"], id="leader-excluded"),
        pytest.param(3, 3, None, ["0", "0", "0"], id="one-subgroup"),
    ],
)
def test_lws_subgroup_index_per_worker(
    size: int, subgroup_size: int, kind: str | None, indexes: list[str | None]
) -> None:
    policy: JsonDict = {"subGroupSize": subgroup_size}
    if kind:
        policy["subGroupPolicyType"] = kind
    got = ex.expand_lws(multi(size=size, subGroupPolicy=policy))
    group0 = [p for p in got.pods if p["metadata"]["labels"][LWS + "group-index"] == "0"]
    assert [p["metadata"]["labels"].get(LWS + "subgroup-index") for p in group0] == indexes


def test_lws_annotations_on_leader_and_workers() -> None:
    got = ex.expand_lws(multi())
    (rev,) = {p["metadata"]["labels"][LWS + "template-revision-hash"] for p in got.pods}
    pods = by_name(got)
    leader, worker = (
        pods["lws-multi-0"]["metadata"]["annotations"],
        pods["lws-multi-0-2"]["metadata"]["annotations"],
    )
    shared = {
        LWS + "size": "5",
        LWS + "subgroup-size": "2",
        LWS + "subgroup-policy-type": "LeaderWorker",
        GROUP_NAME: f"lws-multi-0-{rev}",
    }
    assert {k: leader.get(k) for k in shared} == shared and LWS + "leader-name" not in leader
    assert {k: worker.get(k) for k in shared} == shared
    assert worker[LWS + "leader-name"] == "lws-multi-0"
    assert worker["example.com/shard"] == "weights", "the template's annotations reach the pods"
    assert pods["lws-multi-1-4"]["metadata"]["annotations"][GROUP_NAME] == f"lws-multi-1-{rev}"


def test_lws_with_topology_gets_one_podgroup_per_group() -> None:
    got = ex.expand_lws(multi())
    rev = got.pods[0]["metadata"]["labels"][LWS + "template-revision-hash"]
    assert got.groups == (f"lws-multi-0-{rev}", f"lws-multi-1-{rev}")
    pg = got.pod_groups[1]
    assert (pg["metadata"]["name"], pg["metadata"]["namespace"]) == (f"lws-multi-1-{rev}", "serving")
    assert pg["spec"]["minMember"] == 5 and pg["spec"]["queue"] == "inference"
    assert pg["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
    assert pg["spec"]["subGroupPolicy"][0]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    assert any("stands in" in note for note in got.notes)
    assert got.line() == (
        "LeaderWorkerSet serving/lws-multi: 10 pod(s) (2 group(s) of 5), schedulerName volcano; "
        f"PodGroups lws-multi-0-{rev}, lws-multi-1-{rev}"
    )


def test_lws_pods_already_present_are_kept_and_their_revision_used() -> None:
    leader = Pod.parse(
        {
            "metadata": {
                "name": "lws-multi-0",
                "namespace": "serving",
                "labels": {
                    LWS + "name": "lws-multi",
                    LWS + "group-index": "0",
                    LWS + "worker-index": "0",
                    LWS + "template-revision-hash": "7d4f8b9c6",
                },
            }
        }
    )
    got = ex.expand_lws(multi(), pods=[leader], pod_groups={"serving/lws-multi-1-7d4f8b9c6"})
    assert got.present == ("lws-multi-0",)
    assert "lws-multi-0" not in by_name(got) and len(got.pods) == 9
    assert {p["metadata"]["labels"][LWS + "template-revision-hash"] for p in got.pods} == {"7d4f8b9c6"}
    assert got.groups == ("lws-multi-0-7d4f8b9c6", "lws-multi-1-7d4f8b9c6")
    assert [g["metadata"]["name"] for g in got.pod_groups] == ["lws-multi-0-7d4f8b9c6"], "present: kept"
    assert not any("stands in" in note for note in got.notes)


def test_lws_without_topology_has_exclusive_affinity_and_no_podgroup() -> None:
    got = ex.expand_lws(LeaderWorkerSet.parse(fixture("lws-exclusive.yaml")))
    assert len(got.pods) == 12 and got.pod_groups == () and got.groups == ()
    assert all(GROUP_NAME not in p["metadata"]["annotations"] for p in got.pods)
    worker = by_name(got)["leaderworkerset-sample-2-3"]
    key = worker["metadata"]["labels"][LWS + "group-key"]
    (term,) = worker["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "cloud.google.com/gke-nodepool"
    assert term["labelSelector"]["matchExpressions"] == [
        {"key": LWS + "group-key", "operator": "In", "values": [key]}
    ]
    assert worker["metadata"]["annotations"][LWS + "exclusive-topology"] == "cloud.google.com/gke-nodepool"
    assert "schedulerName default-scheduler" in got.line()
    assert any("no PodGroup" in note for note in got.notes)


# --- Volcano Job ------------------------------------------------------------------------------

VC_UID = "0b6f7c1e-4a53-4c2b-9f57-1f1a3d2f9e10"


def volcano(**meta: Any) -> VolcanoJob:
    raw = fixture("volcano-job-ps-worker.yaml")
    raw["metadata"].update(meta)
    return VolcanoJob.parse({**raw, "metadata": {k: v for k, v in raw["metadata"].items() if v is not None}})


def test_volcano_job_pods_are_job_task_index() -> None:
    got = ex.expand_volcano_job(volcano())
    assert [p["metadata"]["name"] for p in got.pods] == [
        "tf-dist-ps-0",
        *(f"tf-dist-worker-{i}" for i in range(8)),
    ]
    assert got.shape == "tasks ps 1, worker 8"


@pytest.mark.parametrize(
    ("pod", "labels", "annotations"),
    [
        pytest.param(
            "tf-dist-worker-5",
            {
                "volcano.sh/task-index": "5",
                "volcano.sh/job-name": "tf-dist",
                "volcano.sh/task-spec": "worker",
                "volcano.sh/job-namespace": "ml",
                "volcano.sh/queue-name": "research",
                "volcano.sh/partition-id": "1",
                "app": "tf-dist",
            },
            {
                "volcano.sh/task-index": "5",
                "volcano.sh/task-spec": "worker",
                GROUP_NAME: f"tf-dist-{VC_UID}",
                "volcano.sh/job-name": "tf-dist",
                "volcano.sh/queue-name": "research",
                "volcano.sh/job-version": "0",
                "volcano.sh/template-uid": "tf-dist-worker",
            },
            id="worker-5-in-partition-1",
        ),
        pytest.param(
            "tf-dist-worker-3",
            {"volcano.sh/partition-id": "0"},
            {"volcano.sh/task-index": "3"},
            id="worker-3-in-partition-0",
        ),
        pytest.param(
            "tf-dist-ps-0",
            {"volcano.sh/task-spec": "ps", "volcano.sh/partition-id": None},
            {"volcano.sh/template-uid": "tf-dist-ps", GROUP_NAME: f"tf-dist-{VC_UID}"},
            id="ps-not-partitioned",
        ),
    ],
)
def test_volcano_job_pod_labels_and_annotations(
    pod: str, labels: dict[str, str | None], annotations: dict[str, str]
) -> None:
    meta = by_name(ex.expand_volcano_job(volcano()))[pod]["metadata"]
    assert {k: meta["labels"].get(k) for k in labels} == labels
    assert {k: meta["annotations"].get(k) for k in annotations} == annotations


@pytest.mark.parametrize(
    ("pod", "scheduler", "priority"),
    [
        pytest.param("tf-dist-worker-0", "topobridge", "training-workers", id="template-wins"),
        pytest.param("tf-dist-ps-0", "volcano", "training", id="volcano-and-the-jobs-priority"),
    ],
)
def test_volcano_job_scheduler_and_priority(pod: str, scheduler: str, priority: str) -> None:
    spec = by_name(ex.expand_volcano_job(volcano()))[pod]["spec"]
    assert (spec["schedulerName"], spec["priorityClassName"]) == (scheduler, priority)


def test_volcano_job_pods_are_owned_by_the_job_and_join_its_podgroup() -> None:
    got = ex.expand_volcano_job(volcano())
    assert got.pods[0]["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "tf-dist",
            "uid": VC_UID,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    (pg,) = got.pod_groups
    assert pg["metadata"]["name"] == f"tf-dist-{VC_UID}" and got.groups == (f"tf-dist-{VC_UID}",)
    assert pg["spec"]["minMember"] == 9
    assert pg["spec"]["subGroupPolicy"][0]["matchLabelKeys"] == ["volcano.sh/partition-id"]


def test_volcano_job_without_uid_joins_a_podgroup_named_after_it() -> None:
    got = ex.expand_volcano_job(volcano(uid=None))
    assert got.groups == ("tf-dist",)
    assert all(p["metadata"]["annotations"][GROUP_NAME] == "tf-dist" for p in got.pods)
    assert all("ownerReferences" not in p["metadata"] for p in got.pods)
    assert any("no uid" in note for note in got.notes)


def test_volcano_job_present_pods_and_podgroup_are_kept() -> None:
    present = Pod.parse({"metadata": {"name": "tf-dist-worker-7", "namespace": "ml"}})
    got = ex.expand_volcano_job(volcano(), pods=[present], pod_groups={f"ml/tf-dist-{VC_UID}"})
    assert got.present == ("tf-dist-worker-7",) and "tf-dist-worker-7" not in by_name(got)
    assert got.pod_groups == () and got.groups == (f"tf-dist-{VC_UID}",)


# --- batch/v1 Job -----------------------------------------------------------------------------

KUEUE_UID = "5f0c6a3e-2b1d-4c8e-a7f9-3d2e1c0b9a87"
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def kueue_job(**spec: Any) -> Job:
    raw = fixture("kueue-job-required.yaml")
    raw["spec"].update(spec)
    return Job.parse(raw)


def job_pod(index: int, *, phase: str | None = None, index_text: str | None = None) -> Pod:
    """A pod the Job controller made earlier, with its completion index (as written)."""
    raw: JsonDict = {
        "metadata": {
            "name": f"tas-sample-required-{index}-abcde",
            "namespace": "default",
            "annotations": {INDEX: index_text or str(index)},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "tas-sample-required",
                    "uid": KUEUE_UID,
                    "controller": True,
                }
            ],
        }
    }
    if phase:
        raw["status"] = {"phase": phase}
    return Pod.parse(raw)


def test_indexed_job_starts_parallelism_pods_with_their_index() -> None:
    got = ex.expand_job(kueue_job())
    assert got.shape == "indexes 0-3" and len(got.pods) == 4
    for i, pod in enumerate(got.pods):
        meta = pod["metadata"]
        assert re.fullmatch(f"tas-sample-required-{i}-{SUFFIX}", meta["name"]), meta["name"]
        assert meta["annotations"][INDEX] == meta["labels"][INDEX] == str(i)
        assert (
            meta["annotations"]["kueue.x-k8s.io/podset-required-topology"]
            == "cloud.provider.com/topology-rack"
        )
        assert {k: meta["labels"][k] for k in ("job-name", "batch.kubernetes.io/job-name")} == {
            "job-name": "tas-sample-required",
            "batch.kubernetes.io/job-name": "tas-sample-required",
        }
        assert (
            meta["labels"]["controller-uid"]
            == meta["labels"]["batch.kubernetes.io/controller-uid"]
            == KUEUE_UID
        )
        assert "kueue.x-k8s.io/queue-name" not in meta["labels"], "the Job's own labels stay on the Job"
        assert meta["ownerReferences"] == [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": "tas-sample-required",
                "uid": KUEUE_UID,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        assert pod["spec"]["hostname"] == f"tas-sample-required-{i}"


@pytest.mark.parametrize(
    ("spec", "present", "indexes"),
    [
        pytest.param({}, [], [0, 1, 2, 3], id="parallelism-4-of-6"),
        pytest.param({"completions": 2}, [], [0, 1], id="no-more-than-completions"),
        pytest.param({}, [job_pod(0), job_pod(2)], [1, 3], id="active-indexes-kept"),
        pytest.param(
            {},
            [job_pod(0), job_pod(1, phase="Succeeded"), job_pod(2)],
            [3, 4],
            id="succeeded-index-not-restarted",
        ),
        pytest.param({}, [job_pod(0, phase="Failed")], [0, 1, 2, 3], id="failed-index-restarted"),
        pytest.param({"parallelism": 0}, [], [], id="parallelism-0"),
    ],
)
def test_indexed_job_indexes_to_start(spec: JsonDict, present: list[Pod], indexes: list[int]) -> None:
    got = ex.expand_job(kueue_job(**spec), pods=present)
    assert [int(p["metadata"]["annotations"][INDEX]) for p in got.pods] == indexes
    assert got.present == tuple(p.name for p in present if not p.terminal)


def test_nonindexed_job_pods_have_no_index() -> None:
    got = ex.expand_job(kueue_job(completionMode=None, completions=None, parallelism=3))
    assert len(got.pods) == 3 and got.shape == ""
    for pod in got.pods:
        assert re.fullmatch(f"tas-sample-required-{SUFFIX}", pod["metadata"]["name"])
        assert INDEX not in pod["metadata"]["labels"] and "hostname" not in pod["spec"]
    assert len({p["metadata"]["name"] for p in got.pods}) == 3


def test_job_expansion_is_repeatable_and_a_missing_uid_is_stood_in_for() -> None:
    raw = fixture("kueue-job-required.yaml")
    del raw["metadata"]["uid"]
    first, second = ex.expand_job(Job.parse(raw)), ex.expand_job(Job.parse(copy.deepcopy(raw)))
    assert [p["metadata"]["name"] for p in first.pods] == [p["metadata"]["name"] for p in second.pods]
    uid = first.pods[0]["metadata"]["ownerReferences"][0]["uid"]
    assert uid == ex.stand_in_uid("Job", "default", "tas-sample-required")
    assert any(uid in note for note in first.notes)


def test_suspended_and_manual_selector_jobs() -> None:
    suspended = ex.expand_job(kueue_job(suspend=True))
    assert suspended.pods == () and any("spec.suspend" in n for n in suspended.notes)
    manual = ex.expand_job(kueue_job(manualSelector=True))
    assert "controller-uid" not in manual.pods[0]["metadata"]["labels"]


@pytest.mark.parametrize(
    ("name", "index", "prefix"),
    [
        pytest.param("train", 3, "train-3-", id="short"),
        pytest.param("a" * 60, 12, "a" * 54 + "-12-", id="cut-to-58"),
        pytest.param("b" * 70, None, "b" * 58, id="nonindexed-cut-to-58"),
    ],
)
def test_generate_name(name: str, index: int | None, prefix: str) -> None:
    assert ex.generate_name(name, index) == prefix
    assert len(prefix) <= 58


# --- bad input --------------------------------------------------------------------------------


def lws_raw(**changes: Any) -> JsonDict:
    raw = fixture("lws-multi-template-subgroups.yaml")
    for key, value in changes.items():
        if key == "name":
            raw["metadata"]["name"] = value
        else:
            raw["spec"][key] = value
    return raw


def long_named_lws() -> LeaderWorkerSet:
    """Worker 10's name is 64 characters: too long for its StatefulSet's pod-name label."""
    raw = fixture("lws-exclusive.yaml")
    raw["metadata"]["name"] = "x" * 59
    raw["spec"]["leaderWorkerTemplate"]["size"] = 11
    return LeaderWorkerSet.parse(raw)


def lws_template_labels(labels: Any) -> LeaderWorkerSet:
    raw = fixture("lws-exclusive.yaml")
    raw["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"] = {"labels": labels}
    return LeaderWorkerSet.parse(raw)


def bad_quantity_job() -> Job:
    raw = fixture("kueue-job-required.yaml")
    raw["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2x"
    return Job.parse(raw)


@pytest.mark.parametrize(
    ("obj", "pods", "message"),
    [
        pytest.param(
            long_named_lws,
            [],
            f"Pod default/{'x' * 59}-0-10: metadata.labels[statefulset.kubernetes.io/pod-name]: Invalid value",
            id="statefulset-pod-name-label-too-long",
        ),
        pytest.param(
            lambda: LeaderWorkerSet.parse(lws_raw(name="l" * 64)),
            [],
            f'metadata.labels[{LWS}name]: Invalid value: "{"l" * 64}": must be no more than 63 characters',
            id="label-value-too-long",
        ),
        pytest.param(
            lambda: LeaderWorkerSet.parse(lws_raw(replicas=60_000)),
            [],
            "spec.replicas: Invalid value: 60000: expands to 300000 pods",
            id="too-many-pods",
        ),
        pytest.param(
            lambda: multi(size=0),
            [],
            "spec.leaderWorkerTemplate.size: Invalid value: 0",
            id="lws-webhook-rule",
        ),
        pytest.param(
            lambda: VolcanoJob.parse(
                {**fixture("volcano-job-ps-worker.yaml"), "metadata": {"name": "v" * 64, "namespace": "ml"}}
            ),
            [],
            "metadata.labels[volcano.sh/job-name]: Invalid value",
            id="volcano-job-name-too-long-for-a-label",
        ),
        pytest.param(
            lambda: VolcanoJob.parse(
                yaml.safe_load(
                    (FIXTURES / "volcano-job-ps-worker.yaml")
                    .read_text()
                    .replace("replicas: 8", "replicas: 7")
                )
            ),
            [],
            "spec.tasks[1].replicas: Invalid value: 7: must equal partitionPolicy.totalPartitions",
            id="volcano-webhook-rule",
        ),
        pytest.param(
            bad_quantity_job,
            [],
            'spec.template.spec.containers[0].resources.requests[cpu]: Invalid value: "2x"',
            id="job-template-quantity",
        ),
        pytest.param(
            lambda: lws_template_labels({"tier": 1}),
            [],
            "spec.leaderWorkerTemplate.workerTemplate.metadata.labels[tier]: Invalid value: 1: must be of type string",
            id="template-label-not-a-string",
        ),
        pytest.param(
            lambda: lws_template_labels(["a"]),
            [],
            'spec.leaderWorkerTemplate.workerTemplate.metadata.labels: Invalid value: ["a"]: must be of type object',
            id="template-labels-not-a-map",
        ),
        pytest.param(
            kueue_job,
            [job_pod(0, index_text="\u00b2")],
            f'metadata.annotations[{INDEX}]: Invalid value: "\u00b2": must be a non-negative decimal integer',
            id="present-pod-unicode-digit-index",
        ),
        pytest.param(
            kueue_job,
            [job_pod(0, index_text="first")],
            f'Pod default/tas-sample-required-0-abcde: metadata.annotations[{INDEX}]: Invalid value: "first"',
            id="present-pod-bad-index",
        ),
    ],
)
def test_bad_input_names_the_field_and_the_value(obj: Any, pods: list[Pod], message: str) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        ex.expand(obj(), pods=pods)
    assert message in str(caught.value)
