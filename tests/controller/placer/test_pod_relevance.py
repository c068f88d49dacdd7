"""A pod update the runtime calls irrelevant (`controller.runtime.cache.CHANGED`) leaves the
scheduler's view as a fresh start on the new object would build it.

An update called irrelevant replaces the stored model but moves no aggregate: the bound pods'
records, the gangs and their members keep what they were made from. That is right only for
what no decision reads (a status heartbeat). Each row changes one thing about a bound or a
pending pod, as a kubelet, a controller or a user would; the view after the update (taken
incrementally, with the runtime's own relevance rule) must equal the view of a state that
only ever saw the new object. A row whose change a decision reads must therefore be called
relevant, and the `relevant` column says which rows those are, so the rule cannot quietly
grow to call everything relevant either.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from placer_objects import node, pod

from controller.placer.cluster import ClusterState, ClusterView, Kind, start_seconds
from controller.runtime.cache import CHANGED
from translations.core import Node, Pod

Obj = dict[str, Any]
Change = Callable[[Obj], None]

STARTED = "2026-11-28T04:23:35Z"


def _bound() -> Obj:
    p = pod("web", cpu="1", node_name="n0", priority=0, labels={"app": "web"})
    p["status"] = {"phase": "Pending"}
    return p


def _running() -> Obj:
    p = _bound()
    p["status"] = {
        "phase": "Running",
        "startTime": STARTED,
        "podIP": "10.0.0.1",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": STARTED}],
        "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0, "image": "busybox"}],
    }
    return p


def _pending() -> Obj:
    p = pod("gang-0", cpu="1", priority=100, labels={"pod-group.scheduling.sigs.k8s.io": "g"})
    p["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    return p


def _set(path: str, value: Any) -> Change:
    def change(obj: Obj) -> None:
        *parents, leaf = path.split(".")
        at = obj
        for part in parents:
            at = at.setdefault(part, {})
        at[leaf] = value

    return change


def _heartbeat(obj: Obj) -> None:
    st = obj["status"]
    st["conditions"] = [{"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-28T05:00:00Z"}]
    st["podIP"] = "10.0.0.2"
    st["containerStatuses"][0]["restartCount"] = 3


def _resized(obj: Obj) -> None:
    obj["status"]["containerStatuses"][0]["allocatedResources"] = {"cpu": "3", "memory": "32Gi"}


ROWS: list[tuple[str, Callable[[], Obj], Change, bool]] = [
    ("kubelet starts a bound pod: startTime", _bound, _set("status.startTime", STARTED), True),
    ("startTime rewritten", _running, _set("status.startTime", "2026-11-28T05:00:00Z"), True),
    ("in-place resize allocated more", _running, _resized, True),
    ("finished", _running, _set("status.phase", "Succeeded"), True),
    ("terminating", _running, _set("metadata.deletionTimestamp", "2026-11-28T05:00:00Z"), True),
    ("labels changed", _running, _set("metadata.labels", {"app": "db"}), True),
    (
        "preemptable annotation",
        _running,
        _set("metadata.annotations", {"volcano.sh/preemptable": "false"}),
        True,
    ),
    ("status heartbeat: conditions, IP, restarts", _running, _heartbeat, False),
    ("scheduling gate lifted", _pending, _set("spec.schedulingGates", []), True),
    ("toleration added", _pending, _set("spec.tolerations", [{"operator": "Exists"}]), True),
    ("nominated", _pending, _set("status.nominatedNodeName", "n0"), True),
    (
        "the scheduler's own PodScheduled condition",
        _pending,
        _set("status.conditions", [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]),
        False,
    ),
]


def _projection(view: ClusterView) -> dict[str, Any]:
    """What decisions read of the pods: the bound pods' records and every gang's members."""
    snap = view.snapshot
    members = {
        k: [
            (
                m.key,
                m.rank,
                m.priority,
                m.preemption_policy,
                dict(m.requests),
                m.shape,
                m.pod.spec,
                m.pod.metadata.labels,
                m.pod.metadata.annotations,
                m.pod.metadata.deletion_timestamp,
                m.pod.terminal,
                start_seconds(m.pod),
                m.pod.status.nominated_node_name if m.pod.status else None,
            )
            for m in view.gangs[k].pods
        ]
        for k in sorted(view.gangs)
    }
    return {
        "used": snap.used.tolist(),
        "pods": sorted(
            (
                *(p.key, p.node, p.req.tolist(), p.priority, p.gang, dict(p.labels), p.terminating),
                *(p.started, p.preemptable),
            )
            for p in snap.pods.values()
        ),
        "nominations": sorted((n.pod, n.node, n.req.tolist()) for n in snap.nominations.values()),
        "members": members,
        "pending": list(view.pending),
    }


def _state(*pods: Obj) -> ClusterState:
    state = ClusterState()
    state.put(Kind.NODE, "n0", Node.parse(node("n0", cpu="8")))
    for p in pods:
        state.put(Kind.POD, f"default/{p['metadata']['name']}", Pod.parse(p))
    return state


@pytest.mark.parametrize(("case", "make", "change", "relevant"), ROWS, ids=[r[0] for r in ROWS])
def test_an_update_called_irrelevant_changes_no_decision(
    case: str, make: Callable[[], Obj], change: Change, relevant: bool
) -> None:
    old = make()
    new = copy.deepcopy(old)
    change(new)
    assert new != old, case
    key = f"default/{old['metadata']['name']}"
    state = _state(old)
    state.view()
    called = CHANGED[Kind.POD](old, new)
    state.put(Kind.POD, key, Pod.parse(new), relevant=called)
    assert _projection(state.view()) == _projection(_state(new).view()), case
    assert called is relevant, f"{case}: the runtime calls it {'relevant' if called else 'irrelevant'}"
