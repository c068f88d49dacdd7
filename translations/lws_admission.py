"""Admission-time mutations for LeaderWorkerSet gangs (pure; served by `webhooks.mutating`).

* `podgroup_topology_patch`: a Volcano PodGroup being created for an LWS group gets the
  topology fields LWS's own provider leaves out (`networkTopology`, `subGroupPolicy`), so
  Volcano never sees the PodGroup without them: no race with the controller.
* `pod_group_name_patch`: an LWS pod without `scheduling.k8s.io/group-name` gets the name of
  its group's PodGroup (`<lws>-<group-index>-<revision>`), so it joins the gang.

Both take the raw object under admission and the parsed LeaderWorkerSet, reuse
`lws_to_volcano` for every value, and return RFC 6902 JSON patch operations (empty when
nothing is needed). A field the object already carries is never overwritten.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from translations import lws as lwsmod
from translations import lws_to_volcano, volcano
from translations._base import INT32_MAX, JsonDict
from translations.digits import bounded_decimal
from translations.report import TranslationReport

PatchOp = dict[str, Any]
TOPOLOGY_FIELDS = ("networkTopology", "subGroupPolicy")
_GROUP_SUFFIX = re.compile(r"^-(0|[1-9][0-9]*)-[a-z0-9]+\Z")


def _pointer(*parts: str) -> str:
    """A JSON pointer (RFC 6901): `~` and `/` inside a part are escaped."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def lws_name_of_podgroup(pg: JsonDict, lws_names: Iterable[str]) -> str | None:
    """The LWS a PodGroup belongs to: its `leaderworkerset.sigs.k8s.io/name` label, else the
    longest LWS name `n` such that the PodGroup is named `n-<group-index>-<revision>`."""
    meta = pg.get("metadata") or {}
    labelled = (meta.get("labels") or {}).get(lwsmod.NAME_LABEL)
    if labelled:
        return str(labelled)
    name = str(meta.get("name") or "")
    matches = [n for n in lws_names if name.startswith(n) and _GROUP_SUFFIX.match(name[len(n) :])]
    return max(matches, key=len) if matches else None


def topology_fields(lws: lwsmod.LeaderWorkerSet) -> JsonDict:
    """The PodGroup fields topobridge owns for `lws` (empty when it asks for no topology)."""
    spec = lws_to_volcano.gang_spec(lws, TranslationReport(f"LeaderWorkerSet {lws.key}", "Volcano"))
    return {k: spec[k] for k in TOPOLOGY_FIELDS if k in spec}


def podgroup_topology_patch(pg: JsonDict, lws: lwsmod.LeaderWorkerSet) -> list[PatchOp]:
    """Add the LWS's topology fields the PodGroup lacks. Raises InvalidSpecError when the
    LWS cannot be translated (the caller admits the PodGroup unchanged and reports)."""
    wanted = topology_fields(lws)
    if not wanted:
        return []
    spec = pg.get("spec")
    if not isinstance(spec, dict):
        return [{"op": "add", "path": "/spec", "value": wanted}]
    return [
        {"op": "add", "path": _pointer("spec", k), "value": v} for k, v in wanted.items() if k not in spec
    ]


def pod_group_name_patch(pod: JsonDict, lws: lwsmod.LeaderWorkerSet) -> list[PatchOp]:
    """Add `scheduling.k8s.io/group-name` to an LWS pod that lacks it (and carries the group
    index and revision labels LWS sets on every pod it creates)."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and volcano.GROUP_NAME_ANNOTATION in annotations:
        return []
    index, revision = labels.get(lwsmod.GROUP_INDEX_LABEL), labels.get(lwsmod.REVISION_LABEL)
    group_index = bounded_decimal(index, INT32_MAX) if isinstance(index, str) else None
    if labels.get(lwsmod.NAME_LABEL) != lws.name or not revision or group_index is None:
        return []
    group = lws_to_volcano.pod_group_name(lws.name, group_index, revision)
    if not isinstance(annotations, dict):
        return [
            {"op": "add", "path": "/metadata/annotations", "value": {volcano.GROUP_NAME_ANNOTATION: group}}
        ]
    return [
        {
            "op": "add",
            "path": _pointer("metadata", "annotations", volcano.GROUP_NAME_ANNOTATION),
            "value": group,
        }
    ]
