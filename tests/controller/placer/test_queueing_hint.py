"""A gang left unschedulable is not tried again until something it depends on changes.

kube-scheduler keeps a pod that found no node in its unschedulable pool and moves it back only
on a cluster event one of its plugins says may help (queueing hints), or after five minutes.
The cycle did not: `simulate` with a chain of 64 pods, each needing the one before it bound
(pod affinity, tried in the reverse order), and 500 small gangs too big for any node ran 65
rounds and 34,580 attempts (17.8 s CPU), trying the 500 gangs again in every round though
only binds happened. Now a gang whose own objects, the disruption budgets and
`ClusterState.freed` (every change but a pending pod bound) are what its last Unschedulable
attempt saw waits: 3,580 attempts, the same result. A gang with inter-pod terms waits too,
until a pod bound is one its pod affinity selects or its topology spread counts (the
`BindJournal`): it was tried in every round, so 500 stuck pods with a topology spread
constraint beside the same chain still cost 34,580 attempts; now 1,669 (the five-minute flush
brings them back twice in the 64 rounds). The counts are attempts, not time.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from controller.placer import cycle as cycle_mod
from controller.placer.cluster import RECENT_BINDS, BindJournal, ClusterState, Kind
from controller.placer.cycle import UNSCHEDULABLE_FLUSH, GangTiming, SchedulingCycle, Unschedulable
from controller.placer.framework import Code
from controller.placer.scenario import cluster_state, load_scenario, simulate
from translations.core import Pod

Obj = dict[str, Any]
SERVED = ("volcano",)
NOT_PLACED = (Code.UNSCHEDULABLE, Code.UNRESOLVABLE)


def _pod(
    name: str,
    cpu: str,
    priority: int,
    *,
    group: str | None = None,
    app: str | None = None,
    after: str | None = None,
    node: str | None = None,
) -> Obj:
    spec: Obj = {
        "schedulerName": "volcano",
        "priorityClassName": f"p{priority}",
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node:
        spec["nodeName"] = node
    if after:
        term = {"labelSelector": {"matchLabels": {"app": after}}, "topologyKey": "kubernetes.io/hostname"}
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    meta: Obj = {"name": name, "namespace": "default", "labels": {"app": app or name}}
    if group:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _node(name: str, cpu: str = "64") -> Obj:
    alloc = {"cpu": cpu, "memory": "64Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def _gang(name: str, cpu: str, priority: int = 1) -> list[Obj]:
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minMember": 2},
    }
    return [group, *(_pod(f"{name}-{j}", cpu, priority, group=name) for j in range(2))]


def _classes(n: int) -> list[Obj]:
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": f"p{p}"},
            "value": p * 10,
        }
        for p in range(n)
    ]


def chain_scenario(chain: int, stuck: int) -> list[Obj]:
    """Pod c<k> needs c<k-1> on its node and has the higher priority, so it is tried first and
    each round binds one more; `stuck` gangs of two pods of 100 CPUs fit nowhere."""
    objs = [*(_node(f"n{i}") for i in range(4)), *_classes(chain + 2)]
    objs.append(_pod("c0", "100m", 0, node="n0"))
    objs += [_pod(f"c{k}", "100m", k, after=f"c{k - 1}") for k in range(1, chain + 1)]
    for g in range(stuck):
        objs += _gang(f"g{g}", "100")
    return objs


def _counting(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    attempts: Counter[str] = Counter()
    real = SchedulingCycle.attempt

    def attempt(self: SchedulingCycle, gang: Any) -> Any:
        attempts[gang.key] += 1
        return real(self, gang)

    monkeypatch.setattr(SchedulingCycle, "attempt", attempt)
    return attempts


def test_stuck_gangs_wait_while_only_binds_happen(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = _counting(monkeypatch)
    result = simulate(load_scenario(chain_scenario(6, 20)))
    assert sorted(result.bound) == [f"default/c{k}" for k in range(1, 7)]
    assert len(result.unschedulable) == 20
    stuck = {k: v for k, v in attempts.items() if ":default/g" in k}
    assert len(stuck) == 20
    assert set(stuck.values()) == {1}, stuck  # 7 rounds of 11 s: within the flush, tried once
    chain = sum(v for k, v in attempts.items() if ":default/c" in k)
    # All six in the first round; then only the pod whose affinity the last bind satisfies.
    assert chain == 6 + 5


def _spread_pod(name: str, cpu: str, app: str, namespace: str = "default") -> Obj:
    obj = _pod(name, cpu, 1, app=app)
    obj["metadata"]["namespace"] = namespace
    selector = {"matchLabels": {"app": app}}
    obj["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": selector,
        }
    ]
    return obj


def spread_scenario(chain: int, stuck: int) -> list[Obj]:
    """The chain, beside `stuck` lone pods of 100 CPUs with a topology spread constraint over
    their own app (a bound chain pod is not one they count)."""
    objs = chain_scenario(chain, 0)
    return objs + [_spread_pod(f"s{k}", "100", "spread") for k in range(stuck)]


def test_stuck_pods_with_topology_spread_wait_while_binds_they_do_not_count_happen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts = _counting(monkeypatch)
    result = simulate(load_scenario(spread_scenario(6, 20)))
    assert sorted(result.bound) == [f"default/c{k}" for k in range(1, 7)]
    assert len(result.unschedulable) == 20
    stuck = {k: v for k, v in attempts.items() if ":default/s" in k}
    assert len(stuck) == 20
    assert set(stuck.values()) == {1}, stuck  # was 7 each: one per round


@pytest.mark.parametrize("scenario", [chain_scenario, spread_scenario])
def test_the_result_is_the_one_every_gang_tried_every_round_gives(
    monkeypatch: pytest.MonkeyPatch, scenario: Any
) -> None:
    hinted = simulate(load_scenario(scenario(6, 20))).contract()
    monkeypatch.setattr(Unschedulable, "holds", lambda *_: False)
    assert simulate(load_scenario(scenario(6, 20))).contract() == hinted


def _cycle(state: ClusterState, timing: GangTiming, now: float) -> tuple[list[str], dict[str, Code]]:
    cycle = SchedulingCycle(state.view(), served=SERVED, now=now, timing=timing)
    queued = [g.key for g in cycle.queue()]
    for gang in cycle.queue():
        cycle.attempt(gang)
    for bind in cycle.plan.binds:
        for pod_key, node in bind.pods:
            pod = state.pods[pod_key]
            state.put(
                Kind.POD,
                pod_key,
                pod.model_copy(update={"spec": pod.spec.model_copy(update={"node_name": node})}),
            )
    return queued, {k: o.code for k, o in cycle.plan.outcomes.items()}


def _state(objs: list[Obj]) -> ClusterState:
    return cluster_state(load_scenario(objs))


def test_a_deleted_pod_sends_the_gang_back_to_the_queue() -> None:
    state = _state([_node("n0", "8"), *_classes(2), _pod("blocker", "6", 1, node="n0"), *_gang("g", "2")])
    timing = GangTiming()
    queued, codes = _cycle(state, timing, 0.0)
    assert codes == {"volcano:default/g": Code.UNRESOLVABLE}  # the blocker is not lower
    assert _cycle(state, timing, 11.0)[0] == []  # nothing changed: not tried
    state.delete(Kind.POD, "default/blocker")
    queued, codes = _cycle(state, timing, 22.0)
    assert queued == ["volcano:default/g"]
    assert codes == {"volcano:default/g": Code.SUCCESS}


def test_a_bind_sends_back_only_gangs_with_inter_pod_terms() -> None:
    objs = [_node("n0", "8"), *_classes(3), _pod("blocker", "7", 2, node="n0"), *_gang("g", "2")]
    objs += [_pod("lone", "500m", 2), _pod("near", "2", 1, after="lone")]
    state = _state(objs)
    timing = GangTiming()
    _, codes = _cycle(state, timing, 0.0)  # lone binds; g and near do not fit
    assert codes["volcano:default/g"] in NOT_PLACED
    assert codes["pod:default/near"] in NOT_PLACED
    assert codes["pod:default/lone"] is Code.SUCCESS
    queued, _ = _cycle(state, timing, 11.0)  # only a bind happened
    assert queued == ["pod:default/near"]


def test_a_bind_sends_back_a_spread_pod_only_when_its_constraint_counts_the_pod() -> None:
    objs = [_node("n0", "8"), _node("n1", "8"), *_classes(3)]
    objs += [_pod("big0", "7", 2, node="n0", app="spread"), _pod("big1", "7", 2, node="n1", app="spread")]
    objs += [_spread_pod("s", "2", "spread"), _pod("other", "2", 0, app="other")]
    objs += [_spread_pod("elsewhere", "500m", "spread", namespace="team-b")]
    objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}})
    state = _state(objs)
    timing = GangTiming()
    _, codes = _cycle(state, timing, 0.0)
    assert codes["pod:default/s"] in NOT_PLACED  # no node has 2 CPUs left
    assert codes["pod:team-b/elsewhere"] is Code.SUCCESS  # binds: its namespace is another
    assert codes["pod:default/other"] in NOT_PLACED
    assert _cycle(state, timing, 11.0)[0] == []  # a bind s does not count: neither is tried
    state.put(Kind.POD, "default/late", Pod.parse(_pod("late", "100m", 2, app="spread")))
    queued, _ = _cycle(state, timing, 22.0)  # a new pod: every gang is tried (freed moved)
    assert "pod:default/late" in queued
    assert _cycle(state, timing, 33.0)[0] == ["pod:default/s"]  # late, which s counts, bound


def test_a_gang_further_behind_than_the_bind_journal_is_tried_again() -> None:
    journal = BindJournal()
    late = Pod.parse(_pod("p", "1", 0))
    for _ in range(RECENT_BINDS + 3):
        journal.add(late)
    assert journal.since(2, journal.count) is None  # the third bind is no longer kept
    kept = journal.since(3, journal.count)
    assert kept is not None and len(list(kept)) == RECENT_BINDS
    assert journal.since(journal.count, journal.count + 1) is None


def test_a_gang_left_unschedulable_is_tried_again_after_five_minutes() -> None:
    state = _state([_node("n0", "8"), *_classes(2), _pod("blocker", "6", 1, node="n0"), *_gang("g", "2")])
    timing = GangTiming()
    _cycle(state, timing, 0.0)
    assert _cycle(state, timing, UNSCHEDULABLE_FLUSH - 1)[0] == []
    assert _cycle(state, timing, UNSCHEDULABLE_FLUSH)[0] == ["volcano:default/g"]


def test_only_a_pending_pod_given_a_node_and_nothing_else_frees_nothing() -> None:
    state = _state([_node("n0"), *_classes(2), _pod("p", "1", 1)])
    pod = state.pods["default/p"]
    freed = state.freed
    bound = pod.model_copy(update={"spec": pod.spec.model_copy(update={"node_name": "n0"})})
    state.put(Kind.POD, "default/p", bound)
    assert state.freed == freed
    state.put(
        Kind.POD, "default/p", Pod.parse({**pod.to_dict(), "spec": {**pod.spec.to_dict(), "nodeName": "n0"}})
    )
    assert state.freed == freed + 1  # read afresh: not known to be a bind alone
    state.delete(Kind.POD, "default/p")
    assert state.freed == freed + 2
    assert cycle_mod.UNSCHEDULABLE_FLUSH == 300.0
