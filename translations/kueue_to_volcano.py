"""Kueue topology-aware scheduling <-> Volcano, both ways.

Levels and tiers: a Kueue Topology lists node label keys widest first; the lowest level above
`kubernetes.io/hostname` is HyperNode tier 1, each wider level one more, the hostname level is
tier 0 (one node) (`kueue.LevelOrder`). An annotation names a level by its label key, so
translating it needs that order: from a Topology in the input or `--kueue-topology FILE`
(HyperNodes in the input give it the other way: their tiers' label keys are the levels).

| Kueue (pod template annotations)                          | Volcano PodGroup                                        |
|-----------------------------------------------------------|---------------------------------------------------------|
| `podset-required-topology: L`                             | `networkTopology` hard, `highestTierAllowed` tier(L)     |
| `podset-preferred-topology: L`                            | `networkTopology` soft, `highestTierAllowed` tier(L) (Kueue then widens level by level; Volcano's soft preference stops at the tier and spreads over the fewest domains) |
| `podset-unconstrained-topology: true`                     | no `networkTopology`                                     |
| `podset-slice-required-topology: S`, `podset-slice-size: N` | `subGroupPolicy` `slice`: `subGroupSize` N, hard at tier(S), pods grouped by `topobridge.io/subgroup-index` (completion index div N: Kueue's slices are consecutive ranks) |
| `podset-slice-required-topology-constraints` (nested)     | the outermost layer as above; inner layers are refused (Volcano's subgroups do not nest) |
| `podset-group-name`                                       | refused for a batch/v1 Job (one pod set: nothing to pair) |

A batch/v1 Job with TAS annotations becomes a PodGroup named after the Job (`minMember` = the
Job's pods at once) and the Job with its template pointed at it, as the GPU dialect's Jobs do;
the way back reads such a PodGroup and Job and writes the annotations on the template.
HyperNodes become a Kueue Topology `default` and the node labels its levels name.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from translations import constraints, kueue, volcano
from translations import hypernodes as hn
from translations._base import JsonDict
from translations.constraints import TopologyConstraint
from translations.core import Job, Node, Pod
from translations.errors import InvalidSpecError, MissingInputError, raise_all, render_value
from translations.koordinator_to_volcano import SUBGROUP_INDEX_LABEL
from translations.patches import NodeLabelPatch, job_pointed_at
from translations.report import TranslationReport, inline
from translations.topology import TopologyTree

DEFAULT_SCHEDULER = "volcano"
SLICE_POLICY_NAME = "slice"
TOPOLOGY_NAME = "default"


def need_levels(subject: str, order: kueue.LevelOrder | None, why: str) -> kueue.LevelOrder:
    """The level order, or MissingInputError naming what is missing and where to give it."""
    if order is None:
        raise MissingInputError(
            subject,
            "the level order of a Kueue Topology",
            f"{why}; give --kueue-topology FILE (a {kueue.GROUP} Topology) or put the Topology in the input",
        )
    return order


# --- Kueue -> Volcano -------------------------------------------------------------------------


def tier_of(
    request: kueue.TasRequest, key: str, label: str, order: kueue.LevelOrder | None, subject: str
) -> int:
    """A level's tier; the hostname level needs no Topology (it is tier 0)."""
    if label == kueue.HOSTNAME_LABEL:
        return 0
    levels = need_levels(subject, order, f"{request.key_path(key)} names the level {label}, a node label key")
    tier = levels.tier_of(label)
    if tier is None:
        raise InvalidSpecError(
            request.key_path(key),
            label,
            f"Not found: {render_value(label)}: not a level of {levels.describe()}",
        )
    return tier


def constraint_of(
    request: kueue.TasRequest, order: kueue.LevelOrder | None, report: TranslationReport, subject: str
) -> TopologyConstraint | None:
    """required -> hard, preferred -> soft, each at its level's tier; unconstrained -> none."""
    if request.required is not None:
        tier = tier_of(request, kueue.REQUIRED_TOPOLOGY, request.required, order, subject)
        report.carry(f"{request.key_path(kueue.REQUIRED_TOPOLOGY)} {request.required} -> hard at tier {tier}")
        return TopologyConstraint("hard", tier)
    if request.preferred is not None:
        tier = tier_of(request, kueue.PREFERRED_TOPOLOGY, request.preferred, order, subject)
        report.carry(
            f"{request.key_path(kueue.PREFERRED_TOPOLOGY)} {request.preferred} -> soft at tier {tier}"
        )
        report.default(
            "preferred: Kueue widens one level at a time past the preferred level; Volcano's soft preference "
            f"stops at tier {tier} and then spreads over the fewest domains"
        )
        return TopologyConstraint("soft", tier)
    if request.unconstrained:
        report.carry(f"{request.key_path(kueue.UNCONSTRAINED_TOPOLOGY)}: no networkTopology")
    return None


def slice_policy(
    request: kueue.TasRequest,
    pods: int,
    order: kueue.LevelOrder | None,
    report: TranslationReport,
    subject: str,
) -> JsonDict | None:
    """The outermost slice layer as one subGroupPolicy entry (Volcano's subgroups do not nest)."""
    if not request.slices:
        return None
    outer, *inner = request.slices
    key = kueue.SLICE_CONSTRAINTS if request.multi_layer else kueue.SLICE_REQUIRED_TOPOLOGY
    tier = tier_of(request, key, outer.topology, order, subject)
    for layer in inner:
        report.refuse(
            f"{request.key_path(kueue.SLICE_CONSTRAINTS)}: layer {inline({'topology': layer.topology, 'size': layer.size})}: "
            "Volcano's subgroups do not nest; only the outermost layer is carried"
        )
    report.carry(
        f"slices of {outer.size} at {outer.topology} -> subGroupPolicy {SLICE_POLICY_NAME}: subGroupSize {outer.size}, "
        f"hard at tier {tier}, pods grouped by {SUBGROUP_INDEX_LABEL} (= {kueue.COMPLETION_INDEX_LABEL} div {outer.size})"
    )
    report.refuse(
        f"slices: nothing sets {SUBGROUP_INDEX_LABEL} on the pods from their {kueue.COMPLETION_INDEX_LABEL} yet, so "
        "the subgroup binds only the pods that carry it"
    )
    return {
        "name": SLICE_POLICY_NAME,
        "subGroupSize": outer.size,
        "minSubGroups": -(-pods // outer.size),
        "labelSelector": {"matchExpressions": [{"key": SUBGROUP_INDEX_LABEL, "operator": "Exists"}]},
        "matchLabelKeys": [SUBGROUP_INDEX_LABEL],
        "networkTopology": constraints.to_volcano(TopologyConstraint("hard", tier)).to_dict(),
    }


@dataclass(frozen=True)
class VolcanoJob:
    """A batch/v1 Job's PodGroup, the Job pointed at it, and what was carried."""

    pod_group: volcano.PodGroup
    job: dict[str, Any]
    report: TranslationReport


def job_to_volcano(
    raw_job: Mapping[str, Any], order: kueue.LevelOrder | None, *, scheduler_name: str = DEFAULT_SCHEDULER
) -> VolcanoJob | None:
    """A batch/v1 Job's TAS annotations as a Volcano PodGroup (None: the Job has none).
    Raises InvalidSpecError for malformed annotations (Kueue's rules), MissingInputError
    without the level order a level needs."""
    found = kueue.read_pod_sets(raw_job)
    if not found:
        return None
    _, request, problems = found[0]
    raise_all(problems)
    job = Job.parse(raw_job)
    subject = f"Job {job.key}"
    report = TranslationReport(subject, "Volcano")
    spec: JsonDict = {"minMember": job.gang_size}
    report.carry(f"the Job's pods as one gang: minMember = {job.gang_size} (Kueue's pod set count)")
    constraint = constraint_of(request, order, report, subject)
    if constraint is not None:
        spec["networkTopology"] = constraints.to_volcano(constraint).to_dict()
    policy = slice_policy(request, job.gang_size, order, report, subject)
    if policy is not None:
        spec["subGroupPolicy"] = [policy]
    if request.group_name is not None:
        report.refuse(
            f"{request.key_path(kueue.GROUP_NAME)} {request.group_name}: a Job has one pod set, nothing to pair"
        )
    pod_group = volcano.PodGroup.parse(
        {
            "apiVersion": volcano.PODGROUP_API_VERSION,
            "kind": "PodGroup",
            "metadata": {"name": job.name, "namespace": job.namespace},
            "spec": spec,
        }
    )
    report.carry(
        f"pods join the PodGroup ({volcano.GROUP_NAME_ANNOTATION}: {job.name}, schedulerName {scheduler_name})"
    )
    return VolcanoJob(pod_group, job_pointed_at(raw_job, job.name, scheduler_name), report)


def pod_annotations_not_carried(pod: Pod, target: str) -> TranslationReport | None:
    """A refused line per TAS annotation of a Pod: Kueue's plain-pod groups are not translated
    (the pod is translated, if at all, as a member of its Koordinator or Volcano gang)."""
    found = [k for k in kueue.TAS_ANNOTATIONS if k in (pod.metadata.annotations or {})]
    if not found:
        return None
    report = TranslationReport(f"Pod {pod.key}", target)
    for key in found:
        report.refuse(f"metadata.annotations[{key}]: Kueue's plain-pod topology request is not translated")
    return report


# --- Volcano -> Kueue -------------------------------------------------------------------------


@dataclass(frozen=True)
class KueueJob:
    """A batch/v1 Job with the TAS annotations its Volcano PodGroup says, and what was carried."""

    job: dict[str, Any]
    report: TranslationReport


def job_to_kueue(
    raw_job: Mapping[str, Any],
    pod_group: volcano.PodGroup,
    order: kueue.LevelOrder | None,
    tree: TopologyTree | None = None,
) -> KueueJob:
    """The annotations on the Job's template: hard -> required, soft -> preferred, each at its
    tier's level; the `topobridge.io/subgroup-index` subgroup -> slices; the Job no longer
    points at the PodGroup (Kueue admits and places it)."""
    job = Job.parse(raw_job)
    subject = f"Job {job.key}"
    report = TranslationReport(subject, "Kueue")
    raise_all(
        volcano.pod_group_problems(pod_group.spec, tier_of_name=tree.tier_of_name if tree else lambda _: None)
    )
    annotations: dict[str, str] = {}
    warnings: list[str] = []
    constraint = constraints.from_volcano(pod_group.spec.network_topology, tree, warnings=warnings)
    for warning in warnings:
        report.default(warning)
    if constraint is not None and constraint.highest_tier is not None:
        key = kueue.REQUIRED_TOPOLOGY if constraint.mode == "hard" else kueue.PREFERRED_TOPOLOGY
        annotations[key] = _level(constraint.highest_tier, "spec.networkTopology", order, subject)
        report.carry(
            f"PodGroup {pod_group.key} networkTopology {constraint.mode} tier {constraint.highest_tier} -> {key}: {annotations[key]}"
        )
    elif constraint is not None:
        report.carry(f"networkTopology {constraint.mode} without a tier binds nothing: no annotation")
    _slices_to_kueue(pod_group, order, subject, annotations, report)
    if pod_group.spec.min_member is not None and pod_group.spec.min_member != job.gang_size:
        report.refuse(
            f"minMember {pod_group.spec.min_member}: Kueue admits the Job's {job.gang_size} pods as one pod set"
        )
    out = copy.deepcopy(dict(raw_job))
    template = out.setdefault("spec", {}).setdefault("template", {})
    meta = template.setdefault("metadata", {})
    current = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if k != volcano.GROUP_NAME_ANNOTATION and k not in kueue.TAS_ANNOTATIONS
    }
    meta["annotations"] = {**current, **annotations}
    pod_spec = template.get("spec")
    if isinstance(pod_spec, dict) and pod_spec.get("schedulerName") == DEFAULT_SCHEDULER:
        del pod_spec["schedulerName"]
        report.carry(
            "schedulerName volcano and the group-name annotation removed: Kueue admits the Job, kube-scheduler places it"
        )
    return KueueJob(out, report)


def _level(tier: int, field: str, order: kueue.LevelOrder | None, subject: str) -> str:
    levels = need_levels(subject, order, f"{field} tier {tier} is a place among a Topology's levels")
    label = levels.label_of(tier)
    if label is None:
        raise MissingInputError(
            f"{subject}: {field}",
            f"a level for tier {tier} in {levels.describe()}",
            "the Topology has fewer levels than the tier counts",
        )
    return label


def _slices_to_kueue(
    pod_group: volcano.PodGroup,
    order: kueue.LevelOrder | None,
    subject: str,
    annotations: dict[str, str],
    report: TranslationReport,
) -> None:
    for i, sub in enumerate(pod_group.spec.sub_group_policy or []):
        nt = sub.network_topology
        ours = (
            sub.match_label_keys == [SUBGROUP_INDEX_LABEL] and nt is not None and nt.effective_mode == "hard"
        )
        tier = nt.highest_tier_allowed if nt is not None else None
        if (
            ours
            and tier is not None
            and sub.sub_group_size
            and kueue.SLICE_REQUIRED_TOPOLOGY not in annotations
        ):
            annotations[kueue.SLICE_REQUIRED_TOPOLOGY] = _level(
                tier, f"spec.subGroupPolicy[{i}].networkTopology", order, subject
            )
            annotations[kueue.SLICE_SIZE] = str(sub.sub_group_size)
            report.carry(
                f"spec.subGroupPolicy[{i}] ({sub.name}) -> slices of {sub.sub_group_size} at "
                f"{annotations[kueue.SLICE_REQUIRED_TOPOLOGY]}"
            )
            continue
        report.refuse(
            f"spec.subGroupPolicy[{i}] ({sub.name}): Kueue slices are consecutive ranks, hard within one level; "
            "this subgroup is not one"
        )


# --- HyperNodes -> Kueue Topology ---------------------------------------------------------------


@dataclass(frozen=True)
class KueueTopology:
    """A Kueue Topology and the node label changes that rebuild the HyperNode tree."""

    topology: kueue.Topology
    node_patches: tuple[NodeLabelPatch, ...]
    tree: TopologyTree
    report: TranslationReport


def topology_from_hypernodes(hypernodes: Iterable[volcano.HyperNode], nodes: Iterable[Node]) -> KueueTopology:
    """The levels are the label keys of the tiers, widest first, then the hostname; the nodes
    get the labels (as for Koordinator's ClusterNetworkTopology, whose layers carry the same keys)."""
    made = hn.to_cluster_network_topology(hypernodes, nodes)
    report = TranslationReport(made.report.subject, "Kueue")
    for line in made.report.refused:
        report.refuse(line)
    labels = [
        layer.label_key[0]
        for layer in made.cluster_network_topology.spec.network_topology_spec
        if layer.label_key
    ]
    levels = [{"nodeLabel": label} for label in labels] + [{"nodeLabel": kueue.HOSTNAME_LABEL}]
    topology = kueue.Topology.parse(
        {
            "apiVersion": kueue.API_VERSION,
            "kind": "Topology",
            "metadata": {"name": TOPOLOGY_NAME},
            "spec": {"levels": levels},
        }
    )
    report.carry(
        f"Topology {TOPOLOGY_NAME}: levels "
        + ", ".join(f"{label} (tier {len(labels) - i})" for i, label in enumerate(labels))
        + f", {kueue.HOSTNAME_LABEL} (the nodes)"
    )
    if made.node_patches:
        report.carry(f"{len(made.node_patches)} nodes labelled with their domains")
    return KueueTopology(topology, made.node_patches, made.tree, report)
