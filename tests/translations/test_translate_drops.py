"""`topobridge translate` names every field it does not carry (a `refused` line), `--strict`
fails on any, and HyperNode messages name the real cause."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from topobridge import cmd_translate
from translations.topology import from_hypernodes
from translations.volcano import HyperNode

LWS_WITH_EXTRAS = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {
        "name": "llm",
        "namespace": "default",
        "annotations": {
            "volcano.sh/network-topology-mode": "hard",
            "volcano.sh/network-topology-highest-tier": "1",
            "volcano.sh/preemptable": "false",
        },
    },
    "spec": {
        "replicas": 1,
        "leaderWorkerTemplate": {
            "size": 2,
            "workerTemplate": {
                "metadata": {"annotations": {"kueue.x-k8s.io/podset-preferred-topology": "cloud.com/rack"}},
                "spec": {"containers": [{"name": "w", "image": "x"}]},
            },
        },
    },
}


def _run(objects: list[Any], *args: str, tmp_path: Path | None = None, **kw: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    options = cmd_translate.TranslateOptions(**kw)
    code = cmd_translate.run(["-"], options, out=out, err=err, stdin=io.StringIO(yaml.safe_dump_all(objects)))
    return code, out.getvalue(), err.getvalue()


def test_lws_drops_are_named_and_strict_fails_on_them() -> None:
    code, out, err = _run([LWS_WITH_EXTRAS], revision="r1")
    assert code == 0 and out
    refused = [line.split(": refused: ", 1)[1] for line in err.splitlines() if ": refused: " in line]
    assert refused == [
        "metadata.annotations[volcano.sh/preemptable]: LWS's Volcano provider copies it onto each PodGroup; "
        "topobridge's PodGroups do not carry it",
        "spec.leaderWorkerTemplate.workerTemplate.metadata.annotations[kueue.x-k8s.io/podset-preferred-topology]: "
        "Kueue's topology request, not carried into the PodGroups (spec.networkTopology is what Volcano reads)",
    ]
    code, out, err = _run([LWS_WITH_EXTRAS], revision="r1", strict=True)
    assert (code, out) == (cmd_translate.EXIT_UNTRANSLATABLE, "")
    assert "error: --strict: 2 field(s) not carried (the refused lines above)" in err


def test_strict_passes_when_everything_is_carried() -> None:
    lws = {**LWS_WITH_EXTRAS, "metadata": {"name": "llm", "namespace": "default"}}
    lws["spec"] = {**lws["spec"], "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
    lws["spec"]["leaderWorkerTemplate"] = {
        "size": 2,
        "workerTemplate": {"spec": {"containers": [{"name": "w"}]}},
    }
    code, out, _ = _run([lws], revision="r1", strict=True)
    assert code == 0 and "kind: PodGroup" in out


def _hn(name: str, tier: int, *members: dict[str, Any]) -> HyperNode:
    return HyperNode.parse({"metadata": {"name": name}, "spec": {"tier": tier, "members": list(members)}})


EXACT = {"type": "Node", "selector": {"exactMatch": {"name": "node-0"}}}
REGEX = {"type": "Node", "selector": {"regexMatch": {"pattern": "^node-"}}}
LABEL = {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "a"}}}}


@pytest.mark.parametrize(
    ("hypernodes", "nodes", "warning"),
    [
        pytest.param(
            [_hn("s0", 1, EXACT, REGEX)],
            ["node-0"],
            "node node-0 is selected twice by hypernode s0 (members[0] and members[1]); counted once",
            id="one-hypernode-twice",
        ),
        pytest.param(
            [_hn("s0", 1, EXACT), _hn("s1", 1, REGEX)],
            ["node-0"],
            "node node-0 has two parents (s0, s1); kept s0",
            id="two-parents",
        ),
        pytest.param(
            [_hn("s0", 1, REGEX)],
            [],
            "hypernode s0 members[0]: regexMatch selects Nodes and no Node was given, so it selects none "
            "(give the Nodes with the HyperNodes)",
            id="regex-without-nodes",
        ),
        pytest.param(
            [_hn("s0", 1, LABEL)],
            [],
            "hypernode s0 members[0]: labelMatch selects Nodes and no Node was given, so it selects none "
            "(give the Nodes with the HyperNodes)",
            id="label-without-nodes",
        ),
    ],
)
def test_hypernode_tree_warnings_name_the_cause(
    hypernodes: list[HyperNode], nodes: list[str], warning: str
) -> None:
    from translations.core import Node

    tree = from_hypernodes(hypernodes, [Node.parse({"metadata": {"name": n}}) for n in nodes])
    assert list(tree.warnings) == [warning]


def test_hypernode_selector_drops_reach_translate_as_refused() -> None:
    objects = [
        {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", **_hn("s0", 1, REGEX).to_dict()}
    ]
    code, _, err = _run(objects, to="koordinator", strict=True)
    assert code == cmd_translate.EXIT_UNTRANSLATABLE
    assert "refused: hypernode s0 members[0]: regexMatch selects Nodes and no Node was given" in err


TOPOLOGY = {
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "Topology",
    "metadata": {"name": "default"},
    "spec": {"levels": [{"nodeLabel": "cloud.com/block"}, {"nodeLabel": "kubernetes.io/hostname"}]},
}
TAS_JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "j", "namespace": "default"},
    "spec": {
        "parallelism": 2,
        "template": {
            "metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": "cloud.com/block"}},
            "spec": {"containers": [{"name": "c"}]},
        },
    },
}


def test_kueue_topology_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(yaml.safe_dump(TOPOLOGY))
    code, out, err = _run([TAS_JOB], kueue_topology=str(path))
    assert code == 0, err
    assert "highestTierAllowed: 1" in out
    two = tmp_path / "two.yaml"
    two.write_text(yaml.safe_dump_all([TOPOLOGY, TOPOLOGY]))
    code, out, err = _run([TAS_JOB], kueue_topology=str(two))
    assert (code, out) == (cmd_translate.EXIT_UNTRANSLATABLE, "")
    assert "--kueue-topology: holds 2 Kueue Topologies; it must hold exactly one" in err
    code, _, err = _run([TAS_JOB], kueue_topology=str(tmp_path / "missing.yaml"))
    assert code == cmd_translate.EXIT_UNREADABLE
    assert "error: --kueue-topology " in err and "no such file or directory" in err


def test_kueue_topology_from_the_input_and_back_to_kueue() -> None:
    code, out, err = _run([TAS_JOB, TOPOLOGY])
    assert code == 0, err
    made = list(yaml.safe_load_all(out))
    code, out, err = _run([*(o for o in made if o["kind"] in ("Job", "PodGroup")), TOPOLOGY], to="kueue")
    assert code == 0, err
    (job,) = [o for o in yaml.safe_load_all(out) if o["kind"] == "Job"]
    assert (
        job["spec"]["template"]["metadata"]["annotations"]
        == TAS_JOB["spec"]["template"]["metadata"]["annotations"]
    )


def test_to_kueue_names_what_it_skips() -> None:
    vcjob = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "v", "namespace": "default"},
        "spec": {
            "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}]
        },
    }
    pod_group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "default"},
    }
    code, out, err = _run([vcjob, pod_group, LWS_WITH_EXTRAS], to="kueue")
    assert code == 0
    assert out == ""
    assert "Job default/v: skipped (Kueue manages no Volcano Job)" in err
    assert "PodGroup default/pg: skipped (Kueue's annotations live on a pod template" in err
    assert "LeaderWorkerSet default/llm: skipped" in err


def test_a_job_in_two_dialects_is_refused() -> None:
    job = {**TAS_JOB, "metadata": {**TAS_JOB["metadata"], "annotations": {"gpu.topology/max-nodes": "1"}}}
    code, _, err = _run([job, TOPOLOGY])
    assert code == cmd_translate.EXIT_UNTRANSLATABLE
    assert "spec.template.metadata.annotations: Forbidden: both gpu.topology/* and Kueue's" in err


def test_kueue_annotations_on_a_pod_are_named() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "default",
            "annotations": {"kueue.x-k8s.io/podset-required-topology": "cloud.com/rack"},
        },
        "spec": {"containers": [{"name": "c"}]},
    }
    code, _, err = _run([pod], strict=True)
    assert code == cmd_translate.EXIT_UNTRANSLATABLE
    assert (
        "Pod default/p -> Volcano: refused: metadata.annotations[kueue.x-k8s.io/podset-required-topology]: Kueue's "
        "plain-pod topology request is not translated"
    ) in err
