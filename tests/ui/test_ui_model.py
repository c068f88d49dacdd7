"""`topobridge ui`'s view model and what-if (pure): the tree as the page gets it, in levels; the
largest free room per tier; explanations that are `explain`'s; a pasted job's answer, which is
`simulate`'s; a scenario as `simulate` leaves it; bad input as an error naming what is wrong."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from ui_objects import JOB, demo, job, tree_cluster, walk

from controller.placer.scenario import load_scenario, simulate
from topobridge.cmd_explain import explain_objects
from topobridge.ui import model, units, whatif


def test_the_seed_cluster_as_the_page_gets_it() -> None:
    page = model.page(model.build(demo("example-2"), source="example-2.yaml"))
    domains = list(walk(page["tree"]))
    spines = [d["id"] for d in domains if d["tier"] == 2]
    blocks = [d["id"] for d in domains if d["tier"] == 1]
    nodes = [n["name"] for d in domains for n in d.get("nodes", [])]
    assert spines == [f"SpineLayer/spine-{i}" for i in range(3)]
    assert blocks == [f"BlockLayer/block-{i}" for i in range(5)]
    assert sorted(nodes) == sorted(f"node-{i}" for i in range(12))
    assert page["counts"] == {"nodes": 12, "domains": 8, "placed": 0, "pending": 1}
    assert [t["name"] for t in page["tiers"]] == ["node", "BlockLayer", "SpineLayer", "cluster"]
    assert page["tree"]["path"] == [{"id": "cluster", "name": "cluster"}]
    busy = next(n for d in domains for n in d.get("nodes", []) if n["name"] == "node-0")
    assert busy["units"]["free"]["cpu"] == 0 and busy["pods"] == [
        {"name": "default/low-priority-pod-0", "state": "running"}
    ]
    spine0 = next(d for d in domains if d["id"] == "SpineLayer/spine-0")
    assert spine0["units"]["alloc"]["cpu"] == sum(
        n["units"]["alloc"]["cpu"] for d in walk(spine0) for n in d.get("nodes", [])
    )


@pytest.mark.parametrize(
    ("gpus", "order"),
    [
        pytest.param(8, ["nvidia.com/gpu", "cpu", "memory"], id="gpus-first-when-there-are-any"),
        pytest.param(0, ["cpu", "memory"], id="cpu-then-memory-without-gpus"),
    ],
)
def test_the_colour_resource_order(gpus: int, order: list[str]) -> None:
    page = model.page(model.build(tree_cluster((2,), 2, gpus=gpus)))
    assert page["resources"] == order


def test_a_large_tree_travels_in_levels_and_nodes_on_demand() -> None:
    objects = tree_cluster((2, 2, 2, 2), 20)  # 4 tiers, 16 leaves of 20 nodes: 320 nodes
    m = model.build(objects)
    page = model.page(m)
    sent = list(walk(page["tree"]))
    assert page["counts"]["nodes"] == 320
    assert max(d["tier"] for d in sent if d["domains"] is None) == 2  # tier 1 waits for a zoom
    assert {d["tier"] for d in sent} == {5, 4, 3, 2}
    assert not any("nodes" in d for d in sent)
    zoomed = model.subtree(m, "h2-0")
    assert zoomed is not None
    assert [p["id"] for p in zoomed["path"]] == ["cluster", "h4-0", "h3-0", "h2-0"]
    leaves = [d for d in walk(zoomed) if d["tier"] == 1]
    assert [len(d["nodes"]) for d in leaves] == [20, 20]
    assert model.subtree(m, "no-such-domain") is None


def test_the_largest_free_room_per_tier_is_the_fullest_free_domain() -> None:
    m = model.build(demo("example-2"))
    page = model.page(m)
    everything = list(walk(model.subtree(m, "cluster") or {}))
    nodes = [n for d in everything for n in d.get("nodes", [])]
    for row in page["largest"]:
        members = nodes if row["tier"] == 0 else [d for d in everything if d["tier"] == row["tier"]]
        for r, best in row["best"].items():
            most = max(x["units"]["free"][r] for x in members)
            assert best["free"] == most, (row["name"], r)
            assert any(
                x.get("id", x["name"]) == best["domain"] and x["units"]["free"][r] == most for x in members
            )
    blocks = next(row for row in page["largest"] if row["name"] == "BlockLayer")
    assert (blocks["best"]["cpu"]["domain"], blocks["best"]["cpu"]["freeText"]) == (
        "BlockLayer/block-4",
        "24",
    )


def test_an_explanation_is_topobridge_explains() -> None:
    objects = demo("example-2")
    m = model.build(objects)
    key = model.page(m)["pending"]["items"][0]["gang"]
    shown = model.explanation(m, key)
    assert shown is not None
    expected = explain_objects(objects, key)
    assert shown["explanation"] == expected.to_dict()
    assert shown["explanation"]["verdict"]["code"] == "WaitingForVictims"
    assert model.explanation(m, "default/no-such-gang") is None


def test_a_scenario_as_simulate_leaves_it() -> None:
    objects = demo("example-2")
    page = model.page(model.build(whatif.settled(objects)))
    result = simulate(load_scenario(objects)).contract()
    placed = {g["gang"]: g["domain"] for g in page["placed"]["items"]}
    assert result["gangs"]
    for gang, where in result["gangs"].items():
        assert placed[gang] == where["domain"]
    pods = {p["name"] for d in walk(page["tree"]) for n in d.get("nodes", []) for p in n["pods"]}
    assert not pods & set(result["evicted"])
    assert page["pending"]["items"] == [] and page["counts"]["pending"] == 0


@pytest.mark.parametrize(
    ("scenario", "text", "placed", "others"),
    [
        pytest.param("example-1", job(2, "4"), True, [], id="fits-in-one-block"),
        pytest.param(
            "example-2", job(2, "4"), True, ["default/low-priority-pod-5"], id="lands-after-the-waiting-gang"
        ),
        pytest.param("example-1", job(4, "8"), False, [], id="no-block-holds-four-whole-nodes"),
    ],
)
def test_a_what_if_is_simulates_answer(scenario: str, text: str, placed: bool, others: list[str]) -> None:
    objects = demo(scenario)
    answer = whatif.what_if(objects, text)
    assert "error" not in answer, answer
    pasted = [o for o in yaml.safe_load_all(text) if o]
    result = simulate(load_scenario([*objects, *pasted], lenient=True))
    (gang,) = answer["gangs"]
    assert gang["gang"] == "volcano:default/try-me"
    assert gang["placed"] is placed
    assert (answer["evicted"], answer["evictedForOthers"]) == ([], others)
    mine = {f"default/{p['metadata']['name']}" for p in pasted if p["kind"] == "Pod"}
    assert gang["binds"] == {p: n for p, n in result.bound.items() if p in mine}
    if placed:
        assert (gang["domain"], gang["tier"]) == result.gangs["volcano:default/try-me"]
    else:
        assert gang["message"] == result.unschedulable["volcano:default/try-me"]
        assert gang["explanation"]["gang"] == "volcano:default/try-me"
        assert gang["explanation"]["verdict"]["code"] != "Success"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        pytest.param("", "the pasted job: no objects", id="empty"),
        pytest.param("key: [unclosed", "the pasted job:1:15: not valid YAML", id="not-yaml"),
        pytest.param(
            job(1, "lots"),
            'document 2 (Pod default/try-me-0): spec.containers[0].resources.requests[cpu]: Invalid value: "lots"',
            id="bad-quantity",
        ),
        pytest.param(JOB, "makes no pods (PodGroup)", id="a-podgroup-alone"),
        pytest.param(
            job(1, "1").split("---", 1)[1].replace("try-me-0", "low-priority-pod-0"),
            "pod default/low-priority-pod-0: already exists in the cluster",
            id="a-pod-the-cluster-holds",
        ),
        pytest.param("x" * (whatif.MAX_TEXT + 1), "at most 1048576 are read", id="too-long"),
    ],
)
def test_a_bad_what_if_says_what_is_wrong(text: str, says: str) -> None:
    answer = whatif.what_if(demo("example-2"), text)
    assert says in answer["error"]


def test_a_what_if_that_preempts_names_its_victims() -> None:
    classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
        for n, v in (("low", 10), ("high", 1000))
    ]
    busy = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"low-{v}", "namespace": "default"},
            "spec": {
                "nodeName": f"n{v}",
                "priorityClassName": "low",
                "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "8"}}}],
            },
        }
        for v in range(4)
    ]
    objects = [*tree_cluster((2,), 2), *classes, *busy]
    text = job(2, "8").replace("schedulerName: volcano", "schedulerName: volcano\n  priorityClassName: high")
    answer = whatif.what_if(objects, text)
    pasted = [o for o in yaml.safe_load_all(text) if o]
    result = simulate(load_scenario([*objects, *pasted], lenient=True))
    assert answer["gangs"][0]["placed"] is True
    assert answer["evicted"] == sorted(result.evicted) and len(answer["evicted"]) == 2
    assert answer["evictedForOthers"] == []


def _asked(m: model.Model) -> dict[str, Any]:
    """Everything the page can ask of a model: the page, every zoom, both whole lists, and the
    explanation of every pending gang."""
    lists = {w: model.gangs(m, w, limit=model.GANGS_MAX) for w in ("placed", "pending")}
    return {
        "page": model.page(m),
        "zooms": {ident: model.subtree(m, ident) for ident in m.drawn.by_id},
        "lists": lists,
        "explained": {g["gang"]: model.explanation(m, g["gang"]) for g in lists["pending"]["items"]},
    }


def _pod(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == name)


def _node_obj(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "Node" and o["metadata"]["name"] == name)


def _bind(objects: list[dict[str, Any]]) -> model.Change:
    old = _pod(objects, "hp-training-pod-0")
    new = copy.deepcopy(old)
    new["spec"]["nodeName"] = "node-6"
    objects[objects.index(old)] = new
    return old, new


def _delete(objects: list[dict[str, Any]]) -> model.Change:
    old = _pod(objects, "low-priority-pod-5")
    objects.remove(old)
    return old, None


def _add(objects: list[dict[str, Any]]) -> model.Change:
    new = copy.deepcopy(_pod(objects, "low-priority-pod-0"))
    new["metadata"]["name"] = "newcomer"
    new["spec"]["nodeName"] = "node-11"
    objects.append(new)
    return None, new


def _relabel(key: str, value: str) -> Callable[[list[dict[str, Any]]], model.Change]:
    def change(objects: list[dict[str, Any]]) -> model.Change:
        old = _node_obj(objects, "node-9")
        new = copy.deepcopy(old)
        new["metadata"]["labels"][key] = value
        objects[objects.index(old)] = new
        return old, new

    return change


def _podgroup_condition(objects: list[dict[str, Any]]) -> model.Change:
    old = next(o for o in objects if o["kind"] == "PodGroup")
    new = copy.deepcopy(old)
    message = "0/12 nodes are available: a message the scheduler wrote"
    new["status"] = {"conditions": [{"type": "Unschedulable", "status": "True", "message": message}]}
    objects[objects.index(old)] = new
    return old, new


@pytest.mark.parametrize(
    ("steps", "held"),
    [
        pytest.param([_bind], False, id="a-bind"),
        pytest.param([_delete], False, id="a-delete"),
        pytest.param([_add], False, id="a-new-pod"),
        pytest.param([_relabel("team", "blue")], True, id="a-label-no-tree-reads"),
        pytest.param(
            [_relabel("network.topology.nvidia.com/block", "block-3")], False, id="a-topology-label"
        ),
        pytest.param([_podgroup_condition], False, id="a-podgroup-condition"),
        pytest.param(
            [_relabel("team", "blue"), _bind, _delete, _add, _relabel("team", "red"), _podgroup_condition],
            True,
            id="all-in-one-burst",
        ),
    ],
)
def test_an_update_equals_a_rebuild(
    steps: list[Callable[[list[dict[str, Any]]], model.Change]], held: bool
) -> None:
    objects = demo("example-2")
    m = model.build(objects)
    _asked(m)  # the explanations cached before the change are not the ones after it
    changes = [step(objects) for step in steps]
    assert model.update(m, changes)
    assert bool(m.held) is held  # a relabel no tree reads stays out of the scheduler's state...
    assert _asked(m) == _asked(model.build(objects))
    assert not m.held  # ...until an explanation reads the labels


def test_a_pod_of_no_gang_waiting_shows_its_new_message() -> None:
    """A pending pod of no gang is a gang made afresh whenever it is read: its rows are kept
    while its member is the one read from the same pod, and made again when its pod changes."""
    objects = demo("example-2")
    loner = copy.deepcopy(_pod(objects, "low-priority-pod-0"))
    loner["metadata"]["name"] = "loner"
    loner["spec"].pop("nodeName", None)
    objects.append(loner)
    m = model.build(objects)
    _asked(m)
    assert model.update(m, [_bind(objects)])  # another gang changed: the loner's rows are kept
    new = copy.deepcopy(loner)
    message = "0/12 nodes are available: a message for the loner"
    new["status"] = {"conditions": [{"type": "PodScheduled", "status": "False", "message": message}]}
    objects[objects.index(loner)] = new
    assert model.update(m, [(loner, new)])
    asked = _asked(m)
    assert asked == _asked(model.build(objects))
    assert any(g["reason"] == message for g in asked["lists"]["pending"]["items"])


def _move_node(objects: list[dict[str, Any]], rng: random.Random) -> model.Change:
    """One node's block or spine label set to another domain's value, a new one, or removed."""
    old = _node_obj(objects, f"node-{rng.randrange(12)}")
    new = copy.deepcopy(old)
    tier = rng.choice(("block", "spine"))
    value = rng.choice([*(f"{tier}-{i}" for i in range(6)), None])
    labels = new["metadata"]["labels"]
    if value is None:
        labels.pop(f"network.topology.nvidia.com/{tier}", None)
    else:
        labels[f"network.topology.nvidia.com/{tier}"] = value
    objects[objects.index(old)] = new
    return old, new


def test_nodes_moved_between_domains_one_at_a_time_equal_a_rebuild() -> None:
    """Random single-node topology-label changes, each applied to the same model: after each,
    everything the page can ask is what a model built from scratch answers."""
    rng = random.Random(36)
    objects = demo("example-2")
    for i, node in ((0, "node-3"), (1, "node-4")):  # placed in block-1, two members still pending
        _pod(objects, f"hp-training-pod-{i}")["spec"]["nodeName"] = node
    m = model.build(objects)
    places = set()
    moved = in_place = 0
    counts = set()
    for _ in range(25):
        change = _move_node(objects, rng)
        before = m.view.snapshot
        assert model.update(m, [change])
        assert not m.held  # a label a topology source reads goes to the scheduler at once
        assert _asked(m) == _asked(model.build(objects))
        moved += change[0] != change[1]
        in_place += m.view.snapshot is before
        places.update(g["domain"] for g in model.gangs(m, "placed")["items"])
        counts.add(m.index.n_domains)
    assert moved > 15
    assert len(places) > 2  # the placed gang's domain moved with its nodes
    assert in_place > 3  # nodes that stay in the tree move in it, without a new tree
    assert len(counts) > 2  # domains emptied and made


def test_a_node_gone_and_back_warns_of_its_pods_as_a_rebuild_does() -> None:
    objects = demo("example-2")
    m = model.build(objects)
    gone = _node_obj(objects, "node-1")
    objects.remove(gone)
    assert model.update(m, [(gone, None)])
    assert any("bound to node node-1" in w for w in model.page(m)["warnings"])
    assert _asked(m) == _asked(model.build(objects))
    objects.append(gone)
    assert model.update(m, [(None, gone)])
    assert not any("bound to node node-1" in w for w in model.page(m)["warnings"])
    assert _asked(m) == _asked(model.build(objects))


def test_what_an_update_cannot_apply_is_left_to_a_rebuild() -> None:
    objects = demo("example-2")
    m = model.build(objects)
    bad = copy.deepcopy(_pod(objects, "low-priority-pod-0"))
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    assert not model.update(m, [(_pod(objects, "low-priority-pod-0"), bad)])
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": {"name": "x"}}
    assert not model.update(m, [(None, lws)])
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"}}
    assert not model.update(m, [(None, job)])
    owned = copy.deepcopy(_pod(objects, "low-priority-pod-0"))
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u"}
    ]
    assert not model.update(m, [(_pod(objects, "low-priority-pod-0"), owned)])
    assert _asked(m) == _asked(model.build(objects))  # nothing half-applied


@pytest.mark.parametrize(
    ("resource", "free", "alloc", "shown"),
    [
        pytest.param("memory", 27008 * 2**30, 32 * 2**40, ("26.4Ti", "32Ti"), id="memory-in-one-unit"),
        pytest.param("memory", 1536 * 2**20, 32 * 2**30, ("1.5Gi", "32Gi"), id="memory-below-a-unit"),
        pytest.param("cpu", 36_108_000, 80_000_000, ("36,108", "80,000"), id="cores-grouped"),
        pytest.param("cpu", 250, 8000, ("0.25", "8"), id="millicores-as-cores"),
        pytest.param("nvidia.com/gpu", 1234, 8000, ("1,234", "8,000"), id="gpus-grouped"),
        pytest.param("memory", 0, 0, ("0", "0"), id="none"),
    ],
)
def test_figures_read_in_one_unit_per_pair(
    resource: str, free: int, alloc: int, shown: tuple[str, str]
) -> None:
    assert units.pair(resource, free, alloc) == shown


def test_a_long_reason_is_cut_in_the_list_and_whole_in_the_explanation() -> None:
    objects = demo("example-2")
    pod = _pod(objects, "hp-training-pod-0")
    long = "no room: " + "x" * 5000
    pod["status"] = {"conditions": [{"type": "PodScheduled", "status": "False", "message": long}]}
    m = model.build(objects)
    (item,) = model.gangs(m, "pending")["items"]
    assert item["reasonLength"] == len(long) and len(item["reason"]) == model.REASON_SHOWN + 1
    assert model.gangs(m, "pending", query="NO ROOM")["matched"] == 1
    assert model.gangs(m, "pending", query="elsewhere")["matched"] == 0


def test_a_what_if_tells_its_progress_step_by_step() -> None:
    steps: list[str] = []

    class Recorded(whatif.Progress):
        def step(self, text: str) -> None:
            steps.append(text)
            super().step(text)

    progress = Recorded()
    assert not progress.to_dict()["running"]
    answer = whatif.what_if(demo("example-1"), job(4, "8"), progress=progress)
    assert answer["gangs"][0]["placed"] is False
    assert steps[0] == "reading the job"
    assert steps[1].startswith("reading the cluster's ") and steps[1].endswith("with the job's 5")
    assert steps[2].startswith("running the scheduling cycle to quiescence (")
    assert steps[3] == "explaining why volcano:default/try-me would wait"
    assert progress.to_dict()["running"] and progress.to_dict()["step"] == steps[-1]
    progress.done()
    assert progress.to_dict() == {"running": False, "step": steps[-1], "seconds": 0}
