"""The cluster a scenario runs on: nodes with topology labels and capacity, the
ClusterNetworkTopology that names their layers, and creating or removing objects of any kind
a scenario uses.

A cluster file (e2e/scenarios/clusters/*.yaml) is compact: the layers widest first with their
node label, each node's label values along those layers, and one allocatable for all nodes.
Nodes are API objects; their status (allocatable, Ready) is written through `nodes/status`.
On kind the same nodes are KWOK nodes (`Target.node_annotations` / `node_taints`), which the
KWOK controller keeps Ready and whose pods it runs.

Objects are created as a user's `kubectl apply` right after `kubectl create priorityclass`
would need them to be: a pod naming a PriorityClass created a moment ago is retried while the
API server's Priority admission, which reads classes from an informer's cache, has not seen it
yet (`until_admitted`), within a bounded wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from controller.errors import AlreadyExistsError, ForbiddenError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import (
    CLUSTER_NETWORK_TOPOLOGIES,
    HYPERNODES,
    LEADERWORKERSETS,
    NODES,
    PODS,
    PRIORITY_CLASSES,
    SIGS_PODGROUPS,
    VOLCANO_PODGROUPS,
    X_PODGROUPS,
    Resource,
)

NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
KINDS: dict[tuple[str, str], Resource] = {
    (r.api_version, r.kind): r
    for r in (
        NODES,
        PODS,
        PRIORITY_CLASSES,
        CLUSTER_NETWORK_TOPOLOGIES,
        HYPERNODES,
        LEADERWORKERSETS,
        SIGS_PODGROUPS,
        VOLCANO_PODGROUPS,
        X_PODGROUPS,
        NAMESPACES,
    )
}
HOSTNAME = "kubernetes.io/hostname"
NODE_LAYER = "NodeTopologyLayer"
E2E_LABEL = "topobridge.io/e2e"
"""On every node and cluster-scoped object a scenario creates, so cleanup finds exactly them."""


class ScenarioFileError(Exception):
    """A scenario or cluster file cannot be used; the message names the file and the field."""


def resource_of(obj: JsonDict) -> Resource:
    key = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    try:
        return KINDS[key]
    except KeyError:
        known = ", ".join(sorted(f"{k} ({v})" for v, k in KINDS))
        raise ScenarioFileError(
            f"{key[1]} of {key[0]}: not a kind scenarios can create; known: {known}"
        ) from None


class Layer(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    layer: str
    """Koordinator topologyLayer name, e.g. SpineLayer."""
    label_key: str = Field(alias="labelKey")


class ClusterSpec(BaseModel):
    """Nodes and their topology, as a cluster file describes them."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str
    description: str = ""
    node_resources: dict[str, str] = Field(alias="nodeResources")
    layers: list[Layer] = []
    """Widest first; empty: no topology (no ClusterNetworkTopology is created)."""
    nodes: dict[str, list[str]]
    """Node name -> its label value on each layer, widest first."""

    @classmethod
    def load(cls, path: Path) -> ClusterSpec:
        try:
            spec = cls.model_validate(yaml.safe_load(path.read_text()))
        except (OSError, yaml.YAMLError, ValueError) as exc:
            raise ScenarioFileError(f"{path}: {exc}") from None
        for node, values in spec.nodes.items():
            if len(values) != len(spec.layers):
                raise ScenarioFileError(
                    f"{path}: nodes.{node}: Invalid value: {values}: one label value per layer "
                    f"({len(spec.layers)}) is required"
                )
        return spec

    def node_labels(self, node: str) -> dict[str, str]:
        labels = {HOSTNAME: node}
        for layer, value in zip(self.layers, self.nodes[node], strict=True):
            labels[layer.label_key] = value
        return labels

    def node_objects(
        self,
        *,
        annotations: dict[str, str] | None = None,
        taints: list[JsonDict] | None = None,
        labels: dict[str, str] | None = None,
    ) -> list[JsonDict]:
        """The Node objects, status included (written separately: it is a subresource)."""
        alloc = dict(self.node_resources)
        out = []
        for name in self.nodes:
            node: JsonDict = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {**(labels or {}), **self.node_labels(name), E2E_LABEL: self.name},
                    "annotations": dict(annotations or {}),
                },
                "spec": {"taints": list(taints or [])},
                "status": {
                    "allocatable": alloc,
                    "capacity": alloc,
                    "conditions": [
                        {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "e2e node"}
                    ],
                },
            }
            out.append(node)
        return out

    def cluster_network_topology(self) -> JsonDict | None:
        if not self.layers:
            return None
        spec: list[JsonDict] = []
        parent: str | None = None
        for layer in self.layers:
            entry: JsonDict = {"topologyLayer": layer.layer, "labelKey": [layer.label_key]}
            if parent:
                entry["parentTopologyLayer"] = parent
            spec.append(entry)
            parent = layer.layer
        spec.append({"topologyLayer": NODE_LAYER, "parentTopologyLayer": parent})
        return {
            "apiVersion": "scheduling.koordinator.sh/v1alpha1",
            "kind": "ClusterNetworkTopology",
            "metadata": {"name": "default", "labels": {E2E_LABEL: self.name}},
            "spec": {"networkTopologySpec": spec},
        }


async def create_nodes(
    kube: Kube,
    cluster: ClusterSpec,
    *,
    annotations: dict[str, str] | None = None,
    taints: list[JsonDict] | None = None,
    labels: dict[str, str] | None = None,
) -> list[str]:
    """Create (or update) the cluster's nodes and write their status; returns their names."""
    names = []
    for node in cluster.node_objects(annotations=annotations, taints=taints, labels=labels):
        status = node.pop("status")
        name = node["metadata"]["name"]
        try:
            await kube.create(NODES, node)
        except AlreadyExistsError:
            await kube.merge_patch(NODES, name, {"metadata": node["metadata"], "spec": node["spec"]})
        await kube.merge_patch(NODES, name, {"status": status}, subresource="status")
        # Admission (TaintNodesByCondition) taints every new node not-ready until a kubelet
        # reports; these nodes are ready as soon as their status is written.
        await kube.merge_patch(NODES, name, {"spec": {"taints": node["spec"]["taints"] or None}})
        names.append(name)
    return names


async def create_topology(kube: Kube, cluster: ClusterSpec) -> None:
    cnt = cluster.cluster_network_topology()
    if cnt is None:
        return
    try:
        await kube.create(CLUSTER_NETWORK_TOPOLOGIES, cnt)
    except AlreadyExistsError:
        current = await kube.get(CLUSTER_NETWORK_TOPOLOGIES, "default")
        await kube.replace(
            CLUSTER_NETWORK_TOPOLOGIES,
            {
                **cnt,
                "metadata": {**cnt["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]},
            },
        )


ADMISSION_WAIT = 30.0
"""How long a create waits for Priority admission to see a PriorityClass (seconds)."""
PRIORITY_CLASS_UNSEEN = re.compile(r"no PriorityClass with name (?P<name>\S+) was found")
"""The Priority admission plugin's 403 when its cache holds no class of that name."""
OnAdmissionWait = Callable[[str], Awaitable[None]]
"""Called with the PriorityClass's name each time a create waits for admission to see it."""


async def until_admitted(
    create: Callable[[], Awaitable[JsonDict]],
    *,
    timeout: float = ADMISSION_WAIT,
    on_wait: OnAdmissionWait | None = None,
) -> JsonDict:
    """`create()`, repeated while Priority admission refuses it for a PriorityClass it has not
    seen yet. That 403 is the only one retried; after `timeout` seconds it is raised as it came
    (the class does not exist, or admission never saw it)."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        try:
            return await create()
        except ForbiddenError as exc:
            unseen = PRIORITY_CLASS_UNSEEN.search(exc.message)
            if unseen is None or time.monotonic() >= deadline:
                raise
            if on_wait is not None:
                await on_wait(unseen["name"])
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.5)


async def create_object(
    kube: Kube,
    obj: JsonDict,
    *,
    namespace: str | None,
    admission_wait: float = ADMISSION_WAIT,
    on_wait: OnAdmissionWait | None = None,
) -> JsonDict:
    """Create one scenario object; namespaced ones go into `namespace`. A pod naming a
    PriorityClass that admission has not seen yet is retried (`until_admitted`)."""
    res = resource_of(obj)
    body = {**obj, "metadata": dict(obj.get("metadata") or {})}
    if res.namespaced:
        body["metadata"]["namespace"] = namespace
    return await until_admitted(
        lambda: kube.create(res, body, namespace=namespace if res.namespaced else None),
        timeout=admission_wait,
        on_wait=on_wait,
    )


async def ensure_cluster_object(kube: Kube, obj: JsonDict) -> None:
    """Create a cluster-scoped object unless one of that name exists (PriorityClasses)."""
    with contextlib.suppress(AlreadyExistsError):
        await create_object(kube, obj, namespace=None)


async def delete_cluster(kube: Kube, cluster: ClusterSpec) -> None:
    """Remove the nodes and the ClusterNetworkTopology a cluster file made."""
    for name in cluster.nodes:
        with contextlib.suppress(NotFoundError):
            await kube.delete(NODES, name)
    if cluster.layers:
        with contextlib.suppress(NotFoundError):
            await kube.delete(CLUSTER_NETWORK_TOPOLOGIES, "default")


async def create_namespace(kube: Kube, name: str) -> None:
    with contextlib.suppress(AlreadyExistsError):
        await kube.create(
            NAMESPACES,
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": {E2E_LABEL: "true"}},
            },
        )


async def delete_namespace(kube: Kube, name: str) -> None:
    with contextlib.suppress(NotFoundError):
        await kube.delete(NAMESPACES, name, propagation="Background")


def pod_nodes(pods: list[JsonDict]) -> dict[str, str | None]:
    return {p["metadata"]["name"]: (p.get("spec") or {}).get("nodeName") for p in pods}


async def list_pods(kube: Kube, namespace: str | None) -> list[JsonDict]:
    items: list[JsonDict] = (await kube.list(PODS, namespace=namespace)).items
    return items
