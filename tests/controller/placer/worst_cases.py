"""The slowest single attempt the placer has been shown: a gang of three shapes, hard-held to
one block, over blocks full of lower-priority pods of mixed sizes.

The exact preemption search is bounded by steps, and with members of several shapes every
step is a placement attempt: on 16 nodes and 160 running pods the search alone took 12 s of
CPU before attempts had a budget (`controller.placer.attempt_budget`). Used by the budget's unit
tests, its benchmark, and the test that runs it beside a Lease renewal on the real API server.
"""

from __future__ import annotations

import random

from placer_objects import Obj, cnt, koord_gang, pod, priority_class, spine_block_nodes

GANG = "worst"
SHAPES = (("2", "4Gi"), ("3", "8Gi"), ("1500m", "6Gi"))


def worst_attempt(
    *,
    blocks: int = 4,
    nodes_per_block: int = 4,
    pods_per_node: int = 10,
    seed: int = 1,
    scheduler: str = "topobridge",
) -> list[Obj]:
    """Nodes of 8 CPU / 32 Gi in `blocks` blocks under one spine, each holding `pods_per_node`
    low-priority pods (0.3 to 1.1 CPU, 1 to 3 Gi), and a 6-pod high-priority gang of three
    shapes that must gather in one block (Koordinator MustGather on BlockLayer)."""
    rnd = random.Random(seed)
    layout = {"spine-0": {f"block-{b}": [f"n{b}-{i}" for i in range(nodes_per_block)] for b in range(blocks)}}
    out: list[Obj] = [
        *spine_block_nodes(layout),
        cnt(),
        priority_class("low", 10),
        priority_class("high", 1000),
    ]
    for names in layout["spine-0"].values():
        for n in names:
            for k in range(pods_per_node):
                out.append(
                    pod(
                        f"low-{n}-{k}",
                        cpu=rnd.choice(("300m", "500m", "700m", "1100m")),
                        memory=f"{rnd.randint(1, 3)}Gi",
                        node_name=n,
                        priority_class="low",
                        scheduler="default-scheduler",
                    )
                )
    out.append(koord_gang(GANG, 6, gather=[("BlockLayer", "MustGather")]))
    for i in range(6):
        cpu, memory = SHAPES[i % len(SHAPES)]
        out.append(
            pod(
                f"{GANG}-{i}",
                cpu=cpu,
                memory=memory,
                labels={"pod-group.scheduling.sigs.k8s.io": GANG},
                priority_class="high",
                scheduler=scheduler,
                index=i,
            )
        )
    return out
