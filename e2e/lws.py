"""A LeaderWorkerSet controller stand-in for the local target, which runs no LWS controller:
for each group it creates the pods LWS would (`translations.expand.lws_group_pods`: the names,
labels and annotations LWS gives them, the exclusive-placement affinity, and the
`scheduling.k8s.io/group-name` annotation LWS's Volcano provider adds). With no StatefulSets in
between, the pods are owned by the LWS itself, so deleting it deletes them. The PodGroup a
group's pods join is `<lws>-<g>-<revision>`, the name LWS's Volcano provider uses; topobridge
creates or completes it from the LWS's topology. On kind the real LWS controller does all of this.
"""

from __future__ import annotations

from controller.kube import JsonDict, Kube
from controller.resources import PODS
from e2e.cluster import until_admitted
from translations import expand
from translations import lws as lwsmod


def group_pods(lws: JsonDict) -> list[JsonDict]:
    """Every pod of every group of `lws` (a created object: it needs metadata.uid)."""
    model = lwsmod.LeaderWorkerSet.parse(lws)
    revision = expand.revision_stand_in(model)
    owner = {
        "apiVersion": lws["apiVersion"],
        "kind": lws["kind"],
        "name": model.name,
        "uid": lws["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    replicas = 1 if model.spec.replicas is None else model.spec.replicas
    pods = [
        pod for g in range(replicas) for pod in expand.lws_group_pods(model, g, revision, group_name=True)
    ]
    for pod in pods:
        pod["metadata"]["ownerReferences"] = [owner]
    return pods


async def create_group_pods(kube: Kube, lws: JsonDict) -> list[str]:
    """Create the pods of every group; returns their names."""
    names = []
    for pod in group_pods(lws):
        await until_admitted(lambda pod=pod: kube.create(PODS, pod))
        names.append(pod["metadata"]["name"])
    return names
