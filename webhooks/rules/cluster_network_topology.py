"""Koordinator ClusterNetworkTopology: named `default` (the only one Koordinator reads), layer
names unique, one chain from NodeTopologyLayer up through parentTopologyLayer with no cycle
and no orphan, a node label key on every layer above the nodes."""

from __future__ import annotations

from typing import Any

from translations.koordinator import CNT_DEFAULT_NAME, ClusterNetworkTopology
from webhooks.rules import fielderrors as fe
from webhooks.rules._common import parse_strict
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import Decision


def validate(obj: Any, state: ClusterState) -> Decision:
    cnt, errors = parse_strict(ClusterNetworkTopology, obj)
    if cnt is None:
        return Decision.of(errors)
    if cnt.metadata.name is not None and cnt.name != CNT_DEFAULT_NAME:
        errors.append(fe.not_supported("metadata.name", cnt.name, [CNT_DEFAULT_NAME]))
    errors += [fe.from_spec_error(p) for p in cnt.problems()]
    return Decision.of(errors)
