"""`explain` is the cycle's own answer for the whole cluster state: the gangs ahead of a gang in
the queue take their room first, a gate or an unserved schedulerName holds it before any
attempt, an elastic gang placed in part says where its first members land and why the others
wait, a preemption is shown as it stands before anything is evicted, a gang is found by the
name of the object owning its pods, and suggestions speak the gang's own dialect, each checked.

Each case is one that judging a gang alone on the snapshot got wrong (it said `Success`)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from placer_objects import Obj, demo_objects, koord_gang, members, pod, spine_block_nodes, volcano_gang

from controller.placer.explain import NOT_SERVED, QUEUE, Explanation, render
from controller.placer.scenario import DEFAULT_SCHEDULERS, load_scenario, prepare, simulate
from topobridge import cmd_explain
from topobridge.inputs import Snapshot

LAYOUT = {"spine-0": {"block-0": ["n0", "n1"], "block-1": ["n2", "n3"]}, "spine-1": {"block-2": ["n4", "n5"]}}
LWS = Path(__file__).resolve().parents[2] / "dialect_fixtures" / "valid" / "lws-volcano-network-topology.yaml"


def _explained(objects: list[Obj], wanted: str) -> list[Explanation]:
    sc = load_scenario(objects, lenient=True)
    return cmd_explain.explain_all(sc, prepare(sc), wanted, served=DEFAULT_SCHEDULERS)


def _one(objects: list[Obj], wanted: str) -> Explanation:
    (e,) = _explained(objects, wanted)
    return e


def test_a_gang_queued_behind_one_that_takes_the_room_waits() -> None:
    objects = [*spine_block_nodes(LAYOUT), koord_gang("a-first", 4), koord_gang("b-second", 4)]
    objects += members("a-first", 4, cpu="6") + members("b-second", 4, cpu="6")
    e = _one(objects, "b-second")
    assert e.code != "Success" and e.step == "PostFilter"
    assert e.ahead == ("koordinator:default/a-first placed in spine/spine-0",)
    assert (
        "ahead of it in the queue this cycle:\n  koordinator:default/a-first placed in spine/spine-0"
        in render(e)
    )
    assert "koordinator:default/b-second" in simulate(load_scenario(objects)).unschedulable


def test_a_pod_naming_a_scheduler_not_served_is_not_queued_and_says_schedulername() -> None:
    objects = [*spine_block_nodes(LAYOUT), pod("elsewhere", cpu="1", scheduler="default-scheduler")]
    e = _one(objects, "elsewhere")
    assert (e.code, e.step) == (NOT_SERVED, QUEUE)
    assert 'schedulerName "default-scheduler"' in e.message
    assert "koord-scheduler, topobridge, volcano" in e.message


def test_a_gated_pod_is_held_at_pre_enqueue() -> None:
    gated = pod("gated", cpu="1", scheduler="topobridge")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    e = _one([*spine_block_nodes(LAYOUT), gated], "gated")
    assert (e.code, e.step) == ("Unresolvable", "PreEnqueue")
    assert "example.com/quota" in e.message


def test_an_elastic_gang_placed_in_part_says_where_and_why_the_rest_wait() -> None:
    objects = [
        *spine_block_nodes(LAYOUT),
        volcano_gang("elastic", 2),
        *members("elastic", 8, dialect="volcano"),
    ]
    e = _one(objects, "elastic")
    assert e.lands is not None and len(e.lands.pods) == 6  # six nodes of 8 CPU, one 8-CPU pod each
    assert (e.code, e.pending) != ("Success", 8) and e.code != "Success"
    assert e.pending == 2
    text = render(e)
    assert "its other 2 pending pod(s) wait:" in text and text.index("lands in") < text.index("verdict:")


def test_a_preemption_is_shown_before_anything_is_evicted() -> None:
    e = _one(demo_objects("example-2"), "high-priority-training")
    assert (e.code, e.step, e.plugin) == ("WaitingForVictims", "PostFilter", "DefaultPreemption")
    assert "terminating" not in e.message and "nominated" not in e.message
    assert e.preemption is not None and [v.pod for v in e.preemption.victims] == [
        "default/low-priority-pod-5"
    ]


def test_a_gang_that_fits_says_where_it_lands() -> None:
    objects = [
        *spine_block_nodes(LAYOUT),
        volcano_gang("fits", 2),
        *members("fits", 2, dialect="volcano", cpu="6"),
    ]
    e = _one(objects, "fits")
    assert e.placed and e.lands is not None
    got = simulate(load_scenario(objects))
    assert dict(e.lands.pods) == {p: got.bound[p] for p, _ in e.lands.pods}
    assert got.gangs["volcano:default/fits"] == (e.lands.domain, e.lands.tier)


def test_an_lws_is_found_by_its_name_and_by_name_and_group_index(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(spine_block_nodes(LAYOUT)))
    both = _cli(tmp_path, ["-f", str(cluster), "-f", str(LWS)])
    assert [e["gang"].rsplit("-", 1)[0] for e in both] == [
        "volcano:default/lws-sample-volcano-0",
        "volcano:default/lws-sample-volcano-1",
    ]
    (group,) = _cli(tmp_path, ["lws-sample-volcano-1", "-f", str(cluster), "-f", str(LWS)])
    assert group["gang"].startswith("volcano:default/lws-sample-volcano-1-")


def _cli(tmp_path: Path, argv: list[str]) -> list[dict[str, Any]]:
    from topobridge import cli

    out, err = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["explain", "-o", "json", *argv])
    assert (code, err.getvalue()) == (0, "")
    doc = json.loads(out.getvalue())
    return doc if isinstance(doc, list) else [doc]


def _job(name: str, parallelism: int, cpu: str) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "completionMode": "Indexed",
            "template": {
                "metadata": {
                    "annotations": {
                        "kueue.x-k8s.io/podset-required-topology": "network.topology.nvidia.com/block"
                    }
                },
                "spec": {
                    "schedulerName": "topobridge",
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
                },
            },
        },
    }


def test_a_jobs_suggestion_is_its_parallelism_and_is_checked() -> None:
    nodes = spine_block_nodes(LAYOUT)
    objects = [*nodes, _job("trainer", 3, "6")]
    (e,) = _explained(objects, "trainer")
    assert e.code != "Success"
    counts = [s for s in e.suggestions if "parallelism" in s]
    assert counts == [
        f"Job trainer: spec.parallelism: 2 would start 2 pod(s) now, in {counts[0].rsplit(' ', 1)[1]}"
    ]
    assert not any("minMember" in s for s in e.suggestions)
    smaller = [*nodes, _job("trainer", 2, "6")]
    assert _one(smaller, "trainer").placed  # the suggestion comes true


def test_a_volcano_podgroups_suggestions_are_checked_by_the_runner() -> None:
    objects = [*spine_block_nodes(LAYOUT), volcano_gang("wide", 3, mode="hard", tier=1)]
    objects += members("wide", 3, dialect="volcano", cpu="6")
    e = _one(objects, "wide")
    assert "PodGroup wide: spec.minMember: 2 would start 2 pod(s) now, in block/block-2" in e.suggestions
    shrunk = [*spine_block_nodes(LAYOUT), volcano_gang("wide", 2, mode="hard", tier=1)]
    shrunk += members("wide", 3, dialect="volcano", cpu="6")
    got = _one(shrunk, "wide")
    assert got.lands is not None and (got.lands.domain, len(got.lands.pods)) == ("block/block-2", 2)


def test_files_without_nodes_are_explained_with_a_warning_naming_from_cluster(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(spine_block_nodes(LAYOUT)))
    job = tmp_path / "job.yaml"
    job.write_text(
        yaml.safe_dump_all([volcano_gang("new", 2), *members("new", 2, dialect="volcano", cpu="6")])
    )
    out, err = io.StringIO(), io.StringIO()
    code = cmd_explain.run(gang=None, snapshot=Snapshot((str(job),)), out=out, err=err)
    assert code == cmd_explain.EXIT_OK and "0/0 nodes are available" in out.getvalue()
    assert "warning: the files hold no Node: add --from-cluster" in err.getvalue()


def test_the_brief_follows_the_verdicts_step() -> None:
    """The short form beside a verdict is about room: none after a gate or a spec error."""
    from controller.placer.explain import brief
    from controller.placer.framework import Step

    objects = [*spine_block_nodes(LAYOUT), koord_gang("big", 8), *members("big", 8, cpu="6")]
    sc = load_scenario(objects)
    prep = prepare(sc)
    (gang,) = prep.gangs()
    assert brief(gang, prep.snapshot, Step.POST_FILTER).startswith("best per tier: ")
    assert brief(gang, prep.snapshot, Step.PRE_ENQUEUE) == ""
    assert brief(gang, prep.snapshot, Step.PRE_FILTER) == ""


def _lws(size: int) -> Obj:
    obj: Obj = yaml.safe_load(LWS.read_text())
    obj["spec"]["replicas"] = 1
    obj["spec"]["leaderWorkerTemplate"]["size"] = size
    template = obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    template["containers"][0]["resources"] = {"requests": {"cpu": "6"}, "limits": {"cpu": "6"}}
    return obj


def test_an_lws_groups_suggestion_is_its_size_and_is_checked() -> None:
    """Each group of four must share one block of two nodes: `size: 2` would start, and does."""
    nodes = spine_block_nodes(LAYOUT)
    e = _one([*nodes, _lws(4)], "lws-sample-volcano-0")
    assert e.code != "Success"
    sizes = [s for s in e.suggestions if "size" in s]
    assert sizes == [
        "LeaderWorkerSet lws-sample-volcano: spec.leaderWorkerTemplate.size: 2 would start 2 pod(s) now, "
        + sizes[0].rsplit("now, ", 1)[1]
    ]
    assert not any("minMember" in s for s in e.suggestions)
    assert _one([*nodes, _lws(2)], "lws-sample-volcano-0").placed


def test_the_uis_explanations_of_one_state_reuse_its_cycle_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ui asks one model many questions: a gang later in the queue goes on from the walk the
    last question left (the gangs before it are not attempted again) and gets a fresh cycle's
    answer; a gang the walk has passed gets a fresh walk."""
    from controller.placer.explain import explain_in_cycle
    from topobridge.ui import model as view_model

    objects = [*spine_block_nodes(LAYOUT), koord_gang("a-first", 4), koord_gang("b-second", 4)]
    objects += [koord_gang("c-third", 2)]
    objects += (
        members("a-first", 4, cpu="6") + members("b-second", 4, cpu="6") + members("c-third", 2, cpu="6")
    )
    m = view_model.build(objects)
    second = view_model.explanation(m, "b-second")
    assert second is not None and second["explanation"]["verdict"]["code"] != "Success"
    walk = cmd_explain._WALKS[(id(view_model.prepared(m)), DEFAULT_SCHEDULERS)][1]
    assert [g.key for g in walk.queue[: walk.done]] == [
        "koordinator:default/a-first",
        "koordinator:default/b-second",
    ]
    attempted: list[str] = []
    attempt = walk.cycle.attempt

    def counted(gang: Any) -> Any:
        attempted.append(gang.key)
        return attempt(gang)

    monkeypatch.setattr(walk.cycle, "attempt", counted)
    third = view_model.explanation(m, "c-third")
    assert attempted == ["koordinator:default/c-third"]  # a-first and b-second are not attempted again
    assert cmd_explain._WALKS[(id(view_model.prepared(m)), DEFAULT_SCHEDULERS)][1] is walk
    (gang,) = [g for g in view_model.prepared(m).gangs() if g.key == "koordinator:default/c-third"]
    fresh = explain_in_cycle(
        cmd_explain._cycle(view_model._scenario(m), view_model.prepared(m), DEFAULT_SCHEDULERS),
        gang,
        DEFAULT_SCHEDULERS,
    )
    assert third is not None and third["explanation"] == fresh.to_dict()
    assert fresh.placed and fresh.ahead == ("koordinator:default/a-first placed in spine/spine-0",)
    first = view_model.explanation(m, "a-first")  # passed: a fresh walk answers
    assert first is not None and first["explanation"]["verdict"]["code"] == "Success"
    assert cmd_explain._WALKS[(id(view_model.prepared(m)), DEFAULT_SCHEDULERS)][1] is not walk
    assert attempted == ["koordinator:default/c-third"]
