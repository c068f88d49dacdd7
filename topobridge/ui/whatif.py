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
   snapshot (the same preparation the run starts from). Victims are the job's when their
   DisruptionTarget condition names one of its pods as the trigger; the run's other
   evictions (other waiting gangs placed meanwhile) are listed apart.

`settled(objects)` is `--from FILE --simulate`: the scenario's objects as they are once
`simulate` has run it (pods on their final nodes, victims gone, nominations and the waiting
gangs' messages written where the API server would keep them).

Bad input never raises: the answer is `{"error": ...}` naming what is wrong.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import Any

from controller.placer.budgets import budgets_from
from controller.placer.explain import explain, render
from controller.placer.scenario import Prepared, Scenario, SimulationResult, load_scenario, prepare, simulate
from translations.errors import TopobridgeError
from translations.gangs import Gang
from translations.topology import natural_key

PASTED = "the pasted job"
TRIGGER = re.compile(r"triggerpod: (\S+)$")
"""The end of the DisruptionTarget message a victim gets (status.md): the preemptor's pod."""
MAX_TEXT = 1 << 20
"""The largest text read (1 MiB): a job, not a cluster."""


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


def what_if(objects: Sequence[Mapping[str, Any]], text: str) -> dict[str, Any]:
    """Where the job in `text` would land among `objects`, or why not (module docstring)."""
    try:
        pasted, sources = read_text(text)  # its ValueErrors are its own sentences
    except ValueError as exc:
        return {"error": str(exc)}
    try:
        job = load_scenario(pasted, sources=sources)
    except TopobridgeError as exc:  # names the document, the object and the field
        return {"error": str(exc)}
    mine = {p.key for p in job.pods}
    if not mine:
        kinds = sorted({str(o.get("kind")) for o in pasted})
        return {
            "error": f"{PASTED}: makes no pods ({', '.join(kinds)}): paste the job's pods with its "
            "PodGroup, or a kind the simulator expands into pods",
            "warnings": job.warnings,
        }
    taken = sorted(mine & _pod_keys(objects), key=natural_key)
    if taken:
        return {"error": f"{PASTED}: pod {taken[0]}: already exists in the cluster: rename the job"}
    together = [*objects, *pasted]
    labels = [f"cluster object {i + 1}" for i in range(len(objects))] + sources
    sc = load_scenario(together, sources=labels, lenient=True)
    prep = prepare(sc)
    result = simulate(sc)
    gangs = [g for g in prep.gangs() if any(p.key in mine for p in g.pods)]
    explain = _Explainer(sc, prep)
    out = [_gang_answer(g, result, explain) for g in gangs]
    for_job = {v for v in result.evicted if _trigger(result.conditions.get(v)) in mine}
    return {
        "gangs": out,
        "evicted": sorted(for_job, key=natural_key),
        "evictedForOthers": sorted(set(result.evicted) - for_job - mine, key=natural_key),
        "warnings": [w for w in result.warnings if PASTED in w] + job.warnings,
    }


def _trigger(condition: Mapping[str, str] | None) -> str:
    """The pod a victim's DisruptionTarget condition names as the preemptor's trigger."""
    found = TRIGGER.search((condition or {}).get("message", ""))
    return found.group(1) if found else ""


class _Explainer:
    """`explain` of one gang after another on the first cycle's snapshot: the budgets are
    counted once, not per gang (a job of lone pods asks once per pod)."""

    def __init__(self, sc: Scenario, prep: Prepared) -> None:
        self.snapshot = prep.snapshot
        self.budgets = budgets_from(sc.pdbs, prep.snapshot)

    def __call__(self, gang: Gang) -> dict[str, Any]:
        found = explain(gang, self.snapshot, self.budgets)
        return {"explanation": found.to_dict(), "text": render(found)}


def _gang_answer(gang: Gang, result: SimulationResult, explainer: _Explainer) -> dict[str, Any]:
    key, pods = gang.key, [p.key for p in gang.pods]
    binds = {p: result.bound[p] for p in sorted(pods, key=natural_key) if p in result.bound}
    nominated = {p: result.nominated[p] for p in pods if p in result.nominated and p not in binds}
    answer: dict[str, Any] = {"gang": key, "pods": len(pods), "binds": binds, "nominated": nominated}
    if key in result.gangs:
        domain, tier = result.gangs[key]
        answer.update(placed=True, domain=domain, tier=tier)
        return answer
    answer.update(placed=False, message=result.unschedulable.get(key, ""))
    answer.update(explainer(gang))
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
