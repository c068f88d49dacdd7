"""SIGTERM while gangs are being bound: the process stops planning, finishes the gangs it
started, exits 0, and leaves no gang half-bound."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from controller_helpers import create_node, delete_nodes, eventually
from test_replicas import create_gang

from controller.kube import Kube
from controller.resources import PODS

pytestmark = pytest.mark.integration

NODES = [f"gs-node-{i}" for i in range(6)]
GANGS, SIZE = 30, 6


async def test_sigterm_mid_binding_leaves_no_partial_gang(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str, tmp_path: Path
) -> None:
    for n in NODES:
        await create_node(admin, n, cpu="64")
    for g in range(GANGS):
        await create_gang(admin, namespace, f"gang-{g}", SIZE)
    log = tmp_path / "run.log"
    with log.open("wb") as sink:
        # A low request rate stretches binding over several seconds, so the signal lands mid-way.
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "topobridge.cli", "--log-format", "json", "run", "--no-webhook",
            "--kubeconfig", control_plane.kubeconfig, "--as", controller_user, "--no-leader-elect",
            "--no-lws", "--no-hypernodes", "--metrics-port", "0", "--kube-api-qps", "15", "--kube-api-burst", "5",
            stdout=asyncio.subprocess.DEVNULL, stderr=sink, env={**os.environ},
        )  # fmt: skip
    try:

        async def some_bound() -> int:
            pods = (await admin.list(PODS, namespace=namespace)).items
            n = sum(1 for p in pods if p["spec"].get("nodeName"))
            return n if n >= 2 * SIZE else 0

        at_signal = await eventually(some_bound, timeout=60, interval=0.1, what="binding to be under way")
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    try:
        assert code == 0, log.read_text()[-3000:]
        per_gang: Counter[str] = Counter()
        for p in (await admin.list(PODS, namespace=namespace)).items:
            if p["spec"].get("nodeName"):
                per_gang[p["metadata"]["annotations"]["scheduling.k8s.io/group-name"]] += 1
        partial = {g: n for g, n in per_gang.items() if n != SIZE}
        assert not partial, f"gangs left half-bound by the stop: {partial}"
        assert at_signal < GANGS * SIZE, "the signal should land while binding is under way"
        print(
            f"\ngraceful stop: SIGTERM with {at_signal}/{GANGS * SIZE} pods bound; at exit "
            f"{len(per_gang)} of {GANGS} gangs bound whole, none partial"
        )
    finally:
        await delete_nodes(admin, NODES)
