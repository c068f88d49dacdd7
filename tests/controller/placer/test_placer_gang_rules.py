"""Gang-level rules of the fallback scheduler: the seed's per-member waiting messages,
GangGroups whose members disagree on their topology spec, elastic gangs (Volcano's
minMember rule), Volcano's domain choice, and gang timeouts."""

from __future__ import annotations

import json

from placer_objects import (
    SEED_LAYOUT,
    attempt,
    cnt,
    demo_objects,
    hypernode,
    koord_gang,
    members,
    node,
    pod,
    run,
    spine_block_nodes,
    volcano_gang,
)

from controller.placer.backoff import GANG_TIMEOUT
from controller.placer.engine import pod_messages
from controller.placer.framework import Code
from controller.placer.scenario import load_scenario, prepare
from controller.placer.timeout import expired, expiry
from translations.gangs import KOORDINATOR_DEFAULT_WAITING_SECONDS, Gang

SEED = SEED_LAYOUT
REASON = (
    "no candidate topology nodes can accommodate job, desiredOfferSlot: 4, "
    "topology topologyNode SpineLayer/spine-0: 3;topology topologyNode SpineLayer/spine-1: 3;"
    "topology topologyNode SpineLayer/spine-2: 3"
)


def test_seed_waiting_messages_pod_0_and_the_other_members() -> None:
    """Seed example 2 while its victim terminates: pod-0 carries the fit error, the other three
    the GangGroup rejection quoting it, character for character."""
    objs = demo_objects("example-2")
    sc = load_scenario(objs)
    gang = next(g for g in prepare(sc).gangs(sc) if g.name == "default/high-priority-training")
    verdict = attempt(objs, "default/high-priority-training")
    assert verdict.code is Code.WAITING_FOR_VICTIMS
    messages = pod_messages(gang, verdict)
    assert messages["default/hp-training-pod-0"] == (
        f"0/12 nodes are available: {REASON}. preemption: not eligible due to terminating pod on the nominated node.."
    )
    other = (
        'GangGroup "default/high-priority-training" gets rejected due to member Pod '
        f'"default/hp-training-pod-0" is unschedulable with reason "{REASON}", alreadyWaitForBound: 0. '
        "preemption: preemption already attempted by default/hp-training-pod-0 with message "
        "not eligible due to terminating pod on the nominated node.."
    )
    assert [messages[f"default/hp-training-pod-{i}"] for i in (1, 2, 3)] == [other] * 3
    assert (
        pod_messages(gang, verdict, waiting_for_bound=2)["default/hp-training-pod-1"].count(
            "alreadyWaitForBound: 2."
        )
        == 1
    )


def test_filter_failures_quote_the_reason_without_a_preemption_clause() -> None:
    objs = [*spine_block_nodes(SEED), cnt(), koord_gang("job", 2)]
    objs += members("job", 2, node_selector={"pool": "none"})
    sc = load_scenario(objs)
    gang = next(g for g in prepare(sc).gangs(sc) if g.name == "default/job")
    verdict = attempt(objs, "default/job")
    messages = pod_messages(gang, verdict)
    assert (
        messages["default/job-0"]
        == "0/12 nodes are available: 12 node(s) didn't match Pod's node affinity/selector."
    )
    assert messages["default/job-1"] == (
        'GangGroup "default/job" gets rejected due to member Pod "default/job-0" is unschedulable with reason '
        "\"12 node(s) didn't match Pod's node affinity/selector\", alreadyWaitForBound: 0"
    )


def gang_group(
    name: str, n: int, spec: list[tuple[str, str]] | None, group: list[str]
) -> list[dict[str, object]]:
    pg = koord_gang(name, n, gather=spec, groups=group)
    return [pg, *members(name, n, cpu="1", memory="1Gi")]


def test_gang_group_with_different_specs_is_refused_naming_both() -> None:
    group = ["default/master", "default/worker"]
    objs = [*spine_block_nodes(SEED), cnt()]
    objs += gang_group("master", 1, [("SpineLayer", "MustGather")], group)
    objs += gang_group("worker", 2, [("BlockLayer", "MustGather")], group)
    result = run(objs)
    assert result.bound == {}
    message = result.unschedulable["koordinator:default/master"]
    spine = json.dumps(
        {"gatherStrategy": [{"layer": "SpineLayer", "strategy": "MustGather"}]}, separators=(",", ":")
    )
    block = json.dumps(
        {"gatherStrategy": [{"layer": "BlockLayer", "strategy": "MustGather"}]}, separators=(",", ":")
    )
    assert message == (
        f"GangGroup default/master, default/worker: member default/master has network-topology-spec {spine} "
        f"but default/worker has {block}; every member of a GangGroup must carry the same spec"
    )


def test_gang_group_with_equal_specs_is_placed_together() -> None:
    group = ["default/master", "default/worker"]
    objs = [*spine_block_nodes(SEED), cnt()]
    objs += gang_group("master", 1, [("BlockLayer", "MustGather")], group)
    objs += gang_group("worker", 2, [("BlockLayer", "MustGather")], group)
    result = run(objs)
    assert len(result.bound) == 3 and result.unschedulable == {}


def volcano_pod(name: str, group: str, **kw: object) -> dict[str, object]:
    return pod(name, annotations={"scheduling.k8s.io/group-name": group}, scheduler="volcano", **kw)  # type: ignore[arg-type]


def test_elastic_gang_starts_without_a_member_no_node_can_take() -> None:
    """Volcano's rule: minMember 1, two pods, one whose selector matches no node: the other
    binds, the stray stays pending with its own reason."""
    objs = [*spine_block_nodes(SEED), cnt(), volcano_gang("job", 1)]
    objs += [volcano_pod("job-0", "job"), volcano_pod("job-1", "job", node_selector={"pool": "none"})]
    sc = load_scenario(objs)
    gang = next(g for g in prepare(sc).gangs(sc) if g.key == "volcano:default/job")
    verdict = attempt(objs, "default/job")
    assert verdict.code is Code.SUCCESS and verdict.placement is not None
    assert [k for k, _ in verdict.placement.pods] == ["default/job-0"]
    own = "0/12 nodes are available: 12 node(s) didn't match Pod's node affinity/selector."
    assert pod_messages(gang, verdict) == {"default/job-1": own}
    result = run(objs)
    assert set(result.bound) == {"default/job-0"}
    assert result.unschedulable == {"volcano:default/job": own}


def test_elastic_gang_below_min_member_binds_nothing() -> None:
    objs = [*spine_block_nodes(SEED), cnt(), volcano_gang("job", 2)]
    objs += [volcano_pod("job-0", "job"), volcano_pod("job-1", "job", node_selector={"pool": "none"})]
    result = run(objs)
    assert result.bound == {}
    assert result.unschedulable["volcano:default/job"] == (
        "0/12 nodes are available: 12 node(s) didn't match Pod's node affinity/selector."
    )


def test_elastic_gang_places_every_further_member_that_fits() -> None:
    """minMember 2 of 5 full-node pods under a hard block constraint: the biggest block has three
    nodes, so three start there and two wait."""
    objs = [*spine_block_nodes(SEED), cnt(), volcano_gang("job", 2, mode="hard", tier=1)]
    objs += [volcano_pod(f"job-{i}", "job") for i in range(5)]
    verdict = attempt(objs, "default/job")
    assert verdict.code is Code.SUCCESS and verdict.placement is not None
    assert len(verdict.placement.pods) == 3
    assert verdict.placement.tier == 1


def test_volcano_chooses_a_hypernode_before_nodes_koordinator_keeps_its_node_layer() -> None:
    """Two small pods fit on one node. A Volcano PodGroup hard at tier 1 settles on a block (the
    lowest HyperNode tier), then packs inside it; a Koordinator gang settles on the node."""
    objs = [*spine_block_nodes(SEED), cnt(), volcano_gang("job", 2, mode="hard", tier=1)]
    objs += [volcano_pod(f"job-{i}", "job", cpu="1", memory="1Gi") for i in range(2)]
    verdict = attempt(objs, "default/job")
    assert verdict.placement is not None
    assert verdict.placement.chosen_tier == 1
    assert len({n for _, n in verdict.placement.pods}) == 1  # node binpack inside the block
    koord = [*spine_block_nodes(SEED), cnt(), koord_gang("job", 2, gather=[("BlockLayer", "MustGather")])]
    koord += members("job", 2, cpu="1", memory="1Gi")
    kv = attempt(koord, "default/job")
    assert kv.placement is not None and kv.placement.chosen_tier == 0


def gang_of(objs: list[dict[str, object]], key: str) -> Gang:
    sc = load_scenario(objs)
    return next(g for g in prepare(sc).gangs(sc) if key in (g.key, g.name))


def test_gang_timeouts_come_from_the_podgroup_the_annotation_or_koordinators_default() -> None:
    base = [*spine_block_nodes(SEED), cnt()]
    timed = koord_gang("a", 1)
    timed["spec"]["scheduleTimeoutSeconds"] = 30  # type: ignore[index]
    annotated = koord_gang("b", 1)
    annotated["metadata"]["annotations"] = {"gang.scheduling.koordinator.sh/waiting-time": "90s"}  # type: ignore[index]
    plain = koord_gang("c", 1)
    objs = [*base, timed, annotated, plain, *members("a", 1), *members("b", 1), *members("c", 1)]
    objs += [volcano_gang("v", 1), volcano_pod("v-0", "v")]
    assert gang_of(objs, "default/a").schedule_timeout == 30
    assert gang_of(objs, "default/b").schedule_timeout == 90
    assert gang_of(objs, "default/c").schedule_timeout == KOORDINATOR_DEFAULT_WAITING_SECONDS == 300
    assert gang_of(objs, "default/v").schedule_timeout is None


def test_a_gang_expires_after_its_timeout_unless_it_started() -> None:
    objs = [
        *spine_block_nodes(SEED),
        cnt(),
        koord_gang("c", 2),
        *members("c", 2, node_selector={"pool": "x"}),
    ]
    gang = gang_of(objs, "default/c")
    assert not expired(gang, waiting_since=100.0, now=399.0)
    assert expired(gang, waiting_since=100.0, now=400.0)
    assert not expired(gang, waiting_since=None, now=10_000.0)
    fired = expiry(gang, waiting_since=100.0, now=400.0, failures=3)
    assert fired is not None and fired.retry_after == 4.0
    assert fired.message == (
        "gang default/c waited 300s without starting (timeout 300s): its reservations and "
        "nominations are released; it is tried again in 4s"
    )
    assert [GANG_TIMEOUT.delay(n) for n in (1, 2, 5, 9)] == [1.0, 2.0, 10.0, 10.0]
    started = gang_of(
        [*objs[:-1], pod("c-1", node_name="node-0", labels={"pod-group.scheduling.sigs.k8s.io": "c"})],
        "default/c",
    )
    assert started.bound and not expired(started, waiting_since=0.0, now=10_000.0)


def test_a_member_on_a_deleted_node_holds_a_hard_gang_back() -> None:
    """A member still bound to a node that is gone has no known domain: placing its replacement
    anywhere could break the hard tier, so the gang waits for that pod to be deleted."""
    objs = [*spine_block_nodes(SEED), cnt(), volcano_gang("job", 2, mode="hard", tier=1)]
    objs += [volcano_pod("job-0", "job", node_name="node-gone"), volcano_pod("job-1", "job")]
    verdict = attempt(objs, "default/job")
    assert verdict.code is Code.UNRESOLVABLE and verdict.placement is None
    assert verdict.message == (
        "member default/job-0 is bound to node node-gone, which is gone: the gang's hard "
        "topology constraint waits until that pod is deleted"
    )
    assert run(objs).bound == {}
    # Without a hard constraint nothing is at stake: the replacement is placed.
    soft = [*spine_block_nodes(SEED), cnt(), volcano_gang("job", 2, mode="soft", tier=1)]
    soft += [volcano_pod("job-0", "job", node_name="node-gone"), volcano_pod("job-1", "job")]
    assert set(run(soft).bound) == {"default/job-1"}


def _racks_and_recorded(allocated: str | None) -> list[dict[str, object]]:
    """Racks r0 (n0, n1) and r1 (n2, n3) under spine s; a hard tier-1 Volcano gang whose member
    job-0 is bound to a node that is gone, its PodGroup recording `allocated` as the HyperNode
    Volcano placed it in."""
    objs: list[dict[str, object]] = [node(f"n{i}") for i in range(4)]
    objs += [
        hypernode("r0", 1, [("Node", "n0"), ("Node", "n1")]),
        hypernode("r1", 1, [("Node", "n2"), ("Node", "n3")]),
        hypernode("s", 2, [("HyperNode", "r0"), ("HyperNode", "r1")]),
    ]
    group = volcano_gang("job", 2, mode="hard", tier=1)
    if allocated is not None:
        group["metadata"]["annotations"] = {"volcano.sh/job-allocated-hypernode": allocated}  # type: ignore[index]
    objs += [group, volcano_pod("job-0", "job", node_name="node-gone"), volcano_pod("job-1", "job")]
    return objs


def test_a_recorded_hypernode_stands_for_members_on_deleted_nodes() -> None:
    """Volcano reads the PodGroup's job-allocated-hypernode, not the running members' nodes:
    the replacement goes inside that HyperNode's tier-1 domain (r1, though r0 comes first),
    where the hard gang waited before. A recorded HyperNode the tree lacks is dropped, as
    Volcano drops it, and the gang waits again."""
    assert run(_racks_and_recorded("r1")).bound.get("default/job-1") in {"n2", "n3"}
    assert attempt(_racks_and_recorded(None), "default/job").code is Code.UNRESOLVABLE
    assert attempt(_racks_and_recorded("gone"), "default/job").code is Code.UNRESOLVABLE
