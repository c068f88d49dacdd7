"""The GPU dialect: `gpu.topology/*` annotations on a batch/v1 Job, its pod template or a pod.

| annotation                            | values                                   | who enforces it              |
|---------------------------------------|------------------------------------------|------------------------------|
| `gpu.topology/policy`                 | nvlink, single-numa, best-effort, spread | nvlink: topobridge (nodes);  |
|                                       |                                          | inside a node: kubelet       |
| `gpu.topology/min-bandwidth`          | integer >= 1 (GB/s between the GPUs)     | device plugin (validated)    |
| `gpu.topology/require-nvlink`         | true, false                              | topobridge (node label)      |
| `gpu.topology/multi-node-policy`      | pack, spread, best-fit (the default)     | topobridge                   |
| `gpu.topology/max-nodes`              | integer >= 1                             | topobridge                   |
| `gpu.topology/min-gpus-per-node`      | integer >= 1                             | topobridge                   |

Which GPUs a pod gets inside its node (one NUMA node, PCIe switches, the bandwidth between
them) is decided by the kubelet's Topology Manager and the device plugin, never by a cluster
scheduler: topobridge validates those values and says so, it does not pretend to enforce them.

A Job's annotations and its pod template's are read together (where both give a key they must
agree); a pod's own annotations are read alone. The pods of one Job whose request names a
multi-node key (`multi-node-policy`, `max-nodes`, `min-gpus-per-node`) form one gang of
`parallelism` pods (`translations.gangs`), ranked by `batch.kubernetes.io/job-completion-index`.

`topology_request(obj)` is the dialect's one reader: a raw Job or Pod in, the request and every
problem found out, so admission reports them all at once. `cluster_problems` adds what only the
cluster's nodes can tell (how many GPUs a node has).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from translations._base import raw_annotations_at
from translations.core import Job, Pod, effective_requests
from translations.errors import InvalidSpecError, render_value

PREFIX = "gpu.topology/"
POLICY = PREFIX + "policy"
MIN_BANDWIDTH = PREFIX + "min-bandwidth"
REQUIRE_NVLINK = PREFIX + "require-nvlink"
MULTI_NODE_POLICY = PREFIX + "multi-node-policy"
MAX_NODES = PREFIX + "max-nodes"
MIN_GPUS_PER_NODE = PREFIX + "min-gpus-per-node"
KEYS = (POLICY, MIN_BANDWIDTH, REQUIRE_NVLINK, MULTI_NODE_POLICY, MAX_NODES, MIN_GPUS_PER_NODE)
MULTI_NODE_KEYS = (MULTI_NODE_POLICY, MAX_NODES, MIN_GPUS_PER_NODE)

Policy = Literal["nvlink", "single-numa", "best-effort", "spread"]
MultiNodePolicy = Literal["pack", "spread", "best-fit"]
POLICIES: tuple[Policy, ...] = ("nvlink", "single-numa", "best-effort", "spread")
MULTI_NODE_POLICIES: tuple[MultiNodePolicy, ...] = ("pack", "spread", "best-fit")
BOOLEANS = ("true", "false")

GPU_RESOURCE = "nvidia.com/gpu"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
"""A pod's index in an Indexed Job (annotation since 1.21, also a label since 1.28)."""
CONTROLLER_UID_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid")
"""The Job controller's label naming the Job's uid (the prefixed one since 1.27)."""
NVLINK_LABEL = "topobridge.io/gpu-nvlink"
"""Default node label saying the node's GPUs are NVLink-connected (`--gpu-nvlink-label`)."""
NOT_NVLINK_VALUES = ("", "false", "0")
"""Values of the NVLink label that mean no NVLink; any other value (`true`, a clique id) means NVLink."""

JOB_LAYERS = ("metadata.annotations", "spec.template.metadata.annotations")
_DECIMAL = re.compile(r"^[1-9][0-9]{0,9}\Z")
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class GpuTopologyRequest:
    """What one Job (or pod) asks of the GPUs it lands on; None/defaults where not given."""

    policy: Policy | None = None
    min_bandwidth: int | None = None
    require_nvlink: bool = False
    multi_node_policy: MultiNodePolicy = "best-fit"
    max_nodes: int | None = None
    min_gpus_per_node: int | None = None
    given: Mapping[str, str] = field(default_factory=dict)
    """Annotation key -> the field path it was read from (where the value was given)."""

    @property
    def nvlink(self) -> bool:
        """Only nodes whose GPUs are NVLink-connected may take the pods."""
        return self.require_nvlink or self.policy == "nvlink"

    @property
    def multi_node(self) -> bool:
        """True when a multi-node key is given: the pods of one Job form a gang."""
        return any(k in self.given for k in MULTI_NODE_KEYS)

    @property
    def node_local(self) -> tuple[str, ...]:
        """Given keys that only the kubelet and the device plugin can honour, inside a node."""
        out = [MIN_BANDWIDTH] if self.min_bandwidth is not None else []
        if self.policy in ("single-numa", "best-effort", "spread"):
            out.insert(0, POLICY)
        return tuple(out)

    def path(self, key: str) -> str:
        return self.given.get(key, f"metadata.annotations[{key}]")


@dataclass(frozen=True, slots=True)
class GpuGang:
    """A gang's GPU request with the node label that says "NVLink" in this cluster."""

    request: GpuTopologyRequest
    nvlink_label: str = NVLINK_LABEL


@dataclass(frozen=True, slots=True)
class GpuWorkload:
    """The size of a Job as a gang: how many pods run at once and the GPUs each requests."""

    pods: int
    gpus_per_pod: int

    @property
    def total_gpus(self) -> int:
        return self.pods * self.gpus_per_pod


def has_annotations(annotations: Mapping[str, Any] | None) -> bool:
    """True when any `gpu.topology/` annotation is present (the cheap test before parsing)."""
    for key in annotations or ():  # noqa: SIM110 (a loop: any() over a generator costs twice as much, on every pod)
        if isinstance(key, str) and key.startswith(PREFIX):
            return True
    return False


def topology_request(obj: Any) -> tuple[GpuTopologyRequest | None, list[InvalidSpecError]]:
    """The request of a raw Job or Pod and every problem with it (None: no `gpu.topology/` key).

    On a Job, the template's and the Job's own annotations are read together, and the request
    is checked against the Job's size (parallelism, GPUs per pod)."""
    if not isinstance(obj, dict):
        return None, []
    request, problems = read_request(annotation_layers(obj))
    if request is None or obj.get("kind") != "Job":
        return request, problems
    workload = workload_of(obj)
    if workload is not None:
        problems += workload_problems(request, workload)
    return request, problems


def annotation_layers(obj: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """(field path, annotations) where a raw object may carry the dialect: a Job's own and its
    pod template's, any other object's own."""
    if not isinstance(obj, dict):
        return []
    layers: list[tuple[str, Mapping[str, Any]]] = [(JOB_LAYERS[0], raw_annotations_at(obj, ("metadata",)))]
    if obj.get("kind") == "Job":
        layers.append((JOB_LAYERS[1], raw_annotations_at(obj, ("spec", "template", "metadata"))))
    return layers


def read_request(
    layers: Sequence[tuple[str, Mapping[str, Any]]],
) -> tuple[GpuTopologyRequest | None, list[InvalidSpecError]]:
    """Annotations read in layers (path prefix, annotations), outermost first; a key given in
    two layers must have one value. None when no layer has a `gpu.topology/` key."""
    raw: dict[str, tuple[str, str]] = {}
    problems: list[InvalidSpecError] = []
    for prefix, layer in layers:
        for key in KEYS:
            value = layer.get(key)
            if not isinstance(value, str):
                continue
            path = f"{prefix}[{key}]"
            earlier = raw.get(key)
            if earlier is not None and earlier[1] != value:
                problems.append(
                    InvalidSpecError(
                        path,
                        value,
                        f"Invalid value: {render_value(value)}: must equal {earlier[0]} "
                        f"({render_value(earlier[1])}) where both are given",
                    )
                )
            raw[key] = (path, value)
    if not raw and not any(has_annotations(a) for _, a in layers):
        return None, []

    def parsed(key: str, parse: Any) -> Any:
        if key not in raw:
            return None
        path, value = raw[key]
        try:
            return parse(path, value)
        except InvalidSpecError as exc:
            problems.append(exc)
            return None

    request = GpuTopologyRequest(
        policy=cast(Policy | None, parsed(POLICY, lambda p, v: _enum(p, v, POLICIES))),
        min_bandwidth=parsed(MIN_BANDWIDTH, _positive),
        require_nvlink=parsed(REQUIRE_NVLINK, lambda p, v: _enum(p, v, BOOLEANS) == "true") or False,
        multi_node_policy=cast(
            MultiNodePolicy,
            parsed(MULTI_NODE_POLICY, lambda p, v: _enum(p, v, MULTI_NODE_POLICIES)) or "best-fit",
        ),
        max_nodes=parsed(MAX_NODES, _positive),
        min_gpus_per_node=parsed(MIN_GPUS_PER_NODE, _positive),
        given={key: path for key, (path, _) in raw.items()},
    )
    return request, problems


def unknown_keys(annotations: Mapping[str, Any] | None) -> list[str]:
    """`gpu.topology/` keys this dialect does not define (a typo is otherwise silently ignored)."""
    return sorted(
        k for k in annotations or {} if isinstance(k, str) and k.startswith(PREFIX) and k not in KEYS
    )


def workload_of(obj: Any) -> GpuWorkload | None:
    """A raw Job's gang size and GPUs per pod; None when the Job does not parse (the API
    server refuses such a Job itself)."""
    try:
        job = Job.parse(obj)
        gpus = effective_requests(job.spec.template.spec).get(GPU_RESOURCE, 0)
    except InvalidSpecError:
        return None
    return GpuWorkload(pods=job.gang_size, gpus_per_pod=gpus)


def workload_problems(request: GpuTopologyRequest, workload: GpuWorkload) -> list[InvalidSpecError]:
    """What the request contradicts in the Job's own size (no cluster needed)."""
    out: list[InvalidSpecError] = []
    total = workload.total_gpus
    size = f"parallelism {workload.pods} x {workload.gpus_per_pod} {GPU_RESOURCE}"
    m = request.min_gpus_per_node
    if m is not None and m > total:
        out.append(
            InvalidSpecError(
                request.path(MIN_GPUS_PER_NODE),
                str(m),
                f'Invalid value: "{m}": must be at most the job\'s {total} GPUs in all ({size})',
            )
        )
    if request.multi_node_policy == "spread":
        if request.max_nodes is not None and request.max_nodes < workload.pods:
            out.append(
                InvalidSpecError(
                    request.path(MAX_NODES),
                    str(request.max_nodes),
                    f'Invalid value: "{request.max_nodes}": multi-node-policy "spread" puts one pod per '
                    f"node, so it needs at least parallelism ({workload.pods}) nodes",
                )
            )
        if m is not None and m > workload.gpus_per_pod and m <= total:
            out.append(
                InvalidSpecError(
                    request.path(MIN_GPUS_PER_NODE),
                    str(m),
                    f'Invalid value: "{m}": multi-node-policy "spread" puts one pod per node, '
                    f"which gives a node {workload.gpus_per_pod} GPUs",
                )
            )
    return out


def cluster_problems(
    request: GpuTopologyRequest, workload: GpuWorkload | None, node_gpus: Sequence[int]
) -> list[InvalidSpecError]:
    """What the request asks that no node of the cluster can give (`node_gpus`: each GPU
    node's allocatable `nvidia.com/gpu`; nothing is checked without any)."""
    largest = max(node_gpus, default=0)
    if largest <= 0:
        return []
    out: list[InvalidSpecError] = []
    m = request.min_gpus_per_node
    if m is not None and m > largest:
        out.append(
            InvalidSpecError(
                request.path(MIN_GPUS_PER_NODE),
                str(m),
                f'Invalid value: "{m}": no node has that many GPUs (the largest has {largest} {GPU_RESOURCE})',
            )
        )
    n = request.max_nodes
    if n is not None and workload is not None and n * largest < workload.total_gpus:
        out.append(
            InvalidSpecError(
                request.path(MAX_NODES),
                str(n),
                f'Invalid value: "{n}": {n} node(s) of at most {largest} GPUs cannot hold the job\'s '
                f"{workload.total_gpus} GPUs (parallelism {workload.pods} x {workload.gpus_per_pod} {GPU_RESOURCE})",
            )
        )
    return out


def pods_per_node_floor(request: GpuTopologyRequest, gpus_per_pod: int) -> int:
    """The fewest pods of the gang a used node must take for `min-gpus-per-node` (1 without it)."""
    m = request.min_gpus_per_node
    if m is None:
        return 1
    if gpus_per_pod <= 0:
        return 0  # pods that request no GPU can never give a node M GPUs
    return math.ceil(m / gpus_per_pod)


def is_nvlink(value: str | None) -> bool:
    """Does this value of the NVLink node label mean NVLink-connected GPUs?"""
    return value is not None and value.strip().lower() not in NOT_NVLINK_VALUES


def pod_request(pod: Pod, job: Job | None) -> tuple[GpuTopologyRequest | None, list[InvalidSpecError]]:
    """The request that governs a pod, with its problems: its Job's (Job + template) when the
    Job is known and has one, else the pod's own annotations."""
    if job is not None:
        found = _job_request(job)
        if found[0] is not None:
            return found
    return read_request([(JOB_LAYERS[0], pod.metadata.annotations or {})])


_last_job_request: tuple[Job, tuple[GpuTopologyRequest | None, list[InvalidSpecError]]] | None = None
"""The last Job read and its request: a Job's pods are read one after another, and its
annotations are the same for each (models are replaced, never changed, so identity is enough)."""


def _job_request(job: Job) -> tuple[GpuTopologyRequest | None, list[InvalidSpecError]]:
    global _last_job_request
    memo = _last_job_request
    if memo is not None and memo[0] is job:
        return memo[1][0], list(memo[1][1])
    found = read_request(
        [(JOB_LAYERS[0], job.metadata.annotations or {}), (JOB_LAYERS[1], _template_annotations(job))]
    )
    _last_job_request = (job, found)
    return found[0], list(found[1])


def job_uid_of(pod: Pod) -> str | None:
    """The uid of the Job that controls the pod: its controller ownerReference, else the Job
    controller's uid label."""
    for ref in pod.metadata.owner_references or ():
        if ref.controller and ref.kind == "Job" and ref.api_version.startswith("batch/"):
            return ref.uid
    labels = pod.metadata.labels or {}
    return next((labels[k] for k in CONTROLLER_UID_LABELS if labels.get(k)), None)


def completion_index(pod: Pod) -> str | None:
    """The pod's completion index as written (annotation, else label), None when absent."""
    return (pod.metadata.annotations or {}).get(COMPLETION_INDEX) or (pod.metadata.labels or {}).get(
        COMPLETION_INDEX
    )


def _template_annotations(job: Job) -> Mapping[str, Any]:
    meta = job.spec.template.metadata or {}
    annotations = meta.get("annotations")
    return annotations if isinstance(annotations, dict) else {}


def _enum(path: str, raw: str, allowed: Sequence[str]) -> str:
    if raw not in allowed:
        supported = ", ".join(f'"{a}"' for a in allowed)
        raise InvalidSpecError(
            path, raw, f"Unsupported value: {render_value(raw)}: supported values: {supported}"
        )
    return raw


def _positive(path: str, raw: str) -> int:
    if not _DECIMAL.match(raw) or int(raw) > _INT32_MAX:
        raise InvalidSpecError(
            path, raw, f"Invalid value: {render_value(raw)}: must be a decimal integer from 1 to {_INT32_MAX}"
        )
    return int(raw)
