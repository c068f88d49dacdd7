"""One exponential backoff (`controller.placer.backoff.Backoff`) for every retry, each caller
with the values it had: the informers' list/watch, the work queue's per-key limiter, the
binder's binds and roll-back deletes, the preemptor's victims, the webhook worker pool."""

from __future__ import annotations

import random

import pytest

from controller.informer import LIST_WATCH, Informer
from controller.placer.backoff import GANG_BIND, Backoff
from controller.runtime.binder import BIND_RETRY, ROLLBACK_RETRY, Binder
from controller.runtime.preemptor import VICTIM_RETRY
from controller.workqueue import ItemExponentialFailureRateLimiter


@pytest.mark.parametrize(
    ("backoff", "delays"),
    [
        pytest.param(LIST_WATCH, [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0], id="informer-list-watch"),
        pytest.param(BIND_RETRY, [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0], id="binder-bind"),
        pytest.param(ROLLBACK_RETRY, [0.1, 0.2, 0.4, 0.8, 1.6, 2.0], id="binder-rollback"),
        pytest.param(VICTIM_RETRY, [0.1, 0.2, 0.4, 0.8, 1.6, 2.0], id="preemptor-victim"),
        pytest.param(GANG_BIND, [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0], id="gang-bind"),
    ],
)
def test_each_caller_keeps_its_delays(backoff: Backoff, delays: list[float]) -> None:
    """Without a random source the delays are the bare doubling (the caller's old values)."""
    assert [backoff.delay(n) for n in range(1, len(delays) + 1)] == pytest.approx(delays)


@pytest.mark.parametrize(
    ("backoff", "jitter"),
    [
        pytest.param(LIST_WATCH, 0.5, id="informer-list-watch"),
        pytest.param(BIND_RETRY, 0.5, id="binder-bind"),
        pytest.param(VICTIM_RETRY, 0.0, id="preemptor-victim"),
    ],
)
def test_jitter_scales_each_delay_into_its_range(backoff: Backoff, jitter: float) -> None:
    rng = random.Random(7)
    for n in range(1, 12):
        bare = backoff.delay(n)
        got = [backoff.delay(n, rng) for _ in range(50)]
        assert all(bare * (1 - jitter) <= d <= bare for d in got)
        assert (len(set(got)) > 1) is (jitter > 0)


def test_the_callers_default_to_their_backoff() -> None:
    assert Informer.__init__.__kwdefaults__["backoff"] is LIST_WATCH
    assert Binder.__init__.__kwdefaults__["backoff"] is BIND_RETRY


def test_the_work_queue_limiter_counts_failures_per_key_into_one_backoff() -> None:
    lim: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    rule = Backoff(0.005, 1000.0)
    assert [lim.when("a") for _ in range(30)] == [rule.delay(n) for n in range(1, 31)]


def test_no_count_of_failures_overflows() -> None:
    assert Backoff(0.005, 1000.0).delay(10**9) == 1000.0
    with pytest.raises(ValueError, match="0 < initial <= maximum"):
        Backoff(2.0, 1.0)
