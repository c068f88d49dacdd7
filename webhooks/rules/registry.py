"""Which rule validates which kind: one table, read by the CLI, the admission server, the
webhook configuration and (later) the controller."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from translations import kinds
from translations import workload as workload_model
from translations.kinds import KindName
from webhooks.rules import (
    cluster_network_topology,
    gpu,
    hypernode,
    koordinator,
    kueue,
    lws,
    lws_mutation,
    volcano_job,
    volcano_podgroup,
    workload,
)
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import Decision
from webhooks.rules.lws_mutation import LwsLookup

Rule = Callable[[Any, ClusterState], Decision]
"""A rule: any JSON value (the object) and the cluster view in, a Decision out; never raises."""
UpdateRule = Callable[[Any, Any, ClusterState], Decision]
"""An update rule: the new object, the stored one and the cluster view in (immutable fields)."""
MutatingRule = Callable[[Any, ClusterState, LwsLookup], Decision]
"""A mutating rule: also reads the LeaderWorkerSets; its Decision carries the patch."""
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind topobridge validates, and how the API server should route it to us."""

    group: str
    versions: tuple[str, ...]
    kind: KindName
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
    fail_open: bool = False
    """True for a kind every workload uses and few of whose objects concern us (Jobs): its
    webhook is always failurePolicy Ignore, so an unreachable topobridge never blocks creating
    them cluster-wide. A bad request that slips through then is still refused by the scheduler,
    which reads the same rules when it places the gang."""
    update_rule: UpdateRule | None = None
    """For an UPDATE that carries the stored object: judges the change (immutable fields)
    instead of `rule`."""

    @classmethod
    def of(
        cls,
        api: kinds.ApiKind,
        path: str,
        rule: Rule,
        *,
        selects_objects: bool = False,
        fail_open: bool = False,
        older: tuple[str, ...] = (),
        update_rule: UpdateRule | None = None,
    ) -> Kind:
        """The entry for a kind of the one table of kinds (`translations.kinds`); `older`:
        further versions the rule reads, after the table's."""
        return cls(
            api.group,
            (api.version, *older),
            api.kind,
            api.plural,
            api.namespaced,
            path,
            rule,
            selects_objects,
            fail_open=fail_open,
            update_rule=update_rule,
        )

    @property
    def scope(self) -> kinds.Scope:
        return "Namespaced" if self.namespaced else "Cluster"

    @property
    def display(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


def validate_pod(obj: Any, state: ClusterState) -> Decision:
    """A pod speaks Koordinator's gang annotations, the GPU dialect's, Kueue's TAS annotations,
    Kubernetes' own group links (`spec.workloadRef`, `spec.schedulingGroup`), or several."""
    return (
        koordinator.validate_pod(obj, state)
        .merged(gpu.validate(obj, state))
        .merged(kueue.validate(obj, state))
        .merged(workload.validate_pod(obj, state))
    )


def validate_job(obj: Any, state: ClusterState) -> Decision:
    """A batch/v1 Job speaks the GPU dialect, Kueue's TAS annotations on its template, or both."""
    return gpu.validate(obj, state).merged(kueue.validate(obj, state))


def validate_lws(obj: Any, state: ClusterState) -> Decision:
    """A LeaderWorkerSet's networkTopology, and Kueue's TAS annotations on its templates."""
    return lws.validate(obj, state).merged(kueue.validate(obj, state))


KINDS: tuple[Kind, ...] = (
    Kind.of(kinds.LEADERWORKERSET, "/validate/leaderworkersets", validate_lws),
    Kind.of(kinds.VOLCANO_PODGROUP, "/validate/volcano-podgroups", volcano_podgroup.validate),
    Kind.of(kinds.HYPERNODE, "/validate/hypernodes", hypernode.validate),
    Kind.of(
        kinds.CLUSTER_NETWORK_TOPOLOGY,
        "/validate/clusternetworktopologies",
        cluster_network_topology.validate,
    ),
    Kind.of(kinds.SIGS_PODGROUP, "/validate/sigs-podgroups", koordinator.validate_sigs_podgroup),
    Kind.of(kinds.X_PODGROUP, "/validate/x-podgroups", koordinator.validate_x_podgroup),
    Kind.of(kinds.JOB, "/validate/jobs", validate_job, fail_open=True),
    Kind.of(kinds.VOLCANO_JOB, "/validate/volcano-jobs", volcano_job.validate, fail_open=True),
    Kind.of(kinds.POD, "/validate/pods", validate_pod, selects_objects=True),
    Kind.of(
        kinds.K8S_WORKLOAD,
        "/validate/k8s-workloads",
        workload.validate,
        older=tuple(v for v in workload_model.VERSIONS if v != kinds.K8S_WORKLOAD.version),
        update_rule=workload.validate_update,
    ),
    Kind.of(
        kinds.K8S_PODGROUP,
        "/validate/k8s-podgroups",
        workload.validate,
        older=(workload_model.V1ALPHA3, workload_model.V1ALPHA2),
        update_rule=workload.validate_update,
    ),
    Kind.of(
        kinds.K8S_COMPOSITE_PODGROUP,
        "/validate/k8s-compositepodgroups",
        workload.validate,
        update_rule=workload.validate_update,
    ),
)


@dataclass(frozen=True, slots=True)
class MutatingKind:
    """One kind topobridge mutates, served by the same handler as the validating kinds."""

    api: kinds.ApiKind
    path: str
    rule: MutatingRule
    operations: tuple[Operation, ...] = ("CREATE",)

    @property
    def group(self) -> str:
        return self.api.group

    @property
    def kind(self) -> KindName:
        return self.api.kind

    @property
    def resource(self) -> str:
        return self.api.plural

    @property
    def display(self) -> str:
        """The metrics label: the resource, marked as the mutating webhook's."""
        return f"{self.api.display}/mutate"


MUTATING_KINDS: tuple[MutatingKind, ...] = (
    MutatingKind(
        kinds.VOLCANO_PODGROUP,
        "/mutate/scheduling.volcano.sh/v1beta1/podgroups",
        lws_mutation.mutate_podgroup,
    ),
    MutatingKind(kinds.POD, "/mutate/v1/pods", lws_mutation.mutate_pod),
)

_BY_GROUP_KIND: dict[tuple[str, str], Kind] = {(k.group, k.kind): k for k in KINDS}
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
