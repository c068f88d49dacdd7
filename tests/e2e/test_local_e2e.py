"""The end-to-end scenarios (e2e/scenarios/*.yaml) on the local target: kube-apiserver 1.20.2,
topobridge as the only scheduler, no Volcano. The same files drive the kind suite."""

from __future__ import annotations

from typing import Any

import pytest

from controller.errors import ApiError
from controller.kube import Kube
from controller.resources import SIGS_PODGROUPS
from e2e import local
from e2e.kubelet import Kubelet
from e2e.scenario import LOCAL, ScenarioRunner, ScenarioSpec, all_scenarios

pytestmark = pytest.mark.integration

LOCAL_SCENARIOS = [s for s in all_scenarios() if LOCAL.name in s.targets]


def test_every_scenario_runs_locally_or_says_why() -> None:
    # Only Volcano's own scheduling is out of reach here; everything else runs on both targets.
    assert {s.name for s in all_scenarios()} - {s.name for s in LOCAL_SCENARIOS} == set()
    assert len(LOCAL_SCENARIOS) >= 4


@pytest.mark.parametrize("spec", LOCAL_SCENARIOS, ids=[s.name for s in LOCAL_SCENARIOS])
async def test_scenario(
    spec: ScenarioSpec, topobridge: local.TopobridgeState, admin: Kube, kubelet: Kubelet
) -> None:
    result = await ScenarioRunner(admin, LOCAL).run(spec)
    assert result.ok, result.report() + "\n--- topobridge log (tail) ---\n" + local.log_tail(topobridge, 25)


async def test_the_running_webhook_denies_a_bad_topology(
    topobridge: local.TopobridgeState, admin: Kube, make_namespace: Any
) -> None:
    # A gang annotation: no CRD schema sees inside it, so only topobridge's webhook can refuse it.
    namespace = await make_namespace("e2e-webhook")
    spec_key = "gang.scheduling.koordinator.sh/network-topology-spec"
    bad = {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {
            "name": "bad",
            "namespace": namespace,
            "annotations": {
                spec_key: '{"gatherStrategy": [{"layer": "SpineLayer", "strategy": "MustGathr"}]}'
            },
        },
        "spec": {"minMember": 2},
    }
    with pytest.raises(ApiError) as denied:
        await admin.create(SIGS_PODGROUPS, bad)
    message = str(denied.value)
    assert "validate.topobridge.io" in message
    assert (
        f'metadata.annotations[{spec_key}].gatherStrategy[0].strategy: Unsupported value: "MustGathr"'
        in message
    )
    good = {
        **bad,
        "metadata": {
            **bad["metadata"],
            "annotations": {
                spec_key: '{"gatherStrategy": [{"layer": "SpineLayer", "strategy": "MustGather"}]}'
            },
        },
    }
    created = await admin.create(SIGS_PODGROUPS, good)
    assert created["metadata"]["name"] == "bad"
