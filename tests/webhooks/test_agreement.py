"""Admission and translation agree on every object of the admission corpus.

Each corpus object is judged by its admission rule and translated the way `topobridge
translate` and the controller translate it (strict parse, then the dialect's translation).
Agreement: the object is admitted exactly when the translation raises no InvalidSpecError,
and a denial names the same fields as the translation's problems. A NotExpressibleError (valid
in its own dialect, not sayable in the target) or a MissingInputError (the translation needs
another object) is no disagreement on an admitted object; neither may hide a denial.
"""

from __future__ import annotations

from typing import Any

import pytest
from webhook_corpus import CASES, CLUSTER_OBJECTS, Case

from translations import gpu, kueue, schedplugins, volcano, volcano_job
from translations import koordinator as koord
from translations import koordinator_to_volcano as k2v
from translations import lws as lwsmod
from translations import lws_to_volcano as l2v
from translations import volcano_job_to_podgroup as vj2pg
from translations import volcano_to_koordinator as v2k
from translations.core import Pod
from translations.errors import InvalidSpecError, MissingInputError, NotExpressibleError, raise_all
from translations.topology import from_hypernodes
from webhooks.rules import ClusterState, registry

STATES: dict[str, ClusterState] = {
    "none": ClusterState.unknown(),
    "empty": ClusterState.build(),
    "cluster": ClusterState.from_objects(CLUSTER_OBJECTS)[0],
}
_HYPERNODES = [volcano.HyperNode.parse(o) for o in CLUSTER_OBJECTS if o["kind"] == "HyperNode"]
_NODES: list[Any] = []
CLUSTER_CNT = koord.ClusterNetworkTopology.parse(
    next(o for o in CLUSTER_OBJECTS if o["kind"] == "ClusterNetworkTopology")
)
CLUSTER_TREE = from_hypernodes(_HYPERNODES, _NODES)
CLUSTER_PODGROUPS = [koord.SigsPodGroup.parse(o) for o in CLUSTER_OBJECTS if o["kind"] == "PodGroup"]
TRANSLATED_KINDS = {
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
    (volcano.PODGROUP_GROUP, "PodGroup"),
    (koord.SIGS_GROUP, "PodGroup"),
    (schedplugins.GROUP, "PodGroup"),
    ("", "Pod"),
    (volcano_job.GROUP, "Job"),
}


def _group_kind(obj: dict[str, Any]) -> tuple[str, str]:
    api_version = str(obj.get("apiVersion") or "")
    return (api_version.rpartition("/")[0] if "/" in api_version else "", str(obj.get("kind") or ""))


def _translated(case: Case) -> list[InvalidSpecError]:
    """The problems translation raises for the case's object (empty: it translates)."""
    obj, in_cluster = case.obj, case.state == "cluster"
    group, kind = _group_kind(obj)
    try:
        # `topobridge translate` refuses an object with malformed Kueue TAS annotations first.
        raise_all([p for _, _, found in kueue.read_pod_sets(obj) for p in found])
        if kind == "LeaderWorkerSet":
            lws, _, problems = lwsmod.read_topology_request(obj)
            raise_all(problems)
            assert lws is not None
            l2v.translate(lws, revision="r1")
        elif group == volcano.PODGROUP_GROUP:
            pg = volcano.PodGroup.parse(obj, strict=True)
            v2k.translate(
                pg, cnt=CLUSTER_CNT if in_cluster else None, tree=CLUSTER_TREE if in_cluster else None
            )
        elif group == volcano_job.GROUP:
            vj2pg.translate(
                volcano_job.VolcanoJob.parse(obj, strict=True), tree=CLUSTER_TREE if in_cluster else None
            )
        elif kind == "PodGroup":
            model = koord.SigsPodGroup if group == koord.SIGS_GROUP else schedplugins.XPodGroup
            gang = k2v.gang_from_pod_group(model.parse(obj, strict=True))
            _translate_with_cluster([gang], in_cluster)
        else:
            # A pod is read by the GPU dialect's reader, and translated as a member of its
            # gang: the gang its annotation names, or the PodGroup its label names.
            raise_all(gpu.topology_request(obj)[1])
            pod = Pod.parse(obj, strict=True)
            gangs = k2v.gangs_from_pods([pod])
            label = pod.metadata.label(koord.SIGS_POD_GROUP_LABEL)
            if not gangs and label:
                pg = koord.SigsPodGroup.parse({"metadata": {"name": label, "namespace": pod.namespace}})
                gangs = [k2v.gang_from_pod_group(pg, [pod])]
            _translate_with_cluster(gangs, in_cluster)
    except (NotExpressibleError, MissingInputError):
        return []
    except InvalidSpecError as exc:
        return list(exc.all)
    return []


def _translate_with_cluster(gangs: list[k2v.KoordGang], in_cluster: bool) -> None:
    """Translate `gangs` as the controller would with the cluster's other gangs in view: a
    GangGroup is translated with its members."""
    layers = k2v.Layers.of(CLUSTER_CNT if in_cluster else None, CLUSTER_TREE if in_cluster else None)
    mine = {g.id for g in gangs}
    others = [k2v.gang_from_pod_group(pg) for pg in CLUSTER_PODGROUPS if in_cluster]
    for group in k2v.group_gangs([*gangs, *(g for g in others if g.id not in mine)]):
        if mine & {g.id for g in group}:
            k2v.translate_gangs(group, layers=layers)


def _field(path: str) -> str:
    """A translation's field path without the `Kind ns/name: ` that names the object."""
    return path.split(": ", 1)[1] if ": " in path else path


AGREEMENT_CASES = [c for c in CASES if isinstance(c.obj, dict) and _group_kind(c.obj) in TRANSLATED_KINDS]


@pytest.mark.parametrize("case", AGREEMENT_CASES, ids=[c.id for c in AGREEMENT_CASES])
def test_admission_and_translation_agree(case: Case) -> None:
    entry = registry.for_api_version(str(case.obj.get("apiVersion", "")), str(case.obj.get("kind", "")))
    assert entry is not None
    decision = entry.rule(case.obj, STATES[case.state])
    translated = _translated(case)
    assert decision.allowed == (not translated), (decision.errors, translated)
    assert sorted({e.field for e in decision.errors}) == sorted({_field(p.field_path) for p in translated})


def test_the_whole_corpus_is_compared() -> None:
    print(f"agreement: {len(AGREEMENT_CASES)} objects compared")
    assert len(AGREEMENT_CASES) >= 100
    assert {_group_kind(c.obj) for c in AGREEMENT_CASES} == TRANSLATED_KINDS
