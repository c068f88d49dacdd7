"""`translate`'s steps for Kubernetes' own gang API (`translations.workload_translate`).

`to_upstream`: what `--to volcano` makes a Volcano PodGroup of (and the input's own Volcano
PodGroups), each written at the `scheduling.k8s.io` version of `--kubernetes-version`; the pods
and Job templates that joined a Volcano PodGroup get `spec.schedulingGroup` (1.35:
`spec.workloadRef`) instead. HyperNodes are not written: upstream's topology keys are node labels.

`from_upstream`: before any other target runs, each upstream PodGroup (or 1.35 Workload group)
becomes the Volcano PodGroup it stands for, added to the input as if given, and its pods and
Job templates are marked with Volcano's group-name annotation, so that every existing
translation out of Volcano takes them as it takes Volcano's own.
"""

from __future__ import annotations

import copy
from typing import Any

from topobridge.cmd_translate import GpuOptions, Inputs, Outcome
from translations import volcano
from translations import workload_translate as w2v
from translations.core import Pod
from translations.errors import InvalidSpecError
from translations.topology import TopologyTree


def _tree(inputs: Inputs, outcome: Outcome) -> TopologyTree | None:
    """The label tree the groups are written against; a ClusterNetworkTopology whose layer
    chain does not hold (the CRD accepts one) is an error, and the groups go on without it."""
    cnt = next((c for c in inputs.cnts if c.name == "default"), None)
    try:
        return w2v.label_tree(inputs.nodes, kueue_topologies=inputs.kueue_topologies, cnt=cnt)
    except InvalidSpecError as exc:
        if cnt is None:
            raise
        message = f"ClusterNetworkTopology {cnt.name}: {exc}"
        if message not in outcome.errors:
            outcome.errors.append(message)
        return w2v.label_tree(inputs.nodes, kueue_topologies=inputs.kueue_topologies)


def _template_spec(job: dict[str, Any]) -> dict[str, Any] | None:
    template = (job.get("spec") or {}).get("template")
    spec = template.get("spec") if isinstance(template, dict) else None
    return spec if isinstance(spec, dict) else None


def from_upstream(inputs: Inputs, target: str, outcome: Outcome) -> None:
    """Kubernetes' PodGroups as Volcano's, in `inputs` (and, `--to volcano`, in the output)."""
    if not inputs.upstream:
        return
    from translations.patches import merge

    tree = _tree(inputs, outcome)
    patched: dict[tuple[str, str], dict[str, Any]] = {}
    for obj in inputs.upstream:

        def one(obj: Any = obj) -> None:
            made = w2v.to_volcano(obj, tree=tree, pods=inputs.pods)
            outcome.report(made.report)
            inputs.volcano_pod_groups.extend(made.pod_groups)
            if target == "volcano":
                outcome.objects.extend(pg.to_dict() for pg in made.pod_groups)
            for patch in made.pod_patches:
                key = (patch.namespace, patch.name)
                patched[key] = patch.apply(patched.get(key) or inputs.raw_pods[key])

        outcome.attempt(f"{obj.kind} {obj.key}", one)
    for key, raw in patched.items():
        inputs.raw_pods[key] = raw
    inputs.pods = [Pod.parse(inputs.raw_pods[(p.namespace, p.name)]) for p in inputs.pods]
    names = {(pg.namespace, pg.name) for pg in inputs.volcano_pod_groups}
    for job in inputs.raw_jobs:
        spec = _template_spec(job)
        group = (spec or {}).get("schedulingGroup") or {}
        ns = str((job.get("metadata") or {}).get("namespace") or "")
        name = group.get("podGroupName") if isinstance(group, dict) else None
        if (ns, name) in names:
            patch = {"metadata": {"annotations": {volcano.GROUP_NAME_ANNOTATION: name}}}
            job["spec"]["template"] = merge(job["spec"]["template"], patch)
    if target == "volcano":
        outcome.objects.extend(patched.values())


def to_upstream(
    inputs: Inputs, revision: str | None, gpu: GpuOptions, kubernetes_version: str, outcome: Outcome
) -> None:
    """Every Volcano PodGroup of the input or made from it, at the release's version."""
    from topobridge import cmd_translate as ct

    version = w2v.version_of(kubernetes_version)
    scratch = ct.Outcome()
    ct._to_volcano(inputs, revision, scratch)
    ct._batch_jobs(inputs, gpu, scratch)
    outcome.report_lines.extend(scratch.report_lines)
    outcome.errors.extend(scratch.errors)
    outcome.refused += scratch.refused
    tree = _tree(inputs, outcome)
    groups = [(f"PodGroup {pg.key}", pg) for pg in inputs.volcano_pod_groups]
    groups += [
        (f"PodGroup {pg.key} (made from the input)", pg)
        for pg in (volcano.PodGroup.parse(o) for o in scratch.objects if _is_volcano_pod_group(o))
    ]
    links: dict[tuple[str, str], w2v.UpstreamGroup] = {}
    for who, pg in groups:

        def one(pg: volcano.PodGroup = pg, who: str = who) -> None:
            made = w2v.from_volcano(pg, version=version, tree=tree, subject=who)
            outcome.report(made.report)
            outcome.objects.append(made.object)
            links[(pg.namespace, pg.name)] = made

        outcome.attempt(who, one)
    members = [o for o in scratch.objects if o.get("kind") in ("Pod", "Job") and not _is_volcano_pod_group(o)]
    given = {(p.namespace, p.name) for p in inputs.pods} - {
        _key(o) for o in members if o.get("kind") == "Pod"
    }
    members += [inputs.raw_pods[k] for k in sorted(given)]
    for obj in members:
        linked = _linked(obj, links)
        if linked is not None:
            outcome.objects.append(linked)
    hypernodes = sum(1 for o in scratch.objects if o.get("kind") == "HyperNode")
    if hypernodes:
        outcome.report_lines.append(
            f"{hypernodes} HyperNodes: not written (upstream's topology keys are node labels)"
        )


def _is_volcano_pod_group(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "PodGroup" and obj.get("apiVersion") == volcano.PODGROUP_API_VERSION


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _linked(obj: dict[str, Any], links: dict[tuple[str, str], w2v.UpstreamGroup]) -> dict[str, Any] | None:
    """A pod, or a Job's template, that joins a translated group through Volcano's annotation,
    joining it through the pod spec instead (None: it joins none)."""
    out = copy.deepcopy(obj)
    holder = out if out.get("kind") == "Pod" else (out.get("spec") or {}).get("template")
    if not isinstance(holder, dict):
        return None
    annotations = (holder.get("metadata") or {}).get("annotations") or {}
    name = annotations.get(volcano.GROUP_NAME_ANNOTATION)
    made = links.get((_key(obj)[0], str(name))) if name else None
    if made is None:
        return None
    del annotations[volcano.GROUP_NAME_ANNOTATION]
    if not annotations:
        del holder["metadata"]["annotations"]
    spec = holder.setdefault("spec", {})
    spec.update(made.pod_link(str(name)))
    return out
