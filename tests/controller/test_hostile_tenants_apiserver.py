"""Three tenants on the real API server, one `topobridge run`: a pod asking `cpu: 10P` in one
namespace, a pod naming a 4,301-digit gang in another, an ordinary gang in a third. The
ordinary gang binds; each bad pod gets a PodScheduled condition naming what is wrong; the
process keeps serving. Before the fix, the first cycle raised (an int64 overflow, Python's
limit on integer strings), ended the scheduler's root task and the process, and no gang in
the cluster was scheduled."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from controller_helpers import create_node, delete_nodes, eventually
from run_process import Ports, get, start_run

from controller.kube import JsonDict, Kube
from controller.resources import PODS, VOLCANO_PODGROUPS

pytestmark = pytest.mark.integration

HUGE_NAME = "1" * 4301


def _pod(name: str, ns: str, *, cpu: str = "1", annotations: dict[str, str] | None = None) -> JsonDict:
    res = {"cpu": cpu, "memory": "1Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations or {}},
        "spec": {
            "schedulerName": "topobridge",
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": res}}],
        },
    }


def _condition(pod: JsonDict) -> str:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return str(c.get("message") or "")
    return ""


async def test_bad_objects_leave_the_ordinary_gang_bound_and_the_process_serving(
    control_plane: Any, admin: Kube, make_namespace: Callable[..., Awaitable[str]]
) -> None:
    absurd, huge, ns = [await make_namespace(h) for h in ("absurd", "huge-name", "plain")]
    nodes = [f"hostile-{ns[-6:]}-{i}" for i in range(2)]
    for n in nodes:
        await create_node(admin, n, cpu="8", memory="32Gi")
    await admin.create(PODS, _pod("asks-10p", absurd, cpu="10P"))
    await admin.create(
        PODS, _pod("names-huge", huge, annotations={"scheduling.k8s.io/group-name": HUGE_NAME})
    )
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
        await admin.create(
            PODS, _pod(f"ordinary-{i}", ns, annotations={"scheduling.k8s.io/group-name": "ordinary"})
        )
    ports = Ports()
    proc = await start_run(
        "--lease-namespace",
        ns,
        "--no-lws",
        "--no-hypernodes",
        kubeconfig=control_plane.kubeconfig,
        ports=ports,
    )
    try:

        async def ordinary_bound() -> bool:
            pods = (await admin.list(PODS, namespace=ns)).items
            return len(pods) == 2 and all(p["spec"].get("nodeName") in nodes for p in pods)

        await eventually(ordinary_bound, timeout=60, what="the ordinary gang to bind")

        async def told(namespace: str, name: str, words: str) -> bool:
            assert proc.returncode is None, f"topobridge run exited with {proc.returncode}"
            message = _condition(await admin.get(PODS, name, namespace=namespace))
            return words in message

        await eventually(lambda: told(absurd, "asks-10p", "Insufficient cpu"), what="the 10P pod's reason")
        await eventually(lambda: told(huge, "names-huge", "not found"), what="the huge gang's reason")
        assert proc.returncode is None
        status, _ = await asyncio.to_thread(get, f"https://127.0.0.1:{ports.webhook}/healthz", insecure=True)
        assert status == 200
    finally:
        if proc.returncode is None:
            proc.terminate()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 30)
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await delete_nodes(admin, nodes)
