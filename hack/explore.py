"""Exploration outside the gate: the randomised tests on fresh seeds, for as long as asked.

The suite runs every randomised test on fixed seeds (`tests/replay.py`), so it passes or fails
as a function of the commit. This runs the same tests on seeds nobody tried yet, one surface
after another until the time is up:

    oracle    tests/controller/placer/test_placer_oracle.py       TOPOBRIDGE_ORACLE_SEED
    cycle     tests/controller/placer/test_placer_cycle_oracle.py TOPOBRIDGE_ORACLE_SEED
    gpu       tests/controller/placer/test_placer_gpu_oracle.py   TOPOBRIDGE_ORACLE_SEED
    affinity  tests/controller/placer/test_placer_affinity_oracle.py TOPOBRIDGE_ORACLE_SEED
    hostile   tests/controller/placer/test_hostile_clusters.py    TOPOBRIDGE_HOSTILE_SEED
    unusable  tests/controller/placer/test_placer_unusable_nodes.py TOPOBRIDGE_UNUSABLE_SEED
    properties  the other Hypothesis tests (`PROPERTIES`)          TOPOBRIDGE_PROPERTY_SEED
    fuzz      hack/fuzz.py --minutes N --seed S                   (its own flags)
    live      hack/livefuzz.py --minutes N --seed S               (its own dev control plane)

Each pytest surface runs once per seed, as a subprocess with the seed in its environment
variable; the fuzzer runs for a slice of the time from one seed, trying consecutive seeds. Each
failure is printed with its seed and the exact command that replays it (the whole output goes
to a log file, named on the line); a found failure then becomes a fixed example in the suite.

    .venv/bin/python hack/explore.py [--minutes 30] [--seed N] [--only cycle,fuzz]

`--seed` fixes the sequence of seeds tried (default: fresh ones). A run already started when
the time is up finishes (`make explore` budgets for that). Before the last line, one line per
surface: `surface <name>: scenarios=<n> slowest_s=<s>` (a pytest surface: seeds run and the
slowest run; `fuzz`: clusters drawn; `fuzz.<surface>`: the fuzzer's calls of each surface it
drives, simulate, validate, translate-*, explain, whatif, read, review, cycle, and the slowest
call; `live`: rounds stored through the live API server; `live.<surface>`: its calls of store,
bind, messages, tree, explain, simulate, ui (the live ui's answers), ui-stop, and the slowest). Last line: `summary: minutes=<m> seeds=<n> <surface>=<seeds tried>...
scenarios=<surface>:<n>,... crashes=<n> slowest=<surface>:<s>s,... cut=<n> failures=<n>
failing=<surface>:<seed>,...` (`crashes`: exceptions that escaped a surface the fuzzer
drives, and gangs whose attempt the cycle had to catch; `live`'s: a `topobridge` process that
exited or logged a traceback). Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.replay import HOSTILE, ORACLE, PROPERTY, UNUSABLE  # noqa: E402

PLACER = "tests/controller/placer"
PROPERTIES = (
    "tests/translations/test_translation_properties.py",
    "tests/webhooks/test_properties.py",
    "tests/webhooks/test_admission_json.py",
    "tests/webhooks/test_answer_metrics.py",
    f"{PLACER}/test_state_caches.py",
)
"""Hypothesis tests that name no seed of their own: the suite runs them `derandomize`d
(tests/conftest.py's profile), TOPOBRIDGE_PROPERTY_SEED draws them from a seed."""
FUZZ_SLICE_MINUTES = 3.0
"""The fuzzer's share of one round of surfaces."""
LIVE_SLICE_MINUTES = 5.0
"""The live fuzzer's share of one round (it starts a control plane of its own, ~15 s)."""
RUN_LIMIT_SECONDS = 20 * 60
"""A pytest surface still running after this is stopped and counted as cut, not failed."""


@dataclass(frozen=True)
class Surface:
    """One randomised test run on a chosen seed through its environment variable."""

    name: str
    env: str
    target: str
    """Pytest node ids or files, relative to the repository, separated by spaces."""

    def command(self) -> list[str]:
        return [sys.executable, "-m", "pytest", *self.target.split(), "-q", "-x", "-p", "no:cacheprovider"]

    def replay(self, seed: int) -> str:
        return f"{self.env}={seed} .venv/bin/python -m pytest {self.target} -q -p no:cacheprovider"


SURFACES = (
    Surface("oracle", ORACLE, f"{PLACER}/test_placer_oracle.py::test_engine_agrees_with_oracle_on_a_seed"),
    Surface(
        "cycle", ORACLE, f"{PLACER}/test_placer_cycle_oracle.py::test_cycle_agrees_with_oracle_on_a_seed"
    ),
    Surface("gpu", ORACLE, f"{PLACER}/test_placer_gpu_oracle.py"),
    Surface("affinity", ORACLE, f"{PLACER}/test_placer_affinity_oracle.py"),
    Surface("hostile", HOSTILE, f"{PLACER}/test_hostile_clusters.py"),
    Surface("unusable", UNUSABLE, f"{PLACER}/test_placer_unusable_nodes.py"),
    Surface("properties", PROPERTY, " ".join(PROPERTIES)),
)
FUZZ = "fuzz"
LIVE = "live"
PROGRAMS = {FUZZ: "hack/fuzz.py", LIVE: "hack/livefuzz.py"}
"""The surfaces that are programs of their own, with the same flags and output lines."""
NAMES = (*(s.name for s in SURFACES), FUZZ, LIVE)


@dataclass(frozen=True)
class Failure:
    surface: str
    seed: int
    detail: str
    replay: str
    log: Path


@dataclass
class Tally:
    """What the exploration tried and found."""

    tried: Counter[str] = field(default_factory=Counter)
    cut: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    scenarios: Counter[str] = field(default_factory=Counter)
    """Per surface, what it ran: a pytest surface's seeds, the fuzzer's clusters drawn
    (`fuzz`) and the calls of each surface it drives (`fuzz.simulate`, `fuzz.review`, ...)."""
    slowest: dict[str, float] = field(default_factory=dict)
    """Per surface, its slowest call in seconds: a pytest surface's slowest seed, each of the
    fuzzer's surfaces its slowest call."""
    crashes: int = 0
    """Exceptions that escaped a surface the fuzzer drives, and gangs whose attempt the cycle
    had to catch (the fuzzer's `crashes`); a pytest surface's are among its failures."""

    def took(self, surface: str, seconds: float) -> None:
        self.slowest[surface] = max(self.slowest.get(surface, 0.0), seconds)

    def surfaces(self) -> list[str]:
        """One line per surface: what it ran and its slowest call."""
        lines = []
        for name in sorted(set(self.scenarios) | set(self.slowest)):
            slowest = f"{self.slowest[name]:.2f}" if name in self.slowest else "-"  # `fuzz`: its surfaces say
            lines.append(f"surface {name}: scenarios={self.scenarios[name]} slowest_s={slowest}")
        return lines

    def summary(self, minutes: float) -> str:
        failing = ",".join(f"{f.surface}:{f.seed}" for f in self.failures) or "-"
        slowest = ",".join(f"{k}:{v:.2f}s" for k, v in sorted(self.slowest.items())) or "-"
        parts = [
            f"minutes={minutes:g}",
            f"seeds={sum(self.tried.values())}",
            *(f"{name}={self.tried[name]}" for name in NAMES),
            f"scenarios={','.join(f'{k}:{v}' for k, v in sorted(self.scenarios.items())) or '-'}",
            f"crashes={self.crashes}",
            f"slowest={slowest}",
            f"cut={sum(self.cut.values())}",
            f"failures={len(self.failures)}",
            f"failing={failing}",
        ]
        return "summary: " + " ".join(parts)


def _detail(output: str) -> str:
    """The first assertion or error line pytest printed (what a reader needs to triage)."""
    for line in output.splitlines():
        if line.startswith("E ") and line[1:].strip():
            return line[1:].strip()[:300]
    lines = [ln for ln in output.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "(no output)"


def _report(out: TextIO, failure: Failure) -> None:
    print(f"FAIL {failure.surface} seed={failure.seed}: {failure.detail}", file=out, flush=True)
    print(f"  replay: {failure.replay}", file=out, flush=True)
    print(f"  log: {failure.log}", file=out, flush=True)


def run_surface(surface: Surface, seed: int, logs: Path, tally: Tally, out: TextIO) -> None:
    """One pytest run of `surface` on `seed`."""
    started = time.monotonic()
    log = logs / f"{surface.name}-{seed}.log"
    try:
        done = subprocess.run(
            surface.command(),
            cwd=REPO,
            env=_environ({surface.env: str(seed)}),
            capture_output=True,
            text=True,
            timeout=RUN_LIMIT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as stopped:
        log.write_text(_text(stopped.stdout) + _text(stopped.stderr))
        tally.cut[surface.name] += 1
        print(
            f"cut {surface.name} seed={seed} after {RUN_LIMIT_SECONDS} s (log: {log})", file=out, flush=True
        )
        return
    log.write_text(done.stdout + done.stderr)
    tally.tried[surface.name] += 1
    tally.scenarios[surface.name] += 1
    seconds = time.monotonic() - started
    tally.took(surface.name, seconds)
    if done.returncode == 0:
        print(f"ok   {surface.name} seed={seed} ({seconds:.0f} s)", file=out, flush=True)
        return
    failure = Failure(surface.name, seed, _detail(done.stdout + done.stderr), surface.replay(seed), log)
    tally.failures.append(failure)
    _report(out, failure)


FUZZ_FAIL = re.compile(r"^FAIL seed (?P<seed>\d+) example (?P<example>\d+): (?P<what>.*)$")
FUZZ_SEEDS = re.compile(r"^summary: .*\bseeds=(?P<seeds>\d+)\b")


def fuzz_findings(output: str) -> tuple[int, dict[int, str]]:
    """(seeds the fuzzer tried, failing seed -> its first failure) from `hack/fuzz.py`'s output."""
    tried = 0
    failing: dict[int, str] = {}
    for line in output.splitlines():
        if m := FUZZ_FAIL.match(line):
            failing.setdefault(int(m["seed"]), f"example {m['example']}: {m['what']}"[:300])
        elif m := FUZZ_SEEDS.match(line):
            tried = int(m["seeds"])
    return tried, failing


FUZZ_FIGURE = re.compile(r"^(?P<surface>[a-z][a-z-]*)=(?P<calls>\d+)/(?P<ms>[0-9.]+)ms$")


def fuzz_figures(output: str, tally: Tally, program: str = FUZZ) -> None:
    """Add a fuzzer's summary to `tally`: its clusters drawn (rounds, `live`), its crashes, and
    per surface it drives (`<surface>=<calls>/<slowest ms>`) the calls and the slowest one."""
    for line in output.splitlines():
        if not line.startswith("summary: "):
            continue
        figures = dict(t.split("=", 1) for t in line.split()[1:] if "=" in t)
        tally.scenarios[program] += int(figures.get("scenarios", 0))
        tally.crashes += int(figures.get("crashes", 0))
        for counted, worst, name in (
            ("reviews", "worst_review_ms", "review"),
            ("cycles", "worst_cycle_ms", "cycle"),
        ):
            if counted in figures:
                tally.scenarios[f"{program}.{name}"] += int(figures[counted])
                tally.took(f"{program}.{name}", float(figures.get(worst, 0)) / 1e3)
        for token in line.split()[1:]:
            if m := FUZZ_FIGURE.match(token):
                tally.scenarios[f"{program}.{m['surface']}"] += int(m["calls"])
                tally.took(f"{program}.{m['surface']}", float(m["ms"]) / 1e3)


def fuzz_replay(seed: int, program: str = FUZZ) -> str:
    return f".venv/bin/python {PROGRAMS[program]} --seed {seed} --minutes 1"


def run_fuzz(seed: int, minutes: float, logs: Path, tally: Tally, out: TextIO, program: str = FUZZ) -> None:
    """`hack/fuzz.py` (or `program`'s script) for `minutes` from `seed` (it goes on to
    seed+1, seed+2, ...)."""
    log = logs / f"{program}-{seed}.log"
    command = [sys.executable, PROGRAMS[program], "--minutes", f"{minutes:g}", "--seed", str(seed)]
    done = subprocess.run(command, cwd=REPO, env=_environ({}), capture_output=True, text=True, check=False)
    log.write_text(done.stdout + done.stderr)
    tried, failing = fuzz_findings(done.stdout)
    tally.tried[program] += tried
    fuzz_figures(done.stdout, tally, program)
    for bad, what in sorted(failing.items()):
        failure = Failure(program, bad, what, fuzz_replay(bad, program), log)
        tally.failures.append(failure)
        _report(out, failure)
    if done.returncode != 0 and not failing:  # it stopped without naming a seed: say so
        failure = Failure(program, seed, _detail(done.stdout + done.stderr), fuzz_replay(seed, program), log)
        tally.failures.append(failure)
        _report(out, failure)
    if not failing and done.returncode == 0:
        print(f"ok   {program} seeds {seed}..{seed + max(tried, 1) - 1}", file=out, flush=True)


def _text(value: str | bytes | None) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _environ(extra: dict[str, str]) -> dict[str, str]:
    """This process's environment without any seed variable, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in (ORACLE, HOSTILE, UNUSABLE, PROPERTY)}
    return {**env, **extra}


def explore(
    surfaces: Sequence[Surface],
    fuzz: bool,
    seeds: Iterator[int],
    time_left: Callable[[], float],
    *,
    logs: Path,
    out: TextIO,
    live: bool = False,
) -> Tally:
    """Round after round over `surfaces` (then the fuzzer, then the live fuzzer), one fresh
    seed each, while `time_left()` (seconds) is positive."""
    tally = Tally()
    while time_left() > 0:
        for surface in surfaces:
            if time_left() <= 0:
                break
            run_surface(surface, next(seeds), logs, tally, out)
        if fuzz and time_left() > 0:
            minutes = min(FUZZ_SLICE_MINUTES, time_left() / 60)
            run_fuzz(next(seeds), max(minutes, 0.1), logs, tally, out)
        if live and time_left() > 0:
            minutes = min(LIVE_SLICE_MINUTES, time_left() / 60)
            run_fuzz(next(seeds), max(minutes, 0.5), logs, tally, out, program=LIVE)
    return tally


def fresh_seeds(seed: int | None) -> Iterator[int]:
    """Seeds to try: from `random.Random(seed)` when given (a repeatable exploration), else
    from the operating system."""
    rng: random.Random = random.Random(seed) if seed is not None else random.SystemRandom()
    while True:
        yield rng.randrange(2**32)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=None, help="fixes the seeds tried (default: fresh)")
    parser.add_argument(
        "--only", default=",".join(NAMES), help=f"surfaces, comma-separated: {','.join(NAMES)}"
    )
    args = parser.parse_args(argv)
    chosen = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(chosen) - set(NAMES))
    if unknown:
        parser.error(
            f"--only {args.only!r}: no surface named {', '.join(unknown)} (known: {', '.join(NAMES)})"
        )
    surfaces = [s for s in SURFACES if s.name in chosen]
    logs = Path(tempfile.mkdtemp(prefix="topobridge-explore-"))
    print(f"explore: minutes={args.minutes:g} seed={args.seed} surfaces={','.join(chosen)} logs={logs}")
    end = time.monotonic() + args.minutes * 60
    tally = explore(
        surfaces,
        FUZZ in chosen,
        fresh_seeds(args.seed),
        lambda: end - time.monotonic(),
        logs=logs,
        out=sys.stdout,
        live=LIVE in chosen,
    )
    for failure in tally.failures:
        print(f"replay {failure.surface} seed={failure.seed}: {failure.replay}")
    for line in tally.surfaces():
        print(line)
    print(tally.summary(args.minutes), flush=True)
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
