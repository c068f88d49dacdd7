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
from webhooks.rules.registry import KINDS, Kind

OPT_OUT_NAMESPACE_LABEL = "topobridge.io/validation"
OPT_IN_POD_LABEL = "topobridge.io/validate"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True, slots=True)
class ServiceRef:
    """The in-cluster Service in front of the admission server."""

    namespace: str
    name: str
    port: int = 443


def _client_config(
    kind: Kind, ca_bundle: bytes, url: str | None, service: ServiceRef | None
) -> dict[str, Any]:
    cfg: dict[str, Any] = {"caBundle": base64.b64encode(ca_bundle).decode()}
    if url is not None:
        cfg["url"] = url.rstrip("/") + kind.path
    elif service is not None:
        cfg["service"] = {
            "namespace": service.namespace,
            "name": service.name,
            "path": kind.path,
            "port": service.port,
        }
    else:
        raise ValueError("give the server's url or its service")
    return cfg


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
    *,
    ca_bundle: bytes,
    url: str | None = None,
    service: ServiceRef | None = None,
    name: str = "topobridge",
    failure_policy: Literal["Fail", "Ignore"] = "Fail",
    timeout_seconds: int = 5,
    pod_selection: Literal["labelled", "all"] = "labelled",
    exclude_namespaces: Sequence[str] = ("kube-system",),
    kinds: Sequence[Kind] = KINDS,
) -> dict[str, Any]:
    """The configuration object, ready to create or replace (admissionregistration.k8s.io/v1).

    `url` is the server's base URL (`https://127.0.0.1:9443`) for a server outside the
    cluster; otherwise `service` names the Service in front of it.
    """
    namespace_selector = {
        "matchExpressions": [
            {"key": OPT_OUT_NAMESPACE_LABEL, "operator": "NotIn", "values": ["disabled"]},
            *(
                [{"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": list(exclude_namespaces)}]
                if exclude_namespaces
                else []
            ),
        ]
    }
    webhooks: list[dict[str, Any]] = []
    for kind in kinds:
        selectors = (
            _pod_selectors(pod_selection) if kind.selects_objects else [(kind.path.rsplit("/", 1)[1], None)]
        )
        for slug, object_selector in selectors:
            hook: dict[str, Any] = {
                "name": f"{slug}.validate.topobridge.io",
                "admissionReviewVersions": ["v1", "v1beta1"],
                "clientConfig": _client_config(kind, ca_bundle, url, service),
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
    *,
    ca_bundle: bytes,
    url: str | None = None,
    service: ServiceRef | None = None,
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

    def client(path: str) -> dict[str, Any]:
        cfg: dict[str, Any] = {"caBundle": base64.b64encode(ca_bundle).decode()}
        if url is not None:
            cfg["url"] = url.rstrip("/") + path
        elif service is not None:
            cfg["service"] = {
                "namespace": service.namespace,
                "name": service.name,
                "path": path,
                "port": service.port,
            }
        else:
            raise ValueError("give the server's url or its service")
        return cfg

    namespace_selector = {
        "matchExpressions": [
            {"key": OPT_OUT_NAMESPACE_LABEL, "operator": "NotIn", "values": ["disabled"]},
            *(
                [{"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": list(exclude_namespaces)}]
                if exclude_namespaces
                else []
            ),
        ]
    }
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
            "clientConfig": client(path),
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
