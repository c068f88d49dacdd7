"""Rows checked where pods land after topobridge's real cycle: SchedulingGates (PreEnqueue) and
DynamicResources (Volcano's allocate tables are in `rows_volcano`).

SchedulingGates `TestPreEnqueue` (kubernetes commit 008b3652): a gated pod is never placed.

DynamicResources `TestPlugin` (kubernetes commit of file id 413406178, resource.k8s.io/v1): taken
are the cases whose outcome is "a pod with a resourceClaims entry that nothing allocates is not
bound": `missing-claim`, `deleted-claim`, `wrong-claim` (PreEnqueue), `no-resources`,
`exhausted-resources` (Filter: cannot allocate all claims), `missing-class` (PreFilter) and
`wrong-topology` (the claim is allocated for another node). The rest of that table checks what
the plugin writes into claims (reservations, finalizers, allocation results, CEL errors, admin
access, device taints, bind failures); topobridge neither allocates devices nor writes claims,
so those facts have no counterpart here. The ResourceClaims and DeviceClasses are in each row's
objects as upstream sets them; topobridge skips kinds it does not read.
"""

from __future__ import annotations

from conformance.harness import ANYWHERE, Lands, Obj, Row
from conformance.objects import node, pod

GATES = "pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates_test.go:TestPreEnqueue"
DRA = "pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go:TestPlugin"

GATE_ROWS = [
    Row(
        "SchedulingGates",
        GATES,
        "pod does not carry scheduling gates",
        [node("n1")],
        [pod("p")],
        Lands({"p": ANYWHERE}),
    ),
    Row(
        "SchedulingGates",
        GATES,
        "pod carries scheduling gates",
        [node("n1")],
        [pod("p", schedulingGates=[{"name": "foo"}, {"name": "bar"}])],
        Lands({"p": None}),
    ),
]

CLAIM = "my-pod-my-resource"
CLASS = "my-resource-class"


def _claim(*, allocated_on: str | None = None, deleting: bool = False, owner_uid: str = "1234") -> Obj:
    meta: Obj = {
        "name": CLAIM,
        "namespace": "default",
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": owner_uid, "controller": True}
        ],
    }
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    out: Obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {"deviceClassName": CLASS}}]}},
    }
    if allocated_on is not None:
        out["status"] = {
            "allocation": {
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [allocated_on]}
                            ]
                        }
                    ]
                }
            }
        }
    return out


DEVICE_CLASS: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS}}


def _claim_pod(*, template: bool, status: bool = True) -> Obj:
    entry: Obj = {"name": "my-resource"}
    if template:
        entry["resourceClaimTemplateName"] = "my-pod-my-resource-template"
    else:
        entry["resourceClaimName"] = CLAIM
    out = pod("my-pod", resourceClaims=[entry])
    out["metadata"]["uid"] = "1234"
    if template and status:
        out["status"] = {"resourceClaimStatuses": [{"name": "my-resource", "resourceClaimName": CLAIM}]}
    return out


def _dra(case: str, the_pod: Obj, extra: list[Obj]) -> Row:
    return Row("DynamicResources", DRA, case, [node("worker"), *extra], [the_pod], Lands({"my-pod": None}))


DRA_ROWS = [
    _dra("missing-claim", _claim_pod(template=True, status=False), [_claim(allocated_on="worker")]),
    _dra("deleted-claim", _claim_pod(template=True), [_claim(allocated_on="worker", deleting=True)]),
    _dra("wrong-claim", _claim_pod(template=True), [_claim(allocated_on="worker", owner_uid="1234123")]),
    _dra("no-resources", _claim_pod(template=False), [_claim(), DEVICE_CLASS]),
    _dra(
        "exhausted-resources",
        _claim_pod(template=False),
        [
            _claim(),
            DEVICE_CLASS,
            {**_claim(allocated_on="worker"), "metadata": {"name": "other", "namespace": "default"}},
        ],
    ),
    _dra("missing-class", _claim_pod(template=False), [_claim()]),
    _dra("wrong-topology", _claim_pod(template=False), [_claim(allocated_on="some-other-node")]),
]


ROWS = [*GATE_ROWS, *DRA_ROWS]
