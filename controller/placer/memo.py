"""Results that depend only on one generation of the node set, kept beside its index.

`ClusterIndex.memo` is a `Memo`: typed slots (`MemoSlot`), each keyed by an argument (a pod
spec's filter, a label key, nothing for the tree's child table), computed on first use and
kept as long as the index. The index is static, so nothing here is ever stale; a slot whose
values grow with use (request rows) is dropped by its owner when it grows too large.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class MemoSlot(Generic[T]):
    """A typed slot of an index's `Memo`: results that depend only on the static index."""

    name: str


class Memo:
    """Results that depend only on a `ClusterIndex` (one generation of the node set), by slot
    and argument: filters by pod spec, label value codes, the tree's child table."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, Hashable], Any] = {}

    def get(self, slot: MemoSlot[T], arg: Hashable, make: Callable[[], T]) -> T:
        key = (slot.name, arg)
        try:
            value: T = self._data[key]
        except KeyError:
            value = self._data[key] = make()
        return value

    def drop(self, slot: MemoSlot[Any]) -> None:
        for key in [k for k in self._data if k[0] == slot.name]:
            del self._data[key]

    def count(self, slot: MemoSlot[Any]) -> int:
        return sum(1 for k in self._data if k[0] == slot.name)
