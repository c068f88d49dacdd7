"""A pod the API server stores but Python's JSON parser cannot read: its
`metadata.managedFields[0].fieldsV1` nests 1,100 levels. orjson refuses past 1,024 levels,
and the standard library's parser then raised RecursionError, which the read path did not
catch: the pod informer ended and with it `topobridge run`, controller and webhook-only
alike, and `tree`, `explain` and `simulate --from-cluster` exited 1. A second pod carries
250 KB of annotations, a watch event longer than aiohttp's line limit (128 KiB), which ended
the watch the same way.

Now the too-deep fieldsV1 (which nothing reads) is dropped, the pod kept and counted
(`topobridge_objects_unreadable_total{outcome="trimmed"}`); both processes keep serving,
an ordinary gang binds, the deep pod itself binds, and the read-only commands and the ui work."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import urllib.error
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from controller_helpers import create_node, delete_nodes, eventually
from run_process import Ports, free_port, get, start_run

from controller.errors import NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import PODS, VOLCANO_PODGROUPS

pytestmark = pytest.mark.integration

DEPTH = 1_100


def _deep_field_set(depth: int) -> JsonDict:
    inner: JsonDict = {}
    for _ in range(depth):
        inner = {"f:a": inner}
    return inner


@contextlib.contextmanager
def _recursion_limit(limit: int) -> Iterator[None]:
    """Room for the test's own client to write (and, before the fix, read) the deep pod."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _pod(name: str, ns: str, *, group: str | None = None, meta: JsonDict | None = None) -> JsonDict:
    annotations = {"scheduling.k8s.io/group-name": group} if group else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations, **(meta or {})},
        "spec": {
            "schedulerName": "topobridge",
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
            ],
        },
    }


async def _metric(port: int, line_start: str) -> float:
    _, body = await asyncio.to_thread(get, f"http://127.0.0.1:{port}/metrics")
    for line in body.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def _cli(*argv: str, kubeconfig: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "topobridge.cli",
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "KUBECONFIG": kubeconfig},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return int(proc.returncode or 0), (out + err).decode()


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 30)
    if proc.returncode is None:
        proc.kill()
        await proc.wait()


TRIMMED = 'topobridge_objects_unreadable_total{outcome="trimmed",resource="pods"}'


async def test_a_pod_nested_too_deeply_stops_no_process(
    control_plane: Any, admin: Kube, make_namespace: Callable[..., Awaitable[str]]
) -> None:
    hostile, ns = await make_namespace("deep-fields"), await make_namespace("plain")
    nodes = [f"deep-{ns[-6:]}-{i}" for i in range(2)]
    for n in nodes:
        await create_node(admin, n, cpu="8", memory="32Gi")
    managed = [{"manager": "tenant", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"}]
    managed[0]["fieldsV1"] = _deep_field_set(DEPTH)
    with _recursion_limit(20_000):  # the test's own client, before the fix, needed the room
        await admin.create(PODS, _pod("deep", hostile, meta={"managedFields": managed}))
        stored = await admin.get(PODS, "deep", namespace=hostile)
    assert any(m.get("manager") == "tenant" for m in stored["metadata"]["managedFields"]), "stored as sent"
    await admin.create(PODS, _pod("big", hostile, meta={"annotations": {"big": "x" * 250_000}}))
    await admin.create(
        VOLCANO_PODGROUPS,
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "ordinary", "namespace": ns},
            "spec": {"minMember": 2},
        },
    )
    for i in range(2):
        await admin.create(PODS, _pod(f"ordinary-{i}", ns, group="ordinary"))

    run_ports, webhook_ports = Ports(), Ports()
    common = ("--lease-namespace", ns, "--no-lws", "--no-hypernodes")
    run = await start_run(*common, kubeconfig=control_plane.kubeconfig, ports=run_ports)
    webhook_only = await start_run(
        *common, "--no-controller", kubeconfig=control_plane.kubeconfig, ports=webhook_ports
    )
    try:

        async def bound(namespace: str, count: int) -> bool:
            assert run.returncode is None, f"topobridge run exited with {run.returncode}"
            pods = [
                p
                for p in (await admin.list(PODS, namespace=namespace)).items
                if p["metadata"]["name"] != "big"
            ]
            return len(pods) == count and all(p["spec"].get("nodeName") in nodes for p in pods)

        await eventually(lambda: bound(ns, 2), timeout=60, what="the ordinary gang to bind")
        await eventually(lambda: bound(hostile, 1), timeout=60, what="the deep pod, trimmed, to bind")

        for proc, ports in ((run, run_ports), (webhook_only, webhook_ports)):

            async def counted(proc: Any = proc, ports: Ports = ports) -> bool:
                assert proc.returncode is None, f"exited with {proc.returncode}"
                return await _metric(ports.metrics, TRIMMED) >= 1

            await eventually(counted, timeout=60, what="the deep pod read and counted")
            status, _ = await asyncio.to_thread(
                get, f"https://127.0.0.1:{ports.webhook}/healthz", insecure=True
            )
            assert status == 200

        for argv, says in (
            (("tree",), nodes[0]),
            (("explain", "ordinary", "-n", ns), f"{ns}/ordinary"),
            (("simulate", "--from-cluster", "-o", "json"), '"unschedulable"'),
        ):
            code, text = await _cli(*argv, kubeconfig=control_plane.kubeconfig)
            assert code == 0, f"{' '.join(argv)} exited {code}: {text[-2000:]}"
            assert "Traceback" not in text
            assert says in text, f"{' '.join(argv)}: {text[-2000:]}"
        await _ui_serves_and_stops(control_plane.kubeconfig, node=nodes[0], gang=f"volcano:{ns}/ordinary")
        assert run.returncode is None and webhook_only.returncode is None
    finally:
        await _stop(run)
        await _stop(webhook_only)
        await _delete_hostile_pods(admin, hostile)
        await delete_nodes(admin, nodes)


async def _delete_hostile_pods(admin: Kube, namespace: str) -> None:
    """The deep and the big pod gone before the next test: the session's API server is shared,
    and a test's own client (the invariant watcher's) need not read them."""
    for name in ("deep", "big"):
        with contextlib.suppress(NotFoundError):
            await admin.delete(PODS, name, namespace=namespace, grace_period_seconds=0)

    async def gone() -> bool:
        return not (await admin.list(PODS, namespace=namespace)).items

    await eventually(gone, timeout=60, what="the hostile pods deleted")


async def _first_view(port: int) -> str:
    """The ui's `/api/view` once it has read its first snapshot ("" before: it serves at once
    and answers 503 "reading the snapshot" until then; any other answer fails)."""
    try:
        status, body = await asyncio.to_thread(get, f"http://127.0.0.1:{port}/api/view")
    except urllib.error.HTTPError as exc:
        said = exc.read().decode()
        assert exc.code == 503 and "reading the snapshot" in said, (exc.code, said[:2000])
        return ""
    assert status == 200, body[:2000]
    return body


async def _ui_serves_and_stops(kubeconfig: str, *, node: str, gang: str) -> None:
    """The live ui serves its page, the cluster's view (the nodes, beside the deep pod) and an
    explanation of the ordinary gang, then stops on SIGTERM."""
    port = free_port()
    ui = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "topobridge.cli",
        "ui",
        "--port",
        str(port),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "KUBECONFIG": kubeconfig},
    )
    try:
        assert ui.stdout is not None
        line = await asyncio.wait_for(ui.stdout.readline(), 60)
        assert b"serving" in line, (line, await ui.stderr.read() if ui.stderr else b"")
        status, _ = await asyncio.to_thread(get, f"http://127.0.0.1:{port}/")
        assert status == 200
        body = await eventually(lambda: _first_view(port), timeout=60, what="the ui's first view")
        assert node in body, body[:2000]
        status, body = await asyncio.to_thread(
            get, f"http://127.0.0.1:{port}/api/explain?gang={urllib.parse.quote(gang)}"
        )
        assert status == 200 and gang in body, body[:2000]
        ui.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(ui.wait(), 20) == 0
    finally:
        await _stop(ui)
