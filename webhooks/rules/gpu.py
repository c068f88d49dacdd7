"""The GPU dialect's `gpu.topology/*` annotations on batch/v1 Jobs (and their pod templates)
and on Pods.

Every problem is reported at once, as field errors naming the annotation: enumerations,
integers >= 1, booleans, a key given differently on the Job and its template, and what the
request contradicts in the Job's own size (`min-gpus-per-node` above its GPUs in all, `spread`
with fewer `max-nodes` than pods). With the cluster in view: `min-gpus-per-node` above every
node's GPUs, and `max-nodes` nodes of the largest GPU node too small for the Job's GPUs.

Warnings: `gpu.topology/` keys the dialect does not define (a typo would otherwise do nothing)
and values only the kubelet and the device plugin can honour inside a node (`single-numa`,
`min-bandwidth`, ...): topobridge places whole pods on nodes, it does not pick the GPUs.
"""

from __future__ import annotations

from typing import Any

from translations import gpu
from translations.errors import render_value
from webhooks.rules import fielderrors as fe
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import ALLOW, Decision

NODE_LOCAL_WARNING = (
    "is honoured inside the node by the kubelet's Topology Manager and the GPU device plugin, "
    "not by topobridge's placement"
)


def validate(obj: Any, state: ClusterState) -> Decision:
    """A Job (its own and its template's annotations) or a Pod (its own)."""
    layers = gpu.annotation_layers(obj)
    if not any(gpu.has_annotations(a) for _, a in layers):
        return ALLOW  # the common case: not a GPU-dialect object
    request, problems = gpu.topology_request(obj)
    errors = [fe.from_spec_error(p) for p in problems]
    warnings = [
        f"{prefix}[{key}]: not a {gpu.PREFIX} annotation topobridge knows "
        f"(known: {', '.join(render_value(k) for k in gpu.KEYS)})"
        for prefix, a in layers
        for key in gpu.unknown_keys(a)
    ]
    if request is not None:
        warnings += [f"{request.path(key)}: {NODE_LOCAL_WARNING}" for key in request.node_local]
        if state.known and not errors:
            workload = gpu.workload_of(obj) if obj.get("kind") == "Job" else None
            gpus = list(state.node_gpus.values())
            errors += [fe.from_spec_error(p) for p in gpu.cluster_problems(request, workload, gpus)]
    return Decision.of(errors, warnings)
