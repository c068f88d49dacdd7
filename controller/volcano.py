"""Is Volcano scheduling this cluster? Present = its CRDs are served and a volcano-scheduler
Deployment has a ready replica. Checked every `interval` seconds for as long as we lead.

The fallback scheduler runs only while Volcano is absent. A failed check (API trouble) keeps
the previous verdict: flapping the scheduler on a blip would be worse than a late switch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from controller import metrics
from controller.clock import Clock, MonotonicClock
from controller.errors import ControllerError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import CRDS, DEPLOYMENTS, VOLCANO_CRD_NAMES

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class VolcanoDetectionConfig:
    """Where Volcano's scheduler is expected."""

    namespace: str = "volcano-system"
    """Namespace of the volcano-scheduler Deployment."""
    deployment: str = "volcano-scheduler"
    """Name of the volcano-scheduler Deployment."""
    interval: float = 5.0
    """Seconds between checks."""


def crd_served(crd: JsonDict) -> bool:
    conds = (crd.get("status") or {}).get("conditions") or []
    established = any(c.get("type") == "Established" and c.get("status") == "True" for c in conds)
    served = any(v.get("served") for v in (crd.get("spec") or {}).get("versions") or [])
    return established and served


def deployment_ready(dep: JsonDict) -> bool:
    return int((dep.get("status") or {}).get("readyReplicas") or 0) >= 1


class VolcanoDetector:
    """Polls for Volcano; `present` is the latest verdict (None before the first check)."""

    def __init__(
        self,
        kube: Kube,
        config: VolcanoDetectionConfig,
        *,
        clock: Clock | None = None,
        on_change: Callable[[bool], None] | None = None,
    ) -> None:
        self.kube = kube
        self.config = config
        self.clock = clock or MonotonicClock()
        self.on_change = on_change
        self.present: bool | None = None
        self.changed = asyncio.Event()
        self.reason = ""

    async def check(self) -> tuple[bool, str]:
        """(present, why). Raises ControllerError when the API could not answer."""
        for name in VOLCANO_CRD_NAMES:
            try:
                crd = await self.kube.get(CRDS, name)
            except NotFoundError:
                return False, f"CRD {name} is not installed"
            if not crd_served(crd):
                return False, f"CRD {name} is not established"
        cfg = self.config
        try:
            dep = await self.kube.get(DEPLOYMENTS, cfg.deployment, namespace=cfg.namespace)
        except NotFoundError:
            return False, f"Deployment {cfg.namespace}/{cfg.deployment} does not exist"
        if not deployment_ready(dep):
            return False, f"Deployment {cfg.namespace}/{cfg.deployment} has no ready replica"
        return True, f"CRDs served and Deployment {cfg.namespace}/{cfg.deployment} ready"

    async def refresh(self) -> bool | None:
        try:
            present, why = await self.check()
        except ControllerError as exc:
            log.warning("volcano.check_failed", error=str(exc), keeping=self.present)
            return self.present
        if present != self.present:
            log.info("volcano.detected" if present else "volcano.absent", reason=why)
            self.present, self.reason = present, why
            metrics.VOLCANO_PRESENT.set(1 if present else 0)
            self.changed.set()
            if self.on_change is not None:
                self.on_change(present)
        return self.present

    async def run(self) -> None:
        while True:
            await self.refresh()
            await self.clock.sleep(self.config.interval)

    async def wait_for(self, present: bool) -> None:
        """Return once the verdict is `present`."""
        while self.present is not present:
            self.changed.clear()
            await self.changed.wait()
