"""Upstream's own test cases for the rules topobridge shares with Volcano and Kueue, as table rows
named `<project>:<upstream test>/<case>`. Each row gives the object (rebuilt in YAML terms from the
Go fixture) and the (error type, field) pairs expected, as Kueue's tests compare them (type and
field; value and detail are topobridge's wording). Volcano's tests compare message substrings;
the rows name the field topobridge reports for the same rule.

Sources:
* volcano-sh/volcano `pkg/webhooks/admission/jobs/validate/admit_job_test.go`,
  TestValidateJobCreate (the cases about tasks, replicas and minAvailable; the file at the commit
  read holds no partition case yet);
* volcano-sh/volcano `pkg/webhooks/admission/jobs/mutate/mutate_job_test.go`,
  TestMutateSpecPartitionPolicyDefaults (Volcano's defaults, which the translation applies);
* volcano PR #4675 (the partitionPolicy example), issues #4867 and #5401, PR #5402
  (the partition rules' cases, written as the PRs describe them);
* kubernetes-sigs/kueue `pkg/controller/jobframework/tas_validation_test.go`:
  TestValidateSliceRequiredTopologyConstraintsAnnotation, TestValidateTASPodSetRequest_GroupingWithSlicing,
  TestValidateSliceSizeAnnotationUpperBound, with the feature gates at the values topobridge
  follows (TASMultiLayerTopology on, grouped slicing and partial slices off: `tas_validation.go`
  as read, where a group name never goes with slices); cases that need another gate value are
  left out;
* kubernetes-sigs/kueue job webhook tests (`pkg/controller/jobs/*/..._webhook_test.go`),
  "invalid TAS request" (two topology annotations on one template).
"""

from __future__ import annotations

from typing import Any

import pytest
from webhook_corpus import _task, partition, tas_job, vcjob

from translations import volcano_job
from webhooks.rules import ClusterState, registry

K = "kueue.x-k8s.io/"
TA = "spec.template.metadata.annotations"
CONSTRAINTS = f"{TA}[{K}podset-slice-required-topology-constraints]"
REQUIRED, PREFERRED = f"{K}podset-required-topology", f"{K}podset-preferred-topology"
SLICE, SIZE, LAYERS, GROUP = (
    f"{K}podset-slice-required-topology",
    f"{K}podset-slice-size",
    f"{K}podset-slice-required-topology-constraints",
    f"{K}podset-group-name",
)


def _job(**spec: Any) -> dict[str, Any]:
    """Volcano's fixture shape: one task `task-1`, 1 replica, minAvailable 1, queue default."""
    tasks = spec.pop("tasks", [_task("task-1", 1)])
    obj = vcjob(**{"minAvailable": 1, "queue": "default", **spec})
    obj["spec"]["tasks"] = tasks
    return obj


VOLCANO = [
    pytest.param(_job(), [], id="volcano:TestValidateJobCreate/validate valid-job"),
    pytest.param(
        _job(tasks=[_task("duplicated-task-1", 1), _task("duplicated-task-1", 1)]),
        [("Duplicate value", "spec.tasks[1].name")],
        id="volcano:TestValidateJobCreate/duplicate-task-job",
    ),
    pytest.param(
        _job(minAvailable=2),
        [("Invalid value", "spec.minAvailable")],
        id="volcano:TestValidateJobCreate/Min Available illegal",
    ),
    pytest.param(
        _job(minAvailable=-1),
        [("Invalid value", "spec.minAvailable")],
        id="volcano:TestValidateJobCreate/minAvailable-lessThanZero",
    ),
    pytest.param(
        _job(tasks=[_task("task-1", -1)]),
        [("Invalid value", "spec.tasks[0].replicas")],
        id="volcano:TestValidateJobCreate/replica-lessThanZero",
    ),
    pytest.param(
        _job(tasks=[_task("Task-1", 1)]),
        [("Invalid value", "spec.tasks[0].name")],
        id="volcano:TestValidateJobCreate/nonDNS-task",
    ),
    pytest.param(
        _job(tasks=[]), [("Required value", "spec.tasks")], id="volcano:TestValidateJobCreate/no-task"
    ),
    pytest.param(
        vcjob(
            _task(
                "task",
                6,
                partitionPolicy=partition(2, 3, networkTopology={"mode": "hard", "highestTierAllowed": 1}),
            ),
            minAvailable=6,
            networkTopology={"mode": "hard", "highestTierAllowed": 2},
        ),
        [],
        id="volcano:PR4675/network-topology-job example",
    ),
    pytest.param(
        vcjob(_task("worker", 12, minAvailable=12, partitionPolicy=partition(4, 3, minPartitions=2))),
        [("Invalid value", "spec.tasks[0].minAvailable")],
        id="volcano:issue4867/minAvailable given as replicas with minPartitions 2",
    ),
    pytest.param(
        vcjob(_task("worker", 4, minAvailable=1, partitionPolicy=partition(2, 2))),
        [],
        id="volcano:PR5402/minPartitions omitted: any minAvailable",
    ),
    pytest.param(
        vcjob(_task("worker", 4, partitionPolicy=partition(2, 3))),
        [("Invalid value", "spec.tasks[0].replicas")],
        id="volcano:PR5402/replicas not totalPartitions x partitionSize",
    ),
]


def _verdict(obj: dict[str, Any]) -> list[tuple[str, str]]:
    entry = registry.for_api_version(obj["apiVersion"], obj["kind"])
    assert entry is not None
    return [(e.type.label, e.field) for e in entry.rule(obj, ClusterState.unknown()).errors]


@pytest.mark.parametrize(("obj", "expected"), VOLCANO)
def test_volcano_admit_job_cases(obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert _verdict(obj) == expected


@pytest.mark.parametrize(
    ("task", "min_available"),
    [
        pytest.param(
            {"replicas": 9, "partitionPolicy": partition(3, 3, minPartitions=2)},
            6,
            id="volcano:TestMutateSpecPartitionPolicyDefaults/MinAvailable is set to MinPartitions * PartitionSize",
        ),
        pytest.param(
            {"replicas": 5},
            5,
            id="volcano:TestMutateSpecPartitionPolicyDefaults/MinAvailable is set to Replicas when no PartitionPolicy",
        ),
        pytest.param(
            {"replicas": 4, "partitionPolicy": partition(2, 2)},
            4,
            id="volcano:PR5402/minPartitions omitted: minAvailable falls back to replicas",
        ),
    ],
)
def test_volcano_mutating_defaults(task: dict[str, Any], min_available: int) -> None:
    spec = volcano_job.JobSpec.parse({"tasks": [{"name": "task-1", **task}]})
    (effective,) = volcano_job.effective_tasks(spec)
    assert effective.min_available == min_available
    assert volcano_job.effective_min_available(spec) == min_available


def _tas(annotations: dict[str, str], pods: int = 64) -> list[tuple[str, str]]:
    return _verdict(tas_job(annotations, pods))


UPPER = "TestValidateSliceSizeAnnotationUpperBound"
LAYERED = "TestValidateSliceRequiredTopologyConstraintsAnnotation"
GROUPED = "TestValidateTASPodSetRequest_GroupingWithSlicing"
KUEUE = [
    pytest.param(
        {REQUIRED: "cloud.com/block", LAYERS: '[{"topology":"cloud.com/rack","size":16}]'},
        64,
        [],
        id=f"kueue:{LAYERED}/valid: single constraint layer",
    ),
    pytest.param(
        {
            REQUIRED: "cloud.com/block",
            LAYERS: '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":4}]',
        },
        64,
        [],
        id=f"kueue:{LAYERED}/valid: two constraint layers",
    ),
    pytest.param(
        {
            REQUIRED: "cloud.com/block",
            LAYERS: '[{"topology":"cloud.com/rack","size":16},{"topology":"cloud.com/sub-rack","size":4},'
            '{"topology":"kubernetes.io/hostname","size":2}]',
        },
        64,
        [],
        id=f"kueue:{LAYERED}/valid: three constraint layers",
    ),
    pytest.param(
        {REQUIRED: "cloud.com/block", LAYERS: "invalid-json"},
        64,
        [("Invalid value", CONSTRAINTS)],
        id=f"kueue:{LAYERED}/invalid: not valid JSON",
    ),
    pytest.param(
        {REQUIRED: "cloud.com/block", LAYERS: "[]"},
        64,
        [("Invalid value", CONSTRAINTS)],
        id=f"kueue:{LAYERED}/invalid: empty array",
    ),
    pytest.param(
        {
            REQUIRED: "cloud.com/block",
            LAYERS: '[{"topology":"a","size":64},{"topology":"b","size":16},{"topology":"c","size":4},{"topology":"d","size":1}]',
        },
        64,
        [("Invalid value", CONSTRAINTS)],
        id=f"kueue:{LAYERED}/invalid: more than 3 entries",
    ),
    pytest.param(
        {REQUIRED: "cloud.com/block", LAYERS: '[{"topology":"cloud.com/rack","size":0}]'},
        64,
        [("Invalid value", f"{CONSTRAINTS}[0].size")],
        id=f"kueue:{LAYERED}/invalid: size less than 1",
    ),
    pytest.param(
        {f"{K}podset-unconstrained-topology": "false"},
        64,
        [],
        id=f"kueue:{LAYERED}/valid: unconstrained topology is false when validation is disabled",
    ),
    pytest.param(
        {
            REQUIRED: "cloud.com/block",
            LAYERS: '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":5}]',
        },
        64,
        [("Invalid value", f"{CONSTRAINTS}[1].size")],
        id=f"kueue:{LAYERED}/invalid: size does not divide parent",
    ),
    pytest.param(
        {
            REQUIRED: "cloud.com/block",
            SLICE: "cloud.com/rack",
            SIZE: "16",
            LAYERS: '[{"topology":"cloud.com/rack","size":16}]',
        },
        64,
        [("Forbidden", CONSTRAINTS), ("Forbidden", CONSTRAINTS)],
        id=f"kueue:{LAYERED}/invalid: mutual exclusivity with podset-slice-required-topology",
    ),
    pytest.param(
        {REQUIRED: "cloud.com/block", LAYERS: '[{"topology":"cloud.com/rack","size":16}]', GROUP: "group1"},
        64,
        [("Forbidden", f"{TA}[{GROUP}]")],
        id=f"kueue:{LAYERED}/invalid: with podset-group-name when TASGroupedPodSetSlicing is disabled",
    ),
    pytest.param(
        {
            REQUIRED: "cloud.com/block",
            LAYERS: '[{"topology":"cloud.com/rack","size":16},{"topology":"cloud.com/rack","size":4}]',
        },
        64,
        [("Duplicate value", f"{CONSTRAINTS}[1].topology")],
        id=f"kueue:{LAYERED}/invalid: duplicate topology labels",
    ),
    pytest.param(
        {
            REQUIRED: "cloud.com/block",
            LAYERS: '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":4},'
            '{"topology":"cloud.com/rack","size":2}]',
        },
        64,
        [("Duplicate value", f"{CONSTRAINTS}[2].topology")],
        id=f"kueue:{LAYERED}/invalid: duplicate topology label among three entries",
    ),
    pytest.param(
        {GROUP: "group1", REQUIRED: "cloud.com/block", SLICE: "cloud.com/rack", SIZE: "4"},
        64,
        [("Forbidden", f"{TA}[{GROUP}]"), ("Forbidden", f"{TA}[{GROUP}]")],
        id=f"kueue:{GROUPED}/invalid: podset grouping with 2-level slicing when TASGroupedPodSetSlicing is disabled",
    ),
    pytest.param(
        {GROUP: "group1", REQUIRED: "cloud.com/block", LAYERS: '[{"topology":"cloud.com/rack","size":4}]'},
        64,
        [("Forbidden", f"{TA}[{GROUP}]")],
        id=f"kueue:{GROUPED}/invalid: podset grouping with multi-layer slicing when TASGroupedPodSetSlicing is disabled",
    ),
    pytest.param(
        {SIZE: "16", SLICE: "cloud.com/rack", REQUIRED: "cloud.com/block"},
        20,
        [],
        id=f"kueue:{UPPER}/valid: PodSetSliceSizeAnnotation within bound",
    ),
    pytest.param(
        {SIZE: "20", SLICE: "cloud.com/rack", REQUIRED: "cloud.com/block"},
        16,
        [("Invalid value", f"{TA}[{SIZE}]")],
        id=f"kueue:{UPPER}/invalid: PodSetSliceSizeAnnotation exceeds pod count",
    ),
    pytest.param(
        {
            REQUIRED: "cloud.com/block",
            LAYERS: '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":4}]',
        },
        32,
        [],
        id=f"kueue:{UPPER}/valid: multi-layer outermost size within bound",
    ),
    pytest.param(
        {
            REQUIRED: "cloud.com/block",
            LAYERS: '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":4}]',
        },
        10,
        [("Invalid value", CONSTRAINTS)],
        id=f"kueue:{UPPER}/invalid: multi-layer outermost size exceeds pod count",
    ),
    pytest.param(
        {
            REQUIRED: "cloud.com/block",
            LAYERS: '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":4}]',
        },
        20,
        [],
        id=f"kueue:{UPPER}/valid: partial slices disabled, multi-layer outermost size does not divide the pod count",
    ),
    pytest.param(
        {REQUIRED: "cloud.com/block", LAYERS: '[{"topology":"cloud.com/rack","size":16}]'},
        20,
        [],
        id=f"kueue:{UPPER}/valid: partial slices, a single layer may leave a partial slice",
    ),
    pytest.param(
        {REQUIRED: "cloud.com/rack", PREFERRED: "cloud.com/block"},
        1,
        [("Invalid value", TA)],
        id="kueue:job webhook tests/invalid TAS request",
    ),
]


@pytest.mark.parametrize(("annotations", "pods", "expected"), KUEUE)
def test_kueue_tas_validation_cases(
    annotations: dict[str, str], pods: int, expected: list[tuple[str, str]]
) -> None:
    assert _tas(annotations, pods) == expected
