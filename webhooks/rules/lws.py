"""LeaderWorkerSet: what `translations.lws.topology_request` finds (the one reading of an
LWS's topology, shared with `topobridge translate` and the controller), plus warnings about
tiers and tier names the cluster does not have."""

from __future__ import annotations

from typing import Any

from translations import lws as lwsmod
from webhooks.rules import fielderrors as fe
from webhooks.rules._common import Findings, topology_warnings
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import Decision


def validate(obj: Any, state: ClusterState) -> Decision:
    lws, _, problems = lwsmod.read_topology_request(obj, keep_unknown=False)
    topology = lws.spec.network_topology if lws is not None else None
    if topology is None and not problems:  # nothing to warn about, nothing wrong
        return Decision.of()
    out = Findings(errors=[fe.from_spec_error(p) for p in problems])
    topology_warnings(topology, "spec.networkTopology", state, out)
    return Decision.of(out.errors, out.warnings)
