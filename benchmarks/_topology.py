"""The synthetic 4-tier GPU fabric the placer and translation benchmarks share:
datacenter > spine > block > NVLink accelerator domain > node, 8 nodes per NVLink domain."""

from __future__ import annotations

from typing import Any

from translations.koordinator import ClusterNetworkTopology

LEVELS = (  # top-down: (layer, label key, children per domain)
    ("DatacenterLayer", "network.topology.nvidia.com/datacenter", 4),
    ("SpineLayer", "network.topology.nvidia.com/spine", 8),
    ("BlockLayer", "network.topology.nvidia.com/block", 8),
    ("AcceleratorLayer", "network.topology.nvidia.com/accelerator", 8),
)


def cluster_network_topology() -> ClusterNetworkTopology:
    """The `default` ClusterNetworkTopology chaining LEVELS down to NodeTopologyLayer."""
    specs: list[dict[str, Any]] = []
    parent = None
    for layer, key, _ in LEVELS:
        spec: dict[str, Any] = {"topologyLayer": layer, "labelKey": [key]}
        if parent:
            spec["parentTopologyLayer"] = parent
        specs.append(spec)
        parent = layer
    specs.append({"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": parent})
    return ClusterNetworkTopology.parse(
        {"metadata": {"name": "default"}, "spec": {"networkTopologySpec": specs}}
    )


def topology_labels(node_index: int) -> dict[str, str]:
    """The LEVELS labels of the node at `node_index`."""
    accel = node_index // LEVELS[3][2]
    block = accel // LEVELS[2][2]
    spine = block // LEVELS[1][2]
    dc = spine // LEVELS[0][2]
    return {
        LEVELS[0][1]: f"dc-{dc}",
        LEVELS[1][1]: f"spine-{spine}",
        LEVELS[2][1]: f"block-{block}",
        LEVELS[3][1]: f"nvl-{accel}",
    }
