"""What the live scheduler holds per bound pod: the informer's object, the parsed model and the
scheduler's state, measured apart.

The pods are what a v1.20 API server lists for a Deployment's running replica (metadata with
an owner and `managedFields`, a container with a service-account volume, the default
tolerations, a Running status with conditions and a container status), `--pods` of them on
`--pods / 5` nodes, each read as the live process reads it: the list's JSON decoded, the
informer's transform applied (`informer.LEAN`: `managedFields` dropped) and the object kept in
an informer's cache; then put into a `ClusterCache` (parsed, compacted, keyed to its gang);
then the scheduler's first view taken (records, aggregates, the kept pod columns).

Timed and measured regions (tracemalloc's traced bytes after each step, less before it; CPU
time beside wall time):
* informer: the decoded objects the informer's cache holds, transform applied;
* parsed: `ClusterCache` fed every object (`_Handler.on_add`: the model and the state's
  per-pod tables);
* view: the first `ClusterState.view()` (the snapshot's records and aggregates).

    .venv/bin/python benchmarks/pod_cache.py [--pods 20000]

The run ends with one line: `summary: pods=... informer_b=... parsed_b=... view_b=...
total_b=...` (bytes per pod).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

# The repository first: benchmarks/controller.py would otherwise shadow the `controller` package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.informer import LEAN, object_key
from controller.placer.cluster import Kind
from controller.resources import NODES, PODS
from controller.runtime.cache import ClusterCache

PODS_PER_NODE = 5


def _node(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"node-{i}",
            "uid": f"00000000-0000-4000-8000-{i:012d}",
            "resourceVersion": str(1000 + i),
            "labels": {"kubernetes.io/hostname": f"node-{i}", "kubernetes.io/os": "linux"},
        },
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
    }


def _pod(i: int) -> dict[str, Any]:
    app = f"svc-{i % 500}"
    rs = f"{app}-7d9f8b6c5d"
    name = f"{rs}-{i:06x}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"{rs}-",
            "namespace": "svc",
            "uid": f"10000000-0000-4000-8000-{i:012d}",
            "resourceVersion": str(500000 + i),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"app": app, "pod-template-hash": "7d9f8b6c5d"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": rs,
                    "uid": f"20000000-0000-4000-8000-{i % 500:012d}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-01-01T00:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}},
                }
            ],
        },
        "spec": {
            "volumes": [{"name": "default-token-x7k2p", "secret": {"secretName": "default-token-x7k2p"}}],
            "containers": [
                {
                    "name": "app",
                    "image": "registry.example/app:1.4.2",
                    "resources": {"requests": {"cpu": "2", "memory": "8Gi"}},
                    "volumeMounts": [
                        {
                            "name": "default-token-x7k2p",
                            "readOnly": True,
                            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                        }
                    ],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "nodeName": f"node-{i // PODS_PER_NODE}",
            "securityContext": {},
            "schedulerName": "topobridge",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {
                    "type": t,
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-01-01T00:00:05Z",
                }
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": f"10.0.{i // PODS_PER_NODE // 250 % 250}.{i // PODS_PER_NODE % 250}",
            "podIP": f"10.1.{i // 250 % 250}.{i % 250}",
            "podIPs": [{"ip": f"10.1.{i // 250 % 250}.{i % 250}"}],
            "startTime": "2026-01-01T00:00:01Z",
            "containerStatuses": [
                {
                    "name": "app",
                    "state": {"running": {"startedAt": "2026-01-01T00:00:04Z"}},
                    "lastState": {},
                    "ready": True,
                    "restartCount": 0,
                    "image": "registry.example/app:1.4.2",
                    "imageID": "registry.example/app@sha256:" + "ab" * 32,
                    "containerID": f"containerd://{i:064x}",
                    "started": True,
                }
            ],
            "qosClass": "Burstable",
        },
    }


def _traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def _step(label: str, fn: Any, n: int, note: str) -> tuple[Any, float]:
    before = _traced()
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    per_pod = (_traced() - before) / n
    print(f"{label:10}{per_pod:9.0f} B/pod {wall * 1e3:10.1f} ms {cpu * 1e3:10.1f} cpu ms  {note}")
    return out, per_pod


def main() -> None:
    ap = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--pods", type=int, default=20_000)
    args = ap.parse_args()
    n = args.pods
    nodes_raw = json.dumps({"items": [_node(i) for i in range(max(1, n // PODS_PER_NODE))]})
    pods_raw = json.dumps({"items": [_pod(i) for i in range(n)]})
    print(
        f"{n} bound pods on {max(1, n // PODS_PER_NODE)} nodes; {len(pods_raw) / n:.0f} bytes of JSON per pod"
    )
    tracemalloc.start()
    lean_pod, lean_node = LEAN[PODS], LEAN[NODES]

    def informer() -> dict[str, dict[str, Any]]:
        return {object_key(o): lean_pod(o) for o in json.loads(pods_raw)["items"]}

    cache = ClusterCache()
    for node in json.loads(nodes_raw)["items"]:
        cache.nodes.put(lean_node(node))
    held, informer_b = _step(
        "informer:", informer, n, "decoded objects in the informer's cache, managedFields dropped"
    )

    def parse() -> None:
        for obj in held.values():
            cache.pods.put(obj)

    _, parsed_b = _step(
        "parsed:", parse, n, "ClusterCache fed every pod: models and the state's per-pod tables"
    )
    view, view_b = _step(
        "view:", cache.state.view, n, "the first view(): records, aggregates, kept pod columns"
    )
    assert len(view.snapshot.pods) == n == len(cache.state.store(Kind.POD))
    total = informer_b + parsed_b + view_b
    print(f"total:    {total:9.0f} B/pod; at 325,000 pods: {total * 325_000 / 2**20:.0f} MiB")
    print(
        f"summary: pods={n} informer_b={informer_b:.0f} parsed_b={parsed_b:.0f} view_b={view_b:.0f} total_b={total:.0f}"
    )


if __name__ == "__main__":
    main()
