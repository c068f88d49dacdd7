"""What `topobridge ui` costs on a large cluster, measured whole, and the pictures in docs/ui.md.

The cluster: `_topology.py`'s 4-tier GPU fabric (datacenter > spine > block > NVLink domain of 8
nodes), nodes of 64 CPU / 512Gi / 8 GPU. Load varies by spine (each spine draws how busy it is)
so the picture has something to show: an NVLink domain is either held by an 8-pod training gang
(a `scheduling.sigs.k8s.io` PodGroup, 8 GPUs a pod) or its nodes run a service pod or none; two
gangs wait (512 whole nodes in one spine; 16 nodes in one NVLink domain of 8). It is written as
one JSON file, what `topobridge ui --from FILE` reads.

Figures (at --nodes):
* build_ms: the server's time to build the view model from the objects (`ui.model.build`: the
  scenario read, the scheduler's snapshot, `cluster_view`), the median of --runs;
* page_kb: the data the page fetches first (`/api/view`: the summary and the tree's top levels);
  zoom_kb: what a zoom into one block fetches (its subtree, with its nodes);
* first_draw_ms: headless chromium's time from navigation to the first drawn picture (the page's
  `topobridge:first-draw` performance mark), against `topobridge ui --from FILE` once its model
  is built.

Updates (at each of --update-sizes, --update-runs rounds): what a live ui does when a watch
event comes, one change at a time, wall and CPU time of the thread:
* update (`ui.model.update` with that one change, then `ui.model.page`, the data the page
  fetches to redraw) for: `bind`, a pending pod of the 16-pod gang bound to a free node (the
  next round unbinds it); `label`, a node relabelled with a label no topology source reads;
  `topology_label`, a node moved to another NVLink domain (its NVLink label changed: the
  scheduler moves the node between domains in its tree and index, the rows between its old and
  new place shift, `used` and the records on them follow, the gangs are kept; the ui's figures
  summed again, the rows of gangs on moved nodes made again);
* rebuild (`ui.model.build` of the same objects, then `page`): what every change cost before,
  alternating with the updates (even rounds update first, odd rounds rebuild first), and
  checked to give the same page.

    .venv/bin/python benchmarks/ui.py [--nodes 10000] [--runs 3] [--screenshot PNG] [--keep FILE]
        [--update-sizes 10000 35000] [--update-runs 2] [--no-browser]
    .venv/bin/python benchmarks/ui.py --seed --screenshot docs/images/ui-seed.png

With --before REF (the commit REF's tree exported with `git archive` into a temporary
directory), only the updates are measured: at each size, --before-rounds rounds, each running
this checkout and REF in a process of their own (alternating which goes first), each process
measuring --update-runs rounds as above; the summary gives both, REF's keys prefixed `base_`
(medians over every run).

    .venv/bin/python benchmarks/ui.py --before REF [--update-sizes 10000 35000] [--before-rounds 2]

`--seed` shows the seed's 12-node cluster (the built-in demo's Example 2) with a job pasted in
the what-if box instead. Needs /usr/bin/chromium and /usr/bin/chromedriver (Debian's) and
selenium. The run ends with one line: `summary: nodes=... objects=... build_ms=... page_kb=...
zoom_kb=... first_draw_ms=... update_bind_ms@N=...` (medians; `@N`: at N nodes).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

# The repository measured first (this one unless --before runs another in a process of its own):
# benchmarks/controller.py would otherwise shadow the `controller` package.
sys.path.insert(0, os.environ.get("TOPOBRIDGE_ROOT", str(Path(__file__).resolve().parents[1])))

from _checkout import export_tree  # beside this script
from _topology import cluster_network_topology, topology_labels  # beside this script

from topobridge.ui import model

ROOT = Path(__file__).resolve().parents[1]
GANG_LABEL = "pod-group.scheduling.sigs.k8s.io"
SPEC = "gang.scheduling.koordinator.sh/network-topology-spec"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)
WHAT_IF = """apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: what-if, namespace: default}
spec: {minMember: 2, networkTopology: {mode: hard, highestTierAllowed: 1}}
---
apiVersion: v1
kind: Pod
metadata: {name: what-if-0, namespace: default, annotations: {scheduling.k8s.io/group-name: what-if}}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "4", memory: 8Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: what-if-1, namespace: default, annotations: {scheduling.k8s.io/group-name: what-if}}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "4", memory: 8Gi}}}]
"""


def pod(name: str, ns: str, *, gpus: int, cpu: int, node: str | None, gang: str = "") -> dict[str, Any]:
    req = {"cpu": str(cpu), "memory": f"{cpu * 4}Gi", "nvidia.com/gpu": str(gpus)}
    spec: dict[str, Any] = {
        "schedulerName": "topobridge",
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": req}}],
    }
    if node is not None:
        spec["nodeName"] = node
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if gang:
        meta["labels"] = {GANG_LABEL: gang}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def podgroup(name: str, members: int, layer: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "train"}
    if layer:
        meta["annotations"] = {
            SPEC: json.dumps({"gatherStrategy": [{"layer": layer, "strategy": "MustGather"}]})
        }
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": {"minMember": members},
    }


def cluster(n_nodes: int, seed: int = 11) -> list[dict[str, Any]]:
    """The cluster described in the module docstring, as plain objects."""
    rng = random.Random(seed)
    cnt = cluster_network_topology().to_dict()
    out: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.koordinator.sh/v1alpha1", "kind": "ClusterNetworkTopology", **cnt}
    ]
    alloc = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}
    busy: dict[str, float] = {}
    gangs = 0
    for first in range(0, n_nodes, 8):
        spine = topology_labels(first)["network.topology.nvidia.com/spine"]
        level = busy.setdefault(spine, rng.choice((0.05, 0.3, 0.55, 0.8, 0.97)))
        names = [f"node-{v}" for v in range(first, min(first + 8, n_nodes))]
        for v, name in enumerate(names, start=first):
            labels = {**topology_labels(v), "kubernetes.io/hostname": name}
            meta = {"name": name, "labels": labels}
            out.append(
                {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"allocatable": alloc}}
            )
        if rng.random() < level and len(names) == 8:
            gang = f"train-{gangs}"
            gangs += 1
            out.append(podgroup(gang, 8, "AcceleratorLayer"))
            out += [
                pod(f"{gang}-{i}", "train", gpus=8, cpu=32, node=n, gang=gang) for i, n in enumerate(names)
            ]
            continue
        for n in names:
            if rng.random() < level:
                out.append(pod(f"svc-{n}", "svc", gpus=rng.choice((2, 4, 6)), cpu=8, node=n))
    for gang, size, layer in (("llm-pretrain", 512, "SpineLayer"), ("moe-finetune", 16, "AcceleratorLayer")):
        out.append(podgroup(gang, size, layer))
        out += [pod(f"{gang}-{i}", "train", gpus=8, cpu=32, node=None, gang=gang) for i in range(size)]
    return out


def measure_model(objects: list[dict[str, Any]], runs: int) -> dict[str, Any]:
    times: list[float] = []
    m = None
    for _ in range(runs):
        t0 = time.perf_counter()
        m = model.build(objects)
        times.append((time.perf_counter() - t0) * 1000)
    assert m is not None
    page = json.dumps(model.page(m), separators=(",", ":"))
    index = m.index
    block = next((m.drawn.ids[d] for d in range(index.n_domains) if index.dom_tier[d] == 2), "cluster")
    zoom = json.dumps(model.subtree(m, block), separators=(",", ":"))
    return {
        "build_ms": round(statistics.median(times)),
        "page_kb": round(len(page) / 1024, 1),
        "zoom_kb": round(len(zoom) / 1024, 1),
        "zoom_id": block,
    }


Timed = tuple[float, float]
"""(wall ms, CPU ms of this thread)."""


def timed(fn: Any) -> tuple[Any, Timed]:
    wall, cpu = time.perf_counter(), time.thread_time()
    out = fn()
    return out, ((time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000)


def _replace(objects: list[dict[str, Any]], old: dict[str, Any], new: dict[str, Any]) -> model.Change:
    objects[objects.index(old)] = new
    return old, new


def bind_change(objects: list[dict[str, Any]], rnd: int) -> model.Change:
    """moe-finetune-0 bound to the first node without pods, or (odd rounds) unbound again."""
    old = next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == "moe-finetune-0")
    new = copy.deepcopy(old)
    if rnd % 2 == 0:
        busy = {o["spec"].get("nodeName") for o in objects if o["kind"] == "Pod"}
        new["spec"]["nodeName"] = next(
            o["metadata"]["name"]
            for o in objects
            if o["kind"] == "Node" and o["metadata"]["name"] not in busy
        )
    else:
        new["spec"].pop("nodeName", None)
    return _replace(objects, old, new)


def label_change(objects: list[dict[str, Any]], rnd: int, key: str = "example.com/team") -> model.Change:
    old = next(o for o in objects if o["kind"] == "Node" and o["metadata"]["name"] == "node-3")
    new = copy.deepcopy(old)
    if key == "example.com/team":
        new["metadata"]["labels"][key] = f"team-{rnd}"
    else:  # node-3 moves between the NVLink domains of node-0 and node-8
        donor = "node-8" if rnd % 2 == 0 else "node-0"
        other = next(o for o in objects if o["kind"] == "Node" and o["metadata"]["name"] == donor)
        new["metadata"]["labels"][key] = other["metadata"]["labels"][key]
    return _replace(objects, old, new)


def measure_updates(n_nodes: int, rounds: int) -> dict[str, Any]:
    """Update vs rebuild at `n_nodes` (module docstring): medians (`update_runs`)."""
    return summarise(n_nodes, update_runs(n_nodes, rounds))


def summarise(n_nodes: int, runs: dict[str, list[Timed]]) -> dict[str, Any]:
    return {
        f"{name}_ms@{n_nodes}": round(statistics.median(w for w, _ in got)) for name, got in runs.items()
    } | {
        f"{name}_cpu_ms@{n_nodes}": round(statistics.median(c for _, c in got)) for name, got in runs.items()
    }


def update_runs(n_nodes: int, rounds: int) -> dict[str, list[Timed]]:
    """Update vs rebuild at `n_nodes` (module docstring); medians and every run."""
    objects = cluster(n_nodes)
    nvlink = next(k for k in topology_labels(0) if "accelerator" in k or "clique" in k or "nvlink" in k)
    m = model.build(objects)
    changes = {
        "bind": bind_change,
        "label": label_change,
        "topology_label": lambda objs, rnd: label_change(objs, rnd, nvlink),
    }
    runs: dict[str, list[Timed]] = {name: [] for name in [*changes, "rebuild"]}
    for rnd in range(rounds):
        for name, make in changes.items():
            change = make(objects, rnd)

            def update(change: model.Change = change) -> dict[str, Any]:
                assert model.update(m, [change]), "the update was not applied"
                return model.page(m)

            def rebuild() -> dict[str, Any]:
                return model.page(model.build(objects))

            steps = [("update", update), ("rebuild", rebuild)] if name == "bind" else [("update", update)]
            pages = {}
            for what, fn in steps if rnd % 2 == 0 else steps[::-1]:
                pages[what], spent = timed(fn)
                runs[name if what == "update" else "rebuild"].append(spent)
            if "rebuild" in pages:
                assert pages["update"] == pages["rebuild"], "the update's page is not the rebuild's"
    for name, got in runs.items():
        shown = ", ".join(f"{w:.0f}/{c:.0f}" for w, c in got)
        print(f"  {n_nodes} nodes {name}: wall/cpu ms per run {shown}", flush=True)
    return runs


def compare(before: str, sizes: list[int], rounds: int, runs: int) -> None:
    """This checkout's updates beside `before`'s (module docstring), one process per round."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        checkouts = {"": ROOT, "base_": export_tree(before, Path(tmp))}
        for size in sizes:
            got: dict[str, dict[str, list[Timed]]] = {p: {} for p in checkouts}
            for r in range(rounds):
                order = list(checkouts.items()) if r % 2 == 0 else list(checkouts.items())[::-1]
                for prefix, checkout in order:
                    print(
                        f"round {r}: {size} nodes, {before if prefix else 'this checkout'} ({checkout})",
                        flush=True,
                    )
                    cmd = [sys.executable, __file__, "--one-size", str(size), "--update-runs", str(runs)]
                    env = {**os.environ, "TOPOBRIDGE_ROOT": str(checkout)}
                    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
                    print(done.stdout.rsplit("\n", 2)[0], flush=True)
                    for name, timed_runs in json.loads(done.stdout.splitlines()[-1]).items():
                        got[prefix].setdefault(name, []).extend(tuple(t) for t in timed_runs)
            for prefix, runs_of in got.items():
                out |= {prefix + k: v for k, v in summarise(size, runs_of).items()}
    print(f"summary: before={before} " + " ".join(f"{_summary_key(k)}={v}" for k, v in out.items()))


def _summary_key(key: str) -> str:
    """`update_` before an update's figure (not a rebuild's), after REF's `base_`."""
    prefix, bare = ("base_", key[5:]) if key.startswith("base_") else ("", key)
    return prefix + (bare if bare.startswith("rebuild") else f"update_{bare}")


def serve(path: Path) -> tuple[subprocess.Popen[str], str]:
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    argv = [sys.executable, "-m", "topobridge.cli", "--log-level", "warning", "ui", "--port", "0"]
    argv += ["--from", str(shown)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    found = re.search(r"serving (http://\S+) ", proc.stdout.readline())
    assert found, "topobridge ui did not start"
    url = found.group(1)
    for _ in range(1200):  # the model is built before the page is timed
        try:
            with urllib.request.urlopen(url + "api/view", timeout=60):
                return proc, url
        except urllib.error.HTTPError:
            time.sleep(0.25)
    raise SystemExit("topobridge ui: no model after 5 minutes")


def browser(width: int, height: int) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in (*FLAGS, f"--window-size={width},{height}", f"--user-data-dir={tempfile.mkdtemp()}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(driver: Any, script: str, limit: float = 300.0) -> Any:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.2)
    raise SystemExit(f"timed out waiting for: {script}")


EXPLAINED = "return [...document.querySelectorAll('details.gang[open] .explain')].every(e => !e.textContent.includes('asking'))"


def whole(driver: Any) -> None:
    """The window as tall as the page, scrolled to the top: the screenshot shows all of it."""
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(1500, min(max(height + 140, 900), 1600))
    driver.execute_script("window.scrollTo(0, 0)")
    time.sleep(0.5)


def first_draw(path: Path, screenshot: Path | None, *, what_if: bool, zoom_id: str | None) -> float:
    proc, url = serve(path)
    driver = browser(1500, 1250 if what_if else 1000)
    try:
        driver.get(url)
        wait(driver, "return performance.getEntriesByName('topobridge:first-draw').length")
        ms = float(
            driver.execute_script("return performance.getEntriesByName('topobridge:first-draw')[0].startTime")
        )
        wait(driver, EXPLAINED)
        if what_if:
            driver.find_element("id", "whatif-text").send_keys(WHAT_IF)
            driver.find_element("id", "whatif-run").click()
            wait(driver, "return document.querySelector('#whatif-result .answer')")
        if screenshot is not None:
            whole(driver)
            driver.save_screenshot(str(screenshot))
            if zoom_id:
                driver.execute_script(
                    "arguments[0].dispatchEvent(new MouseEvent('click'))",
                    driver.find_element("css selector", f'#tree g.cell[data-id="{zoom_id}"]'),
                )
                wait(driver, "return document.querySelectorAll('#tree g.cell[data-kind=node]').length")
                whole(driver)
                driver.save_screenshot(str(screenshot.with_name(screenshot.stem + "-zoomed.png")))
        return ms
    finally:
        driver.quit()
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", action="store_true", help="the seed's 12-node cluster, with a what-if")
    ap.add_argument("--screenshot", type=Path, default=None, help="save the page as PNG")
    ap.add_argument("--keep", type=Path, default=None, help="write the cluster here (default: a temp file)")
    ap.add_argument(
        "--update-sizes",
        type=int,
        nargs="*",
        default=None,
        metavar="NODES",
        help="default: 10000 35000 (none with --seed)",
    )
    ap.add_argument("--update-runs", type=int, default=2, help="rounds of each change per size")
    ap.add_argument("--no-browser", action="store_true", help="no first draw (no chromium needed)")
    ap.add_argument("--before", default=None, metavar="REF", help="updates only, beside commit REF's")
    ap.add_argument("--before-rounds", type=int, default=2, help="processes per checkout per size")
    ap.add_argument("--one-size", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one_size is not None:
        print(json.dumps(update_runs(args.one_size, args.update_runs)))
        return
    if args.before is not None:
        sizes = args.update_sizes if args.update_sizes is not None else [10_000, 35_000]
        compare(args.before, sizes, args.before_rounds, args.update_runs)
        return
    updates: dict[str, Any] = {}
    for size in args.update_sizes if args.update_sizes is not None else [] if args.seed else [10_000, 35_000]:
        updates |= measure_updates(size, args.update_runs)
    if args.seed:
        path = ROOT / "controller" / "placer" / "demo" / "example-2.yaml"
        from topobridge.inputs import read_inputs

        objects = [loc.obj for loc in read_inputs([str(path)]).objects]
    else:
        objects = cluster(args.nodes)
        path = args.keep or Path(tempfile.mkdtemp()) / f"cluster-{args.nodes}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    figures = measure_model(objects, args.runs)
    nodes = sum(1 for o in objects if o["kind"] == "Node")
    zoom = None if args.seed else figures["zoom_id"]
    drawn = -1.0 if args.no_browser else first_draw(path, args.screenshot, what_if=args.seed, zoom_id=zoom)
    print(
        json.dumps(
            {"nodes": nodes, "objects": len(objects), **figures, "first_draw_ms": round(drawn), **updates}
        )
    )
    print(
        f"summary: nodes={nodes} objects={len(objects)} build_ms={figures['build_ms']} "
        f"page_kb={figures['page_kb']} zoom_kb={figures['zoom_kb']} first_draw_ms={round(drawn)} "
        + " ".join(
            f"update_{k}={v}" if not k.startswith("rebuild") else f"{k}={v}" for k, v in updates.items()
        )
    )


if __name__ == "__main__":
    main()
