"""A Volcano Job of many tasks is judged reading each distinct task template once.

The largest Job the API server stores (1.5 MB, about 8,000 tasks) took 163-296 ms to review,
most of it reading the same template as a model 8,000 times. `webhooks.rules.volcano_job.parse`
reads a template shared by many tasks once; these tests hold that it does, and that the
verdict, every error and the parsed Job are the same as reading the Job whole
(the time: benchmarks/admission_bounds.py).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from translations import volcano_job as vj
from translations.core import PodTemplateSpec
from translations.volcano_job import VolcanoJob
from webhooks.rules import ClusterState, registry
from webhooks.rules import volcano_job as rule
from webhooks.rules._common import parse_strict

Obj = dict[str, Any]
TASKS = 200


def _template(role: str = "worker") -> Obj:
    return {
        "metadata": {"labels": {"role": role}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "train:v1",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                }
            ]
        },
    }


def _job(tasks: int = TASKS, roles: int = 3) -> Obj:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {
            "minAvailable": tasks,
            "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            "tasks": [
                {"name": f"t{i}", "replicas": 1, "template": _template(f"r{i % roles}")} for i in range(tasks)
            ],
        },
    }


def _count(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    calls: list[Any] = []
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_tasks_of_one_template_share_one_model_and_one_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    requests = _count(monkeypatch, vj, "effective_requests")
    job, errors = rule.parse(_job())
    assert errors == []
    assert job is not None
    tasks = job.spec.tasks or []
    assert len(tasks) == TASKS
    assert tasks[0].template is tasks[3].template
    assert tasks[0].template is not tasks[1].template
    decision = registry.validate_object(_job(), ClusterState.build())[1]
    assert decision.allowed
    assert len(requests) == 3  # one per distinct template, not one per task


def test_the_shared_reading_is_the_whole_reading() -> None:
    lean, _ = rule.parse(_job())
    whole = VolcanoJob.parse(_job(), strict=True, keep_unknown=False)
    assert lean is not None
    assert lean.model_dump() == whole.model_dump()


def _variants() -> list[tuple[str, Obj]]:
    out: list[tuple[str, Obj]] = []
    as_int = _job()  # `1` where a boolean goes equals `True` in Python: it is still refused
    as_int["spec"]["tasks"][150]["template"]["spec"]["containers"][0]["tty"] = 1
    as_true = copy.deepcopy(as_int)
    as_true["spec"]["tasks"][3]["template"]["spec"]["containers"][0]["tty"] = True
    out += [("tty 1 beside tty true", as_true), ("tty 1", as_int)]
    quantity = _job()
    for i in (5, 8, 199):  # one distinct template, three tasks: three errors, each at its task
        quantity["spec"]["tasks"][i]["template"] = _template("bad")
        quantity["spec"]["tasks"][i]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = (
            "1x"
        )
    out.append(("bad quantity", quantity))
    wrong_type = _job()
    wrong_type["spec"]["tasks"][7]["replicas"] = "1"
    out.append(("replicas a string", wrong_type))
    huge = _job()
    huge["spec"]["tasks"][9]["template"]["metadata"]["labels"] = {"n": 2**70}
    out.append(("integer past 64 bits", huge))
    varied = _job(roles=TASKS)  # every template distinct: read whole
    varied["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "-1"
    out.append(("varied", varied))
    nulls = _job()
    nulls["spec"]["tasks"][4]["template"] = None
    nulls["spec"]["tasks"][6] = "not a task"
    out.append(("null template, task not an object", nulls))
    short = _job(tasks=rule.SHARED_TEMPLATES_FROM - 1)
    short["spec"]["tasks"][1]["template"]["spec"]["containers"][0]["tty"] = 1
    out.append(("few tasks", short))
    return out


@pytest.mark.parametrize(("what", "obj"), _variants(), ids=[w for w, _ in _variants()])
def test_every_verdict_and_error_is_the_whole_readings(what: str, obj: Obj) -> None:
    lean_job, lean_errors = rule.parse(copy.deepcopy(obj))
    whole_job, whole_errors = parse_strict(VolcanoJob, copy.deepcopy(obj))
    assert [str(e) for e in lean_errors] == [str(e) for e in whole_errors], what
    assert (lean_job is None) == (whole_job is None)
    if lean_job is not None and whole_job is not None:
        assert lean_job.model_dump() == whole_job.model_dump()
        lean_problems = vj.job_problems(lean_job.spec)
        whole_problems = vj.job_problems(whole_job.spec)  # the same, at every task, in order
        assert [str(p) for p in lean_problems] == [str(p) for p in whole_problems], what


def test_a_template_read_once_still_refuses_at_every_task() -> None:
    obj = dict(_variants())["bad quantity"]
    decision = registry.validate_object(obj, ClusterState.build())[1]
    assert not decision.allowed
    text = str(decision)
    for i in (5, 8, 199):
        assert f"spec.tasks[{i}].template.spec.containers[0].resources.requests[cpu]" in text, text


def test_a_shared_template_is_one_podtemplatespec() -> None:
    job, _ = rule.parse(_job())
    assert job is not None
    assert isinstance((job.spec.tasks or [])[0].template, PodTemplateSpec)
