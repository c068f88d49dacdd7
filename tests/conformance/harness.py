"""A conformance row, its three kinds of expected outcome, and how a row is checked.

A row is one upstream test case: the plugin it belongs to, where it lives upstream (file and Go
test function), its name verbatim, the cluster as plain Kubernetes objects, the incoming pod(s),
and upstream's fact about the outcome:

* `Feasible`: the per-node Filter verdict for one incoming pod (upstream's plugin unit tables).
  Feasibility is compared exactly; for a node that is out, the reason must be the owning
  plugin's (NodeResourcesFit: the same set of "Insufficient ..." reasons).
* `Scores`: per node, one Score plugin's normalized score (0..100) for one incoming pod
  (upstream's Score plugin tables, which run Score then NormalizeScore on every listed node).
  Compared exactly; the row's plugin is `<Plugin>/score`. A table that keeps some nodes of the
  cluster out of scoring (as if Filter had removed them) names them in `failed`.
* `Lands`: where pods are after topobridge's real cycle runs to quiescence (upstream's
  integration tables, Volcano's allocate tables, PreEnqueue): a node, any node of a set,
  `ANYWHERE` (bound, no matter where), `EVICTED` (preempted: it got a deletionTimestamp) or
  None (stays pending).
* `Binds`: Volcano's allocate check: exactly this many of the row's pending pods are bound at
  quiescence (pods bound before the row starts do not count), and the named ones on their node.
* `Counts`: Kueue's topology assignment: how many of the row's pending pods end in each domain
  named by the values of some node labels (Kueue's assignment levels, joined by "/"; the
  hostname for single nodes), every other domain holding none; an empty map: the gang stays
  pending.
* `Spread`: Volcano's per-HyperNode bind check: of the row's pending pods, how many end in each
  domain that holds any (sorted, whichever domains those are).
* `Victims`: per node, the pods preemption takes when the incoming pod may go to that node
  alone (kube's DryRunPreemption / SelectVictimsOnNode tables: one candidate per node), or no
  entry when no eviction on that node lets it in.

The expectations are upstream's; everything else (names, helpers, prose) is ours. Checking goes
through `adapter` only, so the rows outlive any rewrite of the placer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.adapter import EVICTED, Verdict, filter_verdicts, landings, node_scores, victims_per_node

Obj = dict[str, Any]

SCORE_SUFFIX = "/score"
"""How a score row's plugin is named: `<Plugin>/score`."""

ANYWHERE = "*"
"""In `Lands`: the pod is bound, whichever node it got."""


Where = str | frozenset[str] | None


@dataclass(frozen=True)
class Feasible:
    """Per node: True, or the owning plugin's reason (several joined by "; ")."""

    verdicts: Mapping[str, Verdict]


@dataclass(frozen=True)
class Scores:
    """Per node that passed Filter: the plugin's normalized score."""

    scores: Mapping[str, int]
    failed: frozenset[str] = frozenset()
    """Nodes of the cluster that did not pass Filter: in the snapshot, never scored."""


@dataclass(frozen=True)
class Lands:
    """Per pod (`name` in namespace default, or `namespace/name`): where it ends up."""

    places: Mapping[str, Where]


@dataclass(frozen=True)
class Binds:
    """Exactly `count` of the row's pending pods bound; `places` names some of their nodes."""

    count: int
    places: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Counts:
    """Per domain (the values of node labels `levels`, joined by "/"): how many of the row's
    pending pods end there."""

    levels: tuple[str, ...]
    counts: Mapping[str, int]


@dataclass(frozen=True)
class Spread:
    """The row's pending pods per domain (the values of node labels `levels`) holding any,
    sorted ascending: Volcano's `ExpectBindNumsInHyperNode`, which names no HyperNode."""

    levels: tuple[str, ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class Victims:
    """Per node with a candidate: the victims' pod names; nodes left out have no candidate."""

    victims: Mapping[str, frozenset[str]]


@dataclass(frozen=True)
class Row:
    plugin: str
    """Upstream plugin name; score rows use `<Plugin>/score`."""
    upstream: str
    """`path/to/file_test.go:TestFunction` in the upstream repository."""
    case: str
    """The upstream case name, verbatim."""
    objects: Sequence[Obj]
    """The cluster: Nodes, bound Pods, Namespaces, HyperNodes, PodGroups, ..."""
    incoming: Sequence[Obj]
    """The pod(s) to schedule: exactly one for `Feasible` and `Scores`."""
    expect: Feasible | Scores | Lands | Binds | Counts | Spread | Victims
    repo: str = "kubernetes/kubernetes"
    nth: int = 1
    """Upstream names a few cases twice in one table: the second is `nth=2`."""
    gates: Mapping[str, bool] = field(default_factory=dict)
    """Feature gates the upstream case sets, where they differ from topobridge's (the adapter's
    `GATES` says which it can set)."""

    @property
    def key(self) -> tuple[str, str]:
        """How `NOT_HONOURED` names the row: upstream file:function, and the case (with `#n`
        appended for the n-th case of that name)."""
        return (self.upstream, self.case if self.nth == 1 else f"{self.case} #{self.nth}")

    @property
    def test_id(self) -> str:
        return f"{self.plugin}|{self.upstream.rsplit(':', 1)[-1]}|{self.key[1]}"


@dataclass(frozen=True)
class Outcome:
    ok: bool
    detail: str = ""
    got: Mapping[str, object] = field(default_factory=dict)


def check(row: Row) -> Outcome:
    """Run the row through the adapter and compare with upstream's fact."""
    if isinstance(row.expect, Feasible):
        if len(row.incoming) != 1:
            raise ValueError(f"row {row.case!r}: incoming: a Feasible row takes exactly one pod")
        got = filter_verdicts(row.objects, row.incoming[0], gates=row.gates)
        return _compare_verdicts(row.expect, got)
    if isinstance(row.expect, Scores):
        if len(row.incoming) != 1:
            raise ValueError(f"row {row.case!r}: incoming: a Scores row takes exactly one pod")
        plugin = row.plugin.removesuffix(SCORE_SUFFIX)
        scored = node_scores(row.objects, row.incoming[0], plugin, failed=row.expect.failed, gates=row.gates)
        return _compare_scores(row.expect, scored)
    if isinstance(row.expect, Victims):
        if len(row.incoming) != 1:
            raise ValueError(f"row {row.case!r}: incoming: a Victims row takes exactly one pod")
        got_victims = victims_per_node(row.objects, row.incoming[0])
        return _compare_victims(row.expect, got_victims)
    places = landings([*row.objects, *row.incoming])
    if isinstance(row.expect, Binds):
        return _compare_binds(row.expect, places, _pending(row.incoming))
    if isinstance(row.expect, Counts):
        return _compare_counts(row.expect, places, _pending(row.incoming), row.objects)
    if isinstance(row.expect, Spread):
        counts = _domain_counts(row.expect.levels, places, _pending(row.incoming), row.objects)
        spread = tuple(sorted(counts.values()))
        ok = spread == row.expect.counts
        return Outcome(ok, "" if ok else f"want {row.expect.counts}, got {spread}: {counts}", dict(places))
    return _compare_places(row.expect, places)


def _compare_victims(want: Victims, got: Mapping[str, frozenset[str]]) -> Outcome:
    wrong = [
        f"{n}: want {sorted(want.victims[n]) if n in want.victims else None}, "
        f"got {sorted(got[n]) if n in got else None}"
        for n in sorted(set(want.victims) | set(got))
        if want.victims.get(n) != got.get(n)
    ]
    return Outcome(not wrong, "; ".join(wrong), dict(got))


def _reasons(v: Verdict) -> frozenset[str] | bool:
    return True if v is True else frozenset(part.strip() for part in str(v).split(";"))


def _compare_verdicts(want: Feasible, got: Mapping[str, Verdict]) -> Outcome:
    if set(want.verdicts) != set(got):
        return Outcome(False, f"nodes differ: want {sorted(want.verdicts)}, got {sorted(got)}", got)
    wrong = [
        f"{n}: want {want.verdicts[n]!r}, got {got[n]!r}"
        for n in sorted(got)
        if _reasons(want.verdicts[n]) != _reasons(got[n])
    ]
    return Outcome(not wrong, "; ".join(wrong), got)


def _compare_scores(want: Scores, got: Mapping[str, int]) -> Outcome:
    if set(want.scores) != set(got):
        return Outcome(False, f"nodes differ: want {sorted(want.scores)}, got {sorted(got)}", got)
    wrong = [f"{n}: want {want.scores[n]}, got {got[n]}" for n in sorted(got) if want.scores[n] != got[n]]
    return Outcome(not wrong, "; ".join(wrong), got)


def _pod_key(name: str) -> str:
    return name if "/" in name else f"default/{name}"


def _compare_places(want: Lands, got: Mapping[str, str | None]) -> Outcome:
    wrong: list[str] = []
    for name, where in want.places.items():
        key = _pod_key(name)
        if key not in got:
            raise ValueError(f"Lands: pod {name!r} is not among the row's objects")
        at = got[key]
        if where is None:
            ok = at is None
        elif where == ANYWHERE:
            ok = at not in (None, EVICTED)
        elif isinstance(where, frozenset):
            ok = at in where
        else:
            ok = at == where
        if not ok:
            shown = sorted(where) if isinstance(where, frozenset) else where
            wrong.append(f"{name}: want {shown!r}, got {at!r}")
    return Outcome(not wrong, "; ".join(wrong), dict(got))


def _pending(pods: Sequence[Obj]) -> list[str]:
    """Keys of the pods that start the row unbound."""
    return [
        f"{p['metadata'].get('namespace') or 'default'}/{p['metadata']['name']}"
        for p in pods
        if p.get("kind", "Pod") == "Pod" and not (p.get("spec") or {}).get("nodeName")
    ]


def _compare_binds(want: Binds, got: Mapping[str, str | None], pending: Sequence[str]) -> Outcome:
    bound = {k: got.get(k) for k in pending if got.get(k) is not None}
    wrong = [] if len(bound) == want.count else [f"want {want.count} bound, got {len(bound)}: {bound}"]
    wrong += [
        f"{k}: want {v!r}, got {got.get(_pod_key(k))!r}"
        for k, v in want.places.items()
        if got.get(_pod_key(k)) != v
    ]
    return Outcome(not wrong, "; ".join(wrong), dict(got))


def _domain_counts(
    levels: Sequence[str], got: Mapping[str, str | None], pending: Sequence[str], objects: Sequence[Obj]
) -> dict[str, int]:
    """How many of the `pending` pods `got` a node in each domain (node label values of `levels`)."""
    domain = {
        o["metadata"]["name"]: "/".join(str((o["metadata"].get("labels") or {}).get(k)) for k in levels)
        for o in objects
        if o.get("kind") == "Node"
    }
    counts: dict[str, int] = {}
    for key in pending:
        node = got.get(key)
        if node is not None:
            value = domain.get(node, "?")
            counts[value] = counts.get(value, 0) + 1
    return counts


def _compare_counts(
    want: Counts, got: Mapping[str, str | None], pending: Sequence[str], objects: Sequence[Obj]
) -> Outcome:
    counts = _domain_counts(want.levels, got, pending, objects)
    if want.counts and len([k for k in pending if got.get(k) is None]):
        return Outcome(False, f"want {dict(want.counts)}, some pods stay pending; got {counts}", dict(got))
    ok = counts == dict(want.counts)
    return Outcome(ok, "" if ok else f"want {dict(want.counts)}, got {counts}", dict(got))
