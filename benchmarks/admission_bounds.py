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

Adversarial payloads the API server accepts (found by `tests/strategies/`'s generator):

* `podgroup-stalling-quantity`: a Volcano PodGroup whose `minResources` holds `"1" * 16000 +
  "e1.5"` (the CRD pattern allows decimal exponents; Kubernetes refuses it): a backtracking
  quantity pattern took seconds to refuse it;
* `hypernode-deep-chain`: the bottom HyperNode of a 600-deep chain with 2,000 leaves, asking
  for the top one as a member (a cycle), judged against a view holding the whole chain;
* `pod-huge-digit-names`: a Pod whose Koordinator gang name, Volcano group name and `groups`
  carry 4,301-digit names (past `int()`'s limit);
* `volcano-job-8000-tasks`: a Volcano Job of 8,000 tasks from three templates, 1.51 MiB
  (the largest object the API server stores), each task's template read once per distinct
  template (`webhooks.rules.volcano_job.parse`);
* `tree-deep-chain` (not a review: what the controller's view pays when that chain changes):
  building the topology tree from those 2,600 HyperNodes.

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
from translations.topology import from_hypernodes
from translations.volcano import HyperNode
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


HUGE = "9" * 4301


def stalling_podgroup() -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "stall", "namespace": "default"},
        "spec": {"minMember": 1, "minResources": {"cpu": "1" * 16000 + "e1.5"}},
    }


def _hn(name: str, tier: int, members: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {
            "tier": tier,
            "members": [{"type": t, "selector": {"exactMatch": {"name": m}}} for t, m in members],
        },
    }


def deep_chain(depth: int = 600, leaves: int = 2000) -> list[dict[str, Any]]:
    """hn-0 (tier 1) under hn-1 ... under hn-<depth-1>; `leaves` tier-1 HyperNodes under hn-1."""
    out = [_hn("hn-0", 1, [("Node", "n0")])]
    for i in range(1, depth):
        kids = [("HyperNode", f"hn-{i - 1}")] + (
            [("HyperNode", f"leaf-{j}") for j in range(leaves)] if i == 1 else []
        )
        out.append(_hn(f"hn-{i}", i + 1, kids))
    out += [_hn(f"leaf-{j}", 1, [("Node", f"l{j}")]) for j in range(leaves)]
    return out


def huge_digit_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "w",
            "namespace": "default",
            "annotations": {
                koord.GANG_NAME: HUGE,
                koord.GANG_GROUPS: json.dumps([f"default/{HUGE}", f"default/{HUGE}1"]),
                "scheduling.k8s.io/group-name": HUGE,
            },
        },
    }


def volcano_job(tasks: int = 8_000) -> dict[str, Any]:
    def template(role: str) -> dict[str, Any]:
        requests = {"cpu": "1"}
        container = {"name": "main", "image": "train:v1", "resources": {"requests": requests}}
        return {"metadata": {"labels": {"role": role}}, "spec": {"containers": [container]}}

    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {
            "minAvailable": tasks,
            "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            "tasks": [
                {"name": f"task-{i}", "replicas": 1, "template": template(f"r{i % 3}")} for i in range(tasks)
            ],
        },
    }


def _time(call: Callable[[], Any], runs: int) -> tuple[float, float, float]:
    """(median wall, max wall, median CPU) seconds."""
    samples, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        call()
        samples.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return statistics.median(samples), max(samples), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    state = ClusterState.build(cnt_layers=[f"Layer{i}" for i in range(koord.MAX_GATHER_STRATEGIES)])
    chain = deep_chain()
    chain_state, _ = ClusterState.from_objects(chain)
    cyclic = _hn("hn-0", 1, [("Node", "n0"), ("HyperNode", "hn-599")])
    payloads = {
        "pod-groups": (pod(koord.MAX_GANG_GROUP_MEMBERS), state),
        "pod-groups-refused": (pod(60_000), state),
        "hypernode-regex": (hypernode(), state),
        "podgroup-groups": (podgroup(), state),
        "podgroup-stalling-quantity": (stalling_podgroup(), state),
        "hypernode-deep-chain": (cyclic, chain_state),
        "pod-huge-digit-names": (huge_digit_pod(), state),
        "volcano-job-8000-tasks": (volcano_job(), state),
    }
    figures: dict[str, float] = {}
    cpus: dict[str, float] = {}
    worst_admitted = 0.0
    offload = ServerSettings().offload_bytes
    for name, (obj, view) in payloads.items():
        _, decision = registry.validate_object(obj, view)
        median, peak, cpu = _time(lambda obj=obj, view=view: registry.validate_object(obj, view), args.runs)
        size = len(json.dumps(obj))
        verdict = "admitted" if decision.allowed else "denied"
        where = "worker thread" if size > offload else "event loop"
        print(
            f"{name}: {size / 1024:.0f} KiB, {verdict}, on the {where}, "
            f"median {median * 1e3:.1f} ms, max {peak * 1e3:.1f} ms, median CPU {cpu * 1e3:.1f} ms"
        )
        figures[name] = peak
        cpus[name] = cpu
        if decision.allowed and size <= offload:
            worst_admitted = max(worst_admitted, peak)
    hns = [HyperNode.parse(h) for h in chain]
    median, peak, cpu = _time(lambda: from_hypernodes(hns, []), max(1, args.runs // 2))
    print(
        f"tree-deep-chain: {len(hns)} HyperNodes, median {median * 1e3:.1f} ms, max {peak * 1e3:.1f} ms,"
        f" median CPU {cpu * 1e3:.1f} ms"
    )
    figures["tree-deep-chain"] = peak
    cpus["tree-deep-chain"] = cpu
    worst = max(figures, key=lambda k: figures[k])
    print(
        "summary: "
        + " ".join(f"{k}_max_ms={v * 1e3:.1f} {k}_cpu_ms={cpus[k] * 1e3:.1f}" for k, v in figures.items())
        + f" worst={worst} worst_ms={figures[worst] * 1e3:.1f}"
        + f" worst_admitted_on_loop_ms={worst_admitted * 1e3:.1f} goal_ms={GOAL_SECONDS * 1e3:.0f}"
        + f" goal_met={'yes' if worst_admitted <= GOAL_SECONDS else 'no'}"
    )


if __name__ == "__main__":
    main()
