"""Which pods a scheduler serves: one rule for every part that asks.

A pod is *pending* when it is not bound (`spec.nodeName` empty), not terminal (phase Succeeded
or Failed), not being deleted (no `metadata.deletionTimestamp`) and not assumed (sent to bind
by us, the binding not seen yet: the caller passes its assumed pod keys). A scheduler *serves*
a pod when the pod names it in `spec.schedulerName`; a pod that names none is
`default-scheduler`'s, as the API server defaults the field on create (so a served set that
holds `default-scheduler` serves such pods, and one that does not, does not).

The live scheduler's quick check for work and its hand-off Events, the PodGroup status pass,
the cycle's queue (through `Gang.scheduler_name`) and `topobridge simulate` all ask here.
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Collection, Container

from translations.core import Pod

DEFAULT_SCHEDULER_NAME = "default-scheduler"
"""What the API server writes into `spec.schedulerName` when a pod is created without one."""


def scheduler_name(pod: Pod) -> str:
    """The scheduler the pod asks for, defaulted as the API server defaults it."""
    return pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME


def is_pending(pod: Pod, *, assumed: Container[str] = ()) -> bool:
    """Waiting for a node: not bound, not terminal, not being deleted, not assumed."""
    return not (
        pod.bound or pod.terminal or pod.metadata.deletion_timestamp is not None or pod.key in assumed
    )


def serves(pod: Pod, served: Collection[str], *, assumed: Container[str] = ()) -> bool:
    """A pending pod (`is_pending`) whose scheduler (`scheduler_name`) is one of `served`."""
    return is_pending(pod, assumed=assumed) and scheduler_name(pod) in served
