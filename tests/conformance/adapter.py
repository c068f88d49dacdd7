"""The one place the conformance suite talks to the placer: change it when the placer's API changes.

Two questions are asked of topobridge, both from plain Kubernetes objects:

* `filter_verdicts(objects, pod)`: for one incoming pod, each node's Filter verdict, True or the
  reason the node is out. Today's placer has no per-plugin Filter: it builds a gang's demand
  (`controller.placer.demand.build_demand`), whose pod class carries the node mask that the
  static filters (`filter.run_filter`) and the inter-pod prefilter (`affinity.prefilter`) leave,
  and a node takes the pod when its mask allows it and the pod's request fits the node's free
  room (`Snapshot.free`, as `offer.class_slots` divides it). The verdict comes from exactly that.
  The reason is found by asking the same functions again with the pod's rules one kind at a
  time, and is the first failing rule in kube-scheduler's default Filter order, in the words of
  the plugin that owns the rule. A pod with `spec.nodeName` is no pod to place: the placer counts
  it on that node, and on no other.
* `landings(objects)`: where every pod is at the end of topobridge's real scheduling cycle run
  to quiescence (`controller.placer.scenario.simulate`), None for a pod left pending.

When the placer becomes kube-scheduler's framework (one plugin per rule), `filter_verdicts`
becomes a loop over the Filter plugins and this docstring shrinks; the rows do not change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from controller.placer import affinity as interpod
from controller.placer import filter as nodefilter
from controller.placer.demand import build_demand
from controller.placer.filter import FilterSpec, run_filter
from controller.placer.scenario import load_scenario, prepare, simulate
from controller.placer.snapshot import UNSCHEDULABLE_TAINT, Bool, ClusterIndex, Snapshot
from controller.placer.terms import PodTerms
from translations.gangs import Gang, GangPod

Verdict = bool | str
"""True: the node passes; otherwise the reason it does not."""

NODE_NAME = "node(s) didn't match the requested node name"
TOO_MANY_PODS = "Too many pods"
SERVED = ("topobridge",)


def filter_verdicts(objects: Sequence[Mapping[str, Any]], pod: Mapping[str, Any]) -> dict[str, Verdict]:
    """Per node of `objects`: may `pod` (not yet in the cluster) run there? See the module doc."""
    prep = prepare(load_scenario([*objects, pod]))
    index, snap = prep.index, prep.snapshot
    meta = pod.get("metadata") or {}
    key = f"{meta.get('namespace') or 'default'}/{meta['name']}"
    if key in snap.pods or (pod.get("spec") or {}).get("nodeName"):
        here = snap.pods[key].node if key in snap.pods else -1
        return {n: True if i == here else NODE_NAME for i, n in enumerate(index.node_names)}
    gang, member = _gang_of(prep.discovered, key)
    demand = build_demand(gang, index, [member], snap=snap)
    cls = demand.classes[0]
    free = snap.free(gang.key, gang.priority)
    short = _shortfalls(index, free, cls.req, demand.unknown_resource)
    out: dict[str, Verdict] = {}
    causes = _causes(index, snap, member)
    for i, name in enumerate(index.node_names):
        if bool(cls.mask[i]) and not short[i]:
            out[name] = True
        else:
            out[name] = _first_cause(causes, i, short[i])
    return out


def landings(objects: Sequence[Mapping[str, Any]]) -> dict[str, str | None]:
    """Every pod (`namespace/name`) -> its node at quiescence, None while it stays pending."""
    sc = load_scenario(objects)
    result = simulate(sc, schedulers=SERVED)
    return {p.key: result.final_pods.get(p.key) for p in sc.pods}


# --- inside filter_verdicts ----------------------------------------------------------------------


def _gang_of(gangs: Sequence[Gang], key: str) -> tuple[Gang, GangPod]:
    for gang in gangs:
        for member in gang.pending:
            if member.key == key:
                return gang, member
    raise LookupError(f"pod {key}: no pending gang member has this key")


def _shortfalls(index: ClusterIndex, free: Any, req: Any, unknown: str | None) -> list[list[str]]:
    """Per node: NodeResourcesFit's reasons (every resource that does not fit)."""
    out: list[list[str]] = [[] for _ in index.node_names]
    for col, resource in enumerate(index.resources):
        if req[col] <= 0:
            continue
        lacking = free[:, col] < req[col]
        for i in np.flatnonzero(lacking):
            out[int(i)].append(TOO_MANY_PODS if resource == "pods" else f"Insufficient {resource}")
    if unknown is not None:
        for reasons in out:
            reasons.append(f"Insufficient {unknown}")
    return out


Cause = tuple[str, Bool]
"""A reason and, per node, True where that rule alone rejects the node."""


def _causes(index: ClusterIndex, snap: Snapshot, member: GangPod) -> tuple[list[Cause], list[Cause]]:
    """The rules that reject each node, split around NodeResourcesFit in kube's Filter order:
    (NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts) and (PodTopologySpread,
    InterPodAffinity: the pod's affinity, its anti-affinity, existing pods' anti-affinity)."""
    spec = FilterSpec.of(member.pod.spec)
    everything = (("", "Exists", "", ""),)
    unschedulable, tainted = _taint_causes(index, spec)
    before = [
        (nodefilter.UNSCHEDULABLE, unschedulable),
        (nodefilter.TAINT, tainted),
        (
            nodefilter.AFFINITY,
            ~run_filter(index, FilterSpec(spec.node_selector, spec.affinity, everything)).mask,
        ),
    ]
    terms = PodTerms.of(member.pod) or PodTerms()
    # Each rule alone: existing pods' terms are kept only where the rule reads them.
    alone = dataclasses.replace(snap, with_terms={})
    ports_only = dataclasses.replace(
        snap,
        with_terms={
            k: dataclasses.replace(p, terms=PodTerms(host_ports=p.terms.host_ports))
            for k, p in snap.with_terms.items()
            if p.terms is not None and p.terms.host_ports
        },
    )
    rule = _interpod(index, member, spec)
    before.append((interpod.PORTS, ~rule(ports_only, PodTerms(host_ports=terms.host_ports))))
    after = [
        (interpod.SPREAD, ~rule(alone, PodTerms(spread=terms.spread))),
        (interpod.AFFINITY, ~rule(alone, PodTerms(affinity=terms.affinity))),
        (interpod.ANTI_AFFINITY, ~rule(alone, PodTerms(anti_affinity=terms.anti_affinity))),
        (interpod.EXISTING_ANTI_AFFINITY, ~rule(snap, None)),
    ]
    return before, after


def _taint_causes(index: ClusterIndex, spec: FilterSpec) -> tuple[Bool, Bool]:
    """Per node: NodeUnschedulable rejects it (`spec.unschedulable`, the pseudo-taint not
    tolerated); TaintToleration rejects it (a NoSchedule/NoExecute taint of its own not
    tolerated, whatever its key)."""
    unschedulable = np.zeros(index.n_nodes, dtype=np.bool_)
    tainted = np.zeros(index.n_nodes, dtype=np.bool_)
    for i in range(index.n_nodes):
        for taint in index.taint_sets[int(index.taint_group[i])]:
            if nodefilter.tolerates(spec.tolerations, taint):
                continue
            if taint == UNSCHEDULABLE_TAINT and bool(index.unschedulable[i]):
                unschedulable[i] = True
            else:
                tainted[i] = True
    return unschedulable, tainted


def _interpod(
    index: ClusterIndex, member: GangPod, spec: FilterSpec
) -> Callable[[Snapshot, PodTerms | None], Bool]:
    """The inter-pod prefilter's mask for the pod with only `terms` (None: none of its own, so
    only existing pods' anti-affinity toward it counts) against the pods of `snap`."""
    everywhere = np.ones(index.n_nodes, dtype=np.bool_)

    def mask(snap: Snapshot, terms: PodTerms | None) -> Bool:
        if terms is not None and terms == PodTerms():
            terms = None
        rules, _ = interpod.prefilter([member], [((0,), terms, spec, everywhere)], index, snap)
        return rules[0].mask if rules[0] is not None else everywhere

    return mask


def _first_cause(causes: tuple[list[Cause], list[Cause]], i: int, short: list[str]) -> str:
    before, after = causes
    for reason, rejects in before:
        if rejects[i]:
            return reason
    if short:
        return "; ".join(short)
    for reason, rejects in after:
        if rejects[i]:
            return reason
    return "rejected by a rule this adapter cannot name"
