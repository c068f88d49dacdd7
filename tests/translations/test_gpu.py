"""The GPU dialect's reader: where the annotations come from, what they mean, what is refused.

The admission verdicts (field errors, warnings) are in tests/webhooks/webhook_corpus.py; these
check the model the placer and gang discovery read."""

from __future__ import annotations

from typing import Any

import pytest

from translations import gpu
from translations.core import Job, Pod

G = gpu.PREFIX


def _job(annotations: dict[str, str] | None = None, template: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "dt", "namespace": "ml", "uid": "u-1", "annotations": annotations or {}},
        "spec": {
            "parallelism": 3,
            "completions": 2,
            "template": {
                "metadata": {"annotations": template or {}},
                "spec": {"containers": [{"name": "t", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]},
            },
        },
    }


def _pod(annotations: dict[str, str] | None = None, **meta: Any) -> Pod:
    return Pod.parse(
        {"metadata": {"name": "dt-0", "namespace": "ml", "annotations": annotations or {}, **meta}}
    )


def test_the_seed_request_reads_every_annotation() -> None:
    request, problems = gpu.topology_request(
        _job(
            {
                gpu.POLICY: "nvlink",
                gpu.MIN_BANDWIDTH: "100",
                gpu.MULTI_NODE_POLICY: "pack",
                gpu.MAX_NODES: "2",
                gpu.MIN_GPUS_PER_NODE: "4",
            }
        )
    )
    assert problems == []
    assert request is not None
    assert (request.policy, request.min_bandwidth, request.multi_node_policy) == ("nvlink", 100, "pack")
    assert (request.max_nodes, request.min_gpus_per_node) == (2, 4)
    assert request.nvlink and request.multi_node
    assert request.node_local == (gpu.MIN_BANDWIDTH,)


def test_no_annotation_is_no_request() -> None:
    assert gpu.topology_request(_job()) == (None, [])
    assert gpu.topology_request("not an object") == (None, [])


@pytest.mark.parametrize(
    ("annotations", "multi_node", "policy"),
    [
        pytest.param({gpu.POLICY: "single-numa"}, False, "best-fit", id="node-local-only"),
        pytest.param({gpu.MAX_NODES: "2"}, True, "best-fit", id="max-nodes-alone-is-multi-node"),
        pytest.param({gpu.MULTI_NODE_POLICY: "spread"}, True, "spread", id="spread"),
        pytest.param({gpu.REQUIRE_NVLINK: "false"}, False, "best-fit", id="nvlink-off"),
    ],
)
def test_multi_node_keys_make_a_gang(annotations: dict[str, str], multi_node: bool, policy: str) -> None:
    request, problems = gpu.topology_request(_job(template=annotations))
    assert problems == [] and request is not None
    assert request.multi_node is multi_node
    assert request.multi_node_policy == policy
    assert request.path(next(iter(annotations))).startswith("spec.template.metadata.annotations[")


def test_the_workload_is_parallelism_capped_by_completions() -> None:
    workload = gpu.workload_of(_job())
    assert workload == gpu.GpuWorkload(pods=2, gpus_per_pod=4)
    assert workload.total_gpus == 8


def test_cluster_problems_need_gpu_nodes() -> None:
    request, _ = gpu.topology_request(_job({gpu.MAX_NODES: "1", gpu.MIN_GPUS_PER_NODE: "6"}))
    assert request is not None
    workload = gpu.GpuWorkload(pods=2, gpus_per_pod=4)
    assert gpu.cluster_problems(request, workload, []) == []
    texts = [str(p) for p in gpu.cluster_problems(request, workload, [4, 4])]
    assert texts == [
        'metadata.annotations[gpu.topology/min-gpus-per-node]: Invalid value: "6": no node has that many GPUs '
        "(the largest has 4 nvidia.com/gpu)",
        'metadata.annotations[gpu.topology/max-nodes]: Invalid value: "1": 1 node(s) of at most 4 GPUs cannot '
        "hold the job's 8 GPUs (parallelism 2 x 4 nvidia.com/gpu)",
    ]
    assert gpu.cluster_problems(request, workload, [8, 4]) == []


def test_a_pod_follows_its_job_else_its_own_annotations() -> None:
    job = Job.parse(_job({gpu.MAX_NODES: "2"}))
    pod = _pod({gpu.MAX_NODES: "5"})
    from_job, _ = gpu.pod_request(pod, job)
    alone, _ = gpu.pod_request(pod, None)
    assert from_job is not None and from_job.max_nodes == 2
    assert alone is not None and alone.max_nodes == 5
    silent_job = Job.parse(_job())
    assert gpu.pod_request(pod, silent_job)[0] == alone
    bad, problems = gpu.pod_request(_pod({gpu.MAX_NODES: "x"}), None)
    assert bad is not None and bad.max_nodes is None
    assert [p.field_path for p in problems] == ["metadata.annotations[gpu.topology/max-nodes]"]


def test_the_owning_job_by_owner_reference_or_label() -> None:
    owned = _pod(
        ownerReferences=[
            {"apiVersion": "batch/v1", "kind": "Job", "name": "dt", "uid": "u-1", "controller": True}
        ]
    )
    labelled = _pod(labels={"controller-uid": "u-2"})
    prefixed = _pod(labels={"batch.kubernetes.io/controller-uid": "u-3", "controller-uid": "u-3"})
    not_controller = _pod(
        ownerReferences=[{"apiVersion": "batch/v1", "kind": "Job", "name": "dt", "uid": "u-1"}]
    )
    assert [gpu.job_uid_of(p) for p in (owned, labelled, prefixed, not_controller)] == [
        "u-1",
        "u-2",
        "u-3",
        None,
    ]


def test_completion_index_from_annotation_or_label() -> None:
    assert gpu.completion_index(_pod({gpu.COMPLETION_INDEX: "3"})) == "3"
    assert gpu.completion_index(_pod(labels={gpu.COMPLETION_INDEX: "1"})) == "1"
    assert gpu.completion_index(_pod()) is None


@pytest.mark.parametrize(
    ("min_gpus", "per_pod", "floor"),
    [(None, 4, 1), ("4", 4, 1), ("8", 4, 2), ("6", 4, 2), ("4", 0, 0)],
)
def test_pods_per_node_floor(min_gpus: str | None, per_pod: int, floor: int) -> None:
    request = gpu.GpuTopologyRequest(min_gpus_per_node=int(min_gpus) if min_gpus else None)
    assert gpu.pods_per_node_floor(request, per_pod) == floor


@pytest.mark.parametrize(
    ("value", "nvlink"), [("true", True), ("clique-7", True), ("false", False), ("", False), (None, False)]
)
def test_nvlink_label_values(value: str | None, nvlink: bool) -> None:
    assert gpu.is_nvlink(value) is nvlink
