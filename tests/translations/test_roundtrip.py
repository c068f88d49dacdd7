"""Every model round-trips: parse -> to_dict gives back exactly what was read, unknown fields included.

The examples below set every field of every model in the foreign-schema modules (a test
checks that, so a new field without an example fails here), plus fields no model knows at
several depths, the way a newer upstream would send them.
"""

from __future__ import annotations

import copy
import json
import types
import typing
from typing import Any

import pytest
from pydantic import BaseModel

from translations import _base, core, koordinator, lws, schedplugins, volcano, workload
from translations._base import KubeModel, TypedObject

FOREIGN_SCHEMA_MODULES = (_base, core, volcano, lws, koordinator, schedplugins, workload)

META: dict[str, Any] = {
    "name": "obj",
    "generateName": "obj-",
    "namespace": "team-a",
    "uid": "0b5e7a52-5d1c-4b4e-9d1a-3f2c7f2f6c11",
    "resourceVersion": "4711",
    "generation": 3,
    "labels": {"app": "train"},
    "annotations": {"note": "kept"},
    "ownerReferences": [
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "name": "llm",
            "uid": "7d0f6c1e-0000-4000-8000-000000000001",
            "controller": True,
            "blockOwnerDeletion": True,
            "futureOwnerField": "x",
        }
    ],
    "finalizers": ["topobridge.io/cleanup"],
    "creationTimestamp": "2026-08-01T10:00:00Z",
    "deletionTimestamp": "2026-08-01T11:00:00Z",
    "managedFields": [{"manager": "kubectl", "operation": "Update"}],
}
SELECTOR: dict[str, Any] = {
    "matchLabels": {"role": "worker"},
    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"], "futureExprField": 1}],
}
CONTAINER: dict[str, Any] = {
    "name": "main",
    "image": "registry.example/train:1",
    "resources": {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"nvidia.com/gpu": 8},
        "claims": [],
    },
    "restartPolicy": "Always",
    "ports": [
        {"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1", "protocol": "TCP", "name": "http"}
    ],
}

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": META,
    "spec": {
        "nodeName": "node-1",
        "schedulerName": "topobridge",
        "priority": 1000,
        "priorityClassName": "high",
        "preemptionPolicy": "PreemptLowerPriority",
        "nodeSelector": {"pool": "gpu"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}],
                            "matchFields": [
                                {"key": "metadata.name", "operator": "NotIn", "values": ["node-9"]}
                            ],
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 20,
                        "preference": {
                            "matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]
                        },
                    }
                ],
            },
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": SELECTOR,
                        "namespaces": ["team-a"],
                        "namespaceSelector": {"matchLabels": {"team": "a"}},
                        "topologyKey": "topology.kubernetes.io/zone",
                        "matchLabelKeys": ["pod-template-hash"],
                        "mismatchLabelKeys": ["tenant"],
                    }
                ],
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}
                ],
            },
            "podAntiAffinity": {"futureRule": True},
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": SELECTOR,
                "minDomains": 2,
                "nodeAffinityPolicy": "Honor",
                "nodeTaintsPolicy": "Ignore",
                "matchLabelKeys": ["pod-template-hash"],
            }
        ],
        "tolerations": [
            {
                "key": "gpu",
                "operator": "Equal",
                "value": "yes",
                "effect": "NoExecute",
                "tolerationSeconds": 30,
            }
        ],
        "containers": [CONTAINER],
        "initContainers": [{"name": "init", "resources": {"requests": {"cpu": 0.25}}}],
        "overhead": {"cpu": "100m"},
        "terminationGracePeriodSeconds": 30,
        "volumes": [{"name": "scratch", "emptyDir": {}}],
        "schedulingGates": [{"name": "example.com/quota"}],
        "workloadRef": {"name": "train", "podGroup": "workers", "podGroupReplicaKey": "r0"},
        "schedulingGroup": {"podGroupName": "train-workers", "futureGroupField": 1},
        "resourceClaims": [
            {"name": "gpu", "resourceClaimName": "gpu-claim"},
            {"name": "nic", "resourceClaimTemplateName": "nic-template"},
        ],
        "resources": {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "4"}},
    },
    "status": {
        "phase": "Running",
        "conditions": [
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": "topobridge: preempting to accommodate higher priority pods",
                "lastTransitionTime": "2026-08-01T10:05:00Z",
                "lastProbeTime": None,
            }
        ],
        "nominatedNodeName": "node-2",
        "startTime": "2026-08-01T10:01:00Z",
        "podIP": "10.1.2.3",
        "containerStatuses": [{"name": "main", "allocatedResources": {"cpu": "500m"}, "ready": True}],
    },
}

NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {**META, "namespace": None},
    "spec": {
        "unschedulable": False,
        "taints": [
            {"key": "gpu", "value": "yes", "effect": "NoSchedule", "timeAdded": "2026-08-01T10:00:00Z"}
        ],
        "podCIDR": "10.1.0.0/24",
    },
    "status": {
        "allocatable": {"cpu": "31500m", "memory": "250Gi", "pods": "110", "nvidia.com/gpu": "8"},
        "capacity": {"cpu": 32, "memory": "256Gi"},
        "conditions": [{"type": "Ready", "status": "True"}],
        "nodeInfo": {"kubeletVersion": "v1.20.2"},
    },
}

PRIORITY_CLASS: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "high"},
    "value": 1000,
    "globalDefault": False,
    "preemptionPolicy": "Never",
    "description": "Training jobs that may preempt batch work.",
}

NAMESPACE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": "team-a", "labels": {"team": "a"}},
    "spec": {"finalizers": ["kubernetes"]},
    "status": {"phase": "Active"},
}

PDB: dict[str, Any] = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": META,
    "spec": {
        "selector": SELECTOR,
        "minAvailable": "50%",
        "maxUnavailable": 1,
        "unhealthyPodEvictionPolicy": "Always",
    },
    "status": {
        "disruptionsAllowed": 1,
        "currentHealthy": 3,
        "desiredHealthy": 2,
        "expectedPods": 4,
        "observedGeneration": 3,
    },
}

JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": META,
    "spec": {
        "parallelism": 2,
        "completions": 2,
        "completionMode": "Indexed",
        "backoffLimit": 3,
        "suspend": False,
        "template": {
            "metadata": {"annotations": {"gpu.topology/max-nodes": "2"}},
            "spec": {"containers": [{"name": "trainer", "image": "trainer:1"}], "restartPolicy": "Never"},
        },
    },
    "status": {"active": 2, "startTime": "2026-08-01T10:00:00Z"},
}

VOLCANO_PODGROUP: dict[str, Any] = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "PodGroup",
    "metadata": META,
    "spec": {
        "minMember": 8,
        "minTaskMember": {"leader": 1, "worker": 7},
        "queue": "research",
        "priorityClassName": "high",
        "minResources": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": 64},
        "networkTopology": {"mode": "soft", "highestTierAllowed": 2},
        "subGroupPolicy": [
            {
                "name": "replica",
                "networkTopology": {"mode": "hard", "highestTierName": "block"},
                "subGroupSize": 4,
                "minSubGroups": 2,
                "labelSelector": SELECTOR,
                "matchLabelKeys": ["training.example/replica"],
                "futureSubGroupField": [1, 2],
            }
        ],
        "futureSpecField": {"nested": True},
    },
    "status": {
        "phase": "Inqueue",
        "conditions": [
            {
                "type": "Unschedulable",
                "status": "True",
                "transitionID": "b1d4c1c2-1111-4222-8333-444455556666",
                "lastTransitionTime": "2026-08-01T10:01:00Z",
                "reason": "NotEnoughResources",
                "message": "8/8 tasks in gang unschedulable",
            }
        ],
        "running": 0,
        "succeeded": 0,
        "failed": 0,
    },
}

HYPERNODE: dict[str, Any] = {
    "apiVersion": "topology.volcano.sh/v1alpha1",
    "kind": "HyperNode",
    "metadata": {"name": "s0-b0", "labels": {"spine": "s0"}},
    "spec": {
        "tier": 1,
        "tierName": "block",
        "members": [
            {"type": "Node", "selector": {"exactMatch": {"name": "node-0"}}},
            {"type": "Node", "selector": {"regexMatch": {"pattern": "^node-[12]$"}}},
            {"type": "Node", "selector": {"labelMatch": SELECTOR}, "futureMemberField": "x"},
        ],
    },
    "status": {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "observedGeneration": 1,
                "lastTransitionTime": "2026-08-01T10:00:00Z",
                "reason": "MembersResolved",
                "message": "3 nodes",
            }
        ],
        "nodeCount": 3,
    },
}

LEADER_WORKER_SET: dict[str, Any] = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": META,
    "spec": {
        "replicas": 2,
        "leaderWorkerTemplate": {
            "leaderTemplate": {
                "metadata": {"labels": {"role": "leader"}},
                "spec": {"containers": [CONTAINER]},
            },
            "workerTemplate": {
                "metadata": {"labels": {"role": "worker"}},
                "spec": {"containers": [CONTAINER]},
            },
            "size": 4,
            "restartPolicy": "RecreateGroupAfterStart",
            "subGroupPolicy": {"subGroupPolicyType": "LeaderExcluded", "subGroupSize": 2},
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
            ],
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
        },
        "rolloutStrategy": {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"partition": 0, "maxUnavailable": "25%", "maxSurge": 1},
        },
        "startupPolicy": "LeaderReady",
        "networkConfig": {"subdomainPolicy": "UniquePerReplica"},
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1, "highestTierName": None},
    },
    "status": {
        "conditions": [{"type": "Available", "status": "True", "reason": "AllGroupsReady", "message": "ok"}],
        "readyReplicas": 2,
        "updatedReplicas": 2,
        "replicas": 2,
        "hpaPodSelector": "leaderworkerset.sigs.k8s.io/name=llm",
        "observedGeneration": 3,
    },
}

CLUSTER_NETWORK_TOPOLOGY: dict[str, Any] = {
    "apiVersion": "scheduling.koordinator.sh/v1alpha1",
    "kind": "ClusterNetworkTopology",
    "metadata": {"name": "default"},
    "spec": {
        "networkTopologySpec": [
            {"topologyLayer": "SpineLayer", "labelKey": ["network.topology.example/spine"]},
            {"topologyLayer": "BlockLayer", "parentTopologyLayer": "SpineLayer", "labelKey": ["block"]},
            {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
        ]
    },
    "status": {
        "detailStatus": [
            {
                "topologyInfo": {"topologyLayer": "ClusterTopologyLayer", "topologyName": ""},
                "childTopologyLayer": "SpineLayer",
                "childTopologyNames": ["s0", "s1"],
                "nodeNum": 12,
            },
            {
                "topologyInfo": {"topologyLayer": "SpineLayer", "topologyName": "s0"},
                "parentTopologyInfo": {"topologyLayer": "ClusterTopologyLayer", "topologyName": ""},
                "childTopologyLayer": "BlockLayer",
                "childTopologyNames": ["b0", "b1"],
                "nodeNum": 6,
                "futureDetail": 0,
            },
        ]
    },
}

SIGS_PODGROUP: dict[str, Any] = {
    "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
    "kind": "PodGroup",
    "metadata": META,
    "spec": {"minMember": 4, "minResources": {"cpu": "16"}, "scheduleTimeoutSeconds": 300},
    "status": {
        "phase": "Scheduling",
        "occupiedBy": "team-a/llm",
        "scheduled": 2,
        "running": 1,
        "succeeded": 0,
        "failed": 0,
        "scheduleStartTime": "2026-08-01T10:00:00Z",
    },
}

X_PODGROUP: dict[str, Any] = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "PodGroup",
    "metadata": META,
    "spec": {"minMember": 2, "minResources": {"cpu": 4, "memory": "8Gi"}, "scheduleTimeoutSeconds": 60},
    "status": {
        "phase": "Running",
        "occupiedBy": "team-a/job",
        "running": 2,
        "succeeded": 0,
        "failed": 0,
        "scheduleStartTime": "2026-08-01T10:00:00Z",
    },
}

K8S = "scheduling.k8s.io"
GROUP_FIELDS: dict[str, Any] = {
    "schedulingPolicy": {"gang": {"minCount": 4, "futureGangField": 1}},
    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]},
    "resourceClaims": [
        {"name": "gpus", "resourceClaimName": "gpu-claim"},
        {"name": "nics", "resourceClaimTemplateName": "nic-template"},
    ],
    "priorityClassName": "high",
    "priority": 1000,
}
V1BETA1_GROUP_FIELDS: dict[str, Any] = {
    **GROUP_FIELDS,
    "disruptionMode": {"single": {}},
    "preemptionPolicy": "Never",
}
CONDITIONS: dict[str, Any] = {
    "conditions": [
        {
            "type": "PodGroupInitiallyScheduled",
            "status": "True",
            "reason": "Scheduled",
            "message": "all pods placed",
            "lastTransitionTime": "2026-08-01T10:05:00Z",
            "observedGeneration": 1,
        }
    ]
}
CONTROLLER_REF: dict[str, Any] = {"apiGroup": "batch", "kind": "Job", "name": "train"}
WORKLOAD_V1ALPHA1: dict[str, Any] = {
    "apiVersion": f"{K8S}/v1alpha1",
    "kind": "Workload",
    "metadata": META,
    "spec": {
        "controllerRef": CONTROLLER_REF,
        "podGroups": [
            {"name": "driver", "policy": {"basic": {}}},
            {"name": "workers", "policy": {"gang": {"minCount": 4}}},
        ],
    },
}
WORKLOAD_V1ALPHA2: dict[str, Any] = {
    "apiVersion": f"{K8S}/v1alpha2",
    "kind": "Workload",
    "metadata": META,
    "spec": {
        "controllerRef": CONTROLLER_REF,
        "podGroupTemplates": [{"name": "workers", **GROUP_FIELDS, "disruptionMode": "PodGroup"}],
    },
}
PODGROUP_V1ALPHA2: dict[str, Any] = {
    "apiVersion": f"{K8S}/v1alpha2",
    "kind": "PodGroup",
    "metadata": META,
    "spec": {
        "podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}},
        **GROUP_FIELDS,
        "disruptionMode": "Pod",
    },
    "status": CONDITIONS,
}
COMPOSITE_FIELDS: dict[str, Any] = {
    "schedulingPolicy": {"gang": {"minGroupCount": 2}},
    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
    "disruptionMode": {"all": {}},
    "priorityClassName": "high",
    "priority": 1000,
    "preemptionPolicy": "PreemptLowerPriority",
}
WORKLOAD: dict[str, Any] = {
    "apiVersion": f"{K8S}/v1beta1",
    "kind": "Workload",
    "metadata": META,
    "spec": {
        "controllerRef": CONTROLLER_REF,
        "podGroupTemplates": [{"name": "workers", **V1BETA1_GROUP_FIELDS}],
        "compositePodGroupTemplates": [
            {
                "name": "replicas",
                **COMPOSITE_FIELDS,
                "podGroupTemplates": [{"name": "leader", "schedulingPolicy": {"basic": {}}}],
                "compositePodGroupTemplates": [
                    {"name": "inner", "schedulingPolicy": {"basic": {}}, "podGroupTemplates": []}
                ],
            }
        ],
    },
}
PODGROUP: dict[str, Any] = {
    "apiVersion": f"{K8S}/v1beta1",
    "kind": "PodGroup",
    "metadata": META,
    "spec": {
        "parentCompositePodGroupName": "replicas-0",
        "workloadRef": {"workloadName": "train", "templateName": "workers"},
        **V1BETA1_GROUP_FIELDS,
    },
    "status": CONDITIONS,
}
COMPOSITE_PODGROUP: dict[str, Any] = {
    "apiVersion": f"{K8S}/v1alpha3",
    "kind": "CompositePodGroup",
    "metadata": META,
    "spec": {
        "parentCompositePodGroupName": "top",
        "workloadRef": {"workloadName": "train", "templateName": "replicas"},
        **COMPOSITE_FIELDS,
    },
    "status": CONDITIONS,
}

EXAMPLES: list[tuple[type[TypedObject], dict[str, Any]]] = [
    (core.Pod, POD),
    (core.Node, NODE),
    (core.PriorityClass, PRIORITY_CLASS),
    (core.Namespace, NAMESPACE),
    (core.PodDisruptionBudget, PDB),
    (core.Job, JOB),
    (volcano.PodGroup, VOLCANO_PODGROUP),
    (volcano.HyperNode, HYPERNODE),
    (lws.LeaderWorkerSet, LEADER_WORKER_SET),
    (koordinator.ClusterNetworkTopology, CLUSTER_NETWORK_TOPOLOGY),
    (koordinator.SigsPodGroup, SIGS_PODGROUP),
    (schedplugins.XPodGroup, X_PODGROUP),
    (workload.WorkloadV1alpha1, WORKLOAD_V1ALPHA1),
    (workload.WorkloadV1alpha2, WORKLOAD_V1ALPHA2),
    (workload.PodGroupV1alpha2, PODGROUP_V1ALPHA2),
    (workload.Workload, WORKLOAD),
    (workload.PodGroup, PODGROUP),
    (workload.ServedPodGroup, PODGROUP),
    (workload.CompositePodGroup, COMPOSITE_PODGROUP),
]


def _with_unknown_top_level(raw: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    out["futureTopLevel"] = {"list": [1, "two", None], "flag": False}
    return out


@pytest.mark.parametrize(("model", "raw"), EXAMPLES, ids=lambda v: v.__name__ if isinstance(v, type) else "")
def test_parse_then_dump_is_the_identity(model: type[TypedObject], raw: dict[str, Any]) -> None:
    raw = _with_unknown_top_level(raw)
    before = copy.deepcopy(raw)
    parsed = model.parse(raw)
    assert parsed.to_dict() == raw
    assert raw == before, "parsing must not modify its input"


@pytest.mark.parametrize(("model", "raw"), EXAMPLES, ids=lambda v: v.__name__ if isinstance(v, type) else "")
def test_round_trip_through_json_is_stable(model: type[TypedObject], raw: dict[str, Any]) -> None:
    once = model.parse(raw).to_dict()
    twice = model.parse(json.loads(json.dumps(once))).to_dict()
    assert twice == once == raw


@pytest.mark.parametrize(("model", "raw"), EXAMPLES, ids=lambda v: v.__name__ if isinstance(v, type) else "")
def test_unknown_fields_survive_a_change_to_a_known_field(
    model: type[TypedObject], raw: dict[str, Any]
) -> None:
    # A controller reads, changes one field and writes back: nothing it does not model may vanish.
    parsed = model.parse(_with_unknown_top_level(raw))
    parsed.metadata.labels = {**(parsed.metadata.labels or {}), "touched": "yes"}
    dumped = parsed.to_dict()
    assert dumped["futureTopLevel"] == {"list": [1, "two", None], "flag": False}
    assert dumped["metadata"]["labels"]["touched"] == "yes"
    assert {k: v for k, v in dumped.items() if k != "metadata"} == {
        k: v for k, v in _with_unknown_top_level(raw).items() if k != "metadata"
    }


# --- coverage: the examples above set every field of every model ---------------------------------


def _models_in(annotation: Any) -> set[type[KubeModel]]:
    found: set[type[KubeModel]] = set()
    if isinstance(annotation, type) and issubclass(annotation, KubeModel):
        found.add(annotation)
    for arg in typing.get_args(annotation):
        found |= _models_in(arg)
    return found


def _reachable(model: type[KubeModel]) -> set[type[KubeModel]]:
    seen: set[type[KubeModel]] = set()
    todo = [model]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        for info in m.model_fields.values():
            todo.extend(_models_in(info.annotation))
    return seen


def _fields_set(value: Any, out: set[tuple[type[BaseModel], str]]) -> None:
    if isinstance(value, BaseModel):
        for name in value.model_fields_set:
            if name in type(value).model_fields:
                out.add((type(value), name))
                _fields_set(getattr(value, name), out)
    elif isinstance(value, list | tuple):
        for item in value:
            _fields_set(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _fields_set(item, out)


def _defined_models() -> set[type[KubeModel]]:
    out = set()
    for module in FOREIGN_SCHEMA_MODULES:
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, KubeModel) and obj.__module__ == module.__name__:
                out.add(obj)
    # Bases (KubeModel, TypedObject, the fields a template and its group share): their fields
    # are checked through every model built on them.
    bases = {base for m in out for base in m.__mro__[1:]}
    return out - {KubeModel, TypedObject} - bases


def test_examples_cover_every_model() -> None:
    reachable: set[type[KubeModel]] = set()
    for model, _ in EXAMPLES:
        reachable |= _reachable(model)
    missing = sorted(m.__qualname__ for m in _defined_models() - reachable)
    assert not missing, f"models with no round-trip example: {missing}"


def test_examples_set_every_field_of_every_model() -> None:
    covered: set[tuple[type[BaseModel], str]] = set()
    for model, raw in EXAMPLES:
        _fields_set(model.parse(raw), covered)
    wanted = {(m, name) for model, _ in EXAMPLES for m in _reachable(model) for name in m.model_fields}
    missing = sorted(f"{m.__qualname__}.{name}" for m, name in wanted - covered)
    assert not missing, f"fields no round-trip example sets: {missing}"


def test_the_coverage_check_would_notice_a_missing_field() -> None:
    covered: set[tuple[type[BaseModel], str]] = set()
    trimmed = copy.deepcopy(HYPERNODE)
    del trimmed["spec"]["tierName"]
    _fields_set(volcano.HyperNode.parse(trimmed), covered)
    assert (volcano.HyperNodeSpec, "tier_name") not in covered
    assert (volcano.HyperNodeSpec, "tier") in covered


def test_union_types_are_unwrapped_when_finding_models() -> None:
    assert _models_in(list[volcano.SubGroupPolicy] | None) == {volcano.SubGroupPolicy}
    assert _models_in(types.NoneType) == set()
