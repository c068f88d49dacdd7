"""Hand-off between schedulers: topobridge serves a schedulerName only while no other scheduler
of that name is running.

topobridge may stand in for several schedulers (`--scheduler-name volcano`, `koord-scheduler`,
its own `topobridge`). For each name with a presence rule, a probe asks the API server every
`interval` seconds whether that scheduler runs:

* `lease`: its leader-election Lease is being renewed. As client-go's elector judges a lease,
  only our own clock counts: the scheduler is present while the Lease has a holder and its
  record changed less than `leaseDurationSeconds` ago by our clock (the timestamps written in
  the record are not trusted). A Lease seen for the first time counts as renewed just now, so a
  restart of topobridge never grabs pods from a running scheduler; a stale Lease is taken over
  one lease duration later. koord-scheduler's rule by default.
* `deployment`: the Deployment has a ready replica, and the CRDs the scheduler needs are
  served. Volcano's rule by default (its scheduler Deployment and PodGroup/HyperNode CRDs).

A name without a rule (`topobridge`) is always served. A name whose probe has not answered
yet is not served: binding before we know could race the other scheduler. A failed check
(API trouble) keeps the previous verdict: flapping on a blip would be worse than a late
switch. `served_names()` is what the scheduler asks before every cycle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import structlog

from controller import metrics
from controller.clock import Clock, MonotonicClock
from controller.errors import ConfigError, ControllerError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import CRDS, DEPLOYMENTS, LEASES, VOLCANO_CRD_NAMES

log = structlog.get_logger(__name__)

ProbeKind = Literal["lease", "deployment"]
PROBE_KINDS: tuple[ProbeKind, ...] = ("lease", "deployment")
DEFAULT_LEASE_DURATION = 15.0
"""Assumed when a Lease does not say (client-go's default)."""


@dataclass(frozen=True, slots=True)
class PresenceRule:
    """How to tell that the scheduler serving `scheduler_name` is running."""

    scheduler_name: str
    kind: ProbeKind
    namespace: str
    name: str
    """The Lease or the Deployment."""
    crds: tuple[str, ...] = ()
    """CRDs that must be served too (deployment rule only)."""

    def describe(self) -> str:
        return f"{'Lease' if self.kind == 'lease' else 'Deployment'} {self.namespace}/{self.name}"

    @classmethod
    def parse(cls, text: str) -> PresenceRule:
        """`NAME=lease:NAMESPACE/LEASE` or `NAME=deployment:NAMESPACE/DEPLOYMENT`."""
        name, _, rest = text.partition("=")
        kind, _, where = rest.partition(":")
        namespace, _, obj = where.partition("/")
        if not (name and namespace and obj) or kind not in PROBE_KINDS:
            raise ConfigError(
                f"--handoff {text!r}: expected NAME=lease:NAMESPACE/LEASE or "
                "NAME=deployment:NAMESPACE/DEPLOYMENT"
            )
        return cls(name, kind, namespace, obj)


def default_rules(
    *, volcano_namespace: str = "volcano-system", volcano_deployment: str = "volcano-scheduler"
) -> tuple[PresenceRule, ...]:
    """Volcano by its scheduler Deployment and CRDs; koord-scheduler by its leader Lease
    (Koordinator's chart: `koordinator-system/koord-scheduler`)."""
    return (
        PresenceRule("volcano", "deployment", volcano_namespace, volcano_deployment, VOLCANO_CRD_NAMES),
        PresenceRule("koord-scheduler", "lease", "koordinator-system", "koord-scheduler"),
    )


@dataclass(frozen=True)
class HandOffConfig:
    """Which schedulerNames topobridge serves, and how to tell each one's owner is running."""

    scheduler_names: tuple[str, ...] = ("topobridge",)
    rules: tuple[PresenceRule, ...] = field(default_factory=default_rules)
    """Later rules for the same name replace earlier ones."""
    interval: float = 2.0
    """Seconds between checks."""

    def rule_of(self, scheduler_name: str) -> PresenceRule | None:
        found = None
        for rule in self.rules:
            if rule.scheduler_name == scheduler_name:
                found = rule
        return found


def crd_served(crd: JsonDict) -> bool:
    conds = (crd.get("status") or {}).get("conditions") or []
    established = any(c.get("type") == "Established" and c.get("status") == "True" for c in conds)
    served = any(v.get("served") for v in (crd.get("spec") or {}).get("versions") or [])
    return established and served


def deployment_ready(dep: JsonDict) -> bool:
    return int((dep.get("status") or {}).get("readyReplicas") or 0) >= 1


class PresenceProbe:
    """One rule's latest verdict: `present` is None before the first answer."""

    def __init__(self, kube: Kube, rule: PresenceRule, *, clock: Clock) -> None:
        self.kube = kube
        self.rule = rule
        self.clock = clock
        self.present: bool | None = None
        self.reason = ""
        self._record: tuple[str, str, str] | None = None
        self._record_seen_at = 0.0

    async def check(self) -> tuple[bool, str]:
        """(present, why). Raises ControllerError when the API could not answer."""
        if self.rule.kind == "lease":
            return await self._check_lease()
        return await self._check_deployment()

    async def _check_lease(self) -> tuple[bool, str]:
        rule = self.rule
        try:
            lease = await self.kube.get(LEASES, rule.name, namespace=rule.namespace)
        except NotFoundError:
            self._record = None
            return False, f"{rule.describe()} does not exist"
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        record = (holder, str(spec.get("renewTime") or ""), str(spec.get("acquireTime") or ""))
        now = self.clock.now()
        if record != self._record:
            self._record, self._record_seen_at = record, now
        if not holder:
            return False, f"{rule.describe()} has no holder"
        duration = float(spec.get("leaseDurationSeconds") or DEFAULT_LEASE_DURATION)
        quiet = now - self._record_seen_at
        if quiet >= duration:
            return False, f"{rule.describe()} not renewed for {quiet:.0f}s (lease duration {duration:g}s)"
        return True, f"{rule.describe()} held by {holder} and renewed"

    async def _check_deployment(self) -> tuple[bool, str]:
        rule = self.rule
        for name in rule.crds:
            try:
                crd = await self.kube.get(CRDS, name)
            except NotFoundError:
                return False, f"CRD {name} is not installed"
            if not crd_served(crd):
                return False, f"CRD {name} is not established"
        try:
            dep = await self.kube.get(DEPLOYMENTS, rule.name, namespace=rule.namespace)
        except NotFoundError:
            return False, f"{rule.describe()} does not exist"
        if not deployment_ready(dep):
            return False, f"{rule.describe()} has no ready replica"
        return True, f"{rule.describe()} ready" + (" and its CRDs served" if rule.crds else "")

    async def refresh(self) -> bool:
        """Check once; True when the verdict changed."""
        try:
            present, why = await self.check()
        except ControllerError as exc:
            log.warning(
                "handoff.check_failed",
                scheduler=self.rule.scheduler_name,
                error=str(exc),
                keeping=self.present,
            )
            return False
        if present == self.present:
            return False
        log.info(
            "handoff.scheduler_present" if present else "handoff.scheduler_absent",
            scheduler=self.rule.scheduler_name,
            reason=why,
        )
        self.present, self.reason = present, why
        metrics.SCHEDULER_PRESENT.labels(self.rule.scheduler_name).set(1 if present else 0)
        return True


HandOffListener = Callable[[str, bool, str], None]
"""(scheduler name, present, why), called on every change of verdict."""


class HandOff:
    """Probes every served name that has a rule; see the module docstring."""

    def __init__(self, kube: Kube, config: HandOffConfig, *, clock: Clock | None = None) -> None:
        self.config = config
        self.clock = clock or MonotonicClock()
        self.probes = {
            name: PresenceProbe(kube, rule, clock=self.clock)
            for name in config.scheduler_names
            if (rule := config.rule_of(name)) is not None
        }
        self.changed = asyncio.Event()
        self._listeners: list[HandOffListener] = []

    def listen(self, listener: HandOffListener) -> None:
        self._listeners.append(listener)

    def served_names(self) -> frozenset[str]:
        """The names topobridge schedules now: no rule, or its scheduler known to be absent."""
        return frozenset(
            name
            for name in self.config.scheduler_names
            if (probe := self.probes.get(name)) is None or probe.present is False
        )

    def present(self, scheduler_name: str) -> bool | None:
        probe = self.probes.get(scheduler_name)
        return probe.present if probe is not None else False

    def reason(self, scheduler_name: str) -> str:
        probe = self.probes.get(scheduler_name)
        return probe.reason if probe is not None else "no other scheduler of this name is known"

    async def refresh(self) -> None:
        for name, probe in self.probes.items():
            if await probe.refresh():
                self.changed.set()
                for listener in self._listeners:
                    listener(name, bool(probe.present), probe.reason)

    async def run(self) -> None:
        while True:
            await self.refresh()
            await self.clock.sleep(self.config.interval)

    async def wait_for(self, scheduler_name: str, present: bool) -> None:
        """Return once `scheduler_name`'s verdict is `present`."""
        while self.present(scheduler_name) is not present:
            self.changed.clear()
            await self.changed.wait()
