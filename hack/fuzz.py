"""A long fuzz run: hostile clusters through every surface a tenant's objects reach.

Each example is a cluster of API-valid, hostile objects (`tests/strategies/objects.py`) plus an
ordinary healthy gang on nodes of its own. It goes through:
* `review`: the webhook judges every object it registers a kind for, against a view built
  from the cluster (and the review's own JSON parser, on the exact bytes);
* `cycle`: the scheduler's state takes every object and runs one cycle;
* `read`: the live read path (`controller.kube`) reads each object as the API server sends it,
  in a list and as watch events, plain and made hostile as only JSON text can be (a
  `managedFields[].fieldsV1` or an unknown field nested 600 to 20,000 levels, integers of 19 to
  5,000 digits), and the webhook's parser reads the same texts;
* `simulate`, `validate`, `translate-volcano|koordinator|kueue`, `explain`: the CLI's own entry
  points on the cluster as a file (simulate expands LWS and Jobs into pods);
* `whatif`: the ui's what-if, the cluster's objects beside its jobs pasted as text.
A failure is any exception escaping a surface, a gang whose attempt the cycle had to catch
(`Code.ERROR`), a review denied without a field, the ordinary gang left unbound, an object
the read path should keep (only its fieldsV1 too deep) left out, a Python exception's text in
what a command prints or answers. A call over `--budget` seconds is stopped and counted apart
(`over_budget`). Failures are printed with the seed and example that reproduce them (no
shrinking: the run goes on; `--finds DIR` keeps each failing example's objects).

    .venv/bin/python hack/fuzz.py [--minutes 10] [--seed N] [--examples-per-seed 20] [--budget 60]

Last line: `summary: seed=<n> seeds=<n> scenarios=<n> crashes=<n> slowest_ms=<x> failures=<n>
reviews=<n> cycles=<n> worst_review_ms=<x> worst_cycle_ms=<y> <surface>=<calls>/<slowest ms> ...`:
`scenarios` are the clusters drawn, `crashes` the exceptions that escaped a surface plus the
gangs whose attempt the cycle had to catch, `failures` those and the other failures above,
`slowest_ms` the slowest call of any surface, `<surface>=<calls>/<slowest ms>` each surface's
calls and its slowest, `over_budget` the calls stopped at the budget. Exit status 1 when
anything failed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402
from hypothesis.errors import HypothesisWarning  # noqa: E402

from controller import kube as kube_mod  # noqa: E402
from controller.errors import TransportError, UnreadableObjectError  # noqa: E402
from controller.placer.cycle import GangTiming, SchedulingCycle  # noqa: E402
from controller.placer.framework import Code  # noqa: E402
from controller.resources import PODS  # noqa: E402
from tests.strategies.feed import placer_state  # noqa: E402
from tests.strategies.objects import OrdinaryGang, hostile_clusters, ordinary_gangs  # noqa: E402
from topobridge import cmd_explain, cmd_simulate, cmd_translate, cmd_validate, logs  # noqa: E402
from topobridge.inputs import Snapshot  # noqa: E402
from topobridge.ui import whatif  # noqa: E402
from translations import jsontext  # noqa: E402
from webhooks.admission import MalformedReview, object_with_namespace, parse_review  # noqa: E402
from webhooks.rules import ClusterState, registry  # noqa: E402

SERVED = ("topobridge", "koord-scheduler", "volcano")
Obj = dict[str, Any]


class Run:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []
        self.crashes = 0
        self.worst_review = 0.0
        self.worst_cycle = 0.0
        self.slowest: Counter[str] = Counter()
        """Per surface: its slowest call, in seconds."""
        self.budget = 60.0
        self.over_budget: Counter[str] = Counter()
        self.example: list[Obj] | None = None
        """The objects of the example being run, written to `finds` when it fails."""
        self.finds: Path | None = None

    def fail(self, where: str, what: str) -> None:
        self.failures.append(f"{where}: {what}")
        print(f"FAIL {where}: {what}", flush=True)
        if self.example is not None and self.finds is not None:
            found = self.finds / (re.sub(r"[^a-z0-9]+", "-", where.lower())[:60] + ".json")
            if not found.exists():
                found.write_text(json.dumps({"failure": what, "objects": self.example}))

    def reviews(self, cluster: list[Obj], where: str) -> None:
        state, _ = ClusterState.from_objects(cluster)
        for obj in cluster:
            kind = registry.for_api_version(obj["apiVersion"], obj["kind"])
            if kind is None:
                continue
            body = json.dumps(_review(kind, obj)).encode()
            started = time.perf_counter()
            try:
                decision = kind.rule(object_with_namespace(parse_review(body)), state)
            except Exception:
                self.crashes += 1
                self.fail(
                    where, f"{kind.kind} {obj['metadata']['name'][:60]}: {traceback.format_exc(limit=3)}"
                )
                continue
            self.worst_review = max(self.worst_review, time.perf_counter() - started)
            self.counts["reviews"] += 1
            if any(not e.field or e.field == "<root>" for e in decision.errors):
                self.fail(where, f"{kind.kind} denied without a field: {decision.message[:200]}")

    def cycle(self, cluster: list[Obj], ordinary: OrdinaryGang, where: str) -> None:
        started = time.perf_counter()
        try:
            state, _ = placer_state([*cluster, *ordinary.objects])
            plan = SchedulingCycle(state.view(), served=SERVED, now=0.0, timing=GangTiming()).run()
        except Exception:
            self.crashes += 1
            self.fail(where, f"scheduling cycle: {_crash()}")
            return
        self.worst_cycle = max(self.worst_cycle, time.perf_counter() - started)
        self.counts["cycles"] += 1
        for outcome in plan.outcomes.values():
            if outcome.code is Code.ERROR:  # the cycle caught it; still a bug in reading the input
                self.crashes += 1
                self.fail(where, f"gang {outcome.gang}: {outcome.message[:300]}")
        bound = {pod for b in plan.binds for pod, _ in b.pods}
        if not set(ordinary.pods) <= bound:
            outcome = plan.outcomes.get(ordinary.gang)
            self.fail(
                where,
                f"ordinary gang {ordinary.gang} not bound: {outcome.message if outcome else 'no outcome'}",
            )

    # --- the surfaces beyond the review and the cycle ---------------------------------------

    def call(self, surface: str, where: str, fn: Callable[[], Any]) -> Any:
        """`fn()` as one call of `surface`: timed, bounded by the budget, an escape is a crash."""
        started = time.perf_counter()
        try:
            with _budget(self.budget):
                return fn()
        except _OverBudget:  # slow, not broken: counted apart (explain's budget is its own issue)
            self.over_budget[surface] += 1
            print(f"SLOW {where}: {surface}: over the {self.budget:.0f} s budget", flush=True)
        except Exception:
            self.crashes += 1
            self.fail(where, f"{surface}: {_crash()}")
        finally:
            self.counts[surface] += 1
            self.slowest[surface] = max(self.slowest[surface], time.perf_counter() - started)
        return None

    def said(self, surface: str, where: str, text: str) -> None:
        """What a command printed or answered: never a traceback or a Python exception's text."""
        found = PYTHON_TEXT.search(text)
        if found:
            self.fail(
                where,
                f"{surface} printed Python's own text: ...{text[max(0, found.start() - 150) : found.end() + 80]!r}",
            )

    def commands(self, cluster: list[Obj], ordinary: OrdinaryGang, where: str) -> None:
        objects = [*cluster, *ordinary.objects]
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
        for surface, fn in _command_calls(text).items():
            out = self.call(surface, where, fn)
            if out is not None:
                self.said(surface, where, out)
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write(text)
            f.flush()
            for gang in _gangs_to_explain(cluster, ordinary):
                out = self.call("explain", where, lambda f=f, gang=gang: _explain(f.name, gang))
                if out is not None:
                    self.said("explain", where, out)
        jobs = [o for o in cluster if o["kind"] in JOB_KINDS]
        pasted = json.dumps({"apiVersion": "v1", "kind": "List", "items": jobs or cluster[:3]})
        answer = self.call("whatif", where, lambda: whatif.what_if(objects, pasted))
        if answer is not None:
            self.said("whatif", where, json.dumps(answer))

    def read_path(self, cluster: list[Obj], where: str, rng: random.Random) -> None:
        """Each object through `controller.kube` as the API server would send it."""
        for obj in cluster:
            for variant, text, keep in _api_texts(obj, rng):
                here = f"{where} {obj['kind']} {str(obj['metadata'].get('name'))[:40]} ({variant})"
                kept = self.call("read", here, lambda text=text: _read(text))
                if kept is False and keep:
                    self.fail(here, "left out although only its managedFields were too deep")
                self.call("read", here, lambda text=text: _review_text(text))


PYTHON_TEXT = re.compile(
    r"Traceback \(most recent|RecursionError|maximum recursion depth|Exceeds the limit \(\d+ digits\)"
    r"|invalid literal for int\(\)|object has no attribute|unsupported operand|MemoryError"
    r"|KeyError|IndexError|TypeError|AttributeError|ZeroDivisionError|OverflowError"
)
"""What only a Python exception says; a user must never be shown it."""
JOB_KINDS = ("Job", "LeaderWorkerSet", "PodGroup")


def _command_calls(text: str) -> dict[str, Callable[[], str]]:
    def cli(fn: Callable[..., int], *args: Any, **kw: Any) -> str:
        out, err = io.StringIO(), io.StringIO()
        fn(*args, out=out, err=err, stdin=io.StringIO(text), **kw)
        return out.getvalue()[-20_000:] + err.getvalue()

    calls: dict[str, Callable[[], str]] = {
        "simulate": lambda: cli(cmd_simulate.run, cmd_simulate.Source(["-"]), output="json"),
        "validate": lambda: cli(cmd_validate.run, ["-"], cluster_state=None),
    }
    for target in cmd_translate.TARGETS:
        options = cmd_translate.TranslateOptions(to=target)
        calls[f"translate-{target}"] = lambda o=options: cli(cmd_translate.run, ["-"], o)
    return calls


def _gangs_to_explain(cluster: list[Obj], ordinary: OrdinaryGang) -> list[str]:
    """The ordinary gang and the first hostile PodGroup, by the name `explain` takes."""
    gangs = [ordinary.gang.split(":", 1)[1]]
    for obj in cluster:
        if obj["kind"] == "PodGroup":
            meta = obj["metadata"]
            gangs.append(f"{meta.get('namespace', 'default')}/{meta['name']}")
            break
    return gangs


def _explain(path: str, gang: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    cmd_explain.run(gang=gang, snapshot=Snapshot((path,)), out=out, err=err)
    return out.getvalue()[-20_000:] + err.getvalue()


def _api_texts(obj: Obj, rng: random.Random) -> Iterator[tuple[str, bytes, bool]]:
    """The object's JSON as the API server sends it, then hostile variants only JSON text can
    hold: (what it is, the text, whether the read path must keep the object)."""
    plain = json.dumps(obj).encode()
    yield "plain", plain, True
    depth = rng.choice([600, 1_025, 1_100, 5_000, 20_000])
    deep = b'{"f:a":' * depth + b"{}" + b"}" * depth
    head, meta_rest = plain.split(b'"metadata": {', 1)
    managed = b'"managedFields": [{"manager": "m", "operation": "Update", "fieldsV1": ' + deep + b"}]"
    managed += b"" if meta_rest.startswith(b"}") else b", "
    yield f"fieldsV1 {depth} deep", head + b'"metadata": {' + managed + meta_rest, True
    yield f"a field {depth} deep", plain[:-1] + b', "zz": ' + deep + b"}", False
    digits = rng.choice([19, 20, 300, 4_301, 5_000])
    # The API server stores no number float64 cannot hold (about 308 digits); past 4,300 digits
    # Python cannot read the text at all, and the read fails whole (retried), never crashes.
    yield f"an integer of {digits} digits", plain[:-1] + b', "zz": ' + b"9" * digits + b"}", digits < 4_300


def _read(text: bytes) -> bool:
    """The text as a watch event and as a list's item: whether the object was kept."""
    res = PODS
    kept = True
    for etype in ("ADDED", "MODIFIED"):
        line = b'{"type": "' + etype.encode() + b'", "object": ' + text + b"}"
        try:
            event = kube_mod._watch_event(line, res, "/api/v1/pods")
        except TransportError:
            return False  # the whole text unreadable (an integer past 4,300 digits): retried
        kept = event is not None and event.type == etype
    listing = b'{"kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": [' + text + b"]}"
    try:
        doc, cut = jsontext.loads_bounded(listing)
    except ValueError:
        return False
    if cut:
        try:
            kube_mod._settle(doc, res, "GET /api/v1/pods")
        except UnreadableObjectError:
            return False
    return kept and len(doc["items"]) == 1


def _review_text(text: bytes) -> None:
    body = b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u",'
    body += b' "kind": {"group": "", "version": "v1", "kind": "Pod"}, "operation": "CREATE", "object": '
    with contextlib.suppress(MalformedReview):
        parse_review(body + text + b"}}")


class _OverBudget(Exception):
    pass


@contextlib.contextmanager
def _budget(seconds: float) -> Iterator[None]:
    """SIGALRM ends a call that takes longer than `seconds` (the run goes on); it repeats each
    second, since an exception raised inside a gc callback is dropped by the interpreter."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise _OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _crash() -> str:
    """The exception being handled, on one line, with the frame that raised it."""
    exc = sys.exc_info()[1]
    assert exc is not None
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = f"{Path(frame.filename).name}:{frame.lineno} {frame.name}"
    return f"{type(exc).__name__} at {where}: {str(exc)[:200]}"


def _review(kind: registry.Kind, obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    request: Obj = {
        "uid": "00000000-0000-4000-8000-000000000001",
        "kind": {"group": kind.group, "version": kind.versions[0], "kind": kind.kind},
        "resource": {"group": kind.group, "version": kind.versions[0], "resource": kind.resource},
        "operation": "CREATE",
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "object": obj,
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def _one_seed(run: Run, seed: int, examples: int, deadline: float) -> None:
    """`examples` clusters drawn from `seed`; raises TimeoutError past `deadline`."""
    drawn = Counter[str]()

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(hostile_clusters(max_depth=1200), ordinary_gangs())
    def one(cluster: list[Obj], ordinary: OrdinaryGang) -> None:
        drawn["n"] += 1
        where = f"seed {seed} example {drawn['n']}"
        run.counts["examples"] += 1
        run.example = [*cluster, *ordinary.objects]
        run.reviews(cluster, where)
        run.cycle(cluster, ordinary, where)
        run.read_path(cluster, where, random.Random(f"{seed}/{drawn['n']}"))
        run.commands(cluster, ordinary, where)
        if time.monotonic() > deadline:
            raise TimeoutError

    one()


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--examples-per-seed", type=int, default=20)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds one call may take")
    parser.add_argument("--finds", type=Path, default=None, help="write each failing example here")
    args = parser.parse_args()
    logs.configure(level="critical", json_output=True)  # the read path warns per hostile object
    warnings.filterwarnings("ignore", category=HypothesisWarning)  # reprs of 200 KiB annotations
    first = args.seed if args.seed is not None else random.randrange(2**32)
    print(f"seed={first}", flush=True)
    deadline = time.monotonic() + args.minutes * 60
    run = Run()
    run.budget = args.budget
    if args.finds is not None:
        args.finds.mkdir(parents=True, exist_ok=True)
        run.finds = args.finds
    current = first
    while time.monotonic() < deadline:
        with contextlib.suppress(TimeoutError):
            _one_seed(run, current, args.examples_per_seed, deadline)
        current += 1
    slowest = max([run.worst_review, run.worst_cycle, *run.slowest.values()])
    surfaces = " ".join(f"{k}={run.counts[k]}/{v * 1e3:.0f}ms" for k, v in sorted(run.slowest.items()))
    print(
        f"summary: seed={first} seeds={current - first} scenarios={run.counts['examples']} "
        f"crashes={run.crashes} slowest_ms={slowest * 1e3:.1f} "
        f"failures={len(run.failures)} reviews={run.counts['reviews']} cycles={run.counts['cycles']} "
        f"worst_review_ms={run.worst_review * 1e3:.1f} worst_cycle_ms={run.worst_cycle * 1e3:.1f} "
        f"{surfaces} over_budget={sum(run.over_budget.values())}"
        + "".join(f" over_budget_{k}={v}" for k, v in sorted(run.over_budget.items()))
    )
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
