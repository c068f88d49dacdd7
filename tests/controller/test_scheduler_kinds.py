"""One table of the kinds the scheduler reads (`translations.kinds.SCHEDULER_KINDS`) feeds
every reader: the placer's stores (`cluster.Kind`), the live scheduler's informers and cache
(`GangScheduler.attach`), the snapshot `simulate --from-cluster` and `tree` list
(`topobridge.snapshot_io`), scenario loading and the RBAC rules. No server: a kind the
cluster lacks is a discovery answer here (`tests/controller/test_discovery.py` asks a real one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from controller import rbac
from controller.informer import Informer
from controller.kube import ObjectList
from controller.placer.cluster import Kind
from controller.placer.scenario import cluster_state, load_scenario
from controller.resources import KUEUE_TOPOLOGIES, PDBS, PDBS_V1BETA1, Resource, served_resources, versions_of
from controller.runtime.cache import ClusterCache, ParsedStore
from controller.runtime.scheduler import GangScheduler, SchedulerConfig
from topobridge.snapshot_io import NOT_TERMINAL, read_objects
from translations import kinds
from translations.core import Node

Obj = dict[str, Any]
NS = "team"

OBJECTS: dict[Kind, Obj] = {
    Kind.POD: {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": NS},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    },
    Kind.NODE: {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n0", "labels": {"rack": "r0"}},
        "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
    },
    Kind.NAMESPACE: {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
    Kind.PRIORITY_CLASS: {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
    },
    Kind.PDB: {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "budget", "namespace": NS},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}},
    },
    Kind.JOB: {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": NS, "uid": "job-1"},
        "spec": {"parallelism": 2, "template": {"spec": {"containers": [{"name": "c"}]}}},
    },
    Kind.VOLCANO_PODGROUP: {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "vg", "namespace": NS},
        "spec": {"minMember": 1},
    },
    Kind.SIGS_PODGROUP: {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "sg", "namespace": NS},
        "spec": {"minMember": 1},
    },
    Kind.X_PODGROUP: {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "xg", "namespace": NS},
        "spec": {"minMember": 1},
    },
    Kind.HYPERNODE: {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "block-0"},
        "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "n0"}}}]},
    },
    Kind.CNT: {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "ClusterNetworkTopology",
        "metadata": {"name": "default"},
        "spec": {
            "networkTopologySpec": [
                {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
                {"topologyLayer": "BlockLayer", "labelKey": ["rack"]},
            ]
        },
    },
    Kind.KUEUE_TOPOLOGY: {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Topology",
        "metadata": {"name": "default"},
        "spec": {"levels": [{"nodeLabel": "rack"}, {"nodeLabel": "kubernetes.io/hostname"}]},
    },
    Kind.K8S_WORKLOAD: {
        "apiVersion": "scheduling.k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": "kw", "namespace": NS},
        "spec": {"podGroups": [{"name": "g", "policy": {"gang": {"minCount": 1}}}]},
    },
    Kind.K8S_PODGROUP: {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "kg", "namespace": NS},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}},
    },
}


def _key(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else str(meta["name"])


def test_the_placer_stores_and_the_cache_are_the_table() -> None:
    assert {kind.value for kind in Kind} == {read.api for read in kinds.SCHEDULER_KINDS}
    assert set(OBJECTS) == set(Kind)
    cache = ClusterCache()
    assert set(cache.stores) == set(Kind)
    for kind, store in cache.stores.items():
        assert store.model is kind.read.model, kind


def test_a_store_refuses_a_model_the_table_does_not_name() -> None:
    with pytest.raises(TypeError, match="POD objects parse into Pod, not Node"):
        ParsedStore(Node, ClusterCache().state, Kind.POD)


def test_the_role_lets_the_scheduler_list_and_watch_every_kind() -> None:
    granted = rbac.allowed()
    for read in kinds.SCHEDULER_KINDS:
        for res in versions_of(read):
            assert {(res.group, res.plural, "list"), (res.group, res.plural, "watch")} <= granted, res
    assert ("kueue.x-k8s.io", "topologies", "watch") in granted


@dataclass
class _Discovery:
    """A server that serves `served` (None: everything); remembers what it was asked."""

    served: set[Resource] | None = None
    asked: list[Resource] = field(default_factory=list)

    async def serves(self, res: Resource) -> bool:
        self.asked.append(res)
        return self.served is None or res in self.served


async def test_served_resources_takes_the_newest_served_version_and_leaves_out_absent_crds() -> None:
    everything = await served_resources(_Discovery().serves)
    assert set(everything) == {read.api for read in kinds.SCHEDULER_KINDS}
    assert everything[kinds.PDB] == PDBS and everything[kinds.KUEUE_TOPOLOGY] == KUEUE_TOPOLOGIES

    old = _Discovery(served={PDBS_V1BETA1})  # Kubernetes 1.20, no CRD installed
    got = await served_resources(old.serves)
    assert got[kinds.PDB] == PDBS_V1BETA1
    assert set(got) == {read.api for read in kinds.SCHEDULER_KINDS if not read.optional}
    asked = {res.kind for res in old.asked}
    assert "Pod" not in asked and "Job" not in asked, "a required kind with one version is not asked"
    assert "Topology" in asked and "HyperNode" in asked


async def test_a_required_kind_nothing_serves_is_read_at_its_oldest_version() -> None:
    got = await served_resources(_Discovery(served=set()).serves)
    assert got[kinds.PDB] == PDBS_V1BETA1  # its list then says what is wrong


@dataclass
class _Lister:
    """Lists one object per resource (`objects`), for informers and the snapshot."""

    objects: dict[Resource, Obj]
    served: set[Resource] | None = None
    selectors: dict[str, str | None] = field(default_factory=dict)

    async def serves(self, res: Resource) -> bool:
        return self.served is None or res in self.served

    async def list(self, res: Resource, *, field_selector: str | None = None, **_: Any) -> ObjectList:
        self.selectors[res.kind] = field_selector
        obj = self.objects.get(res)
        return ObjectList([dict(obj)] if obj is not None else [], "1")


def _by_resource() -> dict[Resource, Obj]:
    return {Resource.of(kind.value): obj for kind, obj in OBJECTS.items()}


@pytest.mark.parametrize(
    "kueue_served", [pytest.param(True, id="kueue-installed"), pytest.param(False, id="no-kueue")]
)
async def test_the_live_scheduler_watches_every_served_kind_into_its_store(kueue_served: bool) -> None:
    served = {
        Resource.of(r.api) for r in kinds.SCHEDULER_KINDS if kueue_served or r.api != kinds.KUEUE_TOPOLOGY
    }
    lister = _Lister(_by_resource(), served)
    sched = GangScheduler(cast(Any, None), cast(Any, None), SchedulerConfig())
    informers: dict[Resource, Informer] = {}

    def informer_of(res: Resource) -> Informer:
        return informers.setdefault(res, Informer(cast(Any, lister), res, resync_period=None))

    watched = sched.attach(informer_of, await served_resources(lister.serves))
    assert (KUEUE_TOPOLOGIES in informers) is kueue_served
    assert len(watched) == len(informers) == len(kinds.SCHEDULER_KINDS) - (0 if kueue_served else 1)
    for informer in watched:
        await informer.list_once()
    for kind, obj in OBJECTS.items():
        held = _key(obj) in sched.cache.stores[kind].items
        assert held is (kueue_served or kind is not Kind.KUEUE_TOPOLOGY), kind


async def test_the_snapshot_lists_every_served_kind_and_only_live_pods() -> None:
    absent = {KUEUE_TOPOLOGIES, Resource.of(kinds.HYPERNODE)}
    lister = _Lister(_by_resource(), {Resource.of(r.api) for r in kinds.SCHEDULER_KINDS} - absent)
    objects = await read_objects(cast(Any, lister))
    assert sorted(o["kind"] for o in objects) == sorted(
        o["kind"] for k, o in OBJECTS.items() if Resource.of(k.value) not in absent
    )
    assert any(o["kind"] == "Job" and o["apiVersion"] == "batch/v1" for o in objects)
    assert lister.selectors["Pod"] == NOT_TERMINAL and lister.selectors["Job"] is None


def test_a_scenario_puts_every_kind_into_its_store() -> None:
    sc = load_scenario(list(OBJECTS.values()))
    assert sc.warnings == []
    # The Job's pods are made by simulate (translations.expand); they join the pod store.
    made = {Kind.POD: [p["metadata"] for e in sc.expansions for p in e.pods]}
    assert len(made[Kind.POD]) == (OBJECTS[Kind.JOB]["spec"].get("parallelism") or 1)
    state = cluster_state(sc)
    for kind, obj in OBJECTS.items():
        extra = made.get(kind, [])
        assert [o.name for o in sc.by_kind()[kind]] == [
            obj["metadata"]["name"],
            *(m["name"] for m in extra),
        ], kind
        keys = [_key(obj), *(f"{m['namespace']}/{m['name']}" for m in extra)]
        assert sorted(state.store(kind)) == sorted(keys), kind


@pytest.mark.parametrize(
    ("obj", "kind"),
    [
        pytest.param(
            {k: v for k, v in OBJECTS[Kind.NODE].items() if k != "apiVersion"}, Kind.NODE, id="node"
        ),
        pytest.param(
            {k: v for k, v in OBJECTS[Kind.HYPERNODE].items() if k != "apiVersion"},
            Kind.HYPERNODE,
            id="hypernode",
        ),
    ],
)
def test_a_scenario_object_without_apiversion_is_read_by_its_kind(obj: Obj, kind: Kind) -> None:
    sc = load_scenario([OBJECTS[Kind.NODE], obj] if kind is not Kind.NODE else [obj])
    assert [o.name for o in sc.by_kind()[kind]] == [obj["metadata"]["name"]]


@pytest.mark.parametrize(
    ("api_version", "kind", "expected"),
    [
        pytest.param("policy/v1beta1", "PodDisruptionBudget", kinds.PDB, id="older-version"),
        pytest.param("kueue.x-k8s.io/v1beta2", "Topology", kinds.KUEUE_TOPOLOGY, id="newer-kueue"),
        pytest.param("batch.volcano.sh/v1alpha1", "Job", None, id="volcano-job-is-not-read"),
        pytest.param("x.io/v1", "Topology", None, id="other-groups-topology"),
        pytest.param("", "PodGroup", None, id="podgroup-needs-its-group"),
        pytest.param("", "Job", kinds.JOB, id="job-by-kind-alone"),
    ],
)
def test_scheduler_kind_matches_group_and_kind(
    api_version: str, kind: str, expected: kinds.ApiKind | None
) -> None:
    read = kinds.scheduler_kind(api_version, kind)
    assert (read.api if read is not None else None) == expected
