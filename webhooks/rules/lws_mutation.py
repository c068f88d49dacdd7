"""Mutating rules for LeaderWorkerSet gangs: `(object, ClusterState, LwsLookup) -> Decision`
with `Decision.patch` set (RFC 6902 operations, from `translations.lws_admission`).

* PodGroup (`scheduling.volcano.sh`) created for an LWS group: the LWS's `networkTopology` and
  `subGroupPolicy` go in before Volcano ever sees it.
* Pod of an LWS without `scheduling.k8s.io/group-name`: its group's PodGroup name goes in.

Mutation never blocks a valid create: an LWS that is unknown, asks for no topology, or
cannot be translated leaves the object unchanged (the last with a warning). An object that
is itself malformed is denied with the same field errors validation gives it: a patch must
never turn it into something valid (a PodGroup with `spec: "x"` would otherwise become
`{networkTopology, queue}` without minMember).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from translations import lws as lwsmod
from translations import lws_admission
from translations.errors import TopobridgeError
from webhooks.rules import volcano_podgroup
from webhooks.rules._common import parse_strict
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import ALLOW, Decision
from webhooks.rules.koordinator import PodMetadata


class LwsLookup(Protocol):
    """The LeaderWorkerSets the process has seen (kept by a watch, read without I/O)."""

    def get(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def names(self, namespace: str) -> Iterable[str]: ...


def _lws(lookup: LwsLookup, namespace: str, name: str) -> lwsmod.LeaderWorkerSet | None:
    raw = lookup.get(namespace, name)
    if raw is None:
        return None
    try:
        return lwsmod.LeaderWorkerSet.parse(raw)
    except TopobridgeError:
        return None


def mutate_podgroup(obj: Any, state: ClusterState, lookup: LwsLookup) -> Decision:
    verdict = volcano_podgroup.validate(obj, state)
    if not verdict.allowed:
        return verdict
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    name = lws_admission.lws_name_of_podgroup(obj, lookup.names(ns))
    lws = _lws(lookup, ns, name) if name else None
    if lws is None:
        return ALLOW
    try:
        patch = lws_admission.podgroup_topology_patch(obj, lws)
    except TopobridgeError as exc:
        return Decision.of(
            warnings=[
                f"topobridge: LeaderWorkerSet {ns}/{lws.name}: {exc}; PodGroup admitted without topology"
            ]
        )
    return Decision(patch=patch or None)


def mutate_pod(obj: Any, state: ClusterState, lookup: LwsLookup) -> Decision:
    pod, errors = parse_strict(
        PodMetadata, {"metadata": obj.get("metadata")} if isinstance(obj, dict) else obj
    )
    if pod is None:
        return Decision.of(errors)
    name = pod.metadata.label(lwsmod.NAME_LABEL)
    lws = _lws(lookup, pod.namespace or "", name) if name else None
    if lws is None:
        return ALLOW
    try:
        if not lws_admission.topology_fields(lws):
            return ALLOW  # LWS alone decides about gangs that ask for no topology
    except TopobridgeError:
        return ALLOW
    return Decision(patch=lws_admission.pod_group_name_patch(obj, lws) or None)
