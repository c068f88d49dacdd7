"""Translate and expansion do work in proportion to what they write, never to a number an
object states: a HyperNode `tier: 2147483647` once made `translate --to koordinator|kueue`
loop over every tier below it (> 20 s and 2.7 GB when stopped); an LWS with `replicas:
2147483647` made a list of 2^31 group indexes (MemoryError), on the live LWS reconciler's
event loop too; a non-indexed Job of 10,000 pods got 9,996 distinct names (five random
characters collide) and silently lost four pods."""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest
from test_hypernodes import _hn
from test_lws_to_volcano import leader, lws, translate

from topobridge import cmd_translate
from translations import hypernodes as hn
from translations import lws_to_volcano as l2v
from translations.core import Job
from translations.errors import InvalidSpecError
from translations.expand import expand_job
from translations.quantity import format_quantity


@pytest.mark.parametrize("tier", [hn.MAX_LAYER_TIER + 1, 2_147_483_647])
def test_a_tier_past_the_layer_bound_is_refused_naming_the_hypernode(tier: int) -> None:
    hypernodes = [_hn("top", tier, children=("rack",)), _hn("rack", 1, nodes=("n1",))]
    with pytest.raises(InvalidSpecError) as exc:
        hn.to_cluster_network_topology(hypernodes, [])
    assert str(exc.value).startswith(f"HyperNode top: spec.tier: Invalid value: {tier}: ")
    assert f"at most {hn.MAX_LAYER_TIER} tiers translate" in str(exc.value)


def test_tiers_at_the_bound_still_get_one_layer_each() -> None:
    top = hn.MAX_LAYER_TIER
    result = hn.to_cluster_network_topology(
        [_hn("top", top, children=("rack",)), _hn("rack", 1, nodes=("n1",))], []
    )
    assert len(result.cluster_network_topology.spec.network_topology_spec) == top + 1  # and the node layer


def test_an_lws_of_two_billion_groups_is_reported_in_closed_form() -> None:
    result = translate(lws(replicas=2_147_483_647, size=1), pods=[leader("lws-hard-topology", 0)])
    assert [pg.name for pg in result.pod_groups] == ["lws-hard-topology-0-5d8f7c6b9"]
    assert result.report.refused == ["groups 1..2147483646: no leader pod in the input yet, so no PodGroup"]


def test_a_revision_stands_in_for_at_most_the_bound_of_groups() -> None:
    many = l2v.MAX_GROUPS_FROM_REVISION + 2
    result = translate(lws(replicas=many), pods=[leader("lws-hard-topology", 5)], revision="r1")
    assert [pg.name for pg in result.pod_groups] == ["lws-hard-topology-5-5d8f7c6b9"]
    assert result.report.refused == [
        f"groups 0..4, 6..{many - 1}: {many - 1} PodGroups from --revision, more than the"
        f" {l2v.MAX_GROUPS_FROM_REVISION} translate writes; give their leader pods instead"
    ]
    fewer = translate(lws(replicas=4), pods=[leader("lws-hard-topology", 1)], revision="r1")
    assert [pg.name for pg in fewer.pod_groups] == [
        "lws-hard-topology-0-r1",
        "lws-hard-topology-1-5d8f7c6b9",
        "lws-hard-topology-2-r1",
        "lws-hard-topology-3-r1",
    ]


def test_ten_thousand_pods_of_a_job_get_ten_thousand_names() -> None:
    job = Job.parse(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "many", "namespace": "default", "uid": "u1"},
            "spec": {
                "parallelism": 10_000,
                "completions": 10_000,
                "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
            },
        }
    )
    names = [p["metadata"]["name"] for p in expand_job(job).pods]
    assert len(names) == 10_000
    assert len(set(names)) == 10_000
    again = [p["metadata"]["name"] for p in expand_job(job).pods]
    assert again == names  # a function of the Job, run after run


@pytest.mark.parametrize(
    ("value", "binary"),
    [(Decimal("1" * 5_000), False), (Decimal(2**20_000), True)],
    ids=["5000-digits", "binary"],
)
def test_a_quantity_of_more_than_4300_digits_is_written(value: Decimal, binary: bool) -> None:
    """Found by hack/fuzz.py (seed 1, translate --to volcano): a PodGroup's minResources of
    `cpu: 111...1` (5,000 digits, a quantity the CRD stores) raised ValueError: Exceeds the
    limit (4300 digits) for integer string conversion, when written back."""
    written = format_quantity(value, binary=binary)
    assert len(written) > 4_300
    assert written[0] == str(value)[0]


def test_a_layer_chain_that_does_not_hold_is_one_error_not_a_traceback() -> None:
    """Found by hack/fuzz.py (seed 4, translate --to volcano): a ClusterNetworkTopology whose
    parentTopologyLayer names no layer (the CRD accepts it) raised InvalidSpecError out of
    `translate` while mapping the Koordinator gangs' layers: a traceback, exit 1."""
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
    out, err = io.StringIO(), io.StringIO()
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [cnt, pod]})
    code = cmd_translate.run(["-"], out=out, err=err, stdin=io.StringIO(text))
    assert code == 1
    errors = [
        line for line in err.getvalue().splitlines() if line.startswith("error: ClusterNetworkTopology")
    ]
    assert errors == [
        'error: ClusterNetworkTopology default: spec.networkTopologySpec[0].parentTopologyLayer: Not found: "Missing": no layer has this topologyLayer'
    ]
