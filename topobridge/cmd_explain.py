"""`topobridge explain [GANG] [-n NAMESPACE] [-f FILE]... [--from-cluster] [-o text|json|yaml]`:
why a gang waits, and what would let it start, as the scheduling cycle itself answers it.

The gang is judged as the scheduler judges it, in one cycle over the whole cluster: the gangs
ahead of it in the queue are attempted first and take their room; a gang whose pods name a
schedulerName topobridge does not serve is not queued (it says which); a scheduling gate or a
gang still assembling holds it before its attempt; an elastic gang placed in part says where
its first members land and why the others wait. A gang that would fit says where it lands.

For a gang that waits, per tier from single nodes up: the domain that can hold the most of its
pending pods now, and how many; what stops the rest (the Filter plugins' reasons, resources
short, the tier limit, and by field and value the limits that hold it where room would: the GPU
dialect's max-nodes and min-gpus-per-node, its pods' anti-affinity among themselves, the nodes'
pods allocatable); whether preemption could help and at what cost (its
victims, their priorities, the PodDisruptionBudgets they touch), before anything is evicted;
and single changes that would let it start, in its own dialect's fields (`spec.parallelism: 2`
for a Job, `spec.minMember: 2` for a PodGroup, the soft mode, a wider tier, the limit that holds
it lifted), each checked by
running the attempt again on the changed gang.

The snapshot is named as `simulate`, `ui` and `tree` name it: `-f FILE` (repeatable, together one
snapshot; `--from FILE` is its older spelling) reads files only; without -f, or with
`--from-cluster`, the live cluster is read through the kubeconfig, read-only (only `list`
calls); `--from-cluster -f JOB.yaml` adds a job not yet submitted to it (the ui's what-if) and
explains that job's gangs. GANG is NAME, NAMESPACE/NAME or the gang's key
(`volcano:NAMESPACE/NAME`), or the object that owns its pods: an LWS's name (every group) or
NAME-INDEX (one group), a Volcano Job's or a batch/v1 Job's name. Without GANG: the gangs of the
last file's first PodGroup or job; with `--from-cluster -f JOB`, every gang of the job.

Exit status: 0 explained, 1 no such gang, 2 the cluster or a file could not be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from topobridge import output
from topobridge.inputs import Snapshot, add_snapshot_arguments

if TYPE_CHECKING:
    import weakref

    from controller.placer.cycle import SchedulingCycle
    from controller.placer.explain import CycleWalk, Explanation
    from controller.placer.scenario import Prepared, Scenario
    from translations.gangs import Gang

EXIT_OK, EXIT_NO_GANG, EXIT_UNREADABLE = 0, 1, 2
FORMATS = (output.TEXT, output.JSON, output.YAML)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from topobridge.cmd_simulate import add_scheduler_names_argument

    p = sub.add_parser(
        "explain",
        help="why a gang waits and what would let it start, from the scheduling cycle itself (read-only)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "gang", nargs="?", default=None, help="NAME, NAMESPACE/NAME, the gang's key, or its LWS or Job"
    )
    p.add_argument("-n", "--namespace", default=None, help="the gang's namespace (default: any)")
    add_snapshot_arguments(p, old_from=True)
    add_scheduler_names_argument(p)
    output.add_output_argument(p, formats=FORMATS, default=output.TEXT, says="the explanation as data")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(
        gang=args.gang,
        namespace=args.namespace,
        snapshot=Snapshot.of(args),
        scheduler_names=args.scheduler_names,
        output_format=args.output,
        out=sys.stdout,
        err=sys.stderr,
    )


def run(
    *,
    gang: str | None,
    namespace: str | None = None,
    snapshot: Snapshot | None = None,
    scheduler_names: str | None = None,
    output_format: str = output.TEXT,
    out: TextIO,
    err: TextIO,
) -> int:
    from controller.placer.explain import render
    from translations.errors import TopobridgeError

    snapshot = snapshot or Snapshot()
    served = _served(scheduler_names)
    try:
        cluster, cluster_sources, files, file_sources = snapshot.read("explain")
        sc, job = _scenario(snapshot, cluster, cluster_sources, files, file_sources)
    except (OSError, ValueError, TopobridgeError) as exc:
        print(f"error: {exc}", file=err)
        return EXIT_UNREADABLE
    wanted = gang or (None if job else _first_gang_of(files, file_sources))
    if wanted is None and job is None:
        print("error: name a gang, or give -f JOB.yaml", file=err)
        return EXIT_NO_GANG
    from controller.placer.scenario import prepare

    found = explain_all(sc, prepare(sc), wanted, namespace, served=served, only=job)
    if files and not snapshot.from_cluster and not any(o.get("kind") == "Node" for o in files):
        print("warning: the files hold no Node: add --from-cluster to ask of the live cluster", file=err)
    if not found:
        what = wanted or "of the job"
        print(f"error: no gang {what}{f' in namespace {namespace}' if namespace else ''}", file=err)
        return EXIT_NO_GANG
    if output_format in (output.JSON, output.YAML):
        data: Any = found[0].to_dict() if len(found) == 1 else [e.to_dict() for e in found]
        (output.dump_json if output_format == output.JSON else output.dump_yaml)(data, out)
    else:
        out.write("\n".join(render(e) for e in found))
    return EXIT_OK


def _served(names: str | None) -> tuple[str, ...]:
    from controller.placer.scenario import DEFAULT_SCHEDULERS

    given = tuple(s.strip() for s in (names or "").split(",") if s.strip())
    return given or DEFAULT_SCHEDULERS


def _scenario(
    snapshot: Snapshot,
    cluster: Sequence[Mapping[str, Any]],
    cluster_sources: Sequence[str],
    files: Sequence[Mapping[str, Any]],
    file_sources: Sequence[str],
) -> tuple[Scenario, set[str] | None]:
    """The scenario, and with `--from-cluster -f JOB` the job's pods (only its gangs are asked
    about); the job is read as the ui's what-if reads a pasted one."""
    from controller.placer.scenario import load_scenario

    if snapshot.job:
        from topobridge.ui.whatif import with_job

        alone, sc = with_job(cluster, files, file_sources)
        return sc, {p.key for p in alone.pods}
    return load_scenario([*cluster, *files], sources=[*cluster_sources, *file_sources], lenient=True), None


def explain_objects(objects: Sequence[Mapping[str, Any]], wanted: str, namespace: str | None = None) -> Any:
    """The explanation of gang `wanted` among `objects` (None when no gang has that name)."""
    from controller.placer.scenario import load_scenario, prepare

    sc = load_scenario(objects, lenient=True)
    return explain_prepared(sc, prepare(sc), wanted, namespace)


def explain_prepared(sc: Scenario, prep: Prepared, wanted: str, namespace: str | None = None) -> Any:
    """The first gang `wanted` names, for a snapshot already read (`topobridge ui` asks one
    snapshot many times; it is not changed); None when no gang has that name."""
    found = explain_all(sc, prep, wanted, namespace)
    return found[0] if found else None


def explain_all(
    sc: Scenario,
    prep: Prepared,
    wanted: str | None,
    namespace: str | None = None,
    *,
    served: Sequence[str] | None = None,
    only: set[str] | None = None,
) -> list[Explanation]:
    """Every gang `wanted` names (an LWS names each of its groups; None: every gang), each
    judged in a cycle of its own over the whole snapshot; `only`: gangs holding one of these
    pods."""
    from controller.placer.scenario import DEFAULT_SCHEDULERS

    gangs = [
        g
        for g in prep.gangs()
        if (wanted is None or named(g, wanted, namespace))
        and (only is None or only & {p.key for p in g.pods})
    ]
    return [judge(sc, prep, g, served or DEFAULT_SCHEDULERS) for g in gangs]


def judge(sc: Scenario, prep: Prepared, gang: Gang, served: Sequence[str]) -> Explanation:
    """The cycle's answer for `gang`: a cycle, as `simulate`'s first, over a copy of the prepared
    snapshot, walked in queue order up to the gang (`walk_of`: kept for the next question)."""
    from controller.placer.explain import explain_in_walk

    return explain_in_walk(walk_of(sc, prep, gang, served), gang, served)


_WALKS: dict[tuple[int, tuple[str, ...]], tuple[weakref.ref[Prepared], CycleWalk]] = {}
"""(id of the prepared snapshot, schedulerNames served) -> the walk kept for it. A prepared
snapshot is one state (the ui builds one per model generation and never changes it); the
entry goes when the prepared snapshot does. Asked from one thread at a time (the ui's model
worker, the CLI)."""


def walk_of(sc: Scenario, prep: Prepared, gang: Gang, served: Sequence[str]) -> CycleWalk:
    """The cycle walk kept for `prep`, while it has not passed `gang` (questions in queue order
    attempt each gang once in all); else a fresh one, kept in its place."""
    import weakref

    from controller.placer.explain import CycleWalk

    key = (id(prep), tuple(served))
    kept = _WALKS.get(key)
    if kept is not None and kept[0]() is prep and kept[1].reaches(gang):
        return kept[1]
    walk = CycleWalk.of(_cycle(sc, prep, served))
    _WALKS[key] = (weakref.ref(prep, lambda _: _WALKS.pop(key, None)), walk)
    return walk


def _cycle(sc: Scenario, prep: Prepared, served: Sequence[str]) -> SchedulingCycle:
    """A fresh cycle, as `simulate`'s first, over a copy of the prepared snapshot."""
    from controller.placer.budgets import budgets_from
    from controller.placer.cluster import ClusterView
    from controller.placer.cycle import GangTiming, SchedulingCycle

    snap = prep.snapshot.clone()
    view = ClusterView(
        tree=prep.tree,
        index=prep.index,
        snapshot=snap,
        gangs={g.key: g for g in prep.gangs()},
        pending=[g.key for g in prep.gangs() if g.pending],
        budgets=budgets_from(sc.pdbs, snap),
    )
    return SchedulingCycle(view, served=served, now=0.0, timing=GangTiming())


OWNER_LABELS = ("volcano.sh/job-name", "batch.kubernetes.io/job-name", "job-name")


def named(gang: Gang, wanted: str, namespace: str | None) -> bool:
    """Whether `wanted` names the gang: its key, NAMESPACE/NAME or NAME, or (NAMESPACE/)NAME of
    the object owning its pods: an LWS (NAME: every group; NAME-INDEX: one group), a Volcano
    Job or a batch/v1 Job."""
    from translations.lws import GROUP_INDEX_LABEL, NAME_LABEL

    ns, short = gang.name.split("/", 1)
    if namespace is not None and ns != namespace:
        return False
    if "/" in wanted and not wanted.startswith(f"{ns}/") and wanted != gang.key:
        return False
    bare = wanted.split("/", 1)[1] if wanted.startswith(f"{ns}/") else wanted
    if wanted in (gang.key, gang.name) or bare == short:
        return True
    labels = (gang.pods[0].pod.metadata.labels or {}) if gang.pods else {}
    owner = labels.get(NAME_LABEL)
    if owner is not None and bare in (owner, f"{owner}-{labels.get(GROUP_INDEX_LABEL)}"):
        return True
    return any(labels.get(k) == bare for k in OWNER_LABELS)


def _first_gang_of(objects: Sequence[Mapping[str, Any]], sources: Sequence[str]) -> str | None:
    """The gang a job file names: the last file's first PodGroup or job (LWS, Volcano Job,
    batch/v1 Job)."""
    last = sources[-1].split(" document ", 1)[0] if sources else ""
    for obj, source in zip(objects, sources, strict=True):
        if source.split(" document ", 1)[0] != last:
            continue
        if obj.get("kind") in ("PodGroup", "Job", "LeaderWorkerSet"):
            meta = obj.get("metadata") or {}
            return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
    return None
