"""`parse_pods` reads an expansion's pods exactly as `Pod.parse` reads each one, parsing each
template once: the models are equal field by field (what was set, unknown fields and their
order included) and dump the same, and a pod that differs in anything but its per-pod fields
is parsed on its own, bad input refused as `Pod.parse` refuses it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from translations import expand as ex
from translations.core import Job, Pod, PodSpec
from translations.errors import InvalidSpecError
from translations.lws import LeaderWorkerSet
from translations.volcano_job import VolcanoJob

JsonDict = dict[str, Any]
FIXTURES = Path(__file__).resolve().parent / "expand_fixtures"


def fixture(name: str) -> JsonDict:
    loaded = yaml.safe_load((FIXTURES / name).read_text())
    assert isinstance(loaded, dict)
    return loaded


def indexed_job(pods: int = 6) -> Job:
    return Job.parse(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "big", "namespace": "ml"},
            "spec": {
                "completionMode": "Indexed",
                "parallelism": pods,
                "completions": pods,
                "template": {
                    "metadata": {"annotations": {"kueue.x-k8s.io/podset-preferred-topology": "block"}},
                    "spec": {
                        "restartPolicy": "Never",
                        "tolerations": [{"key": "gpu", "operator": "Exists"}],
                        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                    },
                },
            },
        }
    )


EXPANSIONS = {
    "indexed-job": lambda: ex.expand(indexed_job()),
    "kueue-job": lambda: ex.expand(Job.parse(fixture("kueue-job-required.yaml"))),
    "volcano-job": lambda: ex.expand(VolcanoJob.parse(fixture("volcano-job-ps-worker.yaml"))),
    "lws-exclusive": lambda: ex.expand(LeaderWorkerSet.parse(fixture("lws-exclusive.yaml"))),
    "lws-subgroups": lambda: ex.expand(LeaderWorkerSet.parse(fixture("lws-multi-template-subgroups.yaml"))),
}


def same_model(a: Any, b: Any, where: str = "pod") -> None:
    """Equal as `==` sees them, and in what `==` does not look at: the fields set, the
    unknown fields' order, the type of every part."""
    assert type(a) is type(b), where
    if isinstance(a, BaseModel):
        assert a.__pydantic_fields_set__ == b.__pydantic_fields_set__, where
        assert list(a.__pydantic_extra__ or {}) == list(b.__pydantic_extra__ or {}), where
        assert list(a.__dict__) == list(b.__dict__), where
        for k in a.__dict__:
            same_model(a.__dict__[k], b.__dict__[k], f"{where}.{k}")
        for k, v in (a.__pydantic_extra__ or {}).items():
            same_model(v, (b.__pydantic_extra__ or {})[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same_model(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            same_model(a[k], b[k], f"{where}[{k}]")
    else:
        assert a == b, where


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[JsonDict]:
    """Every raw pod `Pod.parse` is called on from here on."""
    calls: list[JsonDict] = []
    real = Pod.parse.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Pod], raw: Any, **kw: Any) -> Pod:
        calls.append(raw)
        parsed: Pod = real(cls, raw, **kw)
        return parsed

    monkeypatch.setattr(Pod, "parse", classmethod(counted))
    return calls


@pytest.mark.parametrize("name", sorted(EXPANSIONS))
def test_parse_pods_is_pod_parse_of_each(name: str) -> None:
    raws = EXPANSIONS[name]().pods
    fast = ex.parse_pods(raws)
    assert len(fast) == len(raws)
    for model, raw in zip(fast, raws, strict=True):
        same_model(model, Pod.parse(raw), raw["metadata"]["name"])
        assert model.to_dict() == Pod.parse(raw).to_dict()


@pytest.mark.parametrize(("name", "parsed"), [("indexed-job", 1), ("volcano-job", 2), ("lws-exclusive", 3)])
def test_each_template_is_parsed_once(name: str, parsed: int, parses: list[JsonDict]) -> None:
    raws = EXPANSIONS[name]().pods
    ex.parse_pods(raws)
    assert len(parses) == parsed < len(raws)


def test_pods_of_one_template_share_what_they_do_not_own() -> None:
    first, second = ex.parse_pods(ex.expand(indexed_job()).pods)[:2]
    assert first.spec is not second.spec  # each has its hostname
    assert first.spec.__pydantic_extra__ == {"restartPolicy": "Never", "hostname": "big-0"}
    assert second.spec.__pydantic_extra__ == {"restartPolicy": "Never", "hostname": "big-1"}
    assert first.spec.containers is second.spec.containers
    assert first.spec.tolerations is second.spec.tolerations
    assert first.metadata.labels is not second.metadata.labels
    assert first.metadata.owner_references is second.metadata.owner_references


def test_a_pod_unlike_the_last_is_parsed_on_its_own(parses: list[JsonDict]) -> None:
    raws = [copy.deepcopy(raw) for raw in ex.expand(indexed_job()).pods]  # nothing shared
    raws[2]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    raws[4]["metadata"]["generateName"] = "other-"
    models = ex.parse_pods(raws)
    assert [r["metadata"]["name"] for r in parses] == [raws[i]["metadata"]["name"] for i in (0, 2, 3, 4, 5)]
    for model, raw in zip(models, raws, strict=True):
        same_model(model, Pod.parse(raw))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("metadata", "labels"), {"a": 1}),
        (("metadata", "annotations"), "not a map"),
        (("metadata", "name"), 7),
    ],
)
def test_a_per_pod_field_parsing_would_convert_or_refuse_is_parsed(path: tuple[str, str], value: Any) -> None:
    raws = [copy.deepcopy(raw) for raw in ex.expand(indexed_job()).pods]  # nothing shared
    raws[1][path[0]][path[1]] = value
    try:
        expected: Pod | InvalidSpecError = Pod.parse(raws[1])
    except InvalidSpecError as exc:
        expected = exc
    if isinstance(expected, InvalidSpecError):
        with pytest.raises(InvalidSpecError) as raised:
            ex.parse_pods(raws)
        assert str(raised.value) == str(expected)
    else:
        same_model(ex.parse_pods(raws)[1], expected)


def test_replaced_is_model_copy_with_an_update() -> None:
    pod = ex.parse_pods(ex.expand(indexed_job()).pods)[0]
    for model, update in [
        (pod.spec, {"node_name": "n1"}),
        (pod.spec, {"hostname": "h", "subdomain": "s"}),
        (pod.metadata, {"deletion_timestamp": "1970-01-01T00:00:00Z", "labels": {"a": "b"}}),
        (pod, {"spec": pod.spec, "status": None}),
    ]:
        copied = model.replaced(**update)
        same_model(copied, model.model_copy(update=update))
        assert copied is not model and copied.__dict__ is not model.__dict__
    assert pod.spec.node_name is None  # the original is untouched


def test_per_pod_spec_fields_are_kept_as_given() -> None:
    """A per-pod spec field is copied unvalidated: PodSpec must not model (convert) it."""
    assert not set(ex.PER_POD_SPEC) & set(PodSpec.model_fields)
