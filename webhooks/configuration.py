"""The ValidatingWebhookConfiguration that routes topobridge's kinds to the admission server.

One webhook per validated kind (its own path), CREATE and UPDATE, sideEffects None,
timeoutSeconds 5, failurePolicy Fail unless told otherwise (kinds marked `fail_open`, Jobs, are
always Ignore), both AdmissionReview versions.

Selectors keep unrelated objects away. Namespaces labelled `topobridge.io/validation=disabled`
(and the excluded ones, by their `kubernetes.io/metadata.name` label where the API server sets
it, 1.21+) are skipped. Pods are the only kind where most objects are not ours; a label
selector cannot see annotations, so in the default `labelled` mode a pod reaches the webhook
when it carries a PodGroup label (`pod-group.scheduling.sigs.k8s.io` or
`scheduling.x-k8s.io/pod-group`) or the opt-in label `topobridge.io/validate=true`. A pod that
joins its gang by the `gang.scheduling.koordinator.sh/name` annotation alone is then NOT
checked at admission (`topobridge validate` still checks it); `pod_selection="all"` sends every
pod instead, at the cost of one webhook call per pod create or update in the cluster. The
three pod webhooks use mutually exclusive selectors, so no pod is checked twice.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from translations.koordinator import SIGS_POD_GROUP_LABEL
from translations.schedplugins import POD_GROUP_LABEL as X_POD_GROUP_LABEL
from webhooks.rules.registry import KINDS

OPT_OUT_NAMESPACE_LABEL = "topobridge.io/validation"
OPT_IN_POD_LABEL = "topobridge.io/validate"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True, slots=True)
class ServiceRef:
    """The in-cluster Service in front of the admission server."""

    namespace: str
    name: str
    port: int = 443


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where the API server reaches the admission server: its base URL (`https://127.0.0.1:9443`,
    a server outside the cluster) or the Service in front of it, and the CA bundle that signed
    its certificate."""

    ca_bundle: bytes
    url: str | None = None
    service: ServiceRef | None = None

    def __post_init__(self) -> None:
        if self.url is None and self.service is None:
            raise ValueError("give the server's url or its service")

    def client_config(self, path: str) -> dict[str, Any]:
        """A webhook's `clientConfig` for the server's `path`."""
        cfg: dict[str, Any] = {"caBundle": base64.b64encode(self.ca_bundle).decode()}
        if self.url is not None:
            cfg["url"] = self.url.rstrip("/") + path
        elif self.service is not None:
            cfg["service"] = {
                "namespace": self.service.namespace,
                "name": self.service.name,
                "path": path,
                "port": self.service.port,
            }
        return cfg


def _namespace_selector(exclude_namespaces: Sequence[str]) -> dict[str, Any]:
    """Every namespace but the opted-out and the excluded ones."""
    return {
        "matchExpressions": [
            {"key": OPT_OUT_NAMESPACE_LABEL, "operator": "NotIn", "values": ["disabled"]},
            *(
                [{"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": list(exclude_namespaces)}]
                if exclude_namespaces
                else []
            ),
        ]
    }


def _pod_selectors(mode: Literal["labelled", "all"]) -> list[tuple[str, dict[str, Any] | None]]:
    if mode == "all":
        return [("pods", None)]
    exists = {"operator": "Exists"}
    absent = {"operator": "DoesNotExist"}
    return [
        ("pods-sigs", {"matchExpressions": [{"key": SIGS_POD_GROUP_LABEL, **exists}]}),
        (
            "pods-x",
            {
                "matchExpressions": [
                    {"key": X_POD_GROUP_LABEL, **exists},
                    {"key": SIGS_POD_GROUP_LABEL, **absent},
                ]
            },
        ),
        (
            "pods-opt-in",
            {
                "matchExpressions": [
                    {"key": OPT_IN_POD_LABEL, "operator": "In", "values": ["true"]},
                    {"key": SIGS_POD_GROUP_LABEL, **absent},
                    {"key": X_POD_GROUP_LABEL, **absent},
                ]
            },
        ),
    ]


def validating_webhook_configuration(
    endpoint: Endpoint,
    *,
    name: str = "topobridge",
    failure_policy: Literal["Fail", "Ignore"] = "Fail",
    timeout_seconds: int = 5,
    pod_selection: Literal["labelled", "all"] = "labelled",
    exclude_namespaces: Sequence[str] = ("kube-system",),
) -> dict[str, Any]:
    """The configuration object, ready to create or replace (admissionregistration.k8s.io/v1):
    one webhook per kind of the registry (three for pods, by `pod_selection`)."""
    namespace_selector = _namespace_selector(exclude_namespaces)
    webhooks: list[dict[str, Any]] = []
    for kind in KINDS:
        selectors = (
            _pod_selectors(pod_selection) if kind.selects_objects else [(kind.path.rsplit("/", 1)[1], None)]
        )
        for slug, object_selector in selectors:
            hook: dict[str, Any] = {
                "name": f"{slug}.validate.topobridge.io",
                "admissionReviewVersions": ["v1", "v1beta1"],
                "clientConfig": endpoint.client_config(kind.path),
                "rules": [
                    {
                        "apiGroups": [kind.group],
                        "apiVersions": list(kind.versions),
                        "operations": ["CREATE", "UPDATE"],
                        "resources": [kind.resource],
                        "scope": kind.scope,
                    }
                ],
                "failurePolicy": "Ignore" if kind.fail_open else failure_policy,
                "matchPolicy": "Equivalent",
                "sideEffects": "None",
                "timeoutSeconds": timeout_seconds,
            }
            if kind.namespaced:
                hook["namespaceSelector"] = namespace_selector
            if object_selector is not None:
                hook["objectSelector"] = object_selector
            webhooks.append(hook)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "topobridge"}},
        "webhooks": webhooks,
    }


def mutating_webhook_configuration(
    endpoint: Endpoint,
    *,
    name: str = "topobridge",
    timeout_seconds: int = 5,
    exclude_namespaces: Sequence[str] = ("kube-system",),
) -> dict[str, Any]:
    """The MutatingWebhookConfiguration for LeaderWorkerSet gangs (`webhooks.mutating`): PodGroup
    CREATE (topology in before Volcano sees it) and CREATE of pods carrying LWS's name label
    (`scheduling.k8s.io/group-name`). failurePolicy Ignore, as that module asks: mutation never
    blocks a create, and the controller converges the same fields a moment later."""
    from translations.lws import NAME_LABEL as LWS_NAME_LABEL
    from webhooks.mutating import POD_PATH, PODGROUP_PATH

    namespace_selector = _namespace_selector(exclude_namespaces)
    targets: list[tuple[str, str, str, str, dict[str, Any] | None]] = [
        ("podgroups", PODGROUP_PATH, "scheduling.volcano.sh", "podgroups", None),
        (
            "lws-pods",
            POD_PATH,
            "",
            "pods",
            {"matchExpressions": [{"key": LWS_NAME_LABEL, "operator": "Exists"}]},
        ),
    ]
    webhooks: list[dict[str, Any]] = []
    for slug, path, group, resource, object_selector in targets:
        hook: dict[str, Any] = {
            "name": f"{slug}.mutate.topobridge.io",
            "admissionReviewVersions": ["v1", "v1beta1"],
            "clientConfig": endpoint.client_config(path),
            "rules": [
                {
                    "apiGroups": [group],
                    "apiVersions": ["*"],
                    "operations": ["CREATE"],
                    "resources": [resource],
                    "scope": "Namespaced",
                }
            ],
            "failurePolicy": "Ignore",
            "matchPolicy": "Equivalent",
            "sideEffects": "None",
            "timeoutSeconds": timeout_seconds,
            "reinvocationPolicy": "Never",
            "namespaceSelector": namespace_selector,
        }
        if object_selector is not None:
            hook["objectSelector"] = object_selector
        webhooks.append(hook)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "topobridge"}},
        "webhooks": webhooks,
    }
