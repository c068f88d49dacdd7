"""Simulating an expanded Job costs a fixed amount of work per pod, counted here in calls.

An Indexed Job at the documented cap (100,000 pods) took 104.6 s: each pod's labels were
rendered for error messages nobody read, each pod was keyed to its gang twice (once when put,
once more when its Job was put after it), and the Job's own annotations were read again for
every one of its pods. The time is measured in benchmarks/simulate_expansion.py; these tests
count the work, so they hold on any machine.
"""

from __future__ import annotations

from typing import Any

import pytest
from placer_objects import counting

from controller.placer import cluster as cluster_mod
from controller.placer import scenario as scenario_mod
from controller.placer.scenario import _put_pod, cluster_state, load_scenario, simulate
from translations import compact as compact_mod
from translations import envelope, expand, gangs, gpu
from translations.compact import SharedNames
from translations.errors import go_quote

Obj = dict[str, Any]
PODS = 6


def _scenario(pods: int = PODS) -> list[Obj]:
    alloc = {"cpu": "8", "memory": "8Gi", "pods": "110"}
    nodes: list[Obj] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}", "block": "b0"}},
            "status": {"allocatable": alloc, "capacity": alloc},
        }
        for i in range(2)
    ]
    job: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "parallelism": pods,
            "completions": pods,
            "template": {
                "metadata": {"annotations": {"kueue.x-k8s.io/podset-preferred-topology": "block"}},
                "spec": {
                    "schedulerName": "topobridge",
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                },
            },
        },
    }
    priority: Obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "p"},
        "value": 10,
    }
    return [*nodes, job, priority]


def test_the_expanded_job_is_one_gang_placed_whole() -> None:
    result = simulate(load_scenario(_scenario()))
    assert len(result.bound) == PODS
    assert result.gangs == {"job:default/big": ("n0", 0)}


def test_each_pod_is_keyed_to_its_gang_once_when_the_state_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = load_scenario(_scenario())
    calls = counting(monkeypatch, cluster_mod, "membership")
    state = cluster_state(sc)
    assert len(calls) == PODS  # the Job and the PriorityClass are put before the pods
    assert {g.key for g in state.view().gangs.values()} == {"job:default/big"}


def test_a_label_the_job_gives_every_pod_is_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counting(monkeypatch, expand, "label_key_problems")
    sc = load_scenario(_scenario())
    labels = {k for p in sc.pods for k in (p.metadata.labels or {})}
    values = {(k, v) for p in sc.pods for k, v in (p.metadata.labels or {}).items()}
    assert len(labels) == 5 and len(values) == 4 + PODS
    assert len(calls) == len(labels)  # each key once: the index's too, though its values differ


def test_an_expanded_pod_with_a_bad_label_is_still_refused() -> None:
    objects = _scenario()
    objects[2]["spec"]["template"]["metadata"]["labels"] = {"bad key": "v"}
    with pytest.raises(Exception, match=r"metadata\.labels: Invalid value: \"bad key\""):
        load_scenario(objects)


def test_a_jobs_annotations_are_read_once_for_all_its_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = load_scenario(_scenario())
    job = sc.podgroups.jobs[0]
    calls = counting(monkeypatch, gpu, "read_request")
    for pod in sc.pods:
        assert gpu.pod_request(pod, job) == (None, [])
    job_layers = [c for c in calls if c[0][0][0] == gpu.JOB_LAYERS[0] and len(c[0]) == 2]
    assert len(job_layers) == 1


@pytest.mark.parametrize(
    "text", ["", "plain", 'a "quote"', "back\\slash", "tab\there", "é", "\x7f", "\u2028"]
)
def test_go_quote_keeps_go_strconv_quote(text: str) -> None:
    slow = '"' + "".join(go_quote(ch)[1:-1] for ch in text) + '"'
    assert go_quote(text) == slow


def test_valid_labels_render_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counting(monkeypatch, envelope, "render_value")
    assert envelope.label_key_problems("example.com/name", path="p") == []
    assert envelope.label_value_problems("value", path="p") == []
    assert calls == []


def test_binding_an_expanded_gang_reads_none_of_its_pods_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bind changes only the pod's node: it stays keyed to its gang, and its member is the
    one read when it was pending, on its node (what reading it afresh makes)."""
    sc = load_scenario(_scenario())
    state = cluster_state(sc)
    state.view()
    keyed = counting(monkeypatch, cluster_mod, "membership")
    read = counting(monkeypatch, cluster_mod, "safe_gang_pod")
    for i, key in enumerate(sorted(state.pods)):
        _put_pod(state, key, node_name=f"n{i % 2}")
    assert keyed == [] and read == []
    for pod in state.pods.values():
        kept = state._member(pod)[0]
        fresh = gangs.gang_pod(pod, state.priority_classes)[0]
        assert kept == fresh and kept.order == fresh.order and kept.pod is pod
    view = state.view()
    assert view.pending == [] and len(view.snapshot.pods) == PODS


def test_pods_alike_share_requests_and_shape_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = load_scenario(_scenario())
    reads = counting(monkeypatch, gangs, "effective_requests")
    shapes = counting(monkeypatch, gangs, "placement_shape")
    members = [gangs.gang_pod(p, {})[0] for p in sc.pods]
    assert len(reads) == len(shapes) == 1
    assert all(m.requests == members[0].requests and m.shape == members[0].shape for m in members)
    assert len({id(m.requests) for m in members}) == 1  # one read-only dict, shared
    other = sc.pods[0].replaced(spec=sc.pods[0].spec.replaced(containers=[]))
    assert gangs.gang_pod(other, {})[0].requests == {"pods": 1}
    assert len(reads) == len(shapes) == 2


def test_a_gang_bound_whole_is_not_discovered_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery reads each pod once, pending; the gang bound whole is made again from its
    members on their nodes (`ClusterState._bound_again`), not discovered pod by pod again."""
    sc = load_scenario(_scenario())
    calls = counting(monkeypatch, cluster_mod, "discover_gangs")
    result = simulate(sc)
    assert len(result.bound) == PODS
    assert [len(c[0]) for c in calls] == [PODS]


def test_a_bad_label_value_is_refused_under_every_key_it_is_found_with() -> None:
    objects = _scenario()
    objects[2]["spec"]["template"]["metadata"]["labels"] = {"a": "bad value", "b": "bad value"}
    with pytest.raises(Exception, match=r"labels\[a\].*labels\[b\]"):
        load_scenario(objects)


def test_discovery_drafts_a_gang_once_not_once_per_member(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = load_scenario(_scenario())
    drafts = counting(monkeypatch, gangs, "_Draft")
    found = gangs.discover_gangs(sc.pods, podgroups=gangs.PodGroups(jobs=sc.podgroups.jobs))
    assert [len(g.pods) for g in found] == [PODS]
    assert len(drafts) == 1


def test_the_requests_of_a_jobs_pods_are_read_once_when_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = counting(monkeypatch, scenario_mod, "effective_requests")
    assert len(load_scenario(_scenario()).pods) == PODS
    assert len(reads) == 1  # the template's parts, shared by every pod


def test_an_expanded_pod_with_a_bad_request_is_still_refused() -> None:
    objects = _scenario()
    objects[2]["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    with pytest.raises(Exception, match="lots"):
        load_scenario(objects)


def test_a_pod_bound_is_stored_compacted_by_its_own_two_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bind replaces the pod and its spec and nothing else: only those two have their
    bookkeeping shared; the rest is the pending pod's, compacted when it was stored."""
    state = cluster_state(load_scenario(_scenario()))
    state.view()
    key = sorted(state.pods)[0]
    pending = state.pods[key]
    shared = counting(monkeypatch, compact_mod, "_share")
    _put_pod(state, key, node_name="n0")
    pod = state.pods[key]
    assert len(shared) == 2 and shared[0][0] is pod and shared[1][0] is pod.spec
    assert type(pod.spec.__pydantic_fields_set__) is SharedNames
    assert pod.metadata is pending.metadata and pod.spec.containers is pending.spec.containers
