"""`topobridge run --webhook-workers 2` as real processes: a worker shares the webhook port
(it answers while the first process is frozen), and the workers end with the process,
whether it stops cleanly or is killed. No cluster: the webhook serves with empty state."""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from run_process import Ports, start_run

HANG = 30.0


def healthz(port: int, *, timeout: float = 5.0) -> int:
    """Status of GET /healthz on a fresh connection (0 when nothing answers in time)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/healthz", timeout=timeout, context=ctx) as r:
            return int(r.status)
    except (urllib.error.URLError, OSError):
        return 0


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def until(check: object, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + HANG
    while not await asyncio.to_thread(check):  # type: ignore[arg-type]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.1)


@pytest.fixture
async def served() -> AsyncIterator[tuple[asyncio.subprocess.Process, int]]:
    ports = Ports()
    port = ports.webhook
    proc = await start_run(
        "--no-controller", "--webhook-workers", "2", kubeconfig="/nonexistent", ports=ports, json_logs=True
    )
    try:
        await until(
            lambda: healthz(port) == 200 and len(children(proc.pid)) == 1, "the process and its worker"
        )
        yield proc, port
    finally:
        if proc.returncode is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            await proc.wait()


async def test_a_worker_answers_on_the_same_port(served: tuple[asyncio.subprocess.Process, int]) -> None:
    proc, port = served
    os.kill(proc.pid, signal.SIGSTOP)  # only the worker can answer now
    # The kernel spreads new connections over the two listeners by hash; one sent to the frozen
    # process waits out its timeout. Fresh connections until one reaches the worker: 24 all
    # landing on the frozen one is a 1 in 16 million chance, and 5 s per try is far above what
    # the worker needs on a loaded machine.
    answers: list[int] = []
    try:
        while 200 not in answers and len(answers) < 24:
            answers.append(await asyncio.to_thread(healthz, port, timeout=5.0))
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    assert 200 in answers, f"no connection reached the worker: {answers}"


async def test_workers_stop_with_a_clean_exit(served: tuple[asyncio.subprocess.Process, int]) -> None:
    proc, _ = served
    (worker,) = children(proc.pid)
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(proc.wait(), HANG) == 0
    await until(lambda: not alive(worker), "the worker to exit")


async def test_workers_die_with_a_killed_process(served: tuple[asyncio.subprocess.Process, int]) -> None:
    proc, _ = served
    (worker,) = children(proc.pid)
    proc.kill()
    await proc.wait()
    await until(lambda: not alive(worker), "the orphaned worker to exit")
