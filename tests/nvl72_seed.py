"""An NVL72 cluster labelled the way topograph v1.0 and GPU Feature Discovery label one, for the
topology tests (the values follow the two projects' documented examples: topograph's switch IDs
`S-<hex>`, GFD's `nvidia.com/gpu.clique=<ClusterUUID>.<CliqueID>`).

Three GB200 NVL72 racks (NVLink domains), each split by Fabric Manager into two cliques, four
compute trays per rack here (two per clique). Two fabric tiers: rack 0 is cabled to one leaf
switch, rack 1 to two leaves of the same spine, rack 2 to a leaf of another spine; a CPU node
sits on rack 1's second leaf and carries no clique.

    S-spine-0 (tier-1)                      S-spine-1 (tier-1)
    ├── S-leaf-0 (tier-0): rack 0, rack 1 trays 0-1     └── S-leaf-2: rack 2
    └── S-leaf-1 (tier-0): rack 1 trays 2-3, cpu-0
"""

from __future__ import annotations

from typing import Any

JsonDict = dict[str, Any]

TIER0, TIER1, TIER2 = (f"fabric.topograph.run/tier-{t}" for t in range(3))
DOMAIN = "accelerator.topograph.run/domain"
SUB_DOMAIN = "accelerator.topograph.run/sub-domain"
CLIQUE = "nvidia.com/gpu.clique"
RACKS = (
    "7f3c2a10-5b4e-4d6a-9c1e-2b8f0e6d4a91",
    "b1d4e8f2-3c6a-4e9b-8d2f-5a7c9e1b3d6f",
    "c9e2a4f6-8b1d-4f3a-9e5c-7d2b6a8f1e4c",
)
LEAF = (
    {(0, t): "S-leaf-0" for t in range(4)}
    | {
        (1, 0): "S-leaf-0",
        (1, 1): "S-leaf-0",
        (1, 2): "S-leaf-1",
        (1, 3): "S-leaf-1",
    }
    | {(2, t): "S-leaf-2" for t in range(4)}
)
SPINE = {"S-leaf-0": "S-spine-0", "S-leaf-1": "S-spine-0", "S-leaf-2": "S-spine-1"}


def node(name: str, labels: dict[str, str] | None = None, *, gpus: int = 4) -> JsonDict:
    allocatable = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": allocatable},
    }


def tray(rack: int, t: int) -> str:
    return f"gb200-r{rack}-t{t}"


def clique(rack: int, t: int) -> str:
    return f"{RACKS[rack]}.{1 + t // 2}"


def nvl72_nodes(*, fabric: bool = True, cliques: bool = True, cpu: bool = True) -> list[JsonDict]:
    """The cluster above; `fabric=False` drops the topograph labels, `cliques=False` GFD's."""
    out = []
    for rack in range(3):
        for t in range(4):
            labels: dict[str, str] = {}
            if fabric:
                labels |= {TIER0: LEAF[rack, t], TIER1: SPINE[LEAF[rack, t]]}
            if cliques:
                labels[CLIQUE] = clique(rack, t)
            out.append(node(tray(rack, t), labels))
    if cpu:
        out.append(node("cpu-0", {TIER0: "S-leaf-1", TIER1: "S-spine-0"} if fabric else {}, gpus=0))
    return out


NVL72_TREE = [
    "fabric-tier-1/S-spine-0 t4",
    "  fabric-tier-0/S-leaf-0 t3",
    f"    nvlink-rack/{RACKS[0]} t2",
    f"      nvlink-clique/{RACKS[0]}.1 t1: gb200-r0-t0 gb200-r0-t1",
    f"      nvlink-clique/{RACKS[0]}.2 t1: gb200-r0-t2 gb200-r0-t3",
    "  fabric-tier-0/S-leaf-1 t3: cpu-0",
    f"  nvlink-rack/{RACKS[1]} t2",
    f"    nvlink-clique/{RACKS[1]}.1 t1: gb200-r1-t0 gb200-r1-t1",
    f"    nvlink-clique/{RACKS[1]}.2 t1: gb200-r1-t2 gb200-r1-t3",
    "fabric-tier-1/S-spine-1 t4",
    "  fabric-tier-0/S-leaf-2 t3",
    f"    nvlink-rack/{RACKS[2]} t2",
    f"      nvlink-clique/{RACKS[2]}.1 t1: gb200-r2-t0 gb200-r2-t1",
    f"      nvlink-clique/{RACKS[2]}.2 t1: gb200-r2-t2 gb200-r2-t3",
]
"""The tree the labels above describe, as `outline` prints it: rack 1, cabled to two leaves,
nests in their spine; the CPU node stays on its leaf."""


def outline(tree: Any) -> list[str]:
    """A `TopologyTree` as lines: `<indent><domain id> t<tier>[: <nodes held directly>]`."""
    out = []
    for depth, did in tree.depth_first():
        dom = tree.domains[did]
        held = f": {' '.join(dom.nodes)}" if dom.nodes else ""
        out.append(f"{'  ' * depth}{did} t{dom.tier}{held}")
    return out
