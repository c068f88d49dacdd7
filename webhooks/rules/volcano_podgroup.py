"""Volcano PodGroup (`scheduling.volcano.sh`): what `translations.volcano.pod_group_problems`
finds (the one reading of a PodGroup, shared with the translations), a tierName resolved
through the cluster's HyperNodes, plus warnings about tiers and tier names the cluster does
not have."""

from __future__ import annotations

from typing import Any

from translations import volcano
from translations.volcano import PodGroup
from webhooks.rules import fielderrors as fe
from webhooks.rules._common import Findings, parse_strict, tier_of_name, topology_warnings
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import Decision


def validate(obj: Any, state: ClusterState) -> Decision:
    pg, errors = parse_strict(PodGroup, obj)
    if pg is None:
        return Decision.of(errors)
    problems = volcano.pod_group_problems(pg.spec, tier_of_name=lambda name: tier_of_name(state, name))
    out = Findings(errors=[fe.from_spec_error(p) for p in problems])
    topology_warnings(pg.spec.network_topology, "spec.networkTopology", state, out)
    for i, sub in enumerate(pg.spec.sub_group_policy or []):
        topology_warnings(sub.network_topology, f"spec.subGroupPolicy[{i}].networkTopology", state, out)
    return Decision.of(out.errors, out.warnings)
