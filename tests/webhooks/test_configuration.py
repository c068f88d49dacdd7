"""The generated ValidatingWebhookConfiguration: every kind routed, selectors that keep
unrelated objects (and pods twice) away."""

from __future__ import annotations

import base64

import pytest

from translations._base import LabelSelector
from webhooks.configuration import Endpoint, ServiceRef, validating_webhook_configuration
from webhooks.rules.registry import KINDS


def test_every_kind_routed_with_the_fixed_settings() -> None:
    cfg = validating_webhook_configuration(Endpoint(b"PEM", url="https://127.0.0.1:9443/"))
    hooks = cfg["webhooks"]
    routed = {(h["rules"][0]["apiGroups"][0], h["rules"][0]["resources"][0]) for h in hooks}
    assert routed == {(k.group, k.resource) for k in KINDS}
    for h in hooks:
        assert h["sideEffects"] == "None"
        assert h["timeoutSeconds"] == 5
        fail_open = h["rules"][0]["resources"] == ["jobs"]
        assert h["failurePolicy"] == ("Ignore" if fail_open else "Fail"), h["name"]
        assert h["admissionReviewVersions"] == ["v1", "v1beta1"]
        assert h["rules"][0]["operations"] == ["CREATE", "UPDATE"]
        assert base64.b64decode(h["clientConfig"]["caBundle"]) == b"PEM"
        assert h["clientConfig"]["url"].startswith("https://127.0.0.1:9443/validate/")
    assert len({h["name"] for h in hooks}) == len(hooks)
    hn = next(h for h in hooks if h["rules"][0]["resources"] == ["hypernodes"])
    assert hn["rules"][0]["scope"] == "Cluster" and "namespaceSelector" not in hn


def test_service_reference_and_failure_policy() -> None:
    cfg = validating_webhook_configuration(
        Endpoint(b"x", service=ServiceRef("topobridge-system", "topobridge-webhook")), failure_policy="Ignore"
    )
    hook = cfg["webhooks"][0]
    assert hook["clientConfig"]["service"] == {
        "namespace": "topobridge-system",
        "name": "topobridge-webhook",
        "path": "/validate/leaderworkersets",
        "port": 443,
    }
    assert hook["failurePolicy"] == "Ignore"
    with pytest.raises(ValueError, match="url or its service"):
        Endpoint(b"x")


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({}, 0),
        ({"app": "web"}, 0),
        ({"pod-group.scheduling.sigs.k8s.io": "train"}, 1),
        ({"scheduling.x-k8s.io/pod-group": "train"}, 1),
        ({"topobridge.io/validate": "true"}, 1),
        ({"topobridge.io/validate": "false"}, 0),
        (
            {
                "pod-group.scheduling.sigs.k8s.io": "a",
                "scheduling.x-k8s.io/pod-group": "b",
                "topobridge.io/validate": "true",
            },
            1,
        ),
    ],
    ids=["no-labels", "unrelated", "sigs-label", "x-label", "opt-in", "opt-in-false", "all-three"],
)
def test_each_pod_reaches_at_most_one_pod_webhook(labels: dict[str, str], expected: int) -> None:
    hooks = [
        h
        for h in validating_webhook_configuration(Endpoint(b"x", url="https://h"))["webhooks"]
        if h["rules"][0]["resources"] == ["pods"]
    ]
    assert len(hooks) == 3
    assert sum(LabelSelector.model_validate(h["objectSelector"]).matches(labels) for h in hooks) == expected


def test_all_pods_mode_has_one_unselective_pod_webhook() -> None:
    hooks = [
        h
        for h in validating_webhook_configuration(Endpoint(b"x", url="https://h"), pod_selection="all")[
            "webhooks"
        ]
        if h["rules"][0]["resources"] == ["pods"]
    ]
    assert len(hooks) == 1 and "objectSelector" not in hooks[0]


def test_namespace_opt_out() -> None:
    hook = validating_webhook_configuration(Endpoint(b"x", url="https://h"))["webhooks"][0]
    selector = LabelSelector.model_validate(hook["namespaceSelector"])
    assert selector.matches({"kubernetes.io/metadata.name": "team-a"})
    assert not selector.matches({"kubernetes.io/metadata.name": "kube-system"})
    assert not selector.matches({"topobridge.io/validation": "disabled"})
