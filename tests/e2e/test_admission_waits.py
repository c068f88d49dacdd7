"""What the demo and the scenario harness wait for before a step goes on, on the real API server.

The demo's Example 2 once stopped with `403 Forbidden: no PriorityClass with name low-priority
was found`: its pods were created before the Priority admission plugin's cache held the class
created a moment earlier. That lag cannot be produced on demand, but the refusal can: a pod
naming a class that does not exist yet gets exactly that 403 on its first try, every time, and
the class is created only once the harness has said it waits for it.
"""

from __future__ import annotations

import contextlib
import secrets

import pytest

from controller.errors import ApiError, ForbiddenError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import NAMESPACES, PRIORITY_CLASSES, SIGS_PODGROUPS
from e2e import cluster as clustermod
from e2e import local
from topobridge.devcluster import LocalControlPlane


def _pod(priority_class: str) -> JsonDict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"waits-{secrets.token_hex(3)}"},
        "spec": {
            "schedulerName": "no-such-scheduler",
            "priorityClassName": priority_class,
            "containers": [{"name": "c", "image": "busybox"}],
        },
    }


def _priority_class(name: str, value: int) -> JsonDict:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name, "labels": {clustermod.E2E_LABEL: "admission-waits"}},
        "value": value,
    }


async def test_a_pod_waits_for_admission_to_see_its_priority_class(admin: Kube, namespace: str) -> None:
    name = f"late-{secrets.token_hex(3)}"
    waited: list[str] = []

    async def on_wait(priority_class: str) -> None:
        waited.append(priority_class)
        if len(waited) == 1:
            await clustermod.ensure_cluster_object(admin, _priority_class(name, 4242))

    try:
        pod = await clustermod.create_object(admin, _pod(name), namespace=namespace, on_wait=on_wait)
    finally:
        with contextlib.suppress(NotFoundError):
            await admin.delete(PRIORITY_CLASSES, name)
    assert waited and set(waited) == {name}
    assert pod["spec"]["priority"] == 4242


async def test_a_priority_class_that_never_comes_is_refused_after_the_bound(
    admin: Kube, namespace: str
) -> None:
    name = f"never-{secrets.token_hex(3)}"
    waited: list[str] = []

    async def on_wait(priority_class: str) -> None:
        waited.append(priority_class)

    with pytest.raises(ForbiddenError, match=f"no PriorityClass with name {name} was found"):
        await clustermod.create_object(
            admin, _pod(name), namespace=namespace, admission_wait=0.5, on_wait=on_wait
        )
    assert waited and set(waited) == {name}


async def test_only_the_priority_class_refusal_is_retried(admin: Kube, namespace: str) -> None:
    waited: list[str] = []

    async def on_wait(priority_class: str) -> None:
        waited.append(priority_class)

    pod = _pod("system-cluster-critical")
    pod["metadata"]["namespace"] = "no-such-namespace"
    with pytest.raises(NotFoundError):
        await clustermod.create_object(admin, pod, namespace="no-such-namespace", on_wait=on_wait)
    assert waited == []


async def test_the_control_plane_serves_its_namespaces_and_every_crd(
    control_plane: LocalControlPlane, admin: Kube
) -> None:
    for name in ("default", "kube-system"):
        assert (await admin.get(NAMESPACES, name))["metadata"]["name"] == name
    assert (await admin.list(SIGS_PODGROUPS, namespace="default")).items == []


async def test_the_webhook_probe_is_refused_by_the_webhook_once_registered(
    topobridge: local.TopobridgeState, admin: Kube
) -> None:
    # `topobridge` (the fixture) returned only after wait_webhook_answers: the API server calls
    # the webhook, so the probe's dry-run create is refused, naming it.
    with pytest.raises(ApiError, match=local.PROBE_WEBHOOK):
        await admin.create(SIGS_PODGROUPS, local.probe_podgroup(), namespace="default", dry_run=True)
    with pytest.raises(NotFoundError):
        await admin.get(SIGS_PODGROUPS, "topobridge-webhook-probe", namespace="default")
