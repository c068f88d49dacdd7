"""Volcano PodGroup (`scheduling.volcano.sh`): networkTopology and subGroupPolicy.

Mode enum, tier >= 0, tier and tierName exclusive (job and every subgroup), a subgroup no
wider than its job, minMember >= 0, minResources quantities that parse and are not
negative, subGroupSize >= 1, subgroup names unique.
"""

from __future__ import annotations

from typing import Any

from translations.errors import InvalidSpecError
from translations.quantity import parse_quantity
from translations.volcano import PodGroup
from webhooks.rules import fielderrors as fe
from webhooks.rules._common import (
    INT32_MAX,
    Findings,
    at_most,
    check_network_topology,
    parse_strict,
    resolved_tier,
)
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import Decision


def validate(obj: Any, state: ClusterState) -> Decision:
    pg, errors = parse_strict(PodGroup, obj)
    if pg is None:
        return Decision.of(errors)
    out = Findings()
    spec = pg.spec
    out.errors += at_most("spec.minMember", spec.min_member, INT32_MAX)
    for task, count in (spec.min_task_member or {}).items():
        path = f"spec.minTaskMember[{task}]"
        if count < 0:
            out.errors.append(fe.invalid(path, count, "must be greater than or equal to 0"))
        out.errors += at_most(path, count, INT32_MAX)
    for resource, quantity in (spec.min_resources or {}).items():
        path = f"spec.minResources[{resource}]"
        try:
            if parse_quantity(quantity, field=path) < 0:
                out.errors.append(fe.invalid(path, quantity, "must be greater than or equal to 0"))
        except InvalidSpecError as exc:
            out.errors += fe.from_spec_errors(exc)
    check_network_topology(spec.network_topology, "spec.networkTopology", state, out)
    job_tier = resolved_tier(spec.network_topology, state)
    names: set[str] = set()
    for i, sub in enumerate(spec.sub_group_policy or []):
        base = f"spec.subGroupPolicy[{i}]"
        if sub.name is not None:
            if sub.name in names:
                out.errors.append(fe.duplicate(f"{base}.name", sub.name))
            names.add(sub.name)
        out.errors += at_most(f"{base}.subGroupSize", sub.sub_group_size, INT32_MAX)
        out.errors += at_most(f"{base}.minSubGroups", sub.min_sub_groups, INT32_MAX)
        nt = sub.network_topology
        before = len(out.errors)
        check_network_topology(nt, f"{base}.networkTopology", state, out)
        sub_tier = resolved_tier(nt, state)
        if (
            nt is None
            or len(out.errors) > before
            or job_tier is None
            or sub_tier is None
            or sub_tier <= job_tier
        ):
            continue
        if nt.highest_tier_allowed is not None:
            out.errors.append(
                fe.invalid(
                    f"{base}.networkTopology.highestTierAllowed",
                    sub_tier,
                    f"must be less than or equal to the job's tier (spec.networkTopology: {job_tier})",
                )
            )
        else:
            out.errors.append(
                fe.invalid(
                    f"{base}.networkTopology.highestTierName",
                    nt.highest_tier_name,
                    f"names tier {sub_tier}, above the job's tier (spec.networkTopology: {job_tier})",
                )
            )
    return Decision.of(out.errors, out.warnings)
