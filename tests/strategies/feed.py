"""Generated objects into the scheduler's `ClusterState`, the way the controller's caches feed it.

Each dict is parsed into its model at the edge (`Model.parse`, as `controller.runtime.cache`
does); one that does not parse is left out and its error returned, as the controller sets it
aside. Keys are `namespace/name`, or `name` for cluster-scoped kinds.
"""

from __future__ import annotations

from typing import Any

from controller.placer.cluster import ClusterState, Kind
from translations import koordinator as koord
from translations import schedplugins, volcano
from translations._base import TypedObject
from translations.core import Job, Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from translations.errors import InvalidSpecError

MODELS: dict[tuple[str, str], tuple[Kind, type[TypedObject]]] = {
    ("", "Pod"): (Kind.POD, Pod),
    ("", "Node"): (Kind.NODE, Node),
    ("", "Namespace"): (Kind.NAMESPACE, Namespace),
    ("scheduling.volcano.sh", "PodGroup"): (Kind.VOLCANO_PODGROUP, volcano.PodGroup),
    ("scheduling.sigs.k8s.io", "PodGroup"): (Kind.SIGS_PODGROUP, koord.SigsPodGroup),
    ("scheduling.x-k8s.io", "PodGroup"): (Kind.X_PODGROUP, schedplugins.XPodGroup),
    ("scheduling.k8s.io", "PriorityClass"): (Kind.PRIORITY_CLASS, PriorityClass),
    ("policy", "PodDisruptionBudget"): (Kind.PDB, PodDisruptionBudget),
    ("topology.volcano.sh", "HyperNode"): (Kind.HYPERNODE, volcano.HyperNode),
    ("scheduling.koordinator.sh", "ClusterNetworkTopology"): (Kind.CNT, koord.ClusterNetworkTopology),
    ("batch", "Job"): (Kind.JOB, Job),
}


def key_of(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else str(meta["name"])


def feed(state: ClusterState, objects: list[dict[str, Any]]) -> dict[str, str]:
    """Put every object the scheduler reads into `state`; returns key -> why, for the objects
    that did not parse (LeaderWorkerSets and other kinds the scheduler does not read are skipped)."""
    refused: dict[str, str] = {}
    for obj in objects:
        api = str(obj.get("apiVersion", ""))
        entry = MODELS.get((api.rpartition("/")[0], str(obj.get("kind"))))
        if entry is None:
            continue
        kind, model = entry
        try:
            state.put(kind, key_of(obj), model.parse(obj))
        except InvalidSpecError as exc:
            refused[key_of(obj)] = str(exc)
    return refused


def placer_state(objects: list[dict[str, Any]]) -> tuple[ClusterState, dict[str, str]]:
    state = ClusterState()
    return state, feed(state, objects)
