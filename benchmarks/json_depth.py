"""What reading JSON with a bounded depth costs, beside reading it unbounded.

Texts, each about 1.5 MiB (the largest object the API server stores) as one list response:
* `plain`: 3,500 pods, nothing unusual: orjson reads it, no depth scan (the common case);
* `long-int`: the same with one 20-digit integer: orjson would read it as a float, so the
  standard library reads it, after the vectorised depth scan;
* `deep`: the same with one pod whose `managedFields[0].fieldsV1` nests 1,100 levels: orjson
  refuses it, the scan finds the value, cuts it out, and orjson reads the rest
  (`loads_bounded`, the read path's call); before, `json.loads` raised RecursionError here.

Timed regions: `jsontext.loads_bounded(text)` alone, and `json.loads(text)` (the unbounded
standard library, for comparison; `deep` has none: it raises). Run side by side, alternating
order, `--runs` times each; the median wall and CPU milliseconds are printed.

    .venv/bin/python benchmarks/json_depth.py [--runs 7]

Last line: `summary: plain_ms=... plain_cpu_ms=... plain_json_ms=... ... deep_ms=... deep_cpu_ms=...
scan_share=...` (wall and CPU medians per region; `scan_share`: the long-int read's CPU over the
standard library's, the price of the scan where it runs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from translations import jsontext


def _pod(i: int, fields: str = "{}") -> str:
    return json.dumps(
        {
            "metadata": {
                "name": f"pod-{i}",
                "namespace": "default",
                "labels": {"app": "train", "index": str(i)},
                "managedFields": [{"manager": "kubelet", "operation": "Update", "fieldsV1": "FIELDS"}],
            },
            "spec": {
                "schedulerName": "topobridge",
                "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}],
            },
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]},
        }
    ).replace('"FIELDS"', fields)


def texts() -> dict[str, bytes]:
    pods = [_pod(i, '{"f:metadata": {"f:labels": {".": {}}}}') for i in range(3_500)]
    head, tail = '{"kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": [', "]}"
    deep = '{"f:a":' * 1_100 + "{}" + "}" * 1_100
    return {
        "plain": (head + ", ".join(pods) + tail).encode(),
        "long_int": (
            head + ", ".join([*pods[:-1], pods[-1].replace('"1"}', '"1"}, "n": 12345678901234567890')]) + tail
        ).encode(),
        "deep": (head + ", ".join([*pods[:-1], _pod(3_499, deep)]) + tail).encode(),
    }


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    cases = texts()
    regions: dict[str, Callable[[], Any]] = {}
    for name, text in cases.items():
        regions[name] = lambda text=text: jsontext.loads_bounded(text)
        if name != "deep":
            regions[f"{name}_json"] = lambda text=text: json.loads(text)
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in regions}
    order = list(regions)
    for run in range(args.runs):
        for key in order if run % 2 == 0 else reversed(order):
            samples[key].append(timed(regions[key]))
    median: dict[str, float] = {}
    for key, runs in samples.items():
        median[key] = statistics.median(w for w, _ in runs)
        median[f"{key}_cpu"] = statistics.median(c for _, c in runs)
        size = len(cases[key.removesuffix("_json")]) / 2**20
        print(f"{key:>14}: {size:.2f} MiB  wall {median[key]:7.1f} ms  cpu {median[f'{key}_cpu']:7.1f} ms")
    print(
        "summary: "
        + " ".join(f"{k}_ms={v:.1f}" for k, v in median.items())
        + f" scan_share={median['long_int_cpu'] / median['long_int_json_cpu']:.2f}"
    )


if __name__ == "__main__":
    main()
