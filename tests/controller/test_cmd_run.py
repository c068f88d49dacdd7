"""`topobridge run` as a process: it leads, serves metrics and the webhook, and on SIGTERM
stops cleanly and releases the lease."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import ssl
import sys
import urllib.request
from typing import Any

import pytest
from controller_helpers import eventually

from controller.kube import Kube
from controller.rbac import cluster_role
from controller.resources import LEASES

pytestmark = pytest.mark.integration


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str, *, insecure: bool = False) -> tuple[int, str]:
    ctx = ssl.create_default_context()
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    with urllib.request.urlopen(url, timeout=5, context=ctx if url.startswith("https") else None) as resp:
        return resp.status, resp.read().decode()


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
    control_plane: Any, tkube: Kube, namespace: str
) -> None:
    metrics_port, webhook_port = free_port(), free_port()
    identity = f"cmd-run-{namespace}"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "topobridge.cli",
        "--log-format",
        "json",
        "run",
        "--kubeconfig",
        control_plane.kubeconfig,
        "--lease-namespace",
        namespace,
        "--identity",
        identity,
        "--metrics-host",
        "127.0.0.1",
        "--metrics-port",
        str(metrics_port),
        "--webhook-host",
        "127.0.0.1",
        "--webhook-port",
        str(webhook_port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ},
    )
    try:

        async def leading() -> bool:
            lease = await tkube.get(LEASES, "topobridge-controller", namespace=namespace)
            return bool(lease["spec"].get("holderIdentity") == identity)

        await eventually(leading, timeout=30, what="the process to take the lease")

        async def metrics_served() -> str:
            status, body = await asyncio.to_thread(get, f"http://127.0.0.1:{metrics_port}/metrics")
            return body if status == 200 and "topobridge_leader 1.0" in body else ""

        body = await eventually(metrics_served, timeout=15, what="/metrics with the controller's metrics")
        assert "topobridge_webhook_requests" in body or "topobridge_reconciles" in body
        status, _ = await asyncio.to_thread(get, f"https://127.0.0.1:{webhook_port}/healthz", insecure=True)
        assert status == 200

        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 40)
        assert code == 0, (await proc.stderr.read()).decode()[-3000:] if proc.stderr else ""
        lease = await tkube.get(LEASES, "topobridge-controller", namespace=namespace)
        assert lease["spec"]["holderIdentity"] == "", "a clean exit releases the lease"
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
