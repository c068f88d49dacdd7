"""The rows today's placer does not pass, each with why in the domain's words: the work list.

Keyed by (upstream `file:TestFunction`, case name). The conformance test fails when a listed
row passes (take it off) and when an unlisted row fails (fix the placer or list it here), so the
list stays true as the placer improves. `docs/reference.md` "Not honoured" is generated from it.
"""

from __future__ import annotations

# Reasons, one per defect, so rows that fail for one cause read alike.
GT_LT_TOLERATIONS = "numeric Gt/Lt tolerations (alpha gate TaintTolerationComparisonOperators) are not read"
DRA_EXTENDED_RESOURCES = (
    "extended resources a DeviceClass maps to DRA (alpha DRAExtendedResource) are not read"
)

BOUND_ON_ABSENT_NODES = (
    "the running members sit on nodes the cluster does not have: a hard gang around members whose "
    "domain is unknown waits (Volcano reads its job-allocated-hypernode annotation instead)"
)

KUEUE_NODE_WITHOUT_LEVEL = (
    "a node lacking one of the Topology's level labels is in no Kueue domain; topobridge still places on it"
)
KUEUE_PREFERRED_SPLIT = (
    "a preferred gang no domain holds: Kueue splits its slices evenly over two blocks (2+2), "
    "topobridge takes the larger block whole first (3+1)"
)
KUEUE_BELOW_SLICE_ORDER = (
    "inside a slice's domain Kueue hands pods to the hosts in its own order (x3:2 x4:2), "
    "topobridge fills the host with the most slots first"
)


KEY_NOT_A_TREE_LEVEL = (
    "a PodGroup's topology key that is a bare node label, no level of topobridge's topology tree "
    "(topograph, a Kueue Topology, HyperNodes, ...): its pods wait, saying so; kube-scheduler takes "
    "any node label as a level"
)

_TAINT = "pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go"
_FIT = "pkg/scheduler/framework/plugins/noderesources/fit_test.go"
_ALLOCATE = "pkg/scheduler/actions/allocate/allocate_test.go"
_PODGROUP = "test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go:TestPodGroupPreemption"
_TAS = "pkg/cache/scheduler/tas_cache_test.go:TestFindTopologyAssignments"

NOT_HONOURED: dict[tuple[str, str], str] = {
    (
        f"{_TAINT}:TestTaintTolerationFilter",
        "Pod with Gt toleration can be scheduled on node when taint value is higher than threshold",
    ): GT_LT_TOLERATIONS,
    (
        f"{_TAINT}:TestTaintTolerationFilter",
        "Pod with Lt toleration can be scheduled on node when taint value is lower than threshold",
    ): GT_LT_TOLERATIONS,
    (
        f"{_TAINT}:TestTaintTolerationFilterWithFeatureGate",
        "Pod with Gt toleration can be scheduled when feature gate is enabled and taint value is higher",
    ): GT_LT_TOLERATIONS,
    (
        f"{_TAINT}:TestTaintTolerationFilterWithFeatureGate",
        "Pod with Lt toleration can be scheduled when feature gate is enabled and taint value is lower",
    ): GT_LT_TOLERATIONS,
    (
        f"{_TAINT}:TestTaintTolerationScore",
        "Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint",
    ): GT_LT_TOLERATIONS,
    (
        f"{_TAINT}:TestTaintTolerationScore",
        "Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint",
    ): GT_LT_TOLERATIONS,
    (f"{_FIT}:TestEnoughRequests", "extended resource backed by DRA"): DRA_EXTENDED_RESOURCES,
    (
        f"{_FIT}:TestEnoughRequests",
        "extended resource was backed by Device Plugin (Allocatable: 0)",
    ): DRA_EXTENDED_RESOURCES,
    (
        f"{_ALLOCATE}:TestAllocateWithNetWorkTopologies",
        "hard network topology constrain and task in job rescheduled, can allocate job when the tier "
        "corresponding to highestTierName not reached and hyperNodesInfo has three tier",
    ): BOUND_ON_ABSENT_NODES,
    (
        _TAS,
        "only nodes with matching levels are considered; no host label on node; BestFit",
    ): KUEUE_NODE_WITHOUT_LEVEL,
    (
        _TAS,
        "block preferred for podset; host required for slices; 2 blocks with unbalanced subdomains; BestFit",
    ): KUEUE_PREFERRED_SPLIT,
    (
        _TAS,
        "multi-layer topology: block required; rack slices of 4; host slices of 2; TASMultiLayerTopology",
    ): KUEUE_BELOW_SLICE_ORDER,
    (_TAS, "multi-layer topology: no feature gate; additional layers ignored"): KUEUE_BELOW_SLICE_ORDER,
    (_PODGROUP, "Topology-Aware Preemption: single topology domain"): KEY_NOT_A_TREE_LEVEL,
    (_PODGROUP, "Topology-Aware Preemption: two topologies, only one eligible"): KEY_NOT_A_TREE_LEVEL,
}
