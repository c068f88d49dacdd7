"""The Helm chart (deploy/topobridge), rendered by Helm's own engine: its generated parts match
the code, every flag of `topobridge run` has a value that reaches the container, and the
objects carry what the issue asks (2 replicas under leader election, webhook certificates
by cert-manager or by the chart, RBAC, PDB, ServiceMonitor, a read-only root)."""

from __future__ import annotations

import argparse
import base64
import copy
import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from controller.rbac import cluster_role, lease_role
from e2e.chart import CHART_DIR, ChartError, lint, render, render_files
from e2e.chart import crds as chart_crds
from topobridge import cmd_manifests
from topobridge.cli import build_parser
from webhooks.configuration import Endpoint, ServiceRef, validating_webhook_configuration

NS = "tb-system"
EXCLUDED_FLAGS = set(cmd_manifests.NOT_VALUES)  # each with its reason there


def by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def one(objs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = by_kind(objs, kind)
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def run_parser() -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    run: argparse.ArgumentParser = sub.choices["run"]
    return run


def container(objs: list[dict[str, Any]]) -> dict[str, Any]:
    c: dict[str, Any] = one(objs, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    return c


def parsed_args(objs: list[dict[str, Any]]) -> argparse.Namespace:
    """The container's arguments, parsed by topobridge's own command line."""
    return build_parser().parse_args(container(objs)["args"])


@pytest.fixture(scope="module")
def default_objects() -> list[dict[str, Any]]:
    return render(namespace=NS)


# --- generated parts ------------------------------------------------------------------------


def test_generated_files_match_the_code() -> None:
    stale = cmd_manifests.stale(CHART_DIR)
    assert stale == [], f"stale chart files {stale}: run `topobridge manifests`"


def test_manifests_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    (chart / "files").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: x\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text((CHART_DIR / "values.yaml").read_text())  # the README's defaults
    write = build_parser().parse_args(["manifests", "--chart-dir", str(chart)])
    assert write.handler(write) == 0
    args = build_parser().parse_args(["manifests", "--chart-dir", str(chart), "--check"])
    assert args.handler(args) == 0
    rules = chart / "files" / "clusterrole-rules.yaml"
    rules.write_text(rules.read_text().replace("watch", "watch\n  - deletecollection", 1))
    assert args.handler(args) == 1


def test_cluster_role_is_exactly_the_generated_one(default_objects: list[dict[str, Any]]) -> None:
    role = one(default_objects, "ClusterRole")
    assert role["rules"] == cluster_role()["rules"]
    lease = one(default_objects, "Role")
    assert lease["rules"] == lease_role(namespace=NS)["rules"]
    assert lease["metadata"]["namespace"] == NS, "Lease rights in the release namespace only"
    assert all("resourceNames" in r for r in role["rules"] if "leases" in r["resources"]), "by name only"
    lease_binding = one(default_objects, "RoleBinding")
    assert lease_binding["metadata"]["namespace"] == NS
    assert lease_binding["roleRef"]["name"] == lease["metadata"]["name"]
    binding = one(default_objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    sa = one(default_objects, "ServiceAccount")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": NS}
    ]
    pod = one(default_objects, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == sa["metadata"]["name"]


def test_validating_webhooks_are_the_generated_ones(default_objects: list[dict[str, Any]]) -> None:
    default_objects = copy.deepcopy(default_objects)
    generated = validating_webhook_configuration(
        Endpoint(b"", service=ServiceRef(NS, "x")), exclude_namespaces=("kube-system", NS)
    )
    config = one(default_objects, "ValidatingWebhookConfiguration")
    assert [h["name"] for h in config["webhooks"]] == [h["name"] for h in generated["webhooks"]]
    service = one(default_objects, "Service")
    port = next(p for p in service["spec"]["ports"] if p["name"] == "webhook")
    for hook, want in zip(config["webhooks"], generated["webhooks"], strict=True):
        client = hook.pop("clientConfig")
        assert client["service"] == {
            "name": service["metadata"]["name"],
            "namespace": NS,
            "path": want["clientConfig"]["service"]["path"],
            "port": port["port"],
        }
        want = {k: v for k, v in want.items() if k != "clientConfig"}
        assert hook == want, hook["name"]


def test_mutating_webhooks_are_the_generated_ones(default_objects: list[dict[str, Any]]) -> None:
    from webhooks.configuration import mutating_webhook_configuration

    default_objects = copy.deepcopy(default_objects)
    generated = mutating_webhook_configuration(
        Endpoint(b"", service=ServiceRef(NS, "x")), exclude_namespaces=("kube-system", NS)
    )
    config = one(default_objects, "MutatingWebhookConfiguration")
    secret = one(default_objects, "Secret")
    assert [h["name"] for h in config["webhooks"]] == [h["name"] for h in generated["webhooks"]]
    for hook, want in zip(config["webhooks"], generated["webhooks"], strict=True):
        client = hook.pop("clientConfig")
        assert client["service"]["path"] == want["clientConfig"]["service"]["path"]
        assert client["caBundle"] == secret["data"]["ca.crt"]
        assert hook == {k: v for k, v in want.items() if k != "clientConfig"}, hook["name"]
        assert hook["failurePolicy"] == "Ignore"  # whatever webhook.failurePolicy says
    fail_closed = render({"webhook": {"failurePolicy": "Fail"}}, namespace=NS)
    assert {h["failurePolicy"] for h in one(fail_closed, "MutatingWebhookConfiguration")["webhooks"]} == {
        "Ignore"
    }


# --- flags ------------------------------------------------------------------------------------


def test_every_flag_of_run_has_a_value() -> None:
    values = render_values()
    flags = {
        s for a in run_parser()._actions for s in a.option_strings if s.startswith("--")
    } - EXCLUDED_FLAGS
    assert {f"--{k}" for k in values["args"]} == flags


def render_values() -> dict[str, Any]:
    import yaml

    values: dict[str, Any] = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    return values


def non_default(action: argparse.Action) -> tuple[Any, Any]:
    """(value to put in values.yaml, what argparse should then hold) for one flag."""
    if isinstance(action, argparse._StoreTrueAction):
        return True, True
    if isinstance(action, argparse._StoreFalseAction):
        return True, False
    if isinstance(action, argparse._AppendAction):
        return ["volcano", "koord-scheduler"], ["volcano", "koord-scheduler"]
    if action.choices:
        other = next(c for c in action.choices if c != action.default)
        return other, other
    if action.type is int:
        return 7, 7
    if action.type is float:
        return 1.5, 1.5
    return "chosen-value", "chosen-value"


def long_flag(action: argparse.Action) -> str:
    return next(s for s in action.option_strings if s.startswith("--"))


RUN_ACTIONS = [a for a in run_parser()._actions if long_flag(a) not in EXCLUDED_FLAGS]


@pytest.mark.parametrize("action", RUN_ACTIONS, ids=[long_flag(a) for a in RUN_ACTIONS])
def test_each_flag_value_reaches_the_container(action: argparse.Action) -> None:
    flag = long_flag(action).removeprefix("--")
    value, expected = non_default(action)
    values: dict[str, Any] = {"args": {flag: value}}
    if flag == "no-leader-elect":
        values["replicaCount"] = 1
    parsed = parsed_args(render(values, namespace=NS))
    assert parsed.command == "run"
    assert getattr(parsed, action.dest) == expected


def test_default_flags_as_the_chart_fills_them(default_objects: list[dict[str, Any]]) -> None:
    args = parsed_args(default_objects)
    assert args.leader_elect is True
    assert args.lease_namespace == NS
    assert args.identity == "$(POD_NAME)"  # expanded by the kubelet from the env var
    env = {e["name"]: e for e in container(default_objects)["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert args.tls_cert_file == "/etc/topobridge/tls/tls.crt"
    assert args.log_format == "json"
    assert args.scheduler_name == ["topobridge"]


# --- the objects --------------------------------------------------------------------------------


def test_default_objects(default_objects: list[dict[str, Any]]) -> None:
    kinds = sorted(o["kind"] for o in default_objects)
    expected = [
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
    if cmd_manifests.mutating_webhooks():
        expected.append("MutatingWebhookConfiguration")
    assert kinds == sorted(expected)
    for obj in default_objects:
        if obj["kind"] not in (
            "ClusterRole",
            "ClusterRoleBinding",
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
        ):
            assert obj["metadata"]["namespace"] == NS, obj["kind"]


def test_two_replicas_spread_and_a_disruption_budget(default_objects: list[dict[str, Any]]) -> None:
    dep = one(default_objects, "Deployment")
    assert dep["spec"]["replicas"] == 2
    assert dep["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    anti = dep["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    assert (
        anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]["topologyKey"]
        == "kubernetes.io/hostname"
    )
    pdb = one(default_objects, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
    assert render({"podDisruptionBudget": {"enabled": False}}, namespace=NS).count(pdb) == 0


def test_one_replica_renders_no_disruption_budget() -> None:
    """minAvailable 1 of 1 replica would block every node drain."""
    objs = render({"replicaCount": 1}, namespace=NS)
    assert by_kind(objs, "PodDisruptionBudget") == []
    assert one(objs, "Deployment")["spec"]["replicas"] == 1


def test_priority_class_is_cluster_critical_by_default(default_objects: list[dict[str, Any]]) -> None:
    pod = one(default_objects, "Deployment")["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "system-cluster-critical"
    pod = one(render({"priorityClassName": "mine"}, namespace=NS), "Deployment")["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "mine"
    pod = one(render({"priorityClassName": ""}, namespace=NS), "Deployment")["spec"]["template"]["spec"]
    assert "priorityClassName" not in pod


def test_other_schedulers_objects_are_read_by_name_only() -> None:
    values = {
        "args": {
            "volcano-deployment": "my-volcano",
            "handoff": ["koord-scheduler=lease:kx/koord-leader", "custom=deployment:ns/custom-sched"],
        }
    }
    role = one(render(values, namespace=NS), "ClusterRole")
    named = [(r["resources"], r["resourceNames"], r["verbs"]) for r in role["rules"] if "resourceNames" in r]
    assert sorted(named) == sorted(
        [
            (["deployments"], ["volcano-scheduler"], ["get"]),
            (["leases"], ["koord-scheduler"], ["get"]),
            (["deployments"], ["my-volcano"], ["get"]),
            (["leases"], ["koord-leader"], ["get"]),
            (["deployments"], ["custom-sched"], ["get"]),
        ]
    )
    assert all("resourceNames" in r for r in role["rules"] if set(r["resources"]) & {"deployments", "leases"})


def test_lease_role_follows_the_lease_namespace() -> None:
    objs = render({"args": {"lease-namespace": "leases"}}, namespace=NS)
    assert one(objs, "Role")["metadata"]["namespace"] == "leases"
    assert one(objs, "RoleBinding")["subjects"][0]["namespace"] == NS


def test_third_party_crds_only_when_asked(default_objects: list[dict[str, Any]]) -> None:
    assert by_kind(default_objects, "CustomResourceDefinition") == []
    crds = by_kind(render({"crds": {"install": True}}, namespace=NS), "CustomResourceDefinition")
    assert sorted(c["spec"]["names"]["kind"] for c in crds) == [
        "ClusterNetworkTopology",
        "HyperNode",
        "LeaderWorkerSet",
        "PodGroup",
        "PodGroup",
        "PodGroup",
    ]
    assert all(c["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep" for c in crds)
    assert crds == [
        {
            **c,
            "metadata": {
                **c["metadata"],
                "annotations": {**c["metadata"].get("annotations", {}), "helm.sh/resource-policy": "keep"},
            },
        }
        for c in chart_crds()
    ], "the generated CRDs, unchanged but for the keep annotation"


def test_network_policy_admits_only_the_api_server_to_the_webhook(
    default_objects: list[dict[str, Any]],
) -> None:
    assert by_kind(default_objects, "NetworkPolicy") == []
    with pytest.raises(ChartError, match=r"networkPolicy\.apiServerCIDRs: Required value"):
        render({"networkPolicy": {"enabled": True}}, namespace=NS)
    peers = [{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}]
    values = {"networkPolicy": {"enabled": True, "apiServerCIDRs": ["10.0.0.1/32"], "metricsFrom": peers}}
    objs = render(values, namespace=NS)
    policy = one(objs, "NetworkPolicy")
    assert (
        policy["spec"]["podSelector"]["matchLabels"]
        == one(objs, "Deployment")["spec"]["selector"]["matchLabels"]
    )
    webhook, metrics = policy["spec"]["ingress"]
    assert webhook == {
        "from": [{"ipBlock": {"cidr": "10.0.0.1/32"}}],
        "ports": [{"protocol": "TCP", "port": 9443}],
    }
    assert metrics == {"from": peers, "ports": [{"protocol": "TCP", "port": 9090}]}
    assert (
        len(
            one(
                render(
                    {**values, "networkPolicy": {**values["networkPolicy"], "metricsFrom": []}}, namespace=NS
                ),
                "NetworkPolicy",
            )["spec"]["ingress"]
        )
        == 1
    )


def test_more_than_one_replica_needs_leader_election() -> None:
    with pytest.raises(ChartError, match=r"args\.no-leader-elect: Invalid value: true"):
        render({"args": {"no-leader-elect": True}}, namespace=NS)
    args = parsed_args(render({"args": {"no-leader-elect": True}, "replicaCount": 1}, namespace=NS))
    assert args.leader_elect is False


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"args": {"wrkers": 3}}, "additional properties 'wrkers' not allowed"),
        ({"args": {"workers": "many"}}, "at '/args/workers': got string, want null or integer"),
        ({"args": {"scheduler-name": "volcano"}}, "at '/args/scheduler-name'"),
        ({"logFormat": "xml"}, "at '/logFormat'"),
        ({"image": {"tagg": "v1"}}, "at '/image': additional properties 'tagg' not allowed"),
        ({"webhook": {"failurePolicy": "fail"}}, "at '/webhook/failurePolicy'"),
        ({"replicaCount": "2"}, "at '/replicaCount'"),
        ({"kubeconfig": "/k"}, "additional properties 'kubeconfig' not allowed"),
        ({"args": {"as": "admin"}}, "additional properties 'as' not allowed"),
        ({"metrics": {"serviceMonitor": {"interval": "often"}}}, "at '/metrics/serviceMonitor/interval'"),
    ],
    ids=[
        "typo",
        "wrong-type",
        "list-expected",
        "enum",
        "typo-image",
        "enum-policy",
        "type-replicas",
        "no-kubeconfig",
        "no-impersonation",
        "duration",
    ],
)
def test_the_values_schema_refuses_what_topobridge_run_would(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ChartError, match=re.escape(message)):
        render(values, namespace=NS)


def test_nothing_to_run_is_refused() -> None:
    with pytest.raises(ChartError, match="leave nothing to run"):
        render({"args": {"no-controller": True, "no-webhook": True}}, namespace=NS)


def test_ports_agree(default_objects: list[dict[str, Any]]) -> None:
    values = render({"args": {"webhook-port": 10443, "metrics-port": 18080}}, namespace=NS)
    ports = {p["name"]: p["containerPort"] for p in container(values)["ports"]}
    assert ports == {"webhook": 10443, "metrics": 18080}
    svc = {p["name"]: p for p in one(values, "Service")["spec"]["ports"]}
    assert svc["webhook"]["targetPort"] == "webhook" and svc["metrics"]["targetPort"] == "metrics"
    assert container(values)["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}


def test_unset_ports_and_grace_fall_back_to_topobridges_defaults() -> None:
    objs = render({"args": {"webhook-port": None, "metrics-port": None, "grace": None}}, namespace=NS)
    c = container(objs)
    assert {p["name"]: p["containerPort"] for p in c["ports"]} == {"webhook": 9443, "metrics": 9090}
    args = parsed_args(objs)
    assert (args.webhook_port, args.metrics_port, args.grace) == (9443, 9090, 30.0)
    assert one(objs, "Deployment")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 45


def test_read_only_root_non_root_user(default_objects: list[dict[str, Any]]) -> None:
    from dockerfile_parse import DockerfileParser

    pod = one(default_objects, "Deployment")["spec"]["template"]["spec"]
    c = container(default_objects)
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    # The chart's UID is the image's USER, so runAsNonRoot holds whichever one wins.
    user = [
        i["value"]
        for i in DockerfileParser(path=str(CHART_DIR.parent.parent / "Dockerfile")).structure
        if i["instruction"] == "USER"
    ][-1]
    assert user == f"{pod['securityContext']['runAsUser']}:{pod['securityContext']['runAsGroup']}"
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert mounts["tmp"]["mountPath"] == "/tmp" and "emptyDir" in volumes["tmp"]
    assert mounts["tls"]["readOnly"] is True


# --- certificates ---------------------------------------------------------------------------------


def test_the_chart_makes_a_certificate_the_webhooks_trust(default_objects: list[dict[str, Any]]) -> None:
    secret = one(default_objects, "Secret")
    dep_volumes = one(default_objects, "Deployment")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "tls", "secret": {"secretName": secret["metadata"]["name"]}} in dep_volumes
    ca_pem = base64.b64decode(secret["data"]["ca.crt"])
    for hook in one(default_objects, "ValidatingWebhookConfiguration")["webhooks"]:
        assert hook["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]
    ca = x509.load_pem_x509_certificate(ca_pem)
    cert = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    assert cert.issuer == ca.subject
    public = ca.public_key()
    if isinstance(public, rsa.RSAPublicKey):
        public.verify(
            cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), cert.signature_hash_algorithm
        )
    else:
        assert isinstance(public, ec.EllipticCurvePublicKey)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName
    )
    service = one(default_objects, "Service")["metadata"]["name"]
    assert f"{service}.{NS}.svc" in sans
    assert cert.not_valid_after_utc > dt.datetime.now(dt.UTC) + dt.timedelta(days=365)


def test_cert_manager_issues_and_injects() -> None:
    objs = render({"webhook": {"certManager": {"enabled": True}}}, namespace=NS)
    assert by_kind(objs, "Secret") == []
    issuer, cert = one(objs, "Issuer"), one(objs, "Certificate")
    assert issuer["spec"] == {"selfSigned": {}}
    assert cert["spec"]["issuerRef"] == {
        "name": issuer["metadata"]["name"],
        "kind": "Issuer",
        "group": "cert-manager.io",
    }
    volumes = one(objs, "Deployment")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "tls", "secret": {"secretName": cert["spec"]["secretName"]}} in volumes
    service = one(objs, "Service")["metadata"]["name"]
    assert f"{service}.{NS}.svc" in cert["spec"]["dnsNames"]
    config = one(objs, "ValidatingWebhookConfiguration")
    assert config["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": f"{NS}/{cert['metadata']['name']}"
    }
    assert all("caBundle" not in h["clientConfig"] for h in config["webhooks"])


def test_cert_manager_with_an_existing_issuer() -> None:
    ref = {"name": "corp-ca", "kind": "ClusterIssuer"}
    objs = render({"webhook": {"certManager": {"enabled": "true", "issuerRef": ref}}}, namespace=NS)
    assert by_kind(objs, "Issuer") == []
    assert one(objs, "Certificate")["spec"]["issuerRef"] == {**ref, "group": "cert-manager.io"}


def test_cert_manager_auto_without_its_api_uses_the_charts_certificate() -> None:
    objs = render({"webhook": {"certManager": {"enabled": "auto"}}}, namespace=NS)
    assert by_kind(objs, "Certificate") == [] and len(by_kind(objs, "Secret")) == 1


def test_cert_manager_mode_is_checked() -> None:
    # The schema's enum refuses it before the template's own check could.
    with pytest.raises(
        ChartError,
        match=r"at '/webhook/certManager/enabled': value must be one of 'auto', true, false, 'true', 'false'",
    ):
        render({"webhook": {"certManager": {"enabled": "maybe"}}}, namespace=NS)


def test_without_the_webhook_nothing_of_it_is_installed() -> None:
    objs = render({"args": {"no-webhook": True}}, namespace=NS)
    kinds = {o["kind"] for o in objs}
    assert not kinds & {
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "Secret",
        "Certificate",
    }
    c = container(objs)
    assert [p["name"] for p in c["ports"]] == ["metrics"]
    assert c["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert parsed_args(objs).webhook is False


def test_webhook_policy_values() -> None:
    objs = render(
        {"webhook": {"failurePolicy": "Ignore", "timeoutSeconds": 3, "excludeNamespaces": ["a", "b"]}},
        namespace=NS,
    )
    for hook in one(objs, "ValidatingWebhookConfiguration")["webhooks"]:
        assert hook["failurePolicy"] == "Ignore" and hook["timeoutSeconds"] == 3
        if "namespaceSelector" in hook:
            names = hook["namespaceSelector"]["matchExpressions"][-1]
            assert names == {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["a", "b", NS],
            }


def test_jobs_fail_open_whatever_the_policy() -> None:
    """Every workload creates Jobs and few are GPU gangs: an unreachable topobridge must never
    block them, so their webhook stays Ignore while the others follow webhook.failurePolicy."""
    objs = render({"webhook": {"failurePolicy": "Fail"}}, namespace=NS)
    policies = {
        h["rules"][0]["resources"][0]: h["failurePolicy"]
        for h in one(objs, "ValidatingWebhookConfiguration")["webhooks"]
    }
    assert policies.pop("jobs") == "Ignore"
    assert set(policies.values()) == {"Fail"}


def test_service_monitor_is_optional(default_objects: list[dict[str, Any]]) -> None:
    assert by_kind(default_objects, "ServiceMonitor") == []
    objs = render(
        {"metrics": {"serviceMonitor": {"enabled": True, "interval": "15s", "labels": {"release": "prom"}}}},
        namespace=NS,
    )
    sm = one(objs, "ServiceMonitor")
    assert sm["metadata"]["labels"]["release"] == "prom"
    assert sm["spec"]["endpoints"][0]["port"] == "metrics" and sm["spec"]["endpoints"][0]["interval"] == "15s"
    assert sm["spec"]["selector"]["matchLabels"] == one(objs, "Service")["spec"]["selector"]


LINTED_VALUES = [
    {},
    {"replicaCount": 1, "args": {"no-leader-elect": True}},
    {"crds": {"install": True}, "networkPolicy": {"enabled": True, "apiServerCIDRs": ["10.0.0.1/32"]}},
    {
        "metrics": {
            "serviceMonitor": {"enabled": True},
            "dashboard": {"enabled": True, "folder": "Scheduling"},
            "prometheusRule": {"enabled": True},
        }
    },
]


@pytest.mark.parametrize("kube_version", ["v1.20.2", "v1.30.0"])
@pytest.mark.parametrize(
    "values", LINTED_VALUES, ids=["defaults", "one-replica", "crds-and-policy", "monitoring"]
)
def test_helm_lint_strict(kube_version: str, values: dict[str, Any]) -> None:
    report = lint(values, kube_version=kube_version)
    problems = [m for m in report["messages"] if m["severity"] >= 2]  # 1 is INFO (no icon)
    assert report["errors"] == [] and problems == [], report


def test_values_yaml_sets_every_value_the_schema_declares() -> None:
    """The README's table and values.yaml cannot disagree: every declared key has a default."""
    schema = cmd_manifests.values_schema()
    values = render_values()

    def walk(sub: dict[str, Any], node: Any, path: str) -> None:
        for key, child in sub.get("properties", {}).items():
            assert isinstance(node, dict) and key in node, f"values.yaml lacks {path}{key}"
            if (
                child.get("additionalProperties") is False
                and "properties" in child
                and path + key != "webhook.certManager.issuerRef"
            ):
                walk(child, node[key], f"{path}{key}.")

    walk(schema, values, "")
    readme = (CHART_DIR / "README.md").read_text()
    for flag in schema["properties"]["args"]["properties"]:
        assert f"`args.{flag}`" in readme


def test_notes_render() -> None:
    notes = next(v for k, v in render_files(namespace=NS).items() if k.endswith("NOTES.txt"))
    assert f"installed in namespace {NS}" in notes and "schedulerName topobridge" in notes
