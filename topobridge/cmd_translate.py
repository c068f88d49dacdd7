"""`topobridge translate [-f] FILE... [-R] [--to volcano|koordinator] [-o yaml|json|name]`

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
  ClusterNetworkTopology      -> HyperNodes (with the Nodes); likewise a Kueue Topology, or
                                 NVIDIA topograph node labels when no other description is given
  batch/v1 Job (gpu.topology/*) -> PodGroup, its pod template pointed at it (--gpu-pack-tier,
                                 --gpu-nvlink-label); what Volcano cannot hold is refused
--to koordinator:
  Volcano PodGroup            -> scheduling.sigs.k8s.io PodGroup + gang annotations, pods patched
  LeaderWorkerSet             -> through its Volcano PodGroups
  HyperNodes                  -> ClusterNetworkTopology `default` + the Nodes relabelled

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
from topobridge.inputs import add_filename_arguments, describe, paths_of, read_reporting
from translations.gpu import NVLINK_LABEL

EXIT_OK, EXIT_UNTRANSLATABLE, EXIT_UNREADABLE = 0, 1, 2
TARGETS = ("volcano", "koordinator")
FORMATS = (output.YAML, output.JSON, output.NAME)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "translate",
        help="translate gangs and topologies between LWS, Koordinator and Volcano",
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
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(
        paths_of(args),
        to=args.to,
        revision=args.revision,
        recursive=args.recursive,
        output_format=args.output,
        gpu=GpuOptions(pack_tier=args.gpu_pack_tier, nvlink_label=args.gpu_nvlink_label),
        out=sys.stdout,
        err=sys.stderr,
    )


def run(
    files: Sequence[str],
    *,
    to: str = "volcano",
    revision: str | None = None,
    gpu: GpuOptions | None = None,
    out: TextIO,
    err: TextIO,
    stdin: TextIO | None = None,
    recursive: bool = False,
    output_format: str = output.YAML,
) -> int:
    inputs = read_reporting("translate", files, err=err, recursive=recursive, stdin=stdin)
    if inputs is None:
        return EXIT_UNREADABLE
    result = translate_objects([o.obj for o in inputs.objects], to=to, revision=revision, gpu=gpu)
    for line in result.report_lines:
        print(line, file=err)
    for line in result.errors:
        print(f"error: {line}", file=err)
    failed = len(inputs.problems) + len(result.errors)
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

    def attempt(self, who: str, step: Callable[[], None]) -> None:
        """Run one translation; a TopobridgeError becomes an error line naming `who`."""
        from translations.errors import TopobridgeError

        try:
            step()
        except TopobridgeError as exc:
            message = str(exc)
            self.errors.append(message if message.startswith(who) else f"{who}: {message}")


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


def translate_objects(
    objects: Iterable[Any], *, to: str = "volcano", revision: str | None = None, gpu: GpuOptions | None = None
) -> Outcome:
    outcome = Outcome()
    inputs = _classify(objects, to, outcome)
    if to == "koordinator":
        _to_koordinator(inputs, revision, outcome)
        for job in inputs.jobs:
            outcome.report_lines.append(
                f"Job {job.key}: skipped (the GPU dialect translates into Volcano only)"
            )
    else:
        _to_volcano(inputs, revision, outcome)
        _gpu_jobs(inputs, gpu or GpuOptions(), outcome)
    return outcome


def _gpu_jobs(inputs: Inputs, options: GpuOptions, outcome: Outcome) -> None:
    from translations import gpu_to_volcano as g2v

    for raw in inputs.raw_jobs:
        who = describe(raw)

        def one_job(raw: dict[str, Any] = raw, who: str = who) -> None:
            result = g2v.translate(raw, nvlink_label=options.nvlink_label, pack_tier=options.pack_tier)
            if result is None:
                outcome.report_lines.append(f"{who}: skipped (no gpu.topology/ request)")
                return
            outcome.report_lines.extend(result.report.render())
            outcome.objects.extend([result.pod_group.to_dict(), result.job])

        outcome.attempt(who, one_job)


def _classify(objects: Iterable[Any], to: str, outcome: Outcome) -> Inputs:
    from translations import koordinator as koord
    from translations import kueue, schedplugins, volcano
    from translations.core import Job, Node, Pod
    from translations.envelope import envelope_problems
    from translations.errors import InvalidSpecError, raise_all
    from translations.lws import API_VERSION as LWS_API_VERSION
    from translations.lws import LeaderWorkerSet, read_topology_request

    inputs = Inputs()
    # (apiVersion group, kind) -> (model, bucket)
    table: dict[tuple[str, str], tuple[Any, list[Any]]] = {
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
    }
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
        entry = table.get((group, str(obj.get("kind") or "")))
        if entry is None:
            outcome.report_lines.append(f"{who}: skipped (nothing to translate into {to.capitalize()})")
            continue
        model, bucket = entry
        parsed: Any
        try:
            if model is LeaderWorkerSet:
                # As strictly as admission reads it, with every problem at once.
                parsed, _, problems = read_topology_request(obj)
                if parsed is None:
                    raise_all(problems)
            else:
                parsed = model.parse(obj)
        except InvalidSpecError as exc:
            outcome.errors.append(f"{who}: {exc}")
            continue
        bucket.append(parsed)
        if model is Pod:
            inputs.raw_pods[(parsed.namespace, parsed.name)] = obj
        elif model is Node:
            inputs.raw_nodes[parsed.name] = obj
        elif model is Job:
            inputs.raw_jobs.append(obj)
    return inputs


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


def _to_volcano(inputs: Inputs, revision: str | None, outcome: Outcome) -> None:
    from translations import hypernodes as hn
    from translations import koordinator_to_volcano as k2v
    from translations import lws_to_volcano as l2v
    from translations.topology import from_hypernodes

    cnt = _default_cnt(inputs, outcome)
    made: dict[str, dict[str, Any]] = {}

    def emit_hypernodes(result: hn.HyperNodeSet) -> None:
        outcome.report_lines.extend(result.report.render())
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
    if cnt is None and not inputs.kueue_topologies and _has_topograph_labels(inputs.nodes):
        outcome.attempt(
            "topograph node labels", lambda: emit_hypernodes(hn.from_topograph_labels(inputs.nodes))
        )
    outcome.objects.extend(made.values())

    tree = from_hypernodes(inputs.hypernodes, inputs.nodes) if inputs.hypernodes else None
    pod_groups: list[dict[str, Any]] = []
    patched: dict[tuple[str, str], dict[str, Any]] = {}
    for lws in inputs.lws:

        def one_lws(lws: Any = lws) -> None:
            result = l2v.translate(lws, pods=inputs.pods, revision=revision)
            outcome.report_lines.extend(result.report.render())
            pod_groups.extend(pg.to_dict() for pg in result.pod_groups)

        outcome.attempt(f"LeaderWorkerSet {lws.key}", one_lws)

    gangs: list[k2v.KoordGang] = []
    for pg in inputs.koord_pod_groups:
        outcome.attempt(f"PodGroup {pg.key}", functools.partial(_append_gang, gangs, pg, inputs.pods))
    annotated: list[k2v.KoordGang] = []
    outcome.attempt(
        "Koordinator gang annotations on pods", lambda: annotated.extend(k2v.gangs_from_pods(inputs.pods))
    )
    known = {g.id for g in gangs}
    gangs += [g for g in annotated if g.id not in known]
    layers = k2v.Layers.of(cnt, tree)
    for group in k2v.group_gangs(gangs):

        def one_gang(group: list[k2v.KoordGang] = group) -> None:
            gang = k2v.translate_gangs(group, layers=layers)
            outcome.report_lines.extend(gang.report.render())
            pod_groups.append(gang.pod_group.to_dict())
            for patch in gang.pod_patches:
                key = (patch.namespace, patch.name)
                patched[key] = patch.apply(patched.get(key) or inputs.raw_pods[key])

        outcome.attempt(" + ".join(g.source for g in group), one_gang)
    outcome.objects.extend(pod_groups)
    outcome.objects.extend(patched.values())


def _to_koordinator(inputs: Inputs, revision: str | None, outcome: Outcome) -> None:
    from translations import hypernodes as hn
    from translations import lws_to_volcano as l2v
    from translations import volcano_to_koordinator as v2k
    from translations.koordinator import ClusterNetworkTopology
    from translations.topology import from_hypernodes
    from translations.volcano import PodGroup

    cnt = _default_cnt(inputs, outcome)
    tree = None
    if inputs.hypernodes:

        def topology() -> None:
            nonlocal cnt, tree
            result = hn.to_cluster_network_topology(inputs.hypernodes, inputs.nodes)
            outcome.report_lines.extend(result.report.render())
            if cnt is not None:
                outcome.report_lines.append(
                    "ClusterNetworkTopology default: the input's own is replaced by the one made "
                    "from the HyperNodes"
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
    if tree is None and inputs.hypernodes:
        tree = from_hypernodes(inputs.hypernodes, inputs.nodes)

    volcano_groups: list[tuple[str, PodGroup]] = [
        (f"PodGroup {pg.key}", pg) for pg in inputs.volcano_pod_groups
    ]
    for lws in inputs.lws:

        def one_lws(lws: Any = lws) -> None:
            result = l2v.translate(lws, pods=inputs.pods, revision=revision)
            outcome.report_lines.extend(result.report.render())
            volcano_groups.extend(
                (f"LeaderWorkerSet {lws.key} -> PodGroup {pg.key}", pg) for pg in result.pod_groups
            )

        outcome.attempt(f"LeaderWorkerSet {lws.key}", one_lws)
    patched: dict[tuple[str, str], dict[str, Any]] = {}
    final_cnt: ClusterNetworkTopology | None = cnt
    for who, pg in volcano_groups:

        def one_group(pg: PodGroup = pg) -> None:
            result = v2k.translate(pg, pods=inputs.pods, cnt=final_cnt, tree=tree)
            outcome.report_lines.extend(result.report.render())
            outcome.objects.append(result.pod_group.to_dict())
            for patch in result.pod_patches:
                key = (patch.namespace, patch.name)
                patched[key] = patch.apply(patched.get(key) or inputs.raw_pods[key])

        outcome.attempt(who, one_group)
    outcome.objects.extend(patched.values())


def _kueue_hypernodes(topo: Any, nodes: list[Any], emit: Callable[[Any], None]) -> None:
    from translations import hypernodes as hn

    emit(hn.from_kueue_topology(topo, nodes))


def _append_gang(gangs: list[Any], pg: Any, pods: list[Any]) -> None:
    from translations import koordinator_to_volcano as k2v

    gangs.append(k2v.gang_from_pod_group(pg, pods))


def _has_topograph_labels(nodes: Iterable[Any]) -> bool:
    from translations.hypernodes import TOPOGRAPH_PREFIXES

    return any(k.startswith(TOPOGRAPH_PREFIXES) for n in nodes for k in (n.metadata.labels or {}))
