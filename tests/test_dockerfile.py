"""The container image, checked without a container engine (none runs here).

Static checks read the Dockerfile with dockerfile-parse: two stages on a slim Python base, the
runtime stage runs nothing as root and ends as a numeric non-root USER, bytecode compiled at
build time, HOME and TMPDIR in /tmp, and every COPY source exists and survives .dockerignore.

The read-only-root claim is then exercised for real: `topobridge run` (the webhook server and
its metrics) starts and answers with the whole root filesystem mounted read-only and only a
tmpfs as $TMPDIR and $HOME (the image's /tmp), in a private mount namespace (unshare, as root). Building and running the image
itself is left to the kind suite (e2e/run-kind.sh), which needs Docker.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dockerfile_parse import DockerfileParser
from run_process import free_port

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"
PACKAGES = ("topobridge", "translations", "webhooks", "controller")


def stages() -> list[list[dict[str, Any]]]:
    """Instructions grouped by stage (a new stage at each FROM)."""
    out: list[list[dict[str, Any]]] = []
    for ins in DockerfileParser(path=str(DOCKERFILE)).structure:
        if ins["instruction"] == "FROM":
            out.append([])
        if out:
            out[-1].append(ins)
    return out


def runtime_env() -> dict[str, str]:
    """ENV of the final stage, as the image will have it."""
    envs: dict[str, str] = DockerfileParser(path=str(DOCKERFILE)).envs
    return envs


def test_two_stages_on_a_slim_python_base() -> None:
    structure = DockerfileParser(path=str(DOCKERFILE)).structure
    st = stages()
    assert len(st) == 2
    assert st[0][0]["value"].endswith(" AS build")
    args = dict(i["value"].split("=", 1) for i in structure if i["instruction"] == "ARG")
    base = args["PYTHON_IMAGE"]
    assert base.startswith("python:3.11") and "slim" in base
    assert st[1][0]["value"] == "${PYTHON_IMAGE}"  # the same interpreter the venv was built with
    assert all(i["value"].startswith("--from=build ") for i in st[1] if i["instruction"] == "COPY")


def test_runtime_stage_is_non_root_and_writes_nothing() -> None:
    runtime = stages()[1]
    assert [i for i in runtime if i["instruction"] == "RUN"] == [], "the runtime stage must not run commands"
    users = [i["value"] for i in runtime if i["instruction"] == "USER"]
    assert users, "no USER in the runtime stage: it would run as root"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0 and gid.isdigit() and int(gid) != 0, users[-1]
    env = runtime_env()
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["HOME"] == "/tmp" and env["TMPDIR"] == "/tmp"
    entry = json.loads(next(i["value"] for i in runtime if i["instruction"] == "ENTRYPOINT"))
    assert entry == ["topobridge"]


def test_bytecode_is_compiled_at_build_time() -> None:
    build_runs = " ".join(i["value"] for i in stages()[0] if i["instruction"] == "RUN")
    assert "compileall" in build_runs and "pip install ." in build_runs


def ignored(path: str, patterns: list[str]) -> bool:
    """.dockerignore semantics (last matching pattern wins, `!` re-includes)."""
    result = False
    for pat in patterns:
        negate = pat.startswith("!")
        pat = pat.removeprefix("!").rstrip("/")
        parts = path.split("/")
        if any(fnmatch.fnmatch("/".join(parts[: i + 1]), pat) for i in range(len(parts))):
            result = not negate
    return result


def test_copied_sources_exist_and_are_not_ignored() -> None:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    copies = [i["value"].split() for i in stages()[0] if i["instruction"] == "COPY"]
    sources = [src for args in copies for src in args[:-1]]
    assert set(PACKAGES) <= set(sources), "every package of the distribution must be copied"
    for src in sources:
        assert (ROOT / src).exists(), src
        assert not ignored(src, patterns), f"{src} is excluded by .dockerignore"
        if (ROOT / src).is_dir():
            module = next((ROOT / src).glob("*.py")).relative_to(ROOT).as_posix()
            assert not ignored(module, patterns), module
    assert ignored("tests/conftest.py", patterns) and ignored(".venv/bin/python", patterns)


# --- the read-only root, exercised ------------------------------------------------------------------


@contextlib.contextmanager
def read_only_root(argv: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """Run `argv` with / mounted read-only and a tmpfs as its only writable place: the
    directory in $TMPDIR (a fresh mount point; /tmp itself may hold this checkout)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.fail(
            "this check mounts the root read-only in a private mount namespace: it needs root and "
            "unshare (util-linux)",
            pytrace=False,
        )
    writable = tempfile.mkdtemp(prefix="topobridge-ro-tmp-")
    env = {**env, "TMPDIR": writable, "HOME": writable}
    script = (
        'mount --bind / / && mount -o remount,bind,ro / && mount -t tmpfs -o size=64m,mode=1777 tmpfs "$TMPDIR"'
        ' && cd "$TMPDIR" && exec "$@"'
    )
    proc = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        shutil.rmtree(writable, ignore_errors=True)


def wait_http(
    url: str,
    *,
    context: ssl.SSLContext | None = None,
    timeout: float = 30.0,
    proc: subprocess.Popen[bytes] | None = None,
) -> str:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            raise AssertionError(f"topobridge exited with {proc.returncode}:\n{out[-3000:]}")
        try:
            with urllib.request.urlopen(url, context=context, timeout=2) as resp:
                body: str = resp.read().decode()
                return body
        except OSError as exc:
            last = exc
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {timeout}s: {last}")


def test_run_serves_with_a_read_only_root() -> None:
    webhook_port, metrics_port = free_port(), free_port()
    topobridge = str(Path(sys.executable).with_name("topobridge"))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    argv = [
        topobridge,
        "--log-format=json",
        "run",
        "--no-controller",
        "--webhook-host=127.0.0.1",
        f"--webhook-port={webhook_port}",
        "--metrics-host=127.0.0.1",
        f"--metrics-port={metrics_port}",
    ]
    with read_only_root(argv, env) as proc:
        assert wait_http(f"http://127.0.0.1:{metrics_port}/healthz", proc=proc).startswith("ok")
        insecure = ssl.create_default_context()
        insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE  # a certificate made at start-up
        assert wait_http(f"https://127.0.0.1:{webhook_port}/readyz", context=insecure, proc=proc).startswith(
            "ok"
        )
        review = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u1",
                "operation": "CREATE",
                "kind": {"group": "scheduling.volcano.sh", "version": "v1beta1", "kind": "PodGroup"},
                "resource": {"group": "scheduling.volcano.sh", "version": "v1beta1", "resource": "podgroups"},
                "namespace": "default",
                "name": "pg",
                "object": {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": "pg", "namespace": "default"},
                    "spec": {"minMember": 2, "networkTopology": {"mode": "hrad", "highestTierAllowed": 1}},
                },
            },
        }
        req = urllib.request.Request(
            f"https://127.0.0.1:{webhook_port}/validate/volcano-podgroups",
            data=json.dumps(review).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, context=insecure, timeout=5) as resp:
            answer = json.loads(resp.read())["response"]
        assert answer["allowed"] is False
        assert 'spec.networkTopology.mode: Unsupported value: "hrad"' in answer["status"]["message"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        log = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    assert "Read-only file system" not in log, log[-3000:]
