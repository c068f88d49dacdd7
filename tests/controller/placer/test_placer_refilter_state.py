"""The state preemption's filters carry from one run to the next (kube's PreFilter extensions:
RemovePod/AddPod): what it holds after candidate victims are removed, put back or changed must
equal what a fresh PreFilter computes on the same snapshot, step after step."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np
from placer_objects import node, pod, priority_class

from controller.placer.engine import refilter_of
from controller.placer.framework import CycleState, StateKey, default_profile
from controller.placer.plugins.inter_pod_affinity import KEY, MEMO, InterPodAffinity
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


def _toward(state: CycleState, snap: Snapshot, gang: Gang) -> list[tuple[int, Any, int | None]]:
    p = gang.pending[0].pod
    return sorted(state.read(KEY).toward(p.namespace, p.metadata.labels or {}), key=repr)


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
    assert any(w is None for _, _, w in first) and any(w is not None for _, _, w in first)
    with snap.trial():
        for _ in range(40):
            _steps(snap, rng)
            again = attempt.rerun()
            assert InterPodAffinity().pre_filter(again, gang, gang.pending, snap).ok
            assert again.read(MEMO) is attempt.read(MEMO)  # carried, not rebuilt
            assert _toward(again, snap, gang) == _toward(_fresh(snap, gang), snap, gang)
    # Everything put back: the carried terms read as they did at the start.
    back = attempt.rerun()
    InterPodAffinity().pre_filter(back, gang, gang.pending, snap)
    assert _toward(back, snap, gang) == first


def test_a_moved_pod_is_read_at_its_new_node_not_the_one_remembered() -> None:
    snap, gang = _cluster()
    attempt = _fresh(snap, gang)
    before = Counter(n for n, _, w in _toward(attempt, snap, gang) if w is None)  # remembered
    p = snap.pods["default/b0"]
    snap.evict(p.key)
    snap.bind(replace(p, node=3))
    again = attempt.rerun()
    InterPodAffinity().pre_filter(again, gang, gang.pending, snap)
    after = Counter(n for n, _, w in _toward(again, snap, gang) if w is None)
    assert after == before - Counter({0: 1}) + Counter({3: 1})


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
