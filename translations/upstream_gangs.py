"""Kubernetes' own gang API in gang discovery: a pod's `spec.schedulingGroup.podGroupName` names
its `scheduling.k8s.io` PodGroup (v1beta1, v1alpha3, or 1.36's v1alpha2 read in v1beta1's shape:
`workload.ServedPodGroup`), and the gang is `upstream:NAMESPACE/NAME`.

What kube-scheduler 1.37 does with a PodGroup (KEP-4671, KEP-5732), as the `Gang` model says it:
* its pods wait until the PodGroup exists (the gang carries an error until then);
* `gang.minCount` is the gang's minimum: all or nothing at minCount, and no attempt before
  minCount pods exist; a `basic` group is a minimum of 1 (pods placed as they fit);
* a topology key keeps the group in one value of that label (`topology_constraint`): a hard
  constraint at the tier of the scheduler's tree whose domains are that label's values
  (`TopologyTree.tier_of_label`; `kubernetes.io/hostname` is tier 0), else at the bare label
  (`TopologyConstraint.label_key`: a domain is the nodes sharing one value, nodes without the
  label are in none, as kube-scheduler takes any node label as a level); already-bound members
  pin the domain; a key no node carries leaves the gang waiting, saying so (TopologyPlacement);
* the group's `priority` (else its `priorityClassName`'s value) is the gang's priority, and
  `preemptionPolicy: Never` on the group means the gang never preempts;
* members that disagree on `schedulerName`, priority or preemption policy fail the group, as
  kube-scheduler's `SchedulerError`;
* a PodGroup under a CompositePodGroup (`spec.parentCompositePodGroupName`, v1alpha3) waits,
  saying why (`composite_wait`): placing its groups one by one would break the composite's
  `minGroupCount` and its shared topology key, which kube-scheduler holds for the whole tree;
* as a victim (KEP-5710): `disruptionMode: single` (the default) lets members be taken one by
  one, even below minCount; `all` gives them up whole or not at all.

1.35's pods name a group of a `v1alpha1` Workload by `spec.workloadRef`; each (workload,
podGroup, replicaKey) is its own gang, `upstream:NAMESPACE/<workload>/<podGroup>[/<replicaKey>]`,
waiting until the Workload exists and its `minCount` pods do (1.35 has no topology, priority or
disruption mode on a group).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from translations import workload
from translations.constraints import TopologyConstraint
from translations.core import Pod, PriorityClass
from translations.errors import shown_name
from translations.serving import scheduler_name
from translations.topology import HOSTNAME_LABEL, TopologyTree

DIALECT = "upstream"
WHOLE = 2**31 - 1
"""`disruption_min` of a `disruptionMode: all` group: more than it can have, so a preemption
takes all its members or none."""


def pod_group_of(pod: Pod) -> str | None:
    """The gang's name the pod gives: `namespace/name` of its PodGroup (1.36+), else, by 1.35's
    `spec.workloadRef`, `namespace/<workload>/<podGroup>[/<replicaKey>]`; None when neither."""
    group = pod.spec.scheduling_group
    if group is not None and group.pod_group_name:
        return f"{pod.namespace}/{group.pod_group_name}"
    ref = pod.spec.workload_ref
    if ref is not None and ref.name and ref.pod_group:
        tail = f"/{ref.pod_group_replica_key}" if ref.pod_group_replica_key else ""
        return f"{pod.namespace}/{ref.name}/{ref.pod_group}{tail}"
    return None


def workload_of(name: str) -> tuple[str, str] | None:
    """(`namespace/<workload>`, `<podGroup>`) of a 1.35 gang's name; None for a PodGroup's."""
    parts = name.split("/")
    return (f"{parts[0]}/{parts[1]}", parts[2]) if len(parts) >= 3 else None


@dataclass(frozen=True, slots=True)
class Resolved:
    """What a PodGroup says about its gang."""

    min_member: int | None = None
    constraint: TopologyConstraint | None = None
    priority: int | None = None
    """The group's own priority; None: its members' decide."""
    never_preempts: bool = False
    disruption_min: int | None = None
    """`disruptionMode`: `single` (the default) 0, `all` every member (`Gang.disruption_min`)."""
    creation: str = ""
    error: str | None = None


def _class_value(name: str | None, classes: Mapping[str, PriorityClass]) -> int | None:
    pc = classes.get(name) if name else None
    return pc.value if pc is not None else None


def _disagreement(members: Sequence[Pod]) -> str | None:
    """The first of schedulerName, priority and preemptionPolicy the members do not share."""
    for what, read in (
        ("schedulerName", scheduler_name),
        (
            "priority",
            lambda p: p.spec.priority if p.spec.priority is not None else p.spec.priority_class_name,
        ),
        ("preemptionPolicy", lambda p: p.spec.preemption_policy),
    ):
        seen = sorted({str(read(p)) for p in members})
        if len(seen) > 1:
            return f"its pods disagree on {what} ({', '.join(seen)})"
    return None


def composite_wait(where: str, parent: str) -> str:
    """Why a member group of a CompositePodGroup waits: topobridge cannot hold a composite."""
    return (
        f"{where}: spec.parentCompositePodGroupName: it is part of CompositePodGroup {shown_name(parent)} "
        "(v1alpha3), which topobridge cannot hold (minGroupCount over its groups, the composite's own "
        "topology key, the whole tree placed in one pass): its pods wait for kube-scheduler 1.37 "
        "with the CompositePodGroup gate"
    )


def resolve_v1alpha1(
    name: str, workloads: Mapping[str, workload.WorkloadV1alpha1], members: Sequence[Pod]
) -> Resolved:
    """A 1.35 gang: group `<podGroup>` of the Workload its members' `spec.workloadRef` names."""
    wl_key, group_name = workload_of(name) or ("", "")
    where = f"Workload {shown_name(wl_key)} ({workload.GROUP})"
    wl = workloads.get(wl_key)
    if wl is None:
        return Resolved(error=f"{where} not found: its pods wait until it exists")
    creation = wl.metadata.creation_timestamp or ""
    problems = workload.problems(wl)
    group = workload.v1alpha1_groups(wl).get(group_name)
    disagreement = _disagreement(members)
    error = (
        f"{where}: {problems[0]}"
        if problems
        else f"{where}: spec.podGroups: no group {group_name!r}: its pods wait"
        if group is None
        else f"{where}: SchedulerError: {disagreement}"
        if disagreement
        else None
    )
    if error is not None or group is None:
        return Resolved(creation=creation, error=error)
    return Resolved(min_member=group.min_count or 1, disruption_min=0, creation=creation)


def topology_constraint(key: str | None, tree: TopologyTree | None) -> TopologyConstraint | None:
    """A PodGroup's topology key as a hard constraint: at the tier of the tree whose domains are
    that label's values (`kubernetes.io/hostname`: tier 0), else at the bare label itself, whose
    values are the domains, as kube-scheduler's TopologyPlacement reads any node label."""
    if key is None:
        return None
    tier = tree.tier_of_label(key) if tree is not None else None
    if tier is None and key == HOSTNAME_LABEL:
        tier = 0
    if tier is None:
        return TopologyConstraint("hard", None, label_key=key)
    return TopologyConstraint("hard", tier)


def resolve(
    name: str,
    groups: Mapping[str, workload.PodGroup],
    members: Sequence[Pod],
    classes: Mapping[str, PriorityClass],
    tree: TopologyTree | None,
) -> Resolved:
    """The gang of the PodGroup `namespace/name` its `members` name."""
    where = f"PodGroup {shown_name(name)} ({workload.GROUP})"
    pg = groups.get(name)
    if pg is None:
        return Resolved(error=f"{where} not found: its pods wait until it exists")
    problems = workload.problems(pg)
    if problems:
        return Resolved(error=f"{where}: {problems[0]}")
    group = workload.group_of(pg)
    creation = pg.metadata.creation_timestamp or ""
    parent = pg.spec.parent_composite_pod_group_name
    if parent:
        return Resolved(creation=creation, error=composite_wait(where, f"{pg.namespace}/{parent}"))
    disagreement = _disagreement(members)
    if disagreement is not None:
        return Resolved(creation=creation, error=f"{where}: SchedulerError: {disagreement}")
    priority = (
        group.priority if group.priority is not None else _class_value(group.priority_class_name, classes)
    )
    return Resolved(
        min_member=group.min_count if group.min_count is not None else 1,
        constraint=topology_constraint(group.topology_key, tree),
        priority=priority,
        never_preempts=group.preemption_policy == "Never",
        disruption_min=WHOLE if group.disruption_all else 0,
        creation=creation,
    )
