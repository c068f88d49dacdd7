"""Kueue's Topology (`kueue.x-k8s.io/v1beta1`, also served as v1beta2; cluster-scoped):
an ordered list of node labels, widest first, that names the network domains.

`label_levels` turns it into the topology tree's levels. `kubernetes.io/hostname`, allowed
only as the lowest level, means "the node itself" and so makes no domain.
"""

from __future__ import annotations

from pydantic import Field

from translations._base import KubeModel, TypedObject
from translations.errors import InvalidSpecError
from translations.topology import LabelLevel

GROUP = "kueue.x-k8s.io"
API_VERSION = f"{GROUP}/v1beta1"
API_VERSIONS = (API_VERSION, f"{GROUP}/v1beta2")
HOSTNAME_LABEL = "kubernetes.io/hostname"
NODE_LABEL_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"  # optional DNS-1123 prefix
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)


class TopologyLevel(KubeModel):
    """One level of the topology."""

    node_label: str = Field(min_length=1, max_length=316, pattern=NODE_LABEL_PATTERN)
    """The node label whose values name this level's domains, e.g. `cloud.provider.com/topology-rack`."""


class TopologySpec(KubeModel):
    """The levels, widest first."""

    levels: list[TopologyLevel] = Field(min_length=1, max_length=16)
    """1-16 unique levels; `kubernetes.io/hostname` only as the last."""


class Topology(TypedObject):
    """Kueue's description of the cluster's network levels."""

    api_version: str | None = API_VERSION
    kind: str | None = "Topology"
    spec: TopologySpec
    """The levels."""


def label_levels(topology: Topology) -> list[LabelLevel]:
    """The levels bottom-up (tier 1 first), each named after its node label.

    Raises InvalidSpecError for a repeated label or a hostname level that is not the lowest,
    the two rules Kueue's CRD enforces with CEL (which old API servers ignore).
    """
    keys = [level.node_label for level in topology.spec.levels]
    seen: set[str] = set()
    for i, key in enumerate(keys):
        if key in seen:
            raise InvalidSpecError(f"spec.levels[{i}].nodeLabel", key, f'Duplicate value: "{key}"')
        seen.add(key)
        if key == HOSTNAME_LABEL and i != len(keys) - 1:
            raise InvalidSpecError(
                f"spec.levels[{i}].nodeLabel",
                key,
                f'Invalid value: "{key}": the kubernetes.io/hostname label can only be used at the '
                "lowest level of topology",
            )
    domains = [k for k in keys if k != HOSTNAME_LABEL]
    return [LabelLevel(key, (key,)) for key in reversed(domains)]
