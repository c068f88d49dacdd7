"""`topobridge ui --from FILE` at 10,000 nodes in a real browser (Debian's headless chromium,
driven by selenium): the ui benchmark's cluster (`benchmarks/ui.py`: 1,250 NVLink domains in
blocks and spines, about 600 placed training gangs, two pending ones).

What a user meets at that size, asserted as structure: the what-if box is in the first screen,
above the gang lists; the lists come a page at a time with a pager and a search; a pending
gang's message is shown once on its card; figures read in one unit per pair (`26.4Ti/32Ti`,
`36,108/80,000`). A pasted job gets its answer. The times (first draw, the what-if) are
printed and recorded in the JUnit file, never asserted.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
WIDTH, HEIGHT = 1400, 1000
WAIT = 600.0
"""Seconds any one step may take on a loaded machine (a 10k-node what-if takes seconds)."""
FIGURE = re.compile(r"^([\d,.]+)(Ki|Mi|Gi|Ti|Pi)?/([\d,.]+)(Ki|Mi|Gi|Ti|Pi)?(?: \S+ free)?$")


def _benchmark() -> Any:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("ui_benchmark", ROOT / "benchmarks" / "ui.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    bench = _benchmark()
    path = tmp_path_factory.mktemp("ui10k") / "cluster-10000.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": bench.cluster(10_000)}))
    argv = [sys.executable, "-m", "topobridge.cli", "--log-level", "warning", "ui", "--port", "0"]
    proc = subprocess.Popen([*argv, "--from", str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        found = re.search(r"serving (http://\S+) ", proc.stdout.readline())
        assert found, "topobridge ui did not start"
        _until_built(found.group(1) + "api/view")
        yield found.group(1), bench
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def _until_built(url: str) -> None:
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=WAIT):
                return
        except urllib.error.HTTPError as exc:
            assert exc.code == 503
            time.sleep(0.25)
    raise AssertionError(f"{url}: no model after {WAIT:.0f} s")


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if missing:
        pytest.fail(f"needs {', '.join(missing)}: hack/install-test-tools.sh installs them", pytrace=False)
    profile = tempfile.mkdtemp(prefix="topobridge-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"):
        options.add_argument(flag)
    options.add_argument(f"--window-size={WIDTH},{HEIGHT}")
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def until(driver: WebDriver, script: str, *args: Any) -> Any:
    wait = WebDriverWait(driver, WAIT, poll_frequency=0.2)
    return wait.until(lambda d: d.execute_script(script, *args), f"waited for: {script}")


def top(driver: WebDriver, selector: str) -> float:
    return float(
        driver.execute_script(
            "return document.querySelector(arguments[0]).getBoundingClientRect().top", selector
        )
    )


EXPLAINED = "return [...document.querySelectorAll('details.gang[open] .explain')].every(e => !e.textContent.includes('asking'))"


def test_the_page_at_10k_nodes(
    browser: WebDriver, served: tuple[str, Any], record_testsuite_property: Callable[[str, object], None]
) -> None:
    url, bench = served
    browser.get(url)
    until(browser, "return performance.getEntriesByName('topobridge:first-draw').length")
    first_draw = float(
        browser.execute_script("return performance.getEntriesByName('topobridge:first-draw')[0].startTime")
    )
    until(browser, EXPLAINED)

    # The what-if is in the first screen, above both gang lists.
    box = browser.execute_script(
        "const r = document.getElementById('whatif-run').getBoundingClientRect(); return [r.top, r.bottom, window.innerHeight, window.scrollY]"
    )
    assert box[3] == 0 and box[0] >= 0 and box[1] <= box[2], box
    assert top(browser, "#whatif-text") < top(browser, "#pending") < top(browser, "#placed")

    # The lists come a page at a time, with a pager, and a search.
    counts = browser.execute_script(
        "return [document.querySelectorAll('#placed .placed-gang').length, document.getElementById('placed-count').textContent, document.getElementById('placed-pager').textContent]"
    )
    placed = int(counts[1].replace(",", ""))
    assert placed > 500 and counts[0] == 20 and f"1\N{EN DASH}20 of {counts[1]}" in counts[2], counts
    browser.find_element(By.ID, "placed-search").send_keys("train-12")
    found = until(
        browser,
        "const g = [...document.querySelectorAll('#placed .placed-gang')].map(e => e.dataset.gang);"
        "return g.length && g.every(x => x.includes('train-12')) ? g : null",
    )
    assert "koordinator:train/train-12" in found
    browser.find_element(By.CSS_SELECTOR, "#placed-pager [data-page=next]")  # more than a page match

    # A pending gang's message: on its card once, in one place.
    cards = browser.execute_script(
        "return [...document.querySelectorAll('details.gang[open]')].map(d => [d.dataset.gang, d.innerText])"
    )
    assert cards
    for gang, text in cards:
        reason = browser.execute_script(
            "return document.querySelector(`details.gang[data-gang='${arguments[0]}'] .verdict`).nextSibling.textContent",
            gang,
        )
        probe = reason[:120]
        assert len(probe) > 40 and text.count(probe) == 1, (gang, text.count(probe))

    # Figures: one unit per pair, thousands grouped.
    figures = browser.execute_script(
        "return [...document.querySelectorAll('#tree g.cell text:not(.name):not(.badge)')].map(t => t.textContent)"
    )
    pairs = [FIGURE.match(f) for f in figures if "/" in f]
    assert pairs and all(p is not None and p.group(2) == p.group(4) for p in pairs), figures[:20]
    assert any("," in f for f in figures)

    # A pasted job gets its answer.
    browser.find_element(By.ID, "whatif-text").send_keys(bench.WHAT_IF)
    started = time.perf_counter()
    browser.find_element(By.ID, "whatif-run").click()
    placed_at = until(
        browser, "const a = document.querySelector('#whatif-result .answer'); return a && a.dataset.placed"
    )
    what_if_ms = (time.perf_counter() - started) * 1000
    assert placed_at == "true"
    assert browser.execute_script("return document.getElementById('whatif-progress').hidden") is True

    print(f"ui at 10k nodes: first_draw_ms={first_draw:.0f} what_if_ms={what_if_ms:.0f}")
    record_testsuite_property("ui_10k_first_draw_ms", round(first_draw))
    record_testsuite_property("ui_10k_what_if_ms", round(what_if_ms))
