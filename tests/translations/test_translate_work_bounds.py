"""Translate and expansion do work in proportion to what they write, never to a number an
object states: a HyperNode `tier: 2147483647` once made `translate --to koordinator|kueue`
loop over every tier below it (> 20 s and 2.7 GB when stopped); an LWS with `replicas:
2147483647` made a list of 2^31 group indexes (MemoryError), on the live LWS reconciler's
event loop too; a non-indexed Job of 10,000 pods got 9,996 distinct names (five random
characters collide) and silently lost four pods."""

from __future__ import annotations

import pytest
from test_hypernodes import _hn
from test_lws_to_volcano import leader, lws, translate

from translations import hypernodes as hn
from translations import lws_to_volcano as l2v
from translations.core import Job
from translations.errors import InvalidSpecError
from translations.expand import expand_job


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
