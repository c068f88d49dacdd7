"""`topobridge simulate`: the JSON contract, the text tree, input forms, exit 2 on bad input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from placer_objects import DEMO, demo_objects, node, pod

from topobridge.cmd_simulate import Source, run

CONTRACT_KEYS = ["bound", "evicted", "gangs", "nominated", "unschedulable"]


def simulate(
    scenario: str | None = None,
    *,
    stdin: str | None = None,
    output: str = "text",
    scheduler_names: str | None = None,
    attempt_budget: int | None = None,
    attempt_deadline: float | None = None,
    **source: Any,
) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    served: dict[str, Any] = {} if scheduler_names is None else {"scheduler_names": scheduler_names}
    if attempt_budget is not None:
        served["attempt_budget"] = attempt_budget
    if attempt_deadline is not None:
        served["attempt_deadline"] = attempt_deadline
    code = run(
        Source(scenario, **source),
        output=output,
        out=out,
        err=err,
        stdin=io.StringIO(stdin) if stdin is not None else None,
        **served,
    )
    return code, out.getvalue(), err.getvalue()


def test_json_contract_example_2() -> None:
    code, out, err = simulate(str(DEMO / "example-2.yaml"), output="json")
    assert code == 0, err
    assert out.count("\n") == 1, "exactly one JSON object"
    doc = json.loads(out)
    assert list(doc) == CONTRACT_KEYS, "keys sorted, nothing else"
    hp = {f"default/hp-training-pod-{i}": f"node-{5 + i}" for i in range(4)}
    assert doc == {
        "bound": hp,
        "nominated": hp,
        "evicted": ["default/low-priority-pod-5"],
        "unschedulable": {},
        "gangs": {"koordinator:default/high-priority-training": {"domain": "SpineLayer/spine-1", "tier": 2}},
    }


def test_the_real_command_prints_text_into_a_pipe_and_json_when_asked(tmp_path: Path) -> None:
    """Through the console entry point, stdout a pipe: the default is text there too (what a
    terminal shows is what `simulate > file` keeps); `-o json` after the file, exit 0, no noise."""
    command = [sys.executable, "-m", "topobridge.cli", "simulate", str(DEMO / "example-1.yaml")]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "koordinator:default/topology-demo-job -> SpineLayer/spine-1 (tier 2)" in proc.stdout
    proc = subprocess.run([*command, "-o", "json"], capture_output=True, text=True, timeout=120, check=False)
    assert (proc.returncode, proc.stderr) == (0, "")
    doc = json.loads(proc.stdout)
    assert doc["gangs"] == {
        "koordinator:default/topology-demo-job": {"domain": "SpineLayer/spine-1", "tier": 2}
    }


def test_bound_lists_only_pods_placed_in_this_run() -> None:
    objs = [node("a"), pod("old", cpu="1", memory="1Gi", node_name="a"), pod("new", cpu="1", memory="1Gi")]
    code, out, _ = simulate("-", output="json", stdin=yaml.safe_dump_all(objs))
    assert code == 0
    doc = json.loads(out)
    assert doc["bound"] == {"default/new": "a"}
    assert doc["gangs"] == {"pod:default/new": {"domain": "a", "tier": 0}}


def test_a_kind_list_reads_like_documents() -> None:
    objs = demo_objects("example-1")
    listed = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs})
    documents = yaml.safe_dump_all(objs)
    assert simulate("-", output="json", stdin=listed)[1] == simulate("-", output="json", stdin=documents)[1]


def test_text_output_draws_the_tree_with_placements_and_evictions() -> None:
    code, out, _ = simulate(str(DEMO / "example-2.yaml"), output="text")
    assert code == 0
    lines = out.splitlines()
    node5 = next(line for line in lines if "node-5 " in line)
    assert "+ default/hp-training-pod-0" in node5 and "x default/low-priority-pod-5" in node5
    node0 = next(line for line in lines if "node-0 " in line)
    assert ". default/low-priority-pod-0" in node0
    assert any(line.startswith("├── SpineLayer/spine-0") for line in lines)
    assert any("BlockLayer/block-2" in line for line in lines)
    assert "result: 4 bound, 4 nominated, 1 evicted, 0 unschedulable" in out
    assert "preemption: not eligible due to terminating pod on the nominated node.." in out


def test_the_demo_runs_both_seed_examples_in_text() -> None:
    code, out, _ = simulate(None, output="text")
    assert code == 0
    assert "== demo example-1" in out and "== demo example-2" in out
    assert "koordinator:default/topology-demo-job -> SpineLayer/spine-1 (tier 2)" in out
    assert "default/high-priority-training -> SpineLayer/spine-1 (tier 2)" in out


def test_one_demo_scenario_in_json() -> None:
    code, out, _ = simulate(None, demo="job-level-preemption", output="json")
    assert code == 0
    assert json.loads(out)["evicted"] == ["default/lp-pod-1", "default/lp-pod-2"]


def test_the_attempt_budget_is_runs_own() -> None:
    """A search run's budget cuts short is cut short in the dry run too, at the same step: with
    a budget spent before the search begins, Example 2's gang evicts nobody and says why."""
    code, out, _ = simulate(None, demo="example-2", output="json", attempt_budget=1)
    doc = json.loads(out)
    assert code == 0 and doc["evicted"] == [] and doc["bound"] == {}
    assert "within the attempt's budget" in doc["unschedulable"]["koordinator:default/high-priority-training"]
    assert json.loads(simulate(None, demo="example-2", output="json")[1])["evicted"] == [
        "default/low-priority-pod-5"
    ]
    code, _, err = simulate(None, demo="example-2", attempt_budget=0)
    assert code == 2 and "--attempt-budget 0: must be a positive number of steps" in err
    code, _, err = simulate(None, demo="example-2", attempt_deadline=0.0)
    assert code == 2 and "--attempt-deadline 0.0: must be a positive number of seconds" in err


def test_scheduler_names_flag() -> None:
    objs = [node("a"), pod("p", cpu="1", memory="1Gi", scheduler="my-sched")]
    text = yaml.safe_dump_all(objs)
    assert json.loads(simulate("-", output="json", stdin=text)[1])["bound"] == {}
    doc = json.loads(simulate("-", output="json", stdin=text, scheduler_names="my-sched,other")[1])
    assert doc["bound"] == {"default/p": "a"}


def test_unknown_kinds_are_skipped_with_a_warning() -> None:
    objs = [node("a"), {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "x"}}]
    code, _, err = simulate("-", output="json", stdin=yaml.safe_dump_all(objs))
    assert code == 0
    assert "warning: standard input document 2 (Service x/s): skipped" in err


BAD_POD_QUANTITY = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\n"
    "spec: {containers: [{name: c, resources: {requests: {cpu: 2x}}}]}\n"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [\n", "error: standard input:2:1: not valid YAML"),
        ("- 1\n- 2\n", "not a Kubernetes object"),
        ("apiVersion: v1\nkind: Node\nmetadata: {labels: {}}\n", "metadata.name: Required value"),
        (BAD_POD_QUANTITY, 'spec.containers[0].resources.requests[cpu]: Invalid value: "2x"'),
        ("kind: Node\nmetadata: {name: a}\n---\nkind: Node\nmetadata: {name: a}\n", "Duplicate value"),
        (
            "apiVersion: example.com/v1\nkind: PodGroup\nmetadata: {name: g, namespace: d}\n",
            'apiVersion: Unsupported value: "example.com/v1"',
        ),
        (
            "apiVersion: scheduling.koordinator.sh/v1alpha1\nkind: ClusterNetworkTopology\n"
            "metadata: {name: default}\nspec: {networkTopologySpec: [{topologyLayer: BlockLayer}]}\n",
            'Required value: a layer named "NodeTopologyLayer"',
        ),
        (
            "kind: Node\nmetadata: {name: a}\nstatus: {allocatable: {memory: lots}}\n",
            'status.allocatable[memory]: Invalid value: "lots"',
        ),
    ],
    ids=[
        "yaml",
        "not-objects",
        "no-name",
        "bad-quantity",
        "duplicate",
        "unknown-podgroup-group",
        "bad-cnt",
        "bad-allocatable",
    ],
)
def test_unreadable_scenarios_exit_2_with_a_clear_message(text: str, message: str) -> None:
    code, out, err = simulate("-", output="json", stdin=text)
    assert code == 2 and out == ""
    assert message in err, err
    assert "Traceback" not in err


def test_missing_file_and_bad_flag_combinations_exit_2(tmp_path: Path) -> None:
    assert simulate(str(tmp_path / "nope.yaml"))[0] == 2
    code, _, err = simulate(None, output="json")
    assert code == 2 and "pick one with --demo NAME" in err
    code, _, err = simulate(str(DEMO / "example-1.yaml"), demo="example-1")
    assert code == 2 and "give one of SCENARIO, --demo and --from-cluster" in err
    code, _, err = simulate(str(DEMO / "example-1.yaml"), scheduler_names=" , ")
    assert code == 2 and "--scheduler-names" in err


def test_an_unreachable_cluster_exits_2(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "x",
                "clusters": [
                    {
                        "name": "x",
                        "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True},
                    }
                ],
                "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}],
                "users": [{"name": "x", "user": {"token": "t"}}],
            }
        )
    )
    code, out, err = simulate(None, from_cluster=True, kubeconfig=str(kubeconfig), output="json")
    assert code == 2 and out == ""
    assert err.startswith("error: --from-cluster: ") and "Traceback" not in err


def test_an_lws_and_the_same_job_as_a_pod_group_through_the_command() -> None:
    """Acceptance (issue: Kubernetes' own gang API): `topobridge simulate` of an LWS written with
    `spec.networkTopology` and of the same job written as a PodGroup keyed by the label of that
    tier place it in the same domain."""
    from test_upstream_gangs import LWS, cluster, member, pod_group

    def placed(objs: list[dict[str, Any]]) -> tuple[list[Any], list[str]]:
        code, out, err = simulate(
            "-", output="json", stdin=yaml.safe_dump_all(objs), scheduler_names="topobridge"
        )
        assert code == 0, err
        doc = json.loads(out)
        return list(doc["gangs"].values()), sorted(doc["bound"].values())

    as_lws = placed([*cluster(), LWS])
    as_pod_group = placed(
        [*cluster(), pod_group("trainer", min_count=3), *(member("trainer", i) for i in range(3))]
    )
    assert as_lws[0] == as_pod_group[0] and len(as_lws[0]) == 1
    assert "block-4" in json.dumps(as_lws[0])
    assert len(as_lws[1]) == len(as_pod_group[1]) == 3
