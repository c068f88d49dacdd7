"""What the scheduler tells users: pods' `PodScheduled=False` condition (reason and the
engine's message), `status.nominatedNodeName`, and the Volcano PodGroup's phase and conditions.

Each condition is written as the tools of its dialect read it. A pod waits with
`PodScheduled=False`, reason `Unschedulable` (kube-scheduler's). A Volcano PodGroup carries the
condition of what is true of it, with status `True`, as Volcano's gang plugin writes it:
`Unschedulable` (reason `NotEnoughResources`, or `NotEnoughTasks` while it has fewer pods than
minMember; message `<pending>/<members> tasks in gang unschedulable: ...`) or `Scheduled`
(reason `tasks in gang are ready to be scheduled`), never both: `kubectl wait
--for=condition=Unschedulable` and vcctl read it as Volcano's. Messages are the short form of
`controller.runtime.messages`, bounded at any cluster size; `explain` has the whole text.

Kubernetes' own PodGroup (`scheduling.k8s.io`, source `upstream`) gets the condition
kube-scheduler writes (`pod_group_conditions`): `PodGroupInitiallyScheduled` at v1beta1 and
v1alpha3 (1.37), `PodGroupScheduled` at v1alpha2 (1.36); `True` reason `Scheduled` once the
group is placed, else `False` with reason `Unschedulable` (or `SchedulerError` when the attempt
failed) and the verdict as message. It never reverts once `True` (1.37 renamed 1.36's condition
to say so). It goes through the status subresource, at the version the object was read at. A
group that preemption takes whole gets `DisruptionTarget` (reason `PreemptionByScheduler`).

A Volcano PodGroup's phase is derived from what is bound now, never remembered from the last decision
(`pod_group_phase`): `Running` at or above minMember, `Unknown` (Volcano's word for a gang
partly running) when some but fewer are bound, `Pending` when none are. Scheduling outcomes
write their condition and message, but never a phase that contradicts the count; and
`reconcile_pod_groups` corrects a phase the cluster has since made false (members preempted
or deleted, minMember raised or lowered). A gang that was Running and drops below minMember
also gets a `Warning` Event `GangBelowMinMember`.

Writes happen only when the text changes (compared with what the cache shows), so a gang
that stays unschedulable costs no API calls cycle after cycle. Status goes through its own
client with its own request budget (kube-scheduler keeps events apart from binds the same
way), so a flood of status updates never slows binding.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from datetime import UTC, datetime

import structlog

from controller.errors import ControllerError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.reporting import EventRecorder
from controller.resources import K8S_PODGROUPS, VOLCANO_PODGROUPS, at_version
from controller.runtime.cache import ClusterCache
from controller.runtime.messages import short_message, volcano_message
from translations import upstream_gangs, volcano, workload
from translations.core import Pod
from translations.gangs import Gang
from translations.serving import scheduler_name

log = structlog.get_logger(__name__)

POD_SCHEDULED = "PodScheduled"
UNSCHEDULABLE = "Unschedulable"
SCHEDULED = "Scheduled"
NOT_ENOUGH_RESOURCES = "NotEnoughResources"
"""Volcano's reason: the members exist, the cluster has no room for them as the gang asks."""
NOT_ENOUGH_TASKS = "NotEnoughTasks"
"""Volcano's reason: fewer pods than minMember exist."""
READY_REASON = "tasks in gang are ready to be scheduled"
"""Volcano's reason on the Scheduled condition (its gang plugin's words)."""
_MESSAGE_LIMIT = 4096


BELOW_MIN_MEMBER = "BelowMinMember"
TRANSITION_PREFIX = "topobridge-"
"""Conditions topobridge writes carry transitionID `topobridge-<n>`: how any replica knows a
PodGroup's status is its own to keep true."""


INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
"""kube-scheduler 1.37's PodGroup condition (v1beta1, v1alpha3): never reverts once True."""
PODGROUP_SCHEDULED = "PodGroupScheduled"
"""1.36's (v1alpha2) name for the same condition."""
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
SCHEDULER_ERROR = "SchedulerError"
"""kube's reason when the attempt failed (rather than found no room)."""


def scheduled_condition_type(api_version: str | None) -> str:
    """The condition kube-scheduler writes on a PodGroup of `api_version`."""
    return (
        PODGROUP_SCHEDULED if (api_version or "").endswith(f"/{workload.V1ALPHA2}") else INITIALLY_SCHEDULED
    )


def pod_group_conditions(
    pg: workload.PodGroup, *, type_: str, status: bool, reason: str, message: str, now: str
) -> list[JsonDict] | None:
    """`pg`'s conditions with `type_` set as metav1's SetStatusCondition sets it (the transition
    time moves only when the status does), the others kept; None when nothing would change,
    and when the scheduled condition is already True (it never reverts, and a later success
    keeps its first message)."""
    current = list(pg.status.conditions or []) if pg.status is not None else []
    old = next((c for c in current if c.type == type_), None)
    if old is not None and type_ in (INITIALLY_SCHEDULED, PODGROUP_SCHEDULED) and old.status == "True":
        return None
    word = "True" if status else "False"
    message = message[:_MESSAGE_LIMIT]
    if old is not None and (old.status, old.reason, old.message or "") == (word, reason, message):
        return None
    cond: JsonDict = {
        "type": type_,
        "status": word,
        "reason": reason,
        "message": message,
        "lastTransitionTime": old.last_transition_time if old is not None and old.status == word else now,
    }
    if pg.metadata.generation is not None:
        cond["observedGeneration"] = pg.metadata.generation
    others = [c.to_dict() for c in current if c.type != type_]
    return [*others, cond]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_group_phase(bound: int, min_member: int) -> str:
    """The Volcano PodGroup phase that `bound` live bound members make true."""
    if bound and bound >= min_member:
        return "Running"
    return "Unknown" if bound else "Pending"


def below_min_member_message(key: str, bound: int, min_member: int) -> str:
    return f"gang {key}: {bound} of minMember {min_member} pods bound"


class StatusWriter:
    def __init__(self, kube: Kube, cache: ClusterCache, *, recorder: EventRecorder | None = None) -> None:
        self.kube = kube
        self.cache = cache
        self.recorder = recorder
        self._pg_written: dict[str, tuple[str, str, str, str]] = {}
        """PodGroup key -> (uid, phase, condition, message) last written: fresher than the cache."""
        self._reconciled_at = -1
        self._k8s_written: dict[str, tuple[str, str]] = {}
        """Kubernetes PodGroup key -> (uid, conditions but their times) last written."""

    async def pods_unschedulable(
        self,
        gang: Gang,
        message: str,
        *,
        reason: str = UNSCHEDULABLE,
        messages: Mapping[str, str] | None = None,
    ) -> int:
        """PodScheduled=False on every pending member whose condition says something else;
        `messages` gives a member its own text (the others get `message`)."""
        writes = 0
        for m in gang.pending:
            text = short_message((messages or {}).get(m.key, message))
            pod = self.cache.pods.items.get(m.key)
            if pod is None:
                continue
            cur = next(
                (c for c in (pod.status.conditions if pod.status else None) or [] if c.type == POD_SCHEDULED),
                None,
            )
            if cur is not None and cur.status == "False" and cur.reason == reason and cur.message == text:
                continue
            cond = {
                "type": POD_SCHEDULED,
                "status": "False",
                "reason": reason,
                "message": text,
                "lastProbeTime": None,
                "lastTransitionTime": _now(),
            }
            if await self._patch_pod(m.key, {"conditions": [cond]}):
                writes += 1
        return writes

    async def nominate(
        self, pods: Iterable[tuple[str, str]], message: str, *, messages: Mapping[str, str] | None = None
    ) -> None:
        """status.nominatedNodeName (and the waiting message, or the pod's own from
        `messages`) on each (pod, node)."""
        for key, node in pods:
            cond = {
                "type": POD_SCHEDULED,
                "status": "False",
                "reason": UNSCHEDULABLE,
                "message": short_message((messages or {}).get(key, message)),
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

    async def pod_group(self, gang: Gang, *, phase: str, condition: str, reason: str, message: str) -> None:
        """Phase and one condition on the gang's Volcano PodGroup (other dialects have no
        conditions to write); skipped when nothing changed, and when the outcome would contradict
        what is bound: a gang at or above minMember stays Running while extra members wait (their
        pods carry the verdict). An Unschedulable message gets Volcano's head (module doc)."""
        if gang.source == "upstream":
            await self._write_k8s_pod_group(gang, condition=condition, reason=reason, message=message)
        pg = self.volcano_pod_group(gang)
        if pg is None:
            return
        if phase != "Running" and pod_group_phase(len(gang.bound), gang.min_member) == "Running":
            return
        if gang.warnings:  # read leniently, as its dialect would: the condition says so
            message = f"{message}; warning: {'; '.join(gang.warnings)}"
        if condition == UNSCHEDULABLE:
            message = self.unschedulable_message(gang, message)
        await self._write_pod_group(pg, phase=phase, condition=condition, reason=reason, message=message)

    async def _write_k8s_pod_group(self, gang: Gang, *, condition: str, reason: str, message: str) -> None:
        """kube-scheduler's condition on the gang's own `scheduling.k8s.io` PodGroup (module doc);
        a 1.35 Workload group has no PodGroup object and gets nothing."""
        pg = self.cache.k8s_pgs.items.get(gang.name)
        if pg is None:
            return
        scheduled = condition == SCHEDULED
        if not scheduled and pod_group_phase(len(gang.bound), gang.min_member) == "Running":
            return  # placed at minCount: members beyond it waiting do not unmake that
        why = SCHEDULED if scheduled else (SCHEDULER_ERROR if reason == "SchedulingError" else UNSCHEDULABLE)
        type_ = scheduled_condition_type(pg.api_version)
        await self._patch_k8s_pod_group(
            pg,
            pod_group_conditions(pg, type_=type_, status=scheduled, reason=why, message=message, now=_now()),
        )

    async def pod_groups_disrupted(self, victims: Iterable[Pod | None], message: str) -> None:
        """`DisruptionTarget` (reason `PreemptionByScheduler`) on each `disruptionMode: all`
        PodGroup whose members preemption takes: such a group goes whole, as kube-scheduler
        marks it. A `single` group's members go one by one and the group is not marked."""
        keys = {upstream_gangs.pod_group_of(p) for p in victims if p is not None}
        for key in sorted(k for k in keys if k is not None):
            pg = self.cache.k8s_pgs.items.get(key)
            mode = pg.spec.disruption_mode if pg is not None else None
            if pg is None or mode is None or mode.all is None:
                continue
            conditions = pod_group_conditions(
                pg,
                type_=DISRUPTION_TARGET,
                status=True,
                reason=PREEMPTION_BY_SCHEDULER,
                message=message,
                now=_now(),
            )
            await self._patch_k8s_pod_group(pg, conditions)

    async def _patch_k8s_pod_group(self, pg: workload.PodGroup, conditions: list[JsonDict] | None) -> None:
        """Write `conditions` (None: nothing to change) unless they are what was last written to
        this object: the cache may not show our own write yet."""
        if conditions is None:
            return
        key = f"{pg.namespace}/{pg.name}"
        sig = (
            pg.metadata.uid or "",
            repr([{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in conditions]),
        )
        if self._k8s_written.get(key) == sig:
            return
        try:
            await self.kube.merge_patch(
                at_version(K8S_PODGROUPS, pg.api_version),
                pg.name,
                {"status": {"conditions": conditions}},
                namespace=pg.namespace,
                subresource="status",
            )
            self._k8s_written[key] = sig
        except NotFoundError:
            pass
        except ControllerError as exc:
            log.info("status.k8s_podgroup_patch_failed", gang=key, error=str(exc))

    def unschedulable_message(self, gang: Gang, message: str) -> str:
        """What the PodGroup's Unschedulable condition (and its Event) says for `message`."""
        return volcano_message(len(gang.pending), len(gang.pods), message)

    def volcano_pod_group(self, gang: Gang) -> volcano.PodGroup | None:
        """The gang's own Volcano PodGroup, or the one its members joined when the gang was
        translated for Volcano (their group-name annotation): it reports the same verdict."""
        if gang.source == "volcano":
            return self.cache.volcano_pgs.items.get(gang.name)
        for member in gang.pods:
            group = (member.pod.metadata.annotations or {}).get(volcano.GROUP_NAME_ANNOTATION)
            if group:
                return self.cache.volcano_pgs.items.get(f"{gang.namespace}/{group}")
        return None

    async def reconcile_pod_groups(self, scheduler_names: Iterable[str]) -> int:
        """Correct every served Volcano PodGroup whose phase the bound count no longer supports
        (module doc); returns how many were written. Gangs with a binding in flight are left to
        their bind job. Cheap when nothing changed since the last call."""
        if self._reconciled_at == self.cache.generation:
            return 0
        self._reconciled_at = self.cache.generation
        served, bound, in_flight = self._served_groups(set(scheduler_names))
        # A PodGroup whose members are all gone is still ours if we wrote its status.
        served |= {
            key
            for key, pg in self.cache.volcano_pgs.items.items()
            if pg.status is not None
            and any((c.transition_id or "").startswith(TRANSITION_PREFIX) for c in pg.status.conditions or [])
        }
        writes = 0
        for gang in sorted(served - in_flight):
            pg = self.cache.volcano_pgs.items.get(gang)
            if pg is None:
                continue
            min_member = (pg.spec.min_member or 0) if pg.spec is not None else 0
            written = self._pg_written.get(gang)
            if written is not None and written[0] == pg.metadata.uid:
                current: str | None = written[1]
            else:
                current = pg.status.phase if pg.status is not None else None
            derived = pod_group_phase(bound[gang], min_member)
            if derived == current or (derived == "Pending" and current in (None, "Pending", "Inqueue")):
                continue
            if derived == "Running":
                await self._write_pod_group(
                    pg,
                    phase=derived,
                    condition=SCHEDULED,
                    reason=READY_REASON,
                    message=f"{bound[gang]} pods bound",
                )
            else:
                message = below_min_member_message(gang, bound[gang], min_member)
                await self._write_pod_group(
                    pg,
                    phase=derived,
                    condition=UNSCHEDULABLE,
                    reason=BELOW_MIN_MEMBER,
                    message=message,
                )
                if current == "Running" and self.recorder is not None:
                    await self.recorder.event(pg.to_dict(), "Warning", "GangBelowMinMember", message)
            writes += 1
        return writes

    def _served_groups(self, names: Collection[str]) -> tuple[set[str], Counter[str], set[str]]:
        """The Volcano PodGroups (`namespace/name`) with a member whose scheduler is one of
        `names` (`translations.serving.scheduler_name`), their live bound members, and those
        with a member being bound now (assumed)."""
        served: set[str] = set()
        bound: Counter[str] = Counter()
        in_flight: set[str] = set()
        for key, pod in self.cache.pods.items.items():
            group = (pod.metadata.annotations or {}).get(volcano.GROUP_NAME_ANNOTATION)
            if group is None or scheduler_name(pod) not in names:
                continue
            gang = f"{pod.namespace}/{group}"
            served.add(gang)
            if key in self.cache.assumed:
                in_flight.add(gang)
            elif pod.spec.node_name and not pod.terminal and not pod.metadata.deletion_timestamp:
                bound[gang] += 1
        return served, bound, in_flight

    async def _write_pod_group(
        self, pg: volcano.PodGroup, *, phase: str, condition: str, reason: str, message: str
    ) -> None:
        """The phase and `condition` (status True: it says what is true of the gang now), the
        other of Scheduled/Unschedulable removed."""
        key = f"{pg.namespace}/{pg.name}"
        message = message[:_MESSAGE_LIMIT]
        sig = (pg.metadata.uid or "", phase, condition, message)
        if self._pg_written.get(key) == sig:
            return
        status = pg.status
        if (
            status is not None
            and status.phase == phase
            and any(
                c.type == condition and c.status == "True" and c.message == message
                for c in status.conditions or []
            )
        ):
            self._pg_written[key] = sig
            return
        others = [
            c.to_dict()
            for c in (status.conditions if status else None) or []
            if c.type not in (SCHEDULED, UNSCHEDULABLE)
        ]
        cond = {
            "type": condition,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastTransitionTime": _now(),
            "transitionID": f"{TRANSITION_PREFIX}{self.cache.generation}",
        }
        try:
            # No status subresource on Volcano's PodGroup: status is written through the object.
            await self.kube.merge_patch(
                VOLCANO_PODGROUPS,
                pg.name,
                {"status": {"phase": phase, "conditions": [*others, cond]}},
                namespace=pg.namespace,
            )
            self._pg_written[key] = sig
        except NotFoundError:
            pass
        except ControllerError as exc:
            log.info("status.podgroup_patch_failed", gang=key, error=str(exc))
