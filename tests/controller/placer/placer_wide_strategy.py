"""The strategy drawing `placer_wide_cases.WideCase`s (see that module for what they hold)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from placer_cases import node_shape
from placer_wide_cases import APPS, LEVELS, PRIORITIES, WideCase, WideGang, WideNode, WidePod

PDB_LIMITS: tuple[dict[str, Any], ...] = (
    {"minAvailable": 1},
    {"minAvailable": 2},
    {"minAvailable": "50%"},
    {"minAvailable": "67%"},
    {"maxUnavailable": 1},
    {"maxUnavailable": "34%"},
    {"maxUnavailable": "50%"},
)


@st.composite
def wide_cases(draw: st.DrawFn, *, crowded: bool = False) -> WideCase:
    """1-12 nodes, 0-3 domain tiers, running pods (some terminating, some in a gang), pending
    pods of another scheduler nominated to nodes, budgets, and 1-3 pending gangs of 1-3 pending
    pods each, some with members already bound. `crowded`: smaller, lower-priority running
    pods, bigger gangs, more budgets, and mostly the room left held by pods no gang may evict,
    so gangs preempt, often several pods at once."""
    depth = draw(st.sampled_from([0, 1, 2, 3, 3]))
    widths = [draw(st.integers(1, 2)) for _ in LEVELS]  # supers, spines per super, blocks per spine
    nodes = [
        WideNode(
            name=f"node-{i}",
            path=(
                draw(st.integers(0, widths[0] - 1)),
                draw(st.integers(0, widths[1] - 1)),
                draw(st.integers(0, widths[2] - 1)),
            ),
            **node_shape(draw),
        )
        for i in range(draw(st.integers(1, 12)))
    ]
    room = {n.name: [n.cpu * 1000, n.mem, n.gpu, n.pods] for n in nodes}

    def take(p: WidePod, node: WideNode) -> bool:
        """Hold `p`'s request on `node` when it fits (a consistent snapshot)."""
        left = room[node.name]
        need = [p.cpu, p.mem, p.gpu, 1]
        if any(x < y for x, y in zip(left, need, strict=True)):
            return False
        room[node.name] = [x - y for x, y in zip(left, need, strict=True)]
        return True

    def sized(name: str) -> WidePod:
        return WidePod(
            name=name,
            cpu=draw(st.sampled_from([500, 1000, 1000, 2000] if crowded else [500, 1000, 2000, 4000])),
            mem=draw(st.sampled_from([1, 2, 4])),
            gpu=draw(st.sampled_from([0, 0, 1, 2])),
            priority=draw(st.sampled_from((0, 100, 100, 1000) if crowded else PRIORITIES)),
        )

    running: list[WidePod] = []
    # Contended: small gangs compete in one cycle for low-priority pods under one budget.
    contend = crowded and draw(st.integers(0, 2)) == 0
    # Crowded: the running pods gather on a few nodes (making room there takes several of
    # them) or spread over all (several gangs each find some to evict).
    hot = nodes[: draw(st.sampled_from([1, 2, 4, 12]))] if crowded and not contend else nodes
    for j in range(draw(st.integers(4, 14) if crowded else st.integers(0, 8))):
        p = sized(f"run-{j}")
        node = draw(st.sampled_from(hot))
        p.node, p.app = node.name, draw(st.sampled_from(("", "a", "a", "b", "b", "c")))
        p.terminating = draw(st.integers(0, 4)) == 0
        if contend:
            p.app, p.priority = "a", min(p.priority, 100)
        if take(p, node):
            running.append(p)
    # The oracle enumerates victim sets: at most 11 pods that can be victims.
    alive = [p for p in running if not p.terminating][:11]
    running = [p for p in running if p.terminating or p in alive]
    bound_gangs: dict[str, tuple[list[str], int]] = {}
    if len(running) >= 2 and draw(st.booleans()):
        k = draw(st.integers(2, min(3, len(running))))
        for m in running[:k]:
            m.priority = running[0].priority
        bound_gangs["job-x"] = ([m.name for m in running[:k]], draw(st.integers(1, k)))
    for j in range(draw(st.integers(0, 2))):
        holder = sized(f"nom-{j}")
        node = draw(st.sampled_from(nodes))
        if take(holder, node):
            holder.nominated = node.name
            running.append(holder)
    going = [n for n in nodes if any(p.terminating and p.node == n.name for p in running)]
    gangs = [
        _gang(draw, i, nodes, take, depth, crowded, contend, going)
        for i in range(draw(st.sampled_from([2, 3] if contend else [1, 2, 3, 3] if crowded else [1, 2, 3])))
    ]
    if crowded and draw(st.integers(0, 3)) > 0:
        # Room left is held by pods no gang may evict: the gangs must preempt, often several pods.
        for i, n in enumerate(nodes):
            holder = WidePod(f"hold-{i}", room[n.name][0], 1, 0, priority=PRIORITIES[-1], node=n.name)
            if holder.cpu >= 500 and take(holder, n):
                running.append(holder)
    pdbs = [
        (
            draw(st.sampled_from(APPS[:2])),
            draw(st.sampled_from(PDB_LIMITS)),
            draw(st.sampled_from([None, None, 0, 1])),
        )
        for _ in range(draw(st.integers(1, 3) if crowded else st.integers(0, 2)))
    ]
    if contend:
        pdbs[0] = ("a", *pdbs[0][1:])
    return WideCase(
        depth, draw(st.sampled_from(["cnt", "hypernode"])), nodes, running, bound_gangs, pdbs, gangs
    )


def _gang(
    draw: st.DrawFn,
    i: int,
    nodes: list[WideNode],
    take: Callable[[WidePod, WideNode], bool],
    depth: int,
    crowded: bool,
    contend: bool,
    going: list[WideNode],
) -> WideGang:
    priority = draw(st.sampled_from([1000, 5000, 5000] if crowded else [100, 1000, 5000]))
    size = draw(st.integers(1, 3))
    if contend:
        priority, size = 5000, 1
    base = WidePod(
        name="",
        cpu=draw(st.sampled_from([1000, 2000, 2000, 3000] if crowded else [500, 1000, 2000, 4000])),
        mem=draw(st.sampled_from([1, 2, 4])),
        gpu=draw(st.sampled_from([0, 0, 0, 1] if crowded else [0, 0, 1])),
        priority=priority,
    )
    pods = [WidePod(f"gang-{i}-{r}", base.cpu, base.mem, base.gpu, priority) for r in range(size)]
    if size >= 2 and draw(st.booleans()):  # a leader of its own shape
        pods[0].cpu, pods[0].mem, pods[0].gpu = draw(st.sampled_from([250, 1000, 3000])), 1, 0
    # Members already bound (the rest are their replacements), close to one another.
    if draw(st.integers(0, 2)) == 0:
        first = draw(st.sampled_from(nodes))
        near = [n for n in nodes if depth == 0 or n.domain(1) == first.domain(1)]
        for p in pods[: draw(st.integers(1, size))]:
            node = draw(st.sampled_from(near))
            if take(p, node):
                p.node = node.name
        pods += [
            WidePod(f"gang-{i}-{r}", base.cpu, base.mem, base.gpu, priority) for r in range(size, size + 1)
        ]
    elif draw(st.integers(0, 3)) == 0:
        # Nominated by an earlier cycle, all on one node (inside any constraint), often where a
        # victim is still terminating.
        node = draw(st.sampled_from(going if going and draw(st.booleans()) else nodes))
        for p in pods:
            p.nominated = node.name
    if draw(st.integers(0, 4)) == 0:
        zone = draw(st.sampled_from(["a", "b"]))
        for p in pods:
            p.zone = zone
    if draw(st.integers(0, 3)) == 0:
        for p in pods:
            p.tolerate = True
    dialect = draw(st.sampled_from(["volcano", "koordinator"]))
    kind = draw(st.sampled_from(["none", "hard", "hard", "soft"]))
    mode: str | None = None
    tier: int | None = None
    if kind == "hard":
        mode = "hard"
        tier = draw(st.integers(0, depth + (1 if dialect == "volcano" else 0)))
    elif kind == "soft":
        mode = "soft"
        tier = draw(st.integers(0, depth)) if (dialect == "koordinator" or draw(st.booleans())) else None
        if dialect == "koordinator" and tier == 0:
            tier = depth or None
            mode = mode if tier is not None else None
    return WideGang(
        name=f"gang-{i}",
        dialect=dialect,
        pods=pods,
        priority=priority,
        never=draw(st.integers(0, 14)) == 0,
        mode=mode,
        tier=tier,
        created=draw(st.integers(0, 3)),
    )
