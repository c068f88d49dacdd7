"""What the scheduler tells users: pods' `PodScheduled=False` condition (reason and the
engine's message), `status.nominatedNodeName`, and the Volcano PodGroup's phase and conditions.

Writes happen only when the text changes (compared with what the cache shows), so a gang
that stays unschedulable costs no API calls cycle after cycle. Status goes through its own
client with its own request budget (kube-scheduler keeps events apart from binds the same
way), so a flood of status updates never slows binding.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

import structlog

from controller.errors import ControllerError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import VOLCANO_PODGROUPS
from controller.runtime.cache import ClusterCache
from translations.gangs import Gang

log = structlog.get_logger(__name__)

POD_SCHEDULED = "PodScheduled"
UNSCHEDULABLE = "Unschedulable"
_MESSAGE_LIMIT = 4096


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class StatusWriter:
    def __init__(self, kube: Kube, cache: ClusterCache) -> None:
        self.kube = kube
        self.cache = cache
        self._pg_written: dict[str, tuple[str, str, str]] = {}

    async def pods_unschedulable(self, gang: Gang, message: str, *, reason: str = UNSCHEDULABLE) -> int:
        """PodScheduled=False on every pending member whose condition says something else."""
        message = message[:_MESSAGE_LIMIT]
        writes = 0
        for m in gang.pending:
            pod = self.cache.pods.items.get(m.key)
            if pod is None:
                continue
            cur = next(
                (c for c in (pod.status.conditions if pod.status else None) or [] if c.type == POD_SCHEDULED),
                None,
            )
            if cur is not None and cur.status == "False" and cur.reason == reason and cur.message == message:
                continue
            cond = {
                "type": POD_SCHEDULED,
                "status": "False",
                "reason": reason,
                "message": message,
                "lastProbeTime": None,
                "lastTransitionTime": _now(),
            }
            if await self._patch_pod(m.key, {"conditions": [cond]}):
                writes += 1
        return writes

    async def nominate(self, pods: Iterable[tuple[str, str]], message: str) -> None:
        """status.nominatedNodeName (and the waiting message) on each (pod, node)."""
        for key, node in pods:
            cond = {
                "type": POD_SCHEDULED,
                "status": "False",
                "reason": UNSCHEDULABLE,
                "message": message[:_MESSAGE_LIMIT],
                "lastProbeTime": None,
                "lastTransitionTime": _now(),
            }
            await self._patch_pod(key, {"nominatedNodeName": node, "conditions": [cond]})

    async def clear_nomination(self, key: str) -> None:
        pod = self.cache.pods.items.get(key)
        if pod is not None and pod.status is not None and pod.status.nominated_node_name:
            await self._patch_pod(key, {"nominatedNodeName": None})

    async def _patch_pod(self, key: str, patch: JsonDict) -> bool:
        namespace, _, name = key.partition("/")
        try:
            await self.kube.patch_pod_status(namespace=namespace, pod=name, patch=patch)
            return True
        except NotFoundError:
            return False
        except ControllerError as exc:
            log.info("status.pod_patch_failed", pod=key, error=str(exc))
            return False

    async def pod_group(
        self, gang: Gang, *, phase: str, condition: str, ok: bool, reason: str, message: str
    ) -> None:
        """Phase and one condition on the gang's Volcano PodGroup (other dialects have no
        conditions to write); skipped when nothing changed."""
        if gang.source != "volcano":
            return
        pg = self.cache.volcano_pgs.items.get(gang.key)
        if pg is None:
            return
        message = message[:_MESSAGE_LIMIT]
        sig = (phase, condition, message)
        if self._pg_written.get(gang.key) == sig:
            return
        status = pg.status
        if (
            status is not None
            and status.phase == phase
            and any(c.type == condition and c.message == message for c in status.conditions or [])
        ):
            self._pg_written[gang.key] = sig
            return
        others = [
            c.to_dict()
            for c in (status.conditions if status else None) or []
            if c.type not in ("Scheduled", "Unschedulable")
        ]
        cond = {
            "type": condition,
            "status": "True" if ok else "False",
            "reason": reason,
            "message": message,
            "lastTransitionTime": _now(),
            "transitionID": f"topobridge-{self.cache.generation}",
        }
        try:
            # No status subresource on Volcano's PodGroup: status is written through the object.
            await self.kube.merge_patch(
                VOLCANO_PODGROUPS,
                pg.name,
                {"status": {"phase": phase, "conditions": [*others, cond]}},
                namespace=pg.namespace,
            )
            self._pg_written[gang.key] = sig
        except NotFoundError:
            pass
        except ControllerError as exc:
            log.info("status.podgroup_patch_failed", gang=gang.key, error=str(exc))
