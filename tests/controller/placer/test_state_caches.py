"""What `ClusterState` keeps from one cycle to the next goes stale when it must, and no later.

Each test changes one object after a cycle has read the kept value, then checks that the next
cycle decides from the new object: it fails if the matching invalidation is taken out.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st
from placer_objects import node, pdb, pod, priority_class

from controller.placer import columns, snapshot
from controller.placer.cluster import ClusterState, Kind
from controller.placer.columns import PodArrays, pod_arrays
from controller.placer.cycle import CyclePlan, GangTiming, SchedulingCycle
from controller.placer.preempt import with_freed
from controller.placer.records import BoundPod
from controller.placer.scenario import cluster_state, load_scenario
from controller.placer.snapshot import ClusterIndex, Snapshot
from translations.compact import SharedNames
from translations.core import Node, Pod, PodDisruptionBudget, PriorityClass
from translations.gangs import discover_gangs
from translations.koordinator import GANG_GROUPS, GANG_NAME
from translations.topology import TopologyTree

Obj = dict[str, Any]
SERVED = ("topobridge",)
CLASSES = [priority_class("high", 1000), priority_class("mid", 500), priority_class("low", 100)]


def _running(name: str, node_name: str, cls: str, **kw: Any) -> Obj:
    return pod(name, node_name=node_name, priority_class=cls, scheduler="default-scheduler", **kw)


def _cycle(state: ClusterState) -> CyclePlan:
    return SchedulingCycle(state.view(), served=SERVED, now=0.0, timing=GangTiming()).run()


def test_a_budget_arriving_later_covers_pods_recorded_as_covered_by_none() -> None:
    """The state records "no budget covers this pod" (so preemption does not match every pod
    against every budget), and so do the kept pod arrays; a budget put afterwards must be
    counted by the next plan."""
    objs = [node("a"), node("b"), *CLASSES]
    objs += [_running("web", "a", "low", labels={"app": "web"}), _running("batch", "b", "mid")]
    state = cluster_state(load_scenario(objs))
    view = state.view()
    assert view.snapshot.budget_hits == {"default/web": (), "default/batch": ()}
    # The kept pod arrays carry that record too: a budget put later must reach them as well.
    arrays = view.snapshot.arrays()
    assert [arrays.cover_table[c] for c in arrays.cover.tolist()] == [(), ()]
    budget = PodDisruptionBudget.parse(pdb("keep-web", {"app": "web"}, allowed=0))
    state.put(Kind.PDB, budget.key, budget)
    new = load_scenario([pod("new", priority_class="high", scheduler="topobridge")]).pods[0]
    state.put(Kind.POD, new.key, new)
    plan = _cycle(state)
    assert [(v.pod, p.plan.cost) for p in plan.preemptions for v in p.plan.victims] == [
        ("default/batch", (0, 500, 1))
    ]


def test_the_first_view_keeps_the_pod_arrays_and_later_reads_patch_them(monkeypatch: Any) -> None:
    """A view that puts every bound pod anyway (the first one) builds the pod arrays
    preemption reads; after a pod or a budget changes, the next read patches them (a budget
    only recodes the coverage), so no preemption pays for a pass over every bound pod. Fails
    if the view leaves them to the first read, or a later read builds them again."""
    built: list[int] = []

    class Counted(columns.PodColumns):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built.append(len(args[0]))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(snapshot, "PodColumns", Counted)
    web = _running("web", "a", "low", labels={"app": "web"})
    objs = [node("a"), node("b"), *CLASSES, web, _running("batch", "b", "mid")]
    state = cluster_state(load_scenario(objs))
    state.view()
    assert built == [2]
    more = load_scenario([_running("more", "b", "low")]).pods[0]
    state.put(Kind.POD, more.key, more)
    snap = state.view().snapshot
    _same_as_fresh(snap, [])
    assert built == [2] and sorted(snap.arrays().keys) == ["default/batch", "default/more", "default/web"]
    budget = PodDisruptionBudget.parse(pdb("keep-web", {"app": "web"}, allowed=0))
    state.put(Kind.PDB, budget.key, budget)
    snap = state.view().snapshot
    _same_as_fresh(snap, [])
    arrays = snap.arrays()
    covers = {k: arrays.cover_table[c] for k, c in zip(arrays.keys, arrays.cover.tolist(), strict=True)}
    assert built == [2] and covers["default/web"] == ("default/keep-web",) and covers["default/more"] == ()


def test_request_rows_are_shared_per_index_and_follow_a_new_resource_axis() -> None:
    """Pods asking the same share one read-only row; a node bringing a new resource builds a
    new index, and the rows are made again on its axis (the GPU counted from then on)."""
    objs = [node("a"), _running("p", "a", "low", gpu="1"), _running("q", "a", "low", gpu="1")]
    state = cluster_state(load_scenario(objs))
    snap = state.view().snapshot
    p, q = snap.pods["default/p"], snap.pods["default/q"]
    assert p.req is q.req and not p.req.flags.writeable
    assert "nvidia.com/gpu" not in snap.index.resources and int(snap.used.sum()) == int((p.req * 2).sum())
    state.put(Kind.NODE, "b", load_scenario([node("b", gpu="8")]).nodes[0])
    snap = state.view().snapshot
    gpu = snap.index.res_pos["nvidia.com/gpu"]
    assert len(snap.pods["default/p"].req) == len(snap.index.resources)
    assert int(snap.used[snap.index.node_pos["a"], gpu]) == 2


def _bound(i: int, variant: int) -> BoundPod:
    req = np.asarray([1 + variant, 2 * variant, 1], dtype=np.int64)
    return BoundPod(f"p{i}", "default", variant % 3, req, 10 * variant, f"g{(i + variant // 2) % 4}", {})


_changes = st.lists(
    st.tuples(
        st.sampled_from(["bind", "evict", "terminate", "put", "remove", "arrays", "journal", "rollback"]),
        st.integers(0, 9),
        st.integers(0, 3),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(_changes, st.sampled_from([0, 2, columns.SLACK]))
def test_pod_arrays_kept_across_changes_equal_a_fresh_build(
    changes: list[tuple[str, int, int]], slack: int
) -> None:
    """The kept snapshot patches its pod arrays from the changes since they were last read
    (dict order: replaced in place, removed, added at the end); they must equal arrays built
    afresh from the pods after any sequence of binds, evictions, terminations, journal
    rollbacks and direct changes. Fails if a change is not logged, or is replayed out of order."""
    kept, columns.SLACK = columns.SLACK, slack  # small: compaction and rebuilds happen too
    try:
        _replay(changes)
    finally:
        columns.SLACK = kept


def _replay(changes: list[tuple[str, int, int]]) -> None:
    nodes = [Node.parse(node(f"n{i}")) for i in range(3)]
    index = ClusterIndex.build(nodes, TopologyTree.empty())
    # What budgets cover (a caller's record): p1 and p6 by one, p2 by none, the rest unknown.
    coverage = {"p1": ("ns/b",), "p2": (), "p6": ("ns/b",)}
    snap = Snapshot(
        index=index,
        used=np.zeros_like(index.alloc),
        pods={},
        gang_min={},
        keep_columns=True,
        budget_hits=coverage,
    )
    for i in range(5):
        snap.set_pod(_bound(i, i % 4), f"p{i}")
    earlier: list[PodArrays] = []
    seen: list[list[Any]] = []
    for op, i, variant in changes:
        key = f"p{i}"
        if op == "bind":
            snap.bind(_bound(i, variant), _bound((i + 1) % 10, variant))
        elif op == "evict" and key in snap.pods:
            snap.evict(key)
        elif op == "terminate" and key in snap.pods:
            snap.mark_terminating(key)
        elif op == "put":
            snap.set_pod(_bound(i, variant), key)
            snap._changed()
        elif op == "remove":
            snap.set_pod(None, key)
            snap._changed()
        elif op == "journal":
            snap.start_journal()
        elif op == "rollback":
            snap.rollback()
        if op == "arrays" or variant == 0:
            _same_as_fresh(snap, earlier, seen)
    _same_as_fresh(snap, earlier, seen)


COLUMNS = ("node", "req", "priority", "terminating", "gang_size", "cover", "held")


def _same_as_fresh(snap: Snapshot, earlier: list[PodArrays], seen: list[list[Any]] | None = None) -> None:
    """The arrays equal a fresh build, and the positions of these and of every earlier read
    (whose slots the columns have patched since) still name each pod's index in its arrays;
    `seen`: the values of every earlier read as it was read, which patching must not change."""
    got, want = snap.arrays(), pod_arrays(snap.pods, len(snap.index.resources), snap.budget_hits)
    assert got.keys == want.keys
    for name in ("node", "req", "priority", "terminating", "gang_size"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    _same_room_freed(snap, got, want)
    if seen is not None:
        seen.append([getattr(got, name).copy() for name in COLUMNS])
        for arrays, values in zip(earlier[-4:], seen[-5:-1], strict=False):
            assert all(np.array_equal(getattr(arrays, n), v) for n, v in zip(COLUMNS, values, strict=True))
    assert snap.budget_hits is not None
    covers = [got.cover_table[c] for c in got.cover.tolist()]
    assert covers == [want.cover_table[c] for c in want.cover.tolist()]
    assert covers == [snap.budget_hits.get(k) for k in got.keys]
    earlier.append(got)
    for arrays in earlier[-4:]:
        assert [arrays.position[k] for k in arrays.keys] == list(range(len(arrays.keys)))
        assert all(k in arrays.position for k in arrays.keys) and "gone" not in arrays.position
        assert list(arrays.position) == arrays.keys
    _same_members(snap)


def _same_room_freed(snap: Snapshot, got: PodArrays, want: PodArrays) -> None:
    """The requests the kept columns hold per node (patched with every change) equal a sum
    afresh, and room freed through them equals room freed pod by pod, whichever pods go."""
    n_nodes = snap.index.n_nodes
    summed = np.zeros((n_nodes, len(snap.index.resources)), dtype=np.int64)
    np.add.at(summed, want.node, want.req)
    held = got.held_on(n_nodes)
    assert held is not None and np.array_equal(held, summed)
    free = snap.free()
    for gone in (want.priority < 15, want.priority >= 15, np.ones(len(want.keys), np.bool_)):
        by_pod = free.copy()
        np.add.at(by_pod, want.node[gone], want.req[gone])
        assert np.array_equal(with_freed(free, got, gone), by_pod)
        assert np.array_equal(with_freed(free, want, gone), by_pod)


def _same_members(snap: Snapshot) -> None:
    """The kept gang membership (patched with every pod change) equals a grouping afresh."""
    fresh: dict[str, set[str]] = {}
    for key, p in snap.pods.items():
        fresh.setdefault(p.gang, set()).add(key)
    for gang in {f"g{i}" for i in range(4)} | fresh.keys():  # a gang left with none too
        got = snap.gang_pods(gang)
        assert sorted(got) == sorted(fresh.get(gang, ())) and len(got) == len(set(got)), gang


def _gang_pod(name: str, gang: str, groups: list[str] | None = None) -> Pod:
    ann = {GANG_NAME: gang}
    if groups:
        ann[GANG_GROUPS] = json.dumps(groups)
    return Pod.parse(pod(name, annotations=ann))


def test_membership_and_gang_group_links_follow_pod_changes() -> None:
    """What gang a pod names and which gangs its `groups` annotation links are kept per pod
    from the change that set them: a relabelled pod moves, a link added later merges the gangs,
    a link taken away splits them again."""
    state = ClusterState()
    state.put(Kind.NODE, "a", Node.parse(node("a")))
    for name, gang in (("x0", "x"), ("x1", "x"), ("y0", "y")):
        p = _gang_pod(name, gang)
        state.put(Kind.POD, p.key, p)
    assert {k: len(g.pods) for k, g in state.view().gangs.items()} == {
        "koordinator:default/x": 2,
        "koordinator:default/y": 1,
    }
    moved = _gang_pod("x1", "y")
    state.put(Kind.POD, moved.key, moved)
    assert {k: len(g.pods) for k, g in state.view().gangs.items()} == {
        "koordinator:default/x": 1,
        "koordinator:default/y": 2,
    }
    linked = _gang_pod("y0", "y", groups=["default/x", "default/y"])
    state.put(Kind.POD, linked.key, linked)
    assert {k: len(g.pods) for k, g in state.view().gangs.items()} == {"koordinator:default/x": 3}
    unlinked = _gang_pod("y0", "y")
    state.put(Kind.POD, unlinked.key, unlinked)
    assert {k: len(g.pods) for k, g in state.view().gangs.items()} == {
        "koordinator:default/x": 1,
        "koordinator:default/y": 2,
    }


def test_the_gang_of_a_bound_pod_alone_is_made_on_read_as_discovery_makes_it() -> None:
    """A view keeps a bound pod that names no gang as its record, and makes its gang when read:
    that gang is discovery's, its room is in `used`, and a pending, an unplaceable or a
    finished pod alone is handled as before (pending: a gang to place; finished: none)."""
    state = ClusterState()
    state.put(Kind.NODE, "n1", Node.parse(node("n1")))
    for pc in CLASSES:
        state.put(Kind.PRIORITY_CLASS, pc["metadata"]["name"], PriorityClass.parse(pc))
    objs = [
        pod("bound", node_name="n1", cpu="2", priority_class="mid", policy="Never"),
        pod("elsewhere", node_name="gone", cpu="2"),
        pod("waiting", cpu="1", scheduler="topobridge"),
        {**pod("done", node_name="n1", cpu="4"), "status": {"phase": "Succeeded"}},
    ]
    for raw in objs:
        p = Pod.parse(raw)
        state.put(Kind.POD, p.key, p)
    view = state.view()
    assert sorted(view.gangs) == ["pod:default/bound", "pod:default/elsewhere", "pod:default/waiting"]
    classes = list(state.priority_classes.values())
    for key in view.gangs:
        found = discover_gangs([state.pods[key.removeprefix("pod:")]], priority_classes=classes)
        assert view.gangs[key] == found[0], key
    assert view.gangs["pod:default/bound"].priority == 500
    assert view.pending == ["pod:default/waiting"]
    assert sorted(view.snapshot.pods) == ["default/bound"]
    cpu = view.index.res_pos["cpu"]
    assert view.snapshot.used[view.index.node_pos["n1"], cpu] == 2000
    assert view.snapshot.gang_min["pod:default/bound"] == 1


def test_stored_models_are_compacted_and_a_pod_key_is_one_string() -> None:
    """The cache's models share their bookkeeping (`translations.compact`); a pod's key in the
    store, its member memo and its GangPod is one string, not three copies."""
    state = ClusterState()
    state.put(Kind.NODE, "n1", Node.parse(node("n1")))
    a, b = Pod.parse(_running("a", "n1", "low")), Pod.parse(_running("b", "n1", "low"))
    for p in (a, b):
        state.put(Kind.POD, "".join(["default/", p.name]), p)
    assert type(a.metadata.__pydantic_fields_set__) is SharedNames
    assert a.metadata.__pydantic_fields_set__ is b.metadata.__pydantic_fields_set__
    stored = next(k for k in state.pods if k == "default/a")
    gp = state._members_memo[stored][1]
    assert next(k for k in state._members_memo if k == stored) is stored
    assert gp.key is stored
    state.view()


def test_lone_bound_pods_read_in_a_batch_keep_their_order_around_one_read_apart() -> None:
    """A cold start reads the bound pods that name no gang in one batch; an assumed pod among
    them (bound only in the state's eyes) is read on its own, after the batch so far is
    written: the snapshot holds the pods in key order, each one's room counted once, the same
    as a full rebuild and as the pods' own requests add up."""
    objs = [node("n1"), node("n2"), *CLASSES]
    objs += [_running("a", "n1", "low", cpu="1"), _running("c", "n2", "mid", cpu="2")]
    objs += [pod("b", cpu="4", priority_class="high", scheduler="topobridge")]
    objs += [_running(f"d{i}", "n2", "low", cpu="1", labels={"app": "web"}) for i in range(3)]
    objs += [pdb("web", {"app": "web"}, allowed=1)]
    state = cluster_state(load_scenario(objs))
    state.assume("default/b", "n1")
    for full in (False, True):
        snap = state.view(full=full).snapshot
        assert list(snap.pods) == [
            "default/a",
            "default/b",
            "default/c",
            "default/d0",
            "default/d1",
            "default/d2",
        ]
        cpu, index = snap.index.res_pos["cpu"], snap.index
        assert snap.used[index.node_pos["n1"], cpu] == 5000 and snap.used[index.node_pos["n2"], cpu] == 5000
        assert snap.budget_hits == {k: ("default/web",) if "/d" in k else () for k in snap.pods}
        assert [p.key for p in snap.with_terms.values()] == [] and snap.arrays().keys == list(snap.pods)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 1000), st.integers(0, 3)), max_size=20),
    st.lists(st.integers(2**53 + 1, 2**59), max_size=2),
)
@example(rows=[(0, 3, 1)], big=[2**59 - 1])
def test_node_sums_are_exact_beyond_what_a_float_holds(
    rows: list[tuple[int, int, int]], big: list[int]
) -> None:
    """Per-node sums of requests equal integer sums pod by pod, whether they fit float64's
    exact range (summed by bincount) or not (a request past 2^53 units: summed as integers);
    fails if the faster sum is taken where it rounds."""
    rows = rows + [(k % 5, v, 1) for k, v in enumerate(big)]
    nodes = np.asarray([n for n, _, _ in rows], dtype=np.int64)
    values = np.asarray([[v, c] for _, v, c in rows], dtype=np.int64).reshape(-1, 2)
    want = np.zeros((2, 5), dtype=np.int64)
    for (n, _, _), row in zip(rows, values.tolist(), strict=True):
        want[:, n] += row
    assert np.array_equal(columns.node_sums(nodes, values, 5), want)
