"""How fast a cluster's network description becomes Volcano HyperNodes.

A 10,000-node cluster with 4 tiers (datacenter > spine > block > NVLink accelerator domain,
8 nodes per accelerator domain) described by a ClusterNetworkTopology and node labels.
Prints the median time of `hypernodes.from_cluster_network_topology` (tree + HyperNode
objects, starting from parsed Nodes), the median time to parse the same Node objects alone,
and their ratio. Goal: <= 1 s for the translation.

    .venv/bin/python benchmarks/translate.py [--nodes 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from _topology import LEVELS, cluster_network_topology, topology_labels  # beside this script

from translations import hypernodes
from translations.core import Node

GOAL_SECONDS = 1.0


def raw_nodes(count: int) -> list[dict[str, Any]]:
    """Nodes as the API server returns them (the fields a scheduler reads, and then some)."""
    out = []
    for i in range(count):
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"gpu-node-{i:05d}",
                    "uid": f"00000000-0000-0000-0000-{i:012d}",
                    "resourceVersion": str(1000 + i),
                    "labels": {
                        "kubernetes.io/hostname": f"gpu-node-{i:05d}",
                        "kubernetes.io/os": "linux",
                        "node.kubernetes.io/instance-type": "gpu.8x",
                        **topology_labels(i),
                    },
                },
                "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
                "status": {
                    "allocatable": {"cpu": "96", "memory": "1536Gi", "nvidia.com/gpu": "8", "pods": "110"},
                    "capacity": {"cpu": "96", "memory": "1536Gi", "nvidia.com/gpu": "8", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )
    return out


def median_seconds(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    cnt = cluster_network_topology()
    raws = raw_nodes(args.nodes)
    nodes = [Node.parse(r) for r in raws]
    result = hypernodes.from_cluster_network_topology(cnt, nodes)  # warm-up, and the figures to print

    parse = median_seconds(lambda: [Node.parse(r) for r in raws], args.runs)
    translate = median_seconds(lambda: hypernodes.from_cluster_network_topology(cnt, nodes), args.runs)
    per_tier = {t: sum(1 for h in result.hypernodes if h.spec.tier == t) for t in range(1, len(LEVELS) + 1)}
    print(
        f"cluster: {args.nodes} nodes, {len(LEVELS)} tiers, {len(result.hypernodes)} HyperNodes "
        f"({', '.join(f'tier {t}: {n}' for t, n in per_tier.items())})"
    )
    print(f"parse the Node objects alone:          {parse * 1000:8.1f} ms (median of {args.runs})")
    print(f"ClusterNetworkTopology -> HyperNodes:  {translate * 1000:8.1f} ms (median of {args.runs})")
    print(f"ratio translate / parse:               {translate / parse:8.2f}")
    verdict = "met" if translate <= GOAL_SECONDS else "MISSED"
    print(f"goal <= {GOAL_SECONDS:.1f} s: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
