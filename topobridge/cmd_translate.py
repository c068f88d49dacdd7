"""`topobridge translate [-f] FILE... [-R] [--to volcano|koordinator|kueue|upstream] [--kueue-topology FILE] [--strict]`

Reads Kubernetes objects (YAML or JSON documents, a `kind: List` as `kubectl get -o yaml` prints
them, directories with -R, - for standard input), writes the objects it made to stdout and the
translation report (carried over / defaulted / refused) to stderr. Only what it made is
written: the objects it read for context (Nodes, a ClusterNetworkTopology, leader pods) are not
echoed back unless it changed them, and statuses are left to the controllers that own them.
Nothing at all is written when any object could not be read or translated, so a pipe into
`kubectl apply -f -` never applies half a translation.

--to volcano (default):
  LeaderWorkerSet             -> one PodGroup per group (needs its leader pods, or --revision)
  Koordinator PodGroup / pods -> Volcano PodGroup (GangGroups: one), and the member pods patched
  ClusterNetworkTopology      -> HyperNodes (with the Nodes); likewise a Kueue Topology, or,
                                 when no other description is given, the Nodes' topograph
                                 (v1.0, v0.x) and GPU Feature Discovery nvidia.com/gpu.clique labels
  batch/v1 Job (gpu.topology/*) -> PodGroup, its pod template pointed at it (--gpu-pack-tier,
                                 --gpu-nvlink-label); what Volcano cannot hold is refused
  batch/v1 Job (kueue.x-k8s.io/podset-* on its template) -> PodGroup, its template pointed at it
                                 (levels -> tiers by the Kueue Topology: --kueue-topology FILE or
                                 the one Topology in the input)
  Volcano Job                 -> the PodGroup Volcano's job controller makes for it
--to koordinator:
  Volcano PodGroup            -> scheduling.sigs.k8s.io PodGroup + gang annotations, pods patched
  LeaderWorkerSet, Volcano Job -> through their Volcano PodGroups
  HyperNodes                  -> ClusterNetworkTopology `default` + the Nodes relabelled
--to kueue:
  HyperNodes                  -> Kueue Topology `default` + the Nodes relabelled
  batch/v1 Job + the Volcano PodGroup its template joins -> the Job with Kueue's TAS annotations

--to upstream (Kubernetes' own scheduling.k8s.io gang API; --kubernetes-version 1.35|1.36|1.37):
  everything --to volcano makes a PodGroup of, and Volcano PodGroups -> a v1beta1 PodGroup (1.37),
                                 a v1alpha2 PodGroup (1.36) or a v1alpha1 Workload (1.35); pods
                                 and Job templates get spec.schedulingGroup (spec.workloadRef)
Kubernetes' PodGroups (and 1.35 Workloads) translate --to volcano, koordinator and kueue through
the Volcano PodGroup they make; their pods (spec.schedulingGroup) are patched to join it.

Every field a target cannot hold is named on a `refused` report line; --strict makes any such
line fail the translation (exit 1, nothing written).

Output: yaml (default: YAML documents, what `kubectl apply -f -` takes), json (one object, or a
`kind: List`), name (`kind.group/name` per object).

Exit status: 0 everything translated, 1 some object could not be (the error names what),
2 a file could not be read or held no objects.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from topobridge import output
from topobridge.inputs import (
    UnreadableError,
    add_filename_arguments,
    describe,
    load_objects,
    paths_of,
    read_reporting,
)
from translations.gpu import NVLINK_LABEL

EXIT_OK, EXIT_UNTRANSLATABLE, EXIT_UNREADABLE = 0, 1, 2
TARGETS = ("volcano", "koordinator", "kueue", "upstream")
KUBERNETES_VERSIONS = ("1.35", "1.36", "1.37")
FORMATS = (output.YAML, output.JSON, output.NAME)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "translate",
        help="translate gangs and topologies between LWS, Koordinator, Volcano and Kueue",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_filename_arguments(p)
    output.add_output_argument(
        p, formats=FORMATS, default=output.YAML, says="the objects made, as kubectl prints objects"
    )
    p.add_argument("--to", choices=TARGETS, default="volcano", help="target dialect (default: volcano)")
    p.add_argument(
        "--revision",
        metavar="HASH",
        help="LWS template-revision-hash for groups whose leader pod is not in the input",
    )
    p.add_argument(
        "--gpu-pack-tier",
        type=int,
        metavar="T",
        help="GPU Jobs with multi-node-policy pack stay within one domain of tier T (networkTopology hard "
        "at T); default: soft",
    )
    p.add_argument(
        "--gpu-nvlink-label",
        default=NVLINK_LABEL,
        metavar="KEY",
        help=f"node label the NVLink requirement becomes node affinity on (default: {NVLINK_LABEL})",
    )
    p.add_argument(
        "--kueue-topology",
        metavar="FILE",
        help="a Kueue Topology whose levels (widest first) map Kueue levels to HyperNode tiers; default: the "
        "Topology in the input, or (--to kueue) the one made from the HyperNodes",
    )
    p.add_argument(
        "--kubernetes-version",
        choices=KUBERNETES_VERSIONS,
        default=KUBERNETES_VERSIONS[-1],
        help="--to upstream: the release whose scheduling.k8s.io version to write (default: %(default)s)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="fail (exit 1, nothing written) when any field is not carried (a report line marked refused)",
    )
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    options = TranslateOptions(
        to=args.to,
        revision=args.revision,
        gpu=GpuOptions(pack_tier=args.gpu_pack_tier, nvlink_label=args.gpu_nvlink_label),
        kueue_topology=args.kueue_topology,
        strict=args.strict,
        kubernetes_version=args.kubernetes_version,
    )
    return run(
        paths_of(args),
        options,
        recursive=args.recursive,
        output_format=args.output,
        out=sys.stdout,
        err=sys.stderr,
    )


@dataclass(frozen=True)
class TranslateOptions:
    """What `run` translates to, and how (the command's flags)."""

    to: str = "volcano"
    revision: str | None = None
    """The LWS template revision the pods' PodGroups are named for."""
    gpu: GpuOptions | None = None
    kueue_topology: str | None = None
    """A file holding the Kueue Topology whose levels map Kueue levels to HyperNode tiers."""
    strict: bool = False
    """Any field not carried is a failure."""
    kubernetes_version: str = KUBERNETES_VERSIONS[-1]
    """--to upstream: the release whose `scheduling.k8s.io` version is written."""


def run(
    files: Sequence[str],
    options: TranslateOptions | None = None,
    *,
    out: TextIO,
    err: TextIO,
    stdin: TextIO | None = None,
    recursive: bool = False,
    output_format: str = output.YAML,
) -> int:
    """Read `files`, translate them, print the report on `err` and the objects on `out`
    (nothing when anything failed); the exit status."""
    opts = options or TranslateOptions()
    levels: list[Any] | None = None
    if opts.kueue_topology is not None:
        try:
            levels = [loc.obj for loc in load_objects(opts.kueue_topology)]
        except UnreadableError as exc:
            print(f"error: --kueue-topology {exc}", file=err)
            return EXIT_UNREADABLE
    inputs = read_reporting("translate", files, err=err, recursive=recursive, stdin=stdin)
    if inputs is None:
        return EXIT_UNREADABLE
    result = translate_objects(
        [o.obj for o in inputs.objects],
        to=opts.to,
        revision=opts.revision,
        gpu=opts.gpu,
        kueue_topology=levels,
        kubernetes_version=opts.kubernetes_version,
    )
    for line in result.report_lines:
        print(line, file=err)
    for line in result.errors:
        print(f"error: {line}", file=err)
    refused = opts.strict and result.refused
    if refused:
        print(f"error: --strict: {result.refused} field(s) not carried (the refused lines above)", file=err)
    failed = len(inputs.problems) + len(result.errors) + (1 if refused else 0)
    if failed:
        print(
            f"error: nothing written: {failed} problem(s) above; fix or leave out what they name",
            file=err,
        )
        return EXIT_UNREADABLE if inputs.problems else EXIT_UNTRANSLATABLE
    output.write_objects(result.objects, output_format, out)
    return EXIT_OK


# --- the pure part: objects in, objects + report out -----------------------------------------


@dataclass(frozen=True)
class GpuOptions:
    """How GPU-dialect Jobs translate: the tier `pack` stays within, the NVLink node label."""

    pack_tier: int | None = None
    nvlink_label: str = NVLINK_LABEL


@dataclass
class Outcome:
    """Translated objects (raw dicts, in apply order), report lines and per-object errors."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    report_lines: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    refused: int = 0
    """Report lines that name something not carried (`--strict` fails on any)."""

    def report(self, report: Any) -> None:
        """Every line of a TranslationReport, in order; its refusals counted."""
        self.report_lines.extend(report.render())
        self.refused += len(report.refused)

    def attempt(self, who: str, step: Callable[[], None]) -> None:
        """Run one translation; a TopobridgeError becomes an error line naming `who`."""
        from translations.errors import TopobridgeError

        try:
            step()
        except TopobridgeError as exc:
            message = str(exc)
            line = message if message.startswith(who) else f"{who}: {message}"
            if line not in self.errors:  # one broken object read by two steps is said once
                self.errors.append(line)


@dataclass
class Inputs:
    """The objects read, parsed into the models the translations take."""

    nodes: list[Any] = field(default_factory=list)
    pods: list[Any] = field(default_factory=list)
    raw_pods: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    raw_nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    lws: list[Any] = field(default_factory=list)
    koord_pod_groups: list[Any] = field(default_factory=list)
    volcano_pod_groups: list[Any] = field(default_factory=list)
    hypernodes: list[Any] = field(default_factory=list)
    cnts: list[Any] = field(default_factory=list)
    kueue_topologies: list[Any] = field(default_factory=list)
    jobs: list[Any] = field(default_factory=list)
    raw_jobs: list[dict[str, Any]] = field(default_factory=list)
    volcano_jobs: list[Any] = field(default_factory=list)
    priority_classes: list[Any] = field(default_factory=list)
    upstream: list[Any] = field(default_factory=list)
    """Kubernetes' own Workloads, PodGroups and CompositePodGroups (`translations.workload`)."""
    levels: Any = None
    """The Kueue level order (`kueue.LevelOrder`) from --kueue-topology or the input's Topology."""


def translate_objects(
    objects: Iterable[Any],
    *,
    to: str = "volcano",
    revision: str | None = None,
    gpu: GpuOptions | None = None,
    kueue_topology: Sequence[Any] | None = None,
    kubernetes_version: str = KUBERNETES_VERSIONS[-1],
) -> Outcome:
    """`kueue_topology`: the objects of --kueue-topology FILE (one Topology);
    `kubernetes_version`: the release `to="upstream"` writes for."""
    from topobridge import translate_upstream

    outcome = Outcome()
    inputs = _classify(objects, to, outcome)
    outcome.attempt("--kueue-topology", lambda: _level_order(inputs, kueue_topology, outcome))
    if to == "upstream":
        translate_upstream.to_upstream(inputs, revision, gpu or GpuOptions(), kubernetes_version, outcome)
        return outcome
    translate_upstream.from_upstream(inputs, to, outcome)
    if to in ("volcano", "koordinator"):
        _pods_kueue_drops(inputs, to.capitalize(), outcome)
    if to == "koordinator":
        _to_koordinator(inputs, revision, outcome)
        for job in inputs.jobs:
            outcome.report_lines.append(
                f"Job {job.key}: skipped (batch/v1 Jobs translate into Volcano and Kueue only)"
            )
    elif to == "kueue":
        _to_kueue(inputs, outcome)
    else:
        _to_volcano(inputs, revision, outcome)
        _batch_jobs(inputs, gpu or GpuOptions(), outcome)
    return outcome


def _level_order(inputs: Inputs, from_file: Sequence[Any] | None, outcome: Outcome) -> None:
    """The Kueue level order: --kueue-topology's Topology, else the input's only Topology."""
    from translations import kueue
    from translations.errors import ScenarioError

    if from_file is not None:
        found = [o for o in from_file if isinstance(o, dict) and o.get("kind") == "Topology"]
        if len(found) != 1:
            raise ScenarioError(f"holds {len(found)} Kueue Topologies; it must hold exactly one")
        inputs.levels = kueue.LevelOrder.of(kueue.Topology.parse(found[0], strict=True))
        outcome.report_lines.append(f"Kueue levels: {inputs.levels.describe()} (--kueue-topology)")
    elif len(inputs.kueue_topologies) == 1:
        inputs.levels = kueue.LevelOrder.of(inputs.kueue_topologies[0])
        outcome.report_lines.append(f"Kueue levels: {inputs.levels.describe()} (from the input)")
    elif inputs.kueue_topologies:
        names = ", ".join(t.name for t in inputs.kueue_topologies)
        outcome.report_lines.append(
            f"Kueue levels: {len(inputs.kueue_topologies)} Topologies ({names}): choose one with --kueue-topology"
        )


def _batch_jobs(inputs: Inputs, options: GpuOptions, outcome: Outcome) -> None:
    """batch/v1 Jobs: the GPU dialect's or Kueue's TAS annotations, each into a PodGroup."""
    from translations import gpu_to_volcano as g2v
    from translations import kueue_to_volcano as q2v
    from translations.errors import InvalidSpecError

    for raw in inputs.raw_jobs:
        who = describe(raw)

        def one_job(raw: dict[str, Any] = raw, who: str = who) -> None:
            gpu = g2v.translate(raw, nvlink_label=options.nvlink_label, pack_tier=options.pack_tier)
            tas = q2v.job_to_volcano(raw, inputs.levels)
            if gpu is not None and tas is not None:
                raise InvalidSpecError(
                    "spec.template.metadata.annotations",
                    None,
                    "Forbidden: both gpu.topology/* and Kueue's podset-* topology annotations: one Job makes one "
                    "PodGroup; keep one dialect",
                )
            result = gpu or tas
            if result is None:
                outcome.report_lines.append(f"{who}: skipped (no gpu.topology/ or Kueue topology request)")
                return
            outcome.report(result.report)
            outcome.objects.extend([result.pod_group.to_dict(), result.job])

        outcome.attempt(who, one_job)


def _classify(objects: Iterable[Any], to: str, outcome: Outcome) -> Inputs:
    """Each object parsed into its bucket (`_kinds`); what the API server would refuse, or
    cannot be parsed, is an error; a kind with nothing to translate is reported as skipped."""
    from translations import kueue
    from translations.envelope import envelope_problems
    from translations.errors import InvalidSpecError

    inputs = Inputs()
    table = _kinds(inputs)
    for obj in objects:
        who = describe(obj)
        if not isinstance(obj, dict):
            outcome.errors.append(f"{who}: not a Kubernetes object")
            continue
        envelope = envelope_problems(obj, require_name=True)
        # What the API server (or Kueue's webhook, for TAS annotations) would refuse is no input.
        refused = envelope or [p for _, _, found in kueue.read_pod_sets(obj) for p in found]
        if refused:
            outcome.errors.append(f"{who}: " + "; ".join(f"{p.field_path}: {p.detail}" for p in refused))
            continue
        api_version = str(obj.get("apiVersion") or "")
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        entry = table.get((group, str(obj.get("kind") or ""))) or _upstream_entry(inputs, obj)
        if entry is None:
            outcome.report_lines.append(f"{who}: skipped (nothing to translate into {to.capitalize()})")
            continue
        model, bucket = entry
        try:
            parsed = _parse(model, obj)
        except InvalidSpecError as exc:
            outcome.errors.append(f"{who}: {exc}")
            continue
        bucket.append(parsed)
        _keep_raw(inputs, parsed, obj)
    return inputs


def _kinds(inputs: Inputs) -> dict[tuple[str, str], tuple[Any, list[Any]]]:
    """(apiVersion group, kind) -> (model, the bucket of `inputs` it goes into)."""
    from translations import koordinator as koord
    from translations import kueue, schedplugins, volcano, volcano_job
    from translations.core import Job, Node, Pod, PriorityClass
    from translations.lws import API_VERSION as LWS_API_VERSION
    from translations.lws import LeaderWorkerSet

    return {
        ("", "Node"): (Node, inputs.nodes),
        ("", "Pod"): (Pod, inputs.pods),
        (LWS_API_VERSION.split("/")[0], "LeaderWorkerSet"): (LeaderWorkerSet, inputs.lws),
        (koord.SIGS_GROUP, "PodGroup"): (koord.SigsPodGroup, inputs.koord_pod_groups),
        (schedplugins.GROUP, "PodGroup"): (schedplugins.XPodGroup, inputs.koord_pod_groups),
        (volcano.PODGROUP_GROUP, "PodGroup"): (volcano.PodGroup, inputs.volcano_pod_groups),
        (volcano.HYPERNODE_GROUP, "HyperNode"): (volcano.HyperNode, inputs.hypernodes),
        (koord.GROUP, "ClusterNetworkTopology"): (koord.ClusterNetworkTopology, inputs.cnts),
        (kueue.GROUP, "Topology"): (kueue.Topology, inputs.kueue_topologies),
        ("batch", "Job"): (Job, inputs.jobs),
        (volcano_job.GROUP, "Job"): (volcano_job.VolcanoJob, inputs.volcano_jobs),
        ("scheduling.k8s.io", "PriorityClass"): (PriorityClass, inputs.priority_classes),
    }


def _upstream_entry(inputs: Inputs, obj: dict[str, Any]) -> tuple[Any, list[Any]] | None:
    """Kubernetes' own gang API: the model of the object's version."""
    from translations import workload

    model = workload.model_for(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    return (model, inputs.upstream) if model is not None else None


def _parse(model: Any, obj: dict[str, Any]) -> Any:
    """The object as `model`; a LeaderWorkerSet as strictly as admission reads it, with every
    problem at once. Raises InvalidSpecError."""
    from translations.errors import raise_all
    from translations.lws import LeaderWorkerSet, read_topology_request

    if model is not LeaderWorkerSet:
        return _checked(model.parse(obj))
    parsed, _, problems = read_topology_request(obj)
    if parsed is None:
        raise_all(problems)
    return parsed


def _checked(parsed: Any) -> Any:
    """What the API server refuses in Kubernetes' own gang API is no input either."""
    from translations import workload
    from translations.errors import raise_all

    if isinstance(parsed, workload.AnyObject):
        raise_all(workload.problems(parsed))
    return parsed


def _keep_raw(inputs: Inputs, parsed: Any, obj: dict[str, Any]) -> None:
    """Pods, nodes and Jobs are written back patched: keep them as they came."""
    from translations.core import Job, Node, Pod

    if isinstance(parsed, Pod):
        inputs.raw_pods[(parsed.namespace, parsed.name)] = obj
    elif isinstance(parsed, Node):
        inputs.raw_nodes[parsed.name] = obj
    elif isinstance(parsed, Job):
        inputs.raw_jobs.append(obj)


def _default_cnt(inputs: Inputs, outcome: Outcome) -> Any:
    from translations import koordinator as koord

    chosen = None
    for cnt in inputs.cnts:
        if cnt.name == koord.CNT_DEFAULT_NAME and chosen is None:
            chosen = cnt
        else:
            outcome.report_lines.append(
                f"ClusterNetworkTopology {cnt.name}: ignored (Koordinator reads only the one named `default`)"
            )
    return chosen


def _pods_kueue_drops(inputs: Inputs, target: str, outcome: Outcome) -> None:
    from translations import kueue_to_volcano as q2v

    for pod in inputs.pods:
        report = q2v.pod_annotations_not_carried(pod, target)
        if report is not None:
            outcome.report(report)


def _to_volcano(inputs: Inputs, revision: str | None, outcome: Outcome) -> None:
    """HyperNodes from the topology descriptions, then a Volcano PodGroup per LWS group, Volcano
    Job and Koordinator gang (group), then the pods patched to join them."""
    from translations import koordinator_to_volcano as k2v
    from translations.errors import InvalidSpecError
    from translations.topology import from_hypernodes

    cnt = _default_cnt(inputs, outcome)
    _volcano_hypernodes(inputs, cnt, outcome)
    tree = from_hypernodes(inputs.hypernodes, inputs.nodes) if inputs.hypernodes else None
    pod_groups = [pg.to_dict() for _, pg in _volcano_pod_groups(inputs, revision, tree, outcome)]
    patched: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        layers = k2v.Layers.of(cnt, tree)
    except InvalidSpecError as exc:  # a chain that does not hold: an error; the gangs go on without it
        layers = k2v.Layers.of(None, tree)
        message = f"ClusterNetworkTopology {cnt.name}: {exc}"
        if message not in outcome.errors:  # said once, when its HyperNodes were made
            outcome.errors.append(message)
    for group in k2v.group_gangs(_koordinator_gangs(inputs, outcome)):

        def one_gang(group: list[k2v.KoordGang] = group) -> None:
            gang = k2v.translate_gangs(group, layers=layers)
            outcome.report(gang.report)
            pod_groups.append(gang.pod_group.to_dict())
            for patch in gang.pod_patches:
                key = (patch.namespace, patch.name)
                patched[key] = patch.apply(patched.get(key) or inputs.raw_pods[key])

        outcome.attempt(" + ".join(g.source for g in group), one_gang)
    outcome.objects.extend(pod_groups)
    outcome.objects.extend(patched.values())


def _volcano_hypernodes(inputs: Inputs, cnt: Any, outcome: Outcome) -> None:
    """HyperNodes from the ClusterNetworkTopology, the Kueue Topologies, or (neither given) the
    nodes' topology labels; one name made twice differently is an error."""
    from translations import hypernodes as hn

    made: dict[str, dict[str, Any]] = {}

    def emit_hypernodes(result: hn.HyperNodeSet) -> None:
        outcome.report(result.report)
        for h in result.hypernodes:
            body = h.to_dict()
            if h.name in made and made[h.name] != body:
                outcome.errors.append(
                    f"HyperNode {h.name}: made twice, differently, from two topology descriptions"
                )
                continue
            made[h.name] = body

    if cnt is not None:
        outcome.attempt(
            f"ClusterNetworkTopology {cnt.name}",
            lambda: emit_hypernodes(hn.from_cluster_network_topology(cnt, inputs.nodes)),
        )
    for topo in inputs.kueue_topologies:
        outcome.attempt(
            f"Topology {topo.name}", functools.partial(_kueue_hypernodes, topo, inputs.nodes, emit_hypernodes)
        )
    if cnt is None and not inputs.kueue_topologies and _has_topology_labels(inputs.nodes):
        outcome.attempt("topology node labels", lambda: emit_hypernodes(hn.from_node_labels(inputs.nodes)))
    outcome.objects.extend(made.values())


def _volcano_pod_groups(
    inputs: Inputs, revision: str | None, tree: Any, outcome: Outcome
) -> list[tuple[str, Any]]:
    """The Volcano PodGroups the input's LeaderWorkerSets and Volcano Jobs make, each with what
    it was made from."""
    from translations import lws_to_volcano as l2v
    from translations import volcano_job_to_podgroup as vj2pg

    made: list[tuple[str, Any]] = []
    for lws in inputs.lws:

        def one_lws(lws: Any = lws) -> None:
            result = l2v.translate(lws, pods=inputs.pods, revision=revision)
            outcome.report(result.report)
            made.extend((f"LeaderWorkerSet {lws.key} -> PodGroup {pg.key}", pg) for pg in result.pod_groups)

        outcome.attempt(f"LeaderWorkerSet {lws.key}", one_lws)
    for job in inputs.volcano_jobs:

        def one_job(job: Any = job) -> None:
            result = vj2pg.translate(job, priority_classes=inputs.priority_classes, tree=tree)
            outcome.report(result.report)
            made.append((f"Job {job.key} -> PodGroup {result.pod_group.key}", result.pod_group))

        outcome.attempt(f"Job {job.key}", one_job)
    return made


def _koordinator_gangs(inputs: Inputs, outcome: Outcome) -> list[Any]:
    """The gangs of the Koordinator PodGroups, then those only the pods' annotations name."""
    from translations import koordinator_to_volcano as k2v

    gangs: list[k2v.KoordGang] = []
    for pg in inputs.koord_pod_groups:
        outcome.attempt(f"PodGroup {pg.key}", functools.partial(_append_gang, gangs, pg, inputs.pods))
    annotated: list[k2v.KoordGang] = []
    outcome.attempt(
        "Koordinator gang annotations on pods", lambda: annotated.extend(k2v.gangs_from_pods(inputs.pods))
    )
    known = {g.id for g in gangs}
    return gangs + [g for g in annotated if g.id not in known]


def _to_koordinator(inputs: Inputs, revision: str | None, outcome: Outcome) -> None:
    """A ClusterNetworkTopology (and node labels) from the HyperNodes, then each Volcano
    PodGroup (given, or made from an LWS or a Volcano Job) as Koordinator's, its pods patched."""
    from translations import volcano_to_koordinator as v2k
    from translations.topology import from_hypernodes
    from translations.volcano import PodGroup

    cnt, tree = _koordinator_topology(inputs, outcome)
    if tree is None and inputs.hypernodes:
        tree = from_hypernodes(inputs.hypernodes, inputs.nodes)
    volcano_groups: list[tuple[str, PodGroup]] = [
        (f"PodGroup {pg.key}", pg) for pg in inputs.volcano_pod_groups
    ]
    volcano_groups += _volcano_pod_groups(inputs, revision, tree, outcome)
    patched: dict[tuple[str, str], dict[str, Any]] = {}
    for who, pg in volcano_groups:

        def one_group(pg: PodGroup = pg) -> None:
            result = v2k.translate(pg, pods=inputs.pods, cnt=cnt, tree=tree)
            outcome.report(result.report)
            outcome.objects.append(result.pod_group.to_dict())
            for patch in result.pod_patches:
                key = (patch.namespace, patch.name)
                patched[key] = patch.apply(patched.get(key) or inputs.raw_pods[key])

        outcome.attempt(who, one_group)
    outcome.objects.extend(patched.values())


def _koordinator_topology(inputs: Inputs, outcome: Outcome) -> tuple[Any, Any]:
    """The ClusterNetworkTopology (the one made from the HyperNodes replaces the input's) and
    the tree it describes (None when not made here)."""
    from translations import hypernodes as hn

    cnt = _default_cnt(inputs, outcome)
    tree = None
    if not inputs.hypernodes:
        return cnt, tree

    def topology() -> None:
        nonlocal cnt, tree
        result = hn.to_cluster_network_topology(inputs.hypernodes, inputs.nodes)
        outcome.report(result.report)
        if cnt is not None:
            outcome.report_lines.append(
                "ClusterNetworkTopology default: the input's own is replaced by the one made from the HyperNodes"
            )
        cnt, tree = result.cluster_network_topology, result.tree
        outcome.objects.append(cnt.to_dict())  # its status is the controller's to write
        for patch in result.node_patches:
            raw = inputs.raw_nodes.get(patch.node) or {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": patch.node},
            }
            outcome.objects.append(patch.apply(raw))

    outcome.attempt(f"{len(inputs.hypernodes)} HyperNodes", topology)
    return cnt, tree


def _to_kueue(inputs: Inputs, outcome: Outcome) -> None:
    """HyperNodes -> a Kueue Topology and node labels; batch/v1 Jobs whose template joins a Volcano
    PodGroup of the input -> the Job with Kueue's TAS annotations. Other kinds are named as skipped."""
    from translations import kueue
    from translations import kueue_to_volcano as q2v
    from translations._base import raw_annotations_at
    from translations.volcano import GROUP_NAME_ANNOTATION

    tree = None
    if inputs.hypernodes:

        def topology() -> None:
            nonlocal tree
            made = q2v.topology_from_hypernodes(inputs.hypernodes, inputs.nodes)
            outcome.report(made.report)
            tree = made.tree
            outcome.objects.append(made.topology.to_dict())
            for patch in made.node_patches:
                raw = inputs.raw_nodes.get(patch.node) or {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": patch.node},
                }
                outcome.objects.append(patch.apply(raw))
            if inputs.levels is None:
                inputs.levels = kueue.LevelOrder.of(made.topology)

        outcome.attempt(f"{len(inputs.hypernodes)} HyperNodes", topology)
    groups = {(pg.namespace, pg.name): pg for pg in inputs.volcano_pod_groups}
    used: set[tuple[str, str]] = set()
    for raw in inputs.raw_jobs:
        who = describe(raw)
        meta = raw.get("metadata") or {}
        key = (
            str(meta.get("namespace") or ""),
            str(raw_annotations_at(raw, ("spec", "template", "metadata")).get(GROUP_NAME_ANNOTATION)),
        )
        pg = groups.get(key)
        if pg is None:
            outcome.report_lines.append(
                f"{who}: skipped (its template joins no Volcano PodGroup of the input)"
            )
            continue
        used.add(key)

        def one_job(raw: dict[str, Any] = raw, pg: Any = pg) -> None:
            result = q2v.job_to_kueue(raw, pg, inputs.levels, tree)
            outcome.report(result.report)
            outcome.objects.append(result.job)

        outcome.attempt(who, one_job)
    skipped = [
        *(
            (
                f"PodGroup {pg.key}",
                "Kueue's annotations live on a pod template: give the Job whose template joins it",
            )
            for key, pg in groups.items()
            if key not in used
        ),
        *((f"Job {j.key}", "Kueue manages no Volcano Job") for j in inputs.volcano_jobs),
        *(
            (f"LeaderWorkerSet {w.key}", "its topology is not translated into Kueue's annotations")
            for w in inputs.lws
        ),
        *(
            (f"PodGroup {g.key}", "Koordinator gangs are not translated into Kueue")
            for g in inputs.koord_pod_groups
        ),
    ]
    outcome.report_lines.extend(f"{who}: skipped ({why})" for who, why in skipped)


def _kueue_hypernodes(topo: Any, nodes: list[Any], emit: Callable[[Any], None]) -> None:
    from translations import hypernodes as hn

    emit(hn.from_kueue_topology(topo, nodes))


def _append_gang(gangs: list[Any], pg: Any, pods: list[Any]) -> None:
    from translations import koordinator_to_volcano as k2v

    gangs.append(k2v.gang_from_pod_group(pg, pods))


def _has_topology_labels(nodes: Iterable[Any]) -> bool:
    from translations.topology import carries_topology_labels

    return any(carries_topology_labels(n) for n in nodes)
