"""Changes a translation asks for on objects it does not own: Pods that must join a gang,
Nodes that must carry topology labels.

A patch is data: the controller sends it as a JSON merge patch (RFC 7386), the CLI applies
it to the objects it read. `schedulerName` is immutable on a created Pod, so a pod patch
that sets it takes effect only at admission (the mutating webhook) or on a recreated pod.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from translations._base import JsonDict
from translations.volcano import GROUP_NAME_ANNOTATION


@dataclass(frozen=True, slots=True)
class PodPatch:
    """Labels, annotations and scheduler a member pod needs to join the translated gang."""

    namespace: str
    name: str
    annotations: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    scheduler_name: str | None = None

    def merge_patch(self) -> JsonDict:
        meta: JsonDict = {}
        if self.annotations:
            meta["annotations"] = dict(self.annotations)
        if self.labels:
            meta["labels"] = dict(self.labels)
        out: JsonDict = {"metadata": meta} if meta else {}
        if self.scheduler_name is not None:
            out["spec"] = {"schedulerName": self.scheduler_name}
        return out

    def apply(self, pod: Mapping[str, Any]) -> JsonDict:
        """A copy of the raw pod with the patch applied."""
        return merge(pod, self.merge_patch())


@dataclass(frozen=True, slots=True)
class NodeLabelPatch:
    """Topology labels a node must carry (`set`) and stale ones it must lose (`remove`)."""

    node: str
    set: Mapping[str, str] = field(default_factory=dict)
    remove: tuple[str, ...] = ()

    def merge_patch(self) -> JsonDict:
        labels: dict[str, str | None] = {k: None for k in self.remove}
        labels.update(self.set)
        return {"metadata": {"labels": labels}}

    def apply(self, node: Mapping[str, Any]) -> JsonDict:
        return merge(node, self.merge_patch())


def job_pointed_at(raw_job: Mapping[str, Any], pod_group: str, scheduler_name: str) -> JsonDict:
    """A copy of a raw batch/v1 Job whose pod template joins the Volcano PodGroup `pod_group`
    (its group-name annotation) and asks for `scheduler_name`; nothing else changes."""
    out: JsonDict = copy.deepcopy(dict(raw_job))
    spec = out.setdefault("spec", {})
    template = spec.get("template") or {}
    meta = dict(template.get("metadata") or {})
    template = spec["template"] = {"metadata": meta, **{k: v for k, v in template.items() if k != "metadata"}}
    meta["annotations"] = {**(meta.get("annotations") or {}), GROUP_NAME_ANNOTATION: pod_group}
    template.setdefault("spec", {})["schedulerName"] = scheduler_name
    return out


def merge(target: Mapping[str, Any], patch: Mapping[str, Any]) -> JsonDict:
    """RFC 7386 JSON merge patch: None deletes, mappings merge, everything else replaces."""
    out: JsonDict = copy.deepcopy(dict(target))
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping):
            current = out.get(key)
            out[key] = merge(current if isinstance(current, Mapping) else {}, value)
        else:
            out[key] = copy.deepcopy(value)
    return out
