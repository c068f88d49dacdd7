"""NodeResourcesFit: `TestEnoughRequests`, `TestNotEnoughRequests`, `TestStorageRequests`,
`TestRestartableInitContainers`, read at kubernetes commit 789199930's file version (the one
with pod-level resources and DRA-backed extended resources; the older cases are unchanged).

Each case is one node with upstream's allocatable and, when upstream's NodeInfo holds a pod, that
pod bound to it. Reasons are compared as a set ("Insufficient cpu; Insufficient memory").
Not taken: "skip checking ignored extended resource" and "skip checking ignored extended
resource via resource groups" (they set the plugin's IgnoredResources args, a profile setting),
and "not allow pod with restartable init containers if sidecar containers is disabled" (the
SidecarContainers gate is GA and locked on: no scheduler runs with it off).
Cases that need a gate off by default (DRAExtendedResource) are taken with the gate as the case
sets it; topobridge answers as one scheduler, and what it does not do is listed as not honoured.
"""

from __future__ import annotations

from conformance.harness import Feasible, Obj, Row
from conformance.objects import container, node, pod

FILE = "pkg/scheduler/framework/plugins/noderesources/fit_test.go"
ENOUGH = f"{FILE}:TestEnoughRequests"
NOT_ENOUGH = f"{FILE}:TestNotEnoughRequests"
STORAGE = f"{FILE}:TestStorageRequests"
SIDECARS = f"{FILE}:TestRestartableInitContainers"

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_A = "kubernetes.io/something"
K8S_B = "subdomain.kubernetes.io/something"
HUGE = "hugepages-2Mi"
EXT_DRA = "extended.resource.dra.io/something"


def res(cpu: int = 0, mem: int = 0, storage: int = 0, **scalars: int) -> dict[str, str]:
    """A resource list in upstream's units: millicores, bytes, plain counts (`_` for `/`)."""
    out = {"cpu": f"{cpu}m", "memory": str(mem)}
    if storage:
        out["ephemeral-storage"] = str(storage)
    for name, v in scalars.items():
        out[name] = str(v)
    return out


def alloc(cpu: int, mem: int, pods: int, ext_a: int, storage: int, huge: int) -> dict[str, str]:
    return {
        "cpu": f"{cpu}m",
        "memory": str(mem),
        "pods": str(pods),
        EXT_A: str(ext_a),
        "ephemeral-storage": str(storage),
        HUGE: str(huge),
    }


STANDARD = alloc(10, 20, 32, 5, 20, 5)


def incoming(*usage: dict[str, str], init: list[dict[str, str]] | None = None, **spec: object) -> Obj:
    """The pod: one container per `usage`, one init container per `init` entry."""
    containers = [container(f"c{i}", requests=u) for i, u in enumerate(usage)]
    if init is not None:
        spec["initContainers"] = [container(f"i{i}", requests=u) for i, u in enumerate(init)]
    return pod("p", containers=containers, **spec)


def _fit(
    upstream: str,
    case: str,
    the_pod: Obj,
    used: dict[str, str] | None,
    verdict: bool | str,
    allocatable: dict[str, str] = STANDARD,
    extra: list[Obj] | None = None,
) -> Row:
    objects: list[Obj] = [node("node", allocatable=allocatable), *(extra or [])]
    if used is not None:
        objects.append(pod("existing", node_name="node", containers=[container(requests=used)]))
    return Row("NodeResourcesFit", upstream, case, objects, [the_pod], Feasible({"node": verdict}))


def _enough(
    case: str, the_pod: Obj, used: dict[str, str] | None, verdict: bool | str, extra: list[Obj] | None = None
) -> Row:
    return _fit(ENOUGH, case, the_pod, used, verdict, extra=extra)


def _insufficient(*names: str) -> str:
    return "; ".join(f"Insufficient {n}" for n in names)


DEVICE_CLASS: Obj = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "device-class-name"},
    "spec": {"extendedResourceName": EXT_DRA},
}
"""The DeviceClass upstream's DRA-backed cases install: it maps EXT_DRA onto DRA devices."""


def _pod_level(
    usage: list[dict[str, str]], requests: dict[str, str], init: list[dict[str, str]] | None = None
) -> Obj:
    return incoming(*usage, init=init, resources={"requests": requests})


ENOUGH_ROWS = [
    _enough("no resources requested always fits", incoming(), res(10, 20), True),
    _enough("too many resources fails", incoming(res(1, 1)), res(10, 20), _insufficient("cpu", "memory")),
    _enough(
        "too many resources fails due to init container cpu",
        incoming(res(1, 1), init=[res(3, 1)]),
        res(8, 19),
        _insufficient("cpu"),
    ),
    _enough(
        "too many resources fails due to highest init container cpu",
        incoming(res(1, 1), init=[res(3, 1), res(2, 1)]),
        res(8, 19),
        _insufficient("cpu"),
    ),
    _enough(
        "too many resources fails due to init container memory",
        incoming(res(1, 1), init=[res(1, 3)]),
        res(9, 19),
        _insufficient("memory"),
    ),
    _enough(
        "too many resources fails due to highest init container memory",
        incoming(res(1, 1), init=[res(1, 3), res(1, 2)]),
        res(9, 19),
        _insufficient("memory"),
    ),
    _enough(
        "init container fits because it's the max, not sum, of containers and init containers",
        incoming(res(1, 1), init=[res(1, 1)]),
        res(9, 19),
        True,
    ),
    _enough(
        "multiple init containers fit because it's the max, not sum, of containers and init containers",
        incoming(res(1, 1), init=[res(1, 1), res(1, 1)]),
        res(9, 19),
        True,
    ),
    _enough("both resources fit", incoming(res(1, 1)), res(5, 5), True),
    _enough("one resource memory fits", incoming(res(2, 1)), res(9, 5), _insufficient("cpu")),
    _enough("one resource cpu fits", incoming(res(1, 2)), res(5, 19), _insufficient("memory")),
    _enough("equal edge case", incoming(res(5, 1)), res(5, 19), True),
    _enough("equal edge case for init container", incoming(res(4, 1), init=[res(5, 1)]), res(5, 19), True),
    _enough("extended resource fits", incoming(res(**{EXT_A: 1})), res(), True),
    _enough(
        "extended resource fits for init container", incoming(res(), init=[res(**{EXT_A: 1})]), res(), True
    ),
    _enough(
        "extended resource capacity enforced",
        incoming(res(1, 1, **{EXT_A: 10})),
        res(**{EXT_A: 0}),
        _insufficient(EXT_A),
    ),
    _enough(
        "extended resource capacity enforced for init container",
        incoming(res(), init=[res(1, 1, **{EXT_A: 10})]),
        res(**{EXT_A: 0}),
        _insufficient(EXT_A),
    ),
    _enough(
        "extended resource allocatable enforced",
        incoming(res(1, 1, **{EXT_A: 1})),
        res(**{EXT_A: 5}),
        _insufficient(EXT_A),
    ),
    _enough(
        "extended resource allocatable enforced for init container",
        incoming(res(), init=[res(1, 1, **{EXT_A: 1})]),
        res(**{EXT_A: 5}),
        _insufficient(EXT_A),
    ),
    _enough(
        "extended resource allocatable enforced for multiple containers",
        incoming(res(1, 1, **{EXT_A: 3}), res(1, 1, **{EXT_A: 3})),
        res(**{EXT_A: 2}),
        _insufficient(EXT_A),
    ),
    _enough(
        "extended resource allocatable admits multiple init containers",
        incoming(res(), init=[res(1, 1, **{EXT_A: 3}), res(1, 1, **{EXT_A: 3})]),
        res(**{EXT_A: 2}),
        True,
    ),
    _enough(
        "extended resource allocatable enforced for multiple init containers",
        incoming(res(), init=[res(1, 1, **{EXT_A: 6}), res(1, 1, **{EXT_A: 3})]),
        res(**{EXT_A: 2}),
        _insufficient(EXT_A),
    ),
    _enough(
        "extended resource allocatable enforced for unknown resource",
        incoming(res(1, 1, **{EXT_B: 1})),
        res(),
        _insufficient(EXT_B),
    ),
    _enough(
        "extended resource allocatable enforced for unknown resource for init container",
        incoming(res(), init=[res(1, 1, **{EXT_B: 1})]),
        res(),
        _insufficient(EXT_B),
    ),
    _enough(
        "kubernetes.io resource capacity enforced",
        incoming(res(1, 1, **{K8S_A: 10})),
        res(),
        _insufficient(K8S_A),
    ),
    _enough(
        "kubernetes.io resource capacity enforced for init container",
        incoming(res(), init=[res(1, 1, **{K8S_B: 10})]),
        res(),
        _insufficient(K8S_B),
    ),
    _enough(
        "hugepages resource capacity enforced",
        incoming(res(1, 1, **{HUGE: 10})),
        res(**{HUGE: 0}),
        _insufficient(HUGE),
    ),
    _enough(
        "hugepages resource capacity enforced for init container",
        incoming(res(), init=[res(1, 1, **{HUGE: 10})]),
        res(**{HUGE: 0}),
        _insufficient(HUGE),
    ),
    _enough(
        "hugepages resource allocatable enforced for multiple containers",
        incoming(res(1, 1, **{HUGE: 3}), res(1, 1, **{HUGE: 3})),
        res(**{HUGE: 2}),
        _insufficient(HUGE),
    ),
    _enough(
        "resources + pod overhead fits",
        incoming(res(1, 1), overhead={"cpu": "3m", "memory": "13"}),
        res(5, 5),
        True,
    ),
    _enough(
        "requests + overhead does not fit for memory",
        incoming(res(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        res(5, 5),
        _insufficient("memory"),
    ),
    _enough(
        "skip checking extended resource request with quantity zero via resource groups",
        incoming(res(1, 1, **{EXT_A: 0})),
        res(**{EXT_A: 6}),
        True,
    ),
    _enough(
        "skip checking resource request with quantity zero",
        incoming(res(**{EXT_A: 1})),
        res(20, 30, **{EXT_A: 1}),
        True,
    ),
    _enough(
        "both pod-level and container-level resources fit",
        _pod_level([res(1, 1)], {"cpu": "1m", "memory": "2"}),
        res(5, 5),
        True,
    ),
    _enough(
        "pod-level cpu resource not fit",
        _pod_level([res(1, 1)], {"cpu": "7m", "memory": "2"}),
        res(5, 5),
        _insufficient("cpu"),
    ),
    _enough(
        "pod-level memory resource not fit",
        _pod_level([res(1, 1)], {"cpu": "3m", "memory": "2"}),
        res(5, 19),
        _insufficient("memory"),
    ),
    _enough(
        "pod-level hugepages resource fit",
        _pod_level([], {"cpu": "3m", "memory": "2", HUGE: "5"}),
        None,
        True,
    ),
    _enough(
        "both pod-level and container-level hugepages resource fit",
        _pod_level([res(1, 1, **{HUGE: 3})], {"cpu": "3m", "memory": "2", HUGE: "5"}),
        None,
        True,
    ),
    _enough(
        "pod-level hugepages resource not fit",
        _pod_level([], {"cpu": "3m", "memory": "2", HUGE: "10"}),
        None,
        _insufficient(HUGE),
    ),
    _enough(
        "one pod-level cpu resource fits and all init and non-init containers resources fit",
        _pod_level([res(1, 1)], {"cpu": "3m", "memory": "2"}, init=[res(1, 1)]),
        res(5, 19),
        _insufficient("memory"),
    ),
    _enough("extended resource backed by device plugin", incoming(res(**{EXT_A: 1})), res(), True),
    _enough(
        "extended resource backed by DRA",
        incoming(res(1, 1, **{EXT_DRA: 1})),
        res(),
        True,
        extra=[DEVICE_CLASS],
    ),
    _enough(
        "extended resource backed by DRA, nil draManager",
        incoming(res(1, 1, **{EXT_A: 1})),
        res(),
        True,
        extra=[DEVICE_CLASS],
    ),
    _enough(
        "extended resource backed by DRA not enabled",
        incoming(res(1, 1, **{EXT_DRA: 1})),
        res(),
        _insufficient(EXT_DRA),
    ),
    _enough(
        "extended resource NOT backed by DRA",
        incoming(res(1, 1, **{EXT_B: 1})),
        res(),
        _insufficient(EXT_B),
        extra=[DEVICE_CLASS],
    ),
    _enough(
        "extended resource was backed by Device Plugin (Allocatable: 0)",
        incoming(res(**{EXT_DRA: 1})),
        res(**{EXT_DRA: 0}),
        True,
        extra=[DEVICE_CLASS],
    ),
    _enough(
        "extended resource was backed by Device Plugin (Allocatable: 0), global cache",
        incoming(res(**{EXT_A: 1})),
        res(**{EXT_A: 0}),
        True,
        extra=[DEVICE_CLASS],
    ),
]

ONE_POD = alloc(10, 20, 1, 0, 0, 0)
NOT_ENOUGH_ROWS = [
    _fit(
        NOT_ENOUGH,
        "even without specified resources, predicate fails when there's no space for additional pod",
        incoming(),
        res(10, 20),
        "Too many pods",
        ONE_POD,
    ),
    _fit(
        NOT_ENOUGH,
        "even if both resources fit, predicate fails when there's no space for additional pod",
        incoming(res(1, 1)),
        res(5, 5),
        "Too many pods",
        ONE_POD,
    ),
    _fit(
        NOT_ENOUGH,
        "even for equal edge case, predicate fails when there's no space for additional pod",
        incoming(res(5, 1)),
        res(5, 19),
        "Too many pods",
        ONE_POD,
    ),
    _fit(
        NOT_ENOUGH,
        "even for equal edge case, predicate fails when there's no space for additional pod due to init container",
        incoming(res(5, 1), init=[res(5, 1)]),
        res(5, 19),
        "Too many pods",
        ONE_POD,
    ),
]

STORAGE_ROWS = [
    _fit(STORAGE, "empty storage requested, and pod fits", incoming(res(1, 1)), res(2, 10), True),
    _fit(
        STORAGE,
        "storage ephemeral local storage request exceeds allocatable",
        incoming(res(storage=25)),
        res(2, 2),
        _insufficient("ephemeral-storage"),
    ),
    _fit(
        STORAGE,
        "ephemeral local storage is sufficient",
        incoming(res(storage=5), init=[]),
        res(2, 2, 10),
        True,
    ),
    _fit(STORAGE, "pod fits", incoming(res(storage=10)), res(2, 2), True),
]

SIDECAR_NODE = alloc(2, 0, 1, 0, 0, 0)


def _with_sidecar(request: dict[str, str] | None, sidecar: dict[str, str] | None) -> Obj:
    return pod(
        "p",
        containers=[container("regular", requests=request)],
        initContainers=[container("restartable-init", requests=sidecar, restartPolicy="Always")],
    )


SIDECAR_ROWS = [
    _fit(
        SIDECARS,
        "allow pod without restartable init containers if sidecar containers is disabled",
        pod("p", containers=[container("regular")]),
        None,
        True,
        SIDECAR_NODE,
    ),
    _fit(
        SIDECARS,
        "allow pod without restartable init containers if sidecar containers is enabled",
        pod("p", containers=[container("regular")]),
        None,
        True,
        SIDECAR_NODE,
    ),
    _fit(
        SIDECARS,
        "allow pod with restartable init containers if sidecar containers is enabled",
        _with_sidecar(None, None),
        None,
        True,
        SIDECAR_NODE,
    ),
    _fit(
        SIDECARS,
        "allow pod if the total requested resources do not exceed the node's allocatable resources",
        _with_sidecar({"cpu": "1m"}, {"cpu": "1m"}),
        None,
        True,
        SIDECAR_NODE,
    ),
    _fit(
        SIDECARS,
        "not allow pod if the total requested resources do exceed the node's allocatable resources",
        _with_sidecar({"cpu": "1m"}, {"cpu": "2m"}),
        None,
        _insufficient("cpu"),
        SIDECAR_NODE,
    ),
]

ROWS = [*ENOUGH_ROWS, *NOT_ENOUGH_ROWS, *STORAGE_ROWS, *SIDECAR_ROWS]
