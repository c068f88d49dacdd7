"""Bind a placed gang through `pods/binding`, all or nothing.

The choice: **retry to completion; roll back only when completion is impossible.**

A binding cannot be undone: the only way back is deleting the pod, which costs the pod (its
owner recreates it; a bare pod is gone for good) and the work it started. Most bind failures
are transient (a timeout, a 5xx or 429, the API server restarting, a leader change), and
those complete on retry. A retry is safe: a binding that did land while its response was
lost comes back as 409 "already assigned" naming *our* node, which is success. So each pod
is retried with backoff until `retry_deadline`.

Completion is impossible when a member can never be bound where it was planned: it was
deleted (404), replaced by a new pod of the same name (uid precondition fails), bound
elsewhere by someone else, or the server refuses the binding itself (400/403/422). It is
impossible within the job too when transient errors outlast `retry_deadline`: the gang
cannot run below minMember waiting for an API server that may stay away. Either way, if the
gang has fewer than minMember members bound, every bound member is deleted (uid
precondition, its own grace period) so no member runs alone; their owners recreate them and
the gang is scheduled again as a whole. A member whose last attempt failed in transit may
have landed all the same: it is read back and, if bound where we planned, deleted too.

The deletions are themselves retried; only if the API server stays away through them too can
members be left bound (the job ends `incomplete`), and then the next cycle finishes the gang
around them, because the engine treats bound members as anchors.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import structlog

from controller import metrics
from controller.errors import ApiError, ConflictError, NotFoundError, TransportError, is_retryable
from controller.kube import Kube
from controller.placer.backoff import Backoff
from controller.resources import PODS
from controller.runtime.cache import ClusterCache

log = structlog.get_logger(__name__)

BOUND_BY_ANNOTATION = "topobridge.io/bound-by"
"""Set on each pod topobridge binds, in the binding's own write: the identity (leader election
identity) of the replica that bound it, so a binding's author can be checked from outside."""

Result = Literal["complete", "incomplete", "rolled-back"]

BIND_RETRY = Backoff(0.1, 2.0, jitter=0.5)
"""Between tries of one pod's bind on transient errors: 0.1 s doubling to 2 s, each scaled by
a random factor in [0.5, 1] so a gang's pods do not retry in step."""
ROLLBACK_RETRY = Backoff(0.1, 2.0)
"""Between tries of deleting a bound member when a gang is rolled back: 0.1 s doubling to 2 s."""


@dataclass
class BindOutcome:
    """What one bind job did (also the record the atomicity tests check)."""

    gang: str
    planned: tuple[tuple[str, str], ...]
    min_member: int
    already_bound: tuple[str, ...]
    bound: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    """pod -> why it could not be bound as planned (permanent failures only)."""
    unfinished: list[str] = field(default_factory=list)
    """Pods still failing transiently at the deadline."""
    landed: list[str] = field(default_factory=list)
    """Unfinished pods found bound as planned when read back (a lost response)."""
    rolled_back: list[str] = field(default_factory=list)
    result: Result = "complete"
    seconds: float = 0.0

    def why(self) -> str:
        """Why the gang could not be bound whole, pod by pod (for Events and conditions)."""
        reasons = {
            **self.failed,
            **{pod: "retry deadline passed on transient errors" for pod in self.unfinished},
        }
        return "; ".join(f"{pod}: {reason}" for pod, reason in sorted(reasons.items()))


class _Permanent(Exception):
    pass


class Binder:
    def __init__(
        self,
        kube: Kube,
        cache: ClusterCache,
        *,
        concurrency: int = 32,
        retry_deadline: float = 30.0,
        backoff: Backoff = BIND_RETRY,
        author: str = "",
    ) -> None:
        self.kube = kube
        self.cache = cache
        self.retry_deadline = retry_deadline
        self.backoff = backoff
        self._annotations = {BOUND_BY_ANNOTATION: author} if author else None
        self._slots = asyncio.Semaphore(concurrency)
        self._rng = random.Random()
        self.outcomes: list[BindOutcome] = []
        """Every job's outcome, newest last (bounded)."""

    async def bind_gang(
        self,
        gang: str,
        placement: Sequence[tuple[str, str]],
        *,
        min_member: int,
        already_bound: Sequence[str] = (),
        annotations: Mapping[str, Mapping[str, str]] | None = None,
    ) -> BindOutcome:
        """`annotations`: per pod, more annotations its Binding carries (a GPU gang's rank order)."""
        started = time.perf_counter()
        out = BindOutcome(gang, tuple(placement), min_member, tuple(already_bound))
        extra = annotations or {}
        results = await asyncio.gather(
            *(self._bind_one(pod, node, extra.get(pod)) for pod, node in placement)
        )
        for (pod, _node), (status, detail) in zip(placement, results, strict=True):
            if status == "bound":
                out.bound.append(pod)
            elif status == "permanent":
                out.failed[pod] = detail
            else:
                out.unfinished.append(pod)
            if status != "bound":
                self.cache.forget(pod)
        # Members bound before this job count only while they stay: one being preempted or
        # deleted meanwhile will not be there to make the gang whole.
        bound_total = len(out.bound) + sum(1 for key in out.already_bound if self._staying(key))
        if bound_total >= min_member:
            out.result = "complete"  # minMember holds; the rest are retried as pending pods
        else:
            out.landed = await self._landed(out.unfinished, dict(placement))
            members = [*out.already_bound, *out.bound, *out.landed]
            out.rolled_back = await self._roll_back(members)
            if set(out.rolled_back) == set(members):
                out.result = "rolled-back"
                metrics.GANGS_ROLLED_BACK.inc()
            else:
                out.result = "incomplete"  # the API server is away: the next cycle finishes it
        out.seconds = time.perf_counter() - started
        metrics.PODS_BOUND.inc(len(out.bound))
        log.log(
            20 if out.result == "complete" else 30,
            "bind.gang_" + out.result.replace("-", "_"),
            gang=gang,
            bound=len(out.bound),
            planned=len(placement),
            failed=out.failed or None,
            unfinished=out.unfinished or None,
            rolled_back=out.rolled_back or None,
            seconds=round(out.seconds, 3),
        )
        self.outcomes.append(out)
        del self.outcomes[:-1000]
        return out

    async def _bind_one(self, key: str, node: str, extra: Mapping[str, str] | None = None) -> tuple[str, str]:
        namespace, _, name = key.partition("/")
        notes = {**(self._annotations or {}), **(extra or {})} or None
        pod = self.cache.pods.items.get(key)
        uid = pod.metadata.uid if pod is not None else None
        deadline = time.monotonic() + self.retry_deadline
        attempt = 0
        while True:
            try:
                async with self._slots:
                    await self.kube.bind(
                        namespace=namespace, pod=name, node=node, pod_uid=uid, annotations=notes
                    )
                return "bound", ""
            except NotFoundError:
                return "permanent", "pod no longer exists"
            except ConflictError as exc:
                verdict = await self._judge_conflict(namespace, name, node, uid, exc)
                if verdict is not None:
                    return verdict
            except ApiError as exc:
                if not is_retryable(exc):
                    return "permanent", str(exc)
            except TransportError:
                pass
            attempt += 1
            if time.monotonic() >= deadline:
                return "transient", "retry deadline passed"
            await asyncio.sleep(self.backoff.delay(attempt, self._rng))

    async def _judge_conflict(
        self, namespace: str, name: str, node: str, uid: str | None, exc: ConflictError
    ) -> tuple[str, str] | None:
        """`_after_conflict`, its own failures judged too: None means try the bind again."""
        try:
            return await self._after_conflict(namespace, name, node, uid, exc)
        except _Permanent as why:
            return "permanent", str(why)
        except (TransportError, ApiError) as exc2:
            return None if is_retryable(exc2) else ("permanent", str(exc2))

    async def _after_conflict(
        self, namespace: str, name: str, node: str, uid: str | None, exc: ConflictError
    ) -> tuple[str, str] | None:
        """A 409 on bind: the pod is already bound (maybe by our own lost request) or replaced."""
        try:
            current = await self.kube.get(PODS, name, namespace=namespace)
        except NotFoundError:
            raise _Permanent("pod no longer exists") from None
        meta, spec = current.get("metadata") or {}, current.get("spec") or {}
        if uid and meta.get("uid") != uid:
            raise _Permanent("pod was replaced by a new one of the same name")
        assigned = spec.get("nodeName")
        if assigned == node:
            return "bound", "already bound here (an earlier attempt landed)"
        if assigned:
            raise _Permanent(f"pod is bound to {assigned} by someone else")
        return None  # a transient conflict: try again

    def _staying(self, key: str) -> bool:
        pod = self.cache.pods.items.get(key)
        if pod is None or not pod.spec.node_name or pod.metadata.deletion_timestamp:
            return False
        conditions = (pod.status.conditions if pod.status else None) or []
        return not any(c.type == "DisruptionTarget" and c.status == "True" for c in conditions)

    async def _landed(self, pods: Sequence[str], planned: dict[str, str]) -> list[str]:
        """Those of `pods` the API server shows bound where we planned (a binding that landed
        while its response was lost); unreadable ones count as landed, to be deleted safely."""
        landed = []
        for key in pods:
            namespace, _, name = key.partition("/")
            try:
                current = await self.kube.get(PODS, name, namespace=namespace)
            except NotFoundError:
                continue
            except (TransportError, ApiError):
                landed.append(key)
                continue
            if (current.get("spec") or {}).get("nodeName") == planned[key]:
                landed.append(key)
        return landed

    async def _roll_back(self, pods: Sequence[str]) -> list[str]:
        """Delete bound members so none runs alone; their owners recreate them."""
        deleted: list[str] = []
        for key in pods:
            namespace, _, name = key.partition("/")
            pod = self.cache.pods.items.get(key)
            uid = pod.metadata.uid if pod is not None else None
            for attempt in range(1, 21):
                try:
                    await self.kube.delete(PODS, name, namespace=namespace, uid=uid)
                    deleted.append(key)
                    break
                except NotFoundError:
                    deleted.append(key)
                    break
                except ConflictError:
                    deleted.append(key)  # uid moved: the pod we bound is gone, a new one took its name
                    break
                except (TransportError, ApiError) as exc:
                    if not is_retryable(exc):
                        log.warning("bind.rollback_failed", pod=key, error=str(exc))
                        break
                    await asyncio.sleep(ROLLBACK_RETRY.delay(attempt))
        return deleted
