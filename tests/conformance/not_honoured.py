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

_TAINT = "pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go"
_FIT = "pkg/scheduler/framework/plugins/noderesources/fit_test.go"

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
}
