"""How long a takeover may take: the bound both failover tests assert, from the lease's timings."""

from __future__ import annotations

from controller.leaderelection import JITTER_FACTOR, LeaderElectionConfig

TAKEOVER_SLACK = 3.0
"""Seconds beyond what the protocol allows: process scheduling and request latency on a
loaded two-core machine, and the tests' own 0.2-0.5 s polling."""


def takeover_bound(config: LeaderElectionConfig) -> float:
    """The longest a standby may take to lead after the leader dies without releasing the
    lease: the standby last saw the record change at most one jittered retry period after the
    leader's last renewal, waits out the lease duration from then, and tries again at its next
    jittered retry: lease duration + 2 x 1.2 x retry period, plus `TAKEOVER_SLACK`
    (15 + 4.8 + 3 = 22.8 s with the defaults)."""
    return config.lease_duration + 2 * JITTER_FACTOR * config.retry_period + TAKEOVER_SLACK
