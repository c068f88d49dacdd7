"""`hack/explore.py`'s seed and replay plumbing, without exploring for minutes.

* Each surface's environment variable reaches the test it names: with the variable set, the
  test module draws from that seed (checked on the modules' own seed constants and the
  Hypothesis profile tests/conftest.py loads, in a child process so this one keeps the suite's
  fixed seeds).
* A failing seed is printed with a replay command that fails again when run, a passing one is
  not, and the summary line counts both; the seeds tried follow `--seed`.
* The fuzzer's failures are read back with their seeds.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]


def _explore() -> ModuleType:
    spec = importlib.util.spec_from_file_location("explore", REPO / "hack" / "explore.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["explore"] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


explore = _explore()

# The seed constant each surface's module keeps, and what it holds for a chosen seed `s`.
SEED_OF = {
    "oracle": ("test_placer_oracle", "SEED", "s"),
    "cycle": ("test_placer_cycle_oracle", "SEED", "s"),
    "gpu": ("test_placer_gpu_oracle", "SEED", "s"),
    "affinity": ("test_placer_affinity_oracle", "SEED", "s"),
    "hostile": ("test_hostile_clusters", "SEEDS", "[s]"),
    "unusable": ("test_placer_unusable_nodes", "BASES", "[s]"),
    "properties": ("conftest", "PROPERTY_SEED", "s"),
}
PROBE = """
import importlib, json, sys
sys.path[:0] = ["tests", "tests/controller/placer"]
out = {}
for name, (module, attr) in json.loads(sys.argv[1]).items():
    value = getattr(importlib.import_module(module), attr)
    out[name] = list(value) if isinstance(value, tuple) else value
from hypothesis import settings
out["derandomize"] = settings.default.derandomize
print(json.dumps(out))
"""


def _module_seeds(env: dict[str, str]) -> dict[str, object]:
    wanted = {name: [module, attr] for name, (module, attr, _) in SEED_OF.items()}
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TOPOBRIDGE_")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(wanted)],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_every_surface_is_explored_and_its_variable_reaches_its_test() -> None:
    assert set(SEED_OF) == {s.name for s in explore.SURFACES}
    for surface in explore.SURFACES:
        for target in surface.target.split():
            assert (REPO / target.split("::")[0]).is_file(), target
    variables = {s.env for s in explore.SURFACES}
    chosen = {env: 1000 + i for i, env in enumerate(sorted(variables))}
    seeds = _module_seeds({env: str(seed) for env, seed in chosen.items()})
    fixed = _module_seeds({})
    for surface in explore.SURFACES:
        s = chosen[surface.env]
        _, _, shape = SEED_OF[surface.name]
        assert seeds[surface.name] == (s if shape == "s" else [s]), surface.name
        assert fixed[surface.name] != seeds[surface.name], f"{surface.name} ignores {surface.env}"
    # The other Hypothesis tests: fixed examples in the suite, the seed's when it is chosen.
    assert fixed["derandomize"] is True and seeds["derandomize"] is False


def test_a_chosen_seed_that_is_not_a_number_is_refused_with_the_variable_named() -> None:
    with pytest.raises(subprocess.CalledProcessError) as failed:
        _module_seeds({"TOPOBRIDGE_ORACLE_SEED": "abc"})
    assert "TOPOBRIDGE_ORACLE_SEED='abc': a seed is a whole number" in failed.value.stderr


FAKE = """
import os

def test_even_seeds_only():
    seed = int(os.environ["TOPOBRIDGE_FAKE_SEED"])
    assert seed % 2 == 0, f"odd seed {seed}"
"""


def test_a_failing_seed_is_printed_with_a_replay_that_fails_again(tmp_path: Path) -> None:
    target = tmp_path / "test_fake.py"
    target.write_text(FAKE)
    surface = explore.Surface("fake", "TOPOBRIDGE_FAKE_SEED", str(target))
    drawn: list[int] = []

    def seeds() -> Iterator[int]:
        for seed in (2, 3):
            drawn.append(seed)
            yield seed

    out = io.StringIO()
    # Two rounds, seeds 2 then 3, then the time is up.
    tally = explore.explore(
        [surface], False, seeds(), lambda: 1.0 if len(drawn) < 2 else 0.0, logs=tmp_path, out=out
    )
    text = out.getvalue()
    assert "ok   fake seed=2" in text
    assert "FAIL fake seed=3: AssertionError: odd seed 3" in text, text
    replay = f"TOPOBRIDGE_FAKE_SEED=3 .venv/bin/python -m pytest {target} -q -p no:cacheprovider"
    assert f"  replay: {replay}" in text
    assert [(f.surface, f.seed) for f in tally.failures] == [("fake", 3)]
    assert "odd seed 3" in tally.failures[0].log.read_text()
    summary = tally.summary(0.5)
    assert summary.startswith("summary: minutes=0.5 seeds=2 ")
    assert summary.endswith(" cut=0 failures=1 failing=fake:3")
    # The printed command, run as printed (the repository's venv path made absolute), fails again.
    command = replay.replace(".venv/bin/python", sys.executable)
    again = subprocess.run(command, shell=True, cwd=REPO, capture_output=True, text=True, check=False)
    assert again.returncode == 1 and "odd seed 3" in again.stdout
    passing = command.replace("SEED=3", "SEED=4")
    assert subprocess.run(passing, shell=True, cwd=REPO, capture_output=True, check=False).returncode == 0


def test_the_seeds_tried_follow_the_seed_flag() -> None:
    first = explore.fresh_seeds(7)
    again = explore.fresh_seeds(7)
    drawn = [next(first) for _ in range(5)]
    assert drawn == [next(again) for _ in range(5)]
    assert len(set(drawn)) == 5
    assert drawn != [next(explore.fresh_seeds(8)) for _ in range(5)]


def test_the_fuzzers_failures_are_read_back_with_their_seeds() -> None:
    # hack/fuzz.py's lines: `FAIL seed <s> example <n>: ...` per failure, the summary last.
    output = "\n".join(
        [
            "seed=41",
            "FAIL seed 42 example 3: Pod p: Traceback (most recent call last):",
            "  File ...",
            "FAIL seed 42 example 7: ordinary gang left unbound",
            "FAIL seed 44 example 1: cycle: Code.ERROR",
            "summary: seed=41 seeds=5 scenarios=100 crashes=2 slowest_ms=9.0 failures=3 reviews=10",
        ]
    )
    tried, failing = explore.fuzz_findings(output)
    assert tried == 5
    assert failing == {
        42: "example 3: Pod p: Traceback (most recent call last):",
        44: "example 1: cycle: Code.ERROR",
    }
    assert explore.fuzz_replay(42) == ".venv/bin/python hack/fuzz.py --seed 42 --minutes 1"


def test_the_fuzzers_surfaces_are_counted_with_their_slowest_call() -> None:
    tally = explore.Tally()
    for first, slow in ((41, "812"), (46, "95")):
        explore.fuzz_figures(
            f"summary: seed={first} seeds=5 scenarios=100 crashes=1 slowest_ms=900.0 failures=1 "
            f"reviews=300 cycles=100 worst_review_ms=12.5 worst_cycle_ms=900.0 explain=200/{slow}ms "
            "simulate=100/640ms translate-kueue=100/33ms over_budget=0",
            tally,
        )
    assert tally.crashes == 2
    assert tally.scenarios["fuzz"] == 200
    assert tally.scenarios["fuzz.explain"] == 400
    assert tally.scenarios["fuzz.review"] == 600
    assert tally.slowest["fuzz.explain"] == pytest.approx(0.812)
    assert tally.slowest["fuzz.cycle"] == pytest.approx(0.9)
    assert tally.slowest["fuzz.translate-kueue"] == pytest.approx(0.033)
    tally.tried["oracle"] += 1
    tally.scenarios["oracle"] += 1
    tally.took("oracle", 40.0)
    summary = tally.summary(30)
    assert " crashes=2 " in summary
    assert " scenarios=fuzz:200,fuzz.cycle:200,fuzz.explain:400," in summary
    assert "oracle:40.00s" in summary and "fuzz.simulate:0.64s" in summary
    assert "surface fuzz.whatif: scenarios=0" not in tally.surfaces()
    assert "surface oracle: scenarios=1 slowest_s=40.00" in tally.surfaces()
    assert "surface fuzz: scenarios=200 slowest_s=-" in tally.surfaces()


def test_the_live_fuzzers_rounds_and_calls_are_counted_apart() -> None:
    """hack/livefuzz.py prints the fuzzer's lines; its rounds and calls go under `live`."""
    tally = explore.Tally()
    output = "\n".join(
        [
            "seed=7",
            "FAIL seed 9 example 2: pod team-a/live-2: pending without a reason",
            "summary: seed=7 seeds=3 scenarios=6 crashes=0 slowest_ms=30742.6 failures=1 stored=107 "
            "refused=14 unserved=3 bind=6/3621ms explain=6/6333ms messages=6/30743ms simulate=6/8437ms "
            "ui=42/445ms ui-stop=12/1296ms",
        ]
    )
    tried, failing = explore.fuzz_findings(output)
    explore.fuzz_figures(output, tally, explore.LIVE)
    assert (tried, failing) == (3, {9: "example 2: pod team-a/live-2: pending without a reason"})
    assert tally.scenarios["live"] == 6 and tally.scenarios["live.explain"] == 6
    assert tally.slowest["live.messages"] == pytest.approx(30.743)
    assert tally.scenarios["live.ui"] == 42 and tally.slowest["live.ui"] == pytest.approx(0.445)
    assert tally.scenarios["live.ui-stop"] == 12 and tally.slowest["live.ui-stop"] == pytest.approx(1.296)
    assert "fuzz" not in tally.scenarios and tally.crashes == 0
    assert explore.fuzz_replay(9, explore.LIVE) == ".venv/bin/python hack/livefuzz.py --seed 9 --minutes 1"


def test_an_unknown_surface_is_refused_with_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        explore.main(["--minutes", "0", "--only", "cycle,nope"])
    err = capsys.readouterr().err
    assert (
        "no surface named nope" in err
        and "known: oracle, cycle, gpu, affinity, hostile, unusable, properties, fuzz, live" in err
    )


def test_every_hypothesis_test_without_a_seed_of_its_own_is_explored() -> None:
    """A property test the suite runs on the conftest profile's fixed examples is on the
    `properties` surface, so new ones get fresh seeds too."""
    explored = {t.split("::")[0] for s in explore.SURFACES for t in s.target.split()}
    unseeded = set()
    for path in (REPO / "tests").rglob("test_*.py"):
        text = path.read_text()
        if "@given(" in text and "derandomize=True" not in text and "seed(" not in text:
            unseeded.add(str(path.relative_to(REPO)))
    assert unseeded, "the scan found no property test"
    assert unseeded <= explored, sorted(unseeded - explored)


def _livefuzz() -> ModuleType:
    spec = importlib.util.spec_from_file_location("livefuzz", REPO / "hack" / "livefuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["livefuzz"] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


def test_the_live_fuzzers_what_if_keeps_namespaces_apart() -> None:
    """Found exploring (seed 3508128054, example 2): the round's pasted job moved every object
    to one namespace, so two upstream PodGroups `0` of two namespaces became one object named
    twice, and the ui refused the paste ("Duplicate value"), which the fuzzer took for a
    refusal naming no field. Each namespace now moves to one of its own."""
    from topobridge.ui import whatif

    livefuzz = _livefuzz()
    drawn = livefuzz.draw_rounds(3508128054, 2)[1]
    answers = [whatif.what_if([], text) for text in livefuzz.pasted_jobs(drawn)]
    assert [sorted(a) for a in answers] == [["evicted", "evictedForOthers", "gangs", "warnings"]] * 2
