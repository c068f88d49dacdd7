"""`topobridge simulate` and `topobridge run` decide the same, on the real API server.

Random scenarios (TOPOBRIDGE_DIFF_SCENARIOS, default 25, drawn from the fixed seed `SEED`, or
from TOPOBRIDGE_DIFF_SEED to replay or explore another) run one after another through one
`topobridge run` process on the local control plane, each in its own namespace on its own nodes: a few nodes under the
ClusterNetworkTopology (some tainted), running pods of three priorities (some in gangs, some
under a PodDisruptionBudget), and one pending gang (rank-indexed, sometimes a leader of its own
shape, sometimes tolerating the taint, sometimes constrained to a block or a spine, sometimes of
a priority that preempts). The gang's PodGroup is created last, so the scheduler sees the whole
gang at once, as the simulator does. Meanwhile the controller translates each Koordinator gang
for Volcano (a PodGroup, an annotation on every member), racing the scheduler: the dry run
never sees the pending gang's translation, so the gang must mean the same with or without it.

Just before that, the whole cluster is read back from the API server as the live scheduler
watches it (every kind, every namespace: what `simulate --from-cluster` reads) and given, with
the scenario's PodGroup, to `topobridge simulate -o json` (the real command, in a
subprocess); its result for the scenario's namespace is compared. When the live run has
settled (nothing terminating, every pending pod bound or reported, no change for a while), the
binds, evictions and unschedulable gangs read back from the API server must equal the
simulator's. Both run with their defaults: each attempt's search is limited by the default
`--attempt-budget`, counted in steps, so a search cut short stops at the same step in the live
process and in the dry run whatever the load. The second test proves it: the same comparison
with both CPUs kept busy by two busy-loop processes it starts and always stops, and not one
attempt stopped by the wall-clock guard instead (the log would say
`scheduler.attempt_guard_fired`). Pending pods carry a nodeSelector for their scenario, so
nodes of other tests (or of earlier scenarios) never take them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from controller.errors import AlreadyExistsError, NotFoundError
from controller.kube import JsonDict, Kube
from controller.resources import (
    CLUSTER_NETWORK_TOPOLOGIES,
    NODES,
    PDBS_V1BETA1,
    PODS,
    PRIORITY_CLASSES,
    SIGS_PODGROUPS,
)
from e2e import local
from e2e.kubelet import Kubelet
from topobridge.snapshot_io import read_objects
from translations.core import Pod
from translations.gangs import membership

pytestmark = pytest.mark.integration

SCHEDULER = "diff-scheduler"
SEED = 20261127
"""The scenarios' seed: the gate draws the same ones on every run (TOPOBRIDGE_DIFF_SEED replays
or explores another)."""
BUSY_FIRST = 100
"""The busy run numbers its scenarios from here (other nodes, other labels than the quiet run's)."""
BUSY_SCENARIOS = 10
SCENARIO_LABEL = "diff.topobridge.io/scenario"
SPINE, BLOCK = "network.topology.nvidia.com/spine", "network.topology.nvidia.com/block"
PRIORITIES = {"diff-low": 0, "diff-mid": 100, "diff-high": 1000}
TAINT = {"key": "diff.topobridge.io/dedicated", "value": "x", "effect": "NoSchedule"}
SETTLE_SECONDS = 2.0
BATCH = 5
"""Scenarios in flight at once (own namespaces, own nodes, gates opened together)."""


# --- scenarios -------------------------------------------------------------------------------


@dataclass
class Scenario:
    index: int
    namespace: str
    nodes: list[JsonDict] = field(default_factory=list)
    running: list[JsonDict] = field(default_factory=list)
    """Bound pods, PodGroups of running gangs, PodDisruptionBudgets."""
    pending: list[JsonDict] = field(default_factory=list)
    """The pending gang's pods."""
    gate: JsonDict = field(default_factory=dict)
    """The pending gang's PodGroup, created last."""
    features: set[str] = field(default_factory=set)


def _pod(
    name: str,
    namespace: str,
    *,
    cpu: int,
    priority: str,
    node: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    scenario: int | None = None,
    tolerate: bool = False,
) -> JsonDict:
    spec: JsonDict = {
        "schedulerName": SCHEDULER,
        "priorityClassName": priority,
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": f"{cpu}m", "memory": "1Gi"}}}
        ],
    }
    if node is not None:
        spec["nodeName"] = node
    if scenario is not None:
        spec["nodeSelector"] = {SCENARIO_LABEL: f"s{scenario}"}
    if tolerate:
        spec["tolerations"] = [{"key": TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}]
    meta: JsonDict = {"name": name, "namespace": namespace, "labels": labels or {}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _podgroup(name: str, namespace: str, min_member: int, gather: str | None = None) -> JsonDict:
    meta: JsonDict = {"name": name, "namespace": namespace}
    if gather is not None:
        spec = {"gatherStrategy": [{"layer": gather, "strategy": "MustGather"}]}
        meta["annotations"] = {"gang.scheduling.koordinator.sh/network-topology-spec": json.dumps(spec)}
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": {"minMember": min_member},
    }


FORCED = {0: "unschedulable", 1: "preempt"}
"""Scenarios whose outcome kind is fixed, so every run covers a gang that cannot fit and one
that must preempt whatever the seed draws (the draws are still made: a seed replays)."""


def make_scenario(rng: random.Random, index: int, namespace: str) -> Scenario:
    """Nodes, then what runs on them, then the pending gang; every draw in one fixed order, so a
    seed replays."""
    sc = Scenario(index, namespace)
    forced = FORCED.get(index % BUSY_FIRST)
    n_nodes = rng.randint(3, 6)
    tainted = rng.random() < 0.35 and forced != "preempt"
    node_cpu = _add_nodes(sc, rng, n_nodes, tainted=tainted)
    if tainted:
        sc.features.add("tainted nodes")
    _add_running(sc, rng, node_cpu, forced)
    _add_pending_gang(sc, rng, tainted=tainted, forced=forced)
    return sc


def _add_nodes(sc: Scenario, rng: random.Random, n_nodes: int, *, tainted: bool) -> dict[str, int]:
    """The scenario's nodes (every other one tainted when `tainted`); name -> millicores."""
    node_cpu: dict[str, int] = {}
    for j in range(n_nodes):
        name = f"diff{sc.index}-n{j}"
        cpu = rng.choice((4, 8, 8))
        node_cpu[name] = cpu * 1000
        spec: JsonDict = {}
        if tainted and j % 2 == 1:
            spec["taints"] = [TAINT]
        sc.nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {
                        "kubernetes.io/hostname": name,
                        SCENARIO_LABEL: f"s{sc.index}",
                        SPINE: f"d{sc.index}-spine-{j // 4}",
                        BLOCK: f"d{sc.index}-block-{j // 2}",
                    },
                },
                "spec": spec,
                "status": {"allocatable": {"cpu": str(cpu), "memory": "64Gi", "pods": "110"}},
            }
        )
    return node_cpu


def _add_running(sc: Scenario, rng: random.Random, node_cpu: dict[str, int], forced: str | None) -> None:
    """Running pods: lone ones and one running gang, on nodes with room; full nodes when the
    scenario must preempt; sometimes a budget over the `web` pods."""
    free = dict(node_cpu)
    names = list(node_cpu)
    if rng.random() < 0.4:
        _add_running_gang(sc, rng, free)
    crowded = rng.random() < 0.4 or forced == "preempt"  # a high-priority gang must preempt
    if forced == "preempt":  # every node full of low-priority pods
        for k, host in enumerate(names):
            if free[host] > 0:
                sc.running.append(
                    _pod(
                        f"full-{k}",
                        sc.namespace,
                        cpu=free[host],
                        priority="diff-low",
                        node=host,
                        labels={"app": "db"},
                    )
                )
                free[host] = 0
    _add_lone_pods(sc, rng, free, crowded=crowded)
    if crowded:
        sc.features.add("crowded")
    if rng.random() < 0.4 and forced != "preempt":
        sc.features.add("pdb")
        minimum: int | str = rng.choice((1, "50%"))
        sc.running.append(
            {
                "apiVersion": "policy/v1beta1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "budget", "namespace": sc.namespace},
                "spec": {"selector": {"matchLabels": {"app": "web"}}, "minAvailable": minimum},
            }
        )


def _add_running_gang(sc: Scenario, rng: random.Random, free: dict[str, int]) -> None:
    """A running gang of two, one pod on each of two hosts that still have a core."""
    hosts = rng.sample(list(free), 2)
    prio = rng.choice(("diff-low", "diff-mid"))
    sc.running.append(_podgroup("run", sc.namespace, rng.choice((1, 2))))
    for k, host in enumerate(hosts):
        if free[host] >= 1000:
            free[host] -= 1000
            sc.running.append(
                _pod(
                    f"run-{k}",
                    sc.namespace,
                    cpu=1000,
                    priority=prio,
                    node=host,
                    labels={"pod-group.scheduling.sigs.k8s.io": "run", "app": "run"},
                )
            )


def _add_lone_pods(sc: Scenario, rng: random.Random, free: dict[str, int], *, crowded: bool) -> None:
    """Lone pods where they fit: a few anywhere, or four per node, all low priority, when crowded."""
    names = list(free)
    n_nodes = len(names)
    for k in range(rng.randint(0, n_nodes + 2) if not crowded else 4 * n_nodes):
        host = names[k % n_nodes] if crowded else rng.choice(names)
        cpu = rng.choice((500, 1000, 2000))
        if free[host] < cpu:
            continue
        free[host] -= cpu
        sc.running.append(
            _pod(
                f"lone-{k}",
                sc.namespace,
                cpu=cpu,
                priority="diff-low" if crowded else rng.choice(("diff-low", "diff-low", "diff-mid")),
                node=host,
                labels={"app": rng.choice(("web", "db"))},
            )
        )


def _add_pending_gang(sc: Scenario, rng: random.Random, *, tainted: bool, forced: str | None) -> None:
    """The pending gang: its pods, rank-indexed, and its PodGroup (created last)."""
    size = rng.randint(1, 4)
    cpu = rng.choice((1000, 2000, 3000, 4000))
    leader = size > 1 and rng.random() < 0.35
    prio = rng.choice(("diff-mid", "diff-high", "diff-high"))
    tolerate = tainted and rng.random() < 0.5
    gather = rng.choice((None, None, "BlockLayer", "SpineLayer"))
    min_member = size if rng.random() < 0.7 else max(1, size - 1)
    if forced == "preempt":  # two small pods: evicting any one full pod makes room
        size, cpu, leader, prio, tolerate, gather, min_member = 2, 1000, False, "diff-high", False, None, 2
    elif forced == "unschedulable":  # larger than any node
        cpu, leader = 64000, False
    if leader:
        sc.features.add("multi-shape gang")
    if prio == "diff-high":
        sc.features.add("may preempt")
    if gather:
        sc.features.add(f"gathered at {gather}")
    for k in range(size):
        sc.pending.append(
            _pod(
                f"gang-{k}",
                sc.namespace,
                cpu=cpu + (1000 if leader and k == 0 else 0),
                priority=prio,
                labels={"pod-group.scheduling.sigs.k8s.io": "gang", "app": "gang"},
                annotations={"gang.scheduling.koordinator.sh/network-topology-index": str(k)},
                scenario=sc.index,
                tolerate=tolerate,
            )
        )
    sc.features.add("rank-indexed gang")
    sc.gate = _podgroup("gang", sc.namespace, min_member, gather)


# --- the run ----------------------------------------------------------------------------------


def _resource(obj: JsonDict) -> Any:
    return {
        "Node": NODES,
        "Pod": PODS,
        "PodGroup": SIGS_PODGROUPS,
        "PodDisruptionBudget": PDBS_V1BETA1,
        "PriorityClass": PRIORITY_CLASSES,
        "ClusterNetworkTopology": CLUSTER_NETWORK_TOPOLOGIES,
    }[obj["kind"]]


async def _create(kube: Kube, obj: JsonDict) -> None:
    res = _resource(obj)
    await kube.create(res, obj, namespace=obj["metadata"].get("namespace") if res.namespaced else None)
    if res is NODES:
        name = obj["metadata"]["name"]
        # A node's status is not taken on create, and admission (TaintNodesByCondition) taints
        # a new node not-ready until a kubelet reports: write both as a kubelet would.
        await kube.merge_patch(NODES, name, {"status": obj["status"]}, subresource="status")
        await kube.merge_patch(NODES, name, {"spec": {"taints": obj["spec"].get("taints")}})


async def read_back(kube: Kube) -> list[JsonDict]:
    """The cluster as the live scheduler reads it: every kind it watches, in every namespace
    (`snapshot_io.read_objects`, what `simulate --from-cluster` reads). Pods of other
    namespaces count: a bound pod with inter-pod terms anywhere, or the number of them, is read
    by the attempt that preempts."""
    return await read_objects(kube)


async def simulate(objects: list[JsonDict], work: Path, name: str) -> JsonDict:
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "topobridge.cli",
        "simulate",
        str(path),
        "-o",
        "json",
        f"--scheduler-names={SCHEDULER}",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    result: JsonDict = json.loads(out)
    return result


def _observed(pods: list[JsonDict]) -> tuple[Any, ...]:
    out = []
    for p in sorted(pods, key=lambda p: p["metadata"]["name"]):
        conds = (p.get("status") or {}).get("conditions") or []
        sched = next((c for c in conds if c.get("type") == "PodScheduled"), {})
        out.append(
            (
                p["metadata"]["name"],
                (p.get("spec") or {}).get("nodeName"),
                bool(p["metadata"].get("deletionTimestamp")),
                sched.get("status"),
                sched.get("message"),
                bool((p.get("status") or {}).get("nominatedNodeName")),
            )
        )
    return tuple(out)


async def settle(
    kube: Kube, namespace: str, pending: set[str], *, timeout: float = 60.0, quiet_for: float = SETTLE_SECONDS
) -> list[JsonDict]:
    """Wait until nothing terminates, every pending pod is bound or told why not (after the
    gate), and nothing has changed for SETTLE_SECONDS."""
    deadline = time.monotonic() + timeout
    last: tuple[Any, ...] | None = None
    since = time.monotonic()
    while True:
        pods = (await kube.list(PODS, namespace=namespace)).items
        seen = _observed(pods)
        if seen != last:
            last, since = seen, time.monotonic()
        quiet = not any(d for _, _, d, _, _, _ in seen)
        # A nominated pod is on its way (its victims are going): not settled until it binds.
        told = all(
            node or (status == "False" and msg and "not found" not in msg and not nominated)
            for name, node, _, status, msg, nominated in seen
            if f"{namespace}/{name}" in pending
        )
        if quiet and told and time.monotonic() - since >= quiet_for:
            return pods
        if time.monotonic() > deadline:
            raise AssertionError(f"{namespace} did not settle: {seen}")
        await asyncio.sleep(0.25)


async def budgets_observed(kube: Kube, namespace: str, *, timeout: float = 15.0) -> None:
    """kube-controller-manager's disruption controller has written the budgets' status (the
    scheduler reads `disruptionsAllowed` when it is there), and it stands still."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        pdbs = (await kube.list(PDBS_V1BETA1, namespace=namespace)).items
        seen = [
            (
                p["metadata"].get("generation"),
                (p.get("status") or {}).get("observedGeneration"),
                p.get("status"),
            )
            for p in pdbs
        ]
        if all(gen == observed for gen, observed, _ in seen) and seen == last:
            return
        last = seen
        await asyncio.sleep(0.5)


@pytest.fixture(scope="module")
async def diff_topobridge(control_plane: Any) -> AsyncIterator[local.TopobridgeState]:
    work = Path(tempfile.mkdtemp(prefix="topobridge-diff-"))
    state = await local.start(
        control_plane.kubeconfig,
        work,
        local.Launch(
            schedulers=(SCHEDULER,),
            register=False,
            extra_args=("--log-level", "debug"),
        ),
    )
    try:
        yield state
    finally:
        await local.stop(state)
        shutil.rmtree(work, ignore_errors=True)


async def test_simulate_equals_run(
    diff_topobridge: local.TopobridgeState, admin: Kube, kubelet: Kubelet, make_namespace: Any
) -> None:
    count = int(os.environ.get("TOPOBRIDGE_DIFF_SCENARIOS", "25"))
    counts = await _compare(diff_topobridge, admin, make_namespace, range(count), _seed())
    if count >= 25:  # the random mix really covered what it is meant to
        assert counts["placed"] >= 5 and counts["unschedulable"] >= 1 and counts["preempted"] >= 1


async def test_simulate_equals_run_with_the_cpus_busy(
    diff_topobridge: local.TopobridgeState, admin: Kube, kubelet: Kubelet, make_namespace: Any
) -> None:
    """Two processes spin on the CPUs while the live run decides and the dry run replays it: the
    attempt budget counts work, not time, so they still agree, and no guard fired."""
    scenarios = range(BUSY_FIRST, BUSY_FIRST + BUSY_SCENARIOS)
    with busy_cpus(2) as spinners:
        counts = await _compare(diff_topobridge, admin, make_namespace, scenarios, _seed() + 1)
        assert all(p.poll() is None for p in spinners), "a busy loop stopped before the comparison ended"
    assert counts["preempted"] >= 1
    log = Path(diff_topobridge.log_file).read_text()
    assert "scheduler.attempt_guard_fired" not in log


@contextlib.contextmanager
def busy_cpus(n: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`n` processes that keep a CPU busy each, stopped (and reaped) however the block ends."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield spinners
    finally:
        for p in spinners:
            p.kill()
        for p in spinners:
            p.wait(timeout=10)


def _seed() -> int:
    return int(os.environ.get("TOPOBRIDGE_DIFF_SEED", str(SEED)))


async def _compare(
    state: local.TopobridgeState, admin: Kube, make_namespace: Any, scenarios: range, seed: int
) -> Counter[str]:
    """Run `scenarios` through run and simulate, batch by batch; fail on any difference."""
    print(f"simulate == run: scenarios {scenarios.start}..{scenarios.stop - 1}, TOPOBRIDGE_DIFF_SEED={seed}")
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="topobridge-diff-sim-"))
    counts: Counter[str] = Counter()
    with contextlib.suppress(NotFoundError):
        await admin.delete(CLUSTER_NETWORK_TOPOLOGIES, "default")
    await _create(admin, CNT)
    for name, value in PRIORITIES.items():
        with contextlib.suppress(AlreadyExistsError):
            await _create(
                admin,
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": name},
                    "value": value,
                },
            )
    failures: list[str] = []
    try:
        for first in range(scenarios.start, scenarios.stop, BATCH):
            batch = range(first, min(scenarios.stop, first + BATCH))
            failures += await run_batch(admin, rng, batch, make_namespace, work, counts)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        with contextlib.suppress(NotFoundError):
            await admin.delete(CLUSTER_NETWORK_TOPOLOGIES, "default")
    print(f"simulate == run: {dict(counts)}; {len(failures)} differ")
    assert not failures, "\n".join(failures) + "\n--- topobridge log ---\n" + _log_of(state, failures)
    assert counts["scenarios"] == len(scenarios)
    return counts


CNT = {
    "apiVersion": "scheduling.koordinator.sh/v1alpha1",
    "kind": "ClusterNetworkTopology",
    "metadata": {"name": "default"},
    "spec": {
        "networkTopologySpec": [
            {"topologyLayer": "SpineLayer", "labelKey": [SPINE]},
            {"topologyLayer": "BlockLayer", "labelKey": [BLOCK], "parentTopologyLayer": "SpineLayer"},
            {"topologyLayer": "NodeTopologyLayer", "parentTopologyLayer": "BlockLayer"},
        ]
    },
}


def _log_of(state: local.TopobridgeState, failures: list[str]) -> str:
    """The scheduler's log lines about the scenarios that differ (it runs at debug level)."""
    names = [f.split("(")[1].split(")")[0] for f in failures]
    lines = Path(state.log_file).read_text().splitlines()
    return "\n".join(line for line in lines if any(n in line for n in names))


def _keep_input(work: Path, index: int, namespace: str) -> Path:
    """Copy a differing scenario's dry-run input out of the work directory (removed at the end),
    so `topobridge simulate` can be run on it again."""
    kept = Path(tempfile.gettempdir()) / f"topobridge-diff-{namespace}.yaml"
    shutil.copyfile(work / f"s{index}.yaml", kept)
    return kept


async def run_batch(
    admin: Kube, rng: random.Random, batch: range, make_namespace: Any, work: Path, counts: Counter[str]
) -> list[str]:
    scenarios = [make_scenario(rng, i, await make_namespace(f"diff-{i}")) for i in batch]
    for sc in scenarios:
        for obj in [*sc.nodes, *sc.running, *sc.pending]:
            await _create(admin, obj)
    # The pods wait for their PodGroups; then the dry run reads the cluster as it stands.
    for sc in scenarios:
        # Long enough for topobridge's informers to hold what the read-back will show.
        await settle(admin, sc.namespace, set(), timeout=30, quiet_for=3.0)
        await budgets_observed(admin, sc.namespace)
    cluster = await read_back(admin)
    befores = [cluster for _ in scenarios]
    sims = [
        asyncio.create_task(simulate([*before, sc.gate], work, f"s{sc.index}"))
        for sc, before in zip(scenarios, befores, strict=True)
    ]
    for sc in scenarios:
        await _create(admin, sc.gate)
    failures: list[str] = []
    for sc, before, sim_task in zip(scenarios, befores, sims, strict=True):
        pending = {f"{sc.namespace}/{p['metadata']['name']}" for p in sc.pending}
        pods = await settle(admin, sc.namespace, pending)
        sim = await sim_task
        live = outcome(before, pods, pending, sc.namespace)
        want = _within(sim, sc.namespace)
        counts["scenarios"] += 1
        counts["placed"] += bool(want["bound"])
        counts["preempted"] += bool(want["evicted"])
        counts["unschedulable"] += bool(want["unschedulable"])
        for f in sc.features:
            counts[f] += 1
        if live != want:
            kept = _keep_input(work, sc.index, sc.namespace)
            failures.append(
                f"scenario {sc.index} ({sc.namespace}): simulate {want} != run {live} "
                f"(the dry run's input: {kept})"
            )
        for node in sc.nodes:
            with contextlib.suppress(NotFoundError):
                await admin.delete(NODES, node["metadata"]["name"])
        for p in pods:
            with contextlib.suppress(NotFoundError):
                await admin.delete(
                    PODS, p["metadata"]["name"], namespace=sc.namespace, grace_period_seconds=0
                )
    return failures


def _within(sim: JsonDict, namespace: str) -> JsonDict:
    """The dry run's result for one scenario's namespace (it read the whole cluster)."""

    def mine(key: str) -> bool:  # `ns/pod`, or a gang's `dialect:ns/name`
        return key.split(":", 1)[-1].startswith(f"{namespace}/")

    return {
        "bound": {k: v for k, v in sim["bound"].items() if mine(k)},
        "evicted": sorted(k for k in sim["evicted"] if mine(k)),
        "unschedulable": sorted(k for k in sim["unschedulable"] if mine(k)),
    }


def outcome(before: list[JsonDict], after: list[JsonDict], pending: set[str], namespace: str) -> JsonDict:
    """What the live run did in `namespace`, read back: pods it bound, pods it removed, gangs
    left pending."""
    initial = {
        f"{o['metadata']['namespace']}/{o['metadata']['name']}"
        for o in before
        if o["kind"] == "Pod" and o["metadata"].get("namespace") == namespace
    }
    now = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in after}
    bound = {
        k: p["spec"]["nodeName"]
        for k, p in sorted(now.items())
        if k in pending and (p.get("spec") or {}).get("nodeName")
    }
    evicted = sorted(k for k in initial if k not in pending and k not in now)
    unschedulable = sorted(
        {
            str(membership(Pod.parse(p))[0])
            for k, p in now.items()
            if not (p.get("spec") or {}).get("nodeName")
        }
    )
    return {"bound": bound, "evicted": evicted, "unschedulable": unschedulable}
