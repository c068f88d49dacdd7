"""`explain` never says Success for a gang `simulate` leaves pending, and a gang it says lands
lands there: both run over every scenario the project has (the built-in demo, the end-to-end
scenarios step by step, the dialect and expansion fixtures on the seed's cluster, the GPU seed,
and the cases judging a gang alone got wrong).

Judged alone on the snapshot, `explain` said `Success at Select` for a gang queued behind
others that take its room, held by a gate, naming a schedulerName nobody here serves, or for an
elastic gang's waiting members; `simulate` left each of them pending."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from gpu_seed import SEED_ANNOTATIONS
from placer_objects import Obj, koord_gang, members, pod, spine_block_nodes, volcano_gang
from test_placer_gpu import gpu_nodes, job

from controller.placer.scenario import DEFAULT_SCHEDULERS, load_scenario, prepare, simulate
from e2e.cluster import ClusterSpec
from e2e.scenario import CLUSTER_DIR, all_scenarios
from topobridge.cmd_explain import judge
from topobridge.cmd_simulate import DEMOS
from topobridge.inputs import load_objects

TESTS = Path(__file__).resolve().parents[2]
FIXTURES = [
    *sorted((TESTS / "dialect_fixtures" / "valid").glob("*.yaml")),
    *sorted((TESTS / "translations" / "expand_fixtures").glob("*.yaml")),
]
LAYOUT = {"spine-0": {"block-0": ["n0", "n1"], "block-1": ["n2", "n3"]}, "spine-1": {"block-2": ["n4", "n5"]}}


def _file(path: Path) -> list[Obj]:
    return [loc.obj for loc in load_objects(str(path))]


def _cluster(name: str) -> list[Obj]:
    spec = ClusterSpec.load(CLUSTER_DIR / f"{name}.yaml")
    topology = spec.cluster_network_topology()
    return [*spec.node_objects(), *([topology] if topology is not None else [])]


def _demo() -> Iterator[tuple[str, list[Obj]]]:
    for name in DEMOS:
        ref = resources.files("controller.placer") / "demo" / f"{name}.yaml"
        with resources.as_file(ref) as path:
            yield f"demo/{name}", _file(path)


def _e2e() -> Iterator[tuple[str, list[Obj]]]:
    """Each end-to-end scenario after each of its steps (the steps' objects so far)."""
    for spec in all_scenarios():
        applied: list[Obj] = []
        for step in spec.steps:
            applied += step.apply
            yield f"e2e/{spec.name}@{step.name}", [*_cluster(spec.cluster), *applied]


def _fixtures() -> Iterator[tuple[str, list[Obj]]]:
    for path in FIXTURES:
        yield f"{path.parent.name}/{path.stem}", [*_cluster("spine-block-12"), *_file(path)]


def _cases() -> Iterator[tuple[str, list[Obj]]]:
    nodes = spine_block_nodes(LAYOUT)
    queued = [*nodes, koord_gang("a-first", 4), koord_gang("b-second", 4)]
    yield "queued-behind", queued + members("a-first", 4, cpu="6") + members("b-second", 4, cpu="6")
    gated = pod("gated", cpu="1", scheduler="topobridge")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    yield "gated", [*nodes, gated]
    yield "not-served", [*nodes, pod("elsewhere", cpu="1", scheduler="default-scheduler")]
    yield "elastic", [*nodes, volcano_gang("elastic", 2), *members("elastic", 8, dialect="volcano")]
    yield (
        "tier-limit",
        [
            *nodes,
            volcano_gang("wide", 3, mode="hard", tier=1),
            *members("wide", 3, dialect="volcano", cpu="6"),
        ],
    )
    layout = {"s0": {"b0": {"n0": 4, "n1": 4}, "b1": {"n2": 4, "n3": 2}}}
    yield "gpu-seed", [*gpu_nodes(layout), *job("dt", 2, SEED_ANNOTATIONS), *job("big", 3, SEED_ANNOTATIONS)]


SCENARIOS = [*_demo(), *_e2e(), *_fixtures(), *_cases()]


def test_every_kind_of_scenario_is_here() -> None:
    names = [n for n, _ in SCENARIOS]
    assert sum(n.startswith("e2e/") for n in names) >= len(all_scenarios())
    assert sum(n.startswith(("valid/", "expand_fixtures/")) for n in names) == len(FIXTURES)
    assert sum(n.startswith("demo/") for n in names) == len(DEMOS)


@pytest.mark.parametrize(("name", "objects"), SCENARIOS, ids=[n for n, _ in SCENARIOS])
def test_explain_never_says_success_for_a_gang_simulate_leaves_pending(name: str, objects: list[Obj]) -> None:
    sc = load_scenario(objects, lenient=True)
    result = simulate(sc)
    prep = prepare(sc)
    evicted = set(result.evicted)
    for gang in prep.gangs():
        if not gang.pending:
            continue
        e = judge(sc, prep, gang, DEFAULT_SCHEDULERS)
        left = [p.key for p in gang.pending if p.key not in result.final_pods and p.key not in evicted]
        if left:
            assert e.code != "Success", (
                f"{name}: {gang.key}: explain says Success, simulate leaves {left} pending"
            )
        if e.placed and e.lands is not None:
            got = {p: result.bound.get(p) for p, _ in e.lands.pods if p not in evicted}
            assert got == {p: n for p, n in e.lands.pods if p not in evicted}, (
                f"{name}: {gang.key} lands elsewhere"
            )
