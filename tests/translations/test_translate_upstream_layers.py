"""`translate --to upstream` beside a ClusterNetworkTopology whose layer chain does not hold.

Found by `make explore` (hack/fuzz.py, seed 1658579833, example 4, translate-upstream): a
ClusterNetworkTopology whose parentTopologyLayer names no layer (the CRD accepts it) raised
InvalidSpecError out of `translate --to upstream` while building the label tree the groups
are written against: a traceback, exit 1 (so did `--to volcano` when the input held a
Kubernetes PodGroup). Now every target says it as one error, and the gangs are still
translated (nothing is written while an error stands)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from topobridge import cmd_translate

Obj = dict[str, Any]
ERROR = (
    'error: ClusterNetworkTopology default: spec.networkTopologySpec[0].parentTopologyLayer: Not found: "Missing":'
    " no layer has this topologyLayer"
)


def _objects() -> list[Obj]:
    cnt = {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "ClusterNetworkTopology",
        "metadata": {"name": "default"},
        "spec": {
            "networkTopologySpec": [
                {"topologyLayer": "BlockLayer", "parentTopologyLayer": "Missing", "labelKey": ["block"]},
                {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
            ]
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "default",
            "annotations": {
                "gang.scheduling.koordinator.sh/name": "g",
                "gang.scheduling.koordinator.sh/min-available": "1",
            },
        },
        "spec": {"schedulerName": "koord-scheduler", "containers": [{"name": "c", "image": "i"}]},
    }
    upstream = {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "u", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}},
    }
    return [cnt, pod, upstream]


@pytest.mark.parametrize("to", ["upstream", "volcano"])
def test_a_layer_chain_that_does_not_hold_is_one_error_for_every_target(to: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": _objects()})
    code = cmd_translate.run(
        ["-"], cmd_translate.TranslateOptions(to=to), out=out, err=err, stdin=io.StringIO(text)
    )
    assert code == 1, err.getvalue()
    assert "Traceback" not in err.getvalue()
    errors = [
        line for line in err.getvalue().splitlines() if line.startswith("error: ClusterNetworkTopology")
    ]
    assert errors == [ERROR]
    assert "gang default/g -> Volcano: carried over: minMember = 1" in err.getvalue()  # the gangs go on
