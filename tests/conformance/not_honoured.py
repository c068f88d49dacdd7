"""The rows today's placer does not pass, each with why in the domain's words: the work list.

Keyed by (upstream `file:TestFunction`, case name). The conformance test fails when a listed
row passes (take it off) and when an unlisted row fails (fix the placer or list it here), so the
list stays true as the placer improves. `docs/reference.md` "Not honoured" is generated from it.
"""

from __future__ import annotations

# Reasons, one per defect, so rows that fail for one cause read alike.
DRA_EXTENDED_RESOURCES = (
    "extended resources a DeviceClass maps to DRA (alpha DRAExtendedResource) are not read"
)

_FIT = "pkg/scheduler/framework/plugins/noderesources/fit_test.go"

NOT_HONOURED: dict[tuple[str, str], str] = {
    (f"{_FIT}:TestEnoughRequests", "extended resource backed by DRA"): DRA_EXTENDED_RESOURCES,
    (
        f"{_FIT}:TestEnoughRequests",
        "extended resource was backed by Device Plugin (Allocatable: 0)",
    ): DRA_EXTENDED_RESOURCES,
}
