"""`make demo`: topobridge on a local control plane, through the seed's worked examples.

`python -m e2e.demo up`, in phases:

1. cluster     `topobridge dev-cluster up` (etcd + kube-apiserver + controller-manager v1.20.2,
               the project's CRDs), reused when it already runs;
2. topobridge  `topobridge run` (controller + admission webhook, leader-elected, fallback
               scheduler for `koord-scheduler`, `volcano` and `topobridge`) and a kubelet
               stand-in (`e2e.kubelet`: API-only nodes have no kubelet), both in the background;
3. nodes       the seed's 12-node spine/block cluster (8 CPU / 32Gi, labels
               network.topology.nvidia.com/{spine,block}, ClusterNetworkTopology `default`);
               topobridge turns it into HyperNodes;
4. examples    Example 1 (PreferGather, binpack into spine-1), then Example 2 (MustGather with
               topology-aware preemption), each applied into `default` as the guide does, with a
               progress line while it settles and, after, `topobridge tree -n default`'s view:
               free resources per domain, what landed where, pending gangs and why;
5. explore     the cluster stays up; the closing text says how to look around with kubectl.

Every phase waits until the API server serves what the next one needs, never a fixed sleep:
the control plane its namespaces and Established CRDs, topobridge its lease and a webhook the
API server calls (`e2e.local`), the examples' pods a PriorityClass admission has seen
(`e2e.cluster.until_admitted`).

`python -m e2e.demo down` (`make demo-down`) stops topobridge, the kubelet stand-in and the
control plane, by PID. A second `up` starts over from a clean `default` namespace.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from controller.errors import ControllerError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import HYPERNODES, PODS, SIGS_PODGROUPS, VOLCANO_PODGROUPS
from e2e import cluster as clustermod
from e2e import local
from e2e.scenario import LOCAL, Observed, ScenarioRunner, Step, scenario
from topobridge.cmd_tree import cluster_view
from topobridge.cmd_tree import render as render_tree
from topobridge.devcluster import K8S_VERSION, ManagedProcess, _start_ticks, cache_root, default_bin_dir
from topobridge.snapshot_io import read_objects

NAMESPACE = "default"
SEED_CLUSTER = "spine-block-12"
EXAMPLES = (
    ("Example 1: PreferGather (block, then spine) with binpack", "koordinator-prefer-gather"),
    ("Example 2: MustGather to SpineLayer with topology-aware preemption", "seed-preemption"),
)
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def demo_dir() -> Path:
    return cache_root() / "demo"


def state_file() -> Path:
    return demo_dir() / "state.json"


@dataclass
class DemoState:
    kubeconfig: str
    topobridge: dict[str, Any]
    kubelet: dict[str, Any]

    def save(self) -> None:
        demo_dir().mkdir(parents=True, exist_ok=True)
        state_file().write_text(json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls) -> DemoState | None:
        try:
            return cls(**json.loads(state_file().read_text()))
        except (OSError, ValueError, TypeError):
            return None


class Screen:
    """What the demo prints: headings, a progress line redrawn in place on a terminal (one line
    every few seconds otherwise), and blocks of text."""

    def __init__(self, out: TextIO = sys.stdout) -> None:
        self.out = out
        self.tty = out.isatty()
        self._tick = 0
        self._last_plain = 0.0

    def heading(self, text: str) -> None:
        self.out.write(f"\n=== {text}\n")
        self.out.flush()

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def progress(self, text: str) -> None:
        self._tick += 1
        if self.tty:
            self.out.write(f"\r\033[K{SPINNER[self._tick % len(SPINNER)]} {text}")
            self.out.flush()
        elif time.monotonic() - self._last_plain > 3.0:
            self._last_plain = time.monotonic()
            self.line(f"  ... {text}")

    def done(self, text: str) -> None:
        if self.tty:
            self.out.write("\r\033[K")
        self.line(text)


def summary(seen: Observed, names: Sequence[str]) -> str:
    """Counts for the progress line: bound, nominated, pending, evicting."""
    bound = nominated = pending = 0
    for name in names:
        pod = seen.pods.get(name)
        if pod is None:
            continue
        if (pod.get("spec") or {}).get("nodeName"):
            bound += 1
        elif (pod.get("status") or {}).get("nominatedNodeName"):
            nominated += 1
        else:
            pending += 1
    evicting = sum(1 for p in seen.pods.values() if p["metadata"].get("deletionTimestamp"))
    parts = [f"{bound}/{len(names)} bound"]
    if nominated:
        parts.append(f"{nominated} nominated")
    if pending:
        parts.append(f"{pending} pending")
    if evicting:
        parts.append(f"{evicting} evicting")
    return ", ".join(parts) + f"  ({seen.elapsed:.1f}s)"


def waiting_message(seen: Observed, names: Sequence[str]) -> str | None:
    """The scheduler's message on the first waiting pod (the seed's Koordinator format)."""
    for name in names:
        pod = seen.pods.get(name) or {}
        for cond in (pod.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False" and cond.get("message"):
                return f"{name}: {cond['message']}"
    return None


# --- up ----------------------------------------------------------------------------------------


def dev_cluster_up(screen: Screen) -> str:
    """`topobridge dev-cluster up`; returns the kubeconfig path it prints."""
    screen.heading(f"Local control plane (kube-apiserver {K8S_VERSION} + etcd + controller-manager)")
    began = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "topobridge.cli", "--log-format=json", "dev-cluster", "up"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise DemoError(f"topobridge dev-cluster up failed:\n{proc.stderr.strip()[-3000:]}")
    kubeconfig = proc.stdout.strip().splitlines()[-1]
    screen.line(f"ready in {time.monotonic() - began:.1f}s; KUBECONFIG={kubeconfig}")
    return kubeconfig


class DemoError(Exception):
    """The demo cannot go on; the message says what failed."""


def start_kubelet(kubeconfig: str, log_file: Path) -> dict[str, Any]:
    with open(log_file, "ab") as out:
        popen = subprocess.Popen(
            [sys.executable, "-m", "e2e.kubelet", "--kubeconfig", kubeconfig],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=str(Path(__file__).resolve().parent.parent),
            start_new_session=True,
        )
    return {
        "name": "kubelet",
        "pid": popen.pid,
        "start_ticks": _start_ticks(popen.pid),
        "log_file": str(log_file),
    }


def stop_process(info: dict[str, Any], grace: float = 15.0) -> None:
    proc = ManagedProcess(**info)
    proc.signal(signal.SIGTERM)
    if not proc.wait(grace):
        proc.signal(signal.SIGKILL)
        proc.wait(5.0)


async def reset(kube: Kube) -> None:
    """A clean slate for the examples: the demo's objects from an earlier run are removed."""
    for res in (SIGS_PODGROUPS, VOLCANO_PODGROUPS):
        for obj in (await kube.list(res, namespace=NAMESPACE)).items:
            with contextlib.suppress(NotFoundError):
                await kube.delete(res, obj["metadata"]["name"], namespace=NAMESPACE)
    await delete_pods(kube, None)
    await clustermod.delete_cluster(kube, scenario("seed-preemption").cluster_spec())


async def delete_pods(kube: Kube, names: Sequence[str] | None, *, timeout: float = 30.0) -> None:
    """Delete pods of `default` (all when `names` is None) and wait until they are gone."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pods = [
            p
            for p in (await kube.list(PODS, namespace=NAMESPACE)).items
            if names is None or p["metadata"]["name"] in names
        ]
        if not pods:
            return
        for pod in pods:
            with contextlib.suppress(NotFoundError):
                await kube.delete(PODS, pod["metadata"]["name"], namespace=NAMESPACE, grace_period_seconds=0)
        await asyncio.sleep(0.2)
    raise DemoError(f"pods of namespace {NAMESPACE} still there after {timeout:.0f}s")


async def show_tree(kube: Kube, screen: Screen) -> None:
    """What `topobridge tree -n default` prints: the same view, through the demo's client."""
    screen.line(render_tree(cluster_view(await read_objects(kube), namespace=NAMESPACE)))


class AdmissionNotice:
    """Says once per PriorityClass that a create waits for admission to see it."""

    def __init__(self, screen: Screen) -> None:
        self.screen = screen
        self.announced: set[str] = set()

    async def __call__(self, priority_class: str) -> None:
        if priority_class not in self.announced:
            self.announced.add(priority_class)
            self.screen.done(f"  waiting for admission to see PriorityClass {priority_class}")


async def run_example(kube: Kube, screen: Screen, title: str, name: str) -> bool:
    spec = scenario(name)
    screen.heading(title)
    runner = ScenarioRunner(kube, LOCAL, on_admission_wait=AdmissionNotice(screen))
    ok = True
    for step in spec.steps:
        screen.line(f"- {step.name}")
        if step.description:
            screen.line(f"  {step.description}")
        watched = list(step.expect.bound)
        last_message: list[str] = []

        def progress(
            st: Step, seen: Observed, watched: Sequence[str] = watched, last_message: list[str] = last_message
        ) -> None:
            message = waiting_message(seen, watched)
            # While the job's pods are still being created the gang is short of minMember:
            # that says nothing about placement, so it is not shown.
            if message and "fewer than its minMember" not in message and message not in last_message:
                last_message.append(message)
                screen.done(f"  scheduler says {message}")
            screen.progress(summary(seen, watched))

        result = await runner.run_step(step, NAMESPACE, progress=progress)
        if result.ok:
            screen.done(f"  settled in {result.seconds:.1f}s: {summary(result.observed, watched)}")
        else:
            ok = False
            screen.done(f"  NOT as expected after {result.seconds:.1f}s:")
            for failure in result.failures:
                screen.line(f"    - {failure}")
        evicted = sorted(result.observed.disrupted)
        if evicted:
            screen.line(f"  evicted (DisruptionTarget: PreemptionByScheduler): {', '.join(evicted)}")
        await show_tree(kube, screen)
        if not result.ok:
            break
    return ok


async def hypernode_summary(kube: Kube, screen: Screen, *, timeout: float = 30.0) -> None:
    """Wait for topobridge to turn the ClusterNetworkTopology into HyperNodes, then list them."""
    deadline = time.monotonic() + timeout
    items: list[JsonDict] = []
    while time.monotonic() < deadline:
        items = (await kube.list(HYPERNODES)).items
        if len(items) >= 8:
            break
        screen.progress(f"HyperNodes from the ClusterNetworkTopology: {len(items)}")
        await asyncio.sleep(0.3)
    by_tier: dict[int, list[str]] = {}
    for hn in items:
        by_tier.setdefault(int(hn["spec"]["tier"]), []).append(hn["metadata"]["name"])
    text = "; ".join(f"tier {t}: {', '.join(sorted(n))}" for t, n in sorted(by_tier.items()))
    screen.done(f"topobridge made {len(items)} HyperNodes from it ({text})")


async def populate(kubeconfig: str, screen: Screen) -> bool:
    async with await Kube.connect(kubeconfig=kubeconfig) as kube:
        await reset(kube)
        seed = scenario("seed-preemption").cluster_spec()
        screen.heading("The seed's cluster: 12 nodes (8 CPU / 32Gi) in 3 spines and 5 blocks")
        await clustermod.create_nodes(kube, seed)
        await clustermod.create_topology(kube, seed)
        screen.line("ClusterNetworkTopology default: SpineLayer > BlockLayer > NodeTopologyLayer")
        await hypernode_summary(kube, screen)
        await show_tree(kube, screen)
        ok = await run_example(kube, screen, *EXAMPLES[0])
        if ok:
            first = scenario(EXAMPLES[0][1])
            screen.line("\nExample 1's job is removed before Example 2, as the guide assumes idle nodes.")
            names = [o["metadata"]["name"] for s in first.steps for o in s.apply if o["kind"] == "Pod"]
            await delete_pods(kube, names)
            ok = await run_example(kube, screen, *EXAMPLES[1])
        return ok


def explore_text(kubeconfig: str, state: local.TopobridgeState) -> str:
    kubectl = default_bin_dir() / "kubectl"
    if not kubectl.is_file():
        kubectl = Path(shutil.which("kubectl") or "kubectl")
    return f"""
=== The cluster stays up. Explore it:
  export KUBECONFIG={kubeconfig}
  alias kubectl={kubectl}
  alias topobridge={Path(sys.executable).parent / "topobridge"}
  kubectl get nodes -L network.topology.nvidia.com/spine,network.topology.nvidia.com/block
  topobridge tree -n default                    # the topology tree: free resources, gangs, why pending
  kubectl get pods -o wide                      # where Example 2's gang landed
  kubectl get hypernodes                        # the tree topobridge derived from the ClusterNetworkTopology
  kubectl get clusternetworktopology default -o yaml   # status.detailStatus, written by topobridge
  kubectl get podgroups.scheduling.sigs.k8s.io -o yaml # the examples' Koordinator PodGroups
  kubectl get events --field-selector reason=Preempted  # who was evicted, for whom
  kubectl get events --sort-by=.lastTimestamp   # what topobridge did, and why
  curl -s http://127.0.0.1:{state.metrics_port}/metrics | grep ^topobridge_   # its metrics
  topobridge log: {state.log_file}
Try a bad object: the admission webhook answers with the field at fault, e.g.
  kubectl annotate podgroups.scheduling.sigs.k8s.io high-priority-training --overwrite \\
    'gang.scheduling.koordinator.sh/network-topology-spec={{"gatherStrategy":[{{"layer":"SpineLayer","strategy":"MustGathr"}}]}}'
Stop everything with: make demo-down
"""


async def up(screen: Screen) -> int:
    began = time.monotonic()
    old = DemoState.load()
    if old is not None:
        stop_process(old.kubelet)
        await local.stop(local.TopobridgeState(**old.topobridge))
        state_file().unlink(missing_ok=True)
    kubeconfig = dev_cluster_up(screen)
    screen.heading("topobridge run: controller + admission webhook, fallback scheduler (no Volcano here)")
    work = demo_dir()
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    tb = await local.start(kubeconfig, work, local.Launch(detach=True))
    kubelet = start_kubelet(kubeconfig, work / "kubelet.log")
    DemoState(kubeconfig, _tb_dict(tb), kubelet).save()
    screen.line(
        f"leading and serving in {time.monotonic() - t0:.1f}s (webhook https://127.0.0.1:{tb.webhook_port}, "
        f"metrics http://127.0.0.1:{tb.metrics_port}/metrics); pid {tb.pid}"
    )
    screen.line("a kubelet stand-in marks bound pods Running (these nodes are API objects only)")
    try:
        ok = await populate(kubeconfig, screen)
    except ControllerError as exc:
        screen.line(f"\nAPI error: {exc}")
        ok = False
    screen.line(explore_text(kubeconfig, tb))
    screen.line(f"demo {'finished' if ok else 'FAILED'} in {time.monotonic() - began:.1f}s")
    return 0 if ok else 1


def _tb_dict(tb: local.TopobridgeState) -> dict[str, Any]:
    return asdict(tb)


async def down(screen: Screen) -> int:
    state = DemoState.load()
    if state is not None:
        stop_process(state.kubelet)
        await local.stop(local.TopobridgeState.from_json(json.dumps(state.topobridge)))
        state_file().unlink(missing_ok=True)
        screen.line("stopped topobridge and the kubelet stand-in")
    proc = subprocess.run(
        [sys.executable, "-m", "topobridge.cli", "--log-format=json", "dev-cluster", "down"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        screen.line(proc.stderr.strip()[-2000:])
        return proc.returncode
    screen.line("stopped the local control plane")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m e2e.demo", description="topobridge's demo on a local cluster"
    )
    parser.add_argument("action", choices=["up", "down"])
    args = parser.parse_args(argv)
    from topobridge import logs

    logs.configure(level="warning", json_output=False)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    screen = Screen()
    try:
        return asyncio.run(up(screen) if args.action == "up" else down(screen))
    except (DemoError, local.TopobridgeError) as exc:
        screen.line(f"\ndemo: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
