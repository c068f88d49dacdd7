"""Carry out a preemption plan the engine chose (PostFilter: evict only after choosing).

Order matters, as in the seed's job-level preemption: every victim first gets the
`DisruptionTarget` condition (so its owner and its users learn why it goes); then the gang's
pods are nominated to their planned nodes (`status.nominatedNodeName`), which keeps other
gangs of lower or equal priority off that room; only then are the victims deleted, each with a
uid precondition and its own grace period. Binding happens in a later cycle, once the victims
are gone and the engine places the gang on its nominated nodes.

A transient failure (a 5xx, 429 or lost connection) marking or deleting one victim is
retried with backoff for up to `retry_deadline` seconds rather than abandoning the plan
halfway: a plan cut short leaves victims marked or gone for a gang that is then planned
again, maybe elsewhere, and the budgets it spent are spent twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

import structlog

from controller import metrics
from controller.errors import ConflictError, ControllerError, NotFoundError, is_retryable
from controller.kube import Kube
from controller.placer.backoff import Backoff
from controller.placer.preempt import PreemptionPlan
from controller.reporting import EventRecorder, now_rfc3339
from controller.resources import PODS
from controller.runtime.cache import ClusterCache
from controller.runtime.status import StatusWriter
from translations.core import Pod
from translations.gangs import gang_name

log = structlog.get_logger(__name__)

VICTIM_RETRY = Backoff(0.1, 2.0)
"""Between tries of marking or deleting one victim on transient errors: 0.1 s doubling to 2 s."""


class Preemptor:
    def __init__(
        self,
        kube: Kube,
        cache: ClusterCache,
        status: StatusWriter,
        recorder: EventRecorder | None,
        *,
        retry_deadline: float = 10.0,
    ) -> None:
        self.kube = kube
        self.retry_deadline = retry_deadline
        self.cache = cache
        self.status = status
        self.recorder = recorder
        self.evicted: list[str] = []
        """Every victim deleted, oldest first (bounded)."""

    async def carry_out(
        self, plan: PreemptionPlan, message: str, *, messages: Mapping[str, str] | None = None
    ) -> None:
        metrics.PREEMPTIONS.inc()
        glog = log.bind(gang=plan.gang, domain=plan.domain)
        # 1. mark: every victim learns why it goes before anything else happens.
        marked: list[tuple[str, str, str | None, Pod | None]] = []
        for victim in plan.victims:
            namespace, _, name = victim.pod.partition("/")
            pod = self.cache.pods.items.get(victim.pod)
            uid = pod.metadata.uid if pod is not None else None
            condition = {**victim.condition, "lastTransitionTime": now_rfc3339()}
            try:
                await self._retrying(
                    victim.pod,
                    partial(self.kube.set_pod_condition, namespace=namespace, pod=name, condition=condition),
                )
            except NotFoundError:
                continue
            except ControllerError as exc:
                glog.warning("preempt.victim_failed", victim=victim.pod, error=str(exc))
                raise
            marked.append((victim.pod, victim.node, uid, pod))
        await self.status.pod_groups_disrupted([pod for *_, pod in marked], message)
        # 2. nominate: the room is claimed before it is freed.
        await self.status.nominate(plan.nominated, message, messages=messages)
        # 3. delete, with a uid precondition and the victim's own grace period.
        for key, node, uid, pod in marked:
            namespace, _, name = key.partition("/")
            try:
                await self._retrying(key, partial(self.kube.delete, PODS, name, namespace=namespace, uid=uid))
            except NotFoundError:
                continue
            except ConflictError:
                glog.info("preempt.victim_replaced", victim=key)
                continue
            except ControllerError as exc:
                glog.warning("preempt.victim_failed", victim=key, error=str(exc))
                raise
            metrics.PREEMPTION_VICTIMS.inc()
            self.evicted.append(key)
            del self.evicted[:-10000]
            glog.info("preempt.victim_deleted", victim=key, node=node)
            if self.recorder is not None and pod is not None:
                preemptor = next((p for p, n in plan.nominated if n == node), plan.gang)
                await self.recorder.event(
                    {"apiVersion": "v1", "kind": "Pod", "metadata": pod.metadata.to_dict()},
                    "Normal",
                    "Preempted",
                    f"Preempted by {preemptor} (gang {gang_name(plan.gang)}) on node {node}",
                )

    async def _retrying(self, key: str, call: Callable[[], Awaitable[Any]]) -> None:
        """`call()`, retried on transient failures until `retry_deadline`. Not found and
        conflicts (the pod gone or replaced) are the caller's to judge, never retried."""
        deadline = time.monotonic() + self.retry_deadline
        attempt = 0
        while True:
            try:
                await call()
                return
            except (NotFoundError, ConflictError):
                raise
            except ControllerError as exc:
                if not is_retryable(exc) or time.monotonic() >= deadline:
                    raise
                attempt += 1
                log.info("preempt.victim_retry", victim=key, attempt=attempt, error=str(exc))
                await asyncio.sleep(VICTIM_RETRY.delay(attempt))
