"""`topobridge translate`: YAML in, objects out, report on stderr, exit codes."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from translation_seeds import member_pod, seed_cnt, seed_member_pods, seed_nodes, seed_pod_groups

from topobridge.cmd_translate import TranslateOptions, run

JsonDict = dict[str, Any]


def write(tmp_path: Path, name: str, docs: list[JsonDict], *, as_list: bool = False) -> str:
    path = tmp_path / name
    if as_list:
        path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": docs}))
    else:
        path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def translate(
    *files: str, to: str = "volcano", revision: str | None = None, stdin: str | None = None
) -> tuple[int, list[JsonDict], str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(
        list(files),
        TranslateOptions(to=to, revision=revision),
        out=out,
        err=err,
        stdin=io.StringIO(stdin) if stdin is not None else None,
    )
    return code, [d for d in yaml.safe_load_all(out.getvalue()) if d], err.getvalue()


def kinds(docs: list[JsonDict]) -> list[tuple[str, str]]:
    return [(d["kind"], d["metadata"]["name"]) for d in docs]


def test_seed_cluster_and_gangs_to_volcano(tmp_path: Path) -> None:
    cluster = write(tmp_path, "cluster.yaml", [seed_cnt(), *seed_nodes()], as_list=True)
    gangs = write(tmp_path, "gangs.yaml", [*seed_pod_groups(), *seed_member_pods()])
    code, docs, err = translate(cluster, gangs)
    assert code == 0, err
    assert kinds(docs)[:8] == [
        ("HyperNode", n)
        for n in (
            "spinelayer-spine-0",
            "blocklayer-block-0",
            "blocklayer-block-1",
            "spinelayer-spine-1",
            "blocklayer-block-2",
            "blocklayer-block-3",
            "spinelayer-spine-2",
            "blocklayer-block-4",
        )
    ]
    groups = {d["metadata"]["name"]: d for d in docs if d["kind"] == "PodGroup"}
    assert groups["high-priority-training"]["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert groups["high-priority-training"]["spec"]["networkTopology"] == {
        "mode": "hard",
        "highestTierAllowed": 2,
    }
    pods = [d for d in docs if d["kind"] == "Pod"]
    assert len(pods) == 10
    assert all(p["spec"]["schedulerName"] == "volcano" for p in pods)
    assert "PodGroup default/high-priority-training -> Volcano: carried over: networkTopology = " in err
    assert "refused: scheduleTimeoutSeconds 300" in err


def test_round_trip_through_the_cli_back_to_koordinator(tmp_path: Path) -> None:
    cluster = write(tmp_path, "cluster.yaml", [seed_cnt(), *seed_nodes()])
    gangs = write(tmp_path, "gangs.yaml", seed_pod_groups()[:2])
    code, volcano_docs, _ = translate(cluster, gangs)
    assert code == 0
    nodes = write(tmp_path, "nodes.yaml", seed_nodes())
    translated = write(tmp_path, "volcano.yaml", volcano_docs)
    code, docs, err = translate(translated, nodes, to="koordinator")
    assert code == 0, err
    cnt = docs[0]
    assert cnt["kind"] == "ClusterNetworkTopology"
    assert cnt["spec"] == seed_cnt()["spec"] | {
        "networkTopologySpec": [
            {"topologyLayer": "SpineLayer", "labelKey": ["network.topology.nvidia.com/spine"]},
            {
                "topologyLayer": "BlockLayer",
                "parentTopologyLayer": "SpineLayer",
                "labelKey": ["network.topology.nvidia.com/block"],
            },
            {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
        ]
    }
    assert "status" not in cnt, "the controller writes status.detailStatus; translate makes the spec"
    groups = {d["metadata"]["name"]: d for d in docs if d["kind"] == "PodGroup"}
    assert groups["high-priority-training"]["apiVersion"] == "scheduling.sigs.k8s.io/v1alpha1"
    assert groups["high-priority-training"]["metadata"]["annotations"] == {
        "gang.scheduling.koordinator.sh/network-topology-spec": '{"gatherStrategy":[{"layer":"SpineLayer",'
        '"strategy":"MustGather"}]}'
    }
    assert not [d for d in docs if d["kind"] == "Node"]  # already labelled: nothing to change


def test_lws_needs_leader_pods_or_a_revision(tmp_path: Path) -> None:
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "llm", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": []}}},
            "networkTopology": {"highestTierAllowed": 1},
        },
    }
    path = write(tmp_path, "lws.yaml", [lws])
    code, docs, err = translate(path)
    assert code == 1 and docs == []
    assert err.startswith(
        "error: LeaderWorkerSet default/llm: needs the leaderworkerset.sigs.k8s.io/template-revision-hash"
    )
    code, docs, err = translate(path, revision="abc")
    assert code == 0
    assert kinds(docs) == [("PodGroup", "llm-0-abc"), ("PodGroup", "llm-1-abc")]


def test_one_bad_object_does_not_stop_the_others(tmp_path: Path) -> None:
    good = seed_pod_groups()[2]
    bad = dict(
        seed_pod_groups()[0],
        metadata={
            "name": "bad",
            "namespace": "default",
            "annotations": {"gang.scheduling.koordinator.sh/network-topology-spec": "{nope"},
        },
    )
    path = write(
        tmp_path,
        "mixed.yaml",
        [bad, good, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}],
    )
    code, docs, err = translate(path)
    assert code == 1
    assert docs == [], "nothing is written when something failed: no half-applied translation"
    assert "PodGroup default/hp-training-job -> " in err, "the good object is still translated and reported"
    assert err.rstrip().endswith("nothing written: 1 problem(s) above; fix or leave out what they name")
    assert (
        "error: PodGroup default/bad: "
        "metadata.annotations[gang.scheduling.koordinator.sh/network-topology-spec]: "
        'Invalid value: "{nope": not valid JSON'
    ) in err
    assert "ConfigMap c: skipped (nothing to translate into Volcano)" in err


def test_standard_input_and_unreadable_files(tmp_path: Path) -> None:
    code, docs, _ = translate("-", stdin=yaml.safe_dump(seed_pod_groups()[2]))
    assert code == 0 and kinds(docs) == [("PodGroup", "hp-training-job")]
    for content, phrase in (("a: [\n", "not valid YAML"), ("- 1\n- 2\n", "not a Kubernetes object")):
        (tmp_path / "bad.yaml").write_text(content)
        code, docs, err = translate(str(tmp_path / "bad.yaml"))
        assert (code, docs) == (2, [])
        assert phrase in err and "Traceback" not in err
    code, _, err = translate(str(tmp_path / "missing.yaml"))
    assert code == 2 and "missing.yaml: no such file or directory" in err


def test_patched_pods_keep_everything_they_had(tmp_path: Path) -> None:
    pod = member_pod("p0", "hp-training-job", priority_class="high-priority")
    pod["metadata"]["uid"] = "1234"
    pod["status"] = {"phase": "Pending"}
    code, docs, _ = translate(write(tmp_path, "g.yaml", [seed_pod_groups()[2], pod]))
    assert code == 0
    patched = next(d for d in docs if d["kind"] == "Pod")
    assert patched["metadata"]["uid"] == "1234" and patched["status"] == {"phase": "Pending"}
    assert patched["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "hp-training-job"


def test_the_console_script_exits_2_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("kind: [")
    proc = subprocess.run(
        [sys.executable, "-m", "topobridge.cli", "translate", str(tmp_path / "bad.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert "not valid YAML" in proc.stderr and "Traceback" not in proc.stderr


def test_nodes_labelled_by_topograph_v1_and_gfd_become_the_hypernodes_they_imply(tmp_path: Path) -> None:
    from nvl72_seed import RACKS, nvl72_nodes

    code, docs, err = translate(write(tmp_path, "nodes.yaml", nvl72_nodes()))
    assert code == 0, err
    tree = {d["metadata"]["name"]: (d["spec"]["tier"], d["spec"]["tierName"], members(d)) for d in docs}
    rack1, clique = f"nvlink-rack-{RACKS[1]}", f"nvlink-clique-{RACKS[1]}"
    assert tree["fabric-tier-1-s-spine-0"] == (
        4,
        "fabric-tier-1",
        ["fabric-tier-0-s-leaf-0", "fabric-tier-0-s-leaf-1", rack1],
    )
    assert tree["fabric-tier-0-s-leaf-1"] == (3, "fabric-tier-0", ["cpu-0"])
    assert tree[rack1] == (2, "nvlink-rack", [f"{clique}.1", f"{clique}.2"])
    assert tree[f"{clique}.2"] == (1, "nvlink-clique", ["gb200-r1-t2", "gb200-r1-t3"])
    assert len(tree) == 14 and all(DNS1123.match(name) for name in tree)
    rack = next(d for d in docs if d["metadata"]["name"] == rack1)
    assert rack["metadata"]["labels"]["topobridge.io/topology-source"] == "topograph"
    assert rack["metadata"]["annotations"] == {"topobridge.io/label-value": RACKS[1]}
    assert err.splitlines() == [
        f"topology node labels -> Volcano: carried over: {line}"
        for line in (
            "levels nvlink-clique -> tier 1, nvlink-rack -> tier 2, fabric-tier-0 -> tier 3, fabric-tier-1 -> tier 4",
            "nvidia.com/gpu.clique: HyperNode tier 1 (nvlink-clique)",
            "ClusterUUID of nvidia.com/gpu.clique: HyperNode tier 2 (nvlink-rack)",
            "fabric.topograph.run/tier-0: HyperNode tier 3 (fabric-tier-0)",
            "fabric.topograph.run/tier-1: HyperNode tier 4 (fabric-tier-1)",
            "14 HyperNodes over 13 nodes",
        )
    ]


def test_odd_gfd_labels_are_refused_in_the_report_naming_the_node(tmp_path: Path) -> None:
    from nvl72_seed import node

    nodes = [node("a", {"nvidia.com/gpu.clique": "no-dot"}), node("b", {"nvidia.com/gpu.clique": ""})]
    code, docs, err = translate(write(tmp_path, "nodes.yaml", nodes))
    assert code == 0, err
    assert kinds(docs) == [("HyperNode", "nvlink-clique-no-dot")]
    assert (
        "topology node labels -> Volcano: refused: node b: label nvidia.com/gpu.clique ignored: its value is empty"
        in err
    )
    assert (
        'refused: node a: nvidia.com/gpu.clique="no-dot" is not <ClusterUUID>.<CliqueID>: a clique in no rack'
        in err
    )


def members(hypernode: JsonDict) -> list[str]:
    return [m["selector"]["exactMatch"]["name"] for m in hypernode["spec"]["members"]]


DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
