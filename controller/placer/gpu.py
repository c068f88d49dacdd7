"""GPU-dialect placement: how many nodes a gang may use and how much each must give it.

A gang from the GPU dialect (`gpu.topology/*`, `translations.gpu`) carries rules the plain
selection does not know. They are applied here, on the same offers and index:

1. filter (the GPU plugin): `require-nvlink` / `policy: nvlink` keep every pod off nodes known
   not to have NVLink (their NVLink label, `--gpu-nvlink-label`, default
   `topobridge.io/gpu-nvlink`, says false); a node with no information passes (`nvlink_mask`).
2. usable slots: per node, the gang's slots capped at its size (`spread`: at most 1); a node
   that cannot take `floor` pods (`min-gpus-per-node` / GPUs per pod, rounded up) is unusable.
3. fit: a place holds the gang iff the fewest of its usable nodes that hold all pods (taken
   fullest first) number at most `max-nodes` and at most `n // floor` (every node used must
   get `floor` pods). Exact for the gang's one shape.
4. where: `best-fit` (the default) takes the lowest level that fits, candidates in the
   engine's binpack order; `pack` takes the fewest nodes first (over the whole cluster), then
   the lowest level, then binpack; `spread` takes one node per pod at the widest level,
   round-robin over the top domains so the pods spread as wide as the tree allows.
5. which nodes: fullest first; the node that completes the gang is swapped for the smallest
   one that still does (binpack); every node gets `floor` pods, the rest fill the fullest.
   Ranks fill the chosen nodes in tree order, as the engine's layout does.
6. rank order for launchers (`rank_annotations`, written at bind time): each pod's topology
   path and the gang's ranks in tree order.

Only pending pods count: members already bound are anchors the rules do not see again.
`single-numa` and `min-bandwidth` are inside a node (kubelet, device plugin): not here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from controller.placer.memo import MemoSlot
from controller.placer.snapshot import I64, Bool, ClusterIndex
from translations import gpu
from translations.gangs import Gang

NVLINK_EXCLUSION = "node(s) didn't have NVLink-connected GPUs"
NVLINK_MASK: MemoSlot[Bool] = MemoSlot("gpu-nvlink")


@dataclass(frozen=True, slots=True)
class GpuRules:
    """A GPU gang's placement rules, resolved against its pods' requests."""

    policy: gpu.MultiNodePolicy
    max_nodes: int | None
    floor: int
    """Fewest pods a used node must take (`min-gpus-per-node`); 0: no node can give enough."""
    min_gpus_per_node: int | None
    gpus_per_pod: int
    nvlink_label: str | None
    """The node label to require, None when NVLink is not required."""
    held_nodes: int = 0
    """Nodes the gang's bound members already use: they count against `max-nodes` too."""

    @classmethod
    def of(cls, gang: Gang) -> GpuRules | None:
        if gang.gpu is None:
            return None
        req = gang.gpu.request
        pods = gang.pending or gang.pods
        per_pod = max((p.requests.get(gpu.GPU_RESOURCE, 0) for p in pods), default=0)
        return cls(
            policy=req.multi_node_policy,
            max_nodes=req.max_nodes,
            floor=gpu.pods_per_node_floor(req, per_pod),
            min_gpus_per_node=req.min_gpus_per_node,
            gpus_per_pod=per_pod,
            nvlink_label=gang.gpu.nvlink_label if req.nvlink else None,
            held_nodes=len({m.node_name for m in gang.bound if m.node_name}),
        )


def nvlink_mask(index: ClusterIndex, label: str) -> Bool:
    """Nodes a gang that requires NVLink may use, as the GPU seed's Filter decides: a node known
    not to have NVLink (`label` set to false, 0 or empty) fails; a node known to have it passes,
    and so does a node nothing is known about ("default behaviour": unknown passes)."""

    def build() -> Bool:
        values = index.label_values(label)
        return np.fromiter(
            (v is None or gpu.is_nvlink(v) for v in values), dtype=np.bool_, count=index.n_nodes
        )

    return index.memo.get(NVLINK_MASK, label, build)


def usable_slots(rules: GpuRules, slots: I64, n: int) -> I64:
    """Per node: pods of the gang it may take under the rules (0: unusable)."""
    cap = 1 if rules.policy == "spread" else n
    out = np.minimum(slots, cap)
    if rules.floor <= 0:
        return np.zeros_like(out)
    out[out < rules.floor] = 0
    return out


def fewest_nodes(usable: I64, n: int) -> int | None:
    """The fewest of these nodes that hold `n` pods (taken fullest first), None if all do not."""
    if n <= 0:
        return 0
    ordered = np.sort(usable)[::-1]
    reach = np.cumsum(ordered)
    hit = np.flatnonzero(reach >= n)
    return int(hit[0]) + 1 if len(hit) else None


def node_limit(rules: GpuRules, n: int) -> int:
    """The most new nodes the gang's `n` pending pods may use: `max-nodes` less the nodes its
    bound members hold, and no more than `n // floor` (each node used takes `floor` pods);
    `spread` needs exactly one node per pod."""
    limit = n if rules.floor <= 1 else n // rules.floor
    if rules.max_nodes is not None:
        # Sound, not tight: a pending pod joining a node a bound member holds is counted anew.
        limit = min(limit, max(rules.max_nodes - rules.held_nodes, 0))
    return limit


def choose(
    rules: GpuRules, usable: I64, lo: int, hi: int, n: int, index: ClusterIndex
) -> list[tuple[int, int]] | None:
    """(node, pods) inside node range [lo, hi), tree order; None when the range cannot hold the gang."""
    seg = usable[lo:hi]
    m = fewest_nodes(seg, n)
    if m is None or m > node_limit(rules, n):
        return None
    nodes = np.flatnonzero(seg > 0) + lo
    if rules.policy == "spread":
        picked = _round_robin(nodes, usable, index)[:n]
        return sorted((int(v), 1) for v in picked)
    order = nodes[np.lexsort((nodes, -usable[nodes]))]
    picked = list(order[:m])
    before = int(usable[picked[:-1]].sum()) if m > 1 else 0
    # Binpack: the node that completes the gang is the smallest one that still does.
    rest = order[m - 1 :]
    completes = rest[usable[rest] >= n - before]
    if len(completes):
        picked[-1] = completes[np.lexsort((completes, usable[completes]))][0]
    counts = {int(v): rules.floor if rules.floor > 0 else 1 for v in picked}
    left = n - sum(counts.values())
    for v in sorted(counts, key=lambda v: (-int(usable[v]), v)):
        extra = min(left, int(usable[v]) - counts[v])
        counts[v] += extra
        left -= extra
    if left:
        return None
    return sorted(counts.items())


def _round_robin(nodes: I64, usable: I64, index: ClusterIndex) -> list[int]:
    """Nodes interleaved over the widest domains (most room first inside each)."""
    groups: dict[int, list[int]] = {}
    for v in nodes.tolist():
        anc = index.node_anc[v]
        top = anc[anc >= 0]
        groups.setdefault(int(top[-1]) if len(top) else -1 - v, []).append(v)
    lists = [sorted(g, key=lambda v: (-int(usable[v]), v)) for g in groups.values()]
    lists.sort(key=lambda g: (-len(g), g[0]))
    out: list[int] = []
    for i in range(max((len(g) for g in lists), default=0)):
        out += [g[i] for g in lists if i < len(g)]
    return out


@dataclass(frozen=True, slots=True)
class GpuChoice:
    """Where the gang goes: the place chosen and (node, pods) in tree order."""

    level: int | str
    place: tuple[str, int]
    """("node" | "domain" | "cluster", index), as `select.Where` takes it."""
    counts: tuple[tuple[int, int], ...]


def select_gpu(
    rules: GpuRules, slots: I64, n: int, index: ClusterIndex, places: Sequence[tuple[int | str, str, int]]
) -> GpuChoice | None:
    """The place and nodes for the gang. `places` are the engine's candidates, lowest level
    first and best first within a level: (level, kind, idx)."""
    usable = usable_slots(rules, slots, n)
    if rules.policy == "spread":
        widest = [p for p in places if p[0] == places[-1][0]] if places else []
        places = widest
    best: tuple[tuple[int, int], GpuChoice] | None = None
    for order, (level, kind, idx) in enumerate(places):
        lo, hi = _range(kind, idx, index)
        got = choose(rules, usable, lo, hi, n, index)
        if got is None:
            continue
        choice = GpuChoice(level, (kind, idx), tuple(got))
        if rules.policy != "pack":
            return choice
        key = (len(got), order)
        if best is None or key < best[0]:
            best = (key, choice)
    return best[1] if best is not None else None


def respects(rules: GpuRules, assignments: Sequence[tuple[int, int]]) -> bool:
    """Does a placement found another way ((position, node) pairs) keep the rules? For gangs
    the GPU selection does not place itself (several shapes, rules between members)."""
    per_node: dict[int, int] = {}
    for _, v in assignments:
        per_node[v] = per_node.get(v, 0) + 1
    if rules.max_nodes is not None and len(per_node) > max(rules.max_nodes - rules.held_nodes, 0):
        return False
    if rules.policy == "spread" and any(c > 1 for c in per_node.values()):
        return False
    return all(c >= rules.floor for c in per_node.values()) and rules.floor > 0


def _range(kind: str, idx: int, index: ClusterIndex) -> tuple[int, int]:
    if kind == "node":
        return idx, idx + 1
    if kind == "domain":
        return int(index.dom_start[idx]), int(index.dom_end[idx])
    return 0, index.n_nodes


def unfit_reason(rules: GpuRules, slots: I64, n: int) -> str:
    """Why no place holds the gang under the rules, in the gang's own terms."""
    usable = usable_slots(rules, slots, n)
    m = fewest_nodes(usable, n)
    if rules.floor <= 0:
        return f"{gpu.MIN_GPUS_PER_NODE} {rules.min_gpus_per_node}: the gang's pods request no {gpu.GPU_RESOURCE}"
    if m is None:
        shown = f" giving at least {rules.min_gpus_per_node} GPUs" if rules.min_gpus_per_node else ""
        spread = " (one pod per node: multi-node-policy spread)" if rules.policy == "spread" else ""
        return f"only {int(usable.sum())} of the gang's {n} pods fit on nodes{shown}{spread}"
    limit = node_limit(rules, n)
    by_max = rules.max_nodes is not None and rules.max_nodes - rules.held_nodes == limit
    why = (
        f"{gpu.MAX_NODES} {rules.max_nodes}"
        if by_max
        else f"{gpu.MIN_GPUS_PER_NODE} {rules.min_gpus_per_node} ({rules.floor} pods per node used)"
    )
    held = (
        f" ({rules.held_nodes} node(s) its bound members use count too)"
        if by_max and rules.held_nodes
        else ""
    )
    return f"the gang's {n} pods need at least {m} nodes now, {why} allows {limit}{held}"


TOPOLOGY_PATH_ANNOTATION = "topobridge.io/topology-path"
"""On each pod of a GPU gang when it is bound: the domains above its node, widest first, then
the node (`spine-1/block-2/node-5`)."""
RING_ORDER_ANNOTATION = "topobridge.io/ring-order"
"""On each pod of a GPU gang when it is bound: the gang's ranks in the order of the topology
tree (`0,1,3,2`), so a launcher can lay NCCL rings along the network."""


def topology_path(index: ClusterIndex, node: str) -> str:
    """The domains holding `node`, widest first, then the node; each domain by its own name
    (the last part of its id, so a ClusterNetworkTopology's `BlockLayer/b2` reads `b2`)."""
    v = index.node_pos.get(node)
    if v is None:
        return node
    chain = [int(d) for d in index.node_anc[v] if d >= 0]
    parts = [index.domain_label(d).rsplit("/", 1)[-1] for d in reversed(chain)]
    return "/".join([*parts, node])


def rank_annotations(
    gang: Gang, placement: Sequence[tuple[str, str]], index: ClusterIndex
) -> dict[str, dict[str, str]]:
    """Per newly placed pod of a GPU gang: its topology path and the gang's ring order.

    A member's rank is its completion index (else its position in the gang's rank order).
    The ring lists every member on a node, placed now or bound before, by node in tree order
    (the index's node order), then rank. Other gangs get nothing."""
    if gang.gpu is None or not placement:
        return {}
    node_of = {m.key: m.node_name for m in gang.bound if m.node_name}
    node_of.update(dict(placement))
    rank = {m.key: (m.rank if m.rank is not None else i) for i, m in enumerate(gang.pods)}
    on_nodes = [k for k in rank if k in node_of]
    far = index.n_nodes
    ring = sorted(on_nodes, key=lambda k: (index.node_pos.get(node_of[k], far), rank[k]))
    ring_text = ",".join(str(rank[k]) for k in ring)
    return {
        key: {TOPOLOGY_PATH_ANNOTATION: topology_path(index, node), RING_ORDER_ANNOTATION: ring_text}
        for key, node in placement
    }
