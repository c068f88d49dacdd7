"""Which rule validates which kind: one table, read by the CLI, the admission server, the
webhook configuration and (later) the controller."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from translations import koordinator as koord
from translations import lws as lwsmod
from translations import schedplugins, volcano
from webhooks.rules import (
    cluster_network_topology,
    gpu,
    hypernode,
    koordinator,
    lws,
    lws_mutation,
    volcano_podgroup,
)
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import Decision
from webhooks.rules.lws_mutation import LwsLookup

Rule = Callable[[Any, ClusterState], Decision]
"""A rule: any JSON value (the object) and the cluster view in, a Decision out; never raises."""
MutatingRule = Callable[[Any, ClusterState, LwsLookup], Decision]
"""A mutating rule: also reads the LeaderWorkerSets; its Decision carries the patch."""
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind topobridge validates, and how the API server should route it to us."""

    group: str
    versions: tuple[str, ...]
    kind: str
    resource: str
    """Plural resource name, as admission rules and AdmissionRequest.resource spell it."""
    namespaced: bool
    path: str
    """URL path of its webhook on the admission server."""
    rule: Rule
    selects_objects: bool = False
    """True when only some objects of the kind concern us (pods): the webhook configuration
    then carries an objectSelector."""
    operations: tuple[Operation, ...] = ("CREATE", "UPDATE")
    """Operations the rule judges; the others are allowed as they come."""

    @property
    def scope(self) -> Literal["Namespaced", "Cluster"]:
        return "Namespaced" if self.namespaced else "Cluster"

    @property
    def display(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


def validate_pod(obj: Any, state: ClusterState) -> Decision:
    """A pod speaks Koordinator's gang annotations, the GPU dialect's, or both."""
    return koordinator.validate_pod(obj, state).merged(gpu.validate(obj, state))


KINDS: tuple[Kind, ...] = (
    Kind(
        lwsmod.GROUP,
        ("v1",),
        "LeaderWorkerSet",
        "leaderworkersets",
        True,
        "/validate/leaderworkersets",
        lws.validate,
    ),
    Kind(
        volcano.PODGROUP_GROUP,
        ("v1beta1",),
        "PodGroup",
        "podgroups",
        True,
        "/validate/volcano-podgroups",
        volcano_podgroup.validate,
    ),
    Kind(
        volcano.HYPERNODE_GROUP,
        ("v1alpha1",),
        "HyperNode",
        "hypernodes",
        False,
        "/validate/hypernodes",
        hypernode.validate,
    ),
    Kind(
        koord.GROUP,
        ("v1alpha1",),
        "ClusterNetworkTopology",
        "clusternetworktopologies",
        False,
        "/validate/clusternetworktopologies",
        cluster_network_topology.validate,
    ),
    Kind(
        koord.SIGS_GROUP,
        ("v1alpha1",),
        "PodGroup",
        "podgroups",
        True,
        "/validate/sigs-podgroups",
        koordinator.validate_sigs_podgroup,
    ),
    Kind(
        schedplugins.GROUP,
        ("v1alpha1",),
        "PodGroup",
        "podgroups",
        True,
        "/validate/x-podgroups",
        koordinator.validate_x_podgroup,
    ),
    Kind("batch", ("v1",), "Job", "jobs", True, "/validate/jobs", gpu.validate),
    Kind("", ("v1",), "Pod", "pods", True, "/validate/pods", validate_pod, selects_objects=True),
)


@dataclass(frozen=True, slots=True)
class MutatingKind:
    """One kind topobridge mutates, served by the same handler as the validating kinds."""

    group: str
    kind: str
    resource: str
    path: str
    rule: MutatingRule
    operations: tuple[Operation, ...] = ("CREATE",)

    @property
    def display(self) -> str:
        """The metrics label: the resource, marked as the mutating webhook's."""
        return f"{self.resource}.{self.group}/mutate" if self.group else f"{self.resource}/mutate"


MUTATING_KINDS: tuple[MutatingKind, ...] = (
    MutatingKind(
        volcano.PODGROUP_GROUP,
        "PodGroup",
        "podgroups",
        "/mutate/scheduling.volcano.sh/v1beta1/podgroups",
        lws_mutation.mutate_podgroup,
    ),
    MutatingKind("", "Pod", "pods", "/mutate/v1/pods", lws_mutation.mutate_pod),
)

_BY_GROUP_KIND = {(k.group, k.kind): k for k in KINDS}
_BY_PATH = {k.path: k for k in KINDS}


def for_api_version(api_version: str, kind: str) -> Kind | None:
    """The entry for an object's apiVersion (`group/version` or `v1`) and kind; any version."""
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    return _BY_GROUP_KIND.get((group, kind))


def for_group_kind(group: str, kind: str) -> Kind | None:
    return _BY_GROUP_KIND.get((group, kind))


def for_path(path: str) -> Kind | None:
    return _BY_PATH.get(path)


def validate_object(obj: Any, state: ClusterState) -> tuple[Kind | None, Decision]:
    """Route one object by its apiVersion and kind; (None, allowed) when it is not ours."""
    if not isinstance(obj, dict):
        return None, Decision()
    entry = for_api_version(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    if entry is None:
        return None, Decision()
    return entry, entry.rule(obj, state)
