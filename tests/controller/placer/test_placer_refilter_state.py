"""The state preemption's filters carry from one run to the next (kube's PreFilter extensions:
RemovePod/AddPod): what it holds after candidate victims are removed, put back or changed must
equal what a fresh PreFilter computes on the same snapshot, step after step."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from placer_objects import node, pod, priority_class

from controller.placer.engine import refilter_of
from controller.placer.framework import CycleState, StateKey, default_profile
from controller.placer.plugins.inter_pod_affinity import EXISTING, KEY, InterPodAffinity, TermCounts
from controller.placer.preempt import may_go
from controller.placer.scenario import load_scenario, prepare
from controller.placer.snapshot import Snapshot
from translations.gangs import Gang

HOST = "kubernetes.io/hostname"


def _term(labels: dict[str, str], key: str = HOST) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def _affinity(i: int) -> dict[str, Any]:
    """Bound pods' terms of every kind a pod's placement reads, some selecting `app: web`."""
    app = {"app": "web"} if i % 2 == 0 else {"app": f"svc{i % 3}"}
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_term(app)],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1 + i % 5, "podAffinityTerm": _term({"app": "web"}, "zone")}
            ],
        },
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 3, "podAffinityTerm": _term({"tier": "front"}, "zone")}
            ]
        },
    }


def _cluster(n_nodes: int = 6, n_pods: int = 24) -> tuple[Snapshot, Gang]:
    nodes = [node(f"n{i}", cpu="64", labels={HOST: f"n{i}", "zone": f"z{i % 2}"}) for i in range(n_nodes)]
    bound = [
        pod(
            f"b{j}",
            cpu="1",
            memory="1Gi",
            node_name=f"n{j % n_nodes}",
            priority_class="low",
            scheduler="default-scheduler",
            labels={"app": "web" if j % 4 == 0 else f"svc{j % 3}", "tier": "front"},
            affinity=_affinity(j),
        )
        for j in range(n_pods)
    ]
    pending = pod(
        "new",
        cpu="1",
        memory="1Gi",
        priority_class="high",
        scheduler="topobridge",
        labels={"app": "web", "tier": "front"},
        affinity={
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term({"app": "web"})]}
        },
    )
    objs = [priority_class("high", 1000), priority_class("low", 100), *nodes, *bound, pending]
    prep = prepare(load_scenario(objs))
    gang = next(g for g in prep.discovered if g.pending)
    return prep.snapshot, gang


Counted = dict[str, dict[str, list[int]]]
"""TermCounts as plain lists, keys with nothing counted left out (what Filter and Score read)."""


def _plain(got: TermCounts) -> Counted:
    return {
        "anti": {k: v.tolist() for k, v in got.anti.items() if v.any()},
        "weights": {k: got.weights[k].tolist() for k, v in got.scored.items() if v.any()},
        "scored": {k: v.tolist() for k, v in got.scored.items() if v.any()},
    }


def _toward(state: CycleState, snap: Snapshot, gang: Gang) -> Counted:
    p = gang.pending[0].pod
    return _plain(state.read(KEY).toward(p.namespace, p.metadata.labels or {}))


def _fresh(snap: Snapshot, gang: Gang) -> CycleState:
    state = CycleState()
    assert InterPodAffinity().pre_filter(state, gang, gang.pending, snap).ok
    return state


def _steps(snap: Snapshot, rng: random.Random) -> None:
    """One change preemption could make: pods removed, put back, or one bound pod's record
    replaced (moved to another node, its labels changed)."""
    keys = sorted(snap.pods)
    kind = rng.randrange(3)
    if kind == 0:
        snap.evict_many(rng.sample(keys, k=min(len(keys), rng.randrange(1, 6))))
    elif kind == 1:
        p = snap.pods[rng.choice(keys)]
        snap.evict(p.key)
        snap.bind(replace(p, node=(p.node + 1) % snap.index.n_nodes))
    else:
        p = snap.pods[rng.choice(keys)]
        snap.evict(p.key)
        snap.bind(replace(p, labels={**p.labels, "app": "other"}))


def test_the_terms_kept_for_the_attempt_equal_a_fresh_prefilter_after_every_change() -> None:
    snap, gang = _cluster()
    rng = random.Random(33)
    attempt = _fresh(snap, gang)
    first = _toward(attempt, snap, gang)
    assert first["anti"] and first["weights"]
    with snap.trial():
        for _ in range(40):
            _steps(snap, rng)
            again = attempt.rerun()
            assert InterPodAffinity().pre_filter(again, gang, gang.pending, snap).ok
            assert again.read(EXISTING) is attempt.read(EXISTING)  # carried, not rebuilt
            assert _toward(again, snap, gang) == _toward(_fresh(snap, gang), snap, gang)
    # Everything put back: the carried terms read as they did at the start.
    back = attempt.rerun()
    InterPodAffinity().pre_filter(back, gang, gang.pending, snap)
    assert _toward(back, snap, gang) == first


def test_a_moved_pod_is_read_at_its_new_node_not_the_one_remembered() -> None:
    snap, gang = _cluster()
    attempt = _fresh(snap, gang)
    before = _toward(attempt, snap, gang)["anti"][HOST]  # remembered
    p = snap.pods["default/b0"]
    snap.evict(p.key)
    snap.bind(replace(p, node=3))
    again = attempt.rerun()
    InterPodAffinity().pre_filter(again, gang, gang.pending, snap)
    after = _toward(again, snap, gang)["anti"][HOST]  # a node's code is its index on this key
    expected = list(before)
    expected[0] -= 1
    expected[3] += 1
    assert after == expected


def test_a_rerun_starts_with_the_attempts_slots_alone() -> None:
    kept: StateKey[int] = StateKey("PreFilter/Test/kept", attempt=True)
    dropped: StateKey[int] = StateKey("PreFilter/Test/dropped")
    state = CycleState()
    state.write(kept, 1)
    state.write(dropped, 2)
    again = state.rerun()
    assert again.get(kept, 0) == 1 and again.get(dropped, 0) == 0


def test_the_filters_run_again_give_what_they_give_from_a_fresh_state() -> None:
    # The whole refilter (every plugin, Filter and Score) with the attempt's state carried
    # equals one run from nothing, on every state preemption's changes leave.
    snap, gang = _cluster()
    profile = default_profile()
    attempt = CycleState()
    for plugin in profile.pre_filter:
        plugin.pre_filter(attempt, gang, gang.pending, snap)
    carried, fresh = refilter_of(profile, gang, attempt), refilter_of(profile, gang)
    rng = random.Random(7)
    with snap.trial():
        for _ in range(20):
            _steps(snap, rng)
            a, b = carried(snap, gang.pending), fresh(snap, gang.pending)
            assert a is not None and b is not None
            for ca, cb in zip(a.classes, b.classes, strict=True):
                assert np.array_equal(ca.mask, cb.mask) and ca.exclusions == cb.exclusions
            assert a.rules is not None and b.rules is not None
            assert np.array_equal(a.rules.score, b.rules.score) if a.rules.score is not None else True


def test_what_one_rerun_keeps_for_the_attempt_the_next_finds() -> None:
    kept: StateKey[list[int]] = StateKey("PreFilter/Test/kept", attempt=True)
    base = CycleState()
    first = base.rerun()
    first.write(kept, [1])
    assert base.rerun().read(kept) is first.read(kept) and base.get(kept, []) == [1]


def _crowded(n_lower: int, seed: int) -> tuple[Snapshot, Gang]:
    """`n_lower` low-priority pods and a few that stay (higher priority, protected, or
    terminating), with every kind of term the filters read of bound pods: required and
    preferred (anti-)affinity, labels a spread counts, host ports. The pending pod has
    anti-affinity, affinity, a hard spread over zones and a host port of its own."""
    rng = random.Random(seed)
    nodes = [node(f"n{i}", cpu="64", labels={HOST: f"n{i}", "zone": f"z{i % 3}"}) for i in range(8)]
    bound = []
    for j in range(n_lower + 6):
        stays = j >= n_lower
        obj = pod(
            f"b{j}",
            cpu="1",
            memory="1Gi",
            node_name=f"n{rng.randrange(8)}",
            priority_class="high" if stays and j % 3 == 0 else "low",
            scheduler="default-scheduler",
            labels={"app": rng.choice(["web", "db", "cache"]), "tier": "front"},
            affinity=_affinity(rng.randrange(6)),
            annotations={"volcano.sh/preemptable": "false"} if stays and j % 3 == 1 else None,
        )
        if rng.random() < 0.3:
            obj["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80, "protocol": "TCP"}]
        if stays and j % 3 == 2:
            obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        bound.append(obj)
    pending = pod(
        "new",
        cpu="1",
        memory="1Gi",
        priority_class="mid",
        scheduler="topobridge",
        labels={"app": "web", "tier": "front"},
        affinity={
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term({"app": "db"})]},
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [_term({"tier": "front"}, "zone")]
            },
        },
    )
    pending["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    pending["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80, "protocol": "TCP"}]
    classes = [priority_class("high", 1000), priority_class("mid", 500), priority_class("low", 100)]
    prep = prepare(load_scenario([*classes, *nodes, *bound, pending]))
    gang = next(g for g in prep.discovered if g.pending)
    return prep.snapshot, gang


def _first_run(snap: Snapshot, gang: Gang) -> CycleState:
    """The attempt's state after its first PreFilter (what preemption's runs start from)."""
    attempt = CycleState()
    for plugin in default_profile().pre_filter:
        assert plugin.pre_filter(attempt, gang, gang.pending, snap).ok
    return attempt


def test_the_best_case_answers_as_the_filters_do_with_every_lower_priority_pod_evicted() -> None:
    # Every plugin that reads bound pods (InterPodAffinity both ways, PodTopologySpread,
    # NodePorts) leaves out the pods the gang may evict, as if they were gone: the same masks,
    # reasons, scores and room as the filters run on the snapshot with those pods evicted.
    for seed in range(6):
        snap, gang = _crowded(12, seed)
        profile = default_profile()
        best = refilter_of(profile, gang, _first_run(snap, gang)).without_lower(
            snap, gang.pending, gang.priority
        )
        assert best is not None
        with snap.trial():
            snap.evict_many([p.key for p in list(snap.pods.values()) if may_go(p, gang.priority)])
            evicted = refilter_of(profile, gang)(snap, gang.pending)
            free = snap.free(gang.key, gang.priority)
        assert evicted is not None
        assert np.array_equal(best.free, free)
        for ca, cb in zip(best.demand.classes, evicted.classes, strict=True):
            assert np.array_equal(ca.mask, cb.mask) and ca.exclusions == cb.exclusions, seed
        ra, rb = best.demand.rules, evicted.rules
        assert (ra is None) == (rb is None)
        if ra is not None and rb is not None:
            assert (ra.score is None) == (rb.score is None)
            assert ra.score is None or rb.score is None or np.array_equal(ra.score, rb.score)
            assert [s.counts.tolist() for s in ra.spreads] == [s.counts.tolist() for s in rb.spreads]


def test_the_best_case_evicts_no_pod_however_many_may_go(monkeypatch: pytest.MonkeyPatch) -> None:
    # kube's PreFilter state kept split by who may be evicted: "every lower priority gone" is
    # the staying pods' counts, so the best case removes (and puts back) no pod at all, where it
    # used to evict every lower-priority pod and restore them, two changes per pod.
    changes: list[str] = []
    real = Snapshot.set_pod

    def counted(self: Snapshot, pod: Any, key: str) -> None:
        changes.append(key)
        real(self, pod, key)

    per_size = {}
    for n_lower in (10, 200):
        snap, gang = _crowded(n_lower, 1)
        refilter = refilter_of(default_profile(), gang, _first_run(snap, gang))
        monkeypatch.setattr(Snapshot, "set_pod", counted)
        changes.clear()
        assert refilter.without_lower(snap, gang.pending, gang.priority) is not None
        monkeypatch.setattr(Snapshot, "set_pod", real)
        per_size[n_lower] = len(changes)
    assert per_size == {10: 0, 200: 0}


def _same_answer(a: Any, b: Any) -> None:
    """Two demands the filters gave: the same nodes, reasons, scores and spread counts."""
    assert a is not None and b is not None
    for ca, cb in zip(a.classes, b.classes, strict=True):
        assert np.array_equal(ca.mask, cb.mask) and ca.exclusions == cb.exclusions
    ra, rb = a.rules, b.rules
    assert (ra is None) == (rb is None)
    if ra is not None and rb is not None:
        assert (ra.score is None) == (rb.score is None)
        assert ra.score is None or rb.score is None or np.array_equal(ra.score, rb.score)
        assert [s.counts.tolist() for s in ra.spreads] == [s.counts.tolist() for s in rb.spreads]


def test_spread_and_affinity_counts_carried_equal_a_fresh_count_after_every_change() -> None:
    # The pending pod's own affinity and anti-affinity counts and its spread's counts per zone,
    # kept for the attempt and adjusted by the pods set since, answer as counted afresh.
    for seed in range(3):
        snap, gang = _crowded(12, seed)
        profile = default_profile()
        carried, fresh = refilter_of(profile, gang, _first_run(snap, gang)), refilter_of(profile, gang)
        rng = random.Random(seed)
        with snap.trial():
            for _ in range(8):
                _steps(snap, rng)
                _same_answer(carried(snap, gang.pending), fresh(snap, gang.pending))
                best = carried.without_lower(snap, gang.pending, gang.priority)
                assert best is not None  # (kept per attempt: asked here to mix the two kinds of run)


def test_a_run_after_removing_victims_reads_only_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # kube's RemovePod: a run of the filters with two candidate victims removed reads the
    # labels of those two pods, not of every bound pod (before, PodTopologySpread and the
    # pending pod's affinity counted every bound pod again on each run).
    from controller.placer.terms import Selector

    reads: list[int] = []
    real = Selector.matches

    def counted(self: Selector, labels: Any) -> bool:
        reads.append(1)
        return real(self, labels)

    per_size = {}
    for n_lower in (10, 200):
        snap, gang = _crowded(n_lower, 2)
        refilter = refilter_of(default_profile(), gang, _first_run(snap, gang))
        assert refilter(snap, gang.pending) is not None  # the attempt's counts, made once
        victims = sorted(k for k, p in snap.pods.items() if may_go(p, gang.priority))[:2]
        with snap.trial():
            snap.evict_many(victims)
            monkeypatch.setattr(Selector, "matches", counted)
            reads.clear()
            assert refilter(snap, gang.pending) is not None
            monkeypatch.setattr(Selector, "matches", real)
        per_size[n_lower] = len(reads)
    # The two victims' labels (once per rule counting them) and the pending pod's own: no more.
    assert per_size[10] == per_size[200] < 16, per_size


def test_a_watch_tells_the_pods_set_since_and_gives_up_past_its_limit() -> None:
    import gc
    import weakref

    snap, _ = _cluster()
    watch = snap.watch(3)
    with snap.trial():
        snap.evict_many(["default/b0", "default/b1"])
    assert watch.touched == {"default/b0", "default/b1"} and not watch.lost  # put back: still told
    snap.evict("default/b2")
    snap.evict("default/b3")
    assert watch.lost and not watch.touched  # past the limit: the keys are not kept
    other = snap.watch(100)
    snap.set_pods([snap.pods["default/b4"]])
    assert other.lost  # every pod set at once
    gone = weakref.ref(snap.watch(100))
    gc.collect()
    assert gone() is None  # the snapshot holds no watch of its own
