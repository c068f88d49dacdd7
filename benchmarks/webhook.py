"""Admission latency on loopback: topobridge's webhook against the floor.

The floor is a minimal aiohttp HTTPS endpoint that returns a fixed AdmissionReview without
reading the object: what the transport alone costs. Both servers run in a process of their
own with the same certificate; the client (aiohttp, keep-alive, TLS) runs here with 1, 16 and
64 concurrent clients, each sending its requests back to back. Request counts are bounded.

Goal: at 64 clients, p99 <= 5 ms and <= 1.5x the floor's p99. The figures are printed, never
asserted.

    python benchmarks/webhook.py [--requests N] [--payload lws|pod]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CONCURRENCY = (1, 16, 64)
TARGETS = ("floor", "topobridge")
FLOOR_BODY = json.dumps(
    {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": "3c6b4f1e-0000-4000-8000-000000000001", "allowed": True},
    }
).encode()


def _lws() -> dict[str, Any]:
    container = {
        "name": "worker",
        "image": "registry.example/llm:1.0",
        "command": ["python", "-m", "train"],
        "resources": {
            "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8"},
            "limits": {"nvidia.com/gpu": "8"},
        },
        "env": [{"name": f"VAR_{i}", "value": str(i)} for i in range(10)],
    }
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "llm", "namespace": "default", "labels": {"app": "llm"}},
        "spec": {
            "replicas": 4,
            "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            "leaderWorkerTemplate": {
                "size": 8,
                "subGroupPolicy": {"subGroupSize": 4},
                "workerTemplate": {"spec": {"containers": [container]}},
            },
        },
    }


def _pod() -> dict[str, Any]:
    a = "gang.scheduling.koordinator.sh/"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "worker-3",
            "namespace": "default",
            "labels": {"pod-group.scheduling.sigs.k8s.io": "train"},
            "annotations": {
                f"{a}network-topology-index": "3",
                f"{a}network-topology-spec": json.dumps(
                    {"gatherStrategy": [{"layer": "BlockLayer", "strategy": "MustGather"}]}
                ),
            },
        },
        "spec": {"containers": [{"name": "w", "image": "busybox", "resources": {"requests": {"cpu": "8"}}}]},
    }


PAYLOADS = {
    "lws": ("/validate/leaderworkersets", "leaderworkerset.x-k8s.io", "LeaderWorkerSet", _lws),
    "pod": ("/validate/pods", "", "Pod", _pod),
}


def review_body(payload: str) -> tuple[str, bytes]:
    path, group, kind, make = PAYLOADS[payload]
    return path, json.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "3c6b4f1e-0000-4000-8000-000000000001",
                "kind": {"group": group, "version": "v1", "kind": kind},
                "resource": {"group": group, "version": "v1", "resource": "x"},
                "operation": "CREATE",
                "namespace": "default",
                "name": "x",
                "object": make(),
                "userInfo": {"username": "bench"},
            },
        }
    ).encode()


# --- servers (each in a process of its own) ----------------------------------------------------


def _run_server(which: str, cert: str, key: str, ports: Any) -> None:
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))

    async def main() -> None:
        from aiohttp import web

        if which == "topobridge":
            from webhooks.server import ServerSettings, WebhookServer
            from webhooks.state import InMemoryStateSource

            sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "webhooks"))
            from webhook_corpus import CLUSTER_OBJECTS

            server = WebhookServer(
                ServerSettings(host="127.0.0.1", port=0, metrics_port=None, cert_file=cert, key_file=key),
                InMemoryStateSource(CLUSTER_OBJECTS, synced=True),
            )
            await server.start()
            ports.put(server.port)
        else:
            from webhooks.tls import server_context

            async def fixed(request: web.Request) -> web.Response:
                await request.read()
                return web.Response(body=FLOOR_BODY, content_type="application/json")

            app = web.Application()
            app.router.add_post("/{tail:.*}", fixed)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_context(cert, key))
            await site.start()
            ports.put(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        await asyncio.Event().wait()

    asyncio.run(main())


# --- client ------------------------------------------------------------------------------------


async def _measure(
    port: int, ca: bytes, path: str, body: bytes, clients: int, requests: int
) -> dict[str, float]:
    import aiohttp

    ctx = ssl.create_default_context(cadata=ca.decode())
    conn = aiohttp.TCPConnector(ssl=ctx, limit=clients)
    latencies: list[float] = []
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=conn, base_url=f"https://127.0.0.1:{port}") as s:

        async def worker(n: int, record: bool) -> None:
            for _ in range(n):
                t0 = time.perf_counter()
                async with s.post(path, data=body, headers=headers) as r:
                    await r.read()
                    if r.status != 200:
                        raise RuntimeError(f"HTTP {r.status}")
                if record:
                    latencies.append(time.perf_counter() - t0)

        await asyncio.gather(
            *(worker(max(5, 200 // clients), False) for _ in range(clients))
        )  # warm connections
        started = time.perf_counter()
        await asyncio.gather(*(worker(requests // clients, True) for _ in range(clients)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "p50": statistics.median(latencies) * 1e3,
        "p99": latencies[int(0.99 * (len(latencies) - 1))] * 1e3,
        "rps": len(latencies) / elapsed,
        "n": len(latencies),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--requests", type=int, default=3200, help="requests per concurrency level (default 3200)"
    )
    parser.add_argument("--payload", choices=sorted(PAYLOADS), default="lws")
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating rounds; figures are medians (default 3)"
    )
    args = parser.parse_args(argv)

    from webhooks.tls import generate_self_signed

    made = generate_self_signed(["127.0.0.1"])
    cert, key = made.write(tempfile.mkdtemp(prefix="topobridge-bench-"))
    path, body = review_body(args.payload)
    ctx = mp.get_context("spawn")
    ports: dict[str, int] = {}
    procs = []
    try:
        for target in TARGETS:
            queue = ctx.Queue()
            proc = ctx.Process(target=_run_server, args=(target, str(cert), str(key), queue), daemon=True)
            proc.start()
            procs.append(proc)
            ports[target] = queue.get(timeout=30)
        # Rounds alternate the two targets level by level, so load from elsewhere on the
        # machine falls on both alike; each figure is the median over the rounds.
        Runs = dict[int, list[dict[str, float]]]
        rounds: dict[str, Runs] = {t: {c: [] for c in CONCURRENCY} for t in TARGETS}
        for _ in range(args.rounds):
            for clients in CONCURRENCY:
                for target in TARGETS:
                    per_round = max(clients, args.requests // args.rounds)
                    rounds[target][clients].append(
                        asyncio.run(_measure(ports[target], made.ca_pem, path, body, clients, per_round))
                    )
    finally:
        for proc in procs:
            proc.terminate()
            proc.join(5)

    def medians(runs: list[dict[str, float]]) -> dict[str, float]:
        return {k: statistics.median(r[k] for r in runs) for k in ("p50", "p99", "rps")}

    results = {t: {c: medians(runs) for c, runs in by.items()} for t, by in rounds.items()}

    print(
        f"payload: {args.payload} review, {len(body)} bytes; {args.requests} requests per level "
        f"in {args.rounds} alternating rounds (medians); "
        "HTTPS keep-alive"
    )
    print(f"{'target':<11} {'clients':>7} {'p50 ms':>8} {'p99 ms':>8} {'req/s':>8}")
    for target, by_level in results.items():
        for clients, r in by_level.items():
            print(f"{target:<11} {clients:>7} {r['p50']:>8.2f} {r['p99']:>8.2f} {r['rps']:>8.0f}")
    print()
    for clients in CONCURRENCY:
        ours, floor = results["topobridge"][clients], results["floor"][clients]
        print(
            f"{clients:>2} clients: p99 ratio topobridge/floor = {ours['p99'] / floor['p99']:.2f}, "
            f"p50 ratio = {ours['p50'] / floor['p50']:.2f}, "
            f"throughput ratio = {ours['rps'] / floor['rps']:.2f}"
        )
    top = results["topobridge"][64]
    ratio = top["p99"] / results["floor"][64]["p99"]
    print(
        f"goal at 64 clients: p99 <= 5 ms: {'met' if top['p99'] <= 5 else 'NOT met'} ({top['p99']:.2f} ms); "
        f"p99 <= 1.5x floor: {'met' if ratio <= 1.5 else 'NOT met'} ({ratio:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
