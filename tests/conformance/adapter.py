"""The one place the conformance suite talks to the placer: change it when the placer's API changes.

Three questions are asked of topobridge, all from plain Kubernetes objects:

* `filter_verdicts(objects, pod)`: for one incoming pod, each node's Filter verdict, True or the
  reason the node is out, from the framework's own plugins (`controller.placer.plugins`): the
  PreFilter plugins first (one that fails rejects every node with its reason), then each node
  under the first Filter cut that removes it, in the profile's order; a plugin that also
  answers FilterRoom (NodeResourcesFit: the node's free room, `Snapshot.free`, against the
  pod's request) gives every reason it has for a node right after its own Filter cuts, as
  kube's plugin reports every insufficient resource. A pod with `spec.nodeName` is no pod to place: the placer counts it on that node,
  and on no other.
* `node_scores(objects, pod, plugin, failed=...)`: for one incoming pod, each node's score from
  one Score plugin of the profile, normalized, through the runner's own `run_scores` with
  weight 1 and every node feasible but the `failed` ones (upstream's Score tables score and
  normalize every node they list, with no Filter run; a few keep nodes in the snapshot that
  Filter would have removed). Only the feasible nodes are answered. A plugin that has nothing
  to say (None) gives every node what all-zero raw scores normalize to, as kube's plugin
  would score them.
* `landings(objects)`: where every pod is at the end of topobridge's real scheduling cycle run
  to quiescence (`controller.placer.scenario.simulate`), None for a pod left pending,
  `EVICTED` for one preemption took.
* `victims_per_node(objects, pod)`: per node, the victims of one real attempt
  (`engine.schedule`, PreFilter through PostFilter) for `pod` when the profile carries one
  more Filter plugin that lets it onto that node alone: kube's SelectVictimsOnNode for that
  node (its dry run asks each node the same question). A node where the attempt preempts
  nothing has no entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from controller.placer.budgets import budgets_from
from controller.placer.engine import pre_filter, schedule
from controller.placer.filtering import run_scores, shape_classes
from controller.placer.framework import Code, Cut, CycleState, Profile, ShapeClass, Weighted
from controller.placer.plugins import default_profile
from controller.placer.scenario import load_scenario, prepare, simulate
from controller.placer.snapshot import Snapshot
from translations.gangs import Gang, GangPod

EVICTED = "<evicted>"
"""What `landings` answers for a pod preemption took (the harness's marker)."""

Verdict = bool | str
"""True: the node passes; otherwise the reason it does not."""

NODE_NAME = "node(s) didn't match the requested node name"
SERVED = ("topobridge",)


GATES = ("TaintTolerationComparisonOperators",)
"""The feature gates a row may set: each is a `default_profile` argument."""


def profile_for(gates: Mapping[str, bool]) -> Profile:
    """The default profile with the row's feature gates; a gate it cannot set is an error."""
    unknown = set(gates) - set(GATES)
    if unknown:
        raise ValueError(f"feature gates the adapter cannot set: {sorted(unknown)}")
    return default_profile(comparison_operators=gates.get("TaintTolerationComparisonOperators", True))


def filter_verdicts(
    objects: Sequence[Mapping[str, Any]], pod: Mapping[str, Any], *, gates: Mapping[str, bool] | None = None
) -> dict[str, Verdict]:
    """Per node of `objects`: may `pod` (not yet in the cluster) run there? See the module doc."""
    prep = prepare(load_scenario([*objects, pod]))
    index, snap = prep.index, prep.snapshot
    meta = pod.get("metadata") or {}
    key = f"{meta.get('namespace') or 'default'}/{meta['name']}"
    if key in snap.pods or (pod.get("spec") or {}).get("nodeName"):
        here = snap.pods[key].node if key in snap.pods else -1
        return {n: True if i == here else NODE_NAME for i, n in enumerate(index.node_names)}
    gang, member = _gang_of(prep.discovered, key)
    profile, state = profile_for(gates or {}), CycleState()
    refused = pre_filter(profile, state, gang, snap)
    if refused is not None:
        return dict.fromkeys(index.node_names, refused.reason)
    (cls,), _ = shape_classes([member], snap)
    free = snap.free(gang.key, gang.priority)
    room = {id(p): p for p in profile.filter_room}
    reasons: list[str | None] = [None] * index.n_nodes
    for plugin in profile.filter:
        _first_cut(reasons, plugin.filter(state, cls, snap))
        if id(plugin) in room:
            _every_cut(reasons, room[id(plugin)].room(state, cls, snap, free))
    return {name: reasons[i] or True for i, name in enumerate(index.node_names)}


def node_scores(
    objects: Sequence[Mapping[str, Any]],
    pod: Mapping[str, Any],
    plugin: str,
    *,
    failed: frozenset[str] = frozenset(),
    gates: Mapping[str, bool] | None = None,
) -> dict[str, int]:
    """Per node of `objects` not `failed`: `plugin`'s normalized score for `pod`, the `failed`
    nodes being out of Filter. See the module docstring."""
    prep = prepare(load_scenario([*objects, pod]))
    index, snap = prep.index, prep.snapshot
    meta = pod.get("metadata") or {}
    gang, member = _gang_of(prep.discovered, f"{meta.get('namespace') or 'default'}/{meta['name']}")
    profile, state = profile_for(gates or {}), CycleState()
    refused = pre_filter(profile, state, gang, snap)
    if refused is not None:
        raise ValueError(f"PreFilter refused the pod: {refused.reason}")
    scorer = next(entry.plugin for entry in profile.score if entry.name == plugin)
    classes, _ = shape_classes([member], snap)
    unknown = failed - set(index.node_names)
    if unknown:
        raise ValueError(f"failed nodes not in the cluster: {sorted(unknown)}")
    feasible = np.array([name not in failed for name in index.node_names], dtype=np.bool_)
    got = run_scores([Weighted(scorer, 1)], state, classes, snap, feasible)
    if got is None:
        got = scorer.normalize(state, np.zeros(index.n_nodes, dtype=np.int64), feasible)
    return {name: int(got[i]) for i, name in enumerate(index.node_names) if feasible[i]}


def landings(objects: Sequence[Mapping[str, Any]]) -> dict[str, str | None]:
    """Every pod (`namespace/name`) -> its node at quiescence, None while it stays pending,
    `EVICTED` once preempted."""
    sc = load_scenario(objects)
    result = simulate(sc, schedulers=SERVED)
    evicted = set(result.evicted)
    return {p.key: EVICTED if p.key in evicted else result.final_pods.get(p.key) for p in sc.pods}


@dataclass(frozen=True)
class _OnlyNode:
    """A Filter plugin of the adapter's own: the one node the dry run asks about."""

    node: int
    name: ClassVar[str] = "OnlyNode"

    def filter(self, state: CycleState, cls: ShapeClass, snap: Snapshot) -> Sequence[Cut]:
        del state, cls
        mask = np.zeros(snap.index.n_nodes, dtype=np.bool_)
        mask[self.node] = True
        return (("node(s) not asked about", mask),)


def victims_per_node(
    objects: Sequence[Mapping[str, Any]], pod: Mapping[str, Any]
) -> dict[str, frozenset[str]]:
    """Per node: the names of the pods an attempt for `pod`, kept to that node, evicts."""
    sc = load_scenario([*objects, pod])
    prep = prepare(sc)
    index, snap = prep.index, prep.snapshot
    meta = pod.get("metadata") or {}
    gang, _ = _gang_of(prep.discovered, f"{meta.get('namespace') or 'default'}/{meta['name']}")
    budgets = budgets_from(sc.pdbs, snap)
    base = default_profile()
    out: dict[str, frozenset[str]] = {}
    for i, name in enumerate(index.node_names):
        profile = replace(base, filter=[*base.filter, _OnlyNode(i)])
        verdict = schedule(gang, snap, budgets=budgets, profile=profile)
        if verdict.code is Code.WAITING_FOR_VICTIMS and verdict.plan is not None and verdict.plan.victims:
            out[name] = frozenset(v.pod.split("/", 1)[1] for v in verdict.plan.victims)
    return out


# --- inside filter_verdicts ----------------------------------------------------------------------


def _gang_of(gangs: Sequence[Gang], key: str) -> tuple[Gang, GangPod]:
    for gang in gangs:
        for member in gang.pending:
            if member.key == key:
                return gang, member
    raise LookupError(f"pod {key}: no pending gang member has this key")


def _first_cut(reasons: list[str | None], cuts: Sequence[Cut]) -> None:
    """Each node not yet out goes under the first cut that removes it."""
    for reason, ok in cuts:
        for i in np.flatnonzero(~ok):
            reasons[int(i)] = reasons[int(i)] or reason


def _every_cut(reasons: list[str | None], cuts: Sequence[Cut]) -> None:
    """Each node not yet out goes under every cut of one plugin that removes it, joined."""
    lacking: dict[int, list[str]] = {}
    for reason, ok in cuts:
        for i in np.flatnonzero(~ok):
            lacking.setdefault(int(i), []).append(reason)
    for i, why in lacking.items():
        reasons[i] = reasons[i] or "; ".join(why)
