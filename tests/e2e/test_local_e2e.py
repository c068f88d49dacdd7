"""The end-to-end scenarios (e2e/scenarios/*.yaml) on the local target: kube-apiserver 1.20.2,
topobridge as the only scheduler, no Volcano. The same files drive the kind suite."""

from __future__ import annotations

from typing import Any

import pytest

from controller.errors import ApiError
from controller.kube import Kube
from controller.resources import VOLCANO_PODGROUPS
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
    namespace = await make_namespace("e2e-webhook")
    bad = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "bad", "namespace": namespace},
        "spec": {"minMember": 2, "networkTopology": {"mode": "hrad", "highestTierAllowed": 1}},
    }
    with pytest.raises(ApiError) as denied:
        await admin.create(VOLCANO_PODGROUPS, bad)
    assert 'spec.networkTopology.mode: Unsupported value: "hrad"' in str(denied.value)
    good = {**bad, "spec": {"minMember": 2, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}}
    created = await admin.create(VOLCANO_PODGROUPS, good)
    assert created["spec"]["networkTopology"]["mode"] == "hard"
