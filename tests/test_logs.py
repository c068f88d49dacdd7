"""Under `--log-format json` every line the process writes is one JSON object: structlog's
events and the standard `logging` records of libraries alike."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import signal
import sys
from typing import Any

import pytest
import structlog
from run_process import start_run

from topobridge import logs


@pytest.fixture
def restore_logging() -> Any:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()


def test_library_records_and_structlog_events_share_one_json_pipeline(
    monkeypatch: pytest.MonkeyPatch, restore_logging: None
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    logs.configure(level="info", json_output=True)
    structlog.get_logger("topobridge.test").info("pod.bound", pod="ns/p", node="n1")
    logging.getLogger("some.library").warning("retrying %s in %d s", "GET /api", 2)
    try:
        raise ValueError("bad")
    except ValueError:
        logging.getLogger("some.library").exception("failed")
    logging.getLogger("some.library").debug("below the level: not written")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(d["event"], d["level"], d.get("logger")) for d in lines] == [
        ("pod.bound", "info", None),
        ("retrying GET /api in 2 s", "warning", "some.library"),
        ("failed", "error", "some.library"),
    ]
    assert lines[0]["pod"] == "ns/p" and all("timestamp" in d for d in lines)
    assert "ValueError: bad" in lines[2]["exception"]
    logs.configure(level="info", json_output=True)  # configured twice: still one line per event
    logging.getLogger("x").warning("once")
    assert stream.getvalue().count('"once"') == 1


@pytest.mark.integration
async def test_every_line_of_a_run_is_json(control_plane: Any, namespace: str) -> None:
    """`topobridge run` against the real API server for a few seconds, at debug level so
    libraries (the Kubernetes client) speak too: every line parses."""
    proc = await start_run(
        "--log-level",
        "debug",
        "--lease-namespace",
        namespace,
        kubeconfig=control_plane.kubeconfig,
        json_logs=True,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(60):
            while not any('"leader.acquired"' in line for line in lines):
                raw = await proc.stderr.readline()
                assert raw, "the process ended early:\n" + "\n".join(lines[-20:])
                lines.append(raw.decode())
        proc.send_signal(signal.SIGTERM)
        _, rest = await asyncio.wait_for(proc.communicate(), 60)
        lines += rest.decode().splitlines()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    lines = [line.rstrip("\n") for line in lines if line.strip()]
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            pytest.fail(f"not a JSON line: {line!r}")
    assert all(isinstance(d, dict) and "event" in d and "level" in d for d in parsed)
    libraries = {d["logger"] for d in parsed if "logger" in d}
    # uvloop, the default loop, says nothing at debug where asyncio names its selector; the
    # Kubernetes client reads its kubeconfig at debug either way.
    assert "kubernetes_asyncio.config.kube_config" in libraries, (
        f"library lines went through the pipeline too: {sorted(libraries)}"
    )
    assert proc.returncode == 0
