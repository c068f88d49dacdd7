"""The short form conditions and Events carry (`controller.runtime.messages`): bounded at any
cluster size, the listing summarised, everything else kept."""

from __future__ import annotations

import pytest

from controller.runtime import messages

HEAD = "0/{n} nodes are available: no candidate topology nodes can accommodate job, desiredOfferSlot: 16, "
TAIL = ". preemption: no set of lower-priority pods whose eviction lets the whole gang fit.."


def listing(domains: int) -> str:
    return ";".join(
        f"topology topologyNode AcceleratorLayer/nvl-{i}: {(i * 7) % 13 if i % 5 else 0}"
        for i in range(domains)
    )


@pytest.mark.parametrize("domains", [20, 40, 1250, 20000])
def test_any_listing_becomes_a_bounded_summary(domains: int) -> None:
    long = HEAD.format(n=domains * 8) + listing(domains) + ", 3 node(s) had untolerated taint(s)" + TAIL
    short = messages.short_message(long)
    assert len(short) <= messages.LIMIT
    assert f"{domains} domains offer at most 12 of 16 slots (" in short
    assert short.startswith(HEAD.format(n=domains * 8))
    assert short.endswith(", 3 node(s) had untolerated taint(s)" + TAIL), "reasons and preemption stay"
    assert "topology topologyNode" not in short


def test_the_best_domains_are_named_most_slots_first_then_by_name() -> None:
    long = HEAD.format(n=40) + listing(40) + TAIL
    short = messages.short_message(long)
    # (i * 7) % 13 == 12 for i = 11, 24, 37: the three best, in natural name order.
    assert (
        "(AcceleratorLayer/nvl-11: 12, AcceleratorLayer/nvl-24: 12, AcceleratorLayer/nvl-37: 12, ...)"
        in short
    )


def test_a_short_listing_and_other_messages_are_left_as_they_are() -> None:
    three = HEAD.format(n=12) + listing(3) + TAIL
    assert messages.short_message(three) == three
    fit = "0/12 nodes are available: 12 Insufficient cpu."
    assert messages.short_message(fit) == fit


def test_a_message_too_long_anyway_is_cut_at_a_clause_and_says_so() -> None:
    long = "0/9 nodes are available: " + ", ".join(f"{i} node(s) had reason number {i}" for i in range(200))
    short = messages.short_message(long)
    assert len(short) <= messages.LIMIT
    assert short.endswith("... (whole: topobridge explain)")
    assert short.removesuffix(" ... (whole: topobridge explain)").endswith(tuple("0123456789"))


def test_the_brief_is_bracketed_and_bounded() -> None:
    out = messages.with_brief(HEAD.format(n=80) + listing(10) + TAIL, "best per tier: " + "x" * 1000)
    assert out.count("[") == 1 and out.endswith("]")
    assert len(out) <= messages.LIMIT + messages.BRIEF_LIMIT + 3
    assert messages.with_brief("0/2 nodes are available: 2 Insufficient cpu.", "") == (
        "0/2 nodes are available: 2 Insufficient cpu."
    )


def test_volcano_wording() -> None:
    assert messages.volcano_message(2, 3, "why") == "2/3 tasks in gang unschedulable: why"


def test_the_seeds_member_message_is_left_whole() -> None:
    """A member quotes its first member's reason (the seed's wording, ~600 characters with a
    long namespace): no listing to summarise, and within the limit."""
    ns = "t-test-seed-example-2-end-to-end-573eea"
    reason = (
        "no candidate topology nodes can accommodate job, desiredOfferSlot: 4, "
        "topology topologyNode SpineLayer/spine-0: 3;topology topologyNode SpineLayer/spine-1: 3;"
        "topology topologyNode SpineLayer/spine-2: 3"
    )
    member = (
        f'GangGroup "{ns}/high-priority-training" gets rejected due to member Pod '
        f'"{ns}/hp-training-pod-0" is unschedulable with reason "{reason}", alreadyWaitForBound: 0. '
        f"preemption: preemption already attempted by {ns}/hp-training-pod-0 with message not "
        "eligible due to terminating pod on the nominated node.."
    )
    assert len(member) > 480
    assert messages.short_message(member) == member
