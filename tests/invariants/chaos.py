"""Chaos runs: random work and random failures against a private local control plane, with two
topobridge replicas and the invariant watcher on.

One run, in phases:
1. setup     a private control plane (etcd, kube-apiserver, kube-controller-manager: ReplicaSets
             recreate deleted members, the disruption controller keeps PDB status), a 12-node
             spine/block topology as HyperNodes (2 spines x 2 blocks x 3 nodes, 8 cpu each),
             three PriorityClasses, a kubelet stand-in, two `topobridge run` replicas on one
             Lease, each with faults injected into its client (`faulty_topobridge.py`), and the
             watcher;
2. cycles    until `duration` or `max_cycles`: one random action per cycle (below), then a
             pause of 0.05-0.3 s. Every `disrupt_every` seconds (or `disrupt_every_cycles`
             cycles; both jittered) the cycle is a disruption instead, each kind once per round
             of four, in random order;
3. quiet     faults stop at the end of `duration`; the run waits until no gang is partially
             bound or until the settle window has passed, so every partial gang is judged;
4. verdict   the watcher's violations, the faults counted from the replicas' logs, takeovers.

A cycle is one action, chosen with `random.Random(seed)` (the sequence of choices is
reproducible, and with `max_cycles` and `disrupt_every_cycles` so is which cycle disrupts and how
many cycles run; what the cluster does with them depends on timing):
* work: create a gang in one of five dialects (Volcano PodGroup, Koordinator gang annotations,
  Koordinator/coscheduling PodGroup, scheduler-plugins PodGroup, LWS-labelled pods with their
  Volcano PodGroup), 2-6 members of 2-4 cpu at one of three priorities, a third of them under a
  hard tier-1 or tier-2 constraint; gangs of the first four dialects are ReplicaSets, so their
  deleted members are recreated;
* edits: delete a gang, a pod, a PodGroup (and later restore it), a node (and later restore
  it); raise or lower a PodGroup's minMember; scale a ReplicaSet; add a PodDisruptionBudget;
* disruptions: kube-apiserver SIGSTOP then SIGCONT after 1-4 s; kube-apiserver SIGKILL and
  restart; SIGKILL of the leader (a new standby is started); SIGKILL of the standby;
* injected faults (per request, inside the replicas): a binding reset before it is sent, a
  binding whose response is lost, a pod deletion (eviction, roll-back) answered 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "controller"))  # controller_helpers, the restart helper

from controller_helpers import create_node, hypernode  # noqa: E402
from rawclient import Endpoint  # noqa: E402
from test_apiserver_restart import restart_apiserver  # noqa: E402
from watcher import InvariantWatcher, settle_window, start  # noqa: E402

from controller.errors import AlreadyExistsError, ControllerError, NotFoundError  # noqa: E402
from controller.kube import JsonDict, Kube  # noqa: E402
from controller.resources import (  # noqa: E402
    HYPERNODES,
    NODES,
    PDBS_V1BETA1,
    PODS,
    PRIORITY_CLASSES,
    SIGS_PODGROUPS,
    VOLCANO_PODGROUPS,
    X_PODGROUPS,
    Resource,
)
from e2e import local  # noqa: E402
from e2e.kubelet import Kubelet  # noqa: E402
from topobridge.devcluster import LocalControlPlane  # noqa: E402

NAMESPACE = "chaos"
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet", namespaced=True)
PRIORITIES = {"chaos-low": 100, "chaos-mid": 500, "chaos-high": 1000}
SPINES, BLOCKS, NODES_PER_BLOCK = 2, 2, 3
DIALECTS = ("volcano", "koordinator-annotations", "koordinator", "scheduler-plugins", "lws")
LAUNCHER = HERE / "faulty_topobridge.py"


@dataclass
class ChaosOptions:
    seed: int
    duration: float = 600.0
    """Seconds of cycles (faults stop with them); the quiet phase comes after."""
    max_cycles: int = 1_000_000
    max_gangs: int = 10
    disrupt_every: float = 40.0
    """Mean seconds between disruptions (0: none)."""
    disrupt_every_cycles: int = 0
    """Mean cycles between disruptions; when set, it replaces `disrupt_every`, so which cycles
    disrupt is a function of the seed, not of how fast the machine runs them."""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    bind_deadline: float = 8.0
    bind_reset: float = 0.05
    bind_lost: float = 0.05
    evict_error: float = 0.2
    max_outage: float = 20.0
    """The longest API-server outage a disruption may cause (stop, or kill to ready)."""
    keep: bool = False
    """Keep the work directory (logs) after the run."""

    @property
    def settle(self) -> float:
        return settle_window(
            lease_duration=self.lease_duration,
            retry_period=self.retry_period,
            bind_retry_deadline=self.bind_deadline,
            outage=self.max_outage,
        )


@dataclass
class Gang:
    name: str
    dialect: str
    size: int
    owner: Resource | None
    podgroup: Resource | None
    podgroup_body: JsonDict | None = None


@dataclass
class ChaosReport:
    seed: int
    cycles: int = 0
    actions: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    takeovers: list[float] = field(default_factory=list)
    gangs_created: int = 0
    gangs_placed: int = 0
    bindings: int = 0
    victims: int = 0
    violations: list[str] = field(default_factory=list)
    seconds: float = 0.0
    work_dir: str = ""
    unreaped: list[int] = field(default_factory=list)
    """Replicas this run started that its end left running or unreaped (none, when it is right)."""

    def summary(self) -> str:
        faults = {**self.faults}
        disruptions = {
            k: self.actions[k] for k in ("apiserver_stop", "apiserver_restart", "kill_leader", "kill_standby")
        }
        parts = [
            f"seed={self.seed}",
            f"cycles={self.cycles}",
            f"faults={sum(faults.values()) + sum(disruptions.values())}",
            *(f"{k}={v}" for k, v in sorted({**faults, **disruptions}.items())),
            f"takeover_max_s={max(self.takeovers, default=0.0):.1f}",
            f"gangs_created={self.gangs_created}",
            f"bindings={self.bindings}",
            f"victims={self.victims}",
            f"seconds={self.seconds:.0f}",
            f"gangs={self.gangs_placed}",
            f"violations={len(self.violations)}",
        ]
        return "summary: " + " ".join(parts)


class ChaosRun:
    def __init__(self, options: ChaosOptions) -> None:
        self.o = options
        self.rng = random.Random(options.seed)
        self.report = ChaosReport(options.seed)
        self.work = Path(tempfile.mkdtemp(prefix=f"topobridge-chaos-{options.seed}-"))
        self.report.work_dir = str(self.work)
        self.lease = f"topobridge-chaos-{options.seed}"
        self.plane = LocalControlPlane(with_controller_manager=True)
        self.replicas: list[local.TopobridgeState] = []
        self.logs: list[Path] = []
        self.gangs: dict[str, Gang] = {}
        self.deleted_nodes: list[str] = []
        self.deleted_podgroups: list[Gang] = []
        self._serial = 0
        self._identities = 0
        self._started: list[int] = []
        self._faults_until = 0.0
        self._background: set[asyncio.Task[None]] = set()
        self._disruptions: list[str] = []
        self.stopping = asyncio.Event()
        """Set it (e.g. on SIGINT) to end the cycles early; the quiet phase and verdict still run."""

    # --- the run ------------------------------------------------------------------------------

    async def run(self, *, progress: Any = None) -> ChaosReport:
        started = time.monotonic()
        await asyncio.to_thread(self.plane.start)
        kube = await Kube.connect(kubeconfig=self.plane.kubeconfig)
        watcher = InvariantWatcher(
            Endpoint(self.plane.server, self.plane.token, self.plane.ca_file),
            settle=self.o.settle,
            lease=("kube-system", self.lease),
            namespaces={NAMESPACE},
        )
        tasks: list[asyncio.Task[Any]] = []
        try:
            await self._setup(kube)
            tasks.append(await start(watcher))
            tasks.append(asyncio.create_task(Kubelet(kube).run(), name="chaos-kubelet"))
            self._faults_until = time.time() + self.o.duration
            self.replicas.append(await self._replica(leading=True))
            self.replicas.append(await self._replica(leading=False))
            deadline = time.monotonic() + self.o.duration
            next_disruption = self._next_disruption()
            while (
                time.monotonic() < deadline
                and self.report.cycles < self.o.max_cycles
                and not self.stopping.is_set()
            ):
                if self._disruption_due(next_disruption):
                    await self._disrupt(kube)
                    next_disruption = self._next_disruption()
                else:
                    await self._act(kube)
                self.report.cycles += 1
                if progress is not None and self.report.cycles % 100 == 0:
                    progress(self.report, watcher)
                await asyncio.sleep(self.rng.uniform(0.05, 0.3))
            self._faults_until = time.time()
            await self._quiet(watcher)
        finally:
            self.report.seconds = time.monotonic() - started
            self.report.violations = [str(v) for v in watcher.violations]
            self.report.gangs_placed = len(watcher.placed)
            self.report.bindings = watcher.counts["bindings"]
            self.report.victims = watcher.counts["victims"]
            for t in [*tasks, *self._background]:
                t.cancel()
            await asyncio.gather(*tasks, *self._background, return_exceptions=True)
            for state in self.replicas:
                with contextlib.suppress(Exception):
                    await local.stop(state, grace=5.0)
            self.report.unreaped = [pid for pid in self._started if pid in local.running_children()]
            self._count_faults()
            await kube.close()
            await asyncio.to_thread(self.plane.stop)
            if not self.o.keep and not self.report.violations:
                shutil.rmtree(self.work, ignore_errors=True)
        return self.report

    async def _quiet(self, watcher: InvariantWatcher) -> None:
        """Until no gang is partially bound, or every partial one has been judged."""
        end = time.monotonic() + self.o.settle + 5.0
        while time.monotonic() < end:
            await asyncio.sleep(1.0)
            if not watcher.partial:
                return

    def _jitter(self, mean: float) -> float:
        return mean * self.rng.uniform(0.6, 1.4)

    def _next_disruption(self) -> float:
        """When the next disruption is due: a cycle number, or a `time.monotonic()` reading."""
        if self.o.disrupt_every_cycles:
            return self.report.cycles + max(1, round(self._jitter(self.o.disrupt_every_cycles)))
        return time.monotonic() + self._jitter(self.o.disrupt_every)

    def _disruption_due(self, due: float) -> bool:
        if self.o.disrupt_every_cycles:
            return self.report.cycles >= due
        return bool(self.o.disrupt_every) and time.monotonic() >= due

    # --- setup --------------------------------------------------------------------------------

    async def _setup(self, kube: Kube) -> None:
        await kube.create(
            NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        )
        for name, value in PRIORITIES.items():
            body = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}}
            await kube.create(PRIORITY_CLASSES, {**body, "value": value})
        for s in range(SPINES):
            blocks = []
            for b in range(BLOCKS):
                nodes = [self.node_name(s, b, i) for i in range(NODES_PER_BLOCK)]
                for n in nodes:
                    await create_node(kube, n, cpu="8", memory="32Gi")
                blocks.append(f"block-{s}-{b}")
                await kube.create(HYPERNODES, hypernode(f"block-{s}-{b}", nodes))
            await kube.create(HYPERNODES, hypernode(f"spine-{s}", blocks, tier=2, member_type="HyperNode"))

    @staticmethod
    def node_name(s: int, b: int, i: int) -> str:
        return f"cn-{s}-{b}-{i}"

    async def _replica(self, *, leading: bool) -> local.TopobridgeState:
        self._identities += 1
        identity = f"replica-{self._identities}"
        faults = (
            f"bind_reset={self.o.bind_reset},bind_lost={self.o.bind_lost},evict_error={self.o.evict_error},"
            f"seed={self.o.seed + self._identities},until={self._faults_until},bind_deadline={self.o.bind_deadline}"
        )
        state = await local.start(
            self.plane.kubeconfig,
            self.work / identity,
            local.Launch(
                lease_name=self.lease,
                identity=identity,
                register=False,
                wait_leading=leading,
                entry=(str(LAUNCHER),),
                env={"TOPOBRIDGE_FAULTS": faults},
                extra_args=[
                    "--no-hypernodes",
                    f"--lease-duration={self.o.lease_duration}",
                    f"--renew-deadline={self.o.renew_deadline}",
                    f"--retry-period={self.o.retry_period}",
                ],
                ready_timeout=120.0,
            ),
        )
        self.logs.append(Path(state.log_file))
        self._started.append(state.pid)
        return state

    def _count_faults(self) -> None:
        for path in self.logs:
            with contextlib.suppress(OSError):
                for line in path.read_text(errors="replace").splitlines():
                    if '"chaos.fault"' in line:
                        with contextlib.suppress(ValueError):
                            self.report.faults[str(json.loads(line).get("kind"))] += 1

    # --- work and edits -------------------------------------------------------------------------

    async def _act(self, kube: Kube) -> None:
        actions = {
            "create_gang": 30 if len(self.gangs) < self.o.max_gangs else 0,
            "delete_gang": 4 if len(self.gangs) > self.o.max_gangs // 2 else 0,
            "delete_pod": 16,
            "edit_min_member": 8 if self.gangs else 0,
            "scale": 6 if self.gangs else 0,
            "delete_podgroup": 2 if self.gangs else 0,
            "restore_podgroup": 6 if self.deleted_podgroups else 0,
            "delete_node": 2 if len(self.deleted_nodes) < 2 else 0,
            "restore_node": 6 if self.deleted_nodes else 0,
            "add_pdb": 4 if self.gangs else 0,
        }
        name = self.rng.choices(list(actions), weights=list(actions.values()))[0]
        self.report.actions[name] += 1
        try:
            await getattr(self, f"_{name}")(kube)
        except ControllerError as exc:  # the API server may be restarting: the cycle still counts
            self.report.actions[f"{name}_failed:{type(exc).__name__}"] += 1

    async def _create_gang(self, kube: Kube) -> None:
        self._serial += 1
        dialect = self.rng.choice(DIALECTS)
        name = f"g{self._serial}-{dialect.split('-')[0][:5]}"
        size = self.rng.randint(2, 6)
        cpu = str(self.rng.randint(2, 4))
        priority = self.rng.choice(list(PRIORITIES))
        tier = self.rng.choice([None, None, 1, 2])
        topology = {"mode": "hard", "highestTierAllowed": tier} if tier else None
        labels: dict[str, str] = {"chaos-gang": name}
        annotations: dict[str, str] = {}
        scheduler = "topobridge"
        podgroup: Resource | None = None
        body: JsonDict | None = None
        if dialect in ("volcano", "lws"):
            podgroup, scheduler = VOLCANO_PODGROUPS, "volcano"
            spec: JsonDict = {"minMember": size, "priorityClassName": priority}
            if topology or dialect == "lws":
                spec["networkTopology"] = topology or {"mode": "hard", "highestTierAllowed": 2}
            body = pg_body("scheduling.volcano.sh/v1beta1", name, spec)
            annotations["scheduling.k8s.io/group-name"] = name
        elif dialect == "koordinator":
            podgroup, scheduler = SIGS_PODGROUPS, "koord-scheduler"
            body = pg_body("scheduling.sigs.k8s.io/v1alpha1", name, {"minMember": size})
            labels["pod-group.scheduling.sigs.k8s.io"] = name
        elif dialect == "scheduler-plugins":
            podgroup = X_PODGROUPS
            body = pg_body("scheduling.x-k8s.io/v1alpha1", name, {"minMember": size})
            labels["scheduling.x-k8s.io/pod-group"] = name
        else:
            scheduler = "koord-scheduler"
            annotations["gang.scheduling.koordinator.sh/name"] = name
            annotations["gang.scheduling.koordinator.sh/min-available"] = str(size)
        if podgroup is not None and body is not None:
            await kube.create(podgroup, body, namespace=NAMESPACE)
        template_spec: JsonDict = {
            "schedulerName": scheduler,
            "priorityClassName": priority,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
            ],
        }
        gang = Gang(name, dialect, size, None if dialect == "lws" else REPLICASETS, podgroup, body)
        if dialect == "lws":
            for i in range(size):
                pod_labels = {
                    **labels,
                    "leaderworkerset.sigs.k8s.io/name": name,
                    "leaderworkerset.sigs.k8s.io/group-index": "0",
                    "leaderworkerset.sigs.k8s.io/worker-index": str(i),
                }
                meta = {
                    "name": f"{name}-0-{i}" if i else f"{name}-0",
                    "labels": pod_labels,
                    "annotations": annotations,
                }
                await kube.create(
                    PODS,
                    {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template_spec},
                    namespace=NAMESPACE,
                )
        else:
            rs = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": name},
                "spec": {
                    "replicas": size,
                    "selector": {"matchLabels": {"chaos-gang": name}},
                    "template": {
                        "metadata": {"labels": labels, "annotations": annotations},
                        "spec": template_spec,
                    },
                },
            }
            await kube.create(REPLICASETS, rs, namespace=NAMESPACE)
        self.gangs[name] = gang
        self.report.gangs_created += 1

    def _some_gang(self) -> Gang:
        return self.gangs[self.rng.choice(sorted(self.gangs))]

    async def _delete_gang(self, kube: Kube) -> None:
        gang = self._some_gang()
        del self.gangs[gang.name]
        if gang.owner is not None:
            with contextlib.suppress(NotFoundError):
                await kube.delete(gang.owner, gang.name, namespace=NAMESPACE, propagation="Background")
        else:
            for pod in await self._pods(kube, gang.name):
                with contextlib.suppress(NotFoundError):
                    await kube.delete(PODS, pod["metadata"]["name"], namespace=NAMESPACE)
        if gang.podgroup is not None:
            with contextlib.suppress(NotFoundError):
                await kube.delete(gang.podgroup, gang.name, namespace=NAMESPACE)
        self.deleted_podgroups = [g for g in self.deleted_podgroups if g.name != gang.name]

    async def _pods(self, kube: Kube, gang: str | None = None) -> list[JsonDict]:
        selector = f"chaos-gang={gang}" if gang else "chaos-gang"
        return list((await kube.list(PODS, namespace=NAMESPACE, label_selector=selector)).items)

    async def _delete_pod(self, kube: Kube) -> None:
        pods = await self._pods(kube)
        if pods:
            victim = self.rng.choice(pods)["metadata"]["name"]
            with contextlib.suppress(NotFoundError):
                await kube.delete(PODS, victim, namespace=NAMESPACE)

    async def _edit_min_member(self, kube: Kube) -> None:
        gang = self._some_gang()
        if gang.podgroup is None:
            return
        wanted = max(1, min(gang.size + 1, gang.size + self.rng.choice([-1, 1])))
        with contextlib.suppress(NotFoundError):
            await kube.merge_patch(
                gang.podgroup, gang.name, {"spec": {"minMember": wanted}}, namespace=NAMESPACE
            )

    async def _scale(self, kube: Kube) -> None:
        gang = self._some_gang()
        if gang.owner is None:
            return
        gang.size = max(1, min(8, gang.size + self.rng.choice([-1, 1])))
        with contextlib.suppress(NotFoundError):
            await kube.merge_patch(
                gang.owner, gang.name, {"spec": {"replicas": gang.size}}, namespace=NAMESPACE
            )

    async def _delete_podgroup(self, kube: Kube) -> None:
        gang = self._some_gang()
        if gang.podgroup is None or gang in self.deleted_podgroups:
            return
        with contextlib.suppress(NotFoundError):
            await kube.delete(gang.podgroup, gang.name, namespace=NAMESPACE)
        self.deleted_podgroups.append(gang)

    async def _restore_podgroup(self, kube: Kube) -> None:
        gang = self.deleted_podgroups.pop(0)
        if gang.name in self.gangs and gang.podgroup is not None and gang.podgroup_body is not None:
            with contextlib.suppress(AlreadyExistsError):
                await kube.create(gang.podgroup, gang.podgroup_body, namespace=NAMESPACE)

    async def _delete_node(self, kube: Kube) -> None:
        names = [
            self.node_name(s, b, i)
            for s in range(SPINES)
            for b in range(BLOCKS)
            for i in range(NODES_PER_BLOCK)
        ]
        candidates = [n for n in names if n not in self.deleted_nodes]
        node = self.rng.choice(candidates)
        with contextlib.suppress(NotFoundError):
            await kube.delete(NODES, node)
        self.deleted_nodes.append(node)

    async def _restore_node(self, kube: Kube) -> None:
        node = self.deleted_nodes.pop(0)
        with contextlib.suppress(AlreadyExistsError):
            await create_node(kube, node, cpu="8", memory="32Gi")

    async def _add_pdb(self, kube: Kube) -> None:
        gang = self._some_gang()
        body = {
            "apiVersion": "policy/v1beta1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": f"{gang.name}-{self._serial}"},
            "spec": {
                "minAvailable": self.rng.randint(1, gang.size),
                "selector": {"matchLabels": {"chaos-gang": gang.name}},
            },
        }
        await kube.create(PDBS_V1BETA1, body, namespace=NAMESPACE)

    # --- disruptions --------------------------------------------------------------------------

    async def _disrupt(self, kube: Kube) -> None:
        if not self._disruptions:  # every kind once per round, in a random order
            self._disruptions = ["apiserver_stop", "apiserver_restart", "kill_leader", "kill_standby"]
            self.rng.shuffle(self._disruptions)
        name = self._disruptions.pop()
        self.report.actions[name] += 1
        await getattr(self, f"_{name}")(kube)

    def _apiserver(self) -> Any:
        return next(p for p in self.plane.processes if p.name == "kube-apiserver")

    async def _apiserver_stop(self, kube: Kube) -> None:
        proc = self._apiserver()
        proc.signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(self.rng.uniform(1.0, 4.0))
        finally:
            proc.signal(signal.SIGCONT)

    async def _apiserver_restart(self, kube: Kube) -> None:
        await asyncio.to_thread(restart_apiserver, self.plane, down_for=self.rng.uniform(0.5, 2.0))
        end = time.monotonic() + self.o.max_outage
        while time.monotonic() < end:
            with contextlib.suppress(ControllerError):
                await kube.list(VOLCANO_PODGROUPS, namespace=NAMESPACE)
                return
            await asyncio.sleep(0.5)

    async def _leader(self) -> local.TopobridgeState | None:
        for state in self.replicas:
            if state.process().alive() and await local.is_leading(state):
                return state
        return None

    async def _kill_leader(self, kube: Kube) -> None:
        leader = await self._leader()
        if leader is None:
            return
        leader.process().signal(signal.SIGKILL)
        killed = time.monotonic()
        self.replicas.remove(leader)
        await local.stop(leader, grace=5.0)  # reaps it: no zombie, no Popen left running at exit
        self.replicas.append(await self._replica(leading=False))
        # The takeover is measured in the background; cycles go on meanwhile.
        task = asyncio.create_task(self._time_takeover(killed), name="chaos-takeover")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _time_takeover(self, killed: float) -> None:
        limit = self.o.lease_duration + self.o.retry_period + self.o.max_outage + 30
        while time.monotonic() - killed < limit:
            if await self._leader() is not None:
                self.report.takeovers.append(time.monotonic() - killed)
                return
            await asyncio.sleep(0.2)

    async def _kill_standby(self, kube: Kube) -> None:
        leader = await self._leader()
        standbys = [s for s in self.replicas if s is not leader]
        if not standbys:
            return
        victim = self.rng.choice(standbys)
        victim.process().signal(signal.SIGKILL)
        self.replicas.remove(victim)
        await local.stop(victim, grace=5.0)
        self.replicas.append(await self._replica(leading=False))


def pg_body(api_version: str, name: str, spec: JsonDict) -> JsonDict:
    return {"apiVersion": api_version, "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}
