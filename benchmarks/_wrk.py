"""Drive one HTTP(S) endpoint with wrk, a C load generator, and read back its figures.

A client written in Python tops out near the request rate of the server it measures, so
the load comes from wrk: fixed connections, fixed duration, one POST body. Its Lua `done()`
hook prints the latency percentiles as one JSON line (microsecond resolution), which is
all this module reads from its output. An optional `delay()` hook paces each connection
with exponential gaps, so the whole run approximates Poisson arrivals at a fixed rate
(an open-loop figure; Debian has no wrk2, whose fixed-rate mode would also correct
coordinated omission, so a stall still delays the arrivals queued behind it here).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

MARKER = "WRK-RESULT "
INSTALL_HINT = "wrk is not installed: on Debian or Ubuntu, `sudo apt-get install -y wrk`"


class WrkMissing(Exception):
    """No wrk binary on PATH (the benchmark installs nothing itself)."""


class WrkFailed(Exception):
    """wrk exited non-zero or printed no result."""


@dataclass(frozen=True, slots=True)
class WrkResult:
    """One wrk run: completed requests, errors, and latency in milliseconds."""

    requests: int
    seconds: float
    p50: float
    p90: float
    p99: float
    p999: float
    max: float
    mean: float
    errors: dict[str, int]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def failed(self) -> int:
        return sum(self.errors.values())


def find_wrk() -> str:
    path = shutil.which("wrk")
    if path is None:
        raise WrkMissing(INSTALL_HINT)
    return path


def _long_bracket(text: str) -> str:
    """`text` as a Lua long string literal, with a level of `=` the text does not close."""
    level = 0
    while f"]{'=' * level}]" in text:
        level += 1
    eq = "=" * level
    # A newline right after the opening bracket is dropped by Lua, so start with one.
    return f"[{eq}[\n{text}]{eq}]"


def script(body: bytes, *, content_type: str = "application/json", rate_per_connection: float = 0.0) -> str:
    """The Lua script: POST `body`; with a rate, exponential gaps of mean 1/rate per connection."""
    lines = [
        'wrk.method = "POST"',
        f"wrk.body = {_long_bracket(body.decode())}",
        f'wrk.headers["Content-Type"] = "{content_type}"',
    ]
    if rate_per_connection > 0:
        mean_ms = 1000.0 / rate_per_connection
        lines += [
            "function init(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)) end",
            f"function delay() return math.floor(-math.log(1 - math.random()) * {mean_ms!r}) end",
        ]
    lines += [
        "function done(summary, latency, requests)",
        "  local e = summary.errors",
        f'  io.write("{MARKER}", string.format(',
        '    \'{"requests":%d,"duration_us":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d,"mean":%.1f,\''
        ' .. \'"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\\n\',',
        "    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),",
        "    latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean,",
        "    e.connect, e.read, e.write, e.status, e.timeout))",
        "end",
    ]
    return "\n".join(lines) + "\n"


def parse(output: str) -> WrkResult:
    for line in output.splitlines():
        if line.startswith(MARKER):
            raw = json.loads(line[len(MARKER) :])
            ms = 1e-3
            return WrkResult(
                requests=int(raw["requests"]),
                seconds=raw["duration_us"] / 1e6,
                p50=raw["p50"] * ms,
                p90=raw["p90"] * ms,
                p99=raw["p99"] * ms,
                p999=raw["p999"] * ms,
                max=raw["max"] * ms,
                mean=raw["mean"] * ms,
                errors={k: int(v) for k, v in raw["errors"].items()},
            )
    raise WrkFailed(f"wrk printed no result line:\n{output[-2000:]}")


@dataclass(frozen=True)
class Load:
    """What one wrk run sends: `connections` open throughout, for about `seconds`."""

    connections: int
    seconds: float
    threads: int = 1
    rate: float = 0.0
    """> 0: the whole run paced at about that many requests per second."""
    timeout: float = 5.0


def run(wrk: str, url: str, body: bytes, load: Load, *, cpus: str | None = None) -> WrkResult:
    """One bounded run of wrk against `url` (keep-alive); `cpus` pins wrk with taskset (e.g. "0")."""
    threads = max(1, min(load.threads, load.connections))
    per_connection = load.rate / load.connections if load.rate else 0.0
    with tempfile.TemporaryDirectory(prefix="topobridge-wrk-") as tmp:
        lua = Path(tmp) / "post.lua"
        lua.write_text(script(body, rate_per_connection=per_connection))
        cmd = [
            wrk,
            "--latency",
            f"--threads={threads}",
            f"--connections={load.connections}",
            f"--duration={max(1, round(load.seconds))}s",
            f"--timeout={max(1, round(load.timeout))}s",
            f"--script={lua}",
            url,
        ]
        if cpus is not None:
            cmd = ["taskset", "-c", cpus, *cmd]
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=load.seconds + load.timeout + 30
            )
        except subprocess.TimeoutExpired as exc:
            raise WrkFailed(f"wrk did not finish: {' '.join(cmd)}") from exc
    if done.returncode != 0:
        raise WrkFailed(f"wrk exited {done.returncode}: {done.stderr.strip() or done.stdout.strip()}")
    return parse(done.stdout)
