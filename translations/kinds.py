"""Every kind topobridge reads, validates or generates a CRD for, named once.

CRD generation (`crdgen.CRDS`), the controller's REST resources (`controller.resources`) and
the admission registry (`webhooks.rules.registry.KINDS`) all build on these entries, so a
kind's group, version, plural, scope and status subresource cannot drift apart
(`tests/test_kinds.py` checks it). Three sorts: `CUSTOM_KINDS` (CRDs topobridge generates),
`FOREIGN_CRD_KINDS` (CRDs only their project installs) and the built-in Pod and Job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from translations import koordinator, lws, schedplugins, volcano, volcano_job

KindName = Literal["LeaderWorkerSet", "PodGroup", "HyperNode", "ClusterNetworkTopology", "Pod", "Job"]
"""The kinds topobridge's own rules and CRDs speak of."""
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
ALL_KINDS: tuple[ApiKind, ...] = (*CUSTOM_KINDS, *FOREIGN_CRD_KINDS, POD, JOB)
