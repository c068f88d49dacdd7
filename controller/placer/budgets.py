"""PodDisruptionBudgets as preemption counts them: the disruptions each still allows.

A `Budget` is a PodDisruptionBudget reduced to its namespace, selector and the disruptions it
allows now (`budgets_from`: `status.disruptionsAllowed` when reported, else counted the way the
disruption controller counts). Preemption breaks as few as it can (`preempt`); a cycle that
plans evictions spends them (`after_evictions`), so later gangs of the same cycle see what is
left. The live cache keeps them in step with its pods (`cluster`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from controller.placer.snapshot import Snapshot
from translations._base import INT32_MAX, LabelSelector, bounded_int
from translations.core import PodDisruptionBudget
from translations.topology import natural_key


@dataclass(frozen=True)
class Budget:
    """A PodDisruptionBudget reduced to what preemption counts."""

    key: str
    namespace: str
    selector: LabelSelector | None
    allowed: int

    def covers(self, namespace: str, labels: Mapping[str, str]) -> bool:
        # policy/v1: a null selector selects nothing, an empty one every pod of the namespace.
        return (
            namespace == self.namespace and self.selector is not None and self.selector.matches(dict(labels))
        )


def budgets_from(
    pdbs: Sequence[PodDisruptionBudget],
    snap: Snapshot,
    *,
    healthy: Mapping[str, int] | None = None,
    covered: Mapping[str, int] | None = None,
) -> list[Budget]:
    """Disruptions each budget still allows: `status.disruptionsAllowed` when reported, else
    computed from minAvailable / maxUnavailable the way the disruption controller does: the
    healthy (bound, not terminating) covered pods less the desired healthy count, where
    percentages and maxUnavailable are of every covered bound pod, terminating ones included
    (a terminating pod is a disruption already under way: it uses up part of the budget).

    `healthy` and `covered` (budget key -> those counts in the snapshot), when the caller keeps
    them, spare counting here."""
    out: list[Budget] = []
    for pdb in sorted(pdbs, key=lambda p: natural_key(p.key)):
        b = Budget(pdb.key, pdb.namespace, pdb.spec.selector, 0)
        if pdb.status is not None and pdb.status.disruptions_allowed is not None:
            allowed = pdb.status.disruptions_allowed
        else:
            if healthy is not None and covered is not None:
                healthy_n, expected = healthy.get(pdb.key, 0), covered.get(pdb.key, 0)
            else:
                hits = [p for p in snap.pods.values() if b.covers(p.namespace, p.labels)]
                healthy_n, expected = sum(1 for p in hits if not p.terminating), len(hits)
            if pdb.spec.min_available is not None:
                allowed = healthy_n - _scaled(pdb.spec.min_available, expected)
            elif pdb.spec.max_unavailable is not None:
                allowed = healthy_n - (expected - _scaled(pdb.spec.max_unavailable, expected))
            else:
                allowed = healthy_n
        out.append(Budget(b.key, b.namespace, b.selector, max(0, allowed)))
    return out


def after_evictions(budgets: Sequence[Budget], snap: Snapshot, victims: Iterable[str]) -> list[Budget]:
    """The budgets once `victims` (bound pods of `snap`, not yet terminating) are evicted: each
    victim a budget covers uses up one of the disruptions it allows (never below zero)."""
    spent: dict[str, int] = {}
    known = snap.budget_hits
    for key in victims:
        hits = known.get(key) if known is not None else None
        if hits is None:
            pod = snap.pods[key]
            hits = tuple(b.key for b in budgets if b.covers(pod.namespace, pod.labels))
        for k in hits:
            spent[k] = spent.get(k, 0) + 1
    if not spent:
        return list(budgets)
    return [replace(b, allowed=max(0, b.allowed - spent.get(b.key, 0))) for b in budgets]


def _scaled(value: int | str, total: int) -> int:
    """minAvailable/maxUnavailable as a count of `total`: a percentage rounds up (as the
    disruption controller does), above 100% counts as 100%; digit strings are read without
    `int()` of their length (the API server accepts `000...0050%`)."""
    if isinstance(value, int):
        return value
    text = value.strip()
    if text.endswith("%") and _ascii_digits(text[:-1]):
        percent = bounded_int(text[:-1], 100)
        return -(-percent * total // 100)
    return bounded_int(text, INT32_MAX) if _ascii_digits(text) else 0


def _ascii_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()
