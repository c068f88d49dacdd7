"""The live fuzzer's finds, fixed: hostile objects stored through a real API server while one
`topobridge run` reads them, and `tree`, `explain` and `simulate --from-cluster` beside it.

`hack/livefuzz.py` explores on fresh seeds outside the gate; its rounds run here on a fixed seed
and on the inputs it found, with its own checks: every object is created past topobridge's
webhooks (registered as `dev-cluster` registers them) and a denial names the field; no process
exits or logs a traceback; every pending pod topobridge serves carries a PodScheduled reason
free of Python's text (one whose annotation is malformed names it); the CLI exits 0, and
`explain` names every waiting gang it is asked about (the hostile ones too) with a verdict; an
ordinary gang still binds; and the live ui reads the cluster, answers its view, explanations and
what-ifs without Python's text (a refused what-if names the field), and stops on SIGTERM while
reading, idle and busy.

* The found round (seed 9, round 2): an Indexed Job's pods whose completion index is `²`, ` 3`
  or 4,301 digits, whose `gpu.topology/max-nodes` is Devanagari or fullwidth digits; Kueue pods
  with a slice size of 4,301 digits and a constraint size of `1e400`; a pod whose fieldsV1 nests
  1,025 levels. Stored, deleted and stored again under the same names: the second time the
  Job's pods got no reason at all (the scheduler remembered the gang's verdict by its text).
  Pasted into the ui's what-if, the pod nested 1,025 levels made the reader raise
  RecursionError (the answer: "an unexpected RecursionError inside topobridge").
* One drawn round of every hostile kind (`tests/strategies/objects.py`) beside them.

The control plane is this module's own, without kube-controller-manager: its garbage collector
would delete the pods whose owner Job is not stored, and its Job controller would start the
hostile Jobs' billions of pods."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from controller.kube import Kube
from topobridge.devcluster import LocalControlPlane

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SEED = 8
"""A drawn round with every kind: about 40 objects stored, 9 refused (3 by topobridge's webhooks:
a PodGroup's negative scheduleTimeoutSeconds, a Koordinator annotation, an LWS of size -2^31)."""


def _livefuzz() -> ModuleType:
    spec = importlib.util.spec_from_file_location("livefuzz", REPO / "hack" / "livefuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["livefuzz"] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


lf = _livefuzz()
KUEUE = "kueue.x-k8s.io/"
INDEX = "batch.kubernetes.io/job-completion-index"


def _indexed(name: str, index: str, max_nodes: str) -> object:
    labels = {"job-name": "indexed", "controller-uid": "uid-indexed"}
    ann = {INDEX: index, "gpu.topology/policy": "nvlink", "gpu.topology/max-nodes": max_nodes}
    owner = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "indexed",
        "uid": "uid-indexed",
        "controller": True,
    }
    return lf.LivePod(lf._pod(name, labels, ann, ownerReferences=[owner]))


def _kueue(name: str, annotations: dict[str, str], bad: str | None) -> object:
    labels = {KUEUE + "pod-group-name": "kq", KUEUE + "pod-group-pod-index": "0"}
    return lf.LivePod(lf._pod(name, labels, {KUEUE + "podset-required-topology": "rack", **annotations}), bad)


FOUND = [
    lf.LivePod(lf._pod("live-0", {}, {}), deep=1_025),
    _indexed("live-1", "\u00b2", "2"),
    _indexed("live-2", " 3", "\u0969\u0966\u0966"),
    _kueue(
        "live-3",
        {
            KUEUE + "podset-slice-required-topology-constraints": '[{"topology": "rack", "size": 1e400}]',
            KUEUE + "pod-group-total-count": "9" * 4301,
        },
        None,
    ),
    _indexed("live-4", "\u00b2", "\uff11\uff12"),
    _kueue(
        "live-5",
        {KUEUE + "podset-slice-required-topology": "rack", KUEUE + "podset-slice-size": "9" * 4301},
        KUEUE + "podset-slice-size",
    ),
]


@pytest.fixture(scope="module")
def plane() -> Iterator[LocalControlPlane]:
    with LocalControlPlane(with_controller_manager=False) as started:
        yield started


async def test_hostile_objects_stored_live_stop_nothing_and_say_why(
    plane: LocalControlPlane, tmp_path: Path
) -> None:
    drawn = lf.draw_rounds(SEED, 2)[1]
    found = lf.Round(hostile=[], live=FOUND, ordinary=drawn.ordinary)
    tally = lf.Tally()
    kube = await Kube.connect(kubeconfig=plane.kubeconfig)
    live = lf.Live(kube, plane.kubeconfig, tmp_path, tally)
    try:
        await live.start_run()
        await live.one_round("found", found)
        await live.one_round("found, stored again", found, commands=False)
        await live.one_round(f"seed {SEED} example 2", drawn)
        assert live.running(), "topobridge run exited"
    finally:
        await live.stop_run()
        await kube.close()
    assert tally.failures == []
    assert tally.crashes == 0
    assert tally.counts["rounds"] == 3 and tally.counts["stored"] >= 50, tally.counts
    assert tally.counts["denied"] >= 1, "the webhooks judged the drawn round's objects"
    assert {"tree", "explain", "simulate", "bind", "messages", "ui", "ui-stop"} <= set(tally.counts)
    assert tally.counts["explain"] > 2, "the waiting hostile gangs explained beside the ordinary ones"
    stops = {state: tally.counts[f"ui-stop-{state}"] for state in ("reading", "idle", "busy")}
    assert stops == {"reading": 2, "idle": 1, "busy": 1}, stops
    unreadable = live.run_log.read_text().count('"kube.object_unreadable"')
    assert unreadable >= 2, "the 1,025-level fieldsV1 read (and trimmed) both times it was stored"
