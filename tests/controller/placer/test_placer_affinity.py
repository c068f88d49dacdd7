"""Inter-pod rules in the placer: pod affinity and anti-affinity (required, preferred,
namespaces, the symmetric check), LeaderWorkerSet's exclusive placement, topology spread and
host ports. Each test is a worked example on the seed's 12-node spine/block cluster."""

from __future__ import annotations

from typing import Any

from placer_objects import (
    SEED_LAYOUT,
    attempt,
    cnt,
    koord_gang,
    pod,
    run,
    spine_block_nodes,
    volcano_gang,
)
from placer_objects import node as node_object

from controller.placer.framework import Code
from translations.lws import exclusive_affinity

SEED = SEED_LAYOUT
BLOCK_OF = {n: b for s in SEED.values() for b, ns in s.items() for n in ns}
HOST = "kubernetes.io/hostname"
BLOCK = "network.topology.nvidia.com/block"
GROUP_KEY = "leaderworkerset.sigs.k8s.io/group-key"

Obj = dict[str, Any]


def cluster() -> list[Obj]:
    return [*spine_block_nodes(SEED), cnt()]


def term(key: str, selector: Obj, **extra: Any) -> Obj:
    return {"labelSelector": selector, "topologyKey": key, **extra}


def anti(*terms: Obj) -> Obj:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def job_pods(n: int, **kw: Any) -> list[Obj]:
    """The GPU seed's training Job: pods labelled job-name, anti-affine on the hostname."""
    rule = anti(term(HOST, {"matchLabels": {"job-name": "distributed-training"}}))
    return [
        pod(
            f"distributed-training-{i}",
            cpu="2",
            memory="8Gi",
            labels={"job-name": "distributed-training"},
            affinity=rule,
            **kw,
        )
        for i in range(n)
    ]


def test_seed_job_with_hostname_anti_affinity_lands_on_two_nodes() -> None:
    """Two pods alone (no gang): the second sees the first and its anti-affinity."""
    bound = run([*cluster(), *job_pods(2)]).bound
    assert len(bound) == 2
    assert len(set(bound.values())) == 2


def test_anti_affinity_between_gang_members_counts_them_as_reserved() -> None:
    """One gang of three: without the rule all three would share node-0 (binpack); with it each
    member takes its own node, and the gang still gathers in one block."""
    objs = [*cluster(), koord_gang("job", 3, gather=[("BlockLayer", "MustGather")])]
    objs += [
        {
            **p,
            "metadata": {
                **p["metadata"],
                "labels": {**p["metadata"]["labels"], "pod-group.scheduling.sigs.k8s.io": "job"},
            },
        }
        for p in job_pods(3)
    ]
    result = run(objs)
    nodes = list(result.bound.values())
    assert len(nodes) == 3 and len(set(nodes)) == 3
    assert len({BLOCK_OF[n] for n in nodes}) == 1
    assert BLOCK_OF[nodes[0]] in ("block-0", "block-4")  # the only blocks with three nodes


def test_anti_affinity_too_strict_for_the_gang_is_refused_with_kubes_reason() -> None:
    """Four members, one per node, in a block of at most three nodes: nothing binds."""
    objs = [*cluster(), koord_gang("job", 4, gather=[("BlockLayer", "MustGather")])]
    for p in job_pods(4):
        p["metadata"]["labels"]["pod-group.scheduling.sigs.k8s.io"] = "job"
        objs.append(p)
    result = run(objs)
    assert result.bound == {}
    assert "koordinator:default/job" in result.unschedulable


def lws_group(name: str, group: str, n: int, key: str = BLOCK, cpu: str = "2") -> list[Obj]:
    """Pods of one LeaderWorkerSet group as LWS's webhook writes them for exclusive placement."""
    affinity = exclusive_affinity(group, key)
    out = []
    for i in range(n):
        labels = {
            "leaderworkerset.sigs.k8s.io/name": name,
            GROUP_KEY: group,
            "leaderworkerset.sigs.k8s.io/worker-index": str(i),
        }
        out.append(
            pod(
                f"{name}-{group}-{i}",
                cpu=cpu,
                memory="8Gi",
                labels=labels,
                affinity=affinity,
                annotations={"scheduling.k8s.io/group-name": f"{name}-{group}"},
                scheduler="volcano",
            )
        )
    return out


def test_two_lws_groups_with_exclusive_topology_take_two_blocks() -> None:
    """Small pods that would all fit on node-0: each group gathers in one block, and no block
    holds two groups."""
    objs = [*cluster(), volcano_gang("lws-g0", 3), volcano_gang("lws-g1", 3)]
    objs += lws_group("lws", "g0", 3) + lws_group("lws", "g1", 3)
    bound = run(objs).bound
    assert len(bound) == 6
    blocks = {g: {BLOCK_OF[bound[f"default/lws-{g}-{i}"]] for i in range(3)} for g in ("g0", "g1")}
    assert len(blocks["g0"]) == 1 and len(blocks["g1"]) == 1
    assert blocks["g0"] != blocks["g1"]


def test_a_third_exclusive_group_waits_when_every_block_holds_another() -> None:
    objs = [*cluster()]
    for g in range(6):
        objs += [volcano_gang(f"lws-g{g}", 2), *lws_group("lws", f"g{g}", 2)]
    result = run(objs)
    groups_per_block: dict[str, set[str]] = {}
    for key, node in result.bound.items():
        group = key.split("-")[1]
        groups_per_block.setdefault(BLOCK_OF[node], set()).add(group)
    assert all(len(g) == 1 for g in groups_per_block.values())
    assert len(groups_per_block) == 5
    assert len(result.unschedulable) == 1
    (message,) = result.unschedulable.values()
    # kube's InterPodAffinity checks the pod's own anti-affinity before the existing pods'
    # (interpodaffinity/filtering.go Filter: affinity, anti-affinity, existing anti-affinity).
    assert message == "0/12 nodes are available: 12 node(s) didn't match pod anti-affinity rules."


def test_existing_pods_anti_affinity_keeps_newcomers_away() -> None:
    """The symmetric rule: a bound pod refusing `app=web` on its node keeps a web pod off it."""
    guard = pod(
        "guard",
        node_name="node-0",
        cpu="1",
        memory="1Gi",
        labels={"app": "db"},
        affinity=anti(term(HOST, {"matchLabels": {"app": "web"}})),
    )
    web = pod("web", cpu="1", memory="1Gi", labels={"app": "web"}, node_selector={BLOCK: "block-0"})
    bound = run([*cluster(), guard, web]).bound
    assert bound["default/web"] in ("node-1", "node-2")


def test_required_affinity_follows_an_existing_pod_and_refuses_without_one() -> None:
    cache = pod("cache", node_name="node-7", cpu="1", memory="1Gi", labels={"app": "cache"})
    rule = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [term(BLOCK, {"matchLabels": {"app": "cache"}})]
        }
    }
    near = pod("near", cpu="1", memory="1Gi", affinity=rule)
    bound = run([*cluster(), cache, near]).bound
    assert BLOCK_OF[bound["default/near"]] == "block-3"
    verdict = attempt([*cluster(), near], "default/near")
    assert verdict.code is Code.UNRESOLVABLE
    assert verdict.message == "0/12 nodes are available: 12 node(s) didn't match pod affinity rules."


def test_terms_see_only_their_namespaces() -> None:
    """A term with no namespaces reads its own; `namespaces` and an empty namespaceSelector widen it."""
    other = pod("guard", namespace="other", node_name="node-0", cpu="1", memory="1Gi", labels={"app": "db"})
    local = anti(term(HOST, {"matchLabels": {"app": "db"}}))
    listed = anti(term(HOST, {"matchLabels": {"app": "db"}}, namespaces=["other"]))
    every = anti(term(HOST, {"matchLabels": {"app": "db"}}, namespaceSelector={}))
    sel = {BLOCK: "block-0"}
    for name, rule, avoids in (("a", local, False), ("b", listed, True), ("c", every, True)):
        p = pod(name, cpu="1", memory="1Gi", affinity=rule, node_selector=sel)
        node = run([*cluster(), other, p]).bound[f"default/{name}"]
        assert (node != "node-0") is avoids, name


def test_namespace_selector_reads_the_namespaces_labels() -> None:
    """A selector other than `{}` selects by the Namespace objects' labels: `team: a` picks the
    guard's namespace, `team: b` does not, and a namespace with no object has no labels."""
    guard = pod("guard", namespace="other", node_name="node-0", cpu="1", memory="1Gi", labels={"app": "db"})
    labelled = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "other", "labels": {"team": "a"}},
    }
    sel = {BLOCK: "block-0"}
    for name, team, known, avoids in (
        ("a", "a", True, True),
        ("b", "b", True, False),
        ("c", "a", False, False),
    ):
        rule = anti(
            term(HOST, {"matchLabels": {"app": "db"}}, namespaceSelector={"matchLabels": {"team": team}})
        )
        p = pod(name, cpu="1", memory="1Gi", affinity=rule, node_selector=sel)
        objs = [*cluster(), guard, p, *([labelled] if known else [])]
        node = run(objs).bound[f"default/{name}"]
        assert (node != "node-0") is avoids, name


def test_preferred_affinity_ranks_places_before_binpack() -> None:
    """Binpack alone picks node-0 (the fullest); the preference for the node holding
    `app=cache` wins."""
    busy = pod("busy", node_name="node-0", cpu="4", memory="16Gi")
    cache = pod("cache", node_name="node-9", cpu="1", memory="1Gi", labels={"app": "cache"})
    rule = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": term(HOST, {"matchLabels": {"app": "cache"}})}
            ]
        }
    }
    plain = pod("plain", cpu="1", memory="1Gi")
    near = pod("near", cpu="1", memory="1Gi", affinity=rule)
    bound = run([*cluster(), busy, cache, plain, near]).bound
    assert bound["default/near"] == "node-9"
    assert bound["default/plain"] == "node-0"


def spread(key: str, skew: int, hard: bool = True) -> Obj:
    return {
        "maxSkew": skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }


def test_do_not_schedule_spread_caps_members_per_domain() -> None:
    """Five web pods, block spread with skew 1: one per block (blocks start empty)."""
    objs = [*cluster(), koord_gang("web", 5)]
    for i in range(5):
        p = pod(
            f"web-{i}",
            cpu="1",
            memory="1Gi",
            labels={"app": "web", "pod-group.scheduling.sigs.k8s.io": "web"},
            index=i,
        )
        p["spec"]["topologySpreadConstraints"] = [spread(BLOCK, 1)]
        objs.append(p)
    bound = run(objs).bound
    assert sorted(BLOCK_OF[n] for n in bound.values()) == [f"block-{i}" for i in range(5)]


def test_spread_counts_existing_pods() -> None:
    """Blocks 0-3 already hold a web pod: the newcomer may only go to block-4."""
    objs = [*cluster()]
    for i, n in enumerate(["node-0", "node-3", "node-5", "node-7"]):
        objs.append(pod(f"old-{i}", node_name=n, cpu="1", memory="1Gi", labels={"app": "web"}))
    p = pod("new", cpu="1", memory="1Gi", labels={"app": "web"})
    p["spec"]["topologySpreadConstraints"] = [spread(BLOCK, 1)]
    assert BLOCK_OF[run([*objs, p]).bound["default/new"]] == "block-4"
    soft = pod("soft", cpu="1", memory="1Gi", labels={"app": "web"})
    soft["spec"]["topologySpreadConstraints"] = [spread(BLOCK, 1, hard=False)]
    assert BLOCK_OF[run([*objs, soft]).bound["default/soft"]] == "block-4"


def with_port(p: Obj, port: int) -> Obj:
    p["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": port}]
    return p


def test_host_ports_keep_pods_apart() -> None:
    """An existing pod holds port 8080 on node-0; a gang of two asking for it takes two other nodes."""
    objs = [*cluster(), with_port(pod("old", node_name="node-0", cpu="1", memory="1Gi"), 8080)]
    objs.append(koord_gang("g", 2, gather=[("BlockLayer", "MustGather")]))
    for i in range(2):
        objs.append(
            with_port(
                pod(
                    f"g-{i}", cpu="1", memory="1Gi", labels={"pod-group.scheduling.sigs.k8s.io": "g"}, index=i
                ),
                8080,
            )
        )
    bound = run(objs).bound
    nodes = [bound["default/g-0"], bound["default/g-1"]]
    assert "node-0" not in nodes and len(set(nodes)) == 2
    assert {BLOCK_OF[n] for n in nodes} == {"block-0"}


def test_a_node_short_of_a_resource_the_members_do_not_ask_for_still_takes_them() -> None:
    """node-0's GPU is overcommitted (two bound pods ask for its one GPU, as while a victim
    terminates beside the preemptor nominated there). Members that ask for no GPU still fit
    there, as NodeResourcesFit checks only what a pod requests: with hostname anti-affinity
    between them, the gang needs both nodes."""
    rule = anti(term(HOST, {"matchLabels": {"app": "g"}}))
    objs = [
        *(node_object(f"node-{i}", cpu="8", memory="32Gi", gpu="1") for i in range(2)),
        *(
            pod(f"gpu-{i}", cpu="1", memory="1Gi", gpu="1", node_name="node-0", scheduler="x")
            for i in range(2)
        ),
        koord_gang("g", 2),
        *(
            pod(
                f"g-{i}",
                cpu="1",
                memory="1Gi",
                labels={"app": "g", "pod-group.scheduling.sigs.k8s.io": "g"},
                index=i,
                affinity=rule,
            )
            for i in range(2)
        ),
    ]
    verdict = attempt(objs, "default/g")
    assert verdict.code is Code.SUCCESS, verdict.message
    assert verdict.placement is not None
    assert sorted(n for _, n in verdict.placement.pods) == ["node-0", "node-1"]
