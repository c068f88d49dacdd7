"""What if this job were submitted now: a pasted job, run through the scheduler's own cycle
beside the cluster's objects (pure: objects and text in, JSON-able data out).

`what_if(objects, text)`:
1. reads the text as kubectl reads a file (YAML or JSON, several documents, `kind: List`);
2. reads the pasted objects alone, strictly, as `simulate` reads a file (`load_scenario`): a
   bad object is an error naming the document, the object and the field; the pods they make
   (a PodGroup and its pods; any kind `load_scenario` expands into pods, such as an LWS, a
   Volcano Job or a batch/v1 Job once it does) are the job's pods. Pasted pods that the cluster
   already holds are refused (a what-if asks about a new job);
3. runs `simulate` on the cluster's objects and the pasted ones together, to quiescence, and
   reports per gang of the job: where it lands (its binds, the domain and tier) and whom it
   evicts, or why not: the run's last message and `explain`'s answer on the first cycle's
   snapshot (the same preparation the run starts from), for the first `MAX_EXPLAINED` gangs
   of the job that would wait, in queue order (a warning says how many more wait: each
   explanation is an attempt and its suggestions' checks, and a job of lone pods is thousands
   of gangs, so the what-if stays within what `simulate` costs). Victims are the job's when their
   DisruptionTarget condition names one of its pods as the trigger; the run's other
   evictions (other waiting gangs placed meanwhile) are listed apart.

`settled(objects)` is `--from FILE --simulate`: the scenario's objects as they are once
`simulate` has run it (pods on their final nodes, victims gone, nominations and the waiting
gangs' messages written where the API server would keep them).

`progress` (a `Progress`) is told each step as it starts, for a page showing a long run (at
10,000 nodes a what-if takes seconds): reading the job, reading the cluster with it, the
scheduling cycle run to quiescence, explaining a gang that would wait.

Bad input never raises: the answer is `{"error": ...}` naming what is wrong.
"""

from __future__ import annotations

import io
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from controller.placer.scenario import Prepared, Scenario, SimulationResult, load_scenario, prepare, simulate
from translations.errors import TopobridgeError
from translations.gangs import Gang
from translations.topology import natural_key

PASTED = "the pasted job"
TRIGGER = re.compile(r"triggerpod: (\S+)$")
"""The end of the DisruptionTarget message a victim gets (status.md): the preemptor's pod."""
MAX_TEXT = 1 << 20
"""The largest text read (1 MiB): a job, not a cluster."""
MAX_EXPLAINED = 20
"""Gangs of the job that would wait which the what-if explains: the first, in queue order."""


class Progress:
    """The step a what-if is at, written by the worker and read by the server (a lock: two
    threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._step = ""
        self._running = False

    def step(self, text: str) -> None:
        with self._lock:
            if not self._running:
                self._started, self._running = time.monotonic(), True
            self._step = text

    def done(self) -> None:
        with self._lock:
            self._running = False

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            return {
                "running": self._running,
                "step": self._step,
                "seconds": round(time.monotonic() - self._started, 1) if self._running else 0,
            }


def read_text(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The objects in `text` and where each came from (`the pasted job document 2`)."""
    from topobridge.inputs import STDIN, UnreadableError, load_objects

    if len(text) > MAX_TEXT:
        raise ValueError(f"{PASTED}: {len(text)} characters: at most {MAX_TEXT} are read")
    try:
        located = list(load_objects(STDIN, stdin=io.StringIO(text)))
    except UnreadableError as exc:
        raise ValueError(str(exc).replace("standard input", PASTED, 1)) from None
    objects = [loc.obj for loc in located]
    sources = [loc.source.replace("standard input", PASTED, 1) for loc in located]
    if not objects:
        raise ValueError(f"{PASTED}: no objects: paste a job (YAML or JSON), e.g. a PodGroup and its pods")
    return objects, sources


def what_if(
    objects: Sequence[Mapping[str, Any]], text: str, *, progress: Progress | None = None
) -> dict[str, Any]:
    """Where the job in `text` would land among `objects`, or why not (module docstring)."""
    step = progress.step if progress is not None else (lambda _text: None)
    step("reading the job")
    try:
        pasted, sources = read_text(text)  # its ValueErrors are its own sentences
    except ValueError as exc:
        return {"error": str(exc)}
    step(f"reading the cluster's {len(objects):,} objects with the job's {len(pasted):,}")
    try:
        job, sc = with_job(objects, pasted, sources)
    except JobError as exc:
        return {"error": str(exc), **({"warnings": exc.warnings} if exc.warnings else {})}
    mine = {p.key for p in job.pods}
    prep = prepare(sc)
    step(f"running the scheduling cycle to quiescence ({len(sc.nodes):,} nodes, {len(sc.pods):,} pods)")
    result = simulate(sc)
    gangs = [g for g in prep.gangs() if any(p.key in mine for p in g.pods)]
    waiting = [g for g in gangs if g.key not in result.gangs]
    if waiting:
        who = waiting[0].key if len(waiting) == 1 else f"{len(waiting):,} gangs of the job"
        if len(waiting) > MAX_EXPLAINED:
            who = f"the first {MAX_EXPLAINED} of the {len(waiting):,} gangs of the job that"
        step(f"explaining why {who} would wait")
    explained = _explained(sc, prep, waiting)
    out = [_gang_answer(g, result, explained.get(g.key, {})) for g in gangs]
    for_job = {v for v in result.evicted if _trigger(result.conditions.get(v)) in mine}
    return {
        "gangs": out,
        "evicted": sorted(for_job, key=natural_key),
        "evictedForOthers": sorted(set(result.evicted) - for_job - mine, key=natural_key),
        "warnings": [w for w in result.warnings if PASTED in w] + job.warnings + _unexplained(waiting),
    }


def _unexplained(waiting: Sequence[Gang]) -> list[str]:
    """What the answer leaves unexplained (`MAX_EXPLAINED`), said once."""
    if len(waiting) <= MAX_EXPLAINED:
        return []
    return [
        f"{PASTED}: {len(waiting):,} of its gangs would wait; the first {MAX_EXPLAINED} in queue order "
        f"are explained, the other {len(waiting) - MAX_EXPLAINED:,} show the run's message "
        "(`topobridge explain GANG --from-cluster -f JOB` explains any one)"
    ]


class JobError(ValueError):
    """The job cannot be asked about: the message names what is wrong (and the warnings its
    objects gave, when it makes no pods)."""

    def __init__(self, message: str, warnings: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.warnings = list(warnings)


def with_job(
    objects: Sequence[Mapping[str, Any]], job: Sequence[Mapping[str, Any]], sources: Sequence[str]
) -> tuple[Scenario, Scenario]:
    """The job read alone, strictly, and the cluster's objects with it (read leniently): what
    the what-if box and `simulate`/`explain --from-cluster -f JOB` run. JobError when the job
    has a bad object (naming the document, the object and the field), makes no pods, or names
    a pod the cluster already holds."""
    what = sources[0].split(" document ", 1)[0] if sources else PASTED
    try:
        alone = load_scenario(job, sources=sources)
    except TopobridgeError as exc:  # names the document, the object and the field
        raise JobError(str(exc)) from None
    mine = {p.key for p in alone.pods}
    if not mine:
        kinds = sorted({str(o.get("kind")) for o in job})
        raise JobError(
            f"{what}: makes no pods ({', '.join(kinds)}): give the job's pods with its "
            "PodGroup, or a kind the simulator expands into pods",
            alone.warnings,
        )
    taken = sorted(mine & _pod_keys(objects), key=natural_key)
    if taken:
        raise JobError(f"{what}: pod {taken[0]}: already exists in the cluster: rename the job")
    labels = [f"cluster object {i + 1}" for i in range(len(objects))] + list(sources)
    return alone, load_scenario([*objects, *job], sources=labels, lenient=True)


def _trigger(condition: Mapping[str, str] | None) -> str:
    """The pod a victim's DisruptionTarget condition names as the preemptor's trigger."""
    found = TRIGGER.search((condition or {}).get("message", ""))
    return found.group(1) if found else ""


def _explained(sc: Scenario, prep: Prepared, gangs: Sequence[Gang]) -> dict[str, dict[str, Any]]:
    """The cycle's answer (`cmd_explain.judge`) for the first `MAX_EXPLAINED` of `gangs` in
    queue order, asked in that order so that one walk of the cycle answers them all."""
    from controller.placer.explain import render
    from controller.placer.scenario import DEFAULT_SCHEDULERS
    from topobridge.cmd_explain import judge, walk_of

    if not gangs:
        return {}
    walk = walk_of(sc, prep, gangs[0], DEFAULT_SCHEDULERS)
    last = len(walk.queue)
    out: dict[str, dict[str, Any]] = {}
    ordered = sorted(gangs, key=lambda g: p if (p := walk.position(g)) is not None else last)
    for g in ordered[:MAX_EXPLAINED]:
        found = judge(sc, prep, g, DEFAULT_SCHEDULERS)
        out[g.key] = {"explanation": found.to_dict(), "text": render(found)}
    return out


def _gang_answer(gang: Gang, result: SimulationResult, explained: dict[str, Any]) -> dict[str, Any]:
    key, pods = gang.key, [p.key for p in gang.pods]
    binds = {p: result.bound[p] for p in sorted(pods, key=natural_key) if p in result.bound}
    nominated = {p: result.nominated[p] for p in pods if p in result.nominated and p not in binds}
    answer: dict[str, Any] = {"gang": key, "pods": len(pods), "binds": binds, "nominated": nominated}
    if key in result.gangs:
        domain, tier = result.gangs[key]
        answer.update(placed=True, domain=domain, tier=tier)
        return answer
    answer.update(placed=False, message=result.unschedulable.get(key, ""))
    answer.update(explained)
    return answer


def _pod_keys(objects: Sequence[Mapping[str, Any]]) -> set[str]:
    keys = set()
    for o in objects:
        if o.get("kind") == "Pod":
            meta = o.get("metadata") or {}
            keys.add(f"{meta.get('namespace') or 'default'}/{meta.get('name')}")
    return keys


def settled(
    objects: Sequence[Mapping[str, Any]], sources: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The scenario's objects once `simulate` has run it (module docstring). Raises
    ScenarioError, as `simulate` does, for an object it cannot read."""
    sc = load_scenario(objects, sources=sources)
    gang_of = {p.key: g.key for g in prepare(sc).gangs() for p in g.pods}
    result = simulate(sc)
    out = [dict(o) for o in objects if o.get("kind") != "Pod"]
    for pod in sc.pods:
        key = pod.key
        raw = {"apiVersion": "v1", "kind": "Pod", **pod.to_dict()}
        spec, status = dict(raw.get("spec") or {}), dict(raw.get("status") or {})
        status.pop("nominatedNodeName", None)
        if key in result.final_pods:
            spec["nodeName"] = result.final_pods[key]
        elif key in result.evicted:
            continue  # preempted: the API server has deleted it
        elif key in result.nominated:
            status["nominatedNodeName"] = result.nominated[key]
        waiting = result.unschedulable.get(gang_of.get(key, ""))
        if waiting and key not in result.final_pods:
            status["conditions"] = [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": waiting}
            ]
        out.append({**raw, "spec": spec, "status": status})
    return out
