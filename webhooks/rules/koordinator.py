"""Koordinator gangs: the gang annotations on Pods and on PodGroups of both groups
(`scheduling.sigs.k8s.io`, `scheduling.x-k8s.io`).

Koordinator itself replaces a malformed annotation with a default without a word; here the
object is refused instead. With the cluster in view: gather layers must exist in
ClusterNetworkTopology `default` (a warning while none exists), two pods of one gang
should not share a network-topology index (a warning), and a GangGroup member must carry the
network-topology-spec of the other members whose spec the cluster view knows.
"""

from __future__ import annotations

from typing import Any

from translations import koordinator as koord
from translations._base import TypedObject
from translations.koordinator import SigsPodGroup
from translations.schedplugins import XPodGroup
from webhooks.rules import fielderrors as fe
from webhooks.rules._common import Findings, parse_strict
from webhooks.rules.cluster_state import ClusterState, gang_of
from webhooks.rules.decision import ALLOW, Decision

SPEC_PATH = koord.annotation_path(koord.NETWORK_TOPOLOGY_SPEC)
INDEX_PATH = koord.annotation_path(koord.NETWORK_TOPOLOGY_INDEX)


def validate_pod(obj: Any, state: ClusterState) -> Decision:
    if not _has_gang_annotation(obj):  # the common case: a pod that is no Koordinator gang member
        return ALLOW
    # Only the metadata concerns us; the API server validates the rest of a pod itself.
    pod, errors = parse_strict(
        PodMetadata, {"metadata": obj.get("metadata")} if isinstance(obj, dict) else obj
    )
    if pod is None:
        return Decision.of(errors)
    gang = gang_of(pod.metadata)
    key = f"{pod.namespace}/{gang}" if gang else None
    out = _check_annotations(pod, key, state)
    if key is None:
        out.warnings.append(
            "metadata.annotations: the gang annotations have no effect: the pod names no gang "
            f"({koord.GANG_NAME} annotation or {koord.SIGS_POD_GROUP_LABEL} label)"
        )
    else:
        _check_index(pod, key, state, out)
    return Decision.of(out.errors, out.warnings)


def validate_sigs_podgroup(obj: Any, state: ClusterState) -> Decision:
    return _validate_pod_group(SigsPodGroup, obj, state)


def validate_x_podgroup(obj: Any, state: ClusterState) -> Decision:
    return _validate_pod_group(XPodGroup, obj, state)


def _validate_pod_group(model: type[SigsPodGroup | XPodGroup], obj: Any, state: ClusterState) -> Decision:
    pg, errors = parse_strict(model, obj)
    if pg is None:
        return Decision.of(errors)
    out = _check_annotations(pg, f"{pg.namespace}/{pg.name}" if pg.name else None, state)
    problems = koord.pod_group_spec_problems(
        min_member=pg.spec.min_member, schedule_timeout_seconds=pg.spec.schedule_timeout_seconds
    )
    out.errors += [fe.from_spec_error(p) for p in problems]
    return Decision.of(out.errors, out.warnings)


def _has_gang_annotation(obj: Any) -> bool:
    """True when there is something to check (or something the parser must refuse)."""
    if not isinstance(obj, dict):
        return True
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return meta is not None
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        return annotations is not None
    for key in annotations:  # noqa: SIM110 (a loop: any() over a generator costs twice as much, on every pod)
        if isinstance(key, str) and key.startswith(koord.GANG_PREFIX):
            return True
    return False


def _check_annotations(obj: TypedObject, self_gang: str | None, state: ClusterState) -> Findings:
    """`koordinator.gang_request`, plus the gather layers against the cluster's layers."""
    out = Findings()
    parsed, problems = koord.gang_request(obj.metadata.annotations, gang=self_gang)
    if parsed.groups is not None and self_gang is not None and state.known and not problems:
        problems += koord.differing_group_specs(
            self_gang, parsed.network_topology, parsed.groups, state.known_gang_specs
        )
    out.errors += [fe.from_spec_error(p) for p in problems]
    if parsed.network_topology is not None and state.known:
        if state.cnt_layers is None:
            out.warnings.append(
                f'{SPEC_PATH}: no ClusterNetworkTopology "default" exists yet; '
                "Koordinator ignores the gather strategy until one does"
            )
        else:
            unknown = koord.unknown_layer_problems(parsed.network_topology, state.cnt_layers)
            out.errors += [fe.from_spec_error(p) for p in unknown]
    return out


class PodMetadata(TypedObject):
    """A pod as far as gang validation reads it: its metadata."""


def _check_index(pod: TypedObject, gang: str, state: ClusterState, out: Findings) -> None:
    raw = pod.metadata.annotation(koord.NETWORK_TOPOLOGY_INDEX)
    if raw is None or not state.known or any(e.field == INDEX_PATH for e in out.errors):
        return
    holders = state.gang_indices.get(gang)
    if not holders:
        return
    index = int(raw)
    me = f"{pod.namespace}/{pod.name}"
    others = [p for p in holders.get(index, ()) if p != me]
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        out.warnings.append(f"{INDEX_PATH}: index {index} is already held by pod {shown} of gang {gang}")
