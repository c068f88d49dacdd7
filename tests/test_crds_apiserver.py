"""The generated CRDs against the real kube-apiserver: accepted, defaulting, rejecting with field paths."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest
import yaml

from translations import crdgen
from translations._base import TypedObject
from translations.crdgen import CRDS, CrdDefinition

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parent.parent / "crds" / "examples"


def _crd_for(obj: dict[str, Any]) -> CrdDefinition:
    for crd in CRDS:
        if crd.api_version == obj["apiVersion"] and crd.kind == obj["kind"]:
            return crd
    raise AssertionError(f"no CRD for {obj['apiVersion']} {obj['kind']}")


def _examples() -> list[Any]:
    out = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        obj = yaml.safe_load(path.read_text())
        out.append(pytest.param(obj, id=path.stem))
    return out


class Objects:
    """Create/read custom objects of any shipped kind; cluster-scoped ones get unique names."""

    def __init__(self, api: Any, namespace: str) -> None:
        from kubernetes_asyncio.client import CustomObjectsApi

        self.api = CustomObjectsApi(api)
        self.namespace = namespace
        self.cluster_scoped: list[tuple[CrdDefinition, str]] = []

    def _where(self, crd: CrdDefinition) -> dict[str, Any]:
        where: dict[str, Any] = {"group": crd.group, "version": crd.version, "plural": crd.plural}
        if crd.scope == "Namespaced":
            where["namespace"] = self.namespace
        return where

    async def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        crd = _crd_for(obj)
        obj = json.loads(json.dumps(obj))
        if crd.scope == "Cluster":
            obj["metadata"]["name"] = f"{obj['metadata']['name']}-{secrets.token_hex(3)}"
            self.cluster_scoped.append((crd, obj["metadata"]["name"]))
        if crd.scope == "Namespaced":
            return dict(await self.api.create_namespaced_custom_object(body=obj, **self._where(crd)))
        return dict(await self.api.create_cluster_custom_object(body=obj, **self._where(crd)))

    async def get(self, crd: CrdDefinition, name: str) -> dict[str, Any]:
        if crd.scope == "Namespaced":
            return dict(await self.api.get_namespaced_custom_object(name=name, **self._where(crd)))
        return dict(await self.api.get_cluster_custom_object(name=name, **self._where(crd)))

    async def cleanup(self) -> None:
        from kubernetes_asyncio.client.exceptions import ApiException

        for crd, name in self.cluster_scoped:
            try:
                await self.api.delete_cluster_custom_object(name=name, **self._where(crd))
            except ApiException as exc:
                if exc.status != 404:
                    raise


@pytest.fixture
async def objects(kube: Any, namespace: str) -> Any:
    store = Objects(kube, namespace)
    yield store
    await store.cleanup()


async def _rejection(objects: Objects, obj: dict[str, Any]) -> dict[str, Any]:
    from kubernetes_asyncio.client.exceptions import ApiException

    with pytest.raises(ApiException) as caught:
        await objects.create(obj)
    assert caught.value.status == 422, caught.value.body
    status: dict[str, Any] = json.loads(caught.value.body)
    return status


async def test_every_generated_crd_is_established(kube: Any) -> None:
    from kubernetes_asyncio.client import ApiextensionsV1Api

    listed = await ApiextensionsV1Api(kube).list_custom_resource_definition()
    by_name = {c.metadata.name: c for c in listed.items}
    for crd in CRDS:
        assert crd.name in by_name, f"{crd.name} not installed"
        conditions = {c.type: c.status for c in by_name[crd.name].status.conditions}
        assert conditions.get("Established") == "True", (crd.name, conditions)
        assert conditions.get("NonStructuralSchema") is None, (crd.name, conditions)


async def test_crds_are_accepted_again_from_the_files(control_plane: Any) -> None:
    # Re-applying the committed files (what `dev-cluster up` does) replaces them in place.
    names = control_plane.install_crds(Path(__file__).resolve().parent.parent / "crds")
    assert sorted(names) == sorted(c.name for c in CRDS)


@pytest.mark.parametrize("example", _examples())
async def test_example_is_accepted_and_parses_back_losslessly(
    objects: Objects, example: dict[str, Any]
) -> None:
    created = await objects.create(example)
    crd = _crd_for(example)
    stored = await objects.get(crd, created["metadata"]["name"])
    # What the API server returns (server fields and defaults included) survives our models.
    model: type[TypedObject] = crd.model
    assert model.parse(stored).to_dict() == stored
    assert stored["spec"].items() >= {k: v for k, v in example["spec"].items() if k not in _DEFAULTED}.items()


_DEFAULTED = {"leaderWorkerTemplate", "subGroupPolicy", "networkTopology", "rolloutStrategy"}


async def test_defaults_from_the_models_are_applied_by_the_apiserver(objects: Objects) -> None:
    created = await objects.create(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "defaults"},
            "spec": {
                "minMember": 2,
                "networkTopology": {"highestTierAllowed": 1},
                "subGroupPolicy": [{"name": "a"}],
            },
        }
    )
    assert created["spec"]["queue"] == "default"
    assert created["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    assert created["spec"]["subGroupPolicy"] == [{"name": "a", "subGroupSize": 1, "minSubGroups": 0}]

    lws = await objects.create(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": "defaults"},
            "spec": {
                "leaderWorkerTemplate": {
                    "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "i"}]}}
                }
            },
        }
    )
    assert lws["spec"]["replicas"] == 1
    assert lws["spec"]["startupPolicy"] == "LeaderCreated"
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 1
    assert lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"


async def test_lws_network_topology_survives_and_unknown_fields_are_pruned(objects: Objects) -> None:
    created = await objects.create(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": "pruning"},
            "spec": {
                "leaderWorkerTemplate": {
                    "workerTemplate": {
                        "spec": {"containers": [{"name": "w", "image": "i", "futureField": 1}]}
                    }
                },
                "networkTopology": {"mode": "soft", "highestTierAllowed": 2},
                "notInTheSchema": True,
            },
        }
    )
    assert created["spec"]["networkTopology"] == {"mode": "soft", "highestTierAllowed": 2}
    assert "notInTheSchema" not in created["spec"]
    # Pod templates are opaque: everything inside them is kept.
    assert (
        created["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["futureField"] == 1
    )


def _obj(api_version: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "bad"}, "spec": spec}


_LWS_TEMPLATE = {"workerTemplate": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}


@pytest.mark.parametrize(
    ("obj", "field", "phrase"),
    [
        pytest.param(
            _obj("scheduling.volcano.sh/v1beta1", "PodGroup", {"networkTopology": {"mode": "hrad"}}),
            "spec.networkTopology.mode",
            'Unsupported value: "hrad": supported values: "hard", "soft"',
            id="volcano-mode-enum",
        ),
        pytest.param(
            _obj("scheduling.volcano.sh/v1beta1", "PodGroup", {"minMember": -1}),
            "spec.minMember",
            "should be greater than or equal to 0",
            id="volcano-minMember-minimum",
        ),
        pytest.param(
            _obj(
                "scheduling.volcano.sh/v1beta1", "PodGroup", {"networkTopology": {"highestTierAllowed": -2}}
            ),
            "spec.networkTopology.highestTierAllowed",
            "should be greater than or equal to 0",
            id="volcano-tier-minimum",
        ),
        pytest.param(
            _obj("scheduling.volcano.sh/v1beta1", "PodGroup", {"subGroupPolicy": [{"subGroupSize": 0}]}),
            "spec.subGroupPolicy.subGroupSize",  # 1.20 leaves list indices out of the path
            "should be greater than or equal to 1",
            id="volcano-subGroupSize-minimum",
        ),
        pytest.param(
            _obj("scheduling.volcano.sh/v1beta1", "PodGroup", {"minResources": {"cpu": "lots"}}),
            "spec.minResources.cpu",
            "should match",
            id="volcano-quantity-pattern",
        ),
        pytest.param(
            _obj(
                "leaderworkerset.x-k8s.io/v1",
                "LeaderWorkerSet",
                {"leaderWorkerTemplate": _LWS_TEMPLATE, "networkTopology": {"mode": "strict"}},
            ),
            "spec.networkTopology.mode",
            'Unsupported value: "strict"',
            id="lws-mode-enum",
        ),
        pytest.param(
            _obj(
                "leaderworkerset.x-k8s.io/v1",
                "LeaderWorkerSet",
                {"leaderWorkerTemplate": _LWS_TEMPLATE, "replicas": -1},
            ),
            "spec.replicas",
            "should be greater than or equal to 0",
            id="lws-replicas-minimum",
        ),
        pytest.param(
            _obj("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", {"replicas": 1}),
            "spec.leaderWorkerTemplate",
            "Required value",
            id="lws-required",
        ),
        pytest.param(
            _obj("topology.volcano.sh/v1alpha1", "HyperNode", {"tier": -1, "members": [{"type": "Node"}]}),
            "spec.tier",
            "should be greater than or equal to 0",
            id="hypernode-tier-minimum",
        ),
        pytest.param(
            _obj("topology.volcano.sh/v1alpha1", "HyperNode", {"tier": 1, "members": [{"type": "Pod"}]}),
            "spec.members.type",
            'Unsupported value: "Pod": supported values: "Node", "HyperNode"',
            id="hypernode-member-type-enum",
        ),
        pytest.param(
            _obj("topology.volcano.sh/v1alpha1", "HyperNode", {"tier": 1, "members": []}),
            "spec.members",
            "should have at least 1 items",
            id="hypernode-members-minItems",
        ),
        pytest.param(
            _obj("scheduling.x-k8s.io/v1alpha1", "PodGroup", {"minMember": 0}),
            "spec.minMember",
            "should be greater than or equal to 1",
            id="x-podgroup-minMember-minimum",
        ),
        pytest.param(
            _obj("scheduling.sigs.k8s.io/v1alpha1", "PodGroup", {"minMember": "four"}),
            "spec.minMember",
            "must be of type integer",
            id="sigs-podgroup-type",
        ),
        pytest.param(
            _obj(
                "scheduling.koordinator.sh/v1alpha1", "ClusterNetworkTopology", {"networkTopologySpec": [{}]}
            ),
            "spec.networkTopologySpec.topologyLayer",
            "Required value",
            id="cnt-required",
        ),
    ],
)
async def test_invalid_object_is_rejected_with_its_field_path(
    objects: Objects, obj: dict[str, Any], field: str, phrase: str
) -> None:
    status = await _rejection(objects, obj)
    message = status["message"]
    assert f"{field}: " in message and phrase in message, message
    causes = [c.get("field", "") for c in status.get("details", {}).get("causes", [])]
    assert field in causes, causes


async def test_status_subresource_takes_merge_patches(objects: Objects, kube: Any) -> None:
    from kubernetes_asyncio.client import CustomObjectsApi

    hn = await objects.create(yaml.safe_load((EXAMPLES / "hypernode.yaml").read_text()))
    crd = _crd_for(hn)
    api = CustomObjectsApi(kube)
    await api.patch_cluster_custom_object_status(
        crd.group, crd.version, crd.plural, hn["metadata"]["name"], {"status": {"nodeCount": 3}},
        _content_type="application/merge-patch+json",
    )  # fmt: skip
    stored = await objects.get(crd, hn["metadata"]["name"])
    assert stored["status"] == {"nodeCount": 3}
    assert crdgen.volcano.HyperNode.parse(stored).status is not None


async def test_empty_strings_are_values_not_null(objects: Objects, kube: Any) -> None:
    # Koordinator names the cluster root "" in ClusterNetworkTopology status. A kube-apiserver
    # built with Go >= 1.19 and unpatched go-openapi took "" for null and refused it.
    from kubernetes_asyncio.client import CustomObjectsApi

    cnt = await objects.create(
        {
            "apiVersion": "scheduling.koordinator.sh/v1alpha1",
            "kind": "ClusterNetworkTopology",
            "metadata": {"name": "empty-strings"},
            "spec": {
                "networkTopologySpec": [{"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": ""}]
            },
        }
    )
    assert cnt["spec"]["networkTopologySpec"][0]["parentTopologyLayer"] == ""
    crd = _crd_for(cnt)
    root = {"topologyInfo": {"topologyLayer": "ClusterTopologyLayer", "topologyName": ""}, "nodeNum": 12}
    patched = await CustomObjectsApi(kube).patch_cluster_custom_object_status(
        crd.group, crd.version, crd.plural, cnt["metadata"]["name"], {"status": {"detailStatus": [root]}},
        _content_type="application/merge-patch+json",
    )  # fmt: skip
    assert patched["status"]["detailStatus"] == [root]
