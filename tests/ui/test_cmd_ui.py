"""`topobridge ui` on the command line: flags checked before anything is read, a bad file named,
loopback by default (a warning for anything else), the page served from a scenario file, a
clean stop on SIGTERM, and the completion scripts knowing the subcommand."""

from __future__ import annotations

import contextlib
import io
import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from ui_objects import DEMO, job

from topobridge import cli, cmd_completion, cmd_ui

ROOT = Path(__file__).resolve().parents[2]
GANG = "koordinator:default/high-priority-training"


@pytest.mark.parametrize(
    ("host", "port", "simulate", "source", "says"),
    [
        pytest.param(None, 8401, False, None, "", id="defaults"),
        pytest.param("0.0.0.0", 0, False, "x.yaml", "", id="explicit-host-any-port"),
        pytest.param(None, 8401, True, None, "--simulate: needs -f FILE", id="simulate-without-a-file"),
        pytest.param(None, 70000, False, None, "--port: Invalid value: 70000", id="port-out-of-range"),
        pytest.param(" ", 8401, False, None, '--host: Invalid value: ""', id="blank-host"),
    ],
)
def test_flags(host: str | None, port: int, simulate: bool, source: str | None, says: str) -> None:
    got = cmd_ui.check_address(host, port, simulate=simulate, source=source)
    assert got.startswith(says) and (got == "") is (says == "")


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        pytest.param(
            {"source": "/no/such/file.yaml"},
            "error: /no/such/file.yaml: no such file or directory",
            id="missing-file",
        ),
        pytest.param({"simulate": True}, "error: --simulate: needs -f FILE", id="simulate-alone"),
        pytest.param({"listen": cmd_ui.Listen(port=-1)}, "error: --port: Invalid value: -1", id="bad-port"),
        pytest.param(
            {"kubeconfig": "/no/such/kubeconfig", "listen": cmd_ui.Listen(port=0)},
            "error: reading the cluster failed: cannot load the kubeconfig /no/such/kubeconfig",
            id="no-kubeconfig",
        ),
    ],
)
def test_bad_invocations_exit_2_naming_the_problem(kwargs: dict[str, object], says: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert cmd_ui.run(out=out, err=err, **kwargs) == cmd_ui.EXIT_UNREADABLE  # type: ignore[arg-type]
    assert says in err.getvalue() and out.getvalue() == ""


def test_help_says_loopback_and_what_host_exposes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["ui", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default: 127.0.0.1" in text
    assert "an address other than loopback is used only when given here" in text
    assert "read-only" in text


def test_completion_knows_the_subcommand_and_its_flags() -> None:
    bash = cmd_completion.script("bash")
    assert "ui" in cli.SUBCOMMANDS and "--simulate" in bash and "--open" in bash


@pytest.mark.parametrize(
    ("args", "placed", "warning"),
    [
        pytest.param([], 0, "", id="a-scenario"),
        pytest.param(["--simulate"], 1, "", id="after-simulate"),
        pytest.param(["--host", "0.0.0.0"], 0, "not a loopback address", id="every-address-warned"),
    ],
)
def test_the_command_serves_a_file_and_stops_on_sigterm(args: list[str], placed: int, warning: str) -> None:
    argv = [sys.executable, "-m", "topobridge.cli", "--log-level", "warning", "ui", "--port", "0"]
    argv += ["--from", str(DEMO / "example-2.yaml"), *args]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"serving (http://\S+) \(read-only", line)
        assert found, line
        port = found.group(1).rsplit(":", 1)[1].rstrip("/")
        url = f"http://127.0.0.1:{port}/api/view"
        view = _poll(url)
        assert view["counts"]["nodes"] == 12 and view["counts"]["placed"] == placed
        assert view["live"] is False
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert warning in err


def _poll(url: str) -> dict[str, object]:
    for _ in range(200):
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                data: dict[str, object] = json.load(resp)
                return data
        except urllib.error.HTTPError as exc:  # 503 until the first model is built
            assert exc.code == 503
        time.sleep(0.1)
    raise AssertionError(f"{url}: no model after 20 s")


@pytest.mark.parametrize(
    ("state", "ask"),
    [
        pytest.param("first-build", "", id="building-the-first-model"),
        pytest.param("what-if", "/api/whatif", id="running-a-what-if"),
        pytest.param("explain", f"/api/explain?gang={GANG}", id="explaining-a-gang"),
    ],
)
def test_sigterm_stops_the_ui_whatever_its_worker_is_doing(state: str, ask: str) -> None:
    """Before, a what-if (or an explanation, or the first model) still running on the model's
    worker thread kept the process alive after SIGTERM: `serve` waited for the first model
    before it looked at the stop, and the interpreter joins a ThreadPoolExecutor's threads at
    exit. The held call never returns here, so the process ends only if nothing waits for it.
    And it ends without the interpreter's finalization: that stops the daemon worker wherever it
    next takes the interpreter back, and inside numpy's C++ code the unwinding aborted the
    process (exit -6, "terminate called without an active exception": the live fuzzer, seed
    1183822037, a ui stopped while it built its first model)."""
    argv = [sys.executable, str(Path(__file__).with_name("held_ui.py")), state, str(DEMO / "example-2.yaml")]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        found = re.search(r"serving (http://\S+) \(read-only", proc.stdout.readline())
        assert found
        if ask:
            _poll(found.group(1) + "api/view")
            data = (job(2, "4") if ask == "/api/whatif" else "").encode()
            request = urllib.request.Request(found.group(1) + ask.lstrip("/"), data=data or None)
            threading.Thread(target=_ignore_errors, args=(request,), daemon=True).start()
        assert proc.stderr.readline().strip() == "held"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == 0, err
    assert "finalized" not in err


def _ignore_errors(request: urllib.request.Request) -> None:
    with contextlib.suppress(OSError):
        urllib.request.urlopen(request, timeout=120).close()
