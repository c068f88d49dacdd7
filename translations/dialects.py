"""The dialect table: for each dialect's fields, whether admission validates them, whether
`translate` carries them into each other dialect, and whether the fallback scheduler honours them.

One table in code, rendered into docs/reference.md (`render_markdown`; `tests/webhooks/test_dialect_table.py`
keeps the two equal and checks the claims it can against the code: a validated dialect has an
admission rule, a translated one a translation).

"Honoured by the fallback" states what `controller/placer` reads today (Kueue's TAS annotations
and its gate: `translations.gangs` reads them for a Job's pods, a Kueue pod group's and an LWS
group's). `FALLBACK_READS_VOLCANO_JOBS`
says whether the placer reads a Volcano Job itself (it reads the PodGroup Volcano's job
controller makes); the test fails while a flag and the placer disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Support = Literal["yes", "partly", "no", "not yet", "-"]
"""`-`: the field's own dialect."""
TARGETS = ("Volcano", "Koordinator", "Kueue", "Kubernetes")
"""The dialects `topobridge translate --to` writes, in table order (Kubernetes: `--to upstream`,
its own `scheduling.k8s.io` gang API)."""

FALLBACK_READS_VOLCANO_JOBS = False
"""Whether the fallback scheduler places a Volcano Job's pods by the Job itself."""
FALLBACK_READS_KUEUE = True
"""Whether the fallback scheduler honours Kueue's TAS annotations and its `kueue.x-k8s.io/topology` gate."""
FALLBACK_READS_UPSTREAM = True
"""Whether the fallback scheduler places `scheduling.k8s.io` PodGroups' pods as their gangs."""


def _flag(on: bool) -> Support:
    return "yes" if on else "not yet"


@dataclass(frozen=True, slots=True)
class Row:
    """One dialect's field (or group of fields)."""

    dialect: str
    field: str
    validated: Support
    to_volcano: Support
    to_koordinator: Support
    to_kueue: Support
    fallback: Support
    note: str = ""
    to_kubernetes: Support = "no"
    """`translate --to upstream` (through the Volcano PodGroup the dialect makes)."""

    @property
    def targets(self) -> tuple[Support, Support, Support, Support]:
        return (self.to_volcano, self.to_koordinator, self.to_kueue, self.to_kubernetes)


_VJ = _flag(FALLBACK_READS_VOLCANO_JOBS)
_KQ = _flag(FALLBACK_READS_KUEUE)
_UP = _flag(FALLBACK_READS_UPSTREAM)

ROWS: tuple[Row, ...] = (
    Row(
        "LeaderWorkerSet",
        "`spec.networkTopology`",
        "yes",
        "yes",
        "yes",
        "no",
        "yes",
        "one PodGroup per group",
        to_kubernetes="partly",
    ),
    Row(
        "LeaderWorkerSet",
        "annotations `volcano.sh/network-topology-mode`, `-highest-tier`",
        "yes",
        "yes",
        "yes",
        "no",
        "yes",
        "when `spec.networkTopology` is absent",
        to_kubernetes="partly",
    ),
    Row(
        "LeaderWorkerSet",
        "`subGroupPolicy` + `topobridge.io/subgroup-network-topology-*`",
        "yes",
        "yes",
        "partly",
        "no",
        "yes",
        "Koordinator: no hard topology on part of a gang",
    ),
    Row(
        "LeaderWorkerSet",
        "other `volcano.sh/*` annotations",
        "no",
        "no",
        "no",
        "no",
        "no",
        "upstream LWS copies them onto its PodGroups; `translate` names each",
    ),
    Row(
        "Volcano PodGroup",
        "`spec.networkTopology`",
        "yes",
        "-",
        "yes",
        "partly",
        "yes",
        "Kueue: through the Job that joins it",
        to_kubernetes="partly",
    ),
    Row(
        "Volcano PodGroup",
        "`spec.subGroupPolicy`",
        "yes",
        "-",
        "partly",
        "partly",
        "yes",
        "the `topobridge.io/subgroup-index` form only",
    ),
    Row(
        "Volcano PodGroup",
        "`spec.minMember`, `spec.minResources`",
        "yes",
        "-",
        "yes",
        "no",
        "yes",
        to_kubernetes="partly",
    ),
    Row(
        "Volcano PodGroup",
        "`spec.queue`, `spec.priorityClassName`",
        "yes",
        "-",
        "no",
        "no",
        "partly",
        "priority only",
        to_kubernetes="partly",
    ),
    Row(
        "Volcano HyperNode",
        "`spec.tier`, `spec.tierName`, `spec.members`",
        "yes",
        "-",
        "yes",
        "yes",
        "yes",
        "with node labels",
    ),
    Row(
        "Volcano Job",
        "`spec.networkTopology`",
        "yes",
        "yes",
        "yes",
        "no",
        _VJ,
        "through the PodGroup Volcano makes",
        to_kubernetes="partly",
    ),
    Row(
        "Volcano Job",
        "`spec.tasks[].partitionPolicy`",
        "yes",
        "yes",
        "no",
        "no",
        _VJ,
        "Koordinator: no hard topology on part of a gang",
    ),
    Row(
        "Volcano Job",
        "`spec.minAvailable`, `spec.tasks[].minAvailable`, `replicas`",
        "yes",
        "yes",
        "yes",
        "no",
        _VJ,
        to_kubernetes="partly",
    ),
    Row(
        "Koordinator",
        "gang annotations, `network-topology-spec`, `-index`",
        "yes",
        "yes",
        "-",
        "no",
        "yes",
        to_kubernetes="partly",
    ),
    Row("Koordinator", "ClusterNetworkTopology `default`", "yes", "yes", "-", "no", "yes", "as HyperNodes"),
    Row(
        "GPU dialect",
        "`gpu.topology/*` on Jobs and Pods",
        "yes",
        "partly",
        "no",
        "no",
        "yes",
        "node-local keys stay",
        to_kubernetes="partly",
    ),
    Row(
        "Kueue TAS",
        "`podset-required-topology`, `podset-preferred-topology`",
        "yes",
        "yes",
        "no",
        "-",
        _KQ,
        "batch/v1 Jobs, Kueue pod groups, LWS groups; levels from a Kueue Topology",
        to_kubernetes="partly",
    ),
    Row("Kueue TAS", "`podset-unconstrained-topology`", "yes", "yes", "no", "-", _KQ, to_kubernetes="yes"),
    Row(
        "Kueue TAS",
        "`podset-slice-required-topology`, `podset-slice-size`",
        "yes",
        "partly",
        "no",
        "-",
        _KQ,
        "pods need `topobridge.io/subgroup-index`",
    ),
    Row(
        "Kueue TAS",
        "`podset-slice-required-topology-constraints`",
        "yes",
        "partly",
        "no",
        "-",
        _KQ,
        "to Volcano: the outermost layer",
    ),
    Row(
        "Kueue TAS",
        "`podset-group-name`",
        "yes",
        "no",
        "no",
        "-",
        _KQ,
        "an LWS group's leader and workers: one gang",
    ),
    Row(
        "Kueue TAS",
        "Topology `spec.levels`",
        "partly",
        "yes",
        "no",
        "-",
        "no",
        "checked by `translate`; as HyperNodes",
    ),
    Row(
        "Kueue TAS",
        "scheduling gate `kueue.x-k8s.io/topology`",
        "no",
        "no",
        "no",
        "-",
        _KQ,
        "Kueue places such pods",
    ),
    Row(
        "Kubernetes gang API",
        "PodGroup `schedulingPolicy` (`basic`, `gang.minCount`), pod `spec.schedulingGroup`",
        "yes",
        "yes",
        "yes",
        "partly",
        _UP,
        "Kueue: through the Job whose template joins it",
        to_kubernetes="-",
    ),
    Row(
        "Kubernetes gang API",
        "`schedulingConstraints.topology[].key`",
        "yes",
        "yes",
        "yes",
        "partly",
        _UP,
        "a node label the topology has a tier for; the domain by kube's placement scoring",
        to_kubernetes="-",
    ),
    Row(
        "Kubernetes gang API",
        "`priorityClassName`, `priority`, `preemptionPolicy`",
        "yes",
        "partly",
        "no",
        "no",
        _UP,
        "to others: the class only",
        to_kubernetes="-",
    ),
    Row(
        "Kubernetes gang API",
        "`disruptionMode`, `resourceClaims`, `workloadRef`, `parentCompositePodGroupName`",
        "yes",
        "no",
        "no",
        "no",
        "no",
        "named as not carried; the fallback scheduler still honours `disruptionMode`",
        to_kubernetes="-",
    ),
    Row(
        "Kubernetes gang API",
        "Workload (`v1alpha1` `podGroups`; templates), pod `spec.workloadRef`",
        "yes",
        "partly",
        "partly",
        "no",
        _UP,
        "1.35 groups only; templates make no gang",
        to_kubernetes="-",
    ),
    Row(
        "Kubernetes gang API",
        "CompositePodGroup (`v1alpha3`)",
        "yes",
        "no",
        "no",
        "no",
        "no",
        "its groups wait: a composite cannot be held",
        to_kubernetes="-",
    ),
)


def render_markdown() -> str:
    """The table as docs/reference.md carries it."""
    head = ["dialect", "field", "validated", *(f"to {t}" for t in TARGETS), "fallback scheduler", "note"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in ROWS:
        cells = [r.dialect, r.field, r.validated, *r.targets, r.fallback, r.note]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
