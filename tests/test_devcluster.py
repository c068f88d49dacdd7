"""The local control plane's parts (credentials, binaries, process identity) and `dev-cluster up/down`."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import secrets
import signal
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from topobridge import devcluster
from topobridge.devcluster import (
    INSTALL_COMMAND,
    BinariesMissingError,
    ControlPlaneState,
    Credentials,
    ManagedProcess,
    default_bin_dir,
    locate_binaries,
    make_credentials,
)

# --- units ---------------------------------------------------------------------------------------


def test_missing_binaries_name_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BinariesMissingError) as caught:
        locate_binaries(tmp_path / "bin")
    message = str(caught.value)
    assert INSTALL_COMMAND in message
    assert INSTALL_COMMAND == "bash hack/install-control-plane.sh"
    assert set(caught.value.missing) == {"etcd", "kube-apiserver", "kube-controller-manager"}


def test_control_plane_errors_are_io_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A control plane that cannot start is an I/O failure: caught as `ControllerError` (and
    `ControlPlaneError`), never as a bad user object (`TopobridgeError`)."""
    from controller.errors import ControllerError
    from topobridge.devcluster import ControlPlaneError
    from translations.errors import TopobridgeError

    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ControllerError) as caught:
        try:
            locate_binaries(tmp_path / "bin")
        except TopobridgeError:
            pytest.fail("a missing binary was caught as a bad user object")
    assert isinstance(caught.value, ControlPlaneError)


def test_scheduler_is_asked_for_explicitly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BinariesMissingError, match="--with-scheduler") as caught:
        locate_binaries(tmp_path, with_scheduler=True)
    assert "kube-scheduler" in caught.value.missing


def test_binaries_are_found_in_the_bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    for name in ("etcd", "kube-apiserver", "kube-controller-manager"):
        exe = tmp_path / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    found = locate_binaries(tmp_path)
    assert found.kube_apiserver == tmp_path / "kube-apiserver"
    assert found.kube_scheduler is None


def test_bin_dir_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOPOBRIDGE_BIN_DIR", str(tmp_path))
    assert default_bin_dir() == tmp_path


def test_credentials_serve_loopback_and_keep_secrets_private(tmp_path: Path) -> None:
    creds = make_credentials(tmp_path)
    ca = x509.load_pem_x509_certificate(creds.ca_file.read_bytes())
    cert = x509.load_pem_x509_certificate(creds.cert_file.read_bytes())
    assert cert.issuer == ca.subject
    ca_key = ca.public_key()
    assert isinstance(ca_key, ec.EllipticCurvePublicKey)
    ca_key.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))  # type: ignore[arg-type]
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "127.0.0.1" in {str(ip) for ip in sans.get_values_for_type(x509.IPAddress)}
    assert "kubernetes.default.svc" in sans.get_values_for_type(x509.DNSName)
    token_line = creds.token_file.read_text().strip()
    assert token_line == f'{creds.token},admin,admin-uid,"system:masters"'
    for secret in (creds.key_file, creds.sa_private_file, creds.token_file):
        assert secret.stat().st_mode & 0o777 == 0o600, secret
    assert b"PUBLIC KEY" in creds.sa_public_file.read_bytes()


def test_credentials_differ_per_run(tmp_path: Path) -> None:
    assert make_credentials(tmp_path / "a").token != make_credentials(tmp_path / "b").token


def test_state_round_trips_through_json() -> None:
    state = ControlPlaneState(
        server="https://127.0.0.1:6443",
        token="t",
        ca_file="/x/ca.crt",
        kubeconfig="/x/kubeconfig",
        work_dir="/x",
        owned_dirs=("/x", "/dev/shm/e"),
        processes=({"name": "etcd", "pid": 1, "start_ticks": 2, "log_file": "/x/etcd.log"},),
        started_at=1.0,
        startup_seconds=4.2,
    )
    assert ControlPlaneState.from_json(state.to_json()) == state


def test_a_recycled_pid_is_never_signalled() -> None:
    # Our own PID with a start time that is not ours: a different process now owns the number.
    impostor = ManagedProcess("etcd", os.getpid(), start_ticks=1, log_file="/dev/null")
    assert not impostor.alive()
    impostor.signal(signal.SIGTERM)  # must not reach this test process


def test_a_process_is_stopped_by_pid_without_a_popen_handle() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        from topobridge.devcluster import _start_ticks

        proc = ManagedProcess("sleeper", child.pid, _start_ticks(child.pid), "/dev/null")
        assert proc.alive()
        proc.signal(signal.SIGTERM)
        child.wait(timeout=10)
        assert not proc.alive()
    finally:
        child.kill()
        child.wait()


class MisbehavingServer:
    """A loopback server that treats every connection as a starting kube-apiserver may:
    `reset` aborts it at once, `silent` completes the TLS handshake and never answers."""

    def __init__(self, behaviour: str, creds: Credentials) -> None:
        self.behaviour = behaviour
        self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.tls.load_cert_chain(str(creds.cert_file), str(creds.key_file))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> MisbehavingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.shutdown(socket.SHUT_RDWR)  # wakes accept(), which fails: the thread ends
        self.listener.close()
        self.thread.join(30)
        for conn in self.held:
            conn.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if self.behaviour == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()
                continue
            self.held.append(conn)
            with contextlib.suppress(OSError):
                self.held[-1] = self.tls.wrap_socket(conn, server_side=True)


@pytest.mark.parametrize(
    ("behaviour", "answer"), [("reset", "ConnectionResetError"), ("silent", "timed out")]
)
def test_readyz_probe_closes_its_socket_whatever_the_server_does(
    behaviour: str, answer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe that fails leaves no socket behind for the garbage collector to find later,
    where it would be a ResourceWarning in some unrelated test."""
    monkeypatch.setattr(devcluster, "READYZ_TIMEOUT", 0.5)
    creds = make_credentials(tmp_path)
    with MisbehavingServer(behaviour, creds) as server, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        outcomes = [
            devcluster._probe_readyz(f"https://127.0.0.1:{server.port}", creds.token, str(creds.ca_file))
            for _ in range(3)
        ]
        gc.collect()
    assert all(not ok and answer in last for ok, last in outcomes), outcomes
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


# --- dev-cluster up / down against the real binaries ---------------------------------------------


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "topobridge.cli", "--log-format", "json", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def _gone(pid: int) -> bool:
    """True when no running process has this PID (a zombie awaiting its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def _processes_mentioning(text: str) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and not _gone(int(entry.name)):
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmdline:
                out.append(int(entry.name))
    return out


@pytest.mark.integration
def test_dev_cluster_up_then_down_leaves_nothing_behind(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TOPOBRIDGE_CACHE": str(tmp_path / "cache"),
        "TOPOBRIDGE_BIN_DIR": str(default_bin_dir()),
    }
    state_file = tmp_path / "cache" / "dev-cluster" / "state.json"
    up = _cli("dev-cluster", "up", env=env)
    try:
        assert up.returncode == 0, up.stderr
        kubeconfig = up.stdout.strip()
        assert Path(kubeconfig).is_file()
        state = ControlPlaneState.from_json(state_file.read_text())
        pids = [p["pid"] for p in state.processes]
        assert [p["name"] for p in state.processes] == ["etcd", "kube-apiserver", "kube-controller-manager"]

        # The processes outlived the command that started them.
        assert not any(_gone(pid) for pid in pids)
        kubectl = default_bin_dir() / "kubectl"
        crds = subprocess.run(
            [str(kubectl), "--kubeconfig", kubeconfig, "get", "crds", "-o", "name"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert crds.returncode == 0, crds.stderr
        for name in (
            "leaderworkersets.leaderworkerset.x-k8s.io",
            "podgroups.scheduling.volcano.sh",
            "hypernodes.topology.volcano.sh",
            "clusternetworktopologies.scheduling.koordinator.sh",
            "podgroups.scheduling.sigs.k8s.io",
            "podgroups.scheduling.x-k8s.io",
        ):
            assert f"customresourcedefinition.apiextensions.k8s.io/{name}" in crds.stdout

        status = _cli("dev-cluster", "status", env=env)
        assert status.returncode == 0 and "running" in status.stdout, status.stdout

        again = _cli("dev-cluster", "up", env=env)
        assert again.returncode == 0 and again.stdout.strip() == kubeconfig
        assert [p["pid"] for p in ControlPlaneState.from_json(state_file.read_text()).processes] == pids
    finally:
        down = _cli("dev-cluster", "down", env=env)
    assert down.returncode == 0, down.stderr

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(_gone(pid) for pid in pids):
        time.sleep(0.1)
    assert [pid for pid in pids if not _gone(pid)] == []
    assert _processes_mentioning(state.work_dir) == []
    assert not state_file.exists()
    for directory in state.owned_dirs:
        assert not Path(directory).exists(), directory
    after = _cli("dev-cluster", "status", env=env)
    assert after.returncode == 3 and "not running" in after.stdout


# --- the session control plane behaves like a cluster where tests need it -------------------------


async def test_priority_class_resolves_and_pods_need_no_service_account(kube: Any, namespace: str) -> None:
    from kubernetes_asyncio.client import CoreV1Api, SchedulingV1Api

    name = f"tb-high-{secrets.token_hex(3)}"
    await SchedulingV1Api(kube).create_priority_class({"metadata": {"name": name}, "value": 1000})
    try:
        pod = await CoreV1Api(kube).create_namespaced_pod(
            namespace,
            {
                "metadata": {"name": "p"},
                "spec": {"priorityClassName": name, "containers": [{"name": "c", "image": "i"}]},
            },
        )
        assert pod.spec.priority == 1000  # Priority admission is on
        assert not pod.spec.volumes  # ServiceAccount admission is off: no token volume injected
    finally:
        await SchedulingV1Api(kube).delete_priority_class(name)


async def test_garbage_collector_runs(kube: Any, namespace: str) -> None:
    from kubernetes_asyncio.client import CoreV1Api
    from kubernetes_asyncio.client.exceptions import ApiException

    core = CoreV1Api(kube)
    owner = await core.create_namespaced_config_map(namespace, {"metadata": {"name": "owner"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
    await core.create_namespaced_config_map(
        namespace, {"metadata": {"name": "dependent", "ownerReferences": [ref]}}
    )
    await core.delete_namespaced_config_map("owner", namespace, propagation_policy="Background")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            await core.read_namespaced_config_map("dependent", namespace)
        except ApiException as exc:
            assert exc.status == 404
            return
        await asyncio.sleep(0.2)
    pytest.fail("kube-controller-manager's garbage collector did not delete the dependent within 60s")


def _work_dir(root: Path, name: str, owners: list[dict[str, Any]]) -> tuple[Path, Path]:
    work = root / f"topobridge-cp-{name}"
    etcd = root / f"topobridge-etcd-{name}"
    work.mkdir()
    etcd.mkdir()
    record = {"owners": owners, "dirs": [str(work), str(etcd)]}
    (work / "owner.json").write_text(json.dumps(record))
    return work, etcd


def test_sweep_removes_only_dirs_whose_owners_are_all_gone(tmp_path: Path) -> None:
    from topobridge.devcluster import _start_ticks, sweep_stale_dirs

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = _work_dir(tmp_path, "orphan", [{"pid": dead.pid, "start_ticks": 1}])
    mine = _work_dir(tmp_path, "live", [{"pid": os.getpid(), "start_ticks": _start_ticks(os.getpid())}])
    unrecorded = tmp_path / "topobridge-cp-unrecorded"
    unrecorded.mkdir()

    assert sweep_stale_dirs(tmp_path) == [orphan[0]]
    assert not orphan[0].exists() and not orphan[1].exists()
    assert mine[0].exists() and mine[1].exists()
    assert unrecorded.exists()
