"""`topobridge validate`: exit codes, messages naming the object, lists, stdin, cluster state."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from webhook_corpus import CLUSTER_OBJECTS, lws, pod

from topobridge.cli import main
from topobridge.cmd_validate import run

A = "gang.scheduling.koordinator.sh/"


def _run(
    tmp_path: Path, docs: list[object] | str, *, state: list[object] | None = None, stdin: str | None = None
) -> tuple[int, str, str]:
    path = tmp_path / "objects.yaml"
    path.write_text(docs if isinstance(docs, str) else yaml.safe_dump_all(docs), encoding="utf-8")
    state_path = None
    if state is not None:
        state_path = tmp_path / "state.yaml"
        state_path.write_text(yaml.safe_dump(state), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = run(
        ["-" if stdin is not None else str(path)],
        cluster_state=str(state_path) if state_path else None,
        out=out,
        err=err,
        stdin=io.StringIO(stdin) if stdin is not None else None,
    )
    return code, out.getvalue(), err.getvalue()


def test_all_valid_exits_0(tmp_path: Path) -> None:
    code, out, err = _run(
        tmp_path, [lws({"mode": "hard", "highestTierAllowed": 2}), pod({f"{A}network-topology-index": "4"})]
    )
    assert code == 0
    assert out == "valid LeaderWorkerSet default/train\nvalid Pod default/worker-2\n"
    assert err == ""


def test_invalid_exits_1_and_names_the_object(tmp_path: Path) -> None:
    bad = lws({"mode": "hrad"})
    code, out, err = _run(tmp_path, [bad, lws({"highestTierAllowed": 0})])
    assert code == 1
    assert err.splitlines() == [
        "error: LeaderWorkerSet default/train: spec.networkTopology.mode: "
        'Unsupported value: "hrad": supported values: "hard", "soft"',
        "warning: LeaderWorkerSet default/train: spec.networkTopology.highestTierAllowed: "
        "0 confines every pod of the gang to a single node",
    ]
    assert out.splitlines()[0].startswith("invalid LeaderWorkerSet default/train (")


def test_kind_list_and_foreign_kinds(tmp_path: Path) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
            {
                "apiVersion": "scheduling.koordinator.sh/v1alpha1",
                "kind": "ClusterNetworkTopology",
                "metadata": {"name": "prod"},
                "spec": {"networkTopologySpec": [{"topologyLayer": "NodeTopologyLayer"}]},
            },
        ],
    }
    code, out, err = _run(tmp_path, [doc])
    assert code == 1
    assert "skipped ConfigMap c (" in out
    assert err == (
        'error: ClusterNetworkTopology prod: metadata.name: Unsupported value: "prod": supported values: '
        '"default"\n'
    )


def test_cluster_state_file_enables_cluster_checks(tmp_path: Path) -> None:
    obj = pod(
        {
            f"{A}network-topology-index": "0",
            f"{A}network-topology-spec": '{"gatherStrategy": [{"layer": "Rack", "strategy": "MustGather"}]}',
        }
    )
    code, _, err = _run(tmp_path, [obj])
    assert (code, err) == (0, "")
    code, _, err = _run(
        tmp_path, [obj], state=[*CLUSTER_OBJECTS, {"kind": "HyperNode", "metadata": {"name": "broken"}}]
    )
    assert code == 1
    assert "warning: --cluster-state" in err and "HyperNode broken left out: spec: Required value" in err
    assert (
        "error: Pod default/worker-2: "
        "metadata.annotations[gang.scheduling.koordinator.sh/network-topology-spec]"
        '.gatherStrategy[0].layer: Not found: "Rack"'
    ) in err
    assert "index 0 is already held by pod default/worker-0 of gang default/train" in err


@pytest.mark.parametrize(
    "text", ["a: [", "- just\n- a list\n", "\x00\x01"], ids=["bad-yaml", "not-an-object", "binary"]
)
def test_unreadable_exits_2(tmp_path: Path, text: str) -> None:
    code, out, err = _run(tmp_path, text)
    assert code == 2
    assert err.startswith("error: ") and "objects.yaml" in err
    assert out == ""


def test_missing_file_exits_2(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # Keep logging pointed where it was: capsys's stderr is gone after this test.
    monkeypatch.setattr("topobridge.logs.configure", lambda **_: None)
    assert main(["validate", "/nonexistent/objects.yaml"]) == 2
    assert "error: /nonexistent/objects.yaml: no such file or directory" in capsys.readouterr().err


def test_stdin_and_timestamps_stay_strings(tmp_path: Path) -> None:
    text = yaml.safe_dump(lws()).replace(
        "name: train", "name: train\n  creationTimestamp: 2024-01-01T00:00:00Z"
    )
    code, out, err = _run(tmp_path, "", stdin=text)
    assert (code, out, err) == (0, "valid LeaderWorkerSet default/train\n", "")
