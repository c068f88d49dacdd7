"""Scenarios: what e2e/scenarios/*.yaml say, and running them against a live cluster.

A scenario runs on one cluster file and a target, in phases:

1. setup     the cluster's nodes (status written as a kubelet would) and its
             ClusterNetworkTopology; a fresh namespace;
2. steps     each step's objects are created (PriorityClasses only if missing); on targets
             without an LWS controller the harness creates each group's pods as LWS would;
3. wait      until every expectation of the step holds, or the step's timeout; a progress
             callback sees every poll (the demo draws it);
4. verdict   each expectation that does not hold is a failure naming the pod and what was seen;
5. teardown  the namespace's pods removed, the namespace, nodes and topology deleted.

Expectations are checked on the objects alone (pods, nodes, PodGroups), so the same scenario
judges Volcano on kind and topobridge's fallback scheduler alike; the ones only topobridge's
placement makes reproducible (`nodes`, `evicted`) are checked on fallback targets only.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
import yaml
from pydantic import BaseModel, ConfigDict, Field

from controller.errors import NotFoundError
from controller.kube import JsonDict, Kube
from controller.placer.scenario import load_scenario, topology_of
from controller.resources import CLUSTER_NETWORK_TOPOLOGIES, LEADERWORKERSETS, NODES, PODS, VOLCANO_PODGROUPS
from e2e import cluster as clustermod
from e2e.cluster import ClusterSpec, ScenarioFileError
from e2e.lws import create_group_pods
from translations.topology import TopologyTree

log = structlog.get_logger("e2e.scenario")

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
CLUSTER_DIR = SCENARIO_DIR / "clusters"


# --- the files ---------------------------------------------------------------------------------


class Together(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pods: list[str]
    tier: int


class PodGroupExpectation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    lws: str | None = None
    """With `group`: the PodGroup of that LWS group, whatever its revision hash."""
    group: int | None = None
    spec: dict[str, Any] = {}
    targets: list[str] | None = None
    """Only on these targets (None: all)."""

    def describe(self) -> str:
        return self.name or f"{self.lws}-{self.group}-<revision>"


class Expect(BaseModel):
    model_config = ConfigDict(extra="forbid")
    bound: list[str] = []
    together: list[Together] = []
    apart: list[Together] = []
    """Each pod in a different domain of that tier (0: a different node)."""
    nodes: dict[str, str] = {}
    evicted: list[str] = []
    untouched: dict[str, str] = {}
    pod_groups: list[PodGroupExpectation] = Field(default=[], alias="podGroups")


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str = ""
    apply: list[dict[str, Any]] = []
    expect: Expect = Expect()
    timeout: float | None = None


class ScenarioSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    title: str
    cluster: str
    targets: list[str]
    steps: list[Step]

    @classmethod
    def load(cls, path: Path) -> ScenarioSpec:
        try:
            return cls.model_validate(yaml.safe_load(path.read_text()))
        except (OSError, yaml.YAMLError, ValueError) as exc:
            raise ScenarioFileError(f"{path}: {exc}") from None

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec.load(CLUSTER_DIR / f"{self.cluster}.yaml")


def all_scenarios() -> list[ScenarioSpec]:
    return [ScenarioSpec.load(p) for p in sorted(SCENARIO_DIR.glob("*.yaml"))]


def scenario(name: str) -> ScenarioSpec:
    return ScenarioSpec.load(SCENARIO_DIR / f"{name}.yaml")


# --- targets ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where scenarios run and who schedules there."""

    name: str
    fallback: bool
    """topobridge's fallback scheduler places the pods (exact nodes and evictions are checked)."""
    lws_controller: bool = False
    """A real LeaderWorkerSet controller creates each group's pods."""
    scheduler_name: str | None = None
    """Send every scenario pod to this scheduler (Volcano on kind) instead of its own."""
    node_annotations: dict[str, str] = field(default_factory=dict)
    node_labels: dict[str, str] = field(default_factory=dict)
    node_taints: list[JsonDict] = field(default_factory=list)
    pod_tolerations: list[JsonDict] = field(default_factory=list)
    timeout: float = 60.0


LOCAL = Target("local", fallback=True)
KWOK_TAINT: JsonDict = {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}
KWOK_ANNOTATIONS = {"kwok.x-k8s.io/node": "fake"}
KWOK_LABELS = {"type": "kwok"}
"""run-kind.sh keeps DaemonSets (kindnet, kube-proxy) off nodes with this label: on a KWOK node
their requests would take from the whole-node capacity the scenarios count on."""
"""KWOK's controller keeps nodes with this annotation Ready and runs the pods bound to them."""
KWOK_TOLERATION: JsonDict = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}
KIND_VOLCANO = Target(
    "kind-volcano",
    fallback=False,
    lws_controller=True,
    scheduler_name="volcano",
    node_annotations=KWOK_ANNOTATIONS,
    node_labels=KWOK_LABELS,
    node_taints=[KWOK_TAINT],
    pod_tolerations=[KWOK_TOLERATION],
    timeout=240.0,
)
KIND_FALLBACK = Target(
    "kind-fallback",
    fallback=True,
    lws_controller=True,
    node_annotations=KWOK_ANNOTATIONS,
    node_labels=KWOK_LABELS,
    node_taints=[KWOK_TAINT],
    pod_tolerations=[KWOK_TOLERATION],
    timeout=240.0,
)
TARGETS = {t.name: t for t in (LOCAL, KIND_VOLCANO, KIND_FALLBACK)}


# --- observing ---------------------------------------------------------------------------------


@dataclass
class Observed:
    """One poll of what a step is about."""

    pods: dict[str, JsonDict]
    nodes: list[JsonDict]
    cnt: JsonDict | None
    pod_groups: list[JsonDict]
    elapsed: float
    disrupted: set[str]
    """Pods seen with the DisruptionTarget condition at any poll so far."""

    def pod_list(self) -> list[JsonDict]:
        return list(self.pods.values())


@dataclass
class StepResult:
    step: Step
    failures: list[str]
    seconds: float
    observed: Observed

    @property
    def ok(self) -> bool:
        return not self.failures


@dataclass
class ScenarioResult:
    scenario: ScenarioSpec
    target: Target
    steps: list[StepResult]

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.steps) and len(self.steps) == len(self.scenario.steps)

    def report(self) -> str:
        lines = [f"{'PASS' if self.ok else 'FAIL'} {self.scenario.name} on {self.target.name}"]
        for s in self.steps:
            lines.append(f"  {'ok  ' if s.ok else 'FAIL'} {s.step.name} ({s.seconds:.1f}s)")
            lines.extend(f"       - {f}" for f in s.failures)
        return "\n".join(lines)


def _condition(pod: JsonDict, ctype: str) -> JsonDict | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            found: JsonDict = c
            return found
    return None


def check(expect: Expect, seen: Observed, target: Target) -> list[str]:
    """What does not hold yet (empty: the step passed): each kind of expectation in turn."""
    failures = _bound_failures(expect, seen)
    if expect.together:
        failures += _together_failures(expect, seen)
    if expect.apart:
        failures += _apart_failures(expect, seen)
    if target.fallback:
        failures += _fallback_failures(expect, seen)
    for name, node in expect.untouched.items():
        pod = seen.pods.get(name)
        if pod is None or pod["metadata"].get("deletionTimestamp") or pod["spec"].get("nodeName") != node:
            failures.append(f"{name}: expected untouched on {node}, is {_where(seen.pods, name)}")
    return failures + _pod_group_failures(expect, seen, target)


def _where(pods: Mapping[str, JsonDict], name: str) -> str:
    """Where a pod is, for a failure message: gone, pending (and why), or on which node."""
    pod = pods.get(name)
    if pod is None:
        return "gone"
    node = (pod.get("spec") or {}).get("nodeName")
    phase = (pod.get("status") or {}).get("phase", "?")
    extra = " terminating" if pod["metadata"].get("deletionTimestamp") else ""
    if not node:
        cond = _condition(pod, "PodScheduled") or {}
        msg = f": {cond.get('message')}" if cond.get("message") else ""
        return f"pending{msg}"
    return f"on {node} ({phase}{extra})"


def _bound_failures(expect: Expect, seen: Observed) -> list[str]:
    failures: list[str] = []
    for name in expect.bound:
        pod = seen.pods.get(name)
        if (
            pod is None
            or not (pod.get("spec") or {}).get("nodeName")
            or (pod.get("status") or {}).get("phase") != "Running"
            or pod["metadata"].get("deletionTimestamp")
        ):
            failures.append(f"{name}: expected bound and Running, is {_where(seen.pods, name)}")
    return failures


def _together_failures(expect: Expect, seen: Observed) -> list[str]:
    """Each group inside one domain of its tier."""
    failures: list[str] = []
    tree = _tree(seen)
    for group in expect.together:
        nodes = [(seen.pods.get(p) or {}).get("spec", {}).get("nodeName") for p in group.pods]
        if not all(nodes):
            failures.append(f"{', '.join(group.pods)}: not all bound, cannot judge their domain")
            continue
        common = tree.lowest_common_domain([n for n in nodes if n])
        tier = tree.domains[common].tier if common is not None else tree.max_tier + 1
        if tier > group.tier:
            failures.append(
                f"{', '.join(group.pods)}: expected inside one tier-{group.tier} domain, "
                f"nodes {sorted(set(n for n in nodes if n))} share only "
                f"{common or 'the cluster'} (tier {tier})"
            )
    return failures


def _apart_failures(expect: Expect, seen: Observed) -> list[str]:
    """Each pod of a group in a domain of its tier of its own."""
    failures: list[str] = []
    tree = _tree(seen)
    for group in expect.apart:
        nodes = [(seen.pods.get(p) or {}).get("spec", {}).get("nodeName") for p in group.pods]
        if not all(nodes):
            failures.append(f"{', '.join(group.pods)}: not all bound, cannot judge their domains")
            continue
        places = [n if group.tier == 0 else tree.domain_at_tier(n, group.tier) for n in nodes if n]
        if len(set(places)) != len(places) or None in places:
            failures.append(
                f"{', '.join(group.pods)}: expected each in its own tier-{group.tier} domain, are in {places}"
            )
    return failures


def _fallback_failures(expect: Expect, seen: Observed) -> list[str]:
    """What only topobridge's own scheduler promises: exact nodes, and evictions it announced."""
    failures: list[str] = []
    pods = seen.pods
    for name, node in expect.nodes.items():
        actual = (pods.get(name) or {}).get("spec", {}).get("nodeName")
        if actual != node:
            failures.append(f"{name}: expected on {node}, is {_where(pods, name)}")
    for name in expect.evicted:
        if name in pods and not pods[name]["metadata"].get("deletionTimestamp"):
            failures.append(f"{name}: expected evicted, is {_where(pods, name)}")
        elif name not in seen.disrupted:
            failures.append(f"{name}: evicted without a DisruptionTarget condition seen")
    return failures


def _pod_group_failures(expect: Expect, seen: Observed, target: Target) -> list[str]:
    """Each expected Volcano PodGroup present, its spec containing what is expected."""
    failures: list[str] = []
    for pg in expect.pod_groups:
        if pg.targets is not None and target.name not in pg.targets:
            continue
        found = [g for g in seen.pod_groups if _pod_group_matches(g, pg)]
        if not found:
            names = sorted(g["metadata"]["name"] for g in seen.pod_groups)
            failures.append(f"PodGroup {pg.describe()}: not found (Volcano PodGroups: {names})")
        elif not _contains(found[0].get("spec") or {}, pg.spec):
            failures.append(
                f"PodGroup {found[0]['metadata']['name']}: spec {found[0].get('spec')} "
                f"does not contain {pg.spec}"
            )
    return failures


def _pod_group_matches(obj: JsonDict, pg: PodGroupExpectation) -> bool:
    name = obj["metadata"]["name"]
    if pg.name is not None:
        return bool(name == pg.name)
    return bool(name.startswith(f"{pg.lws}-{pg.group}-"))


def _contains(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        return isinstance(actual, dict) and all(
            k in actual and _contains(actual[k], v) for k, v in wanted.items()
        )
    return bool(actual == wanted)


# --- running ---------------------------------------------------------------------------------------

Progress = Callable[[Step, Observed], Awaitable[None] | None]


class ScenarioRunner:
    """Runs scenarios on one cluster through `kube` (cluster admin)."""

    def __init__(
        self,
        kube: Kube,
        target: Target,
        *,
        poll: float = 0.3,
        on_admission_wait: clustermod.OnAdmissionWait | None = None,
    ) -> None:
        self.kube = kube
        self.target = target
        self.poll = poll
        self.on_admission_wait = on_admission_wait
        """Told when a create waits for admission to see a PriorityClass (the demo says so)."""

    async def run(
        self,
        spec: ScenarioSpec,
        *,
        progress: Progress | None = None,
        keep: bool = False,
        namespace: str | None = None,
    ) -> ScenarioResult:
        """All steps in order; stops at the first failing step. `keep` leaves everything in place."""
        cluster = spec.cluster_spec()
        ns = namespace or f"e2e-{spec.name}-{secrets.token_hex(2)}"
        result = ScenarioResult(spec, self.target, [])
        await self.setup(cluster, ns)
        try:
            for step in spec.steps:
                outcome = await self.run_step(step, ns, progress=progress)
                result.steps.append(outcome)
                if not outcome.ok:
                    break
        finally:
            if not keep:
                await self.teardown(cluster, ns)
        return result

    # -- phases ----------------------------------------------------------------------------------

    async def setup(self, cluster: ClusterSpec, namespace: str) -> None:
        t = self.target
        await clustermod.create_nodes(
            self.kube, cluster, annotations=t.node_annotations, taints=t.node_taints, labels=t.node_labels
        )
        await clustermod.create_topology(self.kube, cluster)
        await clustermod.create_namespace(self.kube, namespace)

    async def run_step(self, step: Step, namespace: str, *, progress: Progress | None = None) -> StepResult:
        began = time.monotonic()
        for obj in step.apply:
            await self.apply(obj, namespace)
        timeout = step.timeout or self.target.timeout
        disrupted: set[str] = set()
        while True:
            seen = await self.observe(namespace, began, disrupted)
            failures = check(step.expect, seen, self.target)
            if progress is not None:
                maybe = progress(step, seen)
                if maybe is not None:
                    await maybe
            if not failures or seen.elapsed > timeout:
                if failures:
                    failures.insert(0, f"not settled after {timeout:.0f}s")
                log.info("e2e.step", step=step.name, ok=not failures, seconds=round(seen.elapsed, 2))
                return StepResult(step, failures, seen.elapsed, seen)
            await asyncio.sleep(self.poll)

    async def apply(self, obj: JsonDict, namespace: str) -> None:
        obj = self.adapt(obj)
        if obj["kind"] == "PriorityClass":
            await clustermod.ensure_cluster_object(self.kube, obj)
            return
        created = await clustermod.create_object(
            self.kube, obj, namespace=namespace, on_wait=self.on_admission_wait
        )
        if obj["kind"] == LEADERWORKERSETS.kind and not self.target.lws_controller:
            await create_group_pods(self.kube, created)

    def adapt(self, obj: JsonDict) -> JsonDict:
        return adapt(obj, self.target)

    async def observe(self, namespace: str, began: float, disrupted: set[str]) -> Observed:
        pods = {p["metadata"]["name"]: p for p in await clustermod.list_pods(self.kube, namespace)}
        for name, pod in pods.items():
            cond = _condition(pod, "DisruptionTarget")
            if cond is not None and cond.get("status") == "True":
                disrupted.add(name)
        nodes = (await self.kube.list(NODES)).items
        cnt = None
        with contextlib.suppress(NotFoundError):
            cnt = await self.kube.get(CLUSTER_NETWORK_TOPOLOGIES, "default")
        groups = (await self.kube.list(VOLCANO_PODGROUPS, namespace=namespace)).items
        return Observed(pods, nodes, cnt, groups, time.monotonic() - began, disrupted)

    async def teardown(self, cluster: ClusterSpec, namespace: str, *, timeout: float = 60.0) -> None:
        """Owners first (a LeaderWorkerSet would recreate its pods), then the pods (forced: a
        deleted node has no kubelet), so the next scenario's nodes start empty; then the
        namespace, the nodes and the topology."""
        for lws in (await self.kube.list(LEADERWORKERSETS, namespace=namespace)).items:
            with contextlib.suppress(NotFoundError):
                await self.kube.delete(
                    LEADERWORKERSETS, lws["metadata"]["name"], namespace=namespace, propagation="Background"
                )
        deadline = time.monotonic() + timeout
        while True:
            pods = await clustermod.list_pods(self.kube, namespace)
            if not pods or time.monotonic() > deadline:
                break
            for pod in pods:
                with contextlib.suppress(NotFoundError):
                    await self.kube.delete(
                        PODS, pod["metadata"]["name"], namespace=namespace, grace_period_seconds=0
                    )
            await asyncio.sleep(0.2)
        await clustermod.delete_namespace(self.kube, namespace)
        await clustermod.delete_cluster(self.kube, cluster)


def adapt(obj: JsonDict, target: Target) -> JsonDict:
    """The object as `target` needs it: its scheduler and tolerations on every pod spec."""
    obj = yaml.safe_load(yaml.safe_dump(obj))  # a deep copy that stays plain data
    for spec in _pod_specs(obj):
        if target.scheduler_name:
            spec["schedulerName"] = target.scheduler_name
        if target.pod_tolerations:
            spec["tolerations"] = [*(spec.get("tolerations") or []), *target.pod_tolerations]
    return obj


def _pod_specs(obj: JsonDict) -> list[JsonDict]:
    if obj.get("kind") == "Pod":
        return [obj.setdefault("spec", {})]
    if obj.get("kind") == LEADERWORKERSETS.kind:
        tmpl = (obj.get("spec") or {}).get("leaderWorkerTemplate") or {}
        return [
            t.setdefault("spec", {}) for key in ("leaderTemplate", "workerTemplate") if (t := tmpl.get(key))
        ]
    return []


async def run_all(
    kube: Kube, target: Target, names: Sequence[str] | None = None, progress: Progress | None = None
) -> list[ScenarioResult]:
    runner = ScenarioRunner(kube, target)
    specs = [s for s in all_scenarios() if target.name in s.targets and (not names or s.name in names)]
    return [await runner.run(s, progress=progress) for s in specs]


def _tree(seen: Observed) -> TopologyTree:
    """The topology tree as the scheduler builds it from what was observed (the nodes and the
    ClusterNetworkTopology)."""
    return topology_of(load_scenario([*seen.nodes, *([seen.cnt] if seen.cnt else [])], lenient=True))
