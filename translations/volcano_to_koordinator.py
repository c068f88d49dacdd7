"""Volcano PodGroup -> Koordinator's PodGroup (`scheduling.sigs.k8s.io`) with gang annotations.

`hard` at tier T becomes `MustGather` at layer(T); `soft` becomes `PreferGather` at every
layer up to layer(T) (`constraints.to_koordinator`). Layers come from the
ClusterNetworkTopology, else from the HyperNodes' tierNames; a `highestTierName` is taken as
the layer's name. The podCountMultiple subgroup `koordinator_to_volcano` makes is turned back
into `podCountMultiple`; any other subgroup with a hard topology cannot be said in
Koordinator (its gather rules cover the whole gang) and raises.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from translations import constraints, volcano
from translations import koordinator as koord
from translations._base import JsonDict
from translations.core import Pod
from translations.errors import MissingInputError, NotExpressibleError, raise_all
from translations.koordinator_to_volcano import SUBGROUP_INDEX_LABEL
from translations.patches import PodPatch
from translations.report import TranslationReport
from translations.topology import TopologyTree

DEFAULT_SCHEDULER = "koord-scheduler"


@dataclass(frozen=True)
class KoordinatorGang:
    pod_group: koord.SigsPodGroup
    pod_patches: tuple[PodPatch, ...]
    report: TranslationReport


def layers_by_tier(cnt: koord.ClusterNetworkTopology | None, tree: TopologyTree | None) -> dict[int, str]:
    """tier -> Koordinator layer name (0 is NodeTopologyLayer): the chain's layers, else the
    tiers whose HyperNodes agree on one tierName."""
    if cnt is not None:
        return {tier: name for name, tier in constraints.layer_tiers(tree, cnt).items()}
    return {0: koord.NODE_LAYER, **(tree.tier_names if tree is not None else {})}


def translate(
    pg: volcano.PodGroup,
    *,
    pods: Iterable[Pod] = (),
    cnt: koord.ClusterNetworkTopology | None = None,
    tree: TopologyTree | None = None,
    scheduler_name: str = DEFAULT_SCHEDULER,
) -> KoordinatorGang:
    raise_all(volcano.pod_group_problems(pg.spec, tier_of_name=tree.tier_of_name if tree else lambda _: None))
    report = TranslationReport(f"PodGroup {pg.key}", "Koordinator")
    layer_of = layers_by_tier(cnt, tree)
    spec: JsonDict = {}
    if pg.spec.min_member is not None:
        spec["minMember"] = pg.spec.min_member
        report.carry(f"minMember = {pg.spec.min_member}")
    if pg.spec.min_resources:
        spec["minResources"] = dict(pg.spec.min_resources)
        report.carry("minResources")
    for what, value in (
        ("queue", pg.spec.queue),
        ("priorityClassName", pg.spec.priority_class_name),
        ("minTaskMember", pg.spec.min_task_member),
    ):
        if value:
            hint = "; the member pods' own priorityClassName decides" if what == "priorityClassName" else ""
            report.refuse(f"{what} {value}: Koordinator's PodGroup has no such field{hint}")
    gather = _gather(pg, layer_of, constraints.layer_tiers(tree, cnt), report)
    multiple = _pod_count_multiple(pg, layer_of, report)
    if multiple is not None:
        gather = _with_multiple(gather, *multiple, report)
    annotations: dict[str, str] = {}
    if gather is not None and gather.gather_strategy:
        annotations[koord.NETWORK_TOPOLOGY_SPEC] = gather.to_annotation()
    meta: JsonDict = {"name": pg.name}
    if pg.namespace:
        meta["namespace"] = pg.namespace
    if annotations:
        meta["annotations"] = annotations
    out = koord.SigsPodGroup.parse(
        {"apiVersion": koord.SIGS_API_VERSION, "kind": "PodGroup", "metadata": meta, "spec": spec}
    )
    patches = tuple(
        PodPatch(
            namespace=p.namespace or pg.namespace,
            name=p.name,
            labels={koord.SIGS_POD_GROUP_LABEL: pg.name},
            scheduler_name=scheduler_name,
        )
        for p in sorted(pods, key=lambda p: p.name)
        if p.metadata.annotation(volcano.GROUP_NAME_ANNOTATION) == pg.name
        and (not pg.namespace or not p.namespace or p.namespace == pg.namespace)
    )
    report.carry(
        f"{len(patches)} member pod{'' if len(patches) == 1 else 's'}: label "
        f"{koord.SIGS_POD_GROUP_LABEL}={pg.name}, schedulerName {scheduler_name}"
        if patches
        else f"member pods join with label {koord.SIGS_POD_GROUP_LABEL}={pg.name}"
    )
    return KoordinatorGang(out, patches, report)


def _gather(
    pg: volcano.PodGroup, layer_of: dict[int, str], tiers: dict[str, int], report: TranslationReport
) -> koord.NetworkTopologyGatherSpec | None:
    """The gather rules for the PodGroup's networkTopology; `tiers` (layer name -> tier,
    `constraints.layer_tiers`) reads a highestTierName as the scheduler does."""
    nt = pg.spec.network_topology
    if nt is None:
        return None
    if (
        nt.highest_tier_name is not None
        and nt.highest_tier_allowed is None
        and nt.highest_tier_name not in layer_of.values()
    ):
        # No layer chain to number it: the tierName is the layer's name (hypernodes.py makes it so).
        strategy: koord.GatherStrategyName = "MustGather" if nt.effective_mode == "hard" else "PreferGather"
        report.default(f"{strategy} {nt.highest_tier_name}: highestTierName taken as the layer name")
        return koord.NetworkTopologyGatherSpec((koord.GatherStrategy(nt.highest_tier_name, strategy),))
    tier = nt.highest_tier_allowed if nt.highest_tier_name is None else tiers.get(nt.highest_tier_name)
    constraint = constraints.TopologyConstraint(nt.effective_mode, tier)
    if constraint.mode == "hard" and tier is None:
        report.carry("networkTopology hard without a tier binds nothing: no gather strategy")
        return None
    if tier is not None and tier not in layer_of:
        if len(layer_of) <= 1:
            raise MissingInputError(
                f"PodGroup {pg.key}: spec.networkTopology.highestTierAllowed",
                "the ClusterNetworkTopology or HyperNodes",
                f"tier {tier} has a Koordinator layer only in the cluster's layer chain; add it to the input",
            )
        raise NotExpressibleError(
            "spec.networkTopology.highestTierAllowed",
            tier,
            f"tier {tier} has no layer (layers: {_layer_list(layer_of)})",
            target="Koordinator",
        )
    spec = constraints.to_koordinator(constraint, layer_of)
    report.carry(
        f"networkTopology {{mode: {constraint.mode}, tier {tier}}} -> "
        + ", ".join(f"{g.strategy} {g.layer}" for g in spec.gather_strategy)
    )
    return spec


def _pod_count_multiple(
    pg: volcano.PodGroup, layer_of: dict[int, str], report: TranslationReport
) -> tuple[str, int] | None:
    found: tuple[str, int] | None = None
    for i, sub in enumerate(pg.spec.sub_group_policy or []):
        where = f"spec.subGroupPolicy[{i}]"
        nt = sub.network_topology
        ours = (
            sub.match_label_keys == [SUBGROUP_INDEX_LABEL] and nt is not None and nt.effective_mode == "hard"
        )
        if ours and found is None and nt is not None:
            layer = (
                nt.highest_tier_name
                if nt.highest_tier_name is not None
                else layer_of.get(nt.highest_tier_allowed or 0)
            )
            if layer is not None and sub.sub_group_size:
                found = (layer, sub.sub_group_size)
                continue
        if nt is not None and nt.effective_mode == "hard":
            raise NotExpressibleError(
                f"{where}.networkTopology",
                sub.name,
                "a hard topology on a subset of the gang: Koordinator's gather rules cover the whole gang",
                target="Koordinator",
            )
        report.refuse(
            f"{where} ({sub.name}): Koordinator has no subgroups"
            + ("; its soft topology is dropped" if nt is not None else "")
        )
    return found


def _with_multiple(
    gather: koord.NetworkTopologyGatherSpec | None, layer: str, n: int, report: TranslationReport
) -> koord.NetworkTopologyGatherSpec:
    rules = list(gather.gather_strategy if gather is not None else ())
    for i, rule in enumerate(rules):
        if rule.layer == layer:
            rules[i] = koord.GatherStrategy(rule.layer, rule.strategy, n)
            break
    else:
        rules.append(koord.GatherStrategy(layer, "PreferGather", n))
        report.default(f"PreferGather {layer} added to carry podCountMultiple {n}")
    report.carry(f"subgroups of {n} hard within {layer} -> podCountMultiple {n} at {layer}")
    return koord.NetworkTopologyGatherSpec(tuple(rules))


def _layer_list(layer_of: dict[int, str]) -> str:
    return ", ".join(f"{t}: {n}" for t, n in sorted(layer_of.items()))
