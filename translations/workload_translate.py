"""Kubernetes' own gang API <-> Volcano's PodGroup: the hub every other dialect goes through.

Into upstream (`translate --to upstream --kubernetes-version 1.35|1.36|1.37`): every dialect
first becomes the Volcano PodGroup `translate --to volcano` makes (LWS, Volcano Job, Koordinator
gang, Kueue TAS Job), then `from_volcano` writes it at the version that release serves:
1.37 `v1beta1` PodGroup, 1.36 `v1alpha2` PodGroup, 1.35 a `v1alpha1` Workload of one group.
Out of upstream, `to_volcano` writes the Volcano PodGroup; Koordinator and Kueue go on from it
as from any Volcano PodGroup.

What maps:
* `minMember` <-> `gang.minCount` (a Volcano `minMember: 0` is a `basic` group; a basic group is
  `minMember: 1`, defaulted).
* a hard `networkTopology` at tier T <-> `schedulingConstraints.topology[0].key`, the node label
  whose values make tier T's domains in a tree built from labels (a Kueue Topology, the
  ClusterNetworkTopology, or the nodes' topology labels: `label_tree`); tier 0 is
  `kubernetes.io/hostname`. A hard tier no label names raises (the target has the field, the
  value cannot be said).
* `priorityClassName` <-> `priorityClassName`.

What a target cannot hold is a `refused` line (`--strict` fails on any): into upstream, soft
mode, `subGroupPolicy`, `minTaskMember`, `minResources`, `queue` (and on 1.35 the topology and
priority); out of it, `priority`, `preemptionPolicy`, `disruptionMode`, `resourceClaims`, the
template link (`workloadRef`), the composite parent and CompositePodGroups themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from translations import koordinator as koord
from translations import kueue, volcano, workload
from translations._base import JsonDict
from translations.core import Node, Pod
from translations.errors import InvalidSpecError, NotExpressibleError
from translations.patches import PodPatch
from translations.report import TranslationReport
from translations.topology import (
    HOSTNAME_LABEL,
    TopologyTree,
    carries_topology_labels,
    from_cluster_network_topology,
    from_kueue_topology,
    from_node_labels,
)

TARGET = "Kubernetes"
"""How reports name the dialect (`... -> Kubernetes 1.37: refused: ...`)."""
V1ALPHA1_GROUP = "group"
"""The name of the one group a 1.35 Workload made from a Volcano PodGroup holds."""


def version_of(kubernetes_version: str) -> str:
    """The `scheduling.k8s.io` version a Kubernetes release serves (`1.37` -> `v1beta1`)."""
    try:
        return workload.KUBERNETES_VERSIONS[kubernetes_version]
    except KeyError:
        known = ", ".join(workload.KUBERNETES_VERSIONS)
        raise InvalidSpecError(
            "--kubernetes-version",
            kubernetes_version,
            f'Unsupported value: "{kubernetes_version}": supported values: {known}',
        ) from None


def release_of(version: str) -> str:
    return next(k for k, v in workload.KUBERNETES_VERSIONS.items() if v == version)


def label_tree(
    nodes: Sequence[Node],
    *,
    kueue_topologies: Sequence[kueue.Topology] = (),
    cnt: koord.ClusterNetworkTopology | None = None,
) -> TopologyTree | None:
    """A tree whose tiers are node labels: the one Kueue Topology, else the
    ClusterNetworkTopology, else the nodes' topology labels; None when the input has none."""
    if len(kueue_topologies) == 1:
        return from_kueue_topology(kueue_topologies[0], nodes)
    if cnt is not None:
        return from_cluster_network_topology(cnt, nodes)
    if any(carries_topology_labels(n) for n in nodes):
        return from_node_labels(nodes)
    return None


@dataclass(frozen=True)
class UpstreamGroup:
    """One Volcano PodGroup at a `scheduling.k8s.io` version: the object (a PodGroup, or on 1.35
    a Workload), how its pods join it, and the report."""

    object: JsonDict
    version: str
    report: TranslationReport

    def pod_link(self, pod_group_name: str) -> JsonDict:
        """The pod spec fields that put a pod in this group."""
        if self.version == workload.V1ALPHA1:
            return {"workloadRef": {"name": pod_group_name, "podGroup": V1ALPHA1_GROUP}}
        return {"schedulingGroup": {"podGroupName": pod_group_name}}


def _label_of_tier(tier: int, tree: TopologyTree | None) -> str | None:
    if tier == 0:
        return HOSTNAME_LABEL
    return tree.tier_labels.get(tier) if tree is not None else None


def _topology_key(
    spec: volcano.NetworkTopologySpec | None, tree: TopologyTree | None, report: TranslationReport
) -> str | None:
    """The label key a hard networkTopology stands for; soft is refused (upstream has no
    preferred mode); a hard tier no label names raises."""
    if spec is None:
        return None
    path = "spec.networkTopology"
    if spec.effective_mode == "soft":
        report.refuse(f"{path}: soft mode (upstream's topology is required only): no topology constraint")
        return None
    tier = spec.highest_tier_allowed
    if tier is None and spec.highest_tier_name is not None:
        tier = tree.tier_of_name(spec.highest_tier_name) if tree is not None else None
        if tier is None:
            raise NotExpressibleError(
                f"{path}.highestTierName",
                spec.highest_tier_name,
                "no tier of the topology has that name",
                target=TARGET,
            )
    if tier is None:
        return None
    key = _label_of_tier(tier, tree)
    if key is None:
        raise NotExpressibleError(
            f"{path}.highestTierAllowed",
            tier,
            f"tier {tier} is no node label of the topology (give the Nodes with their topology labels, "
            "the Kueue Topology or the ClusterNetworkTopology)",
            target=TARGET,
        )
    report.carry(f"{path} hard at tier {tier} -> schedulingConstraints.topology[0].key = {key}")
    return key


def _refuse_volcano_only(spec: volcano.PodGroupSpec, report: TranslationReport) -> None:
    for path, value in (
        ("spec.subGroupPolicy", spec.sub_group_policy),
        ("spec.minTaskMember", spec.min_task_member),
        ("spec.minResources", spec.min_resources),
        ("spec.queue", spec.queue),
    ):
        if value:
            report.refuse(f"{path}: upstream has no such field")


def from_volcano(
    pg: volcano.PodGroup, *, version: str, tree: TopologyTree | None, subject: str | None = None
) -> UpstreamGroup:
    """A Volcano PodGroup at `version` (`workload.V1ALPHA1`, `V1ALPHA2` or `V1BETA1`)."""
    report = TranslationReport(subject or f"PodGroup {pg.key}", f"{TARGET} {release_of(version)}")
    spec = pg.spec
    if spec.min_member == 0:
        policy: JsonDict = {"basic": {}}
        report.carry("spec.minMember = 0 -> schedulingPolicy.basic")
    else:
        policy = {"gang": {"minCount": spec.min_member or 1}}
        (report.carry if spec.min_member else report.default)(
            f"spec.minMember = {spec.min_member or 1} -> schedulingPolicy.gang.minCount"
        )
    if version == workload.V1ALPHA1 and spec.network_topology is not None:
        report.refuse("spec.networkTopology: Kubernetes 1.35 has no topology constraint")
        key = None
    else:
        key = _topology_key(spec.network_topology, tree, report)
    _refuse_volcano_only(spec, report)
    meta: JsonDict = {"name": pg.name, **({"namespace": pg.namespace} if pg.namespace else {})}
    if version == workload.V1ALPHA1:
        return _v1alpha1(pg, meta, policy, report)
    body: JsonDict = {"schedulingPolicy": policy}
    if key is not None:
        body["schedulingConstraints"] = {"topology": [{"key": key}]}
    if spec.priority_class_name:
        body["priorityClassName"] = spec.priority_class_name
        report.carry(f"spec.priorityClassName = {spec.priority_class_name}")
    obj = {"apiVersion": f"{workload.GROUP}/{version}", "kind": "PodGroup", "metadata": meta, "spec": body}
    return UpstreamGroup(obj, version, report)


def _v1alpha1(
    pg: volcano.PodGroup, meta: JsonDict, policy: JsonDict, report: TranslationReport
) -> UpstreamGroup:
    """1.35: a Workload of one group; no topology, no priority."""
    if pg.spec.priority_class_name:
        report.refuse("spec.priorityClassName: a 1.35 Workload has no priority")
    obj = {
        "apiVersion": f"{workload.GROUP}/{workload.V1ALPHA1}",
        "kind": "Workload",
        "metadata": meta,
        "spec": {"podGroups": [{"name": V1ALPHA1_GROUP, "policy": policy}]},
    }
    return UpstreamGroup(obj, workload.V1ALPHA1, report)


# --- out of upstream ---------------------------------------------------------------------------


@dataclass(frozen=True)
class VolcanoGroups:
    """The Volcano PodGroups one upstream object makes, the member pods' patches, the report."""

    pod_groups: tuple[volcano.PodGroup, ...]
    pod_patches: tuple[PodPatch, ...]
    report: TranslationReport


def _tier_of_key(key: str, tree: TopologyTree | None, path: str) -> int:
    tier = 0 if key == HOSTNAME_LABEL else (tree.tier_of_label(key) if tree is not None else None)
    if tier is None:
        known = ", ".join(tree.tier_labels.values()) if tree is not None else ""
        raise NotExpressibleError(
            path,
            key,
            f"the label is no tier of the topology (tiers by label: {known or 'none'}): give the Nodes "
            "with their topology labels, the Kueue Topology or the ClusterNetworkTopology",
            target="Volcano",
        )
    return tier


def _refuse_upstream_only(group: workload.Group, report: TranslationReport) -> None:
    for what, present in (
        ("spec.priority", group.priority is not None),
        ("spec.preemptionPolicy", group.preemption_policy is not None),
        ("spec.disruptionMode", group.disruption_all),
        ("spec.resourceClaims", group.resource_claims > 0),
        ("spec.workloadRef (the template link)", group.workload is not None),
        ("spec.parentCompositePodGroupName (the composite hierarchy)", group.parent is not None),
    ):
        if present:
            report.refuse(f"{what}: Volcano has no such field")


def group_to_volcano(
    group: workload.Group, *, tree: TopologyTree | None, report: TranslationReport, name: str | None = None
) -> volcano.PodGroup:
    spec: JsonDict = {}
    if group.min_count is not None:
        spec["minMember"] = group.min_count
        report.carry(f"schedulingPolicy.gang.minCount = {group.min_count} -> spec.minMember")
    else:
        spec["minMember"] = 1
        report.default("schedulingPolicy.basic -> spec.minMember = 1 (pods placed one at a time)")
    if group.topology_key is not None:
        path = "spec.schedulingConstraints.topology[0].key"
        tier = _tier_of_key(group.topology_key, tree, path)
        spec["networkTopology"] = {"mode": "hard", "highestTierAllowed": tier}
        report.carry(f"{path} = {group.topology_key} -> spec.networkTopology hard at tier {tier}")
    if group.priority_class_name:
        spec["priorityClassName"] = group.priority_class_name
        report.carry(f"spec.priorityClassName = {group.priority_class_name}")
    _refuse_upstream_only(group, report)
    meta: JsonDict = {
        "name": name or group.name,
        **({"namespace": group.namespace} if group.namespace else {}),
    }
    return volcano.PodGroup.parse(
        {"apiVersion": volcano.PODGROUP_API_VERSION, "kind": "PodGroup", "metadata": meta, "spec": spec}
    )


def _patches(pods: Iterable[Pod], member: str, of: str) -> tuple[PodPatch, ...]:
    """The pods `of` names as members of the Volcano PodGroup `member`, given the annotation."""
    return tuple(
        PodPatch(p.namespace, p.name, annotations={volcano.GROUP_NAME_ANNOTATION: member})
        for p in pods
        if link_of(p) == of
    )


def link_of(pod: Pod) -> str | None:
    """`namespace/<group>` a pod names: its PodGroup (1.36+), or on 1.35
    `namespace/<workload>/<podGroup>[/<replicaKey>]`; None when it names none."""
    spec = pod.spec
    if spec.scheduling_group is not None and spec.scheduling_group.pod_group_name:
        return f"{pod.namespace}/{spec.scheduling_group.pod_group_name}"
    ref = spec.workload_ref
    if ref is not None and ref.name and ref.pod_group:
        tail = f"/{ref.pod_group_replica_key}" if ref.pod_group_replica_key else ""
        return f"{pod.namespace}/{ref.name}/{ref.pod_group}{tail}"
    return None


def to_volcano(
    obj: workload.AnyObject, *, tree: TopologyTree | None, pods: Sequence[Pod] = ()
) -> VolcanoGroups:
    """An upstream PodGroup (or a 1.35 Workload's groups) as Volcano PodGroups, their pods patched
    to join them. A CompositePodGroup, and a 1.36+ Workload (its templates are no gangs: the
    PodGroups made from them are), make nothing, saying so."""
    kind = type(obj).__name__.removesuffix("V1alpha1").removesuffix("V1alpha2")
    report = TranslationReport(f"{kind} {obj.key}", "Volcano")
    if isinstance(obj, workload.CompositePodGroup):
        report.refuse(
            "a CompositePodGroup (the composite hierarchy): Volcano has none; its PodGroups translate alone"
        )
        return VolcanoGroups((), (), report)
    if isinstance(obj, workload.WorkloadV1alpha1):
        made: list[volcano.PodGroup] = []
        patches: list[PodPatch] = []
        for name, group in workload.v1alpha1_groups(obj).items():
            pg = group_to_volcano(group, tree=tree, report=report, name=f"{obj.name}-{name}")
            made.append(pg)
            patches.extend(_patches(pods, pg.name, f"{obj.namespace}/{obj.name}/{name}"))
        return VolcanoGroups(tuple(made), tuple(patches), report)
    if isinstance(obj, workload.WorkloadV1alpha2 | workload.Workload):
        report.carry("nothing: a Workload's templates are no gangs; the PodGroups made from them translate")
        return VolcanoGroups((), (), report)
    group = workload.group_of(obj)
    pg = group_to_volcano(group, tree=tree, report=report)
    return VolcanoGroups((pg,), _patches(pods, pg.name, f"{obj.namespace}/{obj.name}"), report)
