"""What a snapshot records about pods: one bound (or assumed) pod, one nomination.

Both the snapshot and the pod columns preemption computes over read these; they import
nothing of the placer, so neither of those modules imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from controller.placer.terms import PodTerms

I64 = npt.NDArray[np.int64]


@dataclass(slots=True)
class BoundPod:
    """A pod holding resources on a node: what preemption needs to know about it.

    Never changed once made (snapshots share it; a change is a new record, `replace`), though
    not frozen: a frozen dataclass sets each field through `object.__setattr__`, which made
    a record cost four times as much to build, and a cold start builds one per bound pod."""

    key: str
    namespace: str
    node: int
    req: I64
    priority: int
    gang: str
    labels: Mapping[str, str]
    terminating: bool = False
    terms: PodTerms | None = None
    """Its inter-pod terms (anti-affinity, host ports, ...), None when it has none."""
    started: float | None = None
    """`status.startTime` in seconds since the epoch; None when not started (kube-scheduler
    counts such a pod as started now: later than every started one)."""
    preemptable: bool = True
    """False: never a victim (Volcano's `volcano.sh/preemptable: "false"`)."""


@dataclass(frozen=True, slots=True)
class Nomination:
    """A pending pod's claim on a node while its victims terminate."""

    pod: str
    gang: str
    node: int
    req: I64
    priority: int
