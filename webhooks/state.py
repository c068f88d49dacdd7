"""Where the admission server gets its ClusterState: a pluggable source.

The controller feeds a source from its watches (HyperNodes, the ClusterNetworkTopology,
gang pods); tests fill one directly. A source that has not synced yet answers
`ClusterState.unknown()`, so the rules skip cluster checks rather than warn about a cluster
that only looks empty.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from webhooks.rules.cluster_state import ClusterState, StateFacts


class ClusterStateSource(Protocol):
    """Anything that can hand the server a current snapshot, cheaply and without I/O."""

    def snapshot(self) -> ClusterState: ...

    @property
    def synced(self) -> bool: ...


class InMemoryStateSource:
    """Facts kept per object, a snapshot rebuilt lazily after a change of facts (a request
    never pays for more than one rebuild, however many events arrived in between; events that
    change no fact, like most pod status updates, cost no rebuild)."""

    def __init__(self, objects: Iterable[Any] = (), *, synced: bool = False) -> None:
        self._facts = StateFacts()
        self._snapshot: ClusterState | None = None
        self._built_version = -1
        self._synced = synced
        for obj in objects:
            self._facts.add(obj)

    @property
    def synced(self) -> bool:
        return self._synced

    def mark_synced(self) -> None:
        """The initial list is complete: from now on the snapshot is a known view."""
        self._synced = True
        self._snapshot = None

    def upsert(self, obj: Any) -> str | None:
        """Record an added or changed object; returns why it was left out, or None."""
        return self._facts.add(obj)

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        self._facts.delete(kind, name, namespace)

    def replace(self, objects: Iterable[Any]) -> list[str]:
        """A fresh list (after a re-list): forget everything, record these, mark synced."""
        self._facts = StateFacts()
        problems = [p for p in (self._facts.add(o) for o in objects) if p]
        self.mark_synced()
        return problems

    def snapshot(self) -> ClusterState:
        if not self._synced:
            return ClusterState.unknown()
        if self._snapshot is None or self._built_version != self._facts.version:
            self._snapshot, self._built_version = self._facts.state(), self._facts.version
        return self._snapshot
