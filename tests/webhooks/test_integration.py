"""The admission webhook registered with the real kube-apiserver (1.20) through
`clientConfig.url: https://127.0.0.1:PORT/...`: invalid objects are denied with the field
message, valid ones admitted, warnings reach the client as Warning headers.

The configuration is the generated one, narrowed to this test's namespace (and, for the
cluster-scoped kinds, to objects carrying this test's label) so that tests running beside it
on the same API server never meet this webhook.
"""

from __future__ import annotations

import asyncio
import copy
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from webhook_corpus import (
    CLUSTER_OBJECTS,
    _task,
    cnt,
    gather,
    hn,
    lws,
    partition,
    pod,
    spg,
    tas_job,
    vcjob,
    vpg,
    xpg,
)

from webhooks.configuration import Endpoint, validating_webhook_configuration
from webhooks.rules.registry import for_api_version
from webhooks.server import ServerSettings, WebhookServer
from webhooks.state import InMemoryStateSource

pytestmark = pytest.mark.integration

A = "gang.scheduling.koordinator.sh/"
TEST_LABEL = "topobridge.test/webhook"


@dataclass
class Harness:
    api: Any
    namespace: str
    token: str
    server: WebhookServer
    config_name: str
    created_cluster_scoped: list[tuple[str, str, str, str]]

    def _where(self, obj: dict[str, Any]) -> tuple[str, str, str, bool]:
        entry = for_api_version(obj["apiVersion"], obj["kind"])
        assert entry is not None
        group, version = obj["apiVersion"].split("/") if "/" in obj["apiVersion"] else ("", obj["apiVersion"])
        return group, version, entry.resource, entry.namespaced

    async def create(self, obj: dict[str, Any]) -> tuple[int, list[str], str]:
        """Create the object; (HTTP status, Warning headers, denial message or '')."""
        from kubernetes_asyncio.client import CoreV1Api, CustomObjectsApi
        from kubernetes_asyncio.client.exceptions import ApiException

        obj = copy.deepcopy(obj)
        obj["metadata"]["labels"] = {**obj["metadata"].get("labels", {}), TEST_LABEL: self.token}
        group, version, plural, namespaced = self._where(obj)
        if namespaced:
            obj["metadata"]["namespace"] = self.namespace
        try:
            if group == "":
                _, status, headers = await CoreV1Api(self.api).create_namespaced_pod_with_http_info(
                    self.namespace, obj
                )
            elif namespaced:
                _, status, headers = await CustomObjectsApi(
                    self.api
                ).create_namespaced_custom_object_with_http_info(group, version, self.namespace, plural, obj)
            else:
                _, status, headers = await CustomObjectsApi(
                    self.api
                ).create_cluster_custom_object_with_http_info(group, version, plural, obj)
                self.created_cluster_scoped.append((group, version, plural, obj["metadata"]["name"]))
        except ApiException as exc:
            return exc.status, [], json.loads(exc.body)["message"]
        return status, list(headers.getall("Warning", [])), ""


async def _register(api: Any, cfg: dict[str, Any]) -> None:
    from kubernetes_asyncio.client import AdmissionregistrationV1Api

    await AdmissionregistrationV1Api(api).create_validating_webhook_configuration(cfg)


async def _unregister(api: Any, name: str) -> None:
    from kubernetes_asyncio.client import AdmissionregistrationV1Api

    await AdmissionregistrationV1Api(api).delete_validating_webhook_configuration(name)


def _narrowed(cfg: dict[str, Any], token: str) -> dict[str, Any]:
    for hook in cfg["webhooks"]:
        if "namespaceSelector" in hook:
            hook["namespaceSelector"]["matchExpressions"].append(
                {"key": TEST_LABEL, "operator": "In", "values": [token]}
            )
        else:
            hook["objectSelector"] = {"matchLabels": {TEST_LABEL: token}}
    return cfg


@pytest.fixture
async def harness_factory(
    kube: Any, make_namespace: Callable[..., Awaitable[str]]
) -> AsyncIterator[Callable[..., Awaitable[Harness]]]:
    from kubernetes_asyncio.client import CustomObjectsApi

    made: list[Harness] = []

    async def make(
        *, review_versions: list[str] | None = None, state_objects: list[Any] = CLUSTER_OBJECTS
    ) -> Harness:
        token = secrets.token_hex(4)
        namespace = await make_namespace(labels={TEST_LABEL: token})
        server = WebhookServer(
            ServerSettings(host="127.0.0.1", port=0, metrics_port=None, self_signed_hosts=["127.0.0.1"]),
            InMemoryStateSource(state_objects, synced=True),
        )
        await server.start()
        assert server.ca_bundle is not None
        cfg = _narrowed(
            validating_webhook_configuration(
                Endpoint(server.ca_bundle, url=f"https://127.0.0.1:{server.port}"),
                name=f"topobridge-test-{token}",
            ),
            token,
        )
        if review_versions is not None:
            for hook in cfg["webhooks"]:
                hook["admissionReviewVersions"] = review_versions
        h = Harness(kube, namespace, token, server, cfg["metadata"]["name"], [])
        made.append(h)
        await _register(kube, cfg)
        # The API server picks new configurations up from a watch: wait until ours answers.
        # The probe is valid to the CRD schema (1.20 drops its CEL rules) but not to us.
        for attempt in range(100):
            probe = hn(
                f"probe-{token}-{attempt}",
                1,
                [{"type": "Node", "selector": {"regexMatch": {"pattern": "("}}}],
            )
            status, _, message = await h.create(probe)
            if "denied the request" in message:
                break
            assert status == 201, message
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the webhook configuration never took effect")
        return h

    yield make
    custom = CustomObjectsApi(kube)
    for h in made:
        await _unregister(kube, h.config_name)
        for group, version, plural, name in h.created_cluster_scoped:
            await custom.delete_cluster_custom_object(group, version, plural, name)
        await h.server.stop()
    await asyncio.sleep(0.2)  # let the API server's keep-alive connections to us close


def denied(hook: str, message: str) -> str:
    return f'admission webhook "{hook}.validate.topobridge.io" denied the request: {message}'


def warning(text: str) -> str:
    return f'299 - "{text}"'


async def test_leaderworkerset_and_volcano(harness_factory: Callable[..., Awaitable[Harness]]) -> None:
    h = await harness_factory()
    status, _, message = await h.create(lws({"highestTierAllowed": 1, "highestTierName": "block"}))
    assert (status, message) == (
        422,
        denied(
            "leaderworkersets",
            "spec.networkTopology: Forbidden: must not specify "
            "'highestTierAllowed' and 'highestTierName' simultaneously",
        ),
    )
    status, _, message = await h.create(lws(size=8, sub_group_policy={"subGroupSize": 3}))
    assert message == denied(
        "leaderworkersets",
        "spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize: Invalid value: "
        "3: size (8) or size-1 (7) must be divisible by subGroupSize",
    )
    status, warnings, message = await h.create(lws({"mode": "hard", "highestTierAllowed": 0}))
    assert (status, message) == (201, "")
    assert warnings == [
        warning("spec.networkTopology.highestTierAllowed: 0 confines every pod of the gang to a single node")
    ]
    other = lws({"mode": "soft", "highestTierName": "rack"})
    other["metadata"]["name"] = "serve"
    status, warnings, _ = await h.create(other)
    assert status == 201
    assert warnings == [
        warning(
            'spec.networkTopology.highestTierName: \\"rack\\" matches no HyperNode tierName '
            '(known: \\"block\\", \\"spine\\")'
        )
    ]

    status, _, message = await h.create(
        vpg(
            {
                "networkTopology": {"highestTierAllowed": 1},
                "subGroupPolicy": [{"name": "sg", "networkTopology": {"highestTierAllowed": 2}}],
            }
        )
    )
    assert message == denied(
        "volcano-podgroups",
        "spec.subGroupPolicy[0].networkTopology.highestTierAllowed: Invalid "
        "value: 2: must be less than or equal to the job's tier "
        "(spec.networkTopology: 1)",
    )
    status, _, message = await h.create(
        vpg(
            {
                "minMember": 4,
                "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
                "minResources": {"cpu": "8", "nvidia.com/gpu": 8},
            }
        )
    )
    assert (status, message) == (201, "")


async def test_lws_topology_annotations_are_denied_naming_the_annotation(
    harness_factory: Callable[..., Awaitable[Harness]],
) -> None:
    """The annotations `topobridge translate` and the controller refuse are refused at admission too."""
    h = await harness_factory()
    modes = 'supported values: "hard", "soft"'
    examples = [
        ({"volcano.sh/network-topology-mode": "hrad"}, {}, f'Unsupported value: "hrad": {modes}'),
        (
            {"volcano.sh/network-topology-highest-tier": "two"},
            {},
            'Invalid value: "two": must be a non-negative decimal integer',
        ),
        (
            {"topobridge.io/subgroup-network-topology-mode": "sofft"},
            {"sub_group_policy": {"subGroupSize": 2}},
            f'Unsupported value: "sofft": {modes}',
        ),
    ]
    for given, shape, detail in examples:
        obj = lws(**shape)
        obj["metadata"]["annotations"] = given
        status, _, message = await h.create(obj)
        (key,) = given
        assert (status, message) == (
            422,
            denied("leaderworkersets", f"metadata.annotations[{key}]: {detail}"),
        )


async def test_koordinator_pods_and_podgroups(harness_factory: Callable[..., Awaitable[Harness]]) -> None:
    h = await harness_factory()
    status, _, message = await h.create(pod({f"{A}network-topology-index": "-1"}))
    assert (status, message) == (
        422,
        denied(
            "pods-sigs",
            f"metadata.annotations[{A}network-topology-index]: Invalid "
            'value: "-1": must be a non-negative decimal integer (at most '
            "2147483647)",
        ),
    )
    status, _, message = await h.create(
        pod({f"{A}network-topology-spec": gather({"layer": "RackLayer", "strategy": "MustGather"})})
    )
    assert message == denied(
        "pods-sigs",
        f"metadata.annotations[{A}network-topology-spec].gatherStrategy[0].layer: "
        'Not found: "RackLayer": no such layer in ClusterNetworkTopology "default" '
        '(layers: "BlockLayer", "NodeTopologyLayer", "SpineLayer")',
    )
    # Through the opt-in label: the gang is named by annotation only.
    status, _, message = await h.create(
        pod({f"{A}name": "train", f"{A}mode": "strict"}, labels={"topobridge.io/validate": "true"})
    )
    assert message == denied(
        "pods-opt-in",
        f'metadata.annotations[{A}mode]: Unsupported value: "strict": supported '
        'values: "Strict", "NonStrict"',
    )
    # Not selected at all: a pod of no gang never reaches the webhook, whatever it carries.
    status, _, message = await h.create(pod({f"{A}mode": "strict"}, labels=None, name="outsider"))
    assert (status, message) == (201, "")
    # The cluster view is fed directly here (the controller's watches feed it in production).
    peer = pod({f"{A}network-topology-index": "0"}, name="worker-0")
    peer["metadata"]["namespace"] = h.namespace
    assert isinstance(h.server.state, InMemoryStateSource) and h.server.state.upsert(peer) is None
    status, warnings, message = await h.create(pod({f"{A}network-topology-index": "0"}, name="worker-9"))
    assert (status, message) == (201, "")
    assert warnings == [
        warning(
            f"metadata.annotations[{A}network-topology-index]: index 0 is already held by pod "
            f"{h.namespace}/worker-0 of gang {h.namespace}/train"
        )
    ]

    status, _, message = await h.create(spg({f"{A}groups": '["default/llm-master"]'}))
    assert message == denied(
        "sigs-podgroups",
        f"metadata.annotations[{A}groups]: Invalid value: "
        f'"[\\"default/llm-master\\"]": must include this gang "{h.namespace}/train"',
    )
    status, _, message = await h.create(
        xpg(
            {f"{A}network-topology-spec": gather({"layer": "BlockLayer", "strategy": "MustGather"})},
            {"minMember": 2},
        )
    )
    assert (status, message) == (201, "")


async def test_hypernode_and_cluster_network_topology(
    harness_factory: Callable[..., Awaitable[Harness]],
) -> None:
    h = await harness_factory()
    t = h.token
    status, _, message = await h.create(
        hn(f"block-{t}", 1, [{"type": "Node", "selector": {"regexMatch": {"pattern": "node-(?=1)"}}}])
    )
    assert (status, message) == (
        422,
        denied(
            "hypernodes",
            "spec.members[0].selector.regexMatch.pattern: Invalid value: "
            '"node-(?=1)": must be a valid regular expression: invalid '
            "perl operator: (?=",
        ),
    )
    status, _, message = await h.create(
        hn(
            f"block-{t}",
            1,
            [
                {
                    "type": "Node",
                    "selector": {"exactMatch": {"name": "node-1"}, "regexMatch": {"pattern": "node-1"}},
                }
            ],
        )
    )
    assert message == denied(
        "hypernodes",
        "spec.members[0].selector: Forbidden: only one of exactMatch, regexMatch or "
        "labelMatch may be given, not exactMatch and regexMatch",
    )
    status, _, message = await h.create(
        hn(f"spine-{t}", 2, [{"type": "HyperNode", "selector": {"exactMatch": {"name": "block-0"}}}])
    )
    assert message == denied(
        "hypernodes",
        'spec.members[0].selector.exactMatch.name: Invalid value: "block-0": HyperNode '
        '"block-0" already has parent "spine-0"; a HyperNode has at most one parent',
    )
    status, warnings, message = await h.create(
        hn(f"block-{t}", 1, [{"type": "Node", "selector": {"labelMatch": {}}}])
    )
    assert (status, message) == (201, "")
    assert warnings == [
        warning(
            "spec.members[0].selector.labelMatch: an empty selector makes every node in the cluster a member"
        )
    ]

    status, _, message = await h.create(cnt([{"topologyLayer": "NodeTopologyLayer"}], name=f"prod-{t}"))
    assert message == denied(
        "clusternetworktopologies",
        f'metadata.name: Unsupported value: "prod-{t}": supported values: "default"',
    )


async def test_admission_review_v1beta1(harness_factory: Callable[..., Awaitable[Harness]]) -> None:
    h = await harness_factory(review_versions=["v1beta1"])
    status, _, message = await h.create(lws({"highestTierAllowed": 1, "highestTierName": "block"}))
    assert (status, message) == (
        422,
        denied(
            "leaderworkersets",
            "spec.networkTopology: Forbidden: must not specify "
            "'highestTierAllowed' and 'highestTierName' simultaneously",
        ),
    )
    status, warnings, _ = await h.create(lws({"highestTierAllowed": 0}))
    assert status == 201 and len(warnings) == 1


@pytest.fixture
async def volcano_job_api(kube: Any) -> AsyncIterator[None]:
    """Volcano's Job served, as Volcano's own CRD would serve it (topobridge ships none): a
    stand-in schema that keeps every field, so only the webhook judges the objects."""
    from kubernetes_asyncio.client import ApiextensionsV1Api

    ext: Any = ApiextensionsV1Api(kube)
    name = "jobs.batch.volcano.sh"
    await ext.create_custom_resource_definition(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": name},
            "spec": {
                "group": "batch.volcano.sh",
                "scope": "Namespaced",
                "names": {"kind": "Job", "plural": "jobs", "singular": "job", "listKind": "JobList"},
                "versions": [
                    {
                        "name": "v1alpha1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            }
                        },
                    }
                ],
            },
        }
    )
    try:
        for _ in range(100):
            crd = await ext.read_custom_resource_definition(name)
            if any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or []):
                break
            await asyncio.sleep(0.1)
        yield
    finally:
        await ext.delete_custom_resource_definition(name)


async def test_volcano_jobs_and_kueue_annotations(
    volcano_job_api: None, harness_factory: Callable[..., Awaitable[Harness]]
) -> None:
    """The 2026 dialects through the real API server: a Volcano Job's topology and partitions,
    Kueue's TAS annotations on a batch/v1 Job's template."""
    h = await harness_factory()
    status, _, message = await h.create(vcjob(networkTopology={"mode": "hrad", "highestTierAllowed": 1}))
    assert (status, message) == (
        422,
        denied(
            "volcano-jobs",
            'spec.networkTopology.mode: Unsupported value: "hrad": supported values: "hard", "soft"',
        ),
    )
    bad = vcjob(_task(replicas=5, partitionPolicy=partition(2, 3)))
    status, _, message = await h.create(bad)
    assert message == denied(
        "volcano-jobs",
        "spec.tasks[0].replicas: Invalid value: 5: must equal partitionPolicy.totalPartitions x partitionSize (2 x 3 = 6)",
    )
    good = vcjob(
        _task(
            partitionPolicy=partition(
                minPartitions=2, networkTopology={"mode": "hard", "highestTierAllowed": 1}
            )
        ),
        networkTopology={"mode": "hard", "highestTierAllowed": 2},
    )
    assert (await h.create(good))[::2] == (201, "")
    k = "kueue.x-k8s.io/"
    status, _, message = await h.create(tas_job({f"{k}podset-slice-size": "2"}))
    assert (status, message) == (
        422,
        denied(
            "jobs",
            f"spec.template.metadata.annotations[{k}podset-slice-size]: Forbidden: may not be set when "
            f"'{k}podset-slice-required-topology' is not specified",
        ),
    )
    status, _, message = await h.create(
        tas_job({f"{k}podset-required-topology": "cloud.provider.com/topology-rack"})
    )
    assert (status, message) == (201, "")
