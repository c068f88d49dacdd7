"""The controller watches each kind at the version the cluster serves: PodDisruptionBudgets are
policy/v1 from Kubernetes 1.21 and only that from 1.25, but 1.20 serves policy/v1beta1 alone.
An informer on an unserved version never syncs, and the fallback scheduler waits for all of
them, so the choice is made by discovery, not hard-coded; so is leaving out a kind whose CRD
is not installed (Kueue's Topology on the test cluster)."""

from __future__ import annotations

from controller.kube import Kube
from controller.resources import (
    HYPERNODES,
    JOBS,
    PDB_VERSIONS,
    PDBS,
    PDBS_V1BETA1,
    PODS,
    Resource,
    served_resources,
)
from translations import kinds


async def test_serves_reads_discovery(admin: Kube) -> None:
    assert await admin.serves(PODS)
    assert await admin.serves(PDBS_V1BETA1)
    # kube-apiserver 1.20 has no policy/v1 group version at all (404), nor an invented plural.
    assert not await admin.serves(PDBS)
    assert not await admin.serves(Resource("", "v1", "no-such-things", "NoSuchThing", namespaced=True))


async def test_first_served_picks_the_pdb_version_of_this_cluster(admin: Kube) -> None:
    assert PDB_VERSIONS[0] is PDBS  # newest first: a modern cluster gets policy/v1
    assert await admin.first_served(PDB_VERSIONS) is PDBS_V1BETA1


async def test_first_served_falls_back_to_the_last_candidate(admin: Kube) -> None:
    ghosts = (
        Resource("example.com", "v2", "ghosts", "Ghost", namespaced=True),
        Resource("example.com", "v1", "ghosts", "Ghost", namespaced=True),
    )
    assert await admin.first_served(ghosts) is ghosts[-1]


async def test_the_scheduler_reads_each_kind_this_cluster_serves(admin: Kube) -> None:
    got = await served_resources(admin.serves)
    assert got[kinds.PDB] == PDBS_V1BETA1
    assert got[kinds.JOB] == JOBS and got[kinds.HYPERNODE] == HYPERNODES  # topobridge's CRDs are installed
    assert kinds.KUEUE_TOPOLOGY not in got, "Kueue is not installed: its Topology is left out"
    assert kinds.K8S_PODGROUP not in got, "1.20 serves no scheduling.k8s.io PodGroups: left out"
    assert set(got) == {read.api for read in kinds.SCHEDULER_KINDS} - {
        kinds.KUEUE_TOPOLOGY,
        kinds.K8S_PODGROUP,
        kinds.K8S_WORKLOAD_V1ALPHA1,
    }
