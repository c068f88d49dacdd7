"""`simulate` takes jobs as users write them: a LeaderWorkerSet with networkTopology, a Volcano
Job with partitions, a Kueue-annotated and a GPU-dialect Indexed Job are expanded into their pods
and land where their topology says; the expansion is in the text and JSON output."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_seed import SEED_ANNOTATIONS
from placer_objects import SEED_LAYOUT, Obj, hypernode, node, pod, run, spine_block_nodes

from controller.placer.scenario import load_scenario
from topobridge.cmd_simulate import Source
from topobridge.cmd_simulate import run as simulate_command
from translations import gpu
from translations.errors import ScenarioError

FIXTURES = Path(__file__).resolve().parents[2] / "translations" / "expand_fixtures"
GROUP_NAME = "scheduling.k8s.io/group-name"


def hypernodes(layout: dict[str, dict[str, list[str]]]) -> list[Obj]:
    """Tier-1 HyperNodes per block, tier-2 per spine."""
    out: list[Obj] = []
    for spine, blocks in layout.items():
        out += [hypernode(block, 1, [("Node", n) for n in names]) for block, names in blocks.items()]
        out.append(hypernode(spine, 2, [("HyperNode", block) for block in blocks]))
    return out


def busy(name: str, node_name: str, cpu: str) -> Obj:
    return pod(name, cpu=cpu, memory="1Gi", node_name=node_name, scheduler="other")


def block_of(layout: dict[str, dict[str, list[str]]], node_name: str) -> str:
    return next(b for blocks in layout.values() for b, names in blocks.items() if node_name in names)


# --- a LeaderWorkerSet with networkTopology (the e2e scenario lws-hard-tier1) ---------------------

TRAINER: Obj = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "trainer"},
    "spec": {
        "replicas": 2,
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        "leaderWorkerTemplate": {
            "size": 3,
            "workerTemplate": {
                "spec": {
                    "schedulerName": "volcano",
                    "containers": [
                        {
                            "name": "worker",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "8", "memory": "16Gi"}},
                        }
                    ],
                }
            },
        },
    },
}


def test_lws_groups_each_land_inside_one_block() -> None:
    """Only block-0 and block-4 hold three free nodes: each group takes one of them whole."""
    cluster = [*spine_block_nodes(SEED_LAYOUT, cpu="8", memory="32Gi"), *hypernodes(SEED_LAYOUT)]
    result = run([*cluster, TRAINER])
    ((expansion),) = result.expansions
    assert len(expansion.pods) == 6 and len(expansion.groups) == 2
    assert len(result.bound) == 6
    assert sorted(d for d, _ in result.gangs.values()) == ["block-0", "block-4"]
    assert {t for _, t in result.gangs.values()} == {1}
    for group in ("0", "1"):
        nodes = [n for p, n in result.bound.items() if p.startswith(f"default/trainer-{group}")]
        assert len(nodes) == 3 and len({block_of(SEED_LAYOUT, n) for n in nodes}) == 1, nodes
    assert set(result.gangs) == {f"volcano:default/{g}" for g in expansion.groups}


def test_lws_pods_given_are_not_made_twice_and_set_the_revision() -> None:
    leader = pod(
        "trainer-0",
        cpu="8",
        memory="16Gi",
        scheduler="volcano",
        labels={
            "leaderworkerset.sigs.k8s.io/name": "trainer",
            "leaderworkerset.sigs.k8s.io/group-index": "0",
            "leaderworkerset.sigs.k8s.io/worker-index": "0",
            "leaderworkerset.sigs.k8s.io/template-revision-hash": "5c7d9f",
        },
        annotations={GROUP_NAME: "trainer-0-5c7d9f"},
    )
    cluster = [*spine_block_nodes(SEED_LAYOUT, cpu="8", memory="32Gi"), *hypernodes(SEED_LAYOUT)]
    sc = load_scenario([*cluster, leader, TRAINER])
    assert sorted(p.name for p in sc.pods) == sorted(
        ["trainer-0", "trainer-0-1", "trainer-0-2", "trainer-1", "trainer-1-1", "trainer-1-2"]
    )
    assert sorted(pg.name for pg in sc.podgroups.volcano) == ["trainer-0-5c7d9f", "trainer-1-5c7d9f"]
    assert sc.expansions[0].present == ("trainer-0",)


# --- a Volcano Job with partitionPolicy -----------------------------------------------------------

PARTITIONED = {
    "spine-0": {"block-0": ["n0", "n1"], "block-1": ["n2", "n3"]},
    "spine-1": {"block-2": ["n4", "n5"], "block-3": ["n6", "n7"]},
}


def partitioned_job() -> Obj:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "allreduce", "namespace": "default"},
        "spec": {
            "schedulerName": "volcano",
            "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            "tasks": [
                {
                    "name": "worker",
                    "replicas": 4,
                    "partitionPolicy": {
                        "totalPartitions": 2,
                        "partitionSize": 2,
                        "minPartitions": 2,
                        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                    },
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "w",
                                    "image": "busybox",
                                    "resources": {"requests": {"cpu": "4", "memory": "1Gi"}},
                                }
                            ]
                        }
                    },
                }
            ],
        },
    }


def test_volcano_job_partitions_each_land_inside_one_block() -> None:
    """spine-0 has room for two pods, spine-1 for four: three in block-2, two in block-3. Filling
    block-2 first would split partition 1 across blocks; each partition must keep to one."""
    taken = [busy("a", "n0", "8"), busy("b", "n2", "8"), busy("c", "n1", "4"), busy("d", "n3", "4")]
    taken += [busy("e", "n4", "4"), busy("f", "n7", "8")]
    cluster = [*spine_block_nodes(PARTITIONED, cpu="8", memory="32Gi"), *hypernodes(PARTITIONED)]
    result = run([*cluster, *taken, partitioned_job()])
    ((expansion),) = result.expansions
    assert expansion.groups == ("allreduce",)
    assert result.gangs == {"volcano:default/allreduce": ("spine-1", 2)}
    for partition in ((0, 1), (2, 3)):
        nodes = [result.bound[f"default/allreduce-worker-{i}"] for i in partition]
        assert len({block_of(PARTITIONED, n) for n in nodes}) == 1, (partition, nodes)


# --- Indexed Jobs: Kueue's TAS annotations and the GPU dialect ------------------------------------


RACK = "cloud.provider.com/topology-rack"


def kueue_cluster(busy_cpu: dict[str, str] | None = None) -> list[Obj]:
    """Two racks (k0, k1 in r1; k2, k3 in r2) of 8-CPU nodes under a Kueue Topology, with
    `busy_cpu` taken per node. By default rack r2's nodes have 2 CPUs free, too few for a pod."""
    nodes = [
        node(n, cpu="8", memory="32Gi", labels={RACK: r})
        for n, r in (("k0", "r1"), ("k1", "r1"), ("k2", "r2"), ("k3", "r2"))
    ]
    topology = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Topology",
        "metadata": {"name": "default"},
        "spec": {"levels": [{"nodeLabel": RACK}, {"nodeLabel": "kubernetes.io/hostname"}]},
    }
    taken = {"k2": "6", "k3": "6"} if busy_cpu is None else busy_cpu
    return [*nodes, topology, *(busy(f"busy-{n}", n, cpu) for n, cpu in taken.items())]


def test_kueue_indexed_job_lands_in_the_rack_with_room() -> None:
    job = yaml.safe_load((FIXTURES / "kueue-job-required.yaml").read_text())
    sc = load_scenario([*kueue_cluster(), job])
    made = [p for p in sc.pods if p.name.startswith("tas-sample-required-")]
    assert sorted(p.metadata.labels[gpu.COMPLETION_INDEX] for p in made) == ["0", "1", "2", "3"]
    assert all(
        (p.metadata.annotations or {}).get("kueue.x-k8s.io/podset-required-topology")
        == "cloud.provider.com/topology-rack"
        for p in made
    )
    result = run([*kueue_cluster(), job])
    assert sorted(result.bound) == sorted(p.key for p in made)
    assert set(result.bound.values()) == {"k0", "k1"}


def test_gpu_dialect_job_is_one_gang_on_two_nodes_of_the_narrowest_block() -> None:
    """The GPU seed's Job written as a Job, without pods (tests/controller/placer/test_placer_gpu
    places the same Job given with its pods)."""
    layout = {"s0": {"b0": ["n0", "n1", "n2"], "b1": ["n3", "n4", "n5", "n6"]}, "s1": {"b2": ["n7", "n8"]}}
    nvlink = {gpu.NVLINK_LABEL: "true"}
    nodes = [
        node(n, cpu="64", memory="512Gi", gpu="4", labels=nvlink)
        for b in layout.values()
        for ns in b.values()
        for n in ns
    ]
    gpu_busy = [
        pod(n, cpu="1", memory="1Gi", gpu="2", node_name=at, scheduler="other")
        for n, at in (("x", "n0"), ("y", "n8"))
    ]
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "dt", "namespace": "ml", "annotations": SEED_ANNOTATIONS},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "completionMode": "Indexed",
            "template": {
                "spec": {
                    "schedulerName": "topobridge",
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "4"}},
                        }
                    ],
                }
            },
        },
    }
    result = run([*nodes, *hypernodes(layout), *gpu_busy, job])
    assert result.gangs == {"job:ml/dt": ("b0", 1)}
    assert sorted(result.bound.values()) == ["n1", "n2"]


# --- the command's output ---------------------------------------------------------------------


def command(objects: list[Obj], output: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = simulate_command(
        Source("-"), output=output, out=out, err=err, stdin=io.StringIO(yaml.safe_dump_all(objects))
    )
    return code, out.getvalue(), err.getvalue()


def test_text_output_has_one_line_per_expanded_job() -> None:
    cluster = [*spine_block_nodes(SEED_LAYOUT, cpu="8", memory="32Gi"), *hypernodes(SEED_LAYOUT)]
    code, out, err = command([*cluster, TRAINER, partitioned_job()], "text")
    assert code == 0, err
    lines = out.splitlines()
    start = lines.index("expanded (what the jobs' controllers would create):")
    lws_line, *rest = lines[start + 1 :]
    assert lws_line.startswith(
        "  LeaderWorkerSet default/trainer: 6 pod(s) (2 group(s) of 3), schedulerName volcano; PodGroups trainer-0-"
    )
    assert rest[0].startswith("    revision ") and "stands in" in rest[0]
    assert rest[1] == (
        "  Job.batch.volcano.sh default/allreduce: 4 pod(s) (tasks worker 4), schedulerName volcano; "
        "PodGroup allreduce"
    )


def test_json_output_has_the_expanded_field_only_when_jobs_were_expanded() -> None:
    cluster = [*spine_block_nodes(SEED_LAYOUT, cpu="8", memory="32Gi"), *hypernodes(SEED_LAYOUT)]
    code, out, _ = command([*cluster, TRAINER], "json")
    doc = json.loads(out)
    assert code == 0 and list(doc) == ["bound", "evicted", "expanded", "gangs", "nominated", "unschedulable"]
    entry = doc["expanded"]["LeaderWorkerSet default/trainer"]
    assert entry["pods"] == [
        "trainer-0",
        "trainer-0-1",
        "trainer-0-2",
        "trainer-1",
        "trainer-1-1",
        "trainer-1-2",
    ]
    assert [g.rsplit("-", 1)[0] for g in entry["podGroups"]] == ["trainer-0", "trainer-1"]
    assert entry["present"] == []
    code, out, _ = command(cluster, "json")
    assert code == 0 and "expanded" not in json.loads(out)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            lambda o: o["spec"]["leaderWorkerTemplate"].update(size=0),
            "standard input document 21 (LeaderWorkerSet trainer): spec.leaderWorkerTemplate.size: Invalid value: 0",
            id="lws-size-0",
        ),
        pytest.param(
            lambda o: o["spec"].update(replicas=60_000),
            "spec.replicas: Invalid value: 60000: expands to 180000 pods",
            id="too-many-pods",
        ),
    ],
)
def test_a_job_that_cannot_be_expanded_exits_2_naming_document_and_field(change: Any, message: str) -> None:
    lws = json.loads(json.dumps(TRAINER))
    change(lws)
    cluster = [*spine_block_nodes(SEED_LAYOUT, cpu="8", memory="32Gi"), *hypernodes(SEED_LAYOUT)]
    code, out, err = command([*cluster, lws], "json")
    assert (code, out) == (2, "")
    assert message in err and "Traceback" not in err


def test_a_lenient_scenario_leaves_a_bad_job_out_with_a_warning() -> None:
    lws = json.loads(json.dumps(TRAINER))
    lws["spec"]["leaderWorkerTemplate"]["size"] = 0
    sc = load_scenario([node("a"), lws], lenient=True)
    assert sc.pods == [] and sc.expansions == []
    assert any("left out: spec.leaderWorkerTemplate.size" in w for w in sc.warnings)
    with pytest.raises(ScenarioError, match=r"spec\.leaderWorkerTemplate\.size"):
        load_scenario([node("a"), lws])


def test_kueue_indexed_job_waits_rather_than_span_two_racks() -> None:
    """Each rack has room for three of the four pods (k0 and k2 are half taken): the cluster
    holds the Job, no rack does, and the required rack keeps it pending instead of spanning."""
    job = yaml.safe_load((FIXTURES / "kueue-job-required.yaml").read_text())
    result = run([*kueue_cluster({"k0": "4", "k2": "4"}), job])
    assert result.bound == {}
    assert result.gangs == {}
    message = result.unschedulable["job:default/tas-sample-required"]
    assert (
        f"desiredOfferSlot: 4, topology topologyNode {RACK}/r1: 3;topology topologyNode {RACK}/r2: 3"
        in message
    )


def test_an_object_given_twice_is_refused_naming_its_name_field() -> None:
    with pytest.raises(ScenarioError) as refused:
        load_scenario([node("a"), node("b"), node("a")])
    message = str(refused.value)
    assert 'metadata.name: Duplicate value: "a"' in message
    assert "the same object as" in message
