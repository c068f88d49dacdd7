"""Hostile objects stored through a live API server, and every topobridge process reading them.

`hack/fuzz.py` hands hostile objects to the code directly; this stores them through the dev
control plane (`topobridge.devcluster.LocalControlPlane`, the one `topobridge dev-cluster` and
the integration tests start) and lets the processes read them back as a user's cluster would
serve them. Each round draws, from its seed:
* a hostile cluster (`tests/strategies/objects.py`: nodes, pods of every gang dialect, PodGroups,
  Jobs, LWS, HyperNodes, PriorityClasses, budgets) plus an ordinary gang on nodes of its own;
* pods only a live API server can hand over (`live_pods`): Kueue TAS annotations (slice sizes of
  long digit runs, `"["*5000` constraints, a `²` group name), Indexed Job pods whose
  completion index has 4,301 digits or Unicode digits, Koordinator and Volcano annotations with
  Unicode digits, a `managedFields[].fieldsV1` nested past the JSON parser's depth, 250 KB of
  annotations, hundreds of labels.
Every object is created through the API, past topobridge's own admission webhooks (registered
as `topobridge dev-cluster` registers them, `e2e.local.start`): what the 1.20 API server refuses
is counted as `refused`, what the webhooks deny as `denied` too, and a denial must name the field
(`spec.minMember: Invalid value: ...`) without Python's own text. Then, against that one
`topobridge run`, which lives across all rounds (its informers and cycles, as many as the round
takes):
* `bind`: the ordinary gang binds (waited for, bounded);
* `messages`: every pending pod topobridge serves carries a PodScheduled=False condition whose
  message holds no Python exception text, and a pod whose annotation is certainly malformed has
  one naming that annotation;
* `tree`, `explain`, `simulate`: `topobridge tree`, `explain <ordinary gang>` and `simulate
  --from-cluster -o json` as their own processes, exit 0, no Python exception text; then
  `explain <key>` for the gangs that simulate leaves waiting (the hostile ones: at most
  `MAX_EXPLAINED`, one of each dialect first), each naming its gang and the cycle's verdict;
* `ui`, `ui-stop`: the live `topobridge ui` (reading the cluster, as a user starts it), twice
  a round: one told SIGTERM as soon as it serves (its first snapshot still being read), one
  that must show its first view (503 "reading the snapshot" until then) and the ordinary gang
  placed, answer `/api/view`, `/api/explain` for the gangs it lists as waiting and a what-if
  of the ordinary gang's copy (HTTP 200) and of the round's hostile and live pods (200, or a
  4xx naming the field), then SIGTERM, idle or (every other round) while a what-if is asked.
  No answer carries Python's text or a 5xx, each stop exits 0 within `UI_STOP_TIMEOUT`, its
  log holds no traceback or error line; `ui` counts the answers, `ui-stop` the stops;
* the run itself: still running, and its log (JSON lines) holds no traceback, no `task.failed`
  and no error line; an object it left out is named with its field (`kube.object_unreadable`).
The round's objects are then deleted; the next round stores its own, often under the same
names (pods deleted and created again under a gang member's name are a case of their own).

    .venv/bin/python hack/livefuzz.py [--minutes 5] [--seed N] [--rounds-per-seed 2] [--verbose]

A failure is printed as `FAIL seed <s> example <n>: <what>` (the line `hack/explore.py` reads);
`--finds DIR` keeps each failing round's objects as JSON; `--verbose` prints each round's
refusals and where each pod ended. Last line: `summary: seed=<n> seeds=<n> scenarios=<n>
crashes=<n> slowest_ms=<x> failures=<n> stored=<n> refused=<n> denied=<n> unserved=<n>
<surface>=<calls>/<slowest ms> ...`: `scenarios` are the rounds run, `crashes` a process that
exited or logged a traceback/task.failed and a CLI call that exited non-zero or printed Python's
own text, a ui that exited, did not stop, answered a 5xx or logged an error, `failures` those
and the other failures above, `unserved` objects of kinds the 1.20
API server does not serve. Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import aiohttp  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from controller.errors import ApiError, ControllerError, NotFoundError  # noqa: E402
from controller.kube import Kube  # noqa: E402
from controller.resources import NAMESPACES as NAMESPACE_RESOURCE  # noqa: E402
from controller.resources import PODS, Resource  # noqa: E402
from e2e import local as e2e_local  # noqa: E402
from e2e.cluster import until_admitted  # noqa: E402
from tests.strategies.objects import (  # noqa: E402
    NAMESPACES,
    ORDINARY_NAMESPACE,
    OrdinaryGang,
    hostile_clusters,
    ordinary_gangs,
)
from topobridge.ui import whatif  # noqa: E402
from translations import kinds  # noqa: E402
from translations import kueue as kueue_tr  # noqa: E402
from translations.topology import natural_key  # noqa: E402

Obj = dict[str, Any]
SCHEDULER = "topobridge"
SERVED = ("topobridge", "volcano", "koord-scheduler")
"""The schedulerNames the run serves (Volcano and koord-scheduler are absent, so it stands in)."""
SERVED_AT = {"policy/v1": "policy/v1beta1"}
"""The 1.20 API server serves PodDisruptionBudgets at policy/v1beta1 only."""
BIND_TIMEOUT = 90.0
"""Seconds the ordinary gang may take to bind with the round's hostile objects beside it."""
MESSAGE_TIMEOUT = 30.0
"""Seconds after the ordinary gang binds for every pending served pod to carry its reason."""
CLI_TIMEOUT = 180.0
MAX_EXPLAINED = 4
"""Waiting gangs a round explains beyond the ordinary one (a process each): one per dialect first."""
PYTHON_TEXT = re.compile(
    r"Traceback \(most recent|RecursionError|maximum recursion depth|Exceeds the limit \(\d+ digits\)"
    r"|invalid literal for int\(\)|object has no attribute|unsupported operand|MemoryError"
    r"|KeyError|IndexError|TypeError|AttributeError|ZeroDivisionError|OverflowError"
)
"""What only a Python exception says; a user must never be shown it (as in hack/fuzz.py)."""
RUN_LOG_FAILURES = ("task.failed", "informer.handler_failed", "Traceback (most recent")
WEBHOOK = 'topobridge.io" denied the request'
"""How the API server quotes a denial by one of topobridge's webhooks (validating or mutating)."""
FIELD_NAMED = re.compile(r"[a-zA-Z][a-zA-Z0-9]*(?:\.[a-zA-Z][a-zA-Z0-9]*|\[[^\]]*\])+: ")
"""A field path and its error, as a denial names what is wrong (`spec.minMember: ...`)."""

# --- what only a live API server hands over -------------------------------------------------

HUGE_DIGITS = "9" * 4301
"""Past Python's limit on converting digit strings to int."""
UNICODE_DIGITS = ("\u0663", "\u00b2", "\uff11\uff12", "\u0969\u0966\u0966", "\u0663\u0660\u0660s")
"""Arabic-Indic 3, superscript 2, fullwidth 12, Devanagari 300, Arabic-Indic 300s:
`str.isdigit()` says yes, Go's strconv and `int()` (for some) say no."""
BAD_NUMBERS = (HUGE_DIGITS, *UNICODE_DIGITS[:4], "0" * 40 + "1", "-1", " 3")
KOORD = "gang.scheduling.koordinator.sh/"
VOLCANO_GROUP = "scheduling.k8s.io/group-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
DEEP_LEVELS = (600, 1_025, 1_100, 3_000)


@dataclass
class LivePod:
    """A drawn pod and, when one of its annotations is certainly malformed, that annotation:
    topobridge must not schedule it silently, and its reason must name the annotation."""

    obj: Obj
    bad: str | None = None
    deep: int = 0
    """Levels of the `managedFields[0].fieldsV1` the pod is stored with (0: none). Built only
    when stored: Hypothesis' printer of drawn values recurses once per level."""

    def stored(self) -> Obj:
        if not self.deep:
            return self.obj
        fields: Obj = {}
        for _ in range(self.deep):
            fields = {"f:a": fields}
        managed = {"manager": "tenant", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"}
        meta = {**self.obj["metadata"], "managedFields": [{**managed, "fieldsV1": fields}]}
        return {**self.obj, "metadata": meta}


def _pod(name: str, labels: dict[str, str], annotations: dict[str, str], **meta: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "team-a",
            "labels": labels,
            "annotations": annotations,
            **meta,
        },
        "spec": {
            "schedulerName": SCHEDULER,
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }
            ],
        },
    }


def _is_bad_number(value: str) -> bool:
    return value == HUGE_DIGITS or not value.isascii()


@st.composite
def kueue_pod(draw: st.DrawFn, name: str) -> LivePod:
    ann = {kueue_tr.REQUIRED_TOPOLOGY: draw(st.sampled_from(["kubernetes.io/hostname", "rack", ""]))}
    bad: str | None = None
    choice = draw(st.sampled_from(["slice", "constraints", "group"]))
    if choice == "slice":
        size = draw(st.sampled_from([*BAD_NUMBERS, "2"]))
        ann[kueue_tr.SLICE_REQUIRED_TOPOLOGY] = "kubernetes.io/hostname"
        ann[kueue_tr.SLICE_SIZE] = size
        bad = kueue_tr.SLICE_SIZE if _is_bad_number(size) else None
    elif choice == "constraints":
        text = draw(
            st.sampled_from(
                [
                    "[" * 5000,
                    '[{"topology": "rack", "size": "٣"}]',
                    '[{"topology": "rack", "size": 1e400}]',
                    "[]",
                ]
            )
        )
        ann[kueue_tr.SLICE_CONSTRAINTS] = text
        bad = kueue_tr.SLICE_CONSTRAINTS if text.startswith("[[") else None
    else:
        group = draw(st.sampled_from(["\u00b2", HUGE_DIGITS, "g"]))
        ann[kueue_tr.GROUP_NAME] = group
    labels = {
        kueue_tr.POD_GROUP_NAME_LABEL: "kq",
        kueue_tr.POD_GROUP_POD_INDEX_LABEL: draw(st.sampled_from(["0", "9" * 63])),
    }
    ann[kueue_tr.POD_GROUP_TOTAL_COUNT] = draw(st.sampled_from(["1", HUGE_DIGITS, "\u0663"]))
    return LivePod(_pod(name, labels, ann), bad)


@st.composite
def indexed_job_pod(draw: st.DrawFn, name: str) -> LivePod:
    index = draw(st.sampled_from([*BAD_NUMBERS, "3"]))
    labels = {"job-name": "indexed", "controller-uid": "uid-indexed"}
    ann = {COMPLETION_INDEX: index}
    if draw(st.booleans()):
        ann.update(
            {
                "gpu.topology/policy": "nvlink",
                "gpu.topology/max-nodes": draw(st.sampled_from(["2", *UNICODE_DIGITS])),
            }
        )
    owner = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "indexed",
        "uid": "uid-indexed",
        "controller": True,
    }
    return LivePod(_pod(name, labels, ann, ownerReferences=[owner]))


@st.composite
def unicode_gang_pod(draw: st.DrawFn, name: str) -> LivePod:
    """Koordinator or Volcano markers whose numbers are Unicode digits or 4,301 ASCII ones."""
    value = draw(st.sampled_from(BAD_NUMBERS))
    if draw(st.booleans()):
        key = draw(st.sampled_from([KOORD + "min-available", KOORD + "total-number", KOORD + "waiting-time"]))
        ann = {
            KOORD + "name": "uni",
            KOORD + "min-available": "1",
            key: value + ("s" if key.endswith("time") else ""),
        }
    else:
        key = "volcano.sh/network-topology-highest-tier"
        ann = {VOLCANO_GROUP: "uni", "volcano.sh/network-topology-mode": "hard", key: value}
    return LivePod(_pod(name, {}, ann))


@st.composite
def text_pod(draw: st.DrawFn, name: str) -> LivePod:
    """What only JSON text holds: a fieldsV1 nested past the parser's depth, 250 KB of
    annotations, hundreds of labels; otherwise an ordinary lone pod."""
    shape = draw(st.sampled_from(["deep", "big", "labels"]))
    if shape == "deep":
        return LivePod(_pod(name, {}, {}), deep=draw(st.sampled_from(DEEP_LEVELS)))
    if shape == "big":
        return LivePod(_pod(name, {}, {"example.com/big": "x" * 250_000}))
    labels = {f"l{i}.example.com/k{i}": "9" * 63 for i in range(draw(st.sampled_from([100, 500])))}
    return LivePod(_pod(name, labels, {}))


@st.composite
def live_pods(draw: st.DrawFn) -> list[LivePod]:
    """A few pods of each family above, named apart from the hostile cluster's."""
    out: list[LivePod] = []
    families = (kueue_pod, indexed_job_pod, unicode_gang_pod, text_pod)
    for i in range(draw(st.integers(2, 6))):
        out.append(draw(draw(st.sampled_from(families))(f"live-{i}")))
    return out


# --- one round --------------------------------------------------------------------------------


@dataclass
class Round:
    """What one round stores: the hostile cluster, the live-only pods, the ordinary gang."""

    hostile: list[Obj]
    live: list[LivePod]
    ordinary: OrdinaryGang

    def objects(self) -> list[Obj]:
        return [*self.hostile, *(p.stored() for p in self.live), *self.ordinary.objects]


def draw_rounds(seed: int, count: int) -> list[Round]:
    """`count` rounds drawn from `seed` (Hypothesis' generation only: a function of the seed)."""
    drawn: list[Round] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=count,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(hostile_clusters(max_nodes=4, max_pods=8, max_depth=30), live_pods(), ordinary_gangs())
    def one(cluster: list[Obj], live: list[LivePod], ordinary: OrdinaryGang) -> None:
        if len(drawn) < count:
            drawn.append(Round(copy.deepcopy(cluster), copy.deepcopy(live), ordinary))

    one()
    return drawn


_BY_KIND = {(k.group, k.kind): k for k in vars(kinds).values() if isinstance(k, kinds.ApiKind)}
_ORDER = ("Namespace", "PriorityClass", "Node", "HyperNode", "ClusterNetworkTopology")
_SERVER_SET = ("uid", "creationTimestamp", "deletionTimestamp", "resourceVersion", "generation")
"""Set by the API server on create; a client's value is ignored or refused."""


def resource_of(obj: Obj) -> Resource | None:
    """The resource an object is created through, at the version it names."""
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = SERVED_AT.get(api_version, api_version).rpartition("/")
    api = _BY_KIND.get((group, obj.get("kind")))
    if api is None:
        return None
    return Resource(group, version, api.plural, api.kind, api.namespaced, api.status_subresource)


def creatable(obj: Obj) -> tuple[Obj, Obj | None]:
    """(the body a client POSTs, the status it writes after), without what the server sets."""
    body = {k: v for k, v in obj.items() if k != "status"}
    body["apiVersion"] = SERVED_AT.get(obj["apiVersion"], obj["apiVersion"])
    body["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in _SERVER_SET}
    if obj["kind"] == "Pod":  # Priority admission computes it from priorityClassName, refuses a sent one
        body["spec"] = {k: v for k, v in obj["spec"].items() if k != "priority"}
    if obj["kind"] == "Job":  # the strategy's Jobs name no restartPolicy, which batch/v1 requires
        template = copy.deepcopy(obj["spec"]["template"])
        template["spec"].setdefault("restartPolicy", "Never")
        body["spec"] = {**obj["spec"], "template": template}
    return body, obj.get("status")


@contextlib.contextmanager
def _recursion_room(limit: int = 20_000) -> Iterator[None]:
    """The client's own JSON writer recurses once per level of the deep fieldsV1."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


@dataclass
class Stored:
    """What a round created, to check and to delete."""

    objects: list[tuple[Resource, Obj]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    denials: list[tuple[str, str]] = field(default_factory=list)
    """(the object, the API server's message) for each refused by topobridge's webhook."""

    def pods(self) -> list[Obj]:
        return [o for r, o in self.objects if r.kind == "Pod"]


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    slowest: dict[str, float] = field(default_factory=dict)
    crashes: int = 0
    failures: list[str] = field(default_factory=list)
    finds: Path | None = None

    def took(self, surface: str, seconds: float) -> None:
        self.counts[surface] += 1
        self.slowest[surface] = max(self.slowest.get(surface, 0.0), seconds)

    def fail(self, where: str, what: str, *, crash: bool = False, objects: list[Obj] | None = None) -> None:
        self.crashes += int(crash)
        self.failures.append(f"{where}: {what}")
        print(f"FAIL {where}: {what}", flush=True)
        if objects is not None and self.finds is not None:
            found = self.finds / (re.sub(r"[^a-z0-9]+", "-", where.lower())[:60] + ".json")
            if not found.exists():
                found.write_text(json.dumps({"failure": what, "objects": objects}))

    def summary(self, first: int, seeds: int) -> str:
        slowest = max(self.slowest.values(), default=0.0)
        surfaces = " ".join(f"{k}={self.counts[k]}/{v * 1e3:.0f}ms" for k, v in sorted(self.slowest.items()))
        return (
            f"summary: seed={first} seeds={seeds} scenarios={self.counts['rounds']} crashes={self.crashes} "
            f"slowest_ms={slowest * 1e3:.1f} failures={len(self.failures)} stored={self.counts['stored']} "
            f"refused={self.counts['refused']} denied={self.counts['denied']} "
            f"unserved={self.counts['unserved']} {surfaces}"
        ).rstrip()


class Live:
    """One control plane, one `topobridge run` beside it, and the rounds stored through it."""

    def __init__(self, kube: Kube, kubeconfig: str, work_dir: Path, tally: Tally) -> None:
        self.kube = kube
        self.kubeconfig = kubeconfig
        self.work_dir = work_dir
        self.run_log = work_dir / "topobridge.log"
        self.tally = tally
        self.run: e2e_local.TopobridgeState | None = None
        self._log_seen = 0
        self._uis = 0
        self.verbose = False

    # -- the long-lived process ------------------------------------------------------------

    async def start_run(self) -> None:
        """`topobridge run` (controller and webhook) as `topobridge dev-cluster` starts it
        (`e2e.local.start`: TLS, its webhooks registered with the API server, JSON logs)."""
        launch = e2e_local.Launch(schedulers=SERVED, ready_timeout=120.0)
        self.run = await e2e_local.start(self.kubeconfig, self.work_dir, launch)
        self.run_log = Path(self.run.log_file)

    async def stop_run(self) -> None:
        if self.run is not None:
            await e2e_local.stop(self.run)

    def running(self) -> bool:
        return self.run is not None and self.run.process().alive()

    def run_problems(self) -> list[str]:
        """What the run's log says went wrong since the last look: a traceback, a task that
        ended, an error line, an object left out without its field named."""
        text = self.run_log.read_bytes()[self._log_seen :].decode(errors="replace")
        self._log_seen += len(text.encode())
        problems = []
        for line in text.splitlines():
            entry = _json_line(line)
            level = str(entry.get("level", "")) if entry else ""
            event = str(entry.get("event", "")) if entry else line
            if any(m in line for m in RUN_LOG_FAILURES) or level in ("error", "critical"):
                problems.append(line[:400])
            elif event == "kube.object_unreadable" and not (entry.get("object") and entry.get("field")):
                problems.append(f"an object left out without its name and field: {line[:300]}")
        if self.run is not None and not self.running():
            problems.append("topobridge run is no longer running")
        return problems

    # -- storing a round ---------------------------------------------------------------------

    async def ensure_namespaces(self, names: tuple[str, ...]) -> None:
        for name in names:
            with contextlib.suppress(ApiError):
                await self.kube.create(
                    NAMESPACE_RESOURCE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                )

    async def store(self, objects: list[Obj]) -> Stored:
        """Create each object through the API (cluster-wide kinds first), its status through
        the status subresource; a refusal is recorded, never fatal."""
        stored = Stored()
        classes = {o["metadata"]["name"] for o in objects if o["kind"] == "PriorityClass"}
        ordered = sorted(
            objects, key=lambda o: _ORDER.index(o["kind"]) if o["kind"] in _ORDER else len(_ORDER)
        )
        for obj in ordered:
            res = resource_of(obj)
            if res is None or obj["kind"] == "Namespace":
                continue
            body, status = creatable(obj)
            started = time.perf_counter()
            try:
                with _recursion_room():
                    await self._create(res, body, classes)
                    if status and res.status_subresource and res.kind != "Pod":
                        await self.kube.merge_patch(
                            res, body["metadata"]["name"], {"status": status}, subresource="status"
                        )
                    if res.kind == "Node":
                        await self.kube.merge_patch(
                            res,
                            body["metadata"]["name"],
                            {"spec": {"taints": body.get("spec", {}).get("taints")}},
                        )
            except NotFoundError:  # a kind or version the 1.20 API server does not serve
                self.tally.counts["unserved"] += 1
            except ApiError as exc:
                what = f"{obj['kind']} {obj['metadata'].get('name', '')[:40]}"
                stored.refused.append(f"{what}: {str(exc)[:160]}")
                self.tally.counts["refused"] += 1
                if WEBHOOK in str(exc):
                    self.tally.counts["denied"] += 1
                    stored.denials.append((what, str(exc)))
            else:
                stored.objects.append((res, body))
                self.tally.counts["stored"] += 1
            finally:
                self.tally.took("store", time.perf_counter() - started)
        return stored

    async def _create(self, res: Resource, body: Obj, classes: set[str]) -> None:
        """Create; a pod naming a PriorityClass this round stored waits for Priority admission
        to see the class (its informer lags the create)."""
        if (body.get("spec") or {}).get("priorityClassName") in classes:
            await until_admitted(lambda: self.kube.create(res, body), timeout=10.0)
        else:
            await self.kube.create(res, body)

    async def delete(self, stored: Stored) -> None:
        """Every object the round stored, pods at once (no kubelet waits on them)."""
        for res, obj in reversed(stored.objects):
            meta = obj["metadata"]
            with contextlib.suppress(NotFoundError):
                await self.kube.delete(
                    res, meta["name"], namespace=meta.get("namespace") if res.namespaced else None,
                    grace_period_seconds=0 if res.kind == "Pod" else None,
                )  # fmt: skip

    # -- the checks ----------------------------------------------------------------------------

    async def ordinary_bound(self, gang: OrdinaryGang) -> str | None:
        """None once every member of the ordinary gang is bound to one of its nodes, else why not."""
        started = time.perf_counter()
        deadline = time.monotonic() + BIND_TIMEOUT
        why = ""
        while time.monotonic() < deadline:
            pods = (await self.kube.list(PODS, namespace=ORDINARY_NAMESPACE)).items
            placed = {p["metadata"]["name"]: (p.get("spec") or {}).get("nodeName") for p in pods}
            wanted = [p.split("/", 1)[1] for p in gang.pods]
            if all(placed.get(p) in gang.nodes for p in wanted):
                self.tally.took("bind", time.perf_counter() - started)
                return None
            why = "; ".join(
                f"{p}: {_condition(q) or 'no reason yet'}"
                for q in pods
                if (p := q["metadata"]["name"]) in wanted
            )
            if self.run is not None and not self.running():
                return "topobridge run is no longer running"
            await asyncio.sleep(0.5)
        return f"ordinary gang {gang.gang} not bound within {BIND_TIMEOUT:.0f} s: {why[:400]}"

    async def messages(self, stored: Stored, live: list[LivePod]) -> list[str]:
        """Every pending pod topobridge serves carries a reason free of Python text; a pod with
        a certainly malformed annotation is not bound silently and its reason names it."""
        started = time.perf_counter()
        bad = {(p.obj["metadata"]["namespace"], p.obj["metadata"]["name"]): p.bad for p in live if p.bad}
        served = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in stored.pods() if _served(o)}
        deadline = time.monotonic() + MESSAGE_TIMEOUT
        while True:
            problems = await self._message_problems(served, bad)
            if not problems or time.monotonic() > deadline:
                self.tally.took("messages", time.perf_counter() - started)
                return problems
            await asyncio.sleep(1.0)

    async def _message_problems(
        self, served: set[tuple[str, str]], bad: dict[tuple[str, str], str | None]
    ) -> list[str]:
        problems = []
        for ns in sorted({ns for ns, _ in served}):
            for pod in (await self.kube.list(PODS, namespace=ns)).items:
                key = (ns, pod["metadata"]["name"])
                if key not in served:
                    continue
                name = f"pod {ns}/{key[1][:40]}"
                message = _condition(pod)
                bound = bool((pod.get("spec") or {}).get("nodeName"))
                if (found := PYTHON_TEXT.search(message)) is not None:
                    problems.append(
                        f"{name}: reason carries Python's own text: {message[max(0, found.start() - 100) : found.end() + 60]!r}"
                    )
                elif not bound and not message:
                    problems.append(f"{name}: pending without a reason")
                elif (field_ := bad.get(key)) and (bound or not _names(message, field_)):
                    problems.append(
                        f"{name}: its malformed {field_} is not named: {'bound' if bound else message[:200]!r}"
                    )
        return problems

    async def cli(self, surface: str, *argv: str) -> tuple[str | None, str]:
        """One CLI command as its own process: (None when it exits 0 without Python's text,
        else what went wrong; its standard output)."""
        started = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "topobridge.cli", *argv,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "KUBECONFIG": self.kubeconfig},
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(proc.communicate(), CLI_TIMEOUT)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return f"{' '.join(argv)} still running after {CLI_TIMEOUT:.0f} s", ""
        finally:
            self.tally.took(surface, time.perf_counter() - started)
        said = out.decode(errors="replace")
        text = (out[-50_000:] + err[-50_000:]).decode(errors="replace")
        if proc.returncode != 0:
            return f"{' '.join(argv)} exited {proc.returncode}: {text[-400:]!r}", said
        if (found := PYTHON_TEXT.search(text)) is not None:
            return (
                f"{' '.join(argv)} printed Python's own text: {_around(text, found, 150)!r}",
                said,
            )
        return None, said

    async def explain_pending(self, simulated: str) -> list[str]:
        """`topobridge explain KEY` for the gangs `simulate --from-cluster` left waiting (at
        most `MAX_EXPLAINED`, `pending_gangs`): each exits 0, names its gang and gives the
        cycle's verdict, without Python's text."""
        problems = []
        for key in pending_gangs(simulated, MAX_EXPLAINED):
            why, said = await self.cli("explain", "explain", key)
            if why is not None:
                problems.append(why)
            elif f"gang {key}:" not in said or "verdict: " not in said:
                problems.append(f"explain {key}: the answer names no gang or verdict: {said[:300]!r}")
        return problems

    async def ui_round(self, drawn: Round) -> list[tuple[str, bool]]:
        """The live ui over the round, twice: one stopped as soon as it serves (still reading
        its first snapshot), one checked (`_ui_serving`) and stopped idle or, every other
        round, while a what-if is asked. (What failed, whether a crash) for each problem,
        its log's among them."""
        self._uis += 1
        found: list[tuple[str, bool]] = []
        steps = (("reading", self._ui_reading), ("serving", partial(self._ui_serving, drawn=drawn)))
        for name, check in steps:
            ui = LiveUi(self.kubeconfig, self.work_dir / f"ui-{self._uis}-{name}.log", self.tally)
            try:
                await ui.start()
                await check(ui)
            except UiProblem as exc:
                found.append((f"ui ({name}): {exc}", exc.crash))
            finally:
                await ui.kill()
            found += [(f"ui ({name}) logged: {line}", True) for line in ui.problems()]
        return found

    async def _ui_reading(self, ui: LiveUi) -> None:
        await ui.stop("reading")

    async def _ui_serving(self, ui: LiveUi, drawn: Round) -> None:
        """Its first view; the round's ordinary gang placed in it; `/api/view`; why the
        round's waiting gangs wait (`_ui_explains`); the round's what-ifs; then SIGTERM."""
        await ui.first_view()
        await _ui_shows_placed(ui, drawn.ordinary.gang)
        if (view := await ui.ask("/api/view")).status != 200:
            raise UiProblem(f"/api/view answered {view.status}: {view.text[:300]!r}")
        await _ui_explains(ui)
        for n, text in enumerate(pasted_jobs(drawn)):
            await _ui_what_if(ui, text, answerable=n == 0)
        if self._uis % 2:
            await ui.stop("idle")
            return
        asking = asyncio.create_task(ui.ask("/api/whatif", pasted_jobs(drawn)[0]))
        await _ui_busy(ui)
        try:
            await ui.stop("busy")
        finally:
            asking.cancel()
            with contextlib.suppress(asyncio.CancelledError, UiProblem):
                await asking

    async def one_round(self, where: str, drawn: Round, *, commands: bool = True) -> None:
        """Store, check every surface (the CLI's only with `commands`), delete."""
        self.tally.counts["rounds"] += 1
        objects = drawn.objects()
        await self.ensure_namespaces((*NAMESPACES, ORDINARY_NAMESPACE))
        stored = await self.store(objects)
        try:
            await self._check(where, drawn, stored, objects, commands=commands)
            if self.verbose:
                await self._show(where, stored)
        finally:
            await self.delete(stored)

    async def _show(self, where: str, stored: Stored) -> None:
        """What the round stored, refused and left pending, for a reader of the run."""
        print(f"round {where}: stored={len(stored.objects)} refused={len(stored.refused)}", flush=True)
        for refusal in stored.refused:
            print(f"  refused {refusal}", flush=True)
        for ns in sorted({o["metadata"]["namespace"] for o in stored.pods()}):
            for pod in (await self.kube.list(PODS, namespace=ns)).items:
                spec = pod.get("spec") or {}
                state = f"on {spec['nodeName']}" if spec.get("nodeName") else repr(_condition(pod)[:160])
                print(
                    f"  pod {ns[:20]}/{pod['metadata']['name'][:30]} ({spec.get('schedulerName')}): {state}"
                )

    async def _check(
        self, where: str, drawn: Round, stored: Stored, objects: list[Obj], *, commands: bool
    ) -> None:
        if (why := await self.ordinary_bound(drawn.ordinary)) is not None:
            self.tally.fail(where, why, objects=objects)
        for problem in await self.messages(stored, drawn.live):
            self.tally.fail(where, problem, objects=objects)
        for what, message in stored.denials:
            if (problem := _denial_problem(message)) is not None:
                self.tally.fail(where, f"{what} denied {problem}", objects=objects)
        gang = drawn.ordinary.gang.split(":", 1)[1]
        calls = (
            ("tree", ("tree",)),
            ("explain", ("explain", gang.split("/", 1)[1], "-n", ORDINARY_NAMESPACE)),
            ("simulate", ("simulate", "--from-cluster", "-o", "json")),
        )
        said: dict[str, str] = {}
        for surface, argv in calls if commands else ():
            why, said[surface] = await self.cli(surface, *argv)
            if why is not None:
                self.tally.fail(where, why, crash=True, objects=objects)
        for why in await self.explain_pending(said["simulate"]) if commands else ():
            self.tally.fail(where, why, crash=True, objects=objects)
        for why, crash in await self.ui_round(drawn) if commands else ():
            self.tally.fail(where, why, crash=crash, objects=objects)
        for problem in self.run_problems():
            self.tally.fail(where, f"topobridge run: {problem}", crash=True, objects=objects)


def pending_gangs(simulated: str, limit: int) -> list[str]:
    """The keys of the gangs `simulate -o json` says still wait, at most `limit`: the first of
    each dialect (natural order), then the others (a round stays short, and every dialect's
    explanation is read)."""
    lines = simulated.strip().splitlines()
    try:
        waiting = json.loads(lines[-1]).get("unschedulable", {}) if lines else {}
    except (ValueError, AttributeError):
        return []
    return bounded(list(waiting), limit)


def bounded(keys: list[str], limit: int) -> list[str]:
    """At most `limit` gang keys: the first of each dialect (natural order), then the others."""
    ordered = sorted(keys, key=natural_key)
    firsts: dict[str, str] = {}
    for key in ordered:
        firsts.setdefault(key.split(":", 1)[0] if ":" in key.split("/", 1)[0] else "", key)
    chosen = list(firsts.values())
    return [*chosen, *(k for k in ordered if k not in chosen)][:limit]


def _around(text: str, found: re.Match[str], before: int = 100) -> str:
    """What a pattern found, with the text around it."""
    return text[max(0, found.start() - before) : found.end() + 60]


def _denial_problem(message: str) -> str | None:
    """What is wrong with the webhook's denial of an object, if anything: Python's own text,
    or no field named."""
    if (found := PYTHON_TEXT.search(message)) is not None:
        return f"with Python's own text: {message[max(0, found.start() - 100) : found.end() + 60]!r}"
    if FIELD_NAMED.search(message) is None:
        return f"without naming a field: {message[:300]!r}"
    return None


def _names(message: str, field_: str) -> bool:
    """Whether a reason names the malformed annotation, or another of the pod's own (one error
    per pod: `metadata.annotations[KEY]: Invalid value: ...`), or the gang's first member's
    quoted (`GangGroup ... gets rejected due to member Pod ...`: one error per gang)."""
    named = field_ in message or "metadata.annotations[" in message
    return named or message.startswith("GangGroup ")


def _served(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return spec.get("schedulerName", "default-scheduler") in SERVED and not spec.get("nodeName")


def _condition(pod: Obj) -> str:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return str(c.get("message") or c.get("reason") or "")
    return ""


def _json_line(line: str) -> Obj | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


# --- the live ui --------------------------------------------------------------------------------


class UiProblem(Exception):
    """The live ui failed a check; `crash`: it exited, hung or answered with a bug."""

    def __init__(self, what: str, *, crash: bool = False) -> None:
        super().__init__(what)
        self.crash = crash


@dataclass
class UiAnswer:
    status: int
    text: str

    def data(self) -> Obj:
        try:
            found = json.loads(self.text)
        except ValueError:
            return {}
        return found if isinstance(found, dict) else {}


class LiveUi:
    """One `topobridge ui` reading the cluster (as a user starts it: the kubeconfig, any free
    port), its log (JSON lines) in a file, and the answers it gives, each checked for Python's
    own text."""

    def __init__(self, kubeconfig: str, log: Path, tally: Tally) -> None:
        self.kubeconfig, self.log, self.tally = kubeconfig, log, tally
        self.proc: asyncio.subprocess.Process | None = None
        self.base = ""
        self._http: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        """Start it and wait for its `serving http://HOST:PORT/` line (the cluster listed)."""
        announced = self.log.with_suffix(".out")
        with announced.open("wb") as out, self.log.open("wb") as err:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "topobridge.cli", "--log-format", "json", "ui", "--port", "0",
                stdout=out, stderr=err, env={**os.environ, "KUBECONFIG": self.kubeconfig},
            )  # fmt: skip
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=UI_ANSWER_TIMEOUT))
        deadline = time.monotonic() + UI_TIMEOUT
        while not (found := SERVING.search(announced.read_text(errors="replace"))):
            if self.proc.returncode is not None or time.monotonic() > deadline:
                raise UiProblem(f"the ui did not serve: {self._said()}", crash=True)
            await asyncio.sleep(0.2)
        self.base = found.group(1).rstrip("/")

    async def ask(self, path: str, text: str | None = None) -> UiAnswer:
        """GET `path`, or POST `text` to it: the answer, checked for Python's text; a 5xx
        other than "reading the snapshot" is a bug."""
        assert self._http is not None
        started = time.perf_counter()
        try:
            if text is None:
                async with self._http.get(self.base + path) as resp:
                    answer = UiAnswer(resp.status, await resp.text())
            else:
                async with self._http.post(self.base + path, data=text.encode()) as resp:
                    answer = UiAnswer(resp.status, await resp.text())
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise UiProblem(f"{path[:80]}: no answer: {exc!r}: {self._said()}", crash=True) from None
        self.tally.took("ui", time.perf_counter() - started)
        if (found := PYTHON_TEXT.search(answer.text)) is not None:
            raise UiProblem(f"{path[:80]}: answered Python's own text: {_around(answer.text, found)!r}")
        if answer.status >= 500 and not _reading(answer):
            raise UiProblem(f"{path[:80]}: answered {answer.status}: {answer.text[:300]!r}", crash=True)
        return answer

    async def first_view(self) -> UiAnswer:
        """`/api/view` once the first snapshot is read (503 "reading the snapshot" until then)."""
        deadline = time.monotonic() + UI_TIMEOUT
        while _reading(answer := await self.ask("/api/view")):
            if time.monotonic() > deadline:
                raise UiProblem(f"the ui still reading after {UI_TIMEOUT:.0f} s", crash=True)
            await asyncio.sleep(0.2)
        return answer

    async def kill(self) -> None:
        """What a failed check leaves: the process killed, the client closed."""
        if self._http is not None:
            await self._http.close()
            self._http = None
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()

    async def stop(self, state: str) -> None:
        """SIGTERM; it must exit 0 within `UI_STOP_TIMEOUT` whatever it is doing (`state`)."""
        if self._http is not None:
            await self._http.close()
            self._http = None
        if self.proc is None or self.proc.returncode is not None:
            return
        started = time.perf_counter()
        self.proc.terminate()
        try:
            code = await asyncio.wait_for(self.proc.wait(), UI_STOP_TIMEOUT)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
            raise UiProblem(
                f"SIGTERM {state}: still running after {UI_STOP_TIMEOUT:.0f} s", crash=True
            ) from None
        self.tally.took("ui-stop", time.perf_counter() - started)
        self.tally.counts[f"ui-stop-{state}"] += 1
        if code != 0:
            raise UiProblem(f"SIGTERM {state}: exited {code}: {self._said()}", crash=True)

    def problems(self) -> list[str]:
        """What its log says went wrong: a traceback, an error line."""
        out = []
        for line in self.log.read_text(errors="replace").splitlines():
            entry = _json_line(line)
            if "Traceback (most recent" in line or (entry and entry.get("level") in ("error", "critical")):
                out.append(line[:400])
        return out

    def _said(self) -> str:
        return repr(self.log.read_text(errors="replace")[-400:])


SERVING = re.compile(r"^serving (http://\S+)", re.MULTILINE)
UI_TIMEOUT = 60.0
"""Seconds the ui may take to serve, to read its first snapshot, and to show the round."""
UI_ANSWER_TIMEOUT = 120.0
UI_STOP_TIMEOUT = 20.0
"""Seconds the ui may take to exit after SIGTERM (its own grace is a few seconds)."""
WHATIF_NAMESPACE = "whatif-"
"""A pasted object's namespace is this and a number per namespace: no pod of the cluster has
its name there, and two objects of one name in two namespaces stay apart."""


async def _ui_shows_placed(ui: LiveUi, gang: str) -> None:
    """Wait for the ui to show the round's ordinary gang placed (it follows the cluster)."""
    deadline = time.monotonic() + UI_TIMEOUT
    while not (await ui.ask(f"/api/gangs?list=placed&q={quote(gang)}")).data().get("matched"):
        if time.monotonic() > deadline:
            raise UiProblem(f"the ordinary gang {gang} not shown placed within {UI_TIMEOUT:.0f} s")
        await asyncio.sleep(0.5)


async def _ui_pending(ui: LiveUi) -> list[str]:
    items = (await ui.ask(f"/api/gangs?list=pending&limit={GANGS_LISTED}")).data().get("items") or []
    return [str(g.get("gang")) for g in items if isinstance(g, dict)]


async def _ui_explains(ui: LiveUi) -> None:
    """`/api/explain` for the gangs the ui lists as waiting (at most `MAX_EXPLAINED`, one per
    dialect first): 200 and the gang named; a 404 only for a gang no longer listed."""
    for key in bounded(await _ui_pending(ui), MAX_EXPLAINED):
        answer = await ui.ask(f"/api/explain?gang={quote(key)}")
        if answer.status == 404 and key not in await _ui_pending(ui):
            continue  # placed or gone since it was listed
        if answer.status != 200 or f"gang {key}:" not in str(answer.data().get("text", "")):
            raise UiProblem(f"/api/explain {key}: answered {answer.status}: {answer.text[:300]!r}")


async def _ui_what_if(ui: LiveUi, text: str, *, answerable: bool) -> None:
    """A pasted job: 200 with an answer per gang, or (unless `answerable`) a 4xx whose error
    names the field."""
    answer = await ui.ask("/api/whatif", text)
    error = str(answer.data().get("error", ""))
    if answer.status == 200 and isinstance(answer.data().get("gangs"), list):
        return
    if answerable or not 400 <= answer.status < 500:
        raise UiProblem(f"what-if answered {answer.status}: {answer.text[:300]!r}")
    if (problem := _denial_problem(error)) is not None:
        raise UiProblem(f"what-if refused {problem}")


async def _ui_busy(ui: LiveUi) -> None:
    """Wait (briefly) for the what-if just asked to be running, for the SIGTERM that follows."""
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and not (await ui.ask("/api/whatif/progress")).data().get("running"):
        await asyncio.sleep(0.05)


GANGS_LISTED = 200
"""Waiting gangs a round reads from the ui's list (its largest page)."""


def _reading(answer: UiAnswer) -> bool:
    return answer.status == 503 and "reading the snapshot" in answer.text


def pasted_jobs(drawn: Round) -> list[str]:
    """What a round pastes into the ui's what-if box: the ordinary gang's PodGroup and pods
    (a job it can answer), and the round's hostile and live pods with their PodGroups (most
    refused by name of the field), each moved to a namespace of its own (`WHATIF_NAMESPACE`),
    as one JSON list within the box's limit (the biggest objects left out first)."""
    ordinary = [o for o in drawn.ordinary.objects if o["kind"] != "Node"]
    hostile = [
        *(o for o in drawn.hostile if o.get("kind") in ("Pod", "PodGroup")),
        *(p.stored() for p in drawn.live),
    ]
    return [_pasted(ordinary), *([_pasted(hostile)] if hostile else [])]


def _pasted(objects: list[Obj]) -> str:
    """`objects`, each namespace renamed `WHATIF_NAMESPACE<n>`, as one `kind: List`, as
    `kubectl get -o json` prints it."""
    renamed: dict[str, str] = {}
    moved = []
    for o in objects:
        meta = o.get("metadata") or {}
        ns = renamed.setdefault(str(meta.get("namespace")), f"{WHATIF_NAMESPACE}{len(renamed)}")
        moved.append({**o, "metadata": {**meta, "namespace": ns}})
    with _recursion_room():
        texts = sorted((json.dumps(o) for o in moved), key=len)
    head, tail = '{"apiVersion": "v1", "kind": "List", "items": [', "]}"
    kept: list[str] = []
    size = len(head) + len(tail)
    for text in texts:
        if size + len(text) + 1 > whatif.MAX_TEXT:
            break
        kept.append(text)
        size += len(text) + 1
    return head + ",".join(kept) + tail


# --- the command line -------------------------------------------------------------------------


async def explore(kubeconfig: str, args: argparse.Namespace, tally: Tally, first: int) -> int:
    """Rounds from `first`, `first+1`, ... until the time is up; the seeds tried."""
    work_dir = Path(tempfile.mkdtemp(prefix="topobridge-livefuzz-"))
    kube = await Kube.connect(kubeconfig=kubeconfig)
    live = Live(kube, kubeconfig, work_dir, tally)
    live.verbose = args.verbose
    deadline = time.monotonic() + args.minutes * 60
    seed = first
    try:
        await live.start_run()
        print(f"run log: {live.run_log}", flush=True)
        while time.monotonic() < deadline:
            for n, drawn in enumerate(draw_rounds(seed, args.rounds_per_seed), start=1):
                await live.one_round(f"seed {seed} example {n}", drawn)
                if time.monotonic() >= deadline:
                    break
            seed += 1
    finally:
        await live.stop_run()
        await kube.close()
    return seed - first


def main() -> int:
    from topobridge import logs
    from topobridge.devcluster import LocalControlPlane

    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--rounds-per-seed", type=int, default=2)
    parser.add_argument("--finds", type=Path, default=None, help="write each failing round's objects here")
    parser.add_argument("--verbose", action="store_true", help="print each round's objects and outcomes")
    args = parser.parse_args()
    logs.configure(level="critical", json_output=True)
    first = args.seed if args.seed is not None else random.randrange(2**32)
    print(f"seed={first}", flush=True)
    tally = Tally()
    if args.finds is not None:
        args.finds.mkdir(parents=True, exist_ok=True)
        tally.finds = args.finds
    with LocalControlPlane(with_controller_manager=False) as plane:
        try:
            seeds = asyncio.run(explore(plane.kubeconfig, args, tally, first))
        except (ControllerError, e2e_local.TopobridgeError) as exc:
            tally.fail(f"seed {first} example 0", f"the control plane or topobridge: {exc}", crash=True)
            seeds = 0
    print(tally.summary(first, seeds), flush=True)
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
