"""`explain`: the cycle's own verdict for a waiting gang, and the figures around it: the best
domain per tier, what the filters exclude, resources short, the tier limit, what preemption
would take, and single changes that would let it start (each checked by the runner)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import yaml
from placer_objects import Obj, demo_objects, koord_gang, members, node, pod, spine_block_nodes, volcano_gang

from controller.placer.budgets import budgets_from
from controller.placer.cycle import GangTiming, SchedulingCycle
from controller.placer.explain import explain, render
from controller.placer.scenario import cluster_state, load_scenario, prepare
from topobridge import cmd_explain
from topobridge.inputs import Snapshot

LAYOUT = {"spine-0": {"block-0": ["n0", "n1"], "block-1": ["n2", "n3"]}, "spine-1": {"block-2": ["n4", "n5"]}}


def _explained(objects: list[Obj], name: str) -> Any:
    sc = load_scenario(objects)
    prep = prepare(sc)
    gang = next(g for g in prep.gangs(sc) if g.name == name)
    return explain(gang, prep.snapshot, budgets_from(sc.pdbs, prep.snapshot))


def test_the_seed_example_2_before_preemption() -> None:
    e = _explained(demo_objects("example-2"), "default/high-priority-training")
    assert (e.code, e.step, e.plugin) == ("WaitingForVictims", "PostFilter", "DefaultPreemption")
    assert e.preemption is not None and e.preemption.possible
    assert [v.pod for v in e.preemption.victims] == ["default/low-priority-pod-5"]
    assert e.preemption.domain == "SpineLayer/spine-1"
    spines = next(t for t in e.tiers if t.name == "SpineLayer")
    assert (spines.holds, spines.allowed) == (3, True)  # no spine holds all four now
    assert e.limit == "hard tier limit 2 (domains of tier 2)"
    spec = "gang.scheduling.koordinator.sh/network-topology-spec"
    assert (
        f'{spec}: "strategy": "PreferGather" instead of "MustGather" would place it in cluster'
        in e.suggestions
    )
    assert (
        "PodGroup high-priority-training: spec.minMember: 3 would start 3 pod(s) now, in BlockLayer/block-4"
        in e.suggestions
    )


def test_the_verdict_is_the_cycles() -> None:
    """Nothing is judged twice: the explanation's verdict is what the cycle decides."""
    objects = demo_objects("example-2")
    view = cluster_state(load_scenario(objects)).view()
    plan = SchedulingCycle(view, served=("koord-scheduler",), now=0.0, timing=GangTiming()).run()
    outcome = plan.outcomes["koordinator:default/high-priority-training"]
    e = _explained(objects, "default/high-priority-training")
    assert (e.code, e.step) == (outcome.code.value, outcome.step.value)


def test_resources_short_everywhere_and_preemption_cannot_help() -> None:
    objects = [*spine_block_nodes(LAYOUT), koord_gang("huge", 8), *members("huge", 8, cpu="6")]
    e = _explained(objects, "default/huge")
    assert e.code == "Unresolvable"
    assert e.short == ()  # every node takes one 6-CPU pod (kube counts a node short of room for one)
    assert "desiredOfferSlot: 8, offerSlot: 6" in e.message
    assert e.preemption is not None and not e.preemption.possible
    assert e.tiers[-1].holds == 6  # six nodes, one pod each: the whole cluster holds 6 of 8
    assert "PodGroup huge: spec.minMember: 6 would start 6 pod(s) now, in cluster" in e.suggestions


def test_a_tier_limit_and_the_wider_tier_that_would_hold_it() -> None:
    objects = [*spine_block_nodes(LAYOUT), volcano_gang("wide", 4, mode="hard", tier=1)]
    objects += members("wide", 4, dialect="volcano", cpu="6")
    e = _explained(objects, "default/wide")
    assert e.code == "Unresolvable" and e.limit == "hard tier limit 1 (domains of tier 1)"
    assert [t.allowed for t in e.tiers] == [True, True, False, False]
    assert (
        "PodGroup wide: spec.networkTopology.highestTierAllowed: 2 would place it in spine/spine-0"
        in e.suggestions
    )
    assert "PodGroup wide: spec.networkTopology.mode: soft would place it in spine/spine-0" in e.suggestions


def test_an_affinity_nothing_satisfies() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
    lonely = pod(
        "lonely",
        cpu="1",
        memory="1Gi",
        scheduler="topobridge",
        affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
    )
    e = _explained([node("n0"), node("n1"), lonely], "default/lonely")
    assert e.code == "Unresolvable" and e.step == "Filter"
    assert e.excluded == {"node(s) didn't match pod affinity rules": 2}
    assert "2 node(s) didn't match pod affinity rules" in e.message
    assert "nodes the filters exclude:\n  2 node(s) didn't match pod affinity rules" in render(e)
    assert e.preemption is not None and not e.preemption.possible
    assert "preemption cannot help: every node is excluded for a reason no eviction removes" in render(e)


def test_the_command_explains_a_file_and_a_job_not_yet_submitted(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(spine_block_nodes(LAYOUT)))
    job = tmp_path / "job.yaml"
    job.write_text(
        yaml.safe_dump_all([volcano_gang("new", 2), *members("new", 2, dialect="volcano", cpu="6")])
    )
    out, err = io.StringIO(), io.StringIO()
    code = cmd_explain.run(
        gang=None, snapshot=Snapshot((str(cluster), str(job))), output_format="json", out=out, err=err
    )
    assert (code, err.getvalue()) == (0, "")
    doc = json.loads(out.getvalue())
    assert doc["gang"] == "volcano:default/new" and doc["verdict"]["code"] == "Success"
    assert doc["lands"]["domain"] == "block/block-2" and len(doc["lands"]["pods"]) == 2
    out = io.StringIO()
    missing = cmd_explain.run(gang="missing", snapshot=Snapshot((str(cluster),)), out=out, err=err)
    assert missing == cmd_explain.EXIT_NO_GANG
