"""How long the words a pending gang gets are at 10,000 nodes: the engine's whole message (what
`explain` and `simulate -o json` print), and the bounded forms users' tools read
(`controller.runtime.messages`): the pod's `PodScheduled` condition and its `FailedScheduling`
Event, and the Volcano-style PodGroup condition with `explain`'s brief.

The cluster is `benchmarks/ui.py`'s (a 4-tier GPU fabric with two gangs that cannot be placed:
512 whole nodes in one spine, 16 nodes in one NVLink domain of 8). The run simulates it as
`topobridge simulate` does and measures, for every gang left pending, the length of each text,
the same functions the scheduler's status writer calls producing them. Timed regions: the
simulation (`simulate`, wall and CPU), and the short forms of every pending gang (`short_message`,
`explain.brief` on the first cycle's snapshot, `with_brief`, `volcano_message`).

    .venv/bin/python benchmarks/messages.py [--nodes 10000]

Ends with `summary: nodes=... pending=... longest_engine=... longest_pod_condition=...
longest_podgroup_condition=... simulate_s=... simulate_cpu_s=... forms_ms=...`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ui import cluster  # beside this script

from controller.placer.explain import brief
from controller.placer.scenario import load_scenario, prepare, simulate
from controller.runtime.messages import short_message, volcano_message, with_brief


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, allow_abbrev=False)
    ap.add_argument("--nodes", type=int, default=10000)
    args = ap.parse_args()

    objects = cluster(args.nodes)
    sc = load_scenario(objects)
    w0, c0 = time.perf_counter(), time.process_time()
    result = simulate(sc)
    sim_wall, sim_cpu = time.perf_counter() - w0, time.process_time() - c0

    first = prepare(load_scenario(objects))
    gangs = {g.key: g for g in first.gangs()}
    rows = []
    w0 = time.perf_counter()
    for key, engine in sorted(result.unschedulable.items()):
        gang = gangs.get(key)
        if gang is None:
            continue
        pod_text = short_message(engine)
        group_text = volcano_message(
            len(gang.pending), len(gang.pods), with_brief(engine, brief(gang, first.snapshot))
        )
        rows.append((key, len(engine), len(pod_text), len(group_text)))
    forms_ms = (time.perf_counter() - w0) * 1000

    print(f"{'gang':<32} {'engine':>8} {'pod condition':>14} {'podgroup condition':>19}")
    for key, engine_len, pod_len, group_len in rows:
        print(f"{key:<32} {engine_len:>8} {pod_len:>14} {group_len:>19}")
    print(f"simulate: {sim_wall:.2f} s wall, {sim_cpu:.2f} s CPU; short forms: {forms_ms:.1f} ms wall")
    longest = [max((r[i] for r in rows), default=0) for i in (1, 2, 3)]
    print(
        f"summary: nodes={args.nodes} pending={len(rows)} longest_engine={longest[0]} "
        f"longest_pod_condition={longest[1]} longest_podgroup_condition={longest[2]} "
        f"simulate_s={sim_wall:.2f} simulate_cpu_s={sim_cpu:.2f} forms_ms={forms_ms:.1f}"
    )


if __name__ == "__main__":
    main()
