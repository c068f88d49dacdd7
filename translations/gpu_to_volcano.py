"""GPU dialect -> Volcano: a Job's `gpu.topology/*` request as a PodGroup and its pod template.

What Volcano can hold, and how:

| GPU dialect                                  | Volcano                                              |
|----------------------------------------------|------------------------------------------------------|
| the Job's pods as one gang                   | PodGroup `<job>`, `minMember` = parallelism (capped by completions); the template gets `scheduling.k8s.io/group-name` and `schedulerName: volcano` |
| every pod on one node (`max-nodes: 1`, or `min-gpus-per-node` >= the Job's GPUs) | `networkTopology` hard, `highestTierAllowed: 0` |
| `pack` (fewest nodes, lowest domain)         | `networkTopology` soft: the lowest domain that fits; `--pack-tier T` makes it hard at tier T (`pack` within a tier) |
| `require-nvlink` / `policy: nvlink`          | required node affinity on the NVLink label (added to every term of the template's) |

Refused (a report line each, the Job keeps its annotations): `max-nodes` > 1 and
`min-gpus-per-node` below the Job's GPUs (Volcano has no node-count limit nor per-node
minimum), `spread` (no one-pod-per-node for a gang: give the template a hostname pod
anti-affinity), `best-fit` is Volcano's own binpack and needs nothing. `single-numa`,
`best-effort`, `spread` as `policy`, and `min-bandwidth` choose GPUs inside a node: the
kubelet's Topology Manager and the device plugin read them from the pods, no scheduler does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from translations import gpu, volcano
from translations.core import Job
from translations.errors import InvalidSpecError
from translations.patches import job_pointed_at
from translations.report import TranslationReport

DEFAULT_SCHEDULER = "volcano"


@dataclass(frozen=True)
class VolcanoJob:
    """The PodGroup, the Job with its template pointed at it, and what was kept or refused."""

    pod_group: volcano.PodGroup
    job: dict[str, Any]
    report: TranslationReport


def translate(
    raw_job: Mapping[str, Any],
    *,
    nvlink_label: str = gpu.NVLINK_LABEL,
    pack_tier: int | None = None,
    scheduler_name: str = DEFAULT_SCHEDULER,
) -> VolcanoJob | None:
    """One Job -> its Volcano PodGroup and template (None: no `gpu.topology/` request).

    Raises InvalidSpecError when the request itself is malformed (every problem at once)."""
    request, problems = gpu.topology_request(dict(raw_job))
    if request is None:
        return None
    if problems:
        first = problems[0]
        raise InvalidSpecError(first.field_path, first.value, first.detail, more=problems[1:])
    job = Job.parse(raw_job)
    workload = gpu.workload_of(dict(raw_job)) or gpu.GpuWorkload(pods=job.gang_size, gpus_per_pod=0)
    report = TranslationReport(f"Job {job.key}", "Volcano")
    spec: dict[str, Any] = {"minMember": workload.pods}
    report.carry(f"the Job's pods as one gang: minMember = {workload.pods} (parallelism)")
    topology = _network_topology(request, workload, pack_tier, report)
    if topology is not None:
        spec["networkTopology"] = topology
    pod_group = volcano.PodGroup.parse(
        {
            "apiVersion": volcano.PODGROUP_API_VERSION,
            "kind": "PodGroup",
            "metadata": {"name": job.name, "namespace": job.namespace},
            "spec": spec,
        }
    )
    out = job_pointed_at(raw_job, job.name, scheduler_name)
    pod_spec = out["spec"]["template"]["spec"]
    report.carry(
        f"pods join the PodGroup ({volcano.GROUP_NAME_ANNOTATION}: {job.name}, schedulerName {scheduler_name})"
    )
    if request.nvlink:
        _require_nvlink(pod_spec, nvlink_label)
        report.carry(
            f"{request.path(gpu.REQUIRE_NVLINK if request.require_nvlink else gpu.POLICY)}: "
            f"required node affinity on {nvlink_label} (not empty, false or 0)"
        )
    for key in request.node_local:
        report.refuse(
            f"{request.path(key)}: chooses GPUs inside a node: left to the kubelet's Topology Manager and the "
            "GPU device plugin (the annotation stays on the Job)"
        )
    return VolcanoJob(pod_group, out, report)


def _network_topology(
    request: gpu.GpuTopologyRequest,
    workload: gpu.GpuWorkload,
    pack_tier: int | None,
    report: TranslationReport,
) -> dict[str, Any] | None:
    one_node = request.max_nodes == 1 or (
        request.min_gpus_per_node is not None
        and workload.total_gpus > 0
        and request.min_gpus_per_node >= workload.total_gpus
    )
    if request.multi_node_policy == "spread":
        report.refuse(
            f'{request.path(gpu.MULTI_NODE_POLICY)}: "spread": Volcano has no one-pod-per-node rule for a gang; '
            "give the pod template a required pod anti-affinity on kubernetes.io/hostname"
        )
    if request.max_nodes is not None and request.max_nodes > 1:
        report.refuse(
            f"{request.path(gpu.MAX_NODES)}: {request.max_nodes}: Volcano has no limit on the nodes a gang uses"
        )
    if request.min_gpus_per_node is not None and not one_node:
        report.refuse(
            f"{request.path(gpu.MIN_GPUS_PER_NODE)}: {request.min_gpus_per_node}: Volcano has no per-node minimum "
            "for a gang"
        )
    if one_node:
        why = gpu.MAX_NODES if request.max_nodes == 1 else gpu.MIN_GPUS_PER_NODE
        report.carry(
            f"{request.path(why)}: every pod on one node: networkTopology hard, highestTierAllowed 0"
        )
        return {"mode": "hard", "highestTierAllowed": 0}
    if request.multi_node_policy == "pack":
        if pack_tier is not None:
            report.carry(
                f'{request.path(gpu.MULTI_NODE_POLICY)}: "pack" within tier {pack_tier}: networkTopology hard, '
                f"highestTierAllowed {pack_tier}"
            )
            return {"mode": "hard", "highestTierAllowed": pack_tier}
        report.carry(
            f'{request.path(gpu.MULTI_NODE_POLICY)}: "pack": networkTopology soft (the lowest domain that fits; '
            "Volcano does not minimise the node count)"
        )
        return {"mode": "soft"}
    if gpu.MULTI_NODE_POLICY in request.given and request.multi_node_policy == "best-fit":
        report.carry(
            f'{request.path(gpu.MULTI_NODE_POLICY)}: "best-fit": Volcano\'s own binpack, nothing to add'
        )
    return None


def _require_nvlink(pod_spec: dict[str, Any], label: str) -> None:
    """AND the NVLink requirement into every required node-affinity term (a new term if none)."""
    requirement = {"key": label, "operator": "NotIn", "values": list(gpu.NOT_NVLINK_VALUES)}
    exists = {"key": label, "operator": "Exists"}
    affinity = pod_spec.setdefault("affinity", {}) or {}
    pod_spec["affinity"] = affinity
    node = affinity.setdefault("nodeAffinity", {}) or {}
    affinity["nodeAffinity"] = node
    required = node.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {}) or {}
    node["requiredDuringSchedulingIgnoredDuringExecution"] = required
    terms = required.get("nodeSelectorTerms") or [{}]
    for term in terms:
        term["matchExpressions"] = [*(term.get("matchExpressions") or []), exists, requirement]
    required["nodeSelectorTerms"] = terms
