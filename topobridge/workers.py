"""Extra webhook processes on the same port: `topobridge run --webhook-workers N` serves
admissions from N processes, this one and N-1 workers it supervises.

One Python process answers admissions on one core. Every worker listens on the webhook
port with SO_REUSEPORT, so the kernel spreads new connections across the processes and
the webhook's capacity grows with the cores it is given. Each worker runs the webhook only
(`topobridge run --no-controller`, no metrics listener) with its own watches for the
cluster state the rules read; only this process runs the controller and serves /metrics,
so the webhook metrics there count the answers this process gave.

The pool restarts a worker that exits (with a growing delay, the one `Backoff` rule of
`controller.placer.backoff`, counted afresh once a worker has run for a minute), stops them
all with SIGTERM when cancelled (SIGKILL after `grace`), and asks the kernel to SIGTERM them
should this process die first.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog

from controller.placer.backoff import Backoff
from topobridge.devcluster import die_with_parent_hook

log = structlog.get_logger("topobridge.workers")

STEADY = 60.0
"""Seconds a worker must run before its restart delay goes back to the first step."""


@dataclass
class WorkerPool:
    """Keep `count` copies of `argv` running until cancelled."""

    argv: Sequence[str]
    count: int
    grace: float = 10.0
    """Seconds workers get to finish after SIGTERM before SIGKILL."""
    restart_delay: float = 0.5
    max_restart_delay: float = 30.0
    restarts: int = 0
    _live: dict[int, asyncio.subprocess.Process] = field(default_factory=dict, init=False)

    @property
    def pids(self) -> dict[int, int]:
        """worker index -> pid of its live process."""
        return {i: p.pid for i, p in self._live.items()}

    async def run(self) -> None:
        try:
            await asyncio.gather(*(self._keep(i) for i in range(self.count)))
        finally:
            await asyncio.shield(self._stop_all())

    async def _keep(self, index: int) -> None:
        backoff = Backoff(self.restart_delay, self.max_restart_delay)
        failures = 0
        while True:
            started = time.monotonic()
            proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.DEVNULL, preexec_fn=die_with_parent_hook()
            )
            self._live[index] = proc
            log.info("webhook.worker_started", worker=index, pid=proc.pid)
            code = await proc.wait()
            del self._live[index]
            # A worker that ran steadily starts its count of quick exits afresh.
            failures = 1 if time.monotonic() - started >= STEADY else failures + 1
            delay = backoff.delay(failures)
            log.warning("webhook.worker_exited", worker=index, pid=proc.pid, code=code, restart_in=delay)
            self.restarts += 1
            await asyncio.sleep(delay)

    async def _stop_all(self) -> None:
        procs = list(self._live.values())
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        if not procs:
            return
        waits = [asyncio.ensure_future(p.wait()) for p in procs]
        await asyncio.wait(waits, timeout=self.grace)
        for proc in procs:
            if proc.returncode is None:
                log.warning("webhook.worker_killed", pid=proc.pid)
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        await asyncio.wait(waits, timeout=5)
        self._live.clear()
