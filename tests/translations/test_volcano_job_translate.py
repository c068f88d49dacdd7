"""Volcano Job -> the PodGroup Volcano's job controller makes, and on to Koordinator; an unknown
tierName follows Volcano (no limit, a warning)."""

from __future__ import annotations

from typing import Any

import pytest

from translations import constraints, volcano
from translations import volcano_job_to_podgroup as vj2pg
from translations import volcano_to_koordinator as v2k
from translations.core import PriorityClass
from translations.errors import InvalidSpecError, NotExpressibleError
from translations.topology import from_hypernodes
from translations.volcano_job import VolcanoJob


def _task(name: str, replicas: int, cpu: str = "2", **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": name, "resources": {"requests": {"cpu": cpu, "memory": "2Gi"}}}]
    }
    if "priority" in extra:
        spec["priorityClassName"] = extra.pop("priority")
    return {"name": name, "replicas": replicas, "template": {"spec": spec}, **extra}


def _job(*tasks: dict[str, Any], uid: str | None = "u1", **spec: Any) -> VolcanoJob:
    meta: dict[str, Any] = {"name": "train", "namespace": "ml", "labels": {"team": "a"}}
    if uid:
        meta["uid"] = uid
    return VolcanoJob.parse(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": meta,
            "spec": {**spec, "tasks": list(tasks)},
        }
    )


PR4675 = _job(
    _task(
        "task",
        6,
        partitionPolicy={
            "totalPartitions": 2,
            "partitionSize": 3,
            "minPartitions": 2,
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        },
    ),
    minAvailable=6,
    networkTopology={"mode": "hard", "highestTierAllowed": 2},
)


def test_the_pod_group_volcano_makes() -> None:
    result = vj2pg.translate(PR4675)
    assert result.pod_group.to_dict() == {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": "train-u1",
            "namespace": "ml",
            "labels": {"team": "a"},
            "ownerReferences": [
                {
                    "apiVersion": "batch.volcano.sh/v1alpha1",
                    "kind": "Job",
                    "name": "train",
                    "uid": "u1",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "minMember": 6,
            "minTaskMember": {"task": 6},
            "queue": "default",
            "minResources": {"cpu": "12", "memory": "12Gi"},
            "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            "subGroupPolicy": [
                {
                    "name": "task",
                    "subGroupSize": 3,
                    "minSubGroups": 2,
                    "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "task"}},
                    "matchLabelKeys": ["volcano.sh/partition-id"],
                    "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                }
            ],
        },
    }
    assert result.report.defaulted == ["queue = default"]
    assert result.report.refused == []


def test_without_a_uid_the_pod_group_is_named_after_the_job() -> None:
    result = vj2pg.translate(_job(_task("worker", 2), uid=None))
    assert result.pod_group.name == "train"
    assert "ownerReferences" not in result.pod_group.to_dict()["metadata"]
    assert any("has no metadata.uid" in line for line in result.report.defaulted)


@pytest.mark.parametrize(
    ("tasks", "min_available", "classes", "expected"),
    [
        pytest.param(
            [_task("a", 2, "1"), _task("b", 3, "2")],
            None,
            {},
            {"cpu": "8", "memory": "10Gi"},
            id="all-replicas",
        ),
        pytest.param(
            [_task("a", 2, "1"), _task("b", 3, "2", priority="high")],
            2,
            {"high": 100},
            {"cpu": "4", "memory": "4Gi"},
            id="first-two-pods-by-priority",
        ),
        pytest.param(
            [_task("a", 4, "1", minAvailable=1), _task("b", 4, "2", minAvailable=1)],
            4,
            {},
            {"cpu": "5", "memory": "8Gi"},
            id="min-available-then-spare-replicas",
        ),
    ],
)
def test_min_resources_follow_volcanos_controller(
    tasks: list[dict[str, Any]], min_available: int | None, classes: dict[str, int], expected: dict[str, str]
) -> None:
    job = _job(*tasks, **({"minAvailable": min_available} if min_available else {}))
    pcs = [PriorityClass.parse({"metadata": {"name": n}, "value": v}) for n, v in classes.items()]
    assert vj2pg.translate(job, priority_classes=pcs).pod_group.spec.min_resources == expected


def test_a_bad_job_raises_every_problem() -> None:
    job = _job(_task("w", 5, partitionPolicy={"totalPartitions": 2, "partitionSize": 3}), minAvailable=9)
    with pytest.raises(InvalidSpecError) as exc:
        vj2pg.translate(job)
    assert [p.field_path for p in exc.value.all] == ["spec.tasks[0].replicas", "spec.minAvailable"]


def _hypernode(name: str, tier: int, tier_name: str) -> volcano.HyperNode:
    return volcano.HyperNode.parse(
        {
            "metadata": {"name": name},
            "spec": {
                "tier": tier,
                "tierName": tier_name,
                "members": [{"type": "Node", "selector": {"exactMatch": {"name": "n0"}}}],
            },
        }
    )


def test_an_unknown_tier_name_means_no_limit_with_a_warning() -> None:
    tree = from_hypernodes([_hypernode("b0", 1, "block")], [])
    job = _job(_task("w", 2), networkTopology={"mode": "hard", "highestTierName": "rack"})
    result = vj2pg.translate(job, tree=tree)
    assert result.pod_group.spec.network_topology == volcano.NetworkTopologySpec(
        mode="hard", highest_tier_name="rack"
    )
    assert result.report.defaulted[-1] == (
        'spec.networkTopology.highestTierName: "rack" names no HyperNode tier (known: block): as in Volcano, no tier '
        "limit applies"
    )
    warnings: list[str] = []
    spec = volcano.NetworkTopologySpec(mode="hard", highest_tier_name="rack")
    assert constraints.from_volcano(spec, tree, warnings=warnings) == constraints.TopologyConstraint(
        "hard", None
    )
    assert len(warnings) == 1
    assert constraints.from_volcano(spec, None, warnings=warnings) == constraints.TopologyConstraint(
        "hard", None
    )
    assert len(warnings) == 1, "without HyperNodes there is nothing to warn about"


def test_on_to_koordinator_a_hard_partition_cannot_be_said() -> None:
    partitioned = _task(
        "w",
        4,
        partitionPolicy={
            "totalPartitions": 2,
            "partitionSize": 2,
            "networkTopology": {"highestTierAllowed": 0},
        },
    )
    pod_group = vj2pg.translate(_job(partitioned)).pod_group
    with pytest.raises(NotExpressibleError) as exc:
        v2k.translate(pod_group)
    assert exc.value.field_path == "spec.subGroupPolicy[0].networkTopology"


def test_on_to_koordinator_without_partitions() -> None:
    pod_group = vj2pg.translate(_job(_task("w", 4), minAvailable=4)).pod_group
    result = v2k.translate(pod_group)
    assert result.pod_group.spec.min_member == 4
    assert any("minTaskMember" in line for line in result.report.refused)
