"""Explain does the scheduler's work once: the gang's own attempt is the cycle's attempt.

`explain` walks the cycle up to the gang and reads that attempt's verdict
(`SchedulingCycle.last_verdict`); it used to ask the engine the same question again, with a
fresh attempt budget, for every gang it explained, so an explanation cost twice the
scheduler's search (the ui's what-if explains every gang of a job that would wait). These
tests count the engine's attempts that may search for a preemption plan (the full profile);
the suggestions' checks run without PostFilter and are counted apart.
"""

from __future__ import annotations

from typing import Any

import pytest
from placer_objects import Obj, koord_gang, members, spine_block_nodes

from controller.placer import cycle as cycle_mod
from controller.placer import engine
from controller.placer import explain as explain_mod
from controller.placer.explain import Explanation
from controller.placer.scenario import DEFAULT_SCHEDULERS, load_scenario, prepare
from topobridge import cmd_explain

LAYOUT = {"spine-0": {"block-0": ["n0", "n1"], "block-2": ["n2", "n3"]}}


def _count_searches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each engine attempt that may preempt (its profile has a PostFilter), by gang key."""
    searched: list[str] = []

    def counting(gang: Any, *args: Any, **kwargs: Any) -> Any:
        profile = kwargs.get("profile")
        if profile is None or profile.post_filter is not None:
            searched.append(gang.key)
        return engine.schedule(gang, *args, **kwargs)

    monkeypatch.setattr(cycle_mod, "schedule", counting)
    monkeypatch.setattr(explain_mod, "schedule", counting)
    return searched


def _explain(objects: list[Obj], wanted: str) -> Explanation:
    sc = load_scenario(objects, lenient=True)
    (found,) = cmd_explain.explain_all(sc, prepare(sc), wanted, served=DEFAULT_SCHEDULERS)
    return found


def test_a_waiting_gang_is_searched_once_as_the_cycle_searches_it(monkeypatch: pytest.MonkeyPatch) -> None:
    objects = [*spine_block_nodes(LAYOUT), koord_gang("a-first", 4), koord_gang("b-second", 4)]
    objects += members("a-first", 4, cpu="6") + members("b-second", 4, cpu="6")
    searched = _count_searches(monkeypatch)
    e = _explain(objects, "b-second")
    assert e.code != "Success" and e.step == "PostFilter"
    assert e.ahead == ("koordinator:default/a-first placed in spine/spine-0",)
    # One attempt per gang of the queue up to it, as the scheduler makes: none asked twice.
    assert searched == ["koordinator:default/a-first", "koordinator:default/b-second"]


def test_a_preempting_gang_is_explained_from_the_cycles_own_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    low = [{**m, "spec": {**m["spec"], "priority": 0}} for m in members("low", 4, cpu="6")]
    for m in low:
        m["spec"]["nodeName"] = f"n{m['metadata']['name'].rsplit('-', 1)[1]}"
    high = [{**m, "spec": {**m["spec"], "priority": 1000}} for m in members("high", 4, cpu="6")]
    objects = [*spine_block_nodes(LAYOUT), koord_gang("low", 4), koord_gang("high", 4), *low, *high]
    searched = _count_searches(monkeypatch)
    e = _explain(objects, "high")
    assert e.preemption is not None and len(e.preemption.victims) == 4, e
    # The cycle's attempt and its answer once the victims are reserved (what the pods say):
    # explain adds no search of its own.
    assert searched == ["koordinator:default/high", "koordinator:default/high"]


def test_a_lower_min_gpus_per_node_is_checked_only_where_a_node_could_take_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`min-gpus-per-node` (up to 2^31 - 1) held the gang, and explain checked every lower value
    one by one, from the floor down: 99 runner checks for 400, about 537 million for the
    largest. No node takes more pods than its GPUs hold or the gang has pending: here two
    8-GPU nodes and two 4-GPU pods, so 2 then 1 pod per node, whatever the annotation says."""
    from test_explain_limits import G, _gpu_job

    checked: list[int] = []

    def counting(gang: Any, *args: Any, **kwargs: Any) -> Any:
        if (
            gang.gpu is not None
            and kwargs.get("profile") is not None
            and kwargs["profile"].post_filter is None
        ):
            checked.append(gang.gpu.request.min_gpus_per_node)
        return engine.schedule(gang, *args, **kwargs)

    monkeypatch.setattr(explain_mod, "schedule", counting)
    sc = load_scenario(_gpu_job({f"{G}min-gpus-per-node": "400"}), lenient=True)
    (e,) = cmd_explain.explain_all(sc, prepare(sc), "ml/dt", served=("topobridge",))
    assert e.held[0].startswith("gpu.topology/min-gpus-per-node 400 ")
    assert (
        'Job dt: metadata.annotations[gpu.topology/min-gpus-per-node]: "4" would place it in b0'
        in e.suggestions
    )
    assert [v for v in checked if v != 400] == [8, 4]
