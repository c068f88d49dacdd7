"""LeaderWorkerSet: `spec.networkTopology`, and the group shape LWS's own webhook enforces.

Group shape: size >= 1; replicas x size fits int32; with a subGroupPolicy, subGroupSize is
given, >= 1, <= size, and divides size or size-1 (size-1 only, with LeaderExcluded).
"""

from __future__ import annotations

from typing import Any

from translations.lws import LeaderWorkerSet
from webhooks.rules import fielderrors as fe
from webhooks.rules._common import INT32_MAX, Findings, at_most, check_network_topology, parse_strict
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import Decision

TEMPLATE = "spec.leaderWorkerTemplate"


def validate(obj: Any, state: ClusterState) -> Decision:
    lws, errors = parse_strict(LeaderWorkerSet, obj)
    if lws is None:
        return Decision.of(errors)
    out = Findings()
    check_network_topology(lws.spec.network_topology, "spec.networkTopology", state, out)
    _check_group_shape(lws, out)
    return Decision.of(out.errors, out.warnings)


def _check_group_shape(lws: LeaderWorkerSet, out: Findings) -> None:
    tpl = lws.spec.leader_worker_template
    size = tpl.effective_size
    replicas = 1 if lws.spec.replicas is None else lws.spec.replicas
    out.errors += at_most("spec.replicas", lws.spec.replicas, INT32_MAX)
    if size < 1:
        out.errors.append(fe.invalid(f"{TEMPLATE}.size", size, "must be greater than or equal to 1"))
        return
    if size > INT32_MAX:
        out.errors += at_most(f"{TEMPLATE}.size", size, INT32_MAX)
        return
    if replicas <= INT32_MAX and replicas * size > INT32_MAX:
        out.errors.append(
            fe.invalid(
                "spec.replicas", replicas, f"the product of replicas and size must not exceed {INT32_MAX}"
            )
        )
    policy = tpl.sub_group_policy
    if policy is None:
        return
    path = f"{TEMPLATE}.subGroupPolicy.subGroupSize"
    sub = policy.sub_group_size
    if sub is None:
        out.errors.append(fe.required(path, "must be set when subGroupPolicy is given"))
    elif sub < 1:
        out.errors.append(fe.invalid(path, sub, "must be greater than or equal to 1"))
    elif sub > size:
        out.errors.append(fe.invalid(path, sub, f"must not be larger than size ({size})"))
    elif policy.sub_group_policy_type == "LeaderExcluded":
        if (size - 1) % sub:
            out.errors.append(
                fe.invalid(
                    path, sub, f"size-1 ({size - 1}) must be divisible by subGroupSize with LeaderExcluded"
                )
            )
    elif size % sub and (size - 1) % sub:
        out.errors.append(
            fe.invalid(path, sub, f"size ({size}) or size-1 ({size - 1}) must be divisible by subGroupSize")
        )
