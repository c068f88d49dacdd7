"""Seeds of the randomised tests: fixed in the suite, chosen only to explore or to replay.

Every test the suite runs draws its examples from a fixed seed (Hypothesis `derandomize=True`
or an explicit seed), so a run is a function of the commit. One environment variable per family
names another seed instead; `hack/explore.py` sets them to fresh seeds for as long as it is
asked to, and prints for each failure the command that replays it, e.g.

    TOPOBRIDGE_ORACLE_SEED=2979530757 .venv/bin/python -m pytest \\
        tests/controller/placer/test_placer_cycle_oracle.py

Found failures then become fixed examples (`@example`, a table row) in the suite.
"""

from __future__ import annotations

import os

ORACLE = "TOPOBRIDGE_ORACLE_SEED"
"""The oracle tests' seeded runs: test_placer_oracle.py, test_placer_cycle_oracle.py,
test_placer_gpu_oracle.py, test_placer_affinity_oracle.py (tests/controller/placer/)."""
HOSTILE = "TOPOBRIDGE_HOSTILE_SEED"
"""tests/controller/placer/test_hostile_clusters.py: the hostile-cluster generator's seed."""
UNUSABLE = "TOPOBRIDGE_UNUSABLE_SEED"
"""tests/controller/placer/test_placer_unusable_nodes.py: the metamorphic draws' base seed."""
PROPERTY = "TOPOBRIDGE_PROPERTY_SEED"
"""Every other Hypothesis test (those that name no seed of their own): the suite's profile is
`derandomize` (tests/conftest.py); with this set, Hypothesis draws from the seed instead."""
CHAOS = "TOPOBRIDGE_CHAOS_SEED"
"""tests/invariants/test_chaos.py: the chaos run's sequence of choices."""


def chosen(env: str) -> int | None:
    """The seed `env` names, None when it is unset or empty (the suite's fixed seed then)."""
    value = os.environ.get(env, "").strip()
    if not value:
        return None
    try:
        return int(value, 0)
    except ValueError:
        raise ValueError(f"{env}={value!r}: a seed is a whole number, e.g. {env}=12345") from None


def seed_or(env: str, fixed: int) -> int:
    """The seed `env` names, else the suite's `fixed` one."""
    seed = chosen(env)
    return fixed if seed is None else seed
