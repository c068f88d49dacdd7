"""The Score point end to end: preferred node affinity and PreferNoSchedule taints decide
between places that all fit, ahead of binpack, as kube-scheduler's default profile weighs them.

Each scenario is built so that binpack and name order alone pick another place than the score
does: with NodeAffinity or TaintToleration taken off the profile's Score plugins, it fails.
"""

from __future__ import annotations

from typing import Any

from placer_objects import SEED_LAYOUT, cnt, koord_gang, node, pod, run, spine_block_nodes

Obj = dict[str, Any]

GANG_LABEL = "pod-group.scheduling.sigs.k8s.io"
PREFERRED = {"node-7", "node-8"}
"""block-3 of the seed cluster: binpack alone takes block-2 (a two-node block in the fuller
spine, first by name)."""


def _prefer(key: str, value: str, weight: int = 10) -> Obj:
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": weight, "preference": term}]
        }
    }


def _seed_with_pool() -> list[Obj]:
    nodes = spine_block_nodes(SEED_LAYOUT)
    for n in nodes:
        if n["metadata"]["name"] in PREFERRED:
            n["metadata"]["labels"]["pool"] = "fast"
    return [*nodes, cnt()]


def _gang(affinity: Obj | None) -> list[Obj]:
    """Two whole-node pods: every two-node block holds them exactly."""
    members = [pod(f"g-{i}", labels={GANG_LABEL: "g"}, index=i, affinity=affinity) for i in range(2)]
    return [*_seed_with_pool(), koord_gang("g", 2), *members]


def test_a_gang_with_preferred_node_affinity_lands_on_the_preferred_nodes() -> None:
    """Without a preference the gang binpacks onto block-2; preferring `pool=fast`, it takes
    block-3 instead."""
    plain = run(_gang(None)).bound
    assert {plain["default/g-0"], plain["default/g-1"]} == {"node-5", "node-6"}
    preferring = run(_gang(_prefer("pool", "fast"))).bound
    assert {preferring["default/g-0"], preferring["default/g-1"]} == PREFERRED


def _tainted_pair() -> list[Obj]:
    """node-a (half full, binpack's choice) has a PreferNoSchedule taint; node-b is empty."""
    soft = [{"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}]
    return [
        node("node-a", taints=soft),
        node("node-b"),
        pod("busy", node_name="node-a", cpu="4", memory="16Gi"),
    ]


def test_a_pod_avoids_a_prefer_no_schedule_node_when_an_untainted_one_fits() -> None:
    """A pod that does not tolerate the taint goes to node-b; one tolerating it (effect
    PreferNoSchedule) binpacks onto node-a as if the taint were not there."""
    bound = run([*_tainted_pair(), pod("p", cpu="2", memory="1Gi")]).bound
    assert bound["default/p"] == "node-b"
    tolerate = [{"key": "spot", "operator": "Equal", "value": "yes", "effect": "PreferNoSchedule"}]
    bound = run([*_tainted_pair(), pod("p", cpu="2", memory="1Gi", tolerations=tolerate)]).bound
    assert bound["default/p"] == "node-a"
