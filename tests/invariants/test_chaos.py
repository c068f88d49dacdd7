"""A short chaos run in CI (240 cycles, two to four minutes): random gangs in every dialect,
deletions and edits, API-server stops and restarts, leader kills and injected bind and eviction
faults, with the invariant watcher on. The seed is fixed (TOPOBRIDGE_CHAOS_SEED=<seed> runs
another; `tests/replay.py`), and the run is counted in cycles, disruptions included, so which
actions it takes does not depend on how fast the machine runs them; `hack/chaos.py` runs the
long version on fresh seeds."""

from __future__ import annotations

from typing import Any

import pytest
from chaos import ChaosOptions, ChaosRun
from replay import CHAOS, seed_or

pytestmark = pytest.mark.integration

SEED = seed_or(CHAOS, 20261127)
CYCLES = 240


async def test_a_short_chaos_run_breaks_no_invariant(control_plane: Any) -> None:
    # `control_plane` only marks this an integration test that needs the binaries: the run
    # kills and restarts its API server, so it brings a private control plane of its own.
    print(f"\nchaos seed={SEED} ({CHAOS}={SEED} repeats the choices)")
    options = ChaosOptions(
        seed=SEED,
        duration=900.0,  # a guard only, far above what CYCLES take (about 4 minutes loaded)
        max_cycles=CYCLES,
        max_gangs=8,
        disrupt_every_cycles=40,
        lease_duration=6.0,
        renew_deadline=4.0,
        retry_period=1.0,
        bind_deadline=5.0,
        max_outage=15.0,
    )
    report = await ChaosRun(options).run()
    print(report.summary())
    assert not report.violations, "\n".join(report.violations) + f"\n(logs in {report.work_dir})"
    # The run did what it says: work, faults and disruptions all happened.
    assert report.cycles == CYCLES, report.summary()
    assert report.gangs_placed >= 5, report.summary()
    assert sum(report.faults.values()) >= 5, report.summary()
    disruptions = ("apiserver_stop", "apiserver_restart", "kill_leader", "kill_standby")
    assert all(report.actions[k] >= 1 for k in disruptions), report.summary()
    # Every replica it killed or stopped was reaped: no zombie, no Popen still "running" at exit.
    assert not report.unreaped, report.unreaped
