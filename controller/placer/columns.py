"""Bound pods as parallel arrays (what preemption computes over), kept in step with a snapshot.

A snapshot kept from one cycle to the next changes by a few pods per cycle, but preemption
reads every bound pod as arrays. `PodColumns` holds them in slots (one per pod, in the order
the pods came in) and is told of every change (`log`); `arrays()` replays the changes since the
last call and returns the live slots. The order is the snapshot's dict order, exactly: a pod
replaced in place keeps its slot, a pod removed leaves a hole, a pod added (or added again
after a removal) takes a new slot at the end. So the arrays are the same as a fresh build from
the dict (`pod_arrays`), which the tests check after random changes. While no pod is added or
removed, a read returns the last arrays with the columns the rewritten pods change copied and
patched (`dense`): what preemption pays after a plan's victims were marked terminating is those
pods, not a copy of every column; arrays read earlier never change.

Beside each pod's node, request, priority and gang, the arrays carry what reading them must
not cost a pass over every pod in Python: its position by key (the slot less the holes
before it, `_Positions`) and the PodDisruptionBudgets the caller records as covering it
(`cover`, codes into a table of distinct coverages, read as each slot is written; the
snapshot drops the columns when the budgets are recounted), and per node what all of them
request (`held`, patched with the slots written), so that the room with most pods gone is
summed over the few that stay.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, not_
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from controller.placer.records import BoundPod

I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]

SLACK = 1024
"""Changes waiting, and holes left by removed pods, beyond which the slots are rebuilt (or
compacted) rather than patched: at most that many more than the pods themselves."""

Coverage = Mapping[str, tuple[str, ...]]
"""Pod key -> keys of the PodDisruptionBudgets covering it (empty: none), as the caller keeps
it; a pod it does not hold is matched against the budgets afresh by whoever reads it."""

NOT_COVERED, NOT_KNOWN = 0, 1
"""`PodArrays.cover` codes every table starts with: covered by no budget; not in the coverage."""

_node, _req, _priority = attrgetter("node"), attrgetter("req"), attrgetter("priority")
_terminating, _gang = attrgetter("terminating"), attrgetter("gang")


@dataclass
class PodArrays:
    """Bound pods as parallel arrays, for vectorised preemption."""

    keys: list[str]
    node: I64
    req: I64
    priority: I64
    terminating: Bool
    gang_size: I64
    """Per pod: bound, not terminating members of its gang (1 for a pod alone)."""
    cover: I64
    """Per pod: a code into `cover_table` (`NOT_COVERED`, `NOT_KNOWN`, or budget keys)."""
    cover_table: Sequence[tuple[str, ...] | None]
    positions: Mapping[str, int] | None = field(default=None, repr=False, compare=False)
    """Pod key -> its index, when the columns can tell it without a dict over every pod."""
    held: I64 | None = field(default=None, repr=False, compare=False)
    """Per node (rows by node index, as many as the highest node holding a pod needs): what
    every pod of the arrays requests there, summed; kept by the columns, None on arrays built
    afresh."""

    def held_on(self, n_nodes: int) -> I64 | None:
        """`held` over `n_nodes` rows (a node past its rows holds nothing); None when it is not
        kept, or names a node past `n_nodes`."""
        held = self.held
        if held is None:
            return None
        if len(held) >= n_nodes:
            return held[:n_nodes] if not held[n_nodes:].any() else None
        out = np.zeros((n_nodes, held.shape[1]), dtype=np.int64)
        out[: len(held)] = held
        return out

    @property
    def position(self) -> Mapping[str, int]:
        """Pod key -> its index (made once, for every place the search looks at)."""
        if self.positions is None:
            self.positions = dict(zip(self.keys, range(len(self.keys)), strict=True))
        return self.positions


class _Positions(Mapping[str, int]):
    """Pod key -> index into one `PodColumns.arrays()`, read off the columns' slots (a slot
    less the holes before it) instead of a dict over every pod built in Python; once the
    columns have moved on (a pod added or removed since), that dict after all."""

    def __init__(self, columns: PodColumns, keys: list[str]) -> None:
        self._columns, self._version, self._keys = columns, columns.version, keys
        self._rank: I64 | None = None
        self._own: dict[str, int] | None = None

    def _table(self) -> tuple[dict[str, int], bool]:
        """The columns' slots while they still describe these arrays (True), else a dict of
        the arrays' own keys (False)."""
        if self._own is None and self._columns.version != self._version:
            self._own = dict(zip(self._keys, range(len(self._keys)), strict=True))
        return (self._own, False) if self._own is not None else (self._columns.slot, True)

    def __getitem__(self, key: str) -> int:
        table, slots = self._table()
        slot = table[key]
        if not slots or len(table) == len(self._columns.keys):
            return slot  # no holes: a slot is the index
        if self._rank is None:
            self._rank = np.cumsum(self._columns.alive) - 1
        return int(self._rank[slot])

    def __contains__(self, key: object) -> bool:
        return key in self._table()[0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class _CoverCodes:
    """Distinct coverages as small integers (see `PodArrays.cover`)."""

    def __init__(self) -> None:
        self.table: list[tuple[str, ...] | None] = [(), None]
        self.code: dict[tuple[str, ...] | None, int] = {(): NOT_COVERED, None: NOT_KNOWN}

    def of(self, keys: list[str], coverage: Coverage | None) -> I64:
        if coverage is None:
            return np.full(len(keys), NOT_KNOWN, dtype=np.int64)
        names = list(map(coverage.get, keys))
        for hits in set(names).difference(self.code):
            self.code[hits] = len(self.table)
            self.table.append(hits)
        return np.fromiter(map(self.code.__getitem__, names), dtype=np.int64, count=len(names))


def pod_arrays(pods: Mapping[str, BoundPod], n_resources: int, coverage: Coverage | None = None) -> PodArrays:
    """`pods` as parallel arrays, in the mapping's order (built column by column with C-level
    iteration: `map`, `Counter`); `coverage` None: no pod's budgets are known."""
    codes = _CoverCodes()
    if not pods:
        empty = np.zeros(0, np.int64)
        return PodArrays(
            [],
            empty,
            np.zeros((0, n_resources), np.int64),
            empty,
            np.zeros(0, np.bool_),
            empty.copy(),
            empty.copy(),
            codes.table,
        )
    plist = list(pods.values())
    n = len(plist)
    terminating = list(map(_terminating, plist))
    gangs = list(map(_gang, plist))
    live = Counter(compress(gangs, map(not_, terminating)))
    keys = list(pods)
    return PodArrays(
        keys=keys,
        node=np.fromiter(map(_node, plist), dtype=np.int64, count=n),
        req=np.array(list(map(_req, plist)), dtype=np.int64).reshape(n, n_resources),
        priority=np.fromiter(map(_priority, plist), dtype=np.int64, count=n),
        terminating=np.array(terminating, dtype=np.bool_),
        gang_size=np.fromiter(map(live.__getitem__, gangs), dtype=np.int64, count=n),
        cover=codes.of(keys, coverage),
        cover_table=codes.table,
    )


FLOAT_EXACT = 2**53
"""Integers float64 holds exactly: below it, a sum in bincount's float weights is exact."""


def node_sums(nodes: I64, values: I64, n_nodes: int) -> I64:
    """[column, node]: per node of `n_nodes`, the sum of each column of `values` (a row per
    entry of `nodes`), exact. Summed by bincount (several times faster than `np.add.at`) when
    its float64 sums cannot round: the largest value times the most rows on one node below
    2^53; by `np.add.at` otherwise."""
    out = np.zeros((values.shape[1], n_nodes), dtype=np.int64)
    if len(nodes) == 0:
        return out
    largest = max(int(values.max()), -int(values.min()))  # no temporary |values|
    if largest * int(np.bincount(nodes).max()) < FLOAT_EXACT:
        for k in range(values.shape[1]):
            out[k] = np.bincount(nodes, weights=values[:, k], minlength=n_nodes)
        return out
    flat = (np.arange(values.shape[1])[:, None] * n_nodes + nodes).ravel()
    np.add.at(out.reshape(-1), flat, values.T.ravel())
    return out


Column = TypeVar("Column", I64, Bool)


def _patched(col: Column, pos: I64, now: Column) -> Column:
    """`col` with `now` at `pos`: a patched copy when that changes it, else `col` itself (the
    arrays handed out earlier keep theirs)."""
    if np.array_equal(col[pos], now):
        return col
    out = col.copy()
    out[pos] = now
    return out


class PodColumns:
    """Slots of bound pods, patched from a log of changes (see the module docstring)."""

    def __init__(
        self, pods: Mapping[str, BoundPod], n_resources: int, coverage: Coverage | None = None
    ) -> None:
        self.n_resources = n_resources
        self.coverage = coverage
        """Read for the pods written, as they are written; when the caller changes a pod's
        coverage otherwise, it has every slot's read again (`recode_cover`)."""
        self.cover_codes = _CoverCodes()
        self.cover = np.zeros(0, np.int64)
        self.slot: dict[str, int] = {}
        self.keys: list[str] = []
        self.alive = np.zeros(0, np.bool_)
        self.node = np.zeros(0, np.int64)
        self.req = np.zeros((0, n_resources), np.int64)
        self.priority = np.zeros(0, np.int64)
        self.terminating = np.zeros(0, np.bool_)
        self.gang = np.zeros(0, np.int64)
        self.gang_code: dict[str, int] = {}
        self.changes: list[tuple[str, BoundPod | None]] = []
        self.version = 0
        """Bumped whenever a slot is taken or freed (what `_Positions` reads goes stale)."""
        self.live: tuple[list[str], I64] | None = None
        """Keys and slots of the live pods, kept while no pod is added or removed."""
        self.dense: PodArrays | None = None
        """The arrays last handed out, while `live` holds: a pod rewritten in place patches a
        copy of the columns it changes (the caller's arrays stay as they were read), so a read
        after a few pods changed costs those pods, not a copy of every column."""
        self.dense_gang = np.zeros(0, np.int64)
        """`gang` over the live pods, for `dense.gang_size`."""
        self.held = np.zeros((0, n_resources), np.int64)
        """Per node: the live pods' requests summed (`PodArrays.held`), patched with every
        change replayed; copied before a patch once arrays handed out hold it."""
        self._held_out = False
        self._append(dict(pods))

    def recode_cover(self) -> None:
        """Every slot's coverage read again from `coverage` (the caller recounted it); the
        pods' other columns are unchanged."""
        self.cover_codes = _CoverCodes()
        self.cover = self.cover_codes.of(self.keys, self.coverage)
        self.dense = None

    def log(self, key: str, pod: BoundPod | None) -> bool:
        """Record that `key` is now `pod` (None: removed). False when so many changes wait that
        a fresh build is cheaper (the caller then drops the columns)."""
        self.changes.append((key, pod))
        return len(self.changes) <= SLACK + len(self.slot)

    def arrays(self) -> PodArrays:
        self._replay()
        if self.live is None:
            self.live = (list(compress(self.keys, self.alive.tolist())), np.flatnonzero(self.alive))
            self.dense = None
        if self.dense is not None:
            return self.dense
        keys, slots = self.live
        terminating = self.terminating[slots]
        self.dense_gang = self.gang[slots]
        self.dense = PodArrays(
            keys=keys,
            node=self.node[slots],
            req=self.req[slots],
            priority=self.priority[slots],
            terminating=terminating,
            gang_size=self._gang_sizes(terminating),
            cover=self.cover[slots],
            cover_table=self.cover_codes.table,
            positions=_Positions(self, keys),
            held=self._hand_out_held(),
        )
        return self.dense

    def _hand_out_held(self) -> I64:
        self._held_out = True
        return self.held

    def _hold(self, slots: I64 | slice, sign: int) -> None:
        """Add (`sign` 1) or take away (-1) the requests of the pods in `slots` from `held`,
        on a copy when arrays handed out hold it (they never change). A slice: the columns
        read in place, not copied (the first build's every pod)."""
        nodes = self.node[slots]
        if len(nodes) == 0:
            return
        rows = int(nodes.max()) + 1
        if rows > len(self.held) or self._held_out:
            grown = np.zeros((max(rows, len(self.held)), self.n_resources), np.int64)
            grown[: len(self.held)] = self.held
            self.held, self._held_out = grown, False
        if len(nodes) > len(self.held):  # many pods (the first build): summed per node at once
            self.held += sign * node_sums(nodes, self.req[slots], len(self.held)).T
            return
        n_res = self.n_resources
        flat = (nodes[:, None] * n_res + np.arange(n_res)).ravel()
        np.add.at(self.held.reshape(-1), flat, sign * self.req[slots].ravel())

    def _gang_sizes(self, terminating: Bool) -> I64:
        gang = self.dense_gang
        sizes = np.bincount(gang[~terminating], minlength=len(self.gang_code))
        return sizes[gang].astype(np.int64, copy=False)

    def _patch_dense(self, slots: I64) -> None:
        """The slots just rewritten in place, carried to `dense` (see there): each column they
        change copied and patched, the others shared."""
        old = self.dense
        if old is None or self.live is None:
            return
        pos = np.searchsorted(self.live[1], slots)
        terminating = _patched(old.terminating, pos, self.terminating[slots])
        gang = _patched(self.dense_gang, pos, self.gang[slots])
        recount = terminating is not old.terminating or gang is not self.dense_gang
        self.dense_gang = gang
        self.dense = PodArrays(
            keys=old.keys,
            node=_patched(old.node, pos, self.node[slots]),
            req=_patched(old.req, pos, self.req[slots]),
            priority=_patched(old.priority, pos, self.priority[slots]),
            terminating=terminating,
            gang_size=self._gang_sizes(terminating) if recount else old.gang_size,
            cover=_patched(old.cover, pos, self.cover[slots]),
            cover_table=old.cover_table,
            positions=old.positions,
            held=self._hand_out_held(),
        )

    def _replay(self) -> None:
        """Apply the logged changes with dict semantics (see the module docstring)."""
        if not self.changes:
            return
        removed, updated, added = self._net_changes()
        self.changes = []
        if removed or added:
            self.version += 1
        if updated:
            slots = [self.slot[k] for k in updated]
            at = np.asarray(slots, dtype=np.int64)
            self._hold(at, -1)
            self._write(slots, list(updated.values()))
            self._hold(at, +1)
            self._patch_dense(at)
        if removed:
            gone = np.asarray([self.slot.pop(k) for k in removed], dtype=np.int64)
            self._hold(gone, -1)
            self.alive[gone] = False
            self.live = None
        if added:
            self._append(added)
        if len(self.keys) > 2 * len(self.slot) + SLACK:
            self._compact()

    def _net_changes(self) -> tuple[set[str], dict[str, BoundPod], dict[str, BoundPod]]:
        """The log folded into the slots to free, the slots to rewrite in place and the pods to
        append, as the same operations on a dict would leave it."""
        removed: set[str] = set()
        updated: dict[str, BoundPod] = {}
        added: dict[str, BoundPod] = {}
        for key, pod in self.changes:
            in_place = key in self.slot and key not in removed
            if pod is None:
                if key in added:
                    del added[key]
                elif in_place:
                    removed.add(key)
                    updated.pop(key, None)
            elif key in added:
                added[key] = pod  # an existing dict key keeps its place
            elif in_place:
                updated[key] = pod
            else:
                added[key] = pod  # new, or back after a removal: at the end
        return removed, updated, added

    def _codes(self, pods: list[BoundPod]) -> I64:
        codes = self.gang_code
        return np.fromiter(
            (codes.setdefault(g, len(codes)) for g in map(_gang, pods)), dtype=np.int64, count=len(pods)
        )

    def _write(self, slots: list[int], pods: list[BoundPod]) -> None:
        idx = np.asarray(slots, dtype=np.int64)
        self.node[idx] = list(map(_node, pods))
        self.req[idx] = np.array(list(map(_req, pods)), dtype=np.int64).reshape(len(pods), self.n_resources)
        self.priority[idx] = list(map(_priority, pods))
        self.terminating[idx] = list(map(_terminating, pods))
        self.gang[idx] = self._codes(pods)
        self.cover[idx] = self.cover_codes.of([self.keys[i] for i in slots], self.coverage)

    def _append(self, pods: dict[str, BoundPod]) -> None:
        if not pods:
            return
        self.live = None
        start = len(self.keys)
        self.slot.update(zip(pods, range(start, start + len(pods)), strict=True))
        self.keys.extend(pods)
        plist = list(pods.values())
        n = len(plist)
        self.alive = np.concatenate([self.alive, np.ones(n, np.bool_)])
        self.node = np.concatenate([self.node, np.fromiter(map(_node, plist), np.int64, n)])
        new_req = np.array(list(map(_req, plist)), dtype=np.int64).reshape(n, self.n_resources)
        self.req = np.concatenate([self.req, new_req])
        self.priority = np.concatenate([self.priority, np.fromiter(map(_priority, plist), np.int64, n)])
        self.terminating = np.concatenate(
            [self.terminating, np.fromiter(map(_terminating, plist), np.bool_, n)]
        )
        self.gang = np.concatenate([self.gang, self._codes(plist)])
        self.cover = np.concatenate([self.cover, self.cover_codes.of(list(pods), self.coverage)])
        self._hold(slice(start, start + n), +1)

    def _compact(self) -> None:
        """Drop the holes (order kept); gang codes start afresh so they do not grow forever."""
        alive = self.alive
        self.live = None
        self.keys = list(compress(self.keys, alive.tolist()))
        self.slot = {k: i for i, k in enumerate(self.keys)}
        self.node, self.req = self.node[alive], self.req[alive]
        self.priority, self.terminating = self.priority[alive], self.terminating[alive]
        self.cover = self.cover[alive]
        live_codes, self.gang = np.unique(self.gang[alive], return_inverse=True)
        by_code = {c: g for g, c in self.gang_code.items()}
        self.gang_code = {by_code[int(c)]: i for i, c in enumerate(live_codes)}
        self.alive = np.ones(len(self.keys), np.bool_)
