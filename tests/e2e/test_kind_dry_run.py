"""`e2e/run-kind.sh --dry-run`: every step is printed, nothing is run, and every manifest of ours
the kind suite would apply is valid: custom objects against the project's CRD schemas
(jsonschema), and all of them through the real API server's validation (dryRun=All)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from e2e.kindsuite import BEGIN, END

ROOT = Path(__file__).resolve().parents[2]
STEPS = [
    "prerequisites",
    "build topobridge's image",
    "create the kind cluster",
    "install KWOK",
    "install Volcano",
    "install LeaderWorkerSet",
    "install topobridge from deploy/topobridge",
    "scenarios with Volcano scheduling",
    "remove Volcano",
    "topobridge's fallback scheduler",
    "the manifests of ours",
]


@cache
def dry_run() -> str:
    env = {**os.environ, "PYTHON": sys.executable}
    proc = subprocess.run(
        ["bash", str(ROOT / "e2e" / "run-kind.sh"), "--dry-run"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def manifests() -> list[tuple[str, dict[str, Any]]]:
    text = dry_run()
    body = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    out = []
    for chunk in body.split("\n---\n"):
        source = re.search(r"^# Source: (.+)$", chunk, re.M)
        obj = yaml.safe_load(chunk)
        if obj:
            assert source, chunk[:200]
            out.append((source.group(1), obj))
    return out


def test_every_step_is_printed_and_nothing_runs() -> None:
    text = dry_run()
    headers = re.findall(r"^==> \[\d+\] (.+)$", text, re.M)
    for i, want in enumerate(STEPS):
        assert want in headers[i], f"step {i + 1}: expected {want!r}, got {headers[i]!r}"
    commands = re.findall(r"^\+ (.+)$", text, re.M)
    assert any(c.startswith("docker build -t topobridge:e2e") for c in commands)
    assert any("kind create cluster" in c and "kindest/node:v1." in c for c in commands)
    assert any("install-volcano" in c and "--version 1." in c for c in commands)
    assert any("lws/releases/download/v0." in c for c in commands)
    assert sum("scenarios" in c and "--target" in c for c in commands) == 2
    assert {
        ds for ds in ("kindnet", "kube-proxy") if any(f"patch daemonset {ds}" in c for c in commands)
    } == {
        "kindnet",
        "kube-proxy",
    }
    assert text.rstrip().endswith("dry run: nothing was run")


def test_manifests_cover_the_chart_the_scenarios_and_the_configuration() -> None:
    objs = manifests()
    kinds = {o["kind"] for _, o in objs}
    assert {
        "Deployment",
        "ValidatingWebhookConfiguration",
        "ClusterRole",
        "Node",
        "LeaderWorkerSet",
        "PodGroup",
        "ClusterNetworkTopology",
        "PriorityClass",
        "Pod",
        "ConfigMap",
        "CustomResourceDefinition",
    } <= kinds
    nodes = [o for _, o in objs if o["kind"] == "Node"]
    assert len(nodes) == 14  # the seed's 12 and the job-level example's 2, as KWOK nodes
    assert all(n["metadata"]["annotations"] == {"kwok.x-k8s.io/node": "fake"} for n in nodes)
    # DaemonSets are kept off them (run-kind.sh patches kindnet and kube-proxy), by this label.
    assert all(n["metadata"]["labels"]["type"] == "kwok" for n in nodes)
    pods = [o for _, o in objs if o["kind"] == "Pod"]
    assert all(any(t["key"] == "kwok.x-k8s.io/node" for t in p["spec"]["tolerations"]) for p in pods)
    # The Volcano phase sends every pod to Volcano; the fallback phase keeps each dialect's own.
    assert {p["spec"]["schedulerName"] for p in pods} == {"volcano", "koord-scheduler"}
    dep = next(o for _, o in objs if o["kind"] == "Deployment")
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "topobridge:e2e"
    assert "--translate-koordinator" in dep["spec"]["template"]["spec"]["containers"][0]["args"]


@cache
def crd_validators() -> dict[tuple[str, str], jsonschema.protocols.Validator]:
    out = {}
    for path in (ROOT / "crds").glob("*.yaml"):
        crd = yaml.safe_load(path.read_text())
        for version in crd["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            key = (f"{crd['spec']['group']}/{version['name']}", crd["spec"]["names"]["kind"])
            out[key] = jsonschema.Draft4Validator(schema)
    return out


def test_custom_objects_match_the_projects_crd_schemas() -> None:
    checked = set()
    for source, obj in manifests():
        validator = crd_validators().get((obj["apiVersion"], obj["kind"]))
        if validator is None:
            continue
        errors = sorted(validator.iter_errors(obj), key=lambda e: list(e.path))
        assert not errors, f"{source}: {obj['kind']} {obj['metadata']['name']}: " + "; ".join(
            f"{'.'.join(map(str, e.path))}: {e.message}" for e in errors
        )
        checked.add(obj["kind"] + "." + obj["apiVersion"].split("/")[0])
    assert checked == {
        "LeaderWorkerSet.leaderworkerset.x-k8s.io",
        "ClusterNetworkTopology.scheduling.koordinator.sh",
        "PodGroup.scheduling.sigs.k8s.io",
    }


def test_a_schema_violation_would_be_caught() -> None:
    lws = next(o for _, o in manifests() if o["kind"] == "LeaderWorkerSet")
    bad = {**lws, "spec": {**lws["spec"], "networkTopology": {"mode": "hrad", "highestTierAllowed": -1}}}
    errors = list(crd_validators()[(bad["apiVersion"], bad["kind"])].iter_errors(bad))
    assert {tuple(e.path) for e in errors} == {
        ("spec", "networkTopology", "mode"),
        ("spec", "networkTopology", "highestTierAllowed"),
    }


NOT_SERVED_BY_1_20 = {("policy/v1", "PodDisruptionBudget")}
"""The chart renders policy/v1 for kind's Kubernetes; 1.20 serves only v1beta1 (the chart picks
it there: tests/test_chart_apiserver.py installs the chart on 1.20)."""


@pytest.mark.integration
async def test_every_manifest_passes_the_api_servers_validation(kube: Any, control_plane: Any) -> None:
    from kubernetes_asyncio.client.exceptions import ApiException
    from kubernetes_asyncio.dynamic import DynamicClient
    from kubernetes_asyncio.dynamic.exceptions import ResourceNotFoundError

    dyn = await DynamicClient(kube)
    objs = manifests()
    namespaces = sorted({o["metadata"]["namespace"] for _, o in objs if o["metadata"].get("namespace")})
    ns_api = await dyn.resources.get(api_version="v1", kind="Namespace")
    made = []
    for ns in namespaces:  # a dry run still needs the namespace to exist
        try:
            await dyn.create(ns_api, body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            made.append(ns)
        except ApiException as exc:
            if exc.status != 409:
                raise
    unserved = set()
    try:
        for source, obj in objs:
            try:
                api = await dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
            except ResourceNotFoundError:
                unserved.add((obj["apiVersion"], obj["kind"]))
                continue
            ns = obj["metadata"].get("namespace") if api.namespaced else None
            try:
                await dyn.server_side_apply(
                    api,
                    body=obj,
                    name=obj["metadata"]["name"],
                    namespace=ns,
                    field_manager="e2e-dry-run",
                    force_conflicts=True,
                    dry_run="All",
                )
            except ApiException as exc:
                pytest.fail(
                    f"{source}: {obj['kind']} {obj['metadata']['name']} refused: {exc.status} {exc.body}"
                )
    finally:
        for ns in made:
            await dyn.delete(ns_api, name=ns)
    assert unserved == NOT_SERVED_BY_1_20
