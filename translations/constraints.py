"""One constraint model for every dialect.

`hard` at tier T: every pod of the gang inside one domain of tier <= T (T = 0: one node).
`hard` at a bare node label (`label_key`, Kubernetes' PodGroup topology key when no tier of the
tree is made of that label): every pod on nodes sharing one value of the label, as kube-scheduler
reads any node label as a level; nodes without the label are in no domain. It binds no tier:
the placer's TopologyPlacement and DefaultPreemption narrow the gang to one value's nodes.
`soft`: the lowest-tier domain that fits, else spread over the fewest domains; a tier, when
given, is where the preference stops (it never makes a soft gang unschedulable).

Each dialect maps onto `TopologyConstraint` here, so the placer, the translations and the
validators agree on what a spec means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from translations import koordinator as koord
from translations import volcano
from translations.errors import NotExpressibleError, go_quote, raise_all
from translations.topology import TopologyTree, tier_named

Mode = Literal["hard", "soft"]


@dataclass(frozen=True, slots=True)
class TopologyConstraint:
    """Where a gang (or a subgroup of it) must gather."""

    mode: Mode
    highest_tier: int | None
    """None: no tier given (hard without a tier binds nothing; soft prefers the lowest fit)."""
    label_key: str | None = None
    """Hard inside one value of this node label (no tier of the tree); None: tiers decide."""

    @property
    def binds(self) -> bool:
        """True when placement must fail rather than exceed the tier."""
        return self.mode == "hard" and self.highest_tier is not None


@dataclass(frozen=True, slots=True)
class SubGroupConstraint:
    """Pods of a gang, `size` at a time, that gather more tightly inside the gang's domain."""

    name: str
    size: int
    constraint: TopologyConstraint
    match_label_keys: tuple[str, ...] = ()
    """Pods with equal values for these labels form one subgroup; empty: consecutive ranks."""


def resolve_tier(
    *,
    tier: int | None,
    tier_name: str | None,
    tree: TopologyTree | None,
    field: str,
    warnings: list[str] | None = None,
) -> int | None:
    """A tier given by number or by HyperNode tierName, as a number.

    A tierName no HyperNode of `tree` carries follows Volcano: it is logged and no tier limit
    applies (None), with a warning appended to `warnings`. Without a tree there is nothing to
    resolve the name against: None, silently."""
    raise_all(
        volcano.network_topology_problems(highest_tier_allowed=tier, highest_tier_name=tier_name, path=field)
    )
    if tier_name is None:
        return tier
    resolved = tree.tier_of_name(tier_name) if tree is not None else None
    if resolved is None and tree is not None and warnings is not None:
        known = sorted(set(tree.tier_names.values()))
        warnings.append(
            f"{field}.highestTierName: {go_quote(tier_name)} names no HyperNode tier "
            f"(known: {', '.join(known) or 'none'}): as in Volcano, no tier limit applies"
        )
    return resolved


def from_volcano(
    spec: volcano.NetworkTopologySpec | None,
    tree: TopologyTree | None,
    *,
    field: str = "spec.networkTopology",
    warnings: list[str] | None = None,
) -> TopologyConstraint | None:
    if spec is None:
        return None
    tier = resolve_tier(
        tier=spec.highest_tier_allowed,
        tier_name=spec.highest_tier_name,
        tree=tree,
        field=field,
        warnings=warnings,
    )
    return TopologyConstraint(spec.effective_mode, tier)


def layer_tiers(tree: TopologyTree | None, cnt: koord.ClusterNetworkTopology | None) -> dict[str, int]:
    """Koordinator layer name -> tier: from the ClusterNetworkTopology chain when given,
    else from the tree's tier names (HyperNode tierName equal to the layer name), each read as
    a `highestTierName` is (`topology.tier_named`: among other names at its tier, and the
    lowest of the tiers carrying it)."""
    if cnt is not None:
        chain = cnt.layers_bottom_up()
        out = {layer.topology_layer: i + 1 for i, layer in enumerate(chain)}
        out[koord.NODE_LAYER] = 0
        return out
    carriers: dict[str, set[int]] = {}
    for d in tree.domains.values() if tree else ():
        if d.tier_name:
            carriers.setdefault(d.tier_name, set()).add(d.tier)
    out = {name: tier for name, tiers in carriers.items() if (tier := tier_named(tiers)) is not None}
    out[koord.NODE_LAYER] = 0
    return out


def from_koordinator(
    spec: koord.NetworkTopologyGatherSpec | None, tiers: dict[str, int]
) -> TopologyConstraint | None:
    """The deepest MustGather layer gives hard at its tier; PreferGather alone gives soft at
    the highest listed layer's tier. Unknown layers raise InvalidSpecError."""
    if spec is None or not spec.gather_strategy:
        return None
    raise_all(koord.unknown_layer_problems(spec, tiers))
    must: list[int] = []
    prefer: list[int] = []
    for g in spec.gather_strategy:
        (must if g.strategy == "MustGather" else prefer).append(tiers[g.layer])
    if must:
        return TopologyConstraint("hard", min(must))
    return TopologyConstraint("soft", max(prefer))


def to_volcano(constraint: TopologyConstraint) -> volcano.NetworkTopologySpec:
    # An unset tier stays unset rather than null: the CRD types it as an integer.
    return volcano.network_topology(constraint.mode, constraint.highest_tier)


def to_koordinator(
    constraint: TopologyConstraint, layer_of_tier: dict[int, str]
) -> koord.NetworkTopologyGatherSpec:
    """hard tier T -> MustGather at layer(T); soft -> PreferGather at every layer up to layer(T).

    Soft without a tier prefers the lowest fit with no ceiling: PreferGather at every layer.
    Soft at tier 0 is PreferGather at NodeTopologyLayer alone.
    """
    if constraint.highest_tier is None and constraint.mode == "soft" and any(t > 0 for t in layer_of_tier):
        return to_koordinator(TopologyConstraint("soft", max(layer_of_tier)), layer_of_tier)
    if constraint.highest_tier is None:
        raise NotExpressibleError(
            "spec.networkTopology.highestTierAllowed",
            None,
            "a gather strategy needs a layer; no tier was given",
            target="Koordinator",
        )
    t = constraint.highest_tier
    if t not in layer_of_tier:
        raise NotExpressibleError(
            "spec.networkTopology.highestTierAllowed",
            t,
            f"tier {t} has no Koordinator layer",
            target="Koordinator",
        )
    if constraint.mode == "hard":
        return koord.NetworkTopologyGatherSpec((koord.GatherStrategy(layer_of_tier[t], "MustGather"),))
    prefs = tuple(
        koord.GatherStrategy(layer_of_tier[tier], "PreferGather")
        for tier in sorted(layer_of_tier)
        if 0 < tier <= t or tier == t
    )
    return koord.NetworkTopologyGatherSpec(prefs)
