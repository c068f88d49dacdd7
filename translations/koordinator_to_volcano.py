"""Koordinator gangs -> Volcano PodGroups, plus the pod patches that make the members join.

A gang is a `scheduling.sigs.k8s.io` (or `scheduling.x-k8s.io`) PodGroup with Koordinator's
gang annotations, or pods carrying `gang.scheduling.koordinator.sh/name` alone. Phases:
`gangs_from_*` (one `KoordGang` per source), `topology` (network-topology-spec ->
networkTopology, podCountMultiple -> a subgroup), then `translate` (one gang) or
`translate_group` (a GangGroup: one PodGroup, a subgroup per member gang).

* The deepest `MustGather` layer L gives `hard` at tier(L); `PreferGather` alone gives `soft`
  at the widest listed layer (`constraints.from_koordinator`). Layer -> tier comes from the
  ClusterNetworkTopology (or HyperNode tierNames); without either, a spec naming one layer
  becomes `highestTierName: <layer>`, which matches the HyperNodes `hypernodes.py` makes.
* `podCountMultiple: N` at layer L (each L-domain holds a multiple of N of the gang's pods)
  becomes a subgroup policy: pods in groups of N, each group hard inside tier(L). Pods get
  their group from the label `topobridge.io/subgroup-index` = network-topology-index // N.
  Two such rules, or one on a GangGroup, are not expressible in Volcano and raise.
* Koordinator-only knobs (scheduleTimeoutSeconds, gang mode, waiting-time, match-policy)
  have no Volcano field: refused lines in the report, never errors.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from translations import constraints, schedplugins, volcano
from translations import koordinator as koord
from translations._base import JsonDict, TypedObject
from translations.core import Pod
from translations.errors import InvalidSpecError, MissingInputError, NotExpressibleError, go_quote, raise_all
from translations.gangs import koordinator_gang_of
from translations.patches import PodPatch
from translations.quantity import Quantity, format_quantity, is_binary, parse_quantity
from translations.report import TranslationReport, inline
from translations.topology import TopologyTree

SUBGROUP_INDEX_LABEL = "topobridge.io/subgroup-index"
"""Which podCountMultiple group a pod is in: its network-topology-index // N."""
GANG_LABEL = "topobridge.io/gang"
"""Set on pods of annotation-only gangs so a GangGroup subgroup can select them."""
POD_COUNT_MULTIPLE_POLICY = "pod-count-multiple"
DEFAULT_SCHEDULER = "volcano"

KoordPodGroup = koord.SigsPodGroup | schedplugins.XPodGroup


@dataclass(frozen=True)
class KoordGang:
    """One Koordinator gang, whatever declared it."""

    namespace: str
    name: str
    source: str
    """`PodGroup ns/name` or `annotations on pods of gang ns/name`, for messages."""
    min_member: int | None
    min_resources: Mapping[str, Quantity] | None
    annotations: koord.GangAnnotations
    member_label: tuple[str, str] | None
    """The pod label that marks members (None: annotation-only, members get GANG_LABEL)."""
    schedule_timeout_seconds: int | None = None
    members: tuple[Pod, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.namespace}/{self.name}"

    def owns(self, pod: Pod) -> bool:
        if (pod.namespace or self.namespace) != self.namespace:
            return False
        if self.member_label is not None:
            key, value = self.member_label
            return (pod.metadata.labels or {}).get(key) == value
        named = koordinator_gang_of(pod.metadata.labels or {}, pod.metadata.annotations or {})
        return named == (self.name, "koordinator-annotations")


@dataclass(frozen=True)
class VolcanoGang:
    """The Volcano PodGroup of one gang (or GangGroup) and the patches its pods need."""

    pod_group: volcano.PodGroup
    pod_patches: tuple[PodPatch, ...]
    report: TranslationReport
    sources: tuple[str, ...] = field(default=())
    """Ids (`ns/name`) of the Koordinator gangs folded into this PodGroup."""


@dataclass(frozen=True)
class Layers:
    """How Koordinator layer names map to tiers; `known` is False when no topology was given."""

    tiers: Mapping[str, int]
    known: bool

    @classmethod
    def of(cls, cnt: koord.ClusterNetworkTopology | None, tree: TopologyTree | None) -> Layers:
        tiers = constraints.layer_tiers(tree, cnt)
        return cls(tiers, cnt is not None or len(tiers) > 1)


# --- gangs from their sources --------------------------------------------------------------


def gang_from_pod_group(pg: KoordPodGroup, pods: Iterable[Pod] = ()) -> KoordGang:
    label = koord.SIGS_POD_GROUP_LABEL if isinstance(pg, koord.SigsPodGroup) else schedplugins.POD_GROUP_LABEL
    annotations, problems = koord.gang_request(
        pg.metadata.annotations, gang=f"{pg.namespace or 'default'}/{pg.name}"
    )
    problems += koord.pod_group_spec_problems(
        min_member=pg.spec.min_member, schedule_timeout_seconds=pg.spec.schedule_timeout_seconds
    )
    _raise_located(pg, problems)
    gang = KoordGang(
        namespace=pg.namespace or "default",
        name=pg.name,
        source=f"PodGroup {pg.key}",
        min_member=pg.spec.min_member,
        min_resources=pg.spec.min_resources,
        annotations=annotations,
        member_label=(label, pg.name),
        schedule_timeout_seconds=pg.spec.schedule_timeout_seconds,
    )
    return _with_members(gang, pods)


def gangs_from_pods(pods: Iterable[Pod]) -> list[KoordGang]:
    """Annotation-only gangs: pods with `gang.scheduling.koordinator.sh/name` and no PodGroup
    label (a label names the pod's gang first, as the scheduler reads it:
    `gangs.koordinator_gang_of`), grouped."""
    by_gang: dict[tuple[str, str], list[Pod]] = defaultdict(list)
    for pod in pods:
        named = koordinator_gang_of(pod.metadata.labels or {}, pod.metadata.annotations or {})
        name = named[0] if named is not None and named[1] == "koordinator-annotations" else None
        if name is not None:  # an empty name is refused by `gang_request` below
            by_gang[(pod.namespace or "default", name)].append(pod)
    out: list[KoordGang] = []
    for (ns, name), members in sorted(by_gang.items()):
        members.sort(key=lambda p: p.name)
        first = members[0]
        ann, problems = koord.gang_request(first.metadata.annotations, gang=f"{ns}/{name}")
        _raise_located(first, problems)
        for other in members[1:]:
            _same_gang_annotations(first, other)
        if ann.min_available is None:
            raise InvalidSpecError(
                f"Pod {first.key}: {koord.annotation_path(koord.GANG_MIN_AVAILABLE)}",
                None,
                f"Required value: gang {ns}/{name} has no min-available; Koordinator ignores such a gang",
            )
        out.append(
            KoordGang(
                namespace=ns,
                name=name,
                source=f"annotations on pods of gang {ns}/{name}",
                min_member=ann.min_available,
                min_resources=None,
                annotations=ann,
                member_label=None,
                members=tuple(members),
            )
        )
    return out


def _raise_located(obj: TypedObject, problems: list[InvalidSpecError]) -> None:
    """Every problem at once, each naming the object."""
    raise_all(
        [InvalidSpecError(f"{obj.kind} {obj.key}: {p.field_path}", p.value, p.detail) for p in problems]
    )


def check_members(gang: KoordGang, layers: Layers) -> None:
    """Each member pod's gang annotations, read as admission reads them (`gang_request`, and
    gather layers the cluster's layers know); raises every problem of the first bad member."""
    for pod in gang.members:
        parsed, problems = koord.gang_request(pod.metadata.annotations, gang=gang.id)
        if parsed.network_topology is not None and layers.known:
            problems += koord.unknown_layer_problems(
                parsed.network_topology, {*layers.tiers, koord.CLUSTER_LAYER}
            )
        _raise_located(pod, problems)


def _same_gang_annotations(first: Pod, other: Pod) -> None:
    keys = (koord.GANG_MIN_AVAILABLE, koord.NETWORK_TOPOLOGY_SPEC, koord.GANG_GROUPS)
    for key in keys:
        a, b = first.metadata.annotation(key), other.metadata.annotation(key)
        if b is not None and a is not None and a != b:
            raise InvalidSpecError(
                f"Pod {other.key}: {koord.annotation_path(key)}",
                b,
                f"Invalid value: {go_quote(b)}: differs from pod {first.name} of the same gang ({go_quote(a)})",
            )


def _with_members(gang: KoordGang, pods: Iterable[Pod]) -> KoordGang:
    members = tuple(sorted((p for p in pods if gang.owns(p)), key=lambda p: p.name))
    return dataclasses.replace(gang, members=members)


# --- one gang ------------------------------------------------------------------------------


def translate(
    gang: KoordGang,
    *,
    layers: Layers,
    scheduler_name: str = DEFAULT_SCHEDULER,
) -> VolcanoGang:
    """One Koordinator gang -> one Volcano PodGroup of the same name and namespace."""
    check_members(gang, layers)
    report = TranslationReport(gang.source, "Volcano")
    _refuse_koordinator_only(gang, report)
    spec: JsonDict = {}
    if gang.min_member is not None:
        spec["minMember"] = gang.min_member
        report.carry(f"minMember = {gang.min_member}")
    else:
        report.default("minMember unset: Volcano reads it as 0 (no gang)")
    if gang.min_resources:
        spec["minResources"] = _canonical_resources([gang.min_resources], f"{gang.source}: spec.minResources")
        report.carry("minResources")
    _priority(gang.members, spec, report)
    network, subgroup = topology(gang, layers, report)
    if network is not None:
        spec["networkTopology"] = network
    if subgroup is not None:
        spec["subGroupPolicy"] = [subgroup]
    pg = _pod_group(gang.namespace, gang.name, spec)
    patches = _pod_patches(gang, gang.name, subgroup, scheduler_name, report)
    return VolcanoGang(pg, patches, report, (gang.id,))


def topology(
    gang: KoordGang, layers: Layers, report: TranslationReport
) -> tuple[JsonDict | None, JsonDict | None]:
    """network-topology-spec -> (job networkTopology, podCountMultiple subgroup entry)."""
    spec = gang.annotations.network_topology
    if spec is not None and any(g.layer == koord.CLUSTER_LAYER for g in spec.gather_strategy):
        # The implicit root holds every node: gathering there constrains nothing.
        report.carry(f"gather at {koord.CLUSTER_LAYER}: the whole cluster, no constraint")
        spec = koord.NetworkTopologyGatherSpec(
            tuple(g for g in spec.gather_strategy if g.layer != koord.CLUSTER_LAYER)
        )
    if spec is None or not spec.gather_strategy:
        return None, None
    field_path = f"{gang.source}: {koord.annotation_path(koord.NETWORK_TOPOLOGY_SPEC)}"
    job = _job_topology(spec, layers, field_path, report)
    multiples = [(i, g) for i, g in enumerate(spec.gather_strategy) if g.pod_count_multiple is not None]
    if not multiples:
        return job, None
    if len(multiples) > 1:
        i, g = multiples[1]
        raise NotExpressibleError(
            f"{field_path}.gatherStrategy[{i}].podCountMultiple",
            g.pod_count_multiple,
            f"podCountMultiple on {len(multiples)} layers ({', '.join(m.layer for _, m in multiples)}): "
            "a pod belongs to at most one Volcano subgroup, so only one layer's multiple can be kept",
            target="Volcano",
        )
    i, rule = multiples[0]
    where = f"{field_path}.gatherStrategy[{i}].podCountMultiple"
    return job, _multiple_subgroup(gang, rule, job, layers, where, report)


def _job_topology(
    spec: koord.NetworkTopologyGatherSpec, layers: Layers, field_path: str, report: TranslationReport
) -> JsonDict:
    listed = ", ".join(f"{g.strategy} {g.layer}" for g in spec.gather_strategy)
    if not layers.known:
        return _topology_by_tier_name(spec, field_path, report)
    try:
        constraint = constraints.from_koordinator(spec, dict(layers.tiers))
    except InvalidSpecError as exc:
        subject = field_path.split(": ", 1)[0]
        raise InvalidSpecError(f"{subject}: {exc.field_path}", exc.value, exc.detail) from None
    assert constraint is not None
    out = constraints.to_volcano(constraint).to_dict()
    by_tier = {t: name for name, t in layers.tiers.items()}
    report.carry(
        f"networkTopology = {inline(out)} "
        f"from [{listed}] ({by_tier.get(constraint.highest_tier or 0, '?')} is tier "
        f"{constraint.highest_tier})"
    )
    if constraint.mode == "hard":
        for g in spec.gather_strategy:
            if g.strategy == "PreferGather":
                report.refuse(
                    f"PreferGather {g.layer} (tier {layers.tiers[g.layer]}): Volcano holds one "
                    "constraint per job; "
                    f"the hard tier {constraint.highest_tier} of the MustGather layer is kept"
                )
            elif layers.tiers[g.layer] != constraint.highest_tier:
                report.carry(f"MustGather {g.layer} is implied by the deeper MustGather layer")
    return out


def _topology_by_tier_name(
    spec: koord.NetworkTopologyGatherSpec, field_path: str, report: TranslationReport
) -> JsonDict:
    """Without the layer order, only a spec that names one deciding layer can be translated:
    Volcano's highestTierName finds the tier by the HyperNodes' tierName (the layer name)."""
    must = sorted({g.layer for g in spec.gather_strategy if g.strategy == "MustGather"})
    prefer = sorted({g.layer for g in spec.gather_strategy if g.strategy == "PreferGather"})
    deciding, mode = (must, "hard") if must else (prefer, "soft")
    if len(deciding) != 1:
        raise MissingInputError(
            field_path,
            "the ClusterNetworkTopology `default` (or the HyperNodes)",
            f"layers {', '.join(deciding)} can only be ordered by the cluster's layer chain; add it "
            "to the input",
        )
    layer = deciding[0]
    if layer == koord.NODE_LAYER:
        out: JsonDict = {"mode": mode, "highestTierAllowed": 0}
    else:
        out = {"mode": mode, "highestTierName": layer}
    report.default(
        f"networkTopology = {inline(out)}: no ClusterNetworkTopology given, so the layer is named, not numbered"
    )
    if must:
        for g in spec.gather_strategy:
            if g.strategy == "PreferGather":
                report.refuse(
                    f"PreferGather {g.layer}: Volcano holds one constraint per job; MustGather "
                    f"{layer} is kept"
                )
    return out


def _multiple_subgroup(
    gang: KoordGang,
    rule: koord.GatherStrategy,
    job: JsonDict,
    layers: Layers,
    where: str,
    report: TranslationReport,
) -> JsonDict | None:
    """podCountMultiple N at a layer -> a subGroupPolicy of N pods each, hard within that
    layer; None when the job's own constraint already keeps every pod that close."""
    n = rule.pod_count_multiple
    assert n is not None
    if gang.min_member is not None and gang.min_member % n:
        raise NotExpressibleError(
            where,
            n,
            f"minMember {gang.min_member} is not a multiple of {n}: Volcano subgroups of {n} would "
            "leave one short",
            target="Volcano",
        )
    sub_topology = _subgroup_topology(rule, job, layers, report)
    if sub_topology is None:
        return None
    entry: JsonDict = {
        "name": POD_COUNT_MULTIPLE_POLICY,
        "subGroupSize": n,
        "labelSelector": {"matchExpressions": [{"key": SUBGROUP_INDEX_LABEL, "operator": "Exists"}]},
        "matchLabelKeys": [SUBGROUP_INDEX_LABEL],
        "networkTopology": sub_topology,
    }
    if gang.min_member:
        entry["minSubGroups"] = gang.min_member // n
    report.carry(
        f"podCountMultiple {n} at {rule.layer} -> subGroupPolicy: groups of {n} pods (label "
        f"{SUBGROUP_INDEX_LABEL} "
        f"= network-topology-index // {n}), each hard within {rule.layer}"
    )
    return entry


def _subgroup_topology(
    rule: koord.GatherStrategy, job: JsonDict, layers: Layers, report: TranslationReport
) -> JsonDict | None:
    """The subgroups' own constraint: hard at the rule's tier (by number when the layers are
    known, else by name); None when the job is already hard at that tier or below."""
    if not layers.known:
        if rule.layer == koord.NODE_LAYER:
            return {"mode": "hard", "highestTierAllowed": 0}
        return {"mode": "hard", "highestTierName": rule.layer}
    tier = layers.tiers[rule.layer]
    job_tier = job.get("highestTierAllowed")
    if job.get("mode") == "hard" and isinstance(job_tier, int) and tier >= job_tier:
        n = rule.pod_count_multiple
        report.carry(
            f"podCountMultiple {n} at {rule.layer}: implied, every pod already shares one "
            f"tier-{job_tier} "
            f"domain and minMember is a multiple of {n}"
        )
        return None
    return {"mode": "hard", "highestTierAllowed": tier}


def subgroup_index(pod: Pod, multiple: int) -> str:
    """The podCountMultiple group of one pod: its rank // N. Raises when the pod has no rank."""
    raw = pod.metadata.annotation(koord.NETWORK_TOPOLOGY_INDEX)
    if raw is None:
        raise NotExpressibleError(
            f"Pod {pod.key}: {koord.annotation_path(koord.NETWORK_TOPOLOGY_INDEX)}",
            None,
            f"podCountMultiple needs every member's rank to put it in a Volcano subgroup of {multiple}",
            target="Volcano",
        )
    return str(koord.parse_non_negative_int(koord.NETWORK_TOPOLOGY_INDEX, raw) // multiple)


def _pod_patches(
    gang: KoordGang, pg_name: str, subgroup: JsonDict | None, scheduler_name: str, report: TranslationReport
) -> tuple[PodPatch, ...]:
    multiple = subgroup["subGroupSize"] if subgroup is not None else None
    patches: list[PodPatch] = []
    counts: dict[str, int] = defaultdict(int)
    for pod in gang.members:
        labels: dict[str, str] = {}
        if multiple is not None:
            labels[SUBGROUP_INDEX_LABEL] = subgroup_index(pod, multiple)
            counts[labels[SUBGROUP_INDEX_LABEL]] += 1
        patches.append(
            PodPatch(
                namespace=pod.namespace or gang.namespace,
                name=pod.name,
                annotations={volcano.GROUP_NAME_ANNOTATION: pg_name},
                labels=labels,
                scheduler_name=scheduler_name,
            )
        )
    uneven = {k: v for k, v in counts.items() if v != multiple}
    if multiple is not None and uneven:
        shown = ", ".join(f"{k}: {v}" for k, v in sorted(uneven.items(), key=lambda kv: int(kv[0])))
        raise NotExpressibleError(
            f"{gang.source}: {koord.annotation_path(koord.NETWORK_TOPOLOGY_INDEX)}",
            shown,
            f"ranks // {multiple} must give groups of exactly {multiple} pods; got {{{shown}}}",
            target="Volcano",
        )
    if patches:
        report.carry(
            f"{_pods(len(patches))}: annotation {volcano.GROUP_NAME_ANNOTATION}={pg_name}, schedulerName "
            f"{scheduler_name} (schedulerName is immutable: applies at admission or to recreated pods)"
        )
    else:
        report.default(
            f"no member pods given: they join with annotation {volcano.GROUP_NAME_ANNOTATION}={pg_name} and "
            f"schedulerName {scheduler_name}"
            + (f", plus label {SUBGROUP_INDEX_LABEL} = rank // {multiple}" if multiple else "")
        )
    return tuple(patches)


def _refuse_koordinator_only(gang: KoordGang, report: TranslationReport) -> None:
    a = gang.annotations
    if gang.schedule_timeout_seconds is not None:
        report.refuse(
            f"scheduleTimeoutSeconds {gang.schedule_timeout_seconds}: Volcano PodGroups have no gang timeout"
        )
    if a.waiting_time_seconds is not None:
        report.refuse(f"{koord.GANG_WAITING_TIME}: Volcano PodGroups have no gang timeout")
    if a.mode is not None and a.mode != "Strict":
        report.refuse(f"{koord.GANG_MODE} {a.mode}: Volcano always retries the whole gang (Strict)")
    if a.match_policy is not None:
        report.refuse(f"{koord.GANG_MATCH_POLICY} {a.match_policy}: no Volcano equivalent")
    if a.total_number is not None and a.total_number != gang.min_member:
        report.refuse(
            f"{koord.GANG_TOTAL_NUMBER} {a.total_number}: Volcano counts members by their annotation"
        )


def _priority(members: Sequence[Pod], spec: JsonDict, report: TranslationReport) -> None:
    names = sorted({p.spec.priority_class_name for p in members if p.spec.priority_class_name})
    if not members:
        report.default("priorityClassName: member pods not given; the PodGroup carries none")
        return
    if not names:
        return
    chosen = next(p.spec.priority_class_name for p in members if p.spec.priority_class_name)
    spec["priorityClassName"] = chosen
    report.carry(f"priorityClassName = {chosen} (from the member pods)")
    for other in names:
        if other != chosen:
            report.refuse(
                f"priorityClassName {other} on some members: a PodGroup has one priority ({chosen})"
            )


def _canonical_resources(lists: Iterable[Mapping[str, Quantity]], where: str) -> dict[str, str]:
    totals: dict[str, Decimal] = {}
    binary: dict[str, bool] = {}
    for resources in lists:
        for name, q in resources.items():
            totals[name] = totals.get(name, Decimal(0)) + parse_quantity(q, field=f"{where}[{name}]")
            binary.setdefault(name, is_binary(q))
    return {name: format_quantity(v, binary=binary[name]) for name, v in sorted(totals.items())}


def _pod_group(namespace: str, name: str, spec: JsonDict) -> volcano.PodGroup:
    """The Volcano PodGroup, held to Volcano's own rules (`volcano.pod_group_problems`, what
    its admission refuses): a source it cannot hold, e.g. a negative minResources, is refused
    here, by field and value, never written to be denied."""
    meta: JsonDict = {"name": name, "namespace": namespace}
    pg = volcano.PodGroup.parse(
        {"apiVersion": volcano.PODGROUP_API_VERSION, "kind": "PodGroup", "metadata": meta, "spec": spec}
    )
    raise_all(volcano.pod_group_problems(pg.spec))
    return pg


# --- GangGroups ------------------------------------------------------------------------------


def group_members(gang: KoordGang) -> tuple[str, ...]:
    """The `ns/name` ids of the GangGroup `gang` belongs to (just itself when none)."""
    return tuple(sorted(set(gang.annotations.groups or ()) | {gang.id}))


def gang_group_name(member_ids: Sequence[str]) -> str:
    """A stable name for a GangGroup's PodGroup: the first member's name plus `-ganggroup`
    (a hash keeps it within 253 characters)."""
    first = sorted(member_ids)[0].split("/", 1)[1]
    name = f"{first}-ganggroup"
    if len(name) > 253:
        digest = hashlib.sha256("\n".join(sorted(member_ids)).encode()).hexdigest()[:8]
        name = f"{first[: 253 - len('-ganggroup-') - 8]}-ganggroup-{digest}"
    return name


def translate_group(
    gangs: Sequence[KoordGang],
    *,
    layers: Layers,
    scheduler_name: str = DEFAULT_SCHEDULER,
) -> VolcanoGang:
    """A GangGroup -> one Volcano PodGroup: minMember the sum, one subgroup per member gang.

    `gangs` holds every member; each must list the same group and topology (`_group_of`)."""
    ids = group_members(gangs[0])
    members = _group_of(gangs, ids, layers)
    first = members[0]
    report = TranslationReport(f"GangGroup {', '.join(ids)}", "Volcano")
    for m in members:
        _refuse_koordinator_only(m, report)
    name = gang_group_name(ids)
    spec: JsonDict = {}
    mins = [m.min_member or 0 for m in members]
    spec["minMember"] = sum(mins)
    report.carry(
        f"minMember = {sum(mins)} ({' + '.join(f'{m.name} {n}' for m, n in zip(members, mins, strict=True))})"
    )
    resources = [m.min_resources for m in members if m.min_resources]
    if resources:
        spec["minResources"] = _canonical_resources(resources, f"{first.source}: spec.minResources")
        report.carry("minResources = the members' sum")
    all_pods = [p for m in members for p in m.members]
    _priority(all_pods, spec, report)
    network, _ = topology(first, layers, report)
    if network is not None:
        spec["networkTopology"] = network
    spec["subGroupPolicy"] = [_member_subgroup(m, report) for m in members]
    pg = _pod_group(first.namespace, name, spec)
    patches = _group_patches(members, name, scheduler_name)
    report.carry(
        f"{_pods(len(patches))} join {name}: annotation {volcano.GROUP_NAME_ANNOTATION}, "
        f"schedulerName {scheduler_name}"
        if patches
        else f"no member pods given: they join with annotation {volcano.GROUP_NAME_ANNOTATION}={name}"
    )
    return VolcanoGang(pg, tuple(patches), report, ids)


def _group_of(gangs: Sequence[KoordGang], ids: Sequence[str], layers: Layers) -> list[KoordGang]:
    """The member gangs in the group's order, once each is known to fit in one Volcano
    PodGroup: all present, the same group and topology, one namespace, no podCountMultiple."""
    by_id = {g.id: g for g in gangs}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise MissingInputError(
            f"GangGroup {', '.join(ids)}",
            f"member {'s' if len(missing) > 1 else ''}{', '.join(missing)}",
            "every member gang's PodGroup (or pods) must be in the input to size the group",
        )
    members = [by_id[i] for i in ids]
    first = members[0]
    for m in members:
        check_members(m, layers)
    for m in members[1:]:
        _same_group(first, m)
    namespaces = sorted({m.namespace for m in members})
    if len(namespaces) > 1:
        raise NotExpressibleError(
            f"{first.source}: {koord.annotation_path(koord.GANG_GROUPS)}",
            list(ids),
            f"members span namespaces {', '.join(namespaces)}; a Volcano PodGroup and its pods "
            "share one namespace",
            target="Volcano",
        )
    multiples = [
        g
        for g in (first.annotations.network_topology or koord.NetworkTopologyGatherSpec(())).gather_strategy
        if g.pod_count_multiple is not None
    ]
    if multiples:
        raise NotExpressibleError(
            f"{first.source}: {koord.annotation_path(koord.NETWORK_TOPOLOGY_SPEC)}",
            multiples[0].pod_count_multiple,
            "podCountMultiple on a GangGroup: each member gang already is a Volcano subgroup, and a "
            "pod belongs "
            "to at most one",
            target="Volcano",
        )
    return members


def _group_patches(members: Sequence[KoordGang], name: str, scheduler_name: str) -> list[PodPatch]:
    """Every member's pods join the group's PodGroup; a gang without a label of its own gets
    one, so its subgroup can select its pods."""
    patches: list[PodPatch] = []
    for m in members:
        for patch in _pod_patches(m, name, None, scheduler_name, TranslationReport(m.source, "Volcano")):
            if m.member_label is None:
                patch = PodPatch(
                    patch.namespace, patch.name, patch.annotations, {GANG_LABEL: m.name}, patch.scheduler_name
                )
            patches.append(patch)
    return patches


def _member_subgroup(m: KoordGang, report: TranslationReport) -> JsonDict:
    key, value = m.member_label or (GANG_LABEL, m.name)
    entry: JsonDict = {
        "name": m.name,
        "labelSelector": {"matchLabels": {key: value}},
        "matchLabelKeys": [key],
        "minSubGroups": 1,
    }
    if m.min_member:
        entry["subGroupSize"] = m.min_member
    report.carry(
        f"member {m.id} -> subGroupPolicy {m.name} (pods labelled {key}={value}, {m.min_member or 0} needed)"
    )
    return entry


def _same_group(first: KoordGang, other: KoordGang) -> None:
    if group_members(other) != group_members(first):
        raise InvalidSpecError(
            f"{other.source}: {koord.annotation_path(koord.GANG_GROUPS)}",
            list(other.annotations.groups or ()),
            f"Invalid value: lists {', '.join(group_members(other))}, but {first.id} lists "
            f"{', '.join(group_members(first))}",
        )
    differing = koord.differing_group_specs(
        other.id,
        other.annotations.network_topology,
        [first.id],
        {first.id: first.annotations.network_topology},
    )
    raise_all([InvalidSpecError(f"{other.source}: {p.field_path}", p.value, p.detail) for p in differing])


# --- everything at once ----------------------------------------------------------------------


def group_gangs(gangs: Iterable[KoordGang]) -> list[list[KoordGang]]:
    """Gangs to translate together: each GangGroup's members (as far as given), else one."""
    gang_list = sorted(gangs, key=lambda g: g.id)
    out: list[list[KoordGang]] = []
    done: set[str] = set()
    for gang in gang_list:
        if gang.id in done:
            continue
        ids = group_members(gang)
        out.append([g for g in gang_list if g.id in ids] if len(ids) > 1 else [gang])
        done.update(ids)
    return out


def translate_gangs(
    gangs: Sequence[KoordGang], *, layers: Layers, scheduler_name: str = DEFAULT_SCHEDULER
) -> VolcanoGang:
    """One entry of `group_gangs`: a lone gang or a GangGroup."""
    if len(group_members(gangs[0])) > 1:
        return translate_group(gangs, layers=layers, scheduler_name=scheduler_name)
    return translate(gangs[0], layers=layers, scheduler_name=scheduler_name)


def translate_all(
    pod_groups: Iterable[KoordPodGroup],
    pods: Iterable[Pod] = (),
    *,
    cnt: koord.ClusterNetworkTopology | None = None,
    tree: TopologyTree | None = None,
    scheduler_name: str = DEFAULT_SCHEDULER,
) -> list[VolcanoGang]:
    """Every gang among the PodGroups and annotated pods; GangGroups folded into one each.
    The first gang that cannot be translated raises."""
    pod_list = list(pods)
    gangs = [gang_from_pod_group(pg, pod_list) for pg in pod_groups]
    known = {g.id for g in gangs}
    gangs += [g for g in gangs_from_pods(pod_list) if g.id not in known]
    layers = Layers.of(cnt, tree)
    return [
        translate_gangs(group, layers=layers, scheduler_name=scheduler_name) for group in group_gangs(gangs)
    ]


def _pods(n: int) -> str:
    return f"{n} member pod{'' if n == 1 else 's'}"
