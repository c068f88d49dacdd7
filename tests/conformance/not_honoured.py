"""The rows today's placer does not pass, each with why in the domain's words: the work list.

Keyed by (upstream `file:TestFunction`, case name). The conformance test fails when a listed
row passes (take it off) and when an unlisted row fails (fix the placer or list it here), so the
list stays true as the placer improves. `docs/reference.md` "Not honoured" is generated from it.
"""

from __future__ import annotations

# Reasons, one per defect, so rows that fail for one cause read alike.
GT_LT_TOLERATIONS = "numeric Gt/Lt tolerations (alpha gate TaintTolerationComparisonOperators) are not read"
INVALID_LABEL_VALUE = (
    "a node selector requirement with a value that is no valid label value should match no node"
)
POD_LEVEL_RESOURCES = "pod-level spec.resources is not counted as the pod's request"
DRA_EXTENDED_RESOURCES = (
    "extended resources a DeviceClass maps to DRA (alpha DRAExtendedResource) are not read"
)
AFFINITY_TERMS_SPLIT = (
    "a required affinity term pair is met by two different pods: upstream counts an existing pod only when it "
    "matches every term, and lets the first pod of a collection start only when none does"
)
INVALID_AFFINITY_SELECTOR = (
    "an affinity term whose selector has an invalid label value should reject the pod, not match nothing"
)
SPREAD_SELF_MISMATCH = (
    "spread lets a pod its own selector does not match onto a domain already over maxSkew "
    "(upstream still requires count - min <= maxSkew)"
)
SPREAD_TERMINATING = "spread counts terminating pods"
SPREAD_HONOR_COUNTS = (
    "spread nodeAffinityPolicy/nodeTaintsPolicy Honor still counts pods on the nodes the policy excludes"
)
SPREAD_MIN_DOMAINS = "spread minDomains is not read"
SCHEDULING_GATES = "spec.schedulingGates is ignored: a gated pod is bound"
RESOURCE_CLAIMS = "spec.resourceClaims is ignored: a pod whose claim nothing allocates is bound"
SIDECAR_PORTS = "host ports of sidecar (restartable init) containers are not counted"

_TAINT = "pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go"
_AFFINITY = "pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go"
_FIT = "pkg/scheduler/framework/plugins/noderesources/fit_test.go"
_INTERPOD = "pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go"
_SPREAD = "pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go"
_GATES = "pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates_test.go"
_DRA = "pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go"
_PORTS = "pkg/scheduler/framework/plugins/nodeports/node_ports_test.go"

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
        f"{_AFFINITY}:TestNodeAffinity",
        "Pod with an invalid value in Affinity term won't be scheduled onto the node",
    ): INVALID_LABEL_VALUE,
    (f"{_FIT}:TestEnoughRequests", "pod-level cpu resource not fit"): POD_LEVEL_RESOURCES,
    (f"{_FIT}:TestEnoughRequests", "pod-level memory resource not fit"): POD_LEVEL_RESOURCES,
    (f"{_FIT}:TestEnoughRequests", "pod-level hugepages resource not fit"): POD_LEVEL_RESOURCES,
    (
        f"{_FIT}:TestEnoughRequests",
        "one pod-level cpu resource fits and all init and non-init containers resources fit",
    ): POD_LEVEL_RESOURCES,
    (f"{_FIT}:TestEnoughRequests", "extended resource backed by DRA"): DRA_EXTENDED_RESOURCES,
    (
        f"{_FIT}:TestEnoughRequests",
        "extended resource was backed by Device Plugin (Allocatable: 0)",
    ): DRA_EXTENDED_RESOURCES,
    (f"{_PORTS}:TestNodePorts", "TCP hostPort conflict from sidecar initContainer"): SIDECAR_PORTS,
    (
        f"{_INTERPOD}:TestRequiredAffinitySingleNode",
        "PodAffinity fails PreFilter with an invalid affinity label syntax",
    ): INVALID_AFFINITY_SELECTOR,
    (
        f"{_INTERPOD}:TestRequiredAffinitySingleNode",
        "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
    ): INVALID_AFFINITY_SELECTOR,
    (
        f"{_INTERPOD}:TestRequiredAffinityMultipleNodes",
        "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection "
        "should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
    ): AFFINITY_TERMS_SPLIT,
    (
        f"{_INTERPOD}:TestRequiredAffinityMultipleNodes",
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, "
        "and the match logic should be satisfied on the same pod",
    ): AFFINITY_TERMS_SPLIT,
    (
        f"{_SPREAD}:TestSingleConstraint",
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ): SPREAD_SELF_MISMATCH,
    (f"{_SPREAD}:TestSingleConstraint", "terminating Pods should be excluded"): SPREAD_TERMINATING,
    (
        f"{_SPREAD}:TestSingleConstraint",
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
    ): SPREAD_HONOR_COUNTS,
    (
        f"{_SPREAD}:TestSingleConstraint",
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
    ): SPREAD_MIN_DOMAINS,
    (
        f"{_SPREAD}:TestSingleConstraint",
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
    ): SPREAD_MIN_DOMAINS,
    (f"{_GATES}:TestPreEnqueue", "pod carries scheduling gates"): SCHEDULING_GATES,
    (f"{_DRA}:TestPlugin", "missing-claim"): RESOURCE_CLAIMS,
    (f"{_DRA}:TestPlugin", "deleted-claim"): RESOURCE_CLAIMS,
    (f"{_DRA}:TestPlugin", "wrong-claim"): RESOURCE_CLAIMS,
    (f"{_DRA}:TestPlugin", "no-resources"): RESOURCE_CLAIMS,
    (f"{_DRA}:TestPlugin", "exhausted-resources"): RESOURCE_CLAIMS,
    (f"{_DRA}:TestPlugin", "missing-class"): RESOURCE_CLAIMS,
    (f"{_DRA}:TestPlugin", "wrong-topology"): RESOURCE_CLAIMS,
}
