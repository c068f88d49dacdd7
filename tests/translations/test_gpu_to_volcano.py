"""GPU dialect -> Volcano: what becomes a PodGroup field or a template change, what is refused."""

from __future__ import annotations

from typing import Any

import pytest
from gpu_seed import SEED_ANNOTATIONS

from translations import gpu
from translations.errors import InvalidSpecError
from translations.gpu_to_volcano import translate

G = gpu.PREFIX


def _job(annotations: dict[str, str], *, affinity: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "t", "image": "trainer", "resources": {"limits": {"nvidia.com/gpu": "4"}}}],
        "restartPolicy": "Never",
    }
    if affinity is not None:
        spec["affinity"] = affinity
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "dt", "namespace": "ml", "annotations": annotations},
        "spec": {"parallelism": 2, "completions": 2, "template": {"spec": spec}},
    }


SEED = SEED_ANNOTATIONS


def test_the_seed_job_becomes_a_pod_group_with_what_volcano_can_hold() -> None:
    out = translate(_job(SEED))
    assert out is not None
    assert out.pod_group.to_dict()["spec"] == {"minMember": 2, "networkTopology": {"mode": "soft"}}
    assert out.pod_group.key == "ml/dt"
    tmpl = out.job["spec"]["template"]
    assert tmpl["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "dt"}
    assert tmpl["spec"]["schedulerName"] == "volcano"
    terms = tmpl["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [
        {
            "matchExpressions": [
                {"key": gpu.NVLINK_LABEL, "operator": "Exists"},
                {"key": gpu.NVLINK_LABEL, "operator": "NotIn", "values": ["", "false", "0"]},
            ]
        }
    ]
    refused = out.report.refused
    assert any(
        line.startswith(f"metadata.annotations[{G}max-nodes]: 2: Volcano has no limit") for line in refused
    )
    assert any(f"{G}min-gpus-per-node]: 4: Volcano has no per-node minimum" in line for line in refused)
    assert any(f"{G}min-bandwidth]: chooses GPUs inside a node" in line for line in refused)
    assert out.job["metadata"]["annotations"] == SEED  # kept for the device plugin


@pytest.mark.parametrize(
    ("annotations", "topology"),
    [
        pytest.param({f"{G}max-nodes": "1"}, {"mode": "hard", "highestTierAllowed": 0}, id="one-node"),
        pytest.param(
            {f"{G}min-gpus-per-node": "8"}, {"mode": "hard", "highestTierAllowed": 0}, id="all-gpus-one-node"
        ),
        pytest.param({f"{G}multi-node-policy": "best-fit"}, None, id="best-fit-is-volcano-binpack"),
        pytest.param({f"{G}multi-node-policy": "spread"}, None, id="spread-refused"),
    ],
)
def test_network_topology(annotations: dict[str, str], topology: dict[str, Any] | None) -> None:
    out = translate(_job(annotations))
    assert out is not None
    assert out.pod_group.to_dict()["spec"].get("networkTopology") == topology
    if annotations.get(f"{G}multi-node-policy") == "spread":
        assert any("hostname" in line for line in out.report.refused)


def test_pack_within_a_tier_is_hard_at_that_tier() -> None:
    out = translate(_job({f"{G}multi-node-policy": "pack"}), pack_tier=1)
    assert out is not None
    assert out.pod_group.to_dict()["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}


def test_nvlink_joins_every_existing_term() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                ]
            }
        }
    }
    out = translate(
        _job({f"{G}require-nvlink": "true"}, affinity=affinity), nvlink_label="nvidia.com/gpu.clique"
    )
    assert out is not None
    terms = out.job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert [[e["key"] for e in t["matchExpressions"]] for t in terms] == [
        ["zone", "nvidia.com/gpu.clique", "nvidia.com/gpu.clique"],
        ["nvidia.com/gpu.clique", "nvidia.com/gpu.clique"],
    ]
    assert terms[1]["matchFields"][0]["values"] == ["n1"]
    assert affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][
        0
    ] == {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}, (
        "the input is not changed"
    )


def test_no_request_no_translation_and_bad_values_raise_them_all() -> None:
    assert translate(_job({})) is None
    with pytest.raises(InvalidSpecError) as exc:
        translate(_job({f"{G}max-nodes": "0", f"{G}policy": "x"}))
    assert len(exc.value.all) == 2


def test_topobridge_translate_writes_the_pod_group_and_job_and_reports(tmp_path: Any) -> None:
    import io

    import yaml

    from topobridge.cmd_translate import GpuOptions, TranslateOptions, run

    path = tmp_path / "job.yaml"
    path.write_text(
        yaml.safe_dump_all([_job(SEED), _job({}) | {"metadata": {"name": "plain", "namespace": "ml"}}])
    )
    out, err = io.StringIO(), io.StringIO()
    assert run([str(path)], TranslateOptions(gpu=GpuOptions(pack_tier=1)), out=out, err=err) == 0
    docs = list(yaml.safe_load_all(out.getvalue()))
    assert [d["kind"] for d in docs] == ["PodGroup", "Job"]
    assert docs[0]["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    lines = err.getvalue().splitlines()
    assert (
        "Job ml/dt -> Volcano: refused: metadata.annotations[gpu.topology/max-nodes]: 2: Volcano has no limit "
        "on the nodes a gang uses" in lines
    )
    assert "Job ml/plain: skipped (no gpu.topology/ or Kueue topology request)" in lines
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(_job({f"{G}max-nodes": "zero"})))
    err = io.StringIO()
    assert run([str(bad)], out=io.StringIO(), err=err) == 1
    assert 'metadata.annotations[gpu.topology/max-nodes]: Invalid value: "zero"' in err.getvalue()
