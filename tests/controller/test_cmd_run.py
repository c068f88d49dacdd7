"""`topobridge run` as a process: it leads, serves metrics and the webhook, and on SIGTERM
stops cleanly and releases the lease."""

from __future__ import annotations

import asyncio
import json
import signal
import ssl
import urllib.request
from typing import Any

import pytest
from controller_helpers import eventually
from run_process import Ports, get, start_run

from controller.kube import Kube
from controller.rbac import cluster_role
from controller.resources import LEASES, SIGS_PODGROUPS

pytestmark = pytest.mark.integration


def run_cli(argv: list[str]) -> int:
    """The CLI's parser and handler, without `main()`'s logging set-up (it would bind
    structlog to pytest's captured stderr, which closes after the test)."""
    from topobridge.cli import build_parser

    args = build_parser().parse_args(argv)
    return int(args.handler(args))


def test_print_rbac_is_the_generated_role(capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    assert run_cli(["run", "--print-rbac"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert docs[0] == cluster_role()
    assert (
        docs[1]["kind"] == "ClusterRoleBinding" and docs[1]["roleRef"]["name"] == docs[0]["metadata"]["name"]
    )


def test_bad_timings_fail_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(
        [
            "run",
            "--no-webhook",
            "--lease-duration",
            "5",
            "--renew-deadline",
            "10",
            "--kubeconfig",
            "/nonexistent",
        ]
    )
    assert code == 2
    assert "lease duration (5.0s) must be greater than the renew deadline (10.0s)" in capsys.readouterr().err


async def test_run_leads_serves_and_releases_on_sigterm(
    control_plane: Any, admin: Kube, namespace: str
) -> None:
    ports = Ports()
    identity = f"cmd-run-{namespace}"
    proc = await start_run(
        "--lease-namespace",
        namespace,
        "--identity",
        identity,
        kubeconfig=control_plane.kubeconfig,
        ports=ports,
        json_logs=True,
        stderr=asyncio.subprocess.PIPE,
    )
    try:

        async def leading() -> bool:
            lease = await admin.get(LEASES, "topobridge-controller", namespace=namespace)
            return bool(lease["spec"].get("holderIdentity") == identity)

        await eventually(leading, timeout=30, what="the process to take the lease")

        async def metrics_served() -> str:
            status, body = await asyncio.to_thread(get, f"http://127.0.0.1:{ports.metrics}/metrics")
            return body if status == 200 and "topobridge_leader 1.0" in body else ""

        body = await eventually(metrics_served, timeout=15, what="/metrics with the controller's metrics")
        assert "topobridge_webhook_requests" in body or "topobridge_reconciles" in body
        status, _ = await asyncio.to_thread(get, f"https://127.0.0.1:{ports.webhook}/healthz", insecure=True)
        assert status == 200

        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 40)
        logged = (await proc.stderr.read()).decode() if proc.stderr else ""
        assert code == 0, logged[-3000:]
        lease = await admin.get(LEASES, "topobridge-controller", namespace=namespace)
        assert lease["spec"]["holderIdentity"] == "", "a clean exit releases the lease"
        events = [json.loads(line) for line in logged.splitlines() if line.startswith("{")]
        started = [e for e in events if e.get("event") == "process.started"]
        assert [e["event_loop"] for e in started] == ["uvloop"], "the default loop, all of the above on it"
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def admit(url: str, review: dict[str, Any]) -> dict[str, Any]:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(
        url, data=json.dumps(review).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5, context=ctx) as resp:
        answer: dict[str, Any] = json.loads(resp.read())["response"]
        return answer


async def test_webhook_sees_gang_group_members_declared_by_podgroup(
    control_plane: Any, admin: Kube, namespace: str
) -> None:
    """A `scheduling.sigs.k8s.io` PodGroup in the cluster is a GangGroup member the running
    webhook knows: a second member declaring another network-topology-spec is denied."""
    groups = json.dumps([f"{namespace}/infer-a", f"{namespace}/infer-b"])

    def member(name: str, layer: str) -> dict[str, Any]:
        return {
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "annotations": {
                    "gang.scheduling.koordinator.sh/groups": groups,
                    "gang.scheduling.koordinator.sh/network-topology-spec": json.dumps(
                        {"gatherStrategy": [{"layer": layer, "strategy": "MustGather"}]}
                    ),
                },
            },
            "spec": {"minMember": 2},
        }

    await admin.create(SIGS_PODGROUPS, member("infer-a", "SpineLayer"), namespace=namespace)
    ports = Ports()
    proc = await start_run("--no-controller", kubeconfig=control_plane.kubeconfig, ports=ports)
    base = f"https://127.0.0.1:{ports.webhook}"
    try:

        async def synced() -> bool:
            try:
                status, body = await asyncio.to_thread(get, f"{base}/readyz", insecure=True)
            except OSError:
                return False
            return status == 200 and "cluster state synced" in body

        await eventually(synced, timeout=30, what="the webhook's cluster view to sync")

        def review(obj: dict[str, Any]) -> dict[str, Any]:
            return {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {
                    "uid": "3c6b4f1e-0000-4000-8000-000000000002",
                    "kind": {"group": "scheduling.sigs.k8s.io", "version": "v1alpha1", "kind": "PodGroup"},
                    "resource": {
                        "group": "scheduling.sigs.k8s.io",
                        "version": "v1alpha1",
                        "resource": "podgroups",
                    },
                    "operation": "CREATE",
                    "namespace": namespace,
                    "name": obj["metadata"]["name"],
                    "object": obj,
                    "userInfo": {"username": "admin"},
                },
            }

        url = f"{base}/validate/sigs-podgroups"
        denied = await asyncio.to_thread(admit, url, review(member("infer-b", "BlockLayer")))
        assert denied["allowed"] is False
        message = denied["status"]["message"]
        assert "differs from" in message and f"on GangGroup member {namespace}/infer-a" in message
        assert "every member of a GangGroup must carry the same network-topology-spec" in message
        allowed = await asyncio.to_thread(admit, url, review(member("infer-b", "SpineLayer")))
        assert allowed["allowed"] is True, allowed
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 40)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
