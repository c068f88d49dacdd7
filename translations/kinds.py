"""Every kind topobridge reads, validates or generates a CRD for, named once.

CRD generation (`crdgen.CRDS`), the controller's REST resources (`controller.resources`) and
the admission registry (`webhooks.rules.registry.KINDS`) all build on these entries, so a
kind's group, version, plural, scope and status subresource cannot drift apart
(`tests/test_kinds.py` checks it). Three sorts: `CUSTOM_KINDS` (CRDs topobridge generates),
`FOREIGN_CRD_KINDS` (CRDs only their project installs), the built-in Pod and Job, and
Kubernetes' own gang API (`BUILTIN_GANG_KINDS`).

`SCHEDULER_KINDS` is the table of the kinds the fallback scheduler reads, each with the model
it is parsed into and whether its CRD may be absent. Everything that reads a cluster for the
scheduler builds on it: the live scheduler's informers (`controller.runtime.scheduler`), the
snapshot `simulate --from-cluster` and `tree` list (`topobridge.snapshot_io`), scenario
loading (`controller.placer.scenario`, one `ClusterState` store per entry:
`controller.placer.cluster.Kind`) and the RBAC rules that let them (`controller.rbac`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from translations import core, koordinator, kueue, lws, schedplugins, volcano, volcano_job, workload
from translations._base import TypedObject

KindName = Literal[
    "LeaderWorkerSet",
    "PodGroup",
    "HyperNode",
    "ClusterNetworkTopology",
    "Pod",
    "Job",
    "Node",
    "Namespace",
    "PriorityClass",
    "PodDisruptionBudget",
    "Topology",
    "Workload",
    "CompositePodGroup",
]
"""The kinds topobridge's own rules and CRDs speak of, and the ones its scheduler reads."""
Scope = Literal["Namespaced", "Cluster"]


@dataclass(frozen=True, slots=True)
class ApiKind:
    """One kind of the Kubernetes API: where it lives and how it is served."""

    group: str
    """API group; empty for the core group."""
    version: str
    """The version topobridge reads and writes."""
    kind: KindName
    plural: str
    namespaced: bool
    status_subresource: bool
    """Whether status is written through `/status` (else through the object itself)."""

    @property
    def scope(self) -> Scope:
        return "Namespaced" if self.namespaced else "Cluster"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def display(self) -> str:
        """`plural.group`, as kubectl and the CRD's name spell it (`pods` for the core group)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


LEADERWORKERSET = ApiKind(lws.GROUP, "v1", "LeaderWorkerSet", "leaderworkersets", True, True)
VOLCANO_PODGROUP = ApiKind(volcano.PODGROUP_GROUP, "v1beta1", "PodGroup", "podgroups", True, False)
"""Upstream's PodGroup CRD has no status subresource: Volcano writes status through the object."""
HYPERNODE = ApiKind(volcano.HYPERNODE_GROUP, "v1alpha1", "HyperNode", "hypernodes", False, True)
CLUSTER_NETWORK_TOPOLOGY = ApiKind(
    koordinator.GROUP, "v1alpha1", "ClusterNetworkTopology", "clusternetworktopologies", False, True
)
SIGS_PODGROUP = ApiKind(koordinator.SIGS_GROUP, "v1alpha1", "PodGroup", "podgroups", True, False)
X_PODGROUP = ApiKind(schedplugins.GROUP, "v1alpha1", "PodGroup", "podgroups", True, True)
POD = ApiKind("", "v1", "Pod", "pods", True, True)
JOB = ApiKind("batch", "v1", "Job", "jobs", True, True)
VOLCANO_JOB = ApiKind(volcano_job.GROUP, "v1alpha1", "Job", "jobs", True, True)
"""Volcano's Job: validated and translated; its CRD is Volcano's (see `FOREIGN_CRD_KINDS`)."""

K8S_WORKLOAD = ApiKind(workload.GROUP, workload.V1BETA1, "Workload", "workloads", True, False)
K8S_PODGROUP = ApiKind(workload.GROUP, workload.V1BETA1, "PodGroup", "podgroups", True, True)
K8S_COMPOSITE_PODGROUP = ApiKind(
    workload.GROUP, workload.V1ALPHA3, "CompositePodGroup", "compositepodgroups", True, True
)
K8S_PODGROUP_V1ALPHA3 = ApiKind(workload.GROUP, workload.V1ALPHA3, "PodGroup", "podgroups", True, True)
"""The same PodGroup at 1.37's alpha version (the shape is v1beta1's)."""
K8S_PODGROUP_V1ALPHA2 = ApiKind(workload.GROUP, workload.V1ALPHA2, "PodGroup", "podgroups", True, True)
"""1.36's PodGroup, read in v1beta1's shape (`workload.ServedPodGroup`)."""
K8S_WORKLOAD_V1ALPHA1 = ApiKind(workload.GROUP, workload.V1ALPHA1, "Workload", "workloads", True, False)
"""1.35's Workload: its groups are gangs (later Workloads hold templates; PodGroups are the gangs)."""
BUILTIN_GANG_KINDS: tuple[ApiKind, ...] = (K8S_WORKLOAD, K8S_PODGROUP, K8S_COMPOSITE_PODGROUP)
"""Kubernetes' own gang API (`translations.workload`), at the newest version each kind is
served at: built into the API server (1.35+, behind the `GenericWorkload` gate), so no CRD.
Admission reads every served version (`workload.VERSIONS`)."""

CUSTOM_KINDS: tuple[ApiKind, ...] = (
    LEADERWORKERSET,
    VOLCANO_PODGROUP,
    HYPERNODE,
    CLUSTER_NETWORK_TOPOLOGY,
    SIGS_PODGROUP,
    X_PODGROUP,
)
"""The kinds defined by CRDs topobridge generates from its models (`crdgen.CRDS`, the chart's
`crds.install`): the ones its fallback scheduler and translations need to exist even where the
upstream project is not installed."""
FOREIGN_CRD_KINDS: tuple[ApiKind, ...] = (VOLCANO_JOB,)
"""Kinds defined by a CRD topobridge neither generates nor ships: a Volcano Job means nothing
without Volcano's job controller, which installs its own CRD. topobridge validates them (the
webhook routes them as any kind; matching no served resource, its rule is inert) and
translates them."""
ALL_KINDS: tuple[ApiKind, ...] = (*CUSTOM_KINDS, *FOREIGN_CRD_KINDS, POD, JOB, *BUILTIN_GANG_KINDS)


# --- the kinds the scheduler reads ----------------------------------------------------------

NODE = ApiKind("", "v1", "Node", "nodes", False, True)
NAMESPACE = ApiKind("", "v1", "Namespace", "namespaces", False, False)
"""Only labels are read: what a pod affinity term's `namespaceSelector` selects by."""
PRIORITY_CLASS = ApiKind("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, False)
PDB = ApiKind("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, False)
"""policy/v1: served from Kubernetes 1.21; 1.25 and later serve nothing else."""
PDB_V1BETA1 = ApiKind("policy", "v1beta1", "PodDisruptionBudget", "poddisruptionbudgets", True, False)
"""policy/v1beta1: all that Kubernetes 1.20 and older serve."""
KUEUE_TOPOLOGY = ApiKind(kueue.GROUP, "v1beta1", "Topology", "topologies", False, False)
"""Kueue's Topology: its CRD is Kueue's (no status subresource)."""


@dataclass(frozen=True, slots=True)
class ReadKind:
    """One kind the fallback scheduler reads: where it lives, what it is parsed into, and
    whether a cluster may lack it."""

    api: ApiKind
    """The version read where the server serves it."""
    model: type[TypedObject]
    optional: bool
    """Defined by a CRD that is not there when its project is not installed (Volcano,
    Koordinator, scheduler-plugins, Kueue): then the kind is left out, never an error."""
    older: tuple[ApiKind, ...] = ()
    """The same kind at older versions, newest first, for a server that does not serve `api`."""

    @property
    def versions(self) -> tuple[ApiKind, ...]:
        """Every version it is read at, newest first."""
        return (self.api, *self.older)


SCHEDULER_KINDS: tuple[ReadKind, ...] = (
    ReadKind(POD, core.Pod, optional=False),
    ReadKind(NODE, core.Node, optional=False),
    ReadKind(NAMESPACE, core.Namespace, optional=False),
    ReadKind(PRIORITY_CLASS, core.PriorityClass, optional=False),
    ReadKind(PDB, core.PodDisruptionBudget, optional=False, older=(PDB_V1BETA1,)),
    ReadKind(JOB, core.Job, optional=False),
    ReadKind(VOLCANO_PODGROUP, volcano.PodGroup, optional=True),
    ReadKind(SIGS_PODGROUP, koordinator.SigsPodGroup, optional=True),
    ReadKind(X_PODGROUP, schedplugins.XPodGroup, optional=True),
    ReadKind(HYPERNODE, volcano.HyperNode, optional=True),
    ReadKind(CLUSTER_NETWORK_TOPOLOGY, koordinator.ClusterNetworkTopology, optional=True),
    ReadKind(KUEUE_TOPOLOGY, kueue.Topology, optional=True),
    ReadKind(
        K8S_PODGROUP,
        workload.ServedPodGroup,
        optional=True,
        older=(K8S_PODGROUP_V1ALPHA3, K8S_PODGROUP_V1ALPHA2),
    ),
    ReadKind(K8S_WORKLOAD_V1ALPHA1, workload.WorkloadV1alpha1, optional=True),
)
"""What the fallback scheduler reads (module docstring). Kubernetes' own PodGroups are optional
as CRD kinds are: an API server before 1.37, or without the `GenericWorkload` gate, serves none. batch/v1 Jobs are the GPU dialect's
gangs; the CRD kinds are optional even where topobridge ships the CRD (`crds.install` may be
off)."""

_READ_BY_GROUP_KIND: dict[tuple[str, str], ReadKind] = {
    (v.group, v.kind): r for r in SCHEDULER_KINDS for v in r.versions
}
_READ_BY_API = {r.api: r for r in SCHEDULER_KINDS}


def scheduler_kind(api_version: str, kind: str) -> ReadKind | None:
    """The entry an object of `apiVersion`/`kind` belongs to (any version of its group), or
    None when the scheduler does not read it. An object that gives no apiVersion (a
    hand-written scenario) is matched by kind alone when only one entry has that kind."""
    if not api_version:
        named = [r for r in SCHEDULER_KINDS if r.api.kind == kind]
        return named[0] if len(named) == 1 else None
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    return _READ_BY_GROUP_KIND.get((group, kind))


def read_kind(api: ApiKind) -> ReadKind:
    """The entry of a kind the scheduler reads (KeyError for one it does not)."""
    return _READ_BY_API[api]
