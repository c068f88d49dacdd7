"""What the largest objects admission still accepts cost on the event loop that answers.

Each payload is the worst one the bounds let through, judged by its validating rule (the
pure function the webhook's handler calls on its event loop, the loop that also renews the
controller's lease when one process does both), with a known cluster view:

* `pod-groups`: a Pod whose `gang.scheduling.koordinator.sh/groups` lists
  MAX_GANG_GROUP_MEMBERS distinct gangs (its own included) and whose network-topology-spec
  has MAX_GATHER_STRATEGIES layers;
* `pod-groups-refused`: the same with 60,000 gangs (refused by the bound);
* `hypernode-regex`: a HyperNode whose members are regexMatch patterns of MAX_PATTERN_LENGTH
  characters, as many as fit in the 3 MiB request body the server accepts;
* `podgroup-groups`: a scheduling.sigs.k8s.io PodGroup with the same `groups` as `pod-groups`.

Timed region: one call of the rule (parsing of the object included, JSON decoding of the
review excluded). Prints the median and the maximum over the runs. The server judges a review
larger than `ServerSettings.offload_bytes` on a worker thread; the others run on its event
loop. Goal: every admitted payload judged on the loop takes under 50 ms, so no answer holds
the loop long enough to matter for a lease renewal (deadline 10 s, retry every 2 s).

    .venv/bin/python benchmarks/admission_bounds.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from translations import goregex
from translations import koordinator as koord
from webhooks.rules import ClusterState, registry
from webhooks.server import ServerSettings

GOAL_SECONDS = 0.050
MAX_BODY = 3 * 1024 * 1024


def _groups(n: int) -> str:
    return json.dumps([f"default/gang-{i}" for i in range(n)])


def _spec() -> str:
    layers = [{"layer": f"Layer{i}", "strategy": "PreferGather"} for i in range(koord.MAX_GATHER_STRATEGIES)]
    return json.dumps({"gatherStrategy": layers})


def pod(groups: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "w",
            "namespace": "default",
            "annotations": {
                koord.GANG_NAME: "gang-0",
                koord.GANG_MIN_AVAILABLE: "4",
                koord.GANG_GROUPS: _groups(groups),
                koord.NETWORK_TOPOLOGY_SPEC: _spec(),
            },
        },
    }


def podgroup() -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {
            "name": "gang-0",
            "namespace": "default",
            "annotations": {koord.GANG_GROUPS: _groups(koord.MAX_GANG_GROUP_MEMBERS)},
        },
        "spec": {"minMember": 4},
    }


def hypernode() -> dict[str, Any]:
    count = MAX_BODY // (goregex.MAX_PATTERN_LENGTH + 80)
    width = goregex.MAX_PATTERN_LENGTH // 12
    members = [
        {
            "type": "Node",
            "selector": {
                "regexMatch": {"pattern": "^(" + "|".join(f"m{i}-{j:05d}" for j in range(width)) + ")$"}
            },
        }
        for i in range(count)
    ]
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "block-0"},
        "spec": {"tier": 1, "members": members},
    }


def _time(call: Callable[[], Any], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), max(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    state = ClusterState.build(cnt_layers=[f"Layer{i}" for i in range(koord.MAX_GATHER_STRATEGIES)])
    payloads = {
        "pod-groups": pod(koord.MAX_GANG_GROUP_MEMBERS),
        "pod-groups-refused": pod(60_000),
        "hypernode-regex": hypernode(),
        "podgroup-groups": podgroup(),
    }
    figures: dict[str, float] = {}
    worst_admitted = 0.0
    offload = ServerSettings().offload_bytes
    for name, obj in payloads.items():
        _, decision = registry.validate_object(obj, state)
        median, peak = _time(lambda obj=obj: registry.validate_object(obj, state), args.runs)
        size = len(json.dumps(obj))
        verdict = "admitted" if decision.allowed else "denied"
        where = "worker thread" if size > offload else "event loop"
        print(
            f"{name}: {size / 1024:.0f} KiB, {verdict}, on the {where}, "
            f"median {median * 1e3:.1f} ms, max {peak * 1e3:.1f} ms"
        )
        figures[name] = peak
        if decision.allowed and size <= offload:
            worst_admitted = max(worst_admitted, peak)
    print(
        "summary: "
        + " ".join(f"{k}_max_ms={v * 1e3:.1f}" for k, v in figures.items())
        + f" worst_admitted_on_loop_ms={worst_admitted * 1e3:.1f} goal_ms={GOAL_SECONDS * 1e3:.0f}"
        + f" goal_met={'yes' if worst_admitted <= GOAL_SECONDS else 'no'}"
    )


if __name__ == "__main__":
    main()
