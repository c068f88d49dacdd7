"""Volcano Job (`batch.volcano.sh/v1alpha1`): what `translations.volcano_job.job_problems` finds
(Volcano's own webhook rules for the gang and the topology, shared with the translations), a
tierName resolved through the cluster's HyperNodes, plus warnings: tiers and tier names the
cluster does not have, `minPartitions` above `totalPartitions` (a gang that never starts), and
Kueue topology annotations on a task's template (Kueue manages no Volcano Job: they do nothing)."""

from __future__ import annotations

from typing import Any

from translations import volcano_job
from translations.volcano_job import VolcanoJob
from webhooks.rules import fielderrors as fe
from webhooks.rules import kueue as kueue_rule
from webhooks.rules._common import Findings, parse_strict, tier_of_name, topology_warnings
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import Decision


def validate(obj: Any, state: ClusterState) -> Decision:
    job, errors = parse_strict(VolcanoJob, obj)
    if job is None:
        return Decision.of(errors)
    problems = volcano_job.job_problems(job.spec, tier_of_name=lambda name: tier_of_name(state, name))
    out = Findings(errors=[fe.from_spec_error(p) for p in problems])
    topology_warnings(job.spec.network_topology, "spec.networkTopology", state, out)
    for i, task in enumerate(job.spec.tasks or []):
        base = f"spec.tasks[{i}]"
        policy = task.partition_policy
        if policy is not None:
            topology_warnings(policy.network_topology, f"{base}.partitionPolicy.networkTopology", state, out)
            if (policy.min_partitions or 0) > policy.total_partitions:
                out.warnings.append(
                    f"{base}.partitionPolicy.minPartitions: {policy.min_partitions} is above totalPartitions "
                    f"({policy.total_partitions}): the job can never start"
                )
        template = task.template.metadata if task.template is not None else None
        out.warnings += kueue_rule.ignored_annotations(template, f"{base}.template.metadata.annotations")
    return Decision.of(out.errors, out.warnings)
