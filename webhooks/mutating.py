"""Mutating admission for LeaderWorkerSet gangs: which LeaderWorkerSets the rules may read.

The rules are `webhooks.rules.lws_mutation` (pure), listed in `registry.MUTATING_KINDS` and
served by the admission server's one handler, like the validating rules: one size cap, one
read timeout, one encoder, metrics, and the guard that answers when a rule fails.

* `POST /mutate/scheduling.volcano.sh/v1beta1/podgroups`: a PodGroup created for an LWS
  group (LWS's own Volcano provider makes it) gets the LWS's `networkTopology` and
  `subGroupPolicy` before Volcano ever sees it.
* `POST /mutate/v1/pods`: an LWS pod without `scheduling.k8s.io/group-name` gets its group's
  PodGroup name.

Register the webhooks with `failurePolicy: Ignore`: the controller converges the same fields a
moment later anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

from webhooks.rules.lws_mutation import LwsLookup
from webhooks.rules.registry import MUTATING_KINDS

PODGROUP_PATH, POD_PATH = (k.path for k in MUTATING_KINDS)
LwsSource = LwsLookup
"""The LeaderWorkerSets this process has seen (kept by a watch, read without I/O)."""


@dataclass(frozen=True, slots=True)
class MutatingEndpoints:
    """Turns on the mutating webhooks of a server, reading LeaderWorkerSets from `lws`."""

    lws: LwsLookup
