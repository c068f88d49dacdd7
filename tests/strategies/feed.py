"""Generated objects into the scheduler's `ClusterState`, the way the controller's caches feed it.

Each dict is parsed into its model at the edge (the scheduler's table of kinds,
`translations.kinds.SCHEDULER_KINDS`, as `controller.runtime.cache` does); one that does not
parse is left out and its error returned, as the controller sets it aside. Keys are `namespace/name`, or `name` for cluster-scoped kinds.
"""

from __future__ import annotations

from typing import Any

from controller.placer.cluster import ClusterState, Kind
from translations.errors import InvalidSpecError
from translations.kinds import scheduler_kind


def key_of(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else str(meta["name"])


def feed(state: ClusterState, objects: list[dict[str, Any]]) -> dict[str, str]:
    """Put every object the scheduler reads into `state`; returns key -> why, for the objects
    that did not parse (LeaderWorkerSets and other kinds the scheduler does not read are skipped)."""
    refused: dict[str, str] = {}
    for obj in objects:
        read = scheduler_kind(str(obj.get("apiVersion", "")), str(obj.get("kind")))
        if read is None:
            continue
        try:
            state.put(Kind(read.api), key_of(obj), read.model.parse(obj))
        except InvalidSpecError as exc:
            refused[key_of(obj)] = str(exc)
    return refused


def placer_state(objects: list[dict[str, Any]]) -> tuple[ClusterState, dict[str, str]]:
    state = ClusterState()
    return state, feed(state, objects)
