"""The Helm chart against the real kube-apiserver 1.20.2: Helm renders it with the cluster's
capabilities, every object passes the API server's own validation in a server-side dry run
(dryRun=All), and a real `helm install` / `upgrade` / `uninstall` goes through."""

from __future__ import annotations

import asyncio
import base64
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import yaml

from controller.rbac import cluster_role
from e2e.chart import install, uninstall

pytestmark = pytest.mark.integration

FAIL_OPEN = {"webhook": {"failurePolicy": "Ignore"}}
"""Installed for real, the webhooks have no serving replica here (no kubelet runs the pods):
failing open keeps the rest of the suite, sharing this API server, unaffected."""


def manifest_objects(release: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(release["manifest"]) if d]


async def dry_run_create(kube: Any, objs: list[dict[str, Any]], namespace: str) -> list[str]:
    """Create each object with dryRun=All; returns what the API server answered for each."""
    from kubernetes_asyncio.dynamic import DynamicClient

    dyn = await DynamicClient(kube)
    answered = []
    for obj in objs:
        api = await dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        ns = namespace if api.namespaced else None
        created = await dyn.create(api, body=obj, namespace=ns, dry_run="All")
        assert created.metadata.name == obj["metadata"]["name"]
        answered.append(f"{created.kind}/{created.metadata.name}")
    return answered


@pytest.fixture
def release_name() -> str:
    return f"tb-{secrets.token_hex(3)}"


async def test_every_object_passes_a_server_side_dry_run(
    control_plane: Any, kube: Any, namespace: str, release_name: str
) -> None:
    release = await asyncio.to_thread(
        install, control_plane.kubeconfig, release=release_name, namespace=namespace, dry_run="server"
    )
    objs = manifest_objects(release)
    kinds = sorted(o["kind"] for o in objs)
    assert kinds == sorted(
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "Deployment",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "Secret",
            "Service",
            "ServiceAccount",
            "ValidatingWebhookConfiguration",
        ]
        + (["MutatingWebhookConfiguration"] if "MutatingWebhookConfiguration" in kinds else [])
    )
    pdb = next(o for o in objs if o["kind"] == "PodDisruptionBudget")
    assert pdb["apiVersion"] == "policy/v1beta1"  # what 1.20 serves; Helm saw the cluster's APIs
    answered = await dry_run_create(kube, objs, namespace)
    assert len(answered) == len(objs)


# Stand-ins for two third-party APIs, so the API server routes their objects: each accepts any
# spec (its real schema belongs to cert-manager and the Prometheus Operator).
STAND_IN_APIS = [
    ("cert-manager.io", "Certificate", "certificates", "Namespaced"),
    ("cert-manager.io", "Issuer", "issuers", "Namespaced"),
    ("monitoring.coreos.com", "ServiceMonitor", "servicemonitors", "Namespaced"),
    ("monitoring.coreos.com", "PrometheusRule", "prometheusrules", "Namespaced"),
]


def stand_in_crd(group: str, kind: str, plural: str, scope: str) -> dict[str, Any]:
    version = "v1"
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


@pytest.fixture
async def third_party_apis(kube: Any) -> AsyncIterator[None]:
    from kubernetes_asyncio.client import ApiextensionsV1Api, ApisApi

    ext: Any = ApiextensionsV1Api(kube)
    names = []
    for spec in STAND_IN_APIS:
        crd = stand_in_crd(*spec)
        await ext.create_custom_resource_definition(crd)
        names.append(crd["metadata"]["name"])
    try:
        for name in names:
            for _ in range(100):
                crd = await ext.read_custom_resource_definition(name)
                if any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or []):
                    break
                await asyncio.sleep(0.1)
        yield
    finally:
        for name in names:
            await ext.delete_custom_resource_definition(name)
        # A CRD goes asynchronously: until its group leaves discovery, Helm (the next test's
        # install) still sees the API served and renders objects for it.
        gone = {group for group, *_ in STAND_IN_APIS}
        for _ in range(300):
            groups = await ApisApi(kube).get_api_versions()
            if not gone & {g.name for g in groups.groups}:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"API groups {sorted(gone)} still served 30 s after their CRDs were deleted")


async def test_cert_manager_is_used_when_its_api_is_served(
    control_plane: Any, kube: Any, namespace: str, release_name: str, third_party_apis: None
) -> None:
    values = {  # certManager.enabled stays "auto"
        "metrics": {
            "serviceMonitor": {"enabled": True},
            "prometheusRule": {"enabled": True},
            "dashboard": {"enabled": True, "folder": "Scheduling"},
        }
    }
    release = await asyncio.to_thread(
        install,
        control_plane.kubeconfig,
        release=release_name,
        namespace=namespace,
        values=values,
        dry_run="server",
    )
    objs = manifest_objects(release)
    kinds = {o["kind"] for o in objs}
    assert {"Certificate", "Issuer", "ServiceMonitor", "PrometheusRule", "ConfigMap"} <= kinds
    assert "Secret" not in kinds
    webhook = next(o for o in objs if o["kind"] == "ValidatingWebhookConfiguration")
    assert "cert-manager.io/inject-ca-from" in webhook["metadata"]["annotations"]
    await dry_run_create(kube, objs, namespace)


async def test_install_upgrade_uninstall(
    control_plane: Any, kube: Any, make_namespace: Callable[..., Awaitable[str]], release_name: str
) -> None:
    from kubernetes_asyncio.client import (
        AdmissionregistrationV1Api,
        AppsV1Api,
        CoreV1Api,
        RbacAuthorizationV1Api,
    )
    from kubernetes_asyncio.client.exceptions import ApiException

    namespace = await make_namespace("chart")
    kubeconfig = control_plane.kubeconfig
    fullname = f"{release_name}-topobridge"
    release = await asyncio.to_thread(
        install, kubeconfig, release=release_name, namespace=namespace, values=FAIL_OPEN
    )
    assert release["status"] == "deployed"
    try:
        core, apps = CoreV1Api(kube), AppsV1Api(kube)
        rbac, adm = RbacAuthorizationV1Api(kube), AdmissionregistrationV1Api(kube)
        dep = await apps.read_namespaced_deployment(fullname, namespace)
        assert dep.spec.replicas == 2
        role = await rbac.read_cluster_role(fullname)
        assert kube.sanitize_for_serialization(role)["rules"] == cluster_role()["rules"]
        secret = await core.read_namespaced_secret(f"{fullname}-tls", namespace)
        config = kube.sanitize_for_serialization(await adm.read_validating_webhook_configuration(fullname))
        assert base64.b64decode(secret.data["ca.crt"]).startswith(b"-----BEGIN CERTIFICATE-----")
        assert {h["clientConfig"]["caBundle"] for h in config["webhooks"]} == {secret.data["ca.crt"]}

        # An upgrade keeps the certificate (found with `lookup`), so nothing has to re-trust.
        from e2e.chart import CHART_DIR

        def upgrade() -> dict[str, Any]:
            import helm_python as helm

            cfg = helm.Config(kubeconfig_path=kubeconfig, namespace=namespace)
            try:
                result: dict[str, Any] = cfg.upgrade(
                    str(CHART_DIR), release_name, {**FAIL_OPEN, "args": {"workers": 3}}, namespace=namespace
                )
                return result
            finally:
                cfg.close()

        upgraded = await asyncio.to_thread(upgrade)
        assert upgraded["revision"] == 2
        dep = await apps.read_namespaced_deployment(fullname, namespace)
        assert "--workers=3" in dep.spec.template.spec.containers[0].args
        again = await core.read_namespaced_secret(f"{fullname}-tls", namespace)
        assert again.data == secret.data
    finally:
        await asyncio.to_thread(uninstall, kubeconfig, release=release_name, namespace=namespace)
    with pytest.raises(ApiException) as gone:
        await RbacAuthorizationV1Api(kube).read_cluster_role(fullname)
    assert gone.value.status == 404
    with pytest.raises(ApiException) as gone:
        await AdmissionregistrationV1Api(kube).read_validating_webhook_configuration(fullname)
    assert gone.value.status == 404
