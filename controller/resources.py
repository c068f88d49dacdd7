"""Every API resource the controller touches, named once: group, version, plural, scope.

`controller.kube` builds URLs from these; `controller.rbac` derives the ClusterRole from the
same table, so a resource cannot be used without the role knowing about it. The kinds
topobridge validates or defines CRDs for come from `translations.kinds`, and so do the kinds
the scheduler reads (`translations.kinds.SCHEDULER_KINDS`): `served_resources` picks the
version of each the cluster serves, for the live scheduler's informers and the snapshot
`simulate --from-cluster` and `tree` list alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from translations import kinds


@dataclass(frozen=True, slots=True)
class Resource:
    """One REST resource of the Kubernetes API."""

    group: str
    """API group; empty for the core group."""
    version: str
    plural: str
    kind: str
    namespaced: bool
    status_subresource: bool = False
    """Whether status is written through `/status` (else through the object itself)."""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(
        self, *, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @classmethod
    def of(cls, api: kinds.ApiKind) -> Resource:
        """The resource of a kind in the one table of kinds (`translations.kinds`)."""
        return cls(api.group, api.version, api.plural, api.kind, api.namespaced, api.status_subresource)


PODS = Resource.of(kinds.POD)
NODES = Resource.of(kinds.NODE)
NAMESPACES = Resource.of(kinds.NAMESPACE)
EVENTS = Resource("", "v1", "events", "Event", namespaced=True)
JOBS = Resource.of(kinds.JOB)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True)
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", namespaced=True, status_subresource=True)
CRDS = Resource(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False
)
PRIORITY_CLASSES = Resource.of(kinds.PRIORITY_CLASS)
PDBS = Resource.of(kinds.PDB)
"""policy/v1: served from Kubernetes 1.21; 1.25 and later serve nothing else."""
PDBS_V1BETA1 = Resource.of(kinds.PDB_V1BETA1)
"""policy/v1beta1: all that Kubernetes 1.20 and older serve."""
PDB_VERSIONS: tuple[Resource, ...] = (PDBS, PDBS_V1BETA1)
"""Newest first: `Kube.first_served` picks the one the cluster serves."""

VOLCANO_PODGROUPS = Resource.of(kinds.VOLCANO_PODGROUP)
HYPERNODES = Resource.of(kinds.HYPERNODE)
LEADERWORKERSETS = Resource.of(kinds.LEADERWORKERSET)
CLUSTER_NETWORK_TOPOLOGIES = Resource.of(kinds.CLUSTER_NETWORK_TOPOLOGY)
SIGS_PODGROUPS = Resource.of(kinds.SIGS_PODGROUP)
X_PODGROUPS = Resource.of(kinds.X_PODGROUP)
VOLCANO_JOBS = Resource.of(kinds.VOLCANO_JOB)
"""Read by no controller loop: named so the one table of kinds and the resources agree."""
KUEUE_TOPOLOGIES = Resource.of(kinds.KUEUE_TOPOLOGY)
K8S_WORKLOADS = Resource.of(kinds.K8S_WORKLOAD)
K8S_PODGROUPS = Resource.of(kinds.K8S_PODGROUP)
K8S_COMPOSITE_PODGROUPS = Resource.of(kinds.K8S_COMPOSITE_PODGROUP)
"""Kubernetes' own gang API: served from 1.35 behind feature gates, never by the dev cluster."""

VOLCANO_CRD_NAMES = (kinds.VOLCANO_PODGROUP.display, kinds.HYPERNODE.display)
"""The CRDs whose presence (with a ready volcano-scheduler) means Volcano schedules."""


def at_version(res: Resource, api_version: str | None) -> Resource:
    """`res` at the version of `api_version` (`group/version`, as an object names it): a write
    goes back at the version the object was read at. None or another group: `res` itself."""
    group, _, version = (api_version or "").rpartition("/")
    if group != res.group or not version:
        return res
    return replace(res, version=version)


def versions_of(read: kinds.ReadKind) -> tuple[Resource, ...]:
    """The resources of a kind the scheduler reads, newest version first."""
    return tuple(Resource.of(api) for api in read.versions)


async def served_resources(
    serves: Callable[[Resource], Awaitable[bool]],
    reads: tuple[kinds.ReadKind, ...] = kinds.SCHEDULER_KINDS,
) -> dict[kinds.ApiKind, Resource]:
    """The resource to read for each kind of `reads` (keyed by its entry's `api`): the newest
    version the server serves (`serves`: discovery, `Kube.serves`). An optional kind the server
    does not serve is left out (its CRD is not installed); a required one gets its oldest version
    anyway, so reading it reports the problem. A required kind with one version is not asked."""
    out: dict[kinds.ApiKind, Resource] = {}
    for read in reads:
        chosen = await _served_version(versions_of(read), serves, ask=read.optional or len(read.versions) > 1)
        if chosen is not None:
            out[read.api] = chosen
        elif not read.optional:
            out[read.api] = versions_of(read)[-1]
    return out


async def _served_version(
    versions: tuple[Resource, ...], serves: Callable[[Resource], Awaitable[bool]], *, ask: bool
) -> Resource | None:
    if not ask:
        return versions[0]
    for res in versions:
        if await serves(res):
            return res
    return None
