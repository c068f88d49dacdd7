"""Gang atomicity under injected bind failures: over 100 randomized gang runs, no gang is ever
left partially bound.

Faults are injected in our own client seam (`Kube.bind`), around a real binding on the real
API server: a request that never leaves (connection reset), a binding that lands but whose
response is lost, and a member deleted while its gang is being bound (the binding then
meets a real 404), which makes completion impossible and forces a roll-back. Gangs are
ReplicaSets, so deleted and rolled-back members are recreated by kube-controller-manager and
the gang is scheduled again as a whole.
"""

from __future__ import annotations

import contextlib
import random
from collections import Counter
from typing import Any, ClassVar

import pytest
from controller_helpers import Kubelet, controller_replica, create_node, delete_nodes, eventually, running
from prometheus_client import REGISTRY

from controller.errors import AlreadyExistsError, NotFoundError, ServerError, TransportError
from controller.kube import JsonDict, Kube
from controller.manager import ControllerOptions
from controller.resources import EVENTS, PODS, PRIORITY_CLASSES, VOLCANO_PODGROUPS, Resource

pytestmark = pytest.mark.integration

REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet", namespaced=True)
NODES = [f"bf-node-{i}" for i in range(16)]
RUNS = 100
BATCH = 25


class FaultyKube(Kube):
    """Kube whose binds fail on purpose (class attributes: one injector per test)."""

    rng = random.Random(20261122)
    p_reset = 0.15
    p_lost = 0.15
    p_poison = 0.06
    poisoned: ClassVar[dict[str, bool]] = {}
    injected: ClassVar[Counter[str]] = Counter()

    async def bind(self, *, namespace: str, pod: str, node: str, **kw: Any) -> None:
        key = f"{namespace}/{pod}"
        cls = type(self)
        if key not in cls.poisoned:
            cls.poisoned[key] = cls.rng.random() < cls.p_poison
            if cls.poisoned[key]:
                cls.injected["deleted"] += 1
                with contextlib.suppress(NotFoundError):
                    await self.delete(PODS, pod, namespace=namespace, grace_period_seconds=0)
        roll = cls.rng.random()
        if roll < cls.p_reset:
            cls.injected["reset"] += 1
            raise TransportError("injected: connection reset before the request was sent")
        await super().bind(namespace=namespace, pod=pod, node=node, **kw)
        if roll < cls.p_reset + cls.p_lost:
            cls.injected["lost"] += 1
            raise TransportError("injected: response lost after the binding landed")


def replica_set(name: str, namespace: str, size: int) -> JsonDict:
    labels = {"gang": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": size,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels, "annotations": {"scheduling.k8s.io/group-name": name}},
                "spec": {
                    "schedulerName": "topobridge",
                    "terminationGracePeriodSeconds": 0,
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "1", "memory": "64Mi"}},
                        }
                    ],
                },
            },
        },
    }


def pod_group(name: str, namespace: str, size: int) -> JsonDict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minMember": size},
    }


@pytest.fixture
async def bf_nodes(admin: Kube) -> Any:
    for n in NODES:
        await create_node(admin, n, cpu="8", memory="64Gi")
    yield
    await delete_nodes(admin, NODES)


async def gang_state(kube: Kube, namespace: str) -> dict[str, tuple[int, int]]:
    """gang -> (live pods, bound live pods)."""
    out: dict[str, list[int]] = {}
    for p in (await kube.list(PODS, namespace=namespace)).items:
        if p["metadata"].get("deletionTimestamp"):
            continue
        g = (p["metadata"].get("labels") or {}).get("gang")
        if g is None:
            continue
        entry = out.setdefault(g, [0, 0])
        entry[0] += 1
        entry[1] += 1 if p["spec"].get("nodeName") else 0
    return {g: (a, b) for g, (a, b) in out.items()}


async def test_injected_bind_failures_never_leave_a_partial_gang(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str, bf_nodes: Any
) -> None:
    FaultyKube.poisoned.clear()
    FaultyKube.injected.clear()
    rng = random.Random(7)
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        leader_election=None,
        scheduler_tuning={"bind_retry_deadline": 10.0, "period": 0.5},
    )
    sizes: dict[str, int] = {}
    kubelet = Kubelet(admin, namespace)
    async with (
        controller_replica(
            control_plane.kubeconfig, options, user=controller_user, kube_class=FaultyKube
        ) as manager,
        running(kubelet.run(0.3), "kubelet"),
    ):
        for start in range(0, RUNS, BATCH):
            batch = {f"run-{i}": rng.randint(2, 6) for i in range(start, start + BATCH)}
            sizes.update(batch)
            for name, size in batch.items():
                await admin.create(VOLCANO_PODGROUPS, pod_group(name, namespace, size))
                await admin.create(REPLICASETS, replica_set(name, namespace, size))

            async def batch_bound(batch: dict[str, int] = batch) -> bool:
                state = await gang_state(admin, namespace)
                return all(state.get(n) == (s, s) for n, s in batch.items())

            await eventually(
                batch_bound, timeout=180, interval=0.5, what=f"batch {start // BATCH} fully bound"
            )
            for name in batch:  # free the room for the next batch
                await admin.delete(REPLICASETS, name, namespace=namespace, propagation="Background")

            async def batch_gone(batch: dict[str, int] = batch) -> bool:
                state = await gang_state(admin, namespace)
                return not any(n in state for n in batch)

            await eventually(batch_gone, timeout=60, interval=0.5, what="the batch's pods deleted")

        outcomes = list(manager.scope.scheduler.binder.outcomes) if manager.scope else []

    # Every job ended whole: complete (minMember bound) or rolled back (every bound member deleted).
    results = Counter(o.result for o in outcomes)
    for o in outcomes:
        bound = set(o.bound) | set(o.already_bound)
        if o.result == "complete":
            assert len(bound) >= o.min_member, (
                f"{o.gang}: 'complete' with {len(bound)} < minMember {o.min_member}"
            )
        elif o.result == "rolled-back":
            assert set(o.rolled_back) == bound, (
                f"{o.gang}: rolled back {sorted(o.rolled_back)} of {sorted(bound)}"
            )
            assert o.failed or o.unfinished, "a roll-back needs a failure"
        else:
            pytest.fail(f"{o.gang}: job ended {o.result} although the API server was reachable")
    gangs_run = {o.gang.split("/", 1)[1] for o in outcomes}
    assert len(gangs_run) >= RUNS, f"only {len(gangs_run)} gangs ran"
    # The faults really happened, and every kind was exercised.
    assert FaultyKube.injected["reset"] > 20 and FaultyKube.injected["lost"] > 20, FaultyKube.injected
    assert results["rolled-back"] >= 5, results
    print(
        f"\nbind fault injection: {RUNS} gangs, {len(outcomes)} bind jobs {dict(results)}, "
        f"injected {dict(FaultyKube.injected)}"
    )


class StallingKube(Kube):
    """Kube whose binds of one member of gang `stall` fail in transit until `healed`: an API
    server that stays away from that one request for longer than the retry deadline."""

    victim: ClassVar[str | None] = None
    healed: ClassVar[bool] = False
    attempts: ClassVar[int] = 0

    async def bind(self, *, namespace: str, pod: str, node: str, **kw: Any) -> None:
        cls = type(self)
        if pod.startswith("stall-") and cls.victim is None:
            cls.victim = pod
        if pod == cls.victim and not cls.healed:
            cls.attempts += 1
            raise TransportError("injected: the API server did not answer")
        await super().bind(namespace=namespace, pod=pod, node=node, **kw)


async def test_a_gang_whose_binding_outlasts_the_deadline_is_rolled_back_not_left_partial(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str, bf_nodes: Any
) -> None:
    StallingKube.victim, StallingKube.healed, StallingKube.attempts = None, False, 0
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        leader_election=None,
        scheduler_tuning={"bind_retry_deadline": 2.0, "period": 0.5},
    )
    async with (
        controller_replica(
            control_plane.kubeconfig, options, user=controller_user, kube_class=StallingKube
        ) as manager,
        running(Kubelet(admin, namespace).run(0.3), "kubelet"),
    ):
        await admin.create(VOLCANO_PODGROUPS, pod_group("stall", namespace, 4))
        await admin.create(REPLICASETS, replica_set("stall", namespace, 4))

        async def first_outcome() -> Any:
            scheduler = getattr(manager.scope, "scheduler", None)  # set once leading
            outcomes = scheduler.binder.outcomes if scheduler is not None else []
            return next((o for o in outcomes if o.gang == f"volcano:{namespace}/stall"), None)

        outcome = await eventually(first_outcome, timeout=60, interval=0.2, what="the first bind job")
        # Three members bound, the fourth still failing at the deadline: the gang cannot run
        # below minMember 4, so the three are deleted (not left bound waiting).
        assert outcome.unfinished == [f"{namespace}/{StallingKube.victim}"], outcome
        assert outcome.result == "rolled-back", outcome
        assert len(outcome.bound) == 3 and sorted(outcome.rolled_back) == sorted(outcome.bound)
        for key in outcome.bound:
            name = key.split("/", 1)[1]
            with contextlib.suppress(NotFoundError):
                pod = await admin.get(PODS, name, namespace=namespace)
                assert pod["metadata"].get("deletionTimestamp"), f"{key} still bound and not being deleted"

        async def reported() -> bool:
            events = (await admin.list(EVENTS, namespace=namespace)).items
            rolled = [
                e
                for e in events
                if e.get("reason") == "GangRolledBack" and e["involvedObject"].get("name") == "stall"
            ]
            pg = await admin.get(VOLCANO_PODGROUPS, "stall", namespace=namespace)
            conds = (pg.get("status") or {}).get("conditions") or []
            cond = next((c for c in conds if c.get("reason") == "GangRolledBack"), None)
            return bool(
                rolled
                and "retry deadline passed on transient errors" in rolled[0]["message"]
                and "deleted 3 bound member(s)" in rolled[0]["message"]
                and cond is not None
                and cond["type"] == "Unschedulable"
                and pg["status"]["phase"] == "Pending"
            )

        await eventually(reported, timeout=20, what="the GangRolledBack Event and PodGroup condition")

        # The API server answers again: the gang is re-queued and bound whole.
        StallingKube.healed = True

        async def whole() -> bool:
            return (await gang_state(admin, namespace)).get("stall") == (4, 4)

        await eventually(whole, timeout=60, interval=0.3, what="the gang bound whole after healing")
        # Each binding names its author on the pod, written by the binding itself.
        authors = {
            (p["metadata"].get("annotations") or {}).get("topobridge.io/bound-by")
            for p in (await admin.list(PODS, namespace=namespace)).items
            if p["spec"].get("nodeName")
        }
        assert authors == {manager.identity}, authors
    assert StallingKube.attempts > 1, "the stalled member was never retried"


class FlakyEvictionKube(Kube):
    """Kube whose first deletion of each pod of gang `low` is answered 503 (not carried out)."""

    refused: ClassVar[set[str]] = set()

    async def delete(self, res: Resource, name: str, **kw: Any) -> Any:
        if res == PODS and name.startswith("low-") and name not in type(self).refused:
            type(self).refused.add(name)
            raise ServerError(
                "injected: the API server is unavailable", status=503, reason="ServiceUnavailable"
            )
        return await super().delete(res, name, **kw)


async def test_an_eviction_refused_for_a_moment_is_retried_not_the_plan_abandoned(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    FlakyEvictionKube.refused = set()
    preemptions_before = preemptions()
    nodes = ["ev-node-0", "ev-node-1"]
    for n in nodes:
        await create_node(admin, n, cpu="4")
    classes = {"ev-low": 10, "ev-high": 1000}
    for name, value in classes.items():
        with contextlib.suppress(AlreadyExistsError):
            body = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}}
            await admin.create(PRIORITY_CLASSES, {**body, "value": value})
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        leader_election=None,
        scheduler_tuning={"period": 0.5},
    )

    async def gang(name: str, size: int, cpu: str, priority_class: str) -> None:
        await admin.create(VOLCANO_PODGROUPS, pod_group(name, namespace, size))
        for i in range(size):
            await admin.create(
                PODS,
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{name}-{i}",
                        "annotations": {"scheduling.k8s.io/group-name": name},
                    },
                    "spec": {
                        "schedulerName": "topobridge",
                        "priorityClassName": priority_class,
                        "terminationGracePeriodSeconds": 0,
                        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
                    },
                },
                namespace=namespace,
            )

    try:
        async with controller_replica(
            control_plane.kubeconfig, options, user=controller_user, kube_class=FlakyEvictionKube
        ) as manager:
            await gang("low", 4, "2", "ev-low")
            await eventually(lambda: _bound(admin, namespace, "low-", 4), timeout=30, what="low bound")
            await gang("high", 2, "4", "ev-high")  # needs every cpu: all of `low` goes
            await eventually(lambda: _bound(admin, namespace, "high-", 2), timeout=60, what="high bound")
            scheduler = manager.scope.scheduler if manager.scope is not None else None
            assert scheduler is not None
            evicted = list(scheduler.preemptor.evicted)
    finally:
        await delete_nodes(admin, nodes)
        for name in classes:
            with contextlib.suppress(NotFoundError):
                await admin.delete(PRIORITY_CLASSES, name)
    # Every victim was refused once and still went in the one plan that chose it.
    assert FlakyEvictionKube.refused == {f"low-{i}" for i in range(4)}
    assert sorted(evicted) == sorted(f"{namespace}/low-{i}" for i in range(4)), evicted
    assert preemptions() - preemptions_before == 1, "the plan was abandoned and made again"


def preemptions() -> float:
    return REGISTRY.get_sample_value("topobridge_preemptions_total") or 0.0


async def _bound(kube: Kube, namespace: str, prefix: str, count: int) -> bool:
    pods = [
        p
        for p in (await kube.list(PODS, namespace=namespace)).items
        if p["metadata"]["name"].startswith(prefix)
    ]
    return len(pods) == count and all(
        p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp") for p in pods
    )


async def test_members_being_preempted_do_not_count_toward_a_replacement_completing_the_gang(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    """Found by a chaos run: a replacement was bound into a gang whose other members were
    being evicted at that moment, and the gang was left with one member of six."""
    nodes = ["pv-node-0"]
    await create_node(admin, nodes[0], cpu="8")
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        leader_election=None,
        scheduler_tuning={"period": 0.5},
    )

    def member(name: str) -> JsonDict:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "annotations": {"scheduling.k8s.io/group-name": "ring"}},
            "spec": {
                "schedulerName": "topobridge",
                "terminationGracePeriodSeconds": 0,
                "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
            },
        }

    try:
        async with controller_replica(control_plane.kubeconfig, options, user=controller_user) as manager:
            await admin.create(VOLCANO_PODGROUPS, pod_group("ring", namespace, 3))
            await admin.create(PODS, member("ring-0"), namespace=namespace)
            await admin.create(PODS, member("ring-1"), namespace=namespace)
            await admin.create(PODS, member("ring-2"), namespace=namespace)
            await eventually(lambda: _bound(admin, namespace, "ring-", 3), timeout=30, what="ring bound")
            # ring-0 is a preemption victim (marked, not yet deleted); ring-2 is replaced.
            condition = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
            await admin.patch_pod_status(namespace=namespace, pod="ring-0", patch={"conditions": [condition]})
            await admin.delete(PODS, "ring-2", namespace=namespace, grace_period_seconds=0)
            await eventually(lambda: _gone(admin, namespace, "ring-2"), what="ring-2 gone")
            await admin.create(PODS, member("ring-2"), namespace=namespace)

            async def outcome() -> Any:
                scheduler = getattr(manager.scope, "scheduler", None)
                done = [o for o in scheduler.binder.outcomes if o.already_bound] if scheduler else []
                return done[-1] if done else None

            out = await eventually(outcome, timeout=30, what="the replacement's bind job")
    finally:
        await delete_nodes(admin, nodes)
    # Only ring-1 would stay: 2 of minMember 3, so the job rolls back instead of completing.
    assert out.result == "rolled-back", out
    assert f"{namespace}/ring-2" in out.rolled_back, out


async def _gone(kube: Kube, namespace: str, name: str) -> bool:
    try:
        await kube.get(PODS, name, namespace=namespace)
    except NotFoundError:
        return True
    return False
