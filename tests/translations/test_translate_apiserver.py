"""What the translations produce is what the rest of the system accepts: the admission rules
(webhooks.rules.registry) find nothing wrong, and the real kube-apiserver with the project's
CRDs stores it."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from translation_seeds import (
    cnt,
    gather,
    member_pod,
    parse_nodes,
    parse_pods,
    seed_cnt,
    seed_member_pods,
    seed_nodes,
    seed_pod_groups,
    sigs_pod_group,
)

from translations import hypernodes as hn
from translations import koordinator as koord
from translations import koordinator_to_volcano as k2v
from translations import lws_to_volcano as l2v
from translations import volcano_to_koordinator as v2k
from translations.lws import LeaderWorkerSet
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.registry import validate_object

JsonDict = dict[str, Any]


def lws_with_subgroups(name: str = "llm") -> LeaderWorkerSet:
    return LeaderWorkerSet.parse(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {
                "name": name,
                "namespace": "default",
                "annotations": {
                    "scheduling.volcano.sh/queue-name": "training",
                    "topobridge.io/subgroup-network-topology-highest-tier": "1",
                },
            },
            "spec": {
                "replicas": 2,
                "leaderWorkerTemplate": {
                    "size": 5,
                    "subGroupPolicy": {"subGroupSize": 2},
                    "workerTemplate": {
                        "spec": {
                            "priorityClassName": "high-priority",
                            "containers": [
                                {
                                    "name": "w",
                                    "resources": {
                                        "requests": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}
                                    },
                                }
                            ],
                        }
                    },
                },
                "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            },
        }
    )


def translated_objects(layer_prefix: str = "") -> dict[str, list[JsonDict]]:
    """Everything the translations make from the seeds, as raw objects, by kind."""
    cnt_raw = seed_cnt()
    if layer_prefix:  # unique layer names give unique HyperNode names on a shared API server
        for spec in cnt_raw["spec"]["networkTopologySpec"]:
            for key in ("topologyLayer", "parentTopologyLayer"):
                if spec.get(key) and spec[key] != "NodeTopologyLayer":
                    spec[key] = layer_prefix + spec[key]
    nodes = parse_nodes(seed_nodes())
    topo = hn.from_cluster_network_topology(cnt(cnt_raw), nodes)
    hypernodes = [h.to_dict() for h in topo.hypernodes]
    layers = k2v.Layers.of(cnt(), None)
    gangs = k2v.translate_all(
        [koord.SigsPodGroup.parse(pg) for pg in seed_pod_groups()], parse_pods(seed_member_pods()), cnt=cnt()
    )
    tp = k2v.translate(
        k2v.gang_from_pod_group(
            koord.SigsPodGroup.parse(
                sigs_pod_group(
                    "tp",
                    4,
                    {
                        koord.NETWORK_TOPOLOGY_SPEC: gather(
                            ("BlockLayer", "PreferGather", 2), ("SpineLayer", "MustGather")
                        )
                    },
                )
            ),
            parse_pods([member_pod(f"tp-{i}", "tp", index=i) for i in range(4)]),
        ),
        layers=layers,
    )
    volcano_groups = [g.pod_group.to_dict() for g in [*gangs, tp]]
    volcano_groups += [pg.to_dict() for pg in l2v.translate(lws_with_subgroups(), revision="7f9c").pod_groups]
    back = hn.to_cluster_network_topology(topo.hypernodes, nodes)
    koordinator_groups = [v2k.translate(g.pod_group, cnt=cnt()).pod_group.to_dict() for g in [*gangs, tp]]
    patched_pods = [
        p.apply(raw)
        for g in gangs
        for p, raw in zip(
            g.pod_patches,
            [r for r in seed_member_pods() if r["metadata"]["name"] in {x.name for x in g.pod_patches}],
            strict=True,
        )
    ]
    return {
        "HyperNode": hypernodes,
        "PodGroup.volcano": volcano_groups,
        "PodGroup.sigs": koordinator_groups,
        "ClusterNetworkTopology": [back.cluster_network_topology.to_dict()],
        "Pod": patched_pods,
    }


def test_every_translated_object_passes_the_admission_rules() -> None:
    made = translated_objects()
    state, problems = ClusterState.from_objects([*made["HyperNode"], *made["ClusterNetworkTopology"]])
    assert problems == []
    checked = 0
    for kind, objects in made.items():
        assert objects, kind
        for obj in objects:
            entry, decision = validate_object(obj, state)
            assert entry is not None, obj["kind"]
            assert decision.errors == (), f"{kind} {obj['metadata']['name']}: {decision.message}"
            assert decision.warnings == (), f"{kind} {obj['metadata']['name']}: {decision.warnings}"
            checked += 1
    assert checked >= 8 + 6 + 4 + 1 + 10


def test_the_admission_rules_do_catch_a_broken_translation() -> None:
    # The check above could only pass vacuously if the rules accepted anything.
    made = translated_objects()
    state, _ = ClusterState.from_objects(made["HyperNode"])
    broken = dict(made["PodGroup.volcano"][1])
    broken["spec"] = dict(broken["spec"], networkTopology={"mode": "hrad", "highestTierAllowed": 2})
    _, decision = validate_object(broken, state)
    assert not decision.allowed


# --- the real API server ----------------------------------------------------------------------------


async def test_translated_hypernodes_and_pod_groups_are_stored_by_the_api_server(
    kube: Any, namespace: str
) -> None:
    from kubernetes_asyncio.client import CustomObjectsApi
    from kubernetes_asyncio.client.exceptions import ApiException

    api = CustomObjectsApi(kube)
    made = translated_objects(layer_prefix=f"T{secrets.token_hex(3)}")
    created_hypernodes: list[str] = []
    try:
        for h in made["HyperNode"]:
            got = await api.create_cluster_custom_object("topology.volcano.sh", "v1alpha1", "hypernodes", h)
            created_hypernodes.append(h["metadata"]["name"])
            assert got["spec"]["members"] == h["spec"]["members"]
            assert (got["spec"]["tier"], got["spec"]["tierName"]) == (
                h["spec"]["tier"],
                h["spec"]["tierName"],
            )

        for pg in made["PodGroup.volcano"]:
            body = dict(pg, metadata=dict(pg["metadata"], namespace=namespace))
            got = await api.create_namespaced_custom_object(
                "scheduling.volcano.sh", "v1beta1", namespace, "podgroups", body
            )
            for key, value in pg["spec"].items():
                if key == "subGroupPolicy":
                    for sent, stored in zip(value, got["spec"][key], strict=True):
                        assert {
                            k: stored[k] for k in sent
                        } == sent  # the server may add defaults, not change ours
                else:
                    assert got["spec"][key] == value, key

        for pg in made["PodGroup.sigs"]:
            body = dict(pg, metadata=dict(pg["metadata"], namespace=namespace))
            got = await api.create_namespaced_custom_object(
                "scheduling.sigs.k8s.io", "v1alpha1", namespace, "podgroups", body
            )
            assert got["metadata"].get("annotations") == pg["metadata"].get("annotations")

        # The schema is really enforced: a HyperNode with a negative tier is refused.
        bad = dict(made["HyperNode"][0], metadata={"name": f"bad-{secrets.token_hex(3)}"})
        bad["spec"] = dict(bad["spec"], tier=-1)
        with pytest.raises(ApiException) as exc:
            await api.create_cluster_custom_object("topology.volcano.sh", "v1alpha1", "hypernodes", bad)
        assert exc.value.status == 422 and "spec.tier" in exc.value.body
    finally:
        for name in created_hypernodes:
            await api.delete_cluster_custom_object("topology.volcano.sh", "v1alpha1", "hypernodes", name)
