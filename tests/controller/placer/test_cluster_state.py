"""The incremental snapshot equals a full rebuild, after any sequence of object events.

Random add/update/delete sequences over nodes (labels, taints, capacity), pods (pending, bound,
assumed, nominated, terminating, in gangs of three dialects, GangGroups), PodGroups, HyperNodes,
the ClusterNetworkTopology, priority classes and PodDisruptionBudgets go into one
`ClusterState`, which takes an incremental view at random points (and runs cycles that reserve
on its kept snapshot, which the next view must roll back); at each point a fresh state
holding the same objects builds its view from scratch, and every part must be equal: index,
requested resources per node, bound pods (with gang, priority, labels, terminating, start time,
terms, preemptable), the pod arrays preemption reads (kept by patching across cycles, equal to a
fresh build row for row and in the snapshot's order, budget coverage included), minMember,
nominations, gangs, the pending list and the budgets. Binds as `simulate` applies them (one
pod, or every pending pod at once) keep it equal too, where a gang whose pods were only bound is
made again from its members rather than discovered again.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from placer_objects import cnt, hypernode, koord_gang, node, pdb, pod, priority_class, volcano_gang

from controller.placer.budgets import budgets_from
from controller.placer.cluster import ClusterState, ClusterView, Kind
from controller.placer.columns import pod_arrays
from controller.placer.cycle import GangTiming, SchedulingCycle
from controller.placer.scenario import _put_pod
from controller.placer.snapshot import Snapshot
from translations import koordinator as koord
from translations import volcano
from translations.core import Node, Pod, PodDisruptionBudget, PriorityClass
from translations.gangs import Gang, GangKey

Obj = dict[str, Any]
NODES = [f"n{i}" for i in range(6)]
GANGS = ["g0", "g1", "g2"]
COUNTS: Counter[str] = Counter()
SERVED = ("koord-scheduler", "volcano")


def _node(i: int, variant: int) -> tuple[Kind, str, Any]:
    name = NODES[i]
    labels = {
        "network.topology.nvidia.com/spine": f"s{(i + variant) % 2}",
        "network.topology.nvidia.com/block": f"b{i // 2}",
    }
    taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if variant == 2 else None
    return Kind.NODE, name, Node.parse(node(name, cpu=str(4 + 2 * variant), labels=labels, taints=taints))


def _pod(i: int, variant: int, gang: int, where: int) -> tuple[Kind, str, Any]:
    name = f"p{i}"
    kw: dict[str, Any] = {"cpu": str(1 + variant % 2), "priority": (variant * 7) % 3 * 10}
    if gang == 1:
        kw["labels"] = {"pod-group.scheduling.sigs.k8s.io": GANGS[i % 3], "app": f"a{variant % 2}"}
    elif gang == 2:
        kw["annotations"] = {"scheduling.k8s.io/group-name": GANGS[i % 3]}
        kw["scheduler"] = "volcano"
    elif gang == 3:
        groups = json.dumps([f"default/{g}" for g in GANGS[:2]])
        kw["annotations"] = {koord.GANG_NAME: f"k{i % 2}", "gang.scheduling.koordinator.sh/groups": groups}
    else:
        kw["labels"] = {"app": f"a{variant % 2}"}
    if where > 0:
        kw["node_name"] = NODES[(where - 1) % len(NODES)]
    obj = pod(name, **kw)
    if where < 0:
        obj["status"] = {"nominatedNodeName": NODES[(-where - 1) % len(NODES)]}
    if variant == 3:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if variant == 4:
        obj["status"] = {"phase": "Succeeded"}
    if variant == 2:  # inter-pod terms: kept apart in the snapshot (`with_terms`)
        anti = {"labelSelector": {"matchLabels": {"app": "a0"}}, "topologyKey": "kubernetes.io/hostname"}
        obj["spec"]["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [anti]}
        }
    return Kind.POD, f"default/{name}", Pod.parse(obj)


def _podgroup(i: int, variant: int) -> tuple[Kind, str, Any]:
    g = GANGS[i]
    if variant % 2:
        groups = [f"default/{GANGS[(i + 1) % 3]}"] if variant == 3 else None
        return (
            Kind.SIGS_PODGROUP,
            f"default/{g}",
            koord.SigsPodGroup.parse(koord_gang(g, 1 + variant % 3, groups=groups)),
        )
    return Kind.VOLCANO_PODGROUP, f"default/{g}", volcano.PodGroup.parse(volcano_gang(g, 1 + variant % 3))


def _hypernode(i: int, variant: int) -> tuple[Kind, str, Any]:
    members = [("Node", NODES[j]) for j in range(len(NODES)) if j % 2 == (i + variant) % 2]
    return Kind.HYPERNODE, f"hn{i}", volcano.HyperNode.parse(hypernode(f"hn{i}", 1, members))


def _other(i: int, variant: int) -> tuple[Kind, str, Any]:
    if i == 0:
        return Kind.CNT, "default", koord.ClusterNetworkTopology.parse(cnt(spine=variant % 2 == 0))
    if i == 1:
        return Kind.PRIORITY_CLASS, "high", PriorityClass.parse(priority_class("high", 100 + variant))
    allowed = None if variant % 2 else variant
    minimum: int | str | None = "50%" if variant == 3 else (1 if variant == 1 else None)
    return (
        Kind.PDB,
        f"default/b{i}",
        PodDisruptionBudget.parse(
            pdb(f"b{i}", {"app": f"a{variant % 2}"}, allowed=allowed, min_available=minimum)
        ),
    )


small = st.integers(0, 4)
pods = st.builds(_pod, st.integers(0, 11), small, st.integers(0, 3), st.integers(-2, 7))
objects = st.one_of(
    st.builds(_node, st.integers(0, len(NODES) - 1), st.integers(0, 2)),
    pods,
    pods,
    st.builds(_podgroup, st.integers(0, 2), st.integers(0, 3)),
    st.builds(_hypernode, st.integers(0, 1), st.integers(0, 1)),
    st.builds(_other, st.integers(0, 3), st.integers(0, 3)),
)
Step = tuple[str, Any]
steps = st.lists(
    st.one_of(
        st.tuples(st.just("put"), objects),
        st.tuples(st.just("delete"), objects),
        st.tuples(st.just("assume"), st.tuples(st.integers(0, 11), st.integers(0, len(NODES) - 1))),
        st.tuples(st.just("forget"), st.integers(0, 11)),
        st.tuples(st.just("view"), st.none()),
        st.tuples(st.just("cycle"), st.none()),
    ),
    min_size=1,
    max_size=40,
)


def _canonical(view: ClusterView) -> dict[str, Any]:
    snap = view.snapshot
    return {
        "nodes": view.index.node_names,
        "domains": [str(d) for d in view.index.dom_ids],
        "resources": view.index.resources,
        "used": snap.used.tolist(),
        "pods": sorted(
            (
                *(p.key, p.node, p.req.tolist(), p.priority, p.gang, dict(p.labels), p.terminating),
                *(p.namespace, p.started, p.preemptable, p.terms),
            )
            for p in snap.pods.values()
        ),
        "gang_min": dict(sorted(snap.gang_min.items())),
        "nominations": sorted(
            (n.pod, n.gang, n.node, n.req.tolist(), n.priority) for n in snap.nominations.values()
        ),
        "gangs": {k: view.gangs[k] for k in sorted(view.gangs)},
        "pending": list(view.pending),
        "budgets": [(b.key, b.allowed) for b in view.budgets],
        "budget_hits": dict(sorted((snap.budget_hits or {}).items())),
        "with_terms": sorted(snap.with_terms),
        "arrays": _arrays(snap),
    }


def _arrays(snap: Snapshot) -> list[tuple[Any, ...]]:
    """The pod arrays preemption reads (patched across cycles on the kept snapshot), a row
    per pod by key: the same rows a fresh build gives, in the snapshot's own pod order."""
    got, fresh = snap.arrays(), pod_arrays(snap.pods, len(snap.index.resources), snap.budget_hits)
    assert got.keys == fresh.keys == list(snap.pods)
    assert [got.position[k] for k in got.keys] == list(range(len(got.keys)))
    columns = ("node", "req", "priority", "terminating", "gang_size")
    for name in columns:
        assert np.array_equal(getattr(got, name), getattr(fresh, name)), name
    covers = [got.cover_table[c] for c in got.cover.tolist()]
    assert covers == [fresh.cover_table[c] for c in fresh.cover.tolist()]
    rows = zip(got.keys, *(getattr(got, name).tolist() for name in columns), covers, strict=True)
    return sorted(rows)


def _full(state: ClusterState) -> ClusterView:
    fresh = ClusterState()
    for kind in Kind:
        for key, obj in state.store(kind).items():
            fresh.put(kind, key, obj)
    fresh.assumed.update(state.assumed)
    return fresh.view()


def _check(state: ClusterState) -> None:
    incremental = _canonical(state.view())
    full = _canonical(_full(state))
    for part in full:
        assert incremental[part] == full[part], part
    # The kept counts are what counting every pod against every budget gives.
    view = state.view()
    counted = budgets_from(
        list(state.pdbs.values()), Snapshot(view.index, view.snapshot.used, view.snapshot.pods, {})
    )
    assert [(b.key, b.allowed) for b in counted] == incremental["budgets"]
    COUNTS["views compared"] += 1
    COUNTS["with bound pods"] += bool(full["pods"])
    COUNTS["with nominations"] += bool(full["nominations"])
    COUNTS["with merged gangs"] += any(g.all_or_nothing for g in full["gangs"].values())
    COUNTS["with inter-pod terms"] += bool(full["with_terms"])


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(pods, min_size=3, max_size=12), steps)
def test_incremental_view_equals_full_rebuild(base: list[tuple[Kind, str, Any]], events: list[Step]) -> None:
    state = ClusterState()
    # A cluster to start from: nodes under a ClusterNetworkTopology, and some pods.
    for kind, key, obj in [*(_node(i, 0) for i in range(len(NODES))), _other(0, 0), *base]:
        state.put(kind, key, obj)
    for what, arg in events:
        if what == "put":
            kind, key, obj = arg
            state.put(kind, key, obj)
        elif what == "delete":
            kind, key, _ = arg
            state.delete(kind, key)
        elif what == "assume":
            i, n = arg
            key = f"default/p{i}"
            if key in state.pods and not state.pods[key].spec.node_name:
                state.assume(key, NODES[n])
        elif what == "forget":
            state.forget(f"default/p{arg}")
        elif what == "cycle":
            # A cycle reserves on the kept snapshot; the next view must not see its reservations.
            plan = SchedulingCycle(state.view(), served=SERVED, now=0.0, timing=GangTiming()).run()
            COUNTS["cycles that reserved"] += bool(plan.binds or plan.preemptions)
        else:
            _check(state)
    _check(state)
    COUNTS["sequences"] += 1


def test_zz_property_counts() -> None:
    """The property above really compared views with bound pods, nominations and GangGroups."""
    print(f"incremental vs full rebuild: {dict(COUNTS)}")
    assert COUNTS["sequences"] >= 300
    assert COUNTS["with bound pods"] > 100
    assert COUNTS["with nominations"] > 20
    assert COUNTS["with merged gangs"] > 5
    assert COUNTS["cycles that reserved"] > 20
    assert COUNTS["with inter-pod terms"] > 20


def test_relevant_false_moves_nothing() -> None:
    """A heartbeat (relevant=False) replaces the model and moves no aggregate or generation."""
    state = ClusterState()
    _, name, n = _node(0, 0)
    state.put(Kind.NODE, name, n)
    _, key, p = _pod(0, 0, 0, 1)
    state.put(Kind.POD, key, p)
    before = state.view()
    gen = state.generation
    state.put(Kind.POD, key, p.model_copy(), relevant=False)
    assert state.generation == gen
    after = state.view()
    assert after.snapshot.pods.keys() == before.snapshot.pods.keys()
    assert after.index is before.index


class _CountingState(ClusterState):
    """Counts the gangs made again from their bound members rather than discovered again."""

    def _bound_again(self, agg: Any, keys: Any) -> dict[GangKey, Gang]:
        again = super()._bound_again(agg, keys)
        COUNTS["gangs made again after binds"] += len(again)
        return again


def _bind(state: ClusterState, keys: list[str], node: int) -> None:
    """Each pending pod of `keys` bound as `simulate` binds it, on nodes from `node` on."""
    for i, key in enumerate(keys):
        if key in state.pods and not state.pods[key].spec.node_name:
            _put_pod(state, key, node_name=NODES[(node + i) % len(NODES)])


pending = st.builds(_pod, st.integers(0, 11), st.integers(0, 2), st.integers(0, 2), st.just(0))
bind_steps = st.lists(
    st.one_of(
        st.tuples(st.just("bind"), st.tuples(st.integers(0, 11), st.integers(0, len(NODES) - 1))),
        st.tuples(st.just("bind all"), st.integers(0, len(NODES) - 1)),
        st.tuples(
            st.just("put"), st.one_of(pending, st.builds(_podgroup, st.integers(0, 2), st.integers(0, 3)))
        ),
        st.tuples(st.just("assume"), st.tuples(st.integers(0, 11), st.integers(0, len(NODES) - 1))),
        st.tuples(st.just("view"), st.none()),
    ),
    min_size=1,
    max_size=20,
)


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(pending, min_size=3, max_size=12), st.lists(st.integers(0, 3), max_size=3), bind_steps)
def test_binds_keep_the_incremental_view_equal_to_a_full_rebuild(
    base: list[tuple[Kind, str, Any]], groups: list[int], events: list[Step]
) -> None:
    state = _CountingState()
    podgroups = [_podgroup(i, variant) for i, variant in enumerate(groups)]
    for kind, key, obj in [*(_node(i, 0) for i in range(len(NODES))), _other(0, 0), *podgroups, *base]:
        state.put(kind, key, obj)
    state.view()
    for what, arg in events:
        if what == "bind":
            _bind(state, [f"default/p{arg[0]}"], arg[1])
        elif what == "bind all":
            _bind(state, sorted(state.pods), arg)
        elif what == "put":
            state.put(*arg)
        elif what == "assume":
            key = f"default/p{arg[0]}"
            if key in state.pods and not state.pods[key].spec.node_name:
                state.assume(key, NODES[arg[1]])
        else:
            _check(state)
    _check(state)
    COUNTS["bind sequences"] += 1


def test_zz_bind_property_counts() -> None:
    """The property above really made gangs again from bound members, beside discovery."""
    assert COUNTS["bind sequences"] >= 150
    assert COUNTS["gangs made again after binds"] > 20


def test_a_gang_bound_in_two_steps_is_discovered_again_with_all_its_members() -> None:
    """Bound in two views, a gang's priority is its pending members' before the second bind
    and every member's after it: that gang is discovered again, not made from its old self."""
    state = _CountingState()
    label = {"pod-group.scheduling.sigs.k8s.io": "g0"}
    members = [pod(f"p{i}", cpu="1", priority=10 * i, labels=label) for i in range(2)]
    sigs = koord.SigsPodGroup.parse(koord_gang("g0", 2))
    for kind, key, obj in [
        *(_node(i, 0) for i in range(len(NODES))),
        (Kind.SIGS_PODGROUP, "default/g0", sigs),
        *((Kind.POD, f"default/p{i}", Pod.parse(raw)) for i, raw in enumerate(members)),
    ]:
        state.put(kind, key, obj)
    assert state.view().gangs["koordinator:default/g0"].priority == 0
    _bind(state, ["default/p0"], 0)
    assert state.view().gangs["koordinator:default/g0"].priority == 10  # p1 alone is pending
    made = COUNTS["gangs made again after binds"]
    _bind(state, ["default/p1"], 1)
    _check(state)
    assert state.view().gangs["koordinator:default/g0"].priority == 0
    assert COUNTS["gangs made again after binds"] == made
