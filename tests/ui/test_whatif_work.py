"""The what-if's work grows with the pasted job's gangs, never with their square.

A batch/v1 Job of lone pods is one gang per pod; every pod left unplaced is explained on the
first cycle's snapshot. Looking each one up among every gang, and counting the disruption
budgets afresh for each, made a 10,000-pod job take 52 s where `simulate` alone took 2.8 s.
These tests count the work (calls), not the time.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from controller.placer import budgets as budgets_mod
from tests.ui.ui_objects import node
from topobridge.ui import whatif

Obj = dict[str, Any]


def _indexed_job(pods: int) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "lone", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "parallelism": pods,
            "completions": pods,
            "template": {
                "spec": {
                    "schedulerName": "topobridge",
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                }
            },
        },
    }


def test_unplaced_lone_pods_are_each_explained_with_budgets_counted_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = [node(f"n{i}", {"network.topology.nvidia.com/block": "b0"}, cpu="4") for i in range(2)]
    counted: list[int] = []
    real = budgets_mod.budgets_from

    def counting(*args: Any, **kwargs: Any) -> Any:
        counted.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(budgets_mod, "budgets_from", counting)
    monkeypatch.setattr(whatif, "budgets_from", counting, raising=False)
    answer = whatif.what_if(cluster, json.dumps(_indexed_job(12)))

    gangs = answer["gangs"]
    assert len(gangs) == 12
    placed = [g for g in gangs if g["placed"]]
    unplaced = [g for g in gangs if not g["placed"]]
    assert len(placed) == 8  # two nodes of 4 CPUs, one CPU a pod
    assert len(unplaced) == 4
    for g in unplaced:
        assert g["explanation"]["gang"] == g["gang"]
        assert g["text"].startswith(f"gang {g['gang']}:"), g["text"]
    assert len(counted) == 1


def test_a_job_of_many_waiting_gangs_explains_the_first_in_queue_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each explanation is an attempt and its suggestions' checks: past `MAX_EXPLAINED` waiting
    gangs the others carry the run's message, and a warning says so (the what-if stays within
    what the run itself costs, whatever the job's size)."""
    from topobridge import cmd_explain

    cluster = [node(f"n{i}", {"network.topology.nvidia.com/block": "b0"}, cpu="4") for i in range(2)]
    judged: list[str] = []
    real = cmd_explain.judge

    def counting(sc: Any, prep: Any, gang: Any, served: Any) -> Any:
        judged.append(gang.key)
        return real(sc, prep, gang, served)

    monkeypatch.setattr(cmd_explain, "judge", counting)
    answer = whatif.what_if(cluster, json.dumps(_indexed_job(40)))

    unplaced = [g for g in answer["gangs"] if not g["placed"]]
    assert len(unplaced) == 32  # eight fit
    assert len(judged) == whatif.MAX_EXPLAINED == 20
    explained = [g for g in unplaced if "explanation" in g]
    assert [g["gang"] for g in explained] == judged  # the first in queue order (index order here)
    assert [int(k.split("lone-", 1)[1].split("-", 1)[0]) for k in judged] == list(range(8, 28))
    assert all(g["message"] for g in unplaced)  # the others still say why, in the run's words
    assert any(
        "32 of its gangs would wait; the first 20 in queue order are explained" in w
        for w in answer["warnings"]
    )
