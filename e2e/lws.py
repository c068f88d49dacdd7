"""A LeaderWorkerSet controller stand-in for the local target, which runs no LWS controller:
for each group it creates the pods LWS would, with the names, labels and annotations LWS
gives them and the `scheduling.k8s.io/group-name` annotation its Volcano provider adds.

Names: the leader of group g is `<lws>-<g>`, its workers `<lws>-<g>-<w>` (w = 1..size-1).
Labels: `leaderworkerset.sigs.k8s.io/{name,group-index,worker-index,group-key,
template-revision-hash}`. With the `exclusive-topology` annotation, each pod gets the pod
affinity LWS's webhook injects for exclusive placement. The PodGroup a group's pods join is `<lws>-<g>-<revision>`, the name
LWS's Volcano provider uses; topobridge creates or completes it from the LWS's topology. On kind
the real LWS controller does all of this.
"""

from __future__ import annotations

import copy
import hashlib
import json

from controller.kube import JsonDict, Kube
from controller.resources import PODS
from translations import lws as lwsmod
from translations.lws_to_volcano import pod_group_name

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"


def revision_hash(lws: JsonDict) -> str:
    """A stable hash of the leader/worker templates (LWS hashes its template the same way:
    any change makes a new revision)."""
    tmpl = (lws.get("spec") or {}).get("leaderWorkerTemplate") or {}
    digest = hashlib.sha256(json.dumps(tmpl, sort_keys=True).encode()).hexdigest()
    return digest[:10]


def group_pods(lws: JsonDict) -> list[JsonDict]:
    """Every pod of every group of `lws` (a created object: it needs metadata.uid)."""
    meta, spec = lws["metadata"], lws.get("spec") or {}
    name, namespace = meta["name"], meta["namespace"]
    tmpl = spec.get("leaderWorkerTemplate") or {}
    size = int(tmpl.get("size", 1))
    revision = revision_hash(lws)
    owner = {
        "apiVersion": lws["apiVersion"],
        "kind": lws["kind"],
        "name": name,
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    pods = []
    for group in range(int(spec.get("replicas", 1))):
        group_key = hashlib.sha1(f"{namespace}/{name}-{group}".encode()).hexdigest()
        leader = f"{name}-{group}"
        for worker in range(size):
            template: JsonDict = (
                tmpl["leaderTemplate"]
                if worker == 0 and tmpl.get("leaderTemplate")
                else tmpl["workerTemplate"]
            )
            pod_meta = copy.deepcopy(template.get("metadata") or {})
            labels = {
                **(pod_meta.get("labels") or {}),
                lwsmod.NAME_LABEL: name,
                lwsmod.GROUP_INDEX_LABEL: str(group),
                lwsmod.WORKER_INDEX_LABEL: str(worker),
                lwsmod.GROUP_KEY_LABEL: group_key,
                lwsmod.REVISION_LABEL: revision,
            }
            annotations = {
                **(pod_meta.get("annotations") or {}),
                lwsmod.SIZE_ANNOTATION: str(size),
                GROUP_NAME_ANNOTATION: pod_group_name(name, group, revision),
            }
            if worker > 0:
                annotations[lwsmod.LEADER_NAME_ANNOTATION] = leader
            pod_spec = copy.deepcopy(template.get("spec") or {})
            exclusive = (meta.get("annotations") or {}).get(lwsmod.EXCLUSIVE_TOPOLOGY_ANNOTATION)
            if exclusive:
                annotations[lwsmod.EXCLUSIVE_TOPOLOGY_ANNOTATION] = exclusive
                pod_spec["affinity"] = {
                    **(pod_spec.get("affinity") or {}),
                    **lwsmod.exclusive_affinity(group_key, exclusive),
                }
            pods.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": leader if worker == 0 else f"{leader}-{worker}",
                        "namespace": namespace,
                        "labels": labels,
                        "annotations": annotations,
                        "ownerReferences": [owner],
                    },
                    "spec": pod_spec,
                }
            )
    return pods


async def create_group_pods(kube: Kube, lws: JsonDict) -> list[str]:
    """Create the pods of every group; returns their names."""
    names = []
    for pod in group_pods(lws):
        await kube.create(PODS, pod)
        names.append(pod["metadata"]["name"])
    return names
