"""The plugins of topobridge's scheduling framework: one per rule, named as upstream names it.

| plugin | upstream | extension points |
|---|---|---|
| SchedulingGates | kube-scheduler | PreEnqueue |
| Coscheduling | Koordinator, scheduler-plugins | PreFilter, Permit |
| NetworkTopology | Volcano, Koordinator, LWS (ours) | PreFilter, Filter (Kueue's nodes), PlacementGenerate, PlacementScore |
| KueueTAS | Kueue | PlacementGenerate |
| NodeResourcesFit | kube-scheduler | Filter (a resource no node has), FilterRoom (free room, kube's reasons; the kernels count it: `offer`) |
| DynamicResources | kube-scheduler | PreFilter |
| NodeUnschedulable, NodeName | kube-scheduler | Filter |
| TaintToleration, NodeAffinity | kube-scheduler | Filter, Score |
| NodePorts | kube-scheduler | Filter, member rules |
| PodTopologySpread, InterPodAffinity | kube-scheduler | PreFilter, Filter, member rules, Score |
| GPU | the GPU seed (ours) | PreFilter, Filter, PlacementGenerate, PlacementFeasible, Reserve |
| DefaultPreemption | kube-scheduler (for whole jobs) | PostFilter |
| TopologyPlacement (+ PlacementBinPacking, PodGroupPodsCount) | kube-scheduler 1.37 | PreFilter (a key no node carries), group placement: the domain of a keyed PodGroup (PlacementGenerate, a placement per candidate, PlacementScore) |

`default_profile` lists them in the order each extension point runs them: Filter in
kube-scheduler's default order, so a node is counted under the same first failing reason.
Score plugins carry kube-scheduler's default weights (`SCORE_WEIGHTS`: TaintToleration 3,
NodeAffinity, InterPodAffinity and PodTopologySpread 2), applied by the runner to each
plugin's normalized score.
"""

from __future__ import annotations

from controller.placer.framework import Profile, Weighted, register_default_profile
from controller.placer.plugins.coscheduling import Coscheduling
from controller.placer.plugins.default_preemption import DefaultPreemption
from controller.placer.plugins.dynamic_resources import DynamicResources
from controller.placer.plugins.gpu_topology import Gpu
from controller.placer.plugins.inter_pod_affinity import InterPodAffinity
from controller.placer.plugins.kueue_tas import KueueTAS
from controller.placer.plugins.network_topology import NetworkTopology
from controller.placer.plugins.node_affinity import NodeAffinity
from controller.placer.plugins.node_name import NodeName
from controller.placer.plugins.node_ports import NodePorts
from controller.placer.plugins.node_resources_fit import NodeResourcesFit
from controller.placer.plugins.node_unschedulable import NodeUnschedulable
from controller.placer.plugins.pod_topology_spread import PodTopologySpread
from controller.placer.plugins.scheduling_gates import SchedulingGates
from controller.placer.plugins.taint_toleration import TaintToleration
from controller.placer.plugins.topology_placement import TopologyPlacement

__all__ = ["SCORE_WEIGHTS", "default_profile"]

SCORE_WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "PodTopologySpread": 2, "InterPodAffinity": 2}
"""kube-scheduler's default profile weights for the Score plugins topobridge runs."""

_PROFILES: dict[bool, Profile] = {}
"""The built profile per value of the comparison operators gate."""


def default_profile(*, preemption: bool = True, comparison_operators: bool = True) -> Profile:
    """Every plugin, in kube-scheduler's order where it has one; without `preemption`, no
    PostFilter; without `comparison_operators`, kube's `TaintTolerationComparisonOperators`
    gate off (`Lt`/`Gt` tolerations tolerate nothing: `taint_toleration`). Plugins keep no
    state between attempts, so one profile serves every cycle."""
    profile = _PROFILES.get(comparison_operators)
    if profile is None:
        profile = _PROFILES[comparison_operators] = _build(comparison_operators=comparison_operators)
    if preemption:
        return profile
    return Profile(**{**vars(profile), "post_filter": None})


register_default_profile(default_profile)


def _build(*, comparison_operators: bool = True) -> Profile:
    coscheduling, ports, spread, affinity, gpu = (
        Coscheduling(),
        NodePorts(),
        PodTopologySpread(comparison_operators=comparison_operators),
        InterPodAffinity(),
        Gpu(),
    )
    taints, node_affinity, topology, fit, placement = (
        TaintToleration(comparison_operators=comparison_operators),
        NodeAffinity(),
        NetworkTopology(),
        NodeResourcesFit(),
        TopologyPlacement(),
    )
    return Profile(
        pre_enqueue=[SchedulingGates()],
        pre_filter=[coscheduling, topology, placement, DynamicResources(), spread, affinity, gpu],
        filter=[
            NodeUnschedulable(comparison_operators=comparison_operators),
            NodeName(),
            taints,
            node_affinity,
            ports,
            fit,
            spread,
            affinity,
            gpu,
            topology,
        ],
        filter_room=[fit],
        member_rules=[ports, affinity, spread],
        # kube's default order of the Score plugins; the order does not change the sum.
        score=[Weighted(p, SCORE_WEIGHTS[p.name]) for p in (taints, node_affinity, spread, affinity)],
        # GPU first: a gang it places is placed and explained by its GPU rules, before
        # NetworkTopology's words or Kueue's LeastFreeCapacity (GPU narrows no level).
        placement_generate=[gpu, topology, KueueTAS()],
        placement_score=[topology],
        placement_feasible=[gpu],
        group_placement=[placement],
        post_filter=DefaultPreemption(),
        reserve=[gpu],
        permit=[coscheduling],
    )
