"""`topobridge` with faults injected into its own client seam, for chaos runs.

Run instead of `python -m topobridge.cli` (same arguments). `TOPOBRIDGE_FAULTS` holds
`bind_reset=P,bind_lost=P,evict_error=P,seed=N,until=EPOCH`:

* bind_reset   a binding that never leaves (connection reset before the request is sent);
* bind_lost    a binding that lands but whose response is lost;
* evict_error  a pod deletion (preemption or roll-back) answered 503 without being carried out;
* until        wall-clock time after which no fault is injected (the run's quiet ending);
* bind_deadline  the scheduler's bind retry deadline in seconds (no flag sets it), so a run's
               settle window need not cover the 30 s default.

Each injected fault is logged as the event `chaos.fault` with its `kind`, so a run counts
them from the process logs. The product code is untouched: only `Kube.bind` and `Kube.delete`
of this process are wrapped.
"""

from __future__ import annotations

import functools
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import structlog

from controller.errors import ServerError, TransportError
from controller.kube import Kube
from controller.resources import PODS, Resource

log = structlog.get_logger("chaos")


def parse(spec: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in filter(None, spec.split(",")):
        key, _, value = part.partition("=")
        out[key.strip()] = float(value)
    return out


def install(spec: dict[str, float]) -> None:
    rng = random.Random(int(spec.get("seed", 0)) ^ os.getpid())
    until = spec.get("until", float("inf"))
    original_bind, original_delete = Kube.bind, Kube.delete

    def roll(kind: str) -> bool:
        return time.time() < until and rng.random() < spec.get(kind, 0.0)

    async def bind(self: Kube, **kw: Any) -> None:
        if roll("bind_reset"):
            log.warning("chaos.fault", kind="bind_reset", pod=kw.get("pod"))
            raise TransportError("chaos: connection reset before the binding was sent")
        await original_bind(self, **kw)
        if roll("bind_lost"):
            log.warning("chaos.fault", kind="bind_lost", pod=kw.get("pod"))
            raise TransportError("chaos: the binding landed, its response was lost")

    async def delete(self: Kube, res: Resource, name: str, **kw: Any) -> Any:
        if res == PODS and roll("evict_error"):
            log.warning("chaos.fault", kind="evict_error", pod=name)
            raise ServerError("chaos: the API server is unavailable", status=503, reason="ServiceUnavailable")
        return await original_delete(self, res, name, **kw)

    Kube.bind = bind  # type: ignore[method-assign]
    Kube.delete = delete  # type: ignore[method-assign]
    if "bind_deadline" in spec:
        from controller.runtime import scheduler

        scheduler.SchedulerConfig = functools.partial(  # type: ignore[misc]
            scheduler.SchedulerConfig, bind_retry_deadline=spec["bind_deadline"]
        )


if __name__ == "__main__":
    install(parse(os.environ.get("TOPOBRIDGE_FAULTS", "")))
    from topobridge.cli import main

    sys.exit(main())
