"""A real local Kubernetes control plane (etcd + kube-apiserver [+ controller-manager, scheduler]).

It backs the integration tests and `topobridge dev-cluster`. Nothing is faked: the binaries
are the v1.20.2 ones `hack/install-control-plane.sh` builds, etcd is Debian's.

Start-up, in named phases:

1. locate   find the binaries, or fail with the install command;
2. certs    a throw-away CA, a serving certificate for 127.0.0.1, a service-account key pair
            and a static token file whose admin token is in `system:masters`;
3. etcd     on a free loopback port, its data on tmpfs when there is one;
4. apiserver TLS, token auth, Node+RBAC, endpoint reconciler off, ServiceAccount admission
            off (test pods carry no tokens), Priority admission on (priorityClassName resolves);
5. ready    poll /readyz, then until the namespaces `default` and `kube-system` exist (the
            API server's bootstrap controller creates them after /readyz may already answer);
6. kubeconfig  written for the admin token;
7. controllers optional kube-controller-manager (garbage collector, namespace deletion,
            disruption budgets...) and kube-scheduler, both through that kubeconfig;
8. crds     install crds/*.yaml and wait until each is Established and its resource answers
            a list at its storage version (what the next step's create needs).

PriorityClasses are the one thing readiness cannot cover for a caller: the Priority admission
plugin resolves `priorityClassName` from an informer's cache, so a pod created right after its
class may be refused (403 "no PriorityClass with name X was found"); `e2e.cluster.until_admitted`
retries exactly that refusal.

`stop()` sends SIGTERM by PID (then SIGKILL), reaps, and removes the directories it made.
Processes can run detached (they outlive the CLI); `ControlPlaneState` records what
`dev-cluster down` needs to stop them later, with each process's start time so a recycled
PID is never signalled.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import http.client
import ipaddress
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import structlog
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from controller.errors import ControllerError
from webhooks.tls import generate_self_signed

log = structlog.get_logger(__name__)
T = TypeVar("T")

K8S_VERSION = "v1.20.2"
INSTALL_COMMAND = "bash hack/install-control-plane.sh"
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CRDS_DIR = REPO_ROOT / "crds"
SERVICE_CIDR = "10.0.0.0/24"
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
READYZ_TIMEOUT = 5.0
"""Seconds one /readyz probe may take; a slow answer is retried until the ready timeout."""

# Controllers that would fight fake (kubelet-less) Nodes or need a cloud: nodelifecycle
# taints and evicts from NotReady nodes, podgc deletes pods bound to missing nodes.
DISABLED_CONTROLLERS = (
    "nodelifecycle",
    "podgc",
    "nodeipam",
    "attachdetach",
    "horizontalpodautoscaling",
    "ttl",
    "csrsigning",
    "csrapproving",
    "csrcleaner",
    "persistentvolume-binder",
    "persistentvolume-expander",
    "cloud-node-lifecycle",
    "route",
    "service",
)


def cache_root() -> Path:
    return Path(os.environ.get("TOPOBRIDGE_CACHE", Path.home() / ".cache" / "topobridge"))


def default_bin_dir() -> Path:
    """Where hack/install-control-plane.sh puts the binaries ($TOPOBRIDGE_BIN_DIR overrides)."""
    override = os.environ.get("TOPOBRIDGE_BIN_DIR")
    return Path(override) if override else cache_root() / f"k8s-{K8S_VERSION}" / "bin"


class ControlPlaneError(ControllerError):
    """The local control plane could not be started or stopped: an I/O failure (a process,
    a port, the API server), never a bad user object, so it sits under `ControllerError`."""


class BinariesMissingError(ControlPlaneError):
    """kube-apiserver & co. are not installed; the message says how to install them."""

    def __init__(self, missing: Sequence[str], bin_dir: Path, *, with_scheduler: bool) -> None:
        self.missing = tuple(missing)
        command = INSTALL_COMMAND + (" --with-scheduler" if with_scheduler else "")
        super().__init__(
            f"local control plane binaries missing: {', '.join(missing)} (looked in {bin_dir} and $PATH). "
            f"Install them with: {command}"
        )


class ProcessExitedError(ControlPlaneError):
    """A control-plane process died during start-up; the message carries its log tail."""


# --- phase 1: locate ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Binaries:
    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path | None
    kube_scheduler: Path | None
    kubectl: Path | None


def locate_binaries(
    bin_dir: Path | None = None, *, with_controller_manager: bool = True, with_scheduler: bool = False
) -> Binaries:
    bin_dir = bin_dir or default_bin_dir()

    def find(name: str) -> Path | None:
        candidate = bin_dir / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
        found = shutil.which(name)
        return Path(found) if found else None

    wanted = ["etcd", "kube-apiserver"]
    if with_controller_manager:
        wanted.append("kube-controller-manager")
    if with_scheduler:
        wanted.append("kube-scheduler")
    found = {name: find(name) for name in [*wanted, "kubectl", "kube-controller-manager", "kube-scheduler"]}
    missing = [name for name in wanted if found[name] is None]
    if missing:
        raise BinariesMissingError(missing, bin_dir, with_scheduler=with_scheduler)
    etcd, apiserver = found["etcd"], found["kube-apiserver"]
    assert etcd is not None and apiserver is not None
    return Binaries(
        etcd=etcd,
        kube_apiserver=apiserver,
        kube_controller_manager=found["kube-controller-manager"] if with_controller_manager else None,
        kube_scheduler=found["kube-scheduler"] if with_scheduler else None,
        kubectl=found["kubectl"],
    )


# --- phase 2: certs -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Credentials:
    ca_file: Path
    cert_file: Path
    key_file: Path
    sa_public_file: Path
    sa_private_file: Path
    token_file: Path
    token: str


def _pem_key(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def make_credentials(directory: Path) -> Credentials:
    """A CA, a serving certificate for the loopback API server, SA keys and an admin token."""
    # The first address of the service range is the in-cluster `kubernetes` service.
    service_ip = next(ipaddress.IPv4Network(SERVICE_CIDR).hosts())
    tls = generate_self_signed(
        [
            "127.0.0.1",
            str(service_ip),
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
        ],
        days=30,
        common_name="kube-apiserver",
    )
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = secrets.token_urlsafe(32)

    directory.mkdir(parents=True, exist_ok=True)
    files = Credentials(
        ca_file=directory / "ca.crt",
        cert_file=directory / "apiserver.crt",
        key_file=directory / "apiserver.key",
        sa_public_file=directory / "sa.pub",
        sa_private_file=directory / "sa.key",
        token_file=directory / "tokens.csv",
        token=token,
    )
    files.ca_file.write_bytes(tls.ca_pem)
    files.cert_file.write_bytes(tls.cert_pem)
    _write_private(files.key_file, tls.key_pem)
    _write_private(files.sa_private_file, _pem_key(sa_key))
    files.sa_public_file.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    _write_private(files.token_file, f'{token},admin,admin-uid,"system:masters"\n'.encode())
    return files


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# --- processes ----------------------------------------------------------------------------------


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 2 (comm) may contain spaces; it is closed by the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def _rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass(slots=True)
class ManagedProcess:
    """One control-plane process, identified by PID and start time."""

    name: str
    pid: int
    start_ticks: int | None
    log_file: str
    popen: subprocess.Popen[bytes] | None = field(default=None, repr=False, compare=False)

    def alive(self) -> bool:
        if self.popen is not None:
            return self.popen.poll() is None
        ticks = _start_ticks(self.pid)
        return ticks is not None and ticks == self.start_ticks

    def signal(self, sig: signal.Signals) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def wait(self, timeout: float) -> bool:
        """True when the process is gone within `timeout` seconds."""
        if self.popen is not None:
            try:
                self.popen.wait(timeout=timeout)
                return True
            except subprocess.TimeoutExpired:
                return False
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(Path(self.log_file).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def die_with_parent_hook() -> Callable[[], None] | None:
    """A preexec hook asking the kernel to SIGTERM the child when its parent dies.

    It keeps a crashed test run from leaving etcd and kube-apiserver behind. libc is loaded
    here, in the parent: between fork and exec the child may only make the system call.
    The kernel ties this to the spawning *thread*, so start() belongs on a long-lived thread.
    """
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def hook() -> None:  # pragma: no cover - runs in the child
        prctl(pr_set_pdeathsig, int(signal.SIGTERM))

    return hook


OWNER_FILE = "owner.json"
STALE_PREFIX = "topobridge-cp-"


def sweep_stale_dirs(root: Path | None = None) -> list[Path]:
    """Remove work dirs (and their etcd dirs) whose owners are all gone.

    A test run killed by SIGKILL cannot tear down; its processes die with it (PDEATHSIG) but
    its directories stay. Only dirs with an owner record naming no live process are removed,
    so a control plane of another session, or a detached dev-cluster, is never touched.
    """
    removed: list[Path] = []
    for work in sorted((root or Path(tempfile.gettempdir())).glob(STALE_PREFIX + "*")):
        try:
            record = json.loads((work / OWNER_FILE).read_text())
            owners = [(int(o["pid"]), o.get("start_ticks")) for o in record["owners"]]
            dirs = [Path(d) for d in record["dirs"]]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if any(_start_ticks(pid) is not None and _start_ticks(pid) == ticks for pid, ticks in owners):
            continue
        for directory in [*dirs, work]:
            if directory.name.startswith(("topobridge-cp-", "topobridge-etcd-")):
                shutil.rmtree(directory, ignore_errors=True)
        removed.append(work)
        log.info("control_plane.swept_stale", work_dir=str(work))
    return removed


# --- the control plane --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ControlPlaneState:
    """What is needed to use, and later stop, a running control plane (JSON-serialisable)."""

    server: str
    token: str
    ca_file: str
    kubeconfig: str
    work_dir: str
    owned_dirs: tuple[str, ...]
    processes: tuple[dict[str, Any], ...]
    started_at: float
    startup_seconds: float

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> ControlPlaneState:
        raw = json.loads(text)
        raw["owned_dirs"] = tuple(raw["owned_dirs"])
        raw["processes"] = tuple(raw["processes"])
        return cls(**raw)


class LocalControlPlane:
    """etcd + kube-apiserver (+ kube-controller-manager, kube-scheduler) on loopback ports.

    Use as a context manager or call `start()` / `stop()`. After `start()` the attributes
    `server`, `token`, `ca_file` and `kubeconfig` describe how to reach it as cluster admin.
    """

    def __init__(
        self,
        *,
        work_dir: Path | None = None,
        bin_dir: Path | None = None,
        crds_dir: Path | None = DEFAULT_CRDS_DIR,
        with_controller_manager: bool = True,
        with_scheduler: bool = False,
        detach: bool = False,
        ready_timeout: float = 90.0,
    ) -> None:
        self._requested_work_dir = work_dir
        self._bin_dir = bin_dir
        self._crds_dir = crds_dir
        self._with_controller_manager = with_controller_manager
        self._with_scheduler = with_scheduler
        self._detach = detach
        self._ready_timeout = ready_timeout
        self._owned_dirs: list[Path] = []
        self.processes: list[ManagedProcess] = []
        self.work_dir: Path | None = None
        self.server = ""
        self.token = ""
        self.ca_file = ""
        self.kubeconfig = ""
        self.startup_seconds = 0.0
        self.started_at = 0.0

    # -- life cycle ---------------------------------------------------------------------------

    def __enter__(self) -> LocalControlPlane:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> ControlPlaneState:
        """Bring the control plane up; on any failure everything started so far is stopped."""
        began = time.monotonic()
        sweep_stale_dirs()
        binaries = locate_binaries(
            self._bin_dir,
            with_controller_manager=self._with_controller_manager,
            with_scheduler=self._with_scheduler,
        )
        try:
            self._start(binaries)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        self.started_at = time.time()
        log.info(
            "control_plane.started",
            server=self.server,
            kubeconfig=self.kubeconfig,
            seconds=round(self.startup_seconds, 2),
            rss_mb=round(self.rss_bytes() / 2**20),
        )
        return self.state()

    def _start(self, binaries: Binaries) -> None:
        work = self._make_work_dir()
        logs = work / "logs"
        logs.mkdir(exist_ok=True)
        creds = make_credentials(work / "pki")
        self.token, self.ca_file = creds.token, str(creds.ca_file)

        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        self._spawn(
            "etcd",
            [
                str(binaries.etcd),
                "--name=topobridge",
                f"--data-dir={self._etcd_data_dir(work)}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=topobridge=http://127.0.0.1:{peer_port}",
                "--logger=zap",
                "--log-level=warn",
                "--quota-backend-bytes=2147483648",
            ],
            logs,
        )

        self.server = f"https://127.0.0.1:{api_port}"
        self._spawn(
            "kube-apiserver",
            [
                str(binaries.kube_apiserver),
                f"--etcd-servers={etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={api_port}",
                "--insecure-port=0",
                f"--cert-dir={work / 'pki'}",
                f"--tls-cert-file={creds.cert_file}",
                f"--tls-private-key-file={creds.key_file}",
                f"--client-ca-file={creds.ca_file}",
                f"--token-auth-file={creds.token_file}",
                "--authorization-mode=Node,RBAC",
                f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
                f"--service-account-key-file={creds.sa_public_file}",
                f"--service-account-signing-key-file={creds.sa_private_file}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--endpoint-reconciler-type=none",
                # Test pods carry no service-account token volume; Priority stays on (a default
                # plugin) so priorityClassName resolves to spec.priority as in a real cluster.
                "--disable-admission-plugins=ServiceAccount",
                "--enable-admission-plugins=Priority",
                "--allow-privileged=true",
                "--profiling=false",
                "--logtostderr=true",
                "--v=0",
            ],
            logs,
        )

        self._wait_ready(etcd=self.processes[0], apiserver=self.processes[1])
        self.kubeconfig = str(self._write_kubeconfig(work / "kubeconfig"))

        if binaries.kube_controller_manager:
            self._spawn(
                "kube-controller-manager",
                [
                    str(binaries.kube_controller_manager),
                    f"--kubeconfig={self.kubeconfig}",
                    "--leader-elect=false",
                    "--use-service-account-credentials=false",
                    "--controllers=*," + ",".join(f"-{c}" for c in DISABLED_CONTROLLERS),
                    f"--service-account-private-key-file={creds.sa_private_file}",
                    f"--root-ca-file={creds.ca_file}",
                    "--port=0",
                    "--secure-port=0",
                    "--logtostderr=true",
                    "--v=0",
                ],
                logs,
            )
        if binaries.kube_scheduler:
            self._spawn(
                "kube-scheduler",
                [
                    str(binaries.kube_scheduler),
                    f"--kubeconfig={self.kubeconfig}",
                    "--leader-elect=false",
                    "--port=0",
                    "--secure-port=0",
                    "--logtostderr=true",
                    "--v=0",
                ],
                logs,
            )
        if self._crds_dir is not None:
            self.install_crds(self._crds_dir)
        for proc in self.processes:
            if not proc.alive():
                raise ProcessExitedError(f"{proc.name} exited during start-up:\n{proc.log_tail()}")

    def stop(self, *, grace: float = 10.0) -> None:
        """SIGTERM every process by PID (newest first), SIGKILL stragglers, remove owned dirs."""
        for proc in reversed(self.processes):
            proc.signal(signal.SIGTERM)
        for proc in reversed(self.processes):
            if not proc.wait(grace):
                log.warning("control_plane.kill", process=proc.name, pid=proc.pid)
                proc.signal(signal.SIGKILL)
                proc.wait(5.0)
        self.processes = []
        for directory in reversed(self._owned_dirs):
            shutil.rmtree(directory, ignore_errors=True)
        self._owned_dirs = []

    # -- state --------------------------------------------------------------------------------

    def state(self) -> ControlPlaneState:
        return ControlPlaneState(
            server=self.server,
            token=self.token,
            ca_file=self.ca_file,
            kubeconfig=self.kubeconfig,
            work_dir=str(self.work_dir or ""),
            owned_dirs=tuple(str(d) for d in self._owned_dirs),
            processes=tuple(
                {"name": p.name, "pid": p.pid, "start_ticks": p.start_ticks, "log_file": p.log_file}
                for p in self.processes
            ),
            started_at=self.started_at,
            startup_seconds=self.startup_seconds,
        )

    @classmethod
    def attach(cls, state: ControlPlaneState) -> LocalControlPlane:
        """A handle on a control plane started by another process (to inspect or stop it)."""
        plane = cls(crds_dir=None)
        plane.server, plane.token, plane.ca_file, plane.kubeconfig = (
            state.server,
            state.token,
            state.ca_file,
            state.kubeconfig,
        )
        plane.work_dir = Path(state.work_dir) if state.work_dir else None
        plane._owned_dirs = [Path(d) for d in state.owned_dirs]
        plane.processes = [ManagedProcess(**p) for p in state.processes]
        plane.started_at, plane.startup_seconds = state.started_at, state.startup_seconds
        return plane

    def alive(self) -> dict[str, bool]:
        return {p.name: p.alive() for p in self.processes}

    def rss_bytes(self) -> int:
        """Resident memory of all control-plane processes together."""
        return sum(_rss_bytes(p.pid) for p in self.processes if p.alive())

    # -- phases -------------------------------------------------------------------------------

    def _make_work_dir(self) -> Path:
        if self._requested_work_dir is not None:
            work = self._requested_work_dir
            if not work.exists():
                work.mkdir(parents=True)
                self._owned_dirs.append(work)
        else:
            work = Path(tempfile.mkdtemp(prefix=STALE_PREFIX))
            self._owned_dirs.append(work)
        self.work_dir = work
        self._record_owner()
        return work

    def _record_owner(self) -> None:
        """Who may still use the work dir: lets a later start sweep it if we were SIGKILLed."""
        if self.work_dir is None:
            return
        me = os.getpid()
        owners = [{"pid": me, "start_ticks": _start_ticks(me)}] + [
            {"pid": p.pid, "start_ticks": p.start_ticks} for p in self.processes
        ]
        record = {"owners": owners, "dirs": [str(d) for d in self._owned_dirs]}
        (self.work_dir / OWNER_FILE).write_text(json.dumps(record))

    def _etcd_data_dir(self, work: Path) -> Path:
        shm = Path("/dev/shm")
        if shm.is_dir() and os.access(shm, os.W_OK):
            data = Path(tempfile.mkdtemp(prefix="topobridge-etcd-", dir=shm))
            self._owned_dirs.append(data)
            self._record_owner()
            return data
        return work / "etcd"

    def _spawn(self, name: str, argv: list[str], logs: Path) -> ManagedProcess:
        log_path = logs / f"{name}.log"
        with open(log_path, "ab") as out:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=str(logs),
                start_new_session=True,  # Ctrl-C on the terminal is for us, not for etcd
                preexec_fn=None if self._detach else die_with_parent_hook(),
            )
        proc = ManagedProcess(name, popen.pid, _start_ticks(popen.pid), str(log_path), popen)
        self.processes.append(proc)
        self._record_owner()
        log.debug("control_plane.spawned", process=name, pid=popen.pid)
        return proc

    def _wait_ready(self, *, etcd: ManagedProcess, apiserver: ManagedProcess) -> None:
        deadline = time.monotonic() + self._ready_timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            for proc in (etcd, apiserver):
                if not proc.alive():
                    raise ProcessExitedError(f"{proc.name} exited during start-up:\n{proc.log_tail()}")
            ok, last = _probe_readyz(self.server, self.token, self.ca_file)
            if ok:
                ok, last = _run_async(_probe_namespaces(self.server, self.token, self.ca_file))
            if ok:
                return
            time.sleep(0.2)
        raise ControlPlaneError(
            f"kube-apiserver not ready after {self._ready_timeout:.0f}s ({last}):\n{apiserver.log_tail()}"
        )

    def _write_kubeconfig(self, path: Path) -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "topobridge-local",
                    "cluster": {
                        "server": self.server,
                        "certificate-authority": self.ca_file,
                    },
                }
            ],
            "users": [{"name": "admin", "user": {"token": self.token}}],
            "contexts": [
                {"name": "topobridge-local", "context": {"cluster": "topobridge-local", "user": "admin"}}
            ],
            "current-context": "topobridge-local",
        }
        _write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
        return path

    def install_crds(self, directory: Path, *, timeout: float = 60.0) -> list[str]:
        """Create (or replace) every CRD in `directory`, then wait until all are Established."""
        docs: list[dict[str, Any]] = []
        for path in sorted(directory.glob("*.yaml")):
            docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
        if not docs:
            raise ControlPlaneError(f"no CRDs found in {directory}; generate them with `topobridge crds`")
        names = _run_async(_apply_crds(self.server, self.token, self.ca_file, docs, timeout))
        log.info("control_plane.crds_installed", count=len(names))
        return names


# --- API calls (kubernetes-asyncio, on a private loop so a caller's loop is untouched) ------------


def _run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even when the caller's loop is running."""

    def run() -> T:
        with asyncio.Runner(loop_factory=asyncio.new_event_loop) as runner:
            return runner.run(coro)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    # Called from inside a running loop (an async test): a private loop must live in another thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="control-plane") as pool:
        return pool.submit(run).result()


def admin_client_config(server: str, token: str, ca_file: str) -> Any:
    from kubernetes_asyncio.client import Configuration

    config = Configuration(host=server)
    config.api_key = {"BearerToken": token}
    config.api_key_prefix = {"BearerToken": "Bearer"}
    config.ssl_ca_cert = ca_file
    return config


def _probe_readyz(server: str, token: str, ca_file: str) -> tuple[bool, str]:
    """One GET /readyz; (ready, what answered).

    Plain `http.client`, closed in `finally`, rather than an aiohttp session on a throw-away
    loop: while kube-apiserver starts it resets connections mid-handshake and times requests
    out, and aiohttp closes such a TLS socket in a loop callback that a loop torn down right
    after the probe may never run. The socket was then collected later as an unclosed
    socket, a ResourceWarning in whatever code happened to run (an error under pytest).
    Here every socket is closed before the probe returns, whatever the answer."""
    url = urllib.parse.urlsplit(server)
    host, port = url.hostname or "127.0.0.1", url.port or 443
    context = ssl.create_default_context(cafile=ca_file)
    connection = http.client.HTTPSConnection(host, port, timeout=READYZ_TIMEOUT, context=context)
    # The TLS socket is made before it connects, so it is ours to close whatever happens next:
    # CPython 3.11's wrap_socket of a connected socket leaks it when the peer has reset it.
    connection.sock = context.wrap_socket(socket.socket(), server_hostname=host)
    try:
        connection.sock.settimeout(READYZ_TIMEOUT)
        connection.sock.connect((host, port))
        connection.request("GET", "/readyz", headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        response.read()
    except (OSError, http.client.HTTPException) as exc:  # refused, reset, TLS, timeout
        return False, f"/readyz: {type(exc).__name__}: {exc}"
    finally:
        connection.close()
    if response.status == 200:
        return True, "ready"
    return False, f"/readyz: {response.status} {response.reason}"


BOOTSTRAP_NAMESPACES = ("default", "kube-system")


async def _probe_namespaces(server: str, token: str, ca_file: str) -> tuple[bool, str]:
    """Whether the namespaces every caller assumes exist (`default`, and `kube-system` for leases)."""
    from kubernetes_asyncio.client import ApiClient, CoreV1Api
    from kubernetes_asyncio.client.exceptions import ApiException

    async with ApiClient(admin_client_config(server, token, ca_file)) as api:
        core = CoreV1Api(api)
        for name in BOOTSTRAP_NAMESPACES:
            try:
                await core.read_namespace(name, _request_timeout=5)
            except ApiException as exc:
                return False, f"namespace {name}: {exc.status} {exc.reason}"
            except Exception as exc:  # aiohttp's connection errors, without importing aiohttp here
                return False, f"namespace {name}: {type(exc).__name__}: {exc}"
    return True, "ready"


def _storage_path(doc: dict[str, Any]) -> str:
    """The list path of a CRD's resource at its storage version."""
    spec = doc["spec"]
    version = next((v["name"] for v in spec["versions"] if v.get("storage")), spec["versions"][0]["name"])
    return f"/apis/{spec['group']}/{version}/{spec['names']['plural']}"


async def _wait_served(api: Any, docs: list[dict[str, Any]], deadline: float) -> None:
    """Until a list of each CRD's resource answers 200 (Established, and its handler serves)."""
    from kubernetes_asyncio.client.exceptions import ApiException

    pending = {_storage_path(doc) for doc in docs}
    while pending:
        for path in sorted(pending):
            try:
                await api.call_api(
                    path,
                    "GET",
                    query_params=[("limit", 1)],
                    auth_settings=["BearerToken"],
                    response_types_map={200: "object"},
                    _request_timeout=5,
                )
                pending.discard(path)
            except ApiException as exc:
                if exc.status != 404:
                    raise ControlPlaneError(f"GET {path}: {exc.status} {exc.reason}") from None
        if pending:
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"CRDs Established but not served after the wait: {sorted(pending)}")
            await asyncio.sleep(0.1)


async def _apply_crds(
    server: str, token: str, ca_file: str, docs: list[dict[str, Any]], timeout: float
) -> list[str]:
    from kubernetes_asyncio.client import ApiClient, ApiextensionsV1Api
    from kubernetes_asyncio.client.exceptions import ApiException

    async with ApiClient(admin_client_config(server, token, ca_file)) as api:
        ext: Any = ApiextensionsV1Api(api)  # takes plain dicts as bodies
        names = []
        for doc in docs:
            name = doc["metadata"]["name"]
            names.append(name)
            try:
                await ext.create_custom_resource_definition(doc)
            except ApiException as exc:
                if exc.status != 409:
                    body = exc.body.decode(errors="replace") if isinstance(exc.body, bytes) else exc.body
                    raise ControlPlaneError(f"CRD {name} rejected by kube-apiserver: {body}") from None
                current = await ext.read_custom_resource_definition(name)
                doc = {
                    **doc,
                    "metadata": {**doc["metadata"], "resourceVersion": current.metadata.resource_version},
                }
                await ext.replace_custom_resource_definition(name, doc)
        deadline = time.monotonic() + timeout
        pending = set(names)
        while pending:
            for name in sorted(pending):
                crd = await ext.read_custom_resource_definition(name)
                conditions = {c.type: c for c in (crd.status.conditions or [])}
                established = conditions.get("Established")
                if established is not None and established.status == "True":
                    pending.discard(name)
                elif (names_ok := conditions.get("NamesAccepted")) is not None and names_ok.status == "False":
                    raise ControlPlaneError(f"CRD {name}: names not accepted: {names_ok.message}")
            if pending:
                if time.monotonic() > deadline:
                    raise ControlPlaneError(f"CRDs not Established after {timeout:.0f}s: {sorted(pending)}")
                await asyncio.sleep(0.1)
        await _wait_served(api, docs, deadline)
        return names
