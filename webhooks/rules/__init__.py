"""Validation rules: pure functions `(object, ClusterState) -> Decision`, one module per kind.

No I/O here, no Kubernetes client, no HTTP: the admission server, the CLI and the controller
all call the same rules through `registry`. Every message is a Kubernetes field error
(`spec.networkTopology.mode: Unsupported value: "hrad": supported values: "hard", "soft"`).
"""

from webhooks.rules.cluster_state import ClusterState, HyperNodeFacts
from webhooks.rules.decision import Decision
from webhooks.rules.fielderrors import ErrorType, FieldError
from webhooks.rules.registry import KINDS, Kind, validate_object

__all__ = [
    "KINDS",
    "ClusterState",
    "Decision",
    "ErrorType",
    "FieldError",
    "HyperNodeFacts",
    "Kind",
    "validate_object",
]
