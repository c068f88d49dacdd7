"""Mutating webhooks for LWS gangs: the pure patches, and the real API server calling the
webhook server (a MutatingWebhookConfiguration pointing at it) on PodGroup and Pod CREATE."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import secrets
from typing import Any

import pytest
from controller_helpers import running
from test_lws_reconciler import REV, leader_pod, lws_body

from controller.errors import NotFoundError
from controller.informer import Informer
from controller.kube import JsonDict, Kube
from controller.resources import LEADERWORKERSETS, PODS, VOLCANO_PODGROUPS, Resource
from translations import lws as lwsmod
from translations import lws_admission
from webhooks.mutating import POD_PATH, PODGROUP_PATH, MutatingEndpoints
from webhooks.rules import ClusterState, volcano_podgroup
from webhooks.rules.decision import ALLOW
from webhooks.rules.lws_mutation import mutate_pod, mutate_podgroup
from webhooks.server import ServerSettings, WebhookServer

MUTATING_CONFIGS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "mutatingwebhookconfigurations",
    "MutatingWebhookConfiguration",
    namespaced=False,
)
TOPOLOGY = {"mode": "hard", "highestTierAllowed": 1}


def parsed_lws(topology: JsonDict | None = TOPOLOGY, name: str = "llm") -> lwsmod.LeaderWorkerSet:
    return lwsmod.LeaderWorkerSet.parse(lws_body(name, "ns", replicas=2, topology=topology))


# --- the pure patches ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pg", "names", "expected"),
    [
        ({"metadata": {"name": "x", "labels": {lwsmod.NAME_LABEL: "llm"}}}, [], "llm"),
        ({"metadata": {"name": "llm-3-abc12"}}, ["llm", "other"], "llm"),
        ({"metadata": {"name": "llm-big-0-abc12"}}, ["llm", "llm-big"], "llm-big"),
        ({"metadata": {"name": "llm-x-abc12"}}, ["llm"], None),
        ({"metadata": {"name": "llm-03-abc12"}}, ["llm"], None),
    ],
    ids=["label", "name-pattern", "longest-name-wins", "index-not-a-number", "leading-zero"],
)
def test_lws_of_podgroup(pg: JsonDict, names: list[str], expected: str | None) -> None:
    assert lws_admission.lws_name_of_podgroup(pg, names) == expected


def test_podgroup_patch_adds_only_missing_topology() -> None:
    lws = parsed_lws()
    assert lws_admission.podgroup_topology_patch({"spec": {"minMember": 4}}, lws) == [
        {"op": "add", "path": "/spec/networkTopology", "value": TOPOLOGY}
    ]
    assert lws_admission.podgroup_topology_patch({"metadata": {}}, lws) == [
        {"op": "add", "path": "/spec", "value": {"networkTopology": TOPOLOGY}}
    ]
    assert (
        lws_admission.podgroup_topology_patch({"spec": {"networkTopology": {"mode": "soft"}}}, lws) == []
    ), "a topology already on the PodGroup is never overwritten"
    assert lws_admission.podgroup_topology_patch({"spec": {}}, parsed_lws(None)) == []


def test_pod_patch_names_the_group_podgroup() -> None:
    lws = parsed_lws()
    pod = {
        "metadata": {
            "labels": {lwsmod.NAME_LABEL: "llm", lwsmod.GROUP_INDEX_LABEL: "1", lwsmod.REVISION_LABEL: REV}
        }
    }
    assert lws_admission.pod_group_name_patch(pod, lws) == [
        {
            "op": "add",
            "path": "/metadata/annotations",
            "value": {"scheduling.k8s.io/group-name": f"llm-1-{REV}"},
        }
    ]
    pod["metadata"]["annotations"] = {"a": "b"}
    assert lws_admission.pod_group_name_patch(pod, lws) == [
        {"op": "add", "path": "/metadata/annotations/scheduling.k8s.io~1group-name", "value": f"llm-1-{REV}"}
    ]
    pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "mine"
    assert lws_admission.pod_group_name_patch(pod, lws) == [], "an existing group-name is kept"
    del pod["metadata"]["labels"][lwsmod.REVISION_LABEL]
    pod["metadata"]["annotations"] = {}
    assert lws_admission.pod_group_name_patch(pod, lws) == [], "no revision label: not a pod LWS made"


class DictLws:
    def __init__(self, *objs: JsonDict) -> None:
        self.objs = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objs}

    def get(self, namespace: str, name: str) -> JsonDict | None:
        return self.objs.get((namespace, name))

    def names(self, namespace: str) -> list[str]:
        return [n for ns, n in self.objs if ns == namespace]


def test_mutating_rule_decisions() -> None:
    bad = lws_body("bad", "ns", topology=TOPOLOGY)
    bad["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "Not_Valid"}
    view = DictLws(lws_body("llm", "ns", topology=TOPOLOGY), lws_body("plain", "ns"), bad)
    state = ClusterState.unknown()
    decision = mutate_podgroup(
        {"metadata": {"name": f"llm-0-{REV}", "namespace": "ns"}, "spec": {"minMember": 4}}, state, view
    )
    assert decision.patch == [{"op": "add", "path": "/spec/networkTopology", "value": TOPOLOGY}]
    assert decision.allowed and not decision.warnings
    assert mutate_podgroup({"metadata": {"name": "unrelated", "namespace": "ns"}}, state, view) == ALLOW
    decision = mutate_podgroup({"metadata": {"name": "bad-0-r1", "namespace": "ns"}}, state, view)
    assert decision.allowed and decision.patch is None and "Not_Valid" in decision.warnings[0], (
        "an untranslatable LWS admits the PodGroup, with a warning"
    )
    plain_pod = {
        "metadata": {
            "namespace": "ns",
            "labels": {lwsmod.NAME_LABEL: "plain", lwsmod.GROUP_INDEX_LABEL: "0", lwsmod.REVISION_LABEL: REV},
        }
    }
    assert mutate_pod(plain_pod, state, view) == ALLOW, "an LWS without topology is LWS's business"


def test_a_malformed_podgroup_of_an_lws_is_refused_not_rewritten() -> None:
    """`spec: "x"` must not become `{networkTopology, queue}` without minMember: the PodGroup is
    refused exactly as the same object without the LWS label is."""
    view = DictLws(lws_body("llm", "ns", topology=TOPOLOGY))
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "llm-0-r1", "namespace": "ns", "labels": {lwsmod.NAME_LABEL: "llm"}},
        "spec": "x",
    }
    unlabelled = {**pg, "metadata": {"name": "other", "namespace": "ns"}}
    decision = mutate_podgroup(pg, ClusterState.unknown(), view)
    assert decision.patch is None
    assert [str(e) for e in decision.errors] == ['spec: Invalid value: "x": must be of type object']
    assert decision.errors == volcano_podgroup.validate(unlabelled, ClusterState.unknown()).errors


def test_a_pod_with_malformed_labels_is_refused_naming_the_field() -> None:
    decision = mutate_pod(
        {"metadata": {"namespace": "ns", "labels": ["a"]}}, ClusterState.unknown(), DictLws()
    )
    assert [str(e) for e in decision.errors] == [
        'metadata.labels: Invalid value: ["a"]: must be of type object'
    ]


# --- the real API server calling the webhook -----------------------------------------------------


@pytest.mark.integration
async def test_apiserver_calls_mutating_webhooks(admin: Kube, make_namespace: Any) -> None:
    marker = secrets.token_hex(4)
    namespace = await make_namespace("mutate", labels={"topobridge.test/mutate": marker})
    informer = Informer(admin, LEADERWORKERSETS, namespace=namespace, resync_period=None)
    informer.add_index("namespace", lambda o: [o["metadata"]["namespace"]])

    class View:
        def get(self, ns: str, name: str) -> JsonDict | None:
            return informer.get(f"{ns}/{name}")

        def names(self, ns: str) -> list[str]:
            return [o["metadata"]["name"] for o in informer.by_index("namespace", ns)]

    server = WebhookServer(
        ServerSettings(
            host="127.0.0.1", port=0, metrics_port=None, self_signed_hosts=("127.0.0.1", "localhost")
        ),
        mutating=MutatingEndpoints(View()),
    )
    config_name = f"topobridge-test-{marker}"
    async with server, running(informer.run(), "lws-view"):
        assert server.ca_bundle is not None
        await informer.synced.wait()

        def hook(name: str, path: str, group: str, resource: str) -> JsonDict:
            return {
                "name": f"{name}.topobridge.io",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Ignore",
                "timeoutSeconds": 5,
                "clientConfig": {
                    "url": f"https://127.0.0.1:{server.port}{path}",
                    "caBundle": base64.b64encode(server.ca_bundle or b"").decode(),
                },
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [group],
                        "apiVersions": ["*"],
                        "resources": [resource],
                    }
                ],
                "namespaceSelector": {"matchLabels": {"topobridge.test/mutate": marker}},
            }

        await admin.create(
            MUTATING_CONFIGS,
            {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingWebhookConfiguration",
                "metadata": {"name": config_name},
                "webhooks": [
                    hook("podgroups", PODGROUP_PATH, "scheduling.volcano.sh", "podgroups"),
                    hook("pods", POD_PATH, "", "pods"),
                ],
            },
        )
        try:
            lws = await admin.create(LEADERWORKERSETS, lws_body("llm", namespace, topology=TOPOLOGY))
            for _ in range(100):  # the view must have seen the LWS before the PodGroup arrives
                if informer.get(f"{namespace}/llm") is not None:
                    break
                await asyncio.sleep(0.05)
            # As LWS's Volcano provider makes it: no topology.
            pg = await admin.create(
                VOLCANO_PODGROUPS,
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": f"llm-0-{REV}", "namespace": namespace},
                    "spec": {"minMember": 4},
                },
            )
            assert pg["spec"].get("networkTopology") == TOPOLOGY, (
                "the topology was in before Volcano could see it"
            )
            pod = await admin.create(PODS, leader_pod(lws, 1))
            assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == f"llm-1-{REV}"
        finally:
            with contextlib.suppress(NotFoundError):
                await admin.delete(MUTATING_CONFIGS, config_name)
