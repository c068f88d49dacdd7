"""`topobridge ui` in a real browser: Debian's chromium, headless, driven through its
chromedriver by selenium, against the local control plane holding the seed's 12-node
spine/block cluster and Example 2 (low-priority pods on node-0, node-1 and node-5; a
high-priority 4-pod gang that must gather in one spine, waiting, since no scheduler runs here).

The page loads; the picture shows the seed's layout (3 spines, 5 blocks, 12 nodes), zooms into a
spine on a click and out again by the breadcrumb; the waiting gang's reason appears, the
scheduling cycle's own (`explain` on the same objects); a pasted job's answer is `simulate`'s on
the same objects; and a pod bound while the page is open is redrawn from the server's watch
(Server-Sent Events). The browser's time to first draw (the page's
performance mark) is recorded in the JUnit file, never asserted.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait
from ui_objects import job

from controller.errors import NotFoundError
from controller.kube import Kube
from controller.placer.scenario import load_scenario, simulate
from controller.resources import PODS
from e2e import cluster as clustermod
from e2e.scenario import scenario
from topobridge.cmd_explain import explain_objects
from topobridge.snapshot_io import read_objects

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)
WAIT = 45.0
T = TypeVar("T")


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if missing:
        pytest.fail(
            f"the browser test needs {', '.join(missing)}: apt-get install chromium chromium-driver "
            "(make test installs them: hack/install-test-tools.sh)",
            pytrace=False,
        )
    profile = tempfile.mkdtemp(prefix="topobridge-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
async def seed(admin: Kube, namespace: str) -> AsyncIterator[str]:
    """The seed's cluster and Example 2's objects in `namespace`; removed afterwards."""
    example = scenario("seed-preemption")
    spec = example.cluster_spec()
    await clustermod.create_nodes(admin, spec)
    await clustermod.create_topology(admin, spec)
    try:
        for obj in example.steps[0].apply + example.steps[1].apply:
            if obj["kind"] == "PriorityClass":
                await clustermod.ensure_cluster_object(admin, obj)
            else:
                await clustermod.create_object(admin, obj, namespace=namespace)
        yield namespace
    finally:
        # Bound pods on API-only nodes never finish terminating (no kubelet): removed at once,
        # so no later test finds them on the seed's node names.
        for p in (await admin.list(PODS, namespace=namespace)).items:
            with contextlib.suppress(NotFoundError):
                await admin.delete(PODS, p["metadata"]["name"], namespace=namespace, grace_period_seconds=0)
        await clustermod.delete_cluster(admin, spec)


@pytest.fixture
async def ui_url(control_plane: Any, seed: str) -> AsyncIterator[str]:
    argv = [sys.executable, "-m", "topobridge.cli", "--log-level", "warning", "ui", "--port", "0"]
    argv += ["--kubeconfig", control_plane.kubeconfig]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), WAIT)
        found = re.search(r"serving (http://\S+) ", line)
        assert found, f"topobridge ui said {line!r}"
        yield found.group(1)
    finally:
        proc.terminate()
        _, err = await asyncio.to_thread(proc.communicate, timeout=30)
        assert proc.returncode == 0, err


async def until(driver: WebDriver, check: Callable[[WebDriver], T], what: str) -> T:
    """`check`'s first truthy answer; past `WAIT` seconds, a failure naming `what` was awaited."""
    wait = WebDriverWait(driver, WAIT, poll_frequency=0.2)
    result: T = await asyncio.to_thread(wait.until, check, f"waited {WAIT:.0f} s for {what}")
    return result


def cells(driver: WebDriver, kind: str) -> list[str]:
    """The ids of the picture's cells of one kind, read in one script (the page may redraw)."""
    found: list[str] = driver.execute_script(
        "return [...document.querySelectorAll(`#tree g.cell[data-kind=${arguments[0]}]`)]"
        ".map(g => g.dataset.id)",
        kind,
    )
    return found


def text_of(driver: WebDriver, selector: str) -> str | None:
    found: str | None = driver.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.textContent : null", selector
    )
    return found


def version(driver: WebDriver) -> int:
    return int(driver.execute_script("return document.body.dataset.version") or 0)


async def test_the_page_in_a_browser(
    browser: WebDriver,
    ui_url: str,
    seed: str,
    admin: Kube,
    record_testsuite_property: Callable[[str, object], None],
) -> None:
    await asyncio.to_thread(browser.get, ui_url)
    await until(browser, lambda d: len(cells(d, "node")) >= 12, "the first draw")
    first_draw = browser.execute_script(
        "return performance.getEntriesByName('topobridge:first-draw')[0].startTime"
    )
    # A suite property: CI's JUnit file is xunit2, which has no per-test properties.
    record_testsuite_property("ui_first_draw_ms", round(float(first_draw)))

    domains = cells(browser, "domain")
    assert sorted(d for d in domains if d.startswith("SpineLayer/")) == [
        f"SpineLayer/spine-{i}" for i in range(3)
    ]
    assert sorted(d for d in domains if d.startswith("BlockLayer/")) == [
        f"BlockLayer/block-{i}" for i in range(5)
    ]
    assert {n for n in cells(browser, "node") if re.fullmatch(r"node-\d+", n)} == {
        f"node-{i}" for i in range(12)
    }

    # Zoom in by a click on a domain, out by the breadcrumb.
    click = "document.querySelector(arguments[0]).dispatchEvent(new MouseEvent('click'))"
    browser.execute_script(click, '#tree g.cell[data-id="SpineLayer/spine-1"]')
    await until(browser, lambda d: "BlockLayer/block-0" not in cells(d, "domain"), "the zoom into spine-1")
    assert sorted(cells(browser, "domain")) == [
        "BlockLayer/block-2",
        "BlockLayer/block-3",
        "SpineLayer/spine-1",
    ]
    assert sorted(cells(browser, "node")) == [f"node-{i}" for i in range(5, 9)]
    crumbs = browser.execute_script(
        "return [...document.querySelectorAll('#crumbs a, #crumbs .here')].map(e => e.textContent)"
    )
    assert crumbs == ["cluster", "SpineLayer/spine-1"]
    browser.execute_script(click, '#crumbs a[data-id="cluster"]')
    await until(browser, lambda d: len(cells(d, "node")) >= 12, "the zoom out by the breadcrumb")

    # The waiting gang, with the cycle's own reason.
    objects = await read_objects(admin)
    gang = f"koordinator:{seed}/high-priority-training"
    expected = explain_objects(objects, gang).to_dict()["verdict"]
    here = f'details.gang[data-gang="{gang}"]'
    shown = await until(browser, lambda d: text_of(d, f"{here} .explain .message"), f"{gang}'s reason")
    assert expected["message"] and expected["message"] in shown
    assert str(text_of(browser, f"{here} .verdict")).startswith(f"{expected['code']} at {expected['step']}")

    # What if: the page's answer is simulate's on the same objects.
    text = job(2, "4")
    await asyncio.to_thread(browser.find_element(By.ID, "whatif-text").send_keys, text)
    browser.find_element(By.ID, "whatif-run").click()
    answer: dict[str, Any] = await until(
        browser,
        lambda d: d.execute_script(
            "const a = document.querySelector('#whatif-result .answer'); if (!a) return null;"
            "return {placed: a.dataset.placed, binds: Object.fromEntries([...a.querySelectorAll('tr[data-pod]')]"
            ".map(r => [r.dataset.pod, r.cells[1].textContent]))}"
        ),
        "the what-if's answer",
    )
    pasted = [o for o in yaml.safe_load_all(text) if o]
    result = simulate(load_scenario([*objects, *pasted], lenient=True))
    mine = {f"default/{o['metadata']['name']}" for o in pasted if o["kind"] == "Pod"}
    assert answer["placed"] == "true"
    assert (
        answer["binds"] == {p: n for p, n in result.bound.items() if p in mine} and len(answer["binds"]) == 2
    )

    # A pod bound while the page is open: the watch tells the page, the page redraws.
    before = version(browser)
    await admin.create(PODS, _bound_pod("fills-node-11", "node-11"), namespace=seed)
    node_11 = '#tree g.cell[data-id="node-11"] title'
    await until(browser, lambda d: "free cpu 0/8" in (text_of(d, node_11) or ""), "node-11 redrawn full")
    assert version(browser) > before


def _bound_pod(name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "8"}}}],
        },
    }
