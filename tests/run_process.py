"""`topobridge run` as its own process, started as a user starts it: one home for the command
line the end-to-end tests share, the free loopback ports they give it, and the plain HTTPS GET
they probe it with (the webhook's certificate is self-signed, so `insecure` skips its check).

The process always binds metrics and the webhook to 127.0.0.1 on ports nobody else holds; the
caller adds what its test is about (`--no-controller`, `--identity`, `--lease-namespace`, ...).
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import sys
import urllib.request
from dataclasses import dataclass, field


def free_port() -> int:
    """A loopback TCP port free right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str, *, insecure: bool = False) -> tuple[int, str]:
    """GET `url` on a fresh connection: its status and body."""
    ctx = ssl.create_default_context()
    if insecure:
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    with urllib.request.urlopen(url, timeout=5, context=ctx if url.startswith("https") else None) as resp:
        return int(resp.status), resp.read().decode()


@dataclass(frozen=True)
class Ports:
    """Where the process serves: chosen before it starts, so the test knows them."""

    webhook: int = field(default_factory=free_port)
    metrics: int = field(default_factory=free_port)


async def start_run(
    *args: str,
    kubeconfig: str,
    ports: Ports | None = None,
    json_logs: bool = False,
    stderr: int = asyncio.subprocess.DEVNULL,
) -> asyncio.subprocess.Process:
    """`python -m topobridge.cli [--log-format json] run --kubeconfig K <ports> *args`, with
    this environment; stdout is dropped, stderr goes where `stderr` says."""
    ports = ports or Ports()
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "topobridge.cli",
        *(("--log-format", "json") if json_logs else ()),
        "run",
        "--kubeconfig",
        kubeconfig,
        "--metrics-host",
        "127.0.0.1",
        "--metrics-port",
        str(ports.metrics),
        "--webhook-host",
        "127.0.0.1",
        "--webhook-port",
        str(ports.webhook),
        *args,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=stderr,
        env={**os.environ},
    )
