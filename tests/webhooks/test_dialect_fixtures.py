"""The dialect fixtures (tests/dialect_fixtures/): every valid one is accepted by `topobridge
validate`, every invalid one refused, naming the field its `# refused:` header names. Those a
webhook judges are also admission corpus cases (`webhook_corpus.FIXTURE_CASES`), with their exact
verdict.

The fixtures are topobridge's own, modelled on these upstream files (facts only: field names,
shapes, sizes, the rules they exercise):
* volcano-sh/volcano PR #4675 (task-level network topology: the partitionPolicy example Job),
  issues #4867 (minAvailable against minPartitions x partitionSize) and #5401, PR #5402
  (partitions without minPartitions);
* volcano-sh/apis `pkg/apis/batch/v1alpha1/job.go` (the Job's fields, enums, minimums);
* volcano-sh/volcano `pkg/webhooks/admission/jobs/validate/admit_job.go` and
  `pkg/webhooks/admission/jobs/mutate/mutate_job.go` (the rules and defaults);
* kubernetes-sigs/kueue `site/static/examples/tas/sample-job-required.yaml`,
  `sample-job-multi-layer.yaml` and `sample-queues.yaml` (the TAS sample Jobs and Topology);
* kubernetes-sigs/kueue `pkg/controller/jobframework/tas_validation.go` (the annotation rules);
* kubernetes-sigs/lws `docs/examples/sample/gang-scheduling/lws-sample-volcano.yaml` (the LWS
  Volcano sample, given the seed plan's spec.networkTopology).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from webhook_corpus import FIXTURE_CASES, FIXTURES, fixture_header

from topobridge import cmd_validate
from topobridge.inputs import describe

PATHS = sorted(FIXTURES.glob("*/*.yaml"))


def test_there_are_fixtures_of_every_dialect() -> None:
    kinds = {(p.parent.name, yaml.safe_load(p.read_text())["kind"]) for p in PATHS}
    for verdict in ("valid", "invalid"):
        assert {k for v, k in kinds if v == verdict} >= {"Job", "LeaderWorkerSet"}
    assert len(FIXTURE_CASES) >= 20


@pytest.mark.parametrize("path", PATHS, ids=[f"{p.parent.name}/{p.stem}" for p in PATHS])
def test_fixture_verdict(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = cmd_validate.run([str(path)], cluster_state=None, out=out, err=err)
    errors = [line for line in err.getvalue().splitlines() if line.startswith("error: ")]
    if path.parent.name == "valid":
        assert (code, errors) == (cmd_validate.EXIT_VALID, [])
        return
    (field,) = fixture_header(text, "refused")
    assert code == cmd_validate.EXIT_INVALID
    assert errors[0].startswith(f"error: {describe(yaml.safe_load(text))}: {field}: ")
