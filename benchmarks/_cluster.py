"""What the controller benchmarks share: filling the local API server with nodes and namespaces,
and starting, measuring and stopping a scheduler or controller process.

Nodes are API objects only (no kubelet): created, then given Ready status and allocatable,
then stripped of the not-ready taint admission put on them, as a kubelet would.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from controller.kube import Kube
from controller.resources import NODES, Resource
from topobridge.devcluster import LocalControlPlane, free_port

NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
SPINE = "network.topology.nvidia.com/spine"
BLOCK = "network.topology.nvidia.com/block"
T = TypeVar("T")


async def gather_limited(coros: Iterable[Awaitable[T]], limit: int = 48) -> list[T]:
    """Await `coros` with at most `limit` in flight."""
    sem = asyncio.Semaphore(limit)

    async def one(c: Awaitable[T]) -> T:
        async with sem:
            return await c

    return await asyncio.gather(*(one(c) for c in coros))


async def make_namespace(kube: Kube, name: str) -> None:
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


async def make_nodes(
    kube: Kube, n: int, *, cpu: str, per_block: int = 10, blocks_per_spine: int = 10
) -> None:
    """`n` Ready nodes `bn-<i>`, `per_block` to a block, `blocks_per_spine` blocks to a spine."""

    async def one(i: int) -> None:
        block, spine = i // per_block, i // (per_block * blocks_per_spine)
        name = f"bn-{i}"
        alloc = {"cpu": cpu, "memory": "256Gi", "pods": "110"}
        await kube.create(
            NODES,
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {"kubernetes.io/hostname": name, SPINE: f"s{spine}", BLOCK: f"b{block}"},
                },
            },
        )
        await kube.merge_patch(
            NODES,
            name,
            {
                "status": {
                    "allocatable": alloc,
                    "capacity": alloc,
                    "conditions": [
                        {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "benchmark"}
                    ],
                }
            },
            subresource="status",
        )
        await kube.merge_patch(NODES, name, {"spec": {"taints": None}})  # admission's not-ready taint

    await gather_limited(one(i) for i in range(n))


# --- processes ---------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_bytes(pid: int) -> int:
    """The process's peak resident set (VmHWM), read before it exits."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def rss_bytes(pid: int) -> int:
    """The process's resident set now (VmRSS)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def machine_busy_seconds() -> float:
    """CPU seconds all cores have spent busy since boot (/proc/stat, less idle and iowait)."""
    parts = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(parts[:8]) - parts[3] - parts[4]) / os.sysconf("SC_CLK_TCK")


@dataclass
class Process:
    """One scheduler or controller under test, with a plain-HTTP /metrics port."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    metrics_port: int

    @property
    def pid(self) -> int:
        return self.popen.pid

    def exited(self) -> bool:
        return self.popen.poll() is not None

    def metrics(self) -> dict[str, float]:
        """The Prometheus text exposition as {series: value} (labels kept in the key)."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as resp:
            text = resp.read().decode()
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                series, _, value = line.rpartition(" ")
                with contextlib.suppress(ValueError):
                    out[series] = float(value)
        return out

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(30)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def spawn(name: str, argv: list[str], log: Path, metrics_port: int, *, cwd: Path | None = None) -> Process:
    """Start `argv` (in `cwd`, else here), its output to `log`."""
    with log.open("wb") as out:
        popen = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ},
            cwd=cwd,
        )
    return Process(name, popen, log, metrics_port)


def topobridge_argv(
    plane: LocalControlPlane, *, qps: float, burst: int, metrics_port: int, parts: Iterable[str] = ()
) -> list[str]:
    """`topobridge run` as the controller only (no webhook, no leader election)."""
    return [
        sys.executable,
        "-m",
        "topobridge.cli",
        "--log-level",
        "warning",
        "--log-format",
        "json",
        "run",
        "--no-webhook",
        "--no-leader-elect",
        "--kubeconfig",
        plane.kubeconfig,
        "--metrics-host",
        "127.0.0.1",
        "--metrics-port",
        str(metrics_port),
        "--kube-api-qps",
        f"{qps:g}",
        "--kube-api-burst",
        str(burst),
        *parts,
    ]


def kube_scheduler_argv(
    plane: LocalControlPlane, binary: Path, *, qps: float, burst: int, metrics_port: int
) -> list[str]:
    """kube-scheduler v1.20.2 as the local control plane starts it, with its deprecated
    plain-HTTP port on loopback so /metrics (client requests, limiter waits) can be read."""
    return [
        str(binary),
        f"--kubeconfig={plane.kubeconfig}",
        "--leader-elect=false",
        "--address=127.0.0.1",
        f"--port={metrics_port}",
        "--secure-port=0",
        f"--kube-api-qps={qps:g}",
        f"--kube-api-burst={burst}",
        "--logtostderr=true",
        "--v=0",
    ]


def metrics_port() -> int:
    return free_port()


def control_plane_pids(plane: LocalControlPlane) -> dict[str, int]:
    return {p.name: p.pid for p in plane.processes}


def any_value(series: dict[str, float], name: str) -> float:
    """Sum of every series of metric `name` (all label values)."""
    return sum(v for k, v in series.items() if k == name or k.startswith(name + "{"))


__all__ = [
    "BLOCK",
    "SPINE",
    "Process",
    "any_value",
    "control_plane_pids",
    "cpu_seconds",
    "gather_limited",
    "kube_scheduler_argv",
    "machine_busy_seconds",
    "make_namespace",
    "make_nodes",
    "metrics_port",
    "peak_rss_bytes",
    "rss_bytes",
    "spawn",
    "topobridge_argv",
]
