"""LeaderWorkerSet -> one Volcano PodGroup per group, as LWS's own Volcano provider makes it,
plus the topology LWS leaves out.

Phases: `group_revisions` (which groups exist and their revision hash), `gang_spec` (what
every group shares: minMember, minResources, queue, priority, topology, subgroups), then
`pod_group` per group (name, labels, owner).

* Name `<lws>-<group-index>-<revision>`: the revision is the leader pod's
  `leaderworkerset.sigs.k8s.io/template-revision-hash` label. LWS computes it with a Go object
  hash nothing else can reproduce, so it comes from the leader pods (or is given).
* `minMember` = size (1 with startupPolicy LeaderReady); `minResources` = leader requests +
  (size-1) x worker requests, each a pod's effective request as the scheduler computes it.
* Topology from `spec.networkTopology` (mode `hard` when unset, as the LWS+Volcano plan says;
  tier 0 means one node), else from the `volcano.sh/network-topology-mode` /
  `volcano.sh/network-topology-highest-tier` annotations of the LWS.
* `subGroupPolicy` -> one Volcano subGroupPolicy entry: pods with equal group-index and
  subgroup-index labels form a subgroup. Its topology comes from the LWS annotations
  `topobridge.io/subgroup-network-topology-mode` / `-highest-tier` (upstream LWS has no field
  for it, and an annotation survives an API server that prunes unknown fields).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from translations import kueue, volcano
from translations import lws as lwsmod
from translations._base import JsonDict
from translations.core import Pod, PodSpec, binary_formats, effective_requests
from translations.errors import InvalidSpecError, MissingInputError, raise_all
from translations.quantity import from_scheduler_units
from translations.report import TranslationReport, inline

TEMPLATE_PATH = lwsmod.TEMPLATE_PATH
SUBGROUP_MODE_ANNOTATION = lwsmod.SUBGROUP_MODE_ANNOTATION
SUBGROUP_TIER_ANNOTATION = lwsmod.SUBGROUP_TIER_ANNOTATION
SUBGROUP_POLICY_NAME = "subgroup"
MAX_GROUPS_FROM_REVISION = 100_000
"""PodGroups `--revision` may stand in for (as many as `simulate` expands pods): past it the
groups are refused in one line, not written one by one."""
_DECIMAL = re.compile(r"^(0|[1-9][0-9]{0,9})\Z")


@dataclass(frozen=True)
class LwsPodGroups:
    """The PodGroups of one LeaderWorkerSet, by group index, and what was done to get them."""

    pod_groups: tuple[volcano.PodGroup, ...]
    report: TranslationReport


def pod_group_name(lws_name: str, group_index: int, revision: str) -> str:
    """Exactly LWS's own name, so topobridge and LWS never make two PodGroups for one group."""
    return f"{lws_name}-{group_index}-{revision}"


def translate(
    lws: lwsmod.LeaderWorkerSet, *, pods: Iterable[Pod] = (), revision: str | None = None
) -> LwsPodGroups:
    """Every group's PodGroup. Groups come from the leader pods among `pods`; with `revision`,
    also every group in `0..replicas-1` whose leader was not given."""
    report = TranslationReport(f"LeaderWorkerSet {lws.key}", "Volcano")
    revisions, leaders = group_revisions(lws, pods, revision, report)
    spec = gang_spec(lws, report)
    report_drops(lws, report)
    groups = tuple(
        pod_group(lws, index, rev, spec, leader_pod=leaders.get(index), report=report)
        for index, rev in sorted(revisions.items())
    )
    return LwsPodGroups(groups, report)


def translate_leader(
    lws: lwsmod.LeaderWorkerSet, leader_pod: Pod
) -> tuple[volcano.PodGroup, TranslationReport]:
    """The PodGroup of the group `leader_pod` leads (the controller's entry point)."""
    result = translate(lws, pods=[leader_pod])
    if not result.pod_groups:
        raise MissingInputError(
            f"Pod {leader_pod.key}",
            "a leader pod of LeaderWorkerSet " + lws.key,
            f"labels {lwsmod.NAME_LABEL}={lws.name} and {lwsmod.WORKER_INDEX_LABEL}=0 are required",
        )
    return result.pod_groups[0], result.report


# --- which groups --------------------------------------------------------------------------


def leader_pods(lws: lwsmod.LeaderWorkerSet, pods: Iterable[Pod]) -> dict[int, Pod]:
    """Leader pods of `lws` by group index (worker-index 0, same namespace, same set name)."""
    out: dict[int, Pod] = {}
    for pod in pods:
        labels = pod.metadata.labels or {}
        if labels.get(lwsmod.NAME_LABEL) != lws.name:
            continue
        if lws.namespace and pod.namespace and pod.namespace != lws.namespace:
            continue
        if labels.get(lwsmod.WORKER_INDEX_LABEL, "0") != "0":
            continue
        raw = labels.get(lwsmod.GROUP_INDEX_LABEL)
        if raw is None:
            continue
        if not _DECIMAL.match(raw):
            raise InvalidSpecError(
                f"Pod {pod.key}: metadata.labels[{lwsmod.GROUP_INDEX_LABEL}]",
                raw,
                f'Invalid value: "{raw}": must be a non-negative decimal integer',
            )
        out[int(raw)] = pod
    return out


def group_revisions(
    lws: lwsmod.LeaderWorkerSet, pods: Iterable[Pod], revision: str | None, report: TranslationReport
) -> tuple[dict[int, str], dict[int, Pod]]:
    leaders = leader_pods(lws, pods)
    revisions: dict[int, str] = {}
    for index, pod in sorted(leaders.items()):
        rev = (pod.metadata.labels or {}).get(lwsmod.REVISION_LABEL) or revision
        if not rev:
            raise MissingInputError(
                f"LeaderWorkerSet {lws.key} group {index}",
                f"the {lwsmod.REVISION_LABEL} label of leader pod {pod.name}",
                "LWS sets it on every pod it creates; give the pod as LWS made it, or pass --revision HASH",
            )
        revisions[index] = rev
        report.carry(f"group {index}: revision {rev} from leader pod {pod.name}")
    replicas = 1 if lws.spec.replicas is None else lws.spec.replicas
    missing = _gaps(replicas, revisions)
    count = sum(len(r) for r in missing)
    if missing and revision and count > MAX_GROUPS_FROM_REVISION:
        report.refuse(
            f"groups {_ranges(missing)}: {count} PodGroups from --revision, more than the"
            f" {MAX_GROUPS_FROM_REVISION} translate writes; give their leader pods instead"
        )
    elif missing and revision:
        for run in missing:
            revisions.update(dict.fromkeys(run, revision))
        report.carry(f"groups {_ranges(missing)}: revision {revision} as given (no leader pod in the input)")
    elif missing and not leaders:
        raise MissingInputError(
            f"LeaderWorkerSet {lws.key}",
            f"the {lwsmod.REVISION_LABEL} of its leader pods",
            "PodGroup names end in LWS's template revision hash, which only LWS can compute: "
            "add the leader pods (kubectl get pods -l leaderworkerset.sigs.k8s.io/name="
            f"{lws.name} -o yaml) to the input, or pass --revision HASH",
        )
    elif missing:
        report.refuse(f"groups {_ranges(missing)}: no leader pod in the input yet, so no PodGroup")
    if replicas == 0:
        report.carry("spec.replicas = 0: no groups, no PodGroups")
    return revisions, leaders


# --- what every group shares ---------------------------------------------------------------


def gang_spec(lws: lwsmod.LeaderWorkerSet, report: TranslationReport) -> JsonDict:
    """The PodGroup spec every group of `lws` shares. Raises InvalidSpecError with every
    problem `lws.topology_request` finds."""
    request, problems = lwsmod.topology_request(lws)
    raise_all(problems)
    size = lws.size
    spec: JsonDict = {}
    if lws.spec.startup_policy == "LeaderReady":
        spec["minMember"] = 1
        report.carry("minMember = 1: startupPolicy LeaderReady schedules the leader before its workers")
    else:
        spec["minMember"] = size
        report.carry(f"minMember = {size} (leaderWorkerTemplate.size)")
    tmpl = lws.spec.leader_worker_template
    resources = min_resources(tmpl)
    if resources:
        spec["minResources"] = resources
        shown = ", ".join(f"{k}: {v}" for k, v in resources.items())
        report.carry(f"minResources = {{{shown}}} (leader + {size - 1} x worker effective requests)")
    if request.queue is not None:
        spec["queue"] = request.queue
        report.carry(f"queue = {request.queue} (annotation {lwsmod.QUEUE_ANNOTATION})")
    else:
        report.default("queue unset: Volcano puts the PodGroup in queue `default`")
    priority = _priority_class(tmpl, report)
    if priority:
        spec["priorityClassName"] = priority
    topology = job_topology(lws, request, report)
    if topology is not None:
        spec["networkTopology"] = topology
    subgroups = subgroup_policy(lws, request, report)
    if subgroups is not None:
        spec["subGroupPolicy"] = [subgroups]
    return spec


def min_resources(tmpl: lwsmod.LeaderWorkerTemplate) -> dict[str, str]:
    """Leader + (size-1) x worker effective requests, in canonical quantity strings."""
    leader = tmpl.leader_template or tmpl.worker_template
    leader_path = "spec.leaderWorkerTemplate." + (
        "leaderTemplate" if tmpl.leader_template else "workerTemplate"
    )
    totals = dict(_requests(leader.spec, leader_path))
    workers = max(tmpl.effective_size - 1, 0)
    if workers:
        for name, units in _requests(
            tmpl.worker_template.spec, "spec.leaderWorkerTemplate.workerTemplate"
        ).items():
            totals[name] = totals.get(name, 0) + workers * units
    binary = {**binary_formats(tmpl.worker_template), **binary_formats(leader)}
    return {
        name: from_scheduler_units(name, units, binary=binary.get(name, False))
        for name, units in sorted(totals.items())
    }


def _requests(spec: PodSpec, path: str) -> dict[str, int]:
    try:
        return effective_requests(spec)
    except InvalidSpecError as exc:
        raise InvalidSpecError(f"{path}.{exc.field_path}", exc.value, exc.detail) from None


def _priority_class(tmpl: lwsmod.LeaderWorkerTemplate, report: TranslationReport) -> str | None:
    leader = tmpl.leader_template.spec.priority_class_name if tmpl.leader_template else None
    worker = tmpl.worker_template.spec.priority_class_name
    chosen = leader or worker
    if chosen:
        source = "leaderTemplate" if leader else "workerTemplate"
        report.carry(f"priorityClassName = {chosen} (from the {source})")
    if leader and worker and leader != worker:
        report.refuse(
            f"workerTemplate priorityClassName {worker}: a PodGroup has one priority; it carries "
            f"the leader's ({leader})"
        )
    return chosen


def job_topology(
    lws: lwsmod.LeaderWorkerSet, request: lwsmod.TopologyRequest, report: TranslationReport
) -> JsonDict | None:
    """spec.networkTopology, else the Volcano topology annotations on the LWS."""
    if request.network_topology is None:
        return None
    out = request.network_topology.to_dict()
    if request.from_annotations:
        report.carry(
            f"networkTopology = {inline(out)} (annotations {volcano.POD_TOPOLOGY_MODE_ANNOTATION}, "
            f"{volcano.POD_TOPOLOGY_TIER_ANNOTATION})"
        )
        return out
    nt = lws.spec.network_topology
    if nt is not None and nt.mode is None:
        report.default("networkTopology.mode unset: hard, as the LWS+Volcano plan defines it")
    report.carry(f"networkTopology = {inline(out)} (spec.networkTopology)")
    if out.get("highestTierAllowed") == 0:
        report.carry("highestTierAllowed 0: every pod of a group on one node")
    overridden = request.overridden_annotations.to_dict() if request.overridden_annotations else None
    if overridden is not None and overridden != out:
        report.refuse(f"topology annotations {inline(overridden)}: spec.networkTopology takes precedence")
    return out


def subgroup_policy(
    lws: lwsmod.LeaderWorkerSet, request: lwsmod.TopologyRequest, report: TranslationReport
) -> JsonDict | None:
    """LWS subGroupPolicy -> one Volcano entry; pods with equal group and subgroup index gather."""
    sgs, count = request.subgroup_size, request.subgroup_count
    if sgs is None or count is None:
        return None
    policy = lws.spec.leader_worker_template.sub_group_policy
    size = lws.size
    kind = (policy.sub_group_policy_type if policy else None) or "LeaderWorker"
    entry: JsonDict = {
        "name": SUBGROUP_POLICY_NAME,
        "subGroupSize": sgs,
        "labelSelector": {
            "matchLabels": {lwsmod.NAME_LABEL: lws.name},
            "matchExpressions": [{"key": lwsmod.SUBGROUP_INDEX_LABEL, "operator": "Exists"}],
        },
        "matchLabelKeys": [lwsmod.GROUP_INDEX_LABEL, lwsmod.SUBGROUP_INDEX_LABEL],
    }
    if lws.spec.startup_policy != "LeaderReady":
        entry["minSubGroups"] = count
    report.carry(
        f"subGroupPolicy: {count} subgroups of {sgs} pods per group ({kind}), keyed on group and "
        "subgroup index"
    )
    if kind == "LeaderWorker" and (size - 1) % sgs == 0 and size > 1:
        report.carry(
            f"subgroup 0 holds the leader and {sgs} workers ({sgs + 1} pods); subGroupSize counts {sgs}"
        )
    if kind == "LeaderExcluded":
        report.carry("the leader carries no subgroup-index label, so it belongs to no subgroup")
    if request.subgroup_topology is not None:
        topology = request.subgroup_topology.to_dict()
        entry["networkTopology"] = topology
        report.carry(
            f"subgroup networkTopology = {inline(topology)} (annotations {SUBGROUP_MODE_ANNOTATION}, "
            f"{SUBGROUP_TIER_ANNOTATION})"
        )
    return entry


VOLCANO_ANNOTATION_PREFIX = "volcano.sh/"
"""LWS's Volcano provider (v0.8) copies every annotation of an LWS with this prefix onto its PodGroups."""
READ_ANNOTATIONS = (volcano.POD_TOPOLOGY_MODE_ANNOTATION, volcano.POD_TOPOLOGY_TIER_ANNOTATION)


def report_drops(lws: lwsmod.LeaderWorkerSet, report: TranslationReport) -> None:
    """Name what the PodGroups do not carry: `volcano.sh/*` annotations other than the topology
    ones read above (upstream LWS copies them onto its PodGroups), and Kueue's TAS annotations on
    the templates (Kueue's placement, not Volcano's)."""
    for key in sorted(lws.metadata.annotations or {}):
        if key.startswith(VOLCANO_ANNOTATION_PREFIX) and key not in READ_ANNOTATIONS:
            report.refuse(
                f"metadata.annotations[{key}]: LWS's Volcano provider copies it onto each PodGroup; "
                "topobridge's PodGroups do not carry it"
            )
    tmpl = lws.spec.leader_worker_template
    for name, template in (
        ("leaderTemplate", tmpl.leader_template),
        ("workerTemplate", tmpl.worker_template),
    ):
        raw = template.metadata if template is not None else None
        annotations = raw.get("annotations") if isinstance(raw, dict) else None
        for key in sorted(
            k for k in (annotations if isinstance(annotations, dict) else {}) if k in kueue.TAS_ANNOTATIONS
        ):
            report.refuse(
                f"{TEMPLATE_PATH}.{name}.metadata.annotations[{key}]: Kueue's topology request, not carried into "
                "the PodGroups (spec.networkTopology is what Volcano reads)"
            )


# --- one group -------------------------------------------------------------------------------


def pod_group(
    lws: lwsmod.LeaderWorkerSet,
    group_index: int,
    revision: str,
    spec: JsonDict,
    *,
    leader_pod: Pod | None,
    report: TranslationReport,
) -> volcano.PodGroup:
    meta: JsonDict = {
        "name": pod_group_name(lws.name, group_index, revision),
        "labels": {
            lwsmod.NAME_LABEL: lws.name,
            lwsmod.GROUP_INDEX_LABEL: str(group_index),
            lwsmod.REVISION_LABEL: revision,
        },
    }
    if lws.namespace:
        meta["namespace"] = lws.namespace
    if leader_pod is not None and leader_pod.metadata.uid:
        # LWS's provider makes the leader pod the controller owner: the group's PodGroup goes
        # when its leader goes (a recreated group gets a fresh one).
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": leader_pod.name,
                "uid": leader_pod.metadata.uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    else:
        why = "leader pod has no uid" if leader_pod is not None else "leader pod not given"
        report.default(
            f"group {group_index}: no ownerReference ({why}); the PodGroup outlives its group until deleted"
        )
    raw: dict[str, Any] = {
        "apiVersion": volcano.PODGROUP_API_VERSION,
        "kind": "PodGroup",
        "metadata": meta,
        "spec": dict(spec),
    }
    return volcano.PodGroup.parse(raw)


def _gaps(replicas: int, present: Iterable[int]) -> list[range]:
    """The group indexes in `0..replicas-1` not in `present`, as runs: as many as there are
    leaders, however large `replicas` is (up to 2^31 - 1)."""
    runs, start = [], 0
    for index in sorted(i for i in present if 0 <= i < replicas):
        if index > start:
            runs.append(range(start, index))
        start = index + 1
    if start < replicas:
        runs.append(range(start, replicas))
    return runs


def _ranges(runs: list[range]) -> str:
    """`0, 2..9, 12`: each run of group indexes, the first few of them."""
    shown = [", ".join(map(str, r)) if len(r) <= 3 else f"{r.start}..{r[-1]}" for r in runs[:8]]
    more = f" (+{len(runs) - 8} more runs)" if len(runs) > 8 else ""
    return ", ".join(shown) + more
