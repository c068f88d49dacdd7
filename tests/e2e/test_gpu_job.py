"""The GPU dialect end to end: `topobridge run` against kube-apiserver 1.20.2 (with its Job
controller), GPU nodes as API objects, the kubelet stand-in running what is bound."""

from __future__ import annotations

from typing import Any

import pytest

from controller.errors import ApiError
from controller.kube import Kube
from controller.resources import JOBS
from e2e import local

pytestmark = pytest.mark.integration

G = "gpu.topology/"


def seed_job(
    namespace: str, annotations: dict[str, str], *, name: str = "distributed-training"
) -> dict[str, Any]:
    """The seed's distributed-training Job (schedulerName: topobridge's)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "template": {
                "metadata": {"labels": {"job-name": name}},
                "spec": {
                    "schedulerName": "topobridge",
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {"matchLabels": {"job-name": name}},
                                    "topologyKey": "kubernetes.io/hostname",
                                }
                            ]
                        }
                    },
                    "containers": [
                        {
                            "name": "trainer",
                            "image": "busybox",
                            "command": ["sleep", "365d"],
                            "resources": {
                                "limits": {"nvidia.com/gpu": "4"},
                                "requests": {"nvidia.com/gpu": "4", "cpu": "16", "memory": "64Gi"},
                            },
                        }
                    ],
                    "restartPolicy": "Never",
                },
            },
        },
    }


async def test_the_running_webhook_denies_a_bad_gpu_annotation(
    topobridge: local.TopobridgeState, admin: Kube, make_namespace: Any
) -> None:
    namespace = await make_namespace("e2e-gpu-webhook")
    bad = seed_job(
        namespace, {f"{G}multi-node-policy": "pack", f"{G}max-nodes": "0", f"{G}require-nvlink": "yes"}
    )
    with pytest.raises(ApiError) as denied:
        await admin.create(JOBS, bad)
    message = str(denied.value)
    assert "jobs.validate.topobridge.io" in message
    assert (
        f'metadata.annotations[{G}max-nodes]: Invalid value: "0": must be a decimal integer from 1 to 2147483647'
        in message
    )
    assert f'metadata.annotations[{G}require-nvlink]: Unsupported value: "yes"' in message
    good = seed_job(namespace, {f"{G}multi-node-policy": "pack", f"{G}max-nodes": "2"})
    good["spec"]["parallelism"] = 0  # admitted, but no pod to schedule in this test
    created = await admin.create(JOBS, good)
    assert created["metadata"]["name"] == "distributed-training"
