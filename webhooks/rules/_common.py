"""Pieces every rule shares: strict parsing into the models, integer bounds, and the
networkTopology checks that LWS and Volcano have in common."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from translations import _base as base
from translations._base import KubeModel
from translations.errors import InvalidSpecError, render_value
from translations.topology import tier_named
from webhooks.rules import fielderrors as fe
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.fielderrors import FieldError

INT32_MAX, INT64_MAX = base.INT32_MAX, base.INT64_MAX

M = TypeVar("M", bound=KubeModel)


@dataclass
class Findings:
    """Errors and warnings collected while checking one object."""

    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def parse_strict(model: type[M], obj: Any) -> tuple[M | None, list[FieldError]]:
    """The object as `model`, refusing what the API server's schema check refuses (fields
    no model names are dropped: a verdict never depends on them)."""
    if not isinstance(obj, dict):
        return None, [fe.invalid("<root>", obj, "must be of type object")]
    try:
        return model.parse(obj, strict=True, keep_unknown=False), []
    except InvalidSpecError as exc:
        return None, fe.from_spec_errors(exc)


def at_most(path: str, value: int | None, maximum: int) -> list[FieldError]:
    """`translations._base.at_most` as field errors."""
    return [fe.from_spec_error(p) for p in base.at_most(path, value, maximum)]


class TopologySpec(Protocol):
    """LWS's and Volcano's networkTopology share these fields."""

    @property
    def mode(self) -> str | None: ...
    @property
    def highest_tier_allowed(self) -> int | None: ...
    @property
    def highest_tier_name(self) -> str | None: ...


def topology_warnings(spec: TopologySpec | None, path: str, state: ClusterState, out: Findings) -> None:
    """Warnings for tier 0 and for tiers or tier names the cluster's HyperNodes do not have
    (for a spec whose errors were found elsewhere: none when tier and tierName are both set)."""
    if spec is None:
        return
    tier, name = spec.highest_tier_allowed, spec.highest_tier_name
    if tier is not None and name is not None:
        return
    if tier == 0:
        out.warnings.append(f"{path}.highestTierAllowed: 0 confines every pod of the gang to a single node")
    if not state.known:
        return
    if tier is not None and tier > 0:
        if state.max_tier is None:
            out.warnings.append(
                f"{path}.highestTierAllowed: no HyperNode exists yet, "
                f"so no tier-{tier} domain can hold the gang"
            )
        elif tier > state.max_tier:
            out.warnings.append(
                f"{path}.highestTierAllowed: {tier} is above the highest HyperNode tier "
                f"in the cluster ({state.max_tier})"
            )
    if name is not None and name not in state.tier_names:
        out.warnings.append(
            f"{path}.highestTierName: {render_value(name)} matches no HyperNode tierName ({_known(state)})"
        )


def _known(state: ClusterState) -> str:
    names = sorted(state.tier_names)
    return "known: " + ", ".join(render_value(n) for n in names) if names else "no HyperNode has a tierName"


def tier_of_name(state: ClusterState, name: str) -> int | None:
    """The tier a HyperNode tierName stands for in the cluster (`topology.tier_named`, as the
    scheduler resolves it); None without a cluster view."""
    tiers: Sequence[int] = state.tier_names.get(name, ()) if state.known else ()
    return tier_named(tiers)
