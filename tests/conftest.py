"""Shared fixtures: the real local control plane, a Kubernetes client, test namespaces, task-leak guard.

Fixtures (names are stable; tests across the suite rely on them):

`control_plane` (session)
    etcd + kube-apiserver v1.20.2 + kube-controller-manager on free loopback ports, the
    project's CRDs installed and Established. Attributes: `.kubeconfig` (path), `.server`
    (https URL), `.token` (admin bearer token, group system:masters), `.ca_file` (path).
    Started once per session, stopped by PID at the end even when tests fail. When the
    binaries are missing every test using it FAILS with the install command
    (`bash hack/install-control-plane.sh`); it never skips.

`kube` (function, async)
    A `kubernetes_asyncio.client.ApiClient` loaded from that kubeconfig; closed after the
    test. Build typed APIs on it: `CoreV1Api(kube)`, `CustomObjectsApi(kube)`. Status patches
    of custom objects need `_content_type="application/merge-patch+json"` (1.20).

`namespace` (function, async)
    The name of a fresh namespace for this test (`t-<test name>-<random>`), deleted after it.

`make_namespace` (function, async)
    A factory `await make_namespace("hint") -> str` for tests needing several namespaces.

Any test that uses `control_plane` (directly or through the fixtures above) is marked
`integration` automatically, so `-m "not integration"` deselects exactly those.

Every async test also runs under a guard that fails it when it leaves asyncio tasks running.

Hypothesis draws fixed examples (the `gate` profile: `derandomize`, no example database), so a
run is a function of the commit; TOPOBRIDGE_PROPERTY_SEED=<seed> draws every property test
that names no seed of its own from that seed instead (`tests/replay.py`, `hack/explore.py`).
"""

from __future__ import annotations

import asyncio
import inspect
import re
import secrets
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from hypothesis import settings
from replay import PROPERTY, chosen

from controller.kube import Kube
from topobridge.devcluster import BinariesMissingError, ControlPlaneError, LocalControlPlane

_STARTUP_KEY = pytest.StashKey[dict[str, float]]()
PROPERTY_SEED = chosen(PROPERTY)
settings.register_profile("gate", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile("gate" if PROPERTY_SEED is None else "explore")


@pytest.hookimpl(tryfirst=True)  # before Hypothesis' plugin reads its seed option
def pytest_configure(config: pytest.Config) -> None:
    if PROPERTY_SEED is not None and config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed = str(PROPERTY_SEED)
    # `timeout`/CI cancellation sends SIGTERM, which would end pytest without teardown; as a
    # KeyboardInterrupt it still stops the control plane by PID.
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "control_plane" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def control_plane(request: pytest.FixtureRequest) -> Iterator[LocalControlPlane]:
    plane = LocalControlPlane(with_controller_manager=True)
    failure: str | None = None
    try:
        plane.start()
    except BinariesMissingError as exc:
        failure = f"integration tests need the real control plane: {exc}"
    except ControlPlaneError as exc:
        failure = f"local control plane failed to start: {exc}"
    if failure is not None:
        pytest.fail(failure, pytrace=False)
    request.config.stash[_STARTUP_KEY] = {
        "seconds": plane.startup_seconds,
        "rss_mib": plane.rss_bytes() / 2**20,
    }
    try:
        yield plane
    finally:
        plane.stop()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    counts: dict[str, int] = {}
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, "when", None) == "call" and "integration" in getattr(report, "keywords", {}):
                counts[outcome] = counts.get(outcome, 0) + 1
    figures = config.stash.get(_STARTUP_KEY, None)
    if figures:
        terminalreporter.write_line(
            f"local control plane: ready in {figures['seconds']:.1f}s, "
            f"{figures['rss_mib']:.0f} MiB RSS at start"
        )
    if counts:
        summary = ", ".join(f"{n} {outcome}" for outcome, n in counts.items())
        terminalreporter.write_line(f"integration tests run against the real kube-apiserver: {summary}")


@pytest.fixture
async def kube(control_plane: LocalControlPlane) -> AsyncIterator[Any]:
    from kubernetes_asyncio import client, config

    configuration = client.Configuration()
    await config.load_kube_config(config_file=control_plane.kubeconfig, client_configuration=configuration)
    async with client.ApiClient(configuration) as api:
        yield api


@pytest.fixture(scope="module")
async def admin(control_plane: LocalControlPlane) -> AsyncIterator[Kube]:
    """controller.kube.Kube as cluster admin, for arranging and inspecting test objects."""
    kube = await Kube.connect(kubeconfig=control_plane.kubeconfig)
    try:
        yield kube
    finally:
        await kube.close()


_NAME_CHARS = re.compile(r"[^a-z0-9-]+")


@pytest.fixture
async def make_namespace(
    kube: Any, request: pytest.FixtureRequest
) -> AsyncIterator[Callable[..., Awaitable[str]]]:
    from kubernetes_asyncio.client import CoreV1Api

    core = CoreV1Api(kube)
    created: list[str] = []

    async def make(hint: str | None = None, *, labels: dict[str, str] | None = None) -> str:
        base = _NAME_CHARS.sub("-", (hint or request.node.name).lower()).strip("-")[:40].strip("-") or "t"
        name = f"t-{base}-{secrets.token_hex(3)}"
        body = {"metadata": {"name": name, "labels": {"topobridge.test/namespace": "true", **(labels or {})}}}
        await core.create_namespace(body)
        created.append(name)
        return name

    yield make
    for name in created:
        # The namespace controller (kube-controller-manager) empties and removes it later.
        await core.delete_namespace(name, propagation_policy="Background")


@pytest.fixture
async def namespace(make_namespace: Callable[..., Awaitable[str]]) -> str:
    return await make_namespace()


@pytest.fixture(autouse=True)
def _no_leaked_asyncio_tasks(request: pytest.FixtureRequest) -> None:
    if inspect.iscoroutinefunction(getattr(request.node, "function", None)):
        request.getfixturevalue("_asyncio_task_guard")


@pytest.fixture
async def _asyncio_task_guard() -> AsyncIterator[None]:
    """Fail an async test that leaves tasks running (kopf's guard, in spirit)."""
    before = asyncio.all_tasks()
    yield
    # Let tasks that were cancelled at the end of the test finish unwinding.
    for _ in range(5):
        await asyncio.sleep(0)
    current = asyncio.current_task()  # teardown may run in a task of its own
    leaked = {t for t in asyncio.all_tasks() - before if t is not current and not t.done()}
    if leaked:
        for task in leaked:
            task.cancel()
        await asyncio.gather(*leaked, return_exceptions=True)
        names = sorted(f"{t.get_name()} ({t.get_coro()!r})" for t in leaked)
        pytest.fail(f"test left {len(leaked)} asyncio task(s) running: {names}", pytrace=False)
