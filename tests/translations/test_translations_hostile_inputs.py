"""Objects the API server accepts must not make the pure code raise or stall at the source:
quantities beyond int64, quantity strings that stall a backtracking regex, digit runs past
`int()`'s 4,300-digit limit, HyperNode trees deeper than the recursion limit or than the
documented maximum depth, and cycles among many HyperNodes."""

from __future__ import annotations

from decimal import Decimal

import pytest

from translations.core import Node, PodSpec, effective_requests
from translations.errors import InvalidSpecError
from translations.quantity import SCHEDULER_UNIT_BOUND, parse_quantity, scheduler_units, to_scheduler_units
from translations.topology import MAX_TREE_DEPTH, from_hypernodes, natural_key
from translations.volcano import HyperNode

HUGE = "9" * 4301


@pytest.mark.parametrize(
    ("resource", "raw", "units"),
    [
        pytest.param("cpu", "10P", SCHEDULER_UNIT_BOUND, id="cpu-10P"),
        pytest.param("memory", "5Ei", SCHEDULER_UNIT_BOUND, id="memory-5Ei"),
        pytest.param("memory", "1e99999", SCHEDULER_UNIT_BOUND, id="memory-huge-exponent"),
        pytest.param("memory", "1" + "0" * 60, SCHEDULER_UNIT_BOUND, id="memory-60-digits"),
        pytest.param(
            "memory", str(SCHEDULER_UNIT_BOUND - 1), SCHEDULER_UNIT_BOUND - 1, id="just-below-exact"
        ),
        pytest.param("memory", str(SCHEDULER_UNIT_BOUND), SCHEDULER_UNIT_BOUND, id="at-the-bound"),
        pytest.param("memory", "31Ti", 31 * 2**40, id="31Ti-exact"),
        pytest.param("cpu", "35184372088", 35184372088000, id="cpu-cores-below-bound-exact"),
        pytest.param("cpu", "1e-0000000000000000000000003", 1, id="exponent-with-leading-zeros"),
    ],
)
def test_units_saturate_at_the_bound_and_stay_exact_below(resource: str, raw: str, units: int) -> None:
    assert to_scheduler_units(resource, raw) == units


def test_the_bound_leaves_int64_room_for_every_pod_kubernetes_supports() -> None:
    # 150,000 pods per cluster (Kubernetes' documented limit) plus 5,000 nodes, all saturated.
    assert (150_000 + 5_000) * SCHEDULER_UNIT_BOUND < 2**63 - 1


@pytest.mark.parametrize(
    "containers",
    [
        pytest.param([{"memory": "5Ei"}, {"memory": "5Ei"}], id="two-5Ei-containers"),
        pytest.param([{"cpu": "10P"}] * 40, id="forty-10P-containers"),
    ],
)
def test_a_pods_summed_request_saturates_too(containers: list[dict[str, str]]) -> None:
    spec = PodSpec.model_validate(
        {"containers": [{"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(containers)]}
    )
    assert set(effective_requests(spec).values()) == {SCHEDULER_UNIT_BOUND}


def test_a_node_reporting_10P_cpu_saturates() -> None:
    node = Node.model_validate({"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "10P"}}})
    assert node.allocatable()["cpu"] == SCHEDULER_UNIT_BOUND


def test_the_stalling_quantity_is_refused_naming_the_field() -> None:
    # 16,000 digits and a decimal exponent: the CRD pattern accepts it, Kubernetes does not.
    # A backtracking regex took about 7 s here; refusing it must be immediate (no timer here:
    # benchmarks/admission_bounds.py prints its cost).
    with pytest.raises(InvalidSpecError) as caught:
        parse_quantity("1" * 16000 + "e1.5", field="spec.minResources[cpu]")
    assert caught.value.field_path == "spec.minResources[cpu]"


def test_an_exponent_past_int_limits_is_out_of_range() -> None:
    with pytest.raises(InvalidSpecError, match="out of range") as caught:
        to_scheduler_units("memory", "1e" + "1" * 5000, field="spec.minResources[memory]")
    assert caught.value.field_path == "spec.minResources[memory]"


def test_a_tiny_exponent_past_int_limits_rounds_up_to_one_unit() -> None:
    assert scheduler_units("memory", "1e-" + "1" * 5000) == 1


def test_parse_keeps_exact_decimals() -> None:
    assert parse_quantity("10P") == Decimal(10**16)


@pytest.mark.parametrize(
    ("names", "ordered"),
    [
        pytest.param(["node-10", "node-2", "node-1"], ["node-1", "node-2", "node-10"], id="natural"),
        pytest.param(
            ["a" + HUGE, "a1", "a" + "8" * 4302], ["a1", "a" + HUGE, "a" + "8" * 4302], id="huge-digits"
        ),
        pytest.param(["²", "x²", "1", "٣"], ["1", "x²", "²", "٣"], id="unicode-digits-are-text"),
        pytest.param(["n007", "n7", "n08"], ["n007", "n7", "n08"], id="leading-zeros-equal-then-text"),
    ],
)
def test_natural_key_orders_without_converting_digits(names: list[str], ordered: list[str]) -> None:
    assert sorted(names, key=natural_key) == ordered


def _chain(depth: int, leaves: int = 0) -> list[HyperNode]:
    """hn-0 (tier 1) under hn-1 ... under hn-<depth-1>; `leaves` tier-1 HyperNodes under hn-1."""
    out = []
    for i in range(depth):
        members = [{"type": "HyperNode", "selector": {"exactMatch": {"name": f"hn-{i - 1}"}}}] if i else []
        if i == 0:
            members = [{"type": "Node", "selector": {"exactMatch": {"name": "node-0"}}}]
        if i == 1:
            members += [
                {"type": "HyperNode", "selector": {"exactMatch": {"name": f"leaf-{j}"}}}
                for j in range(leaves)
            ]
        out.append(
            HyperNode.parse({"metadata": {"name": f"hn-{i}"}, "spec": {"tier": i + 1, "members": members}})
        )
    for j in range(leaves):
        out.append(
            HyperNode.parse(
                {
                    "metadata": {"name": f"leaf-{j}"},
                    "spec": {
                        "tier": 1,
                        "members": [{"type": "Node", "selector": {"exactMatch": {"name": f"l{j}"}}}],
                    },
                }
            )
        )
    return out


def test_a_chain_deeper_than_the_maximum_keeps_the_top_and_names_what_it_drops() -> None:
    tree = from_hypernodes(_chain(986), [])
    assert len(tree.domains) == MAX_TREE_DEPTH
    assert set(tree.domains) == {f"hn-{i}" for i in range(986 - MAX_TREE_DEPTH, 986)}
    assert all(len(tree.ancestors(n)) <= MAX_TREE_DEPTH for n in tree.node_domain)
    dropped = [w for w in tree.warnings if "deeper than" in w]
    assert len(dropped) == 1 and f"hn-{986 - MAX_TREE_DEPTH - 1}" in dropped[0] and "hn-0" in dropped[0]
    assert tree.depth_first()[0] == (0, "hn-985")


def test_a_deep_chain_with_many_leaves_builds_in_one_pass() -> None:
    # 600 deep with 2,000 leaves under its second HyperNode: the cycle check walked up from
    # every HyperNode through a list (HyperNodes x depth^2, about 24 s).
    tree = from_hypernodes(_chain(600, leaves=2000), [])
    assert len(tree.domains) == MAX_TREE_DEPTH
    assert not any(w.startswith("hypernodes form a cycle") for w in tree.warnings)


def test_a_cycle_is_cut_once_with_its_path() -> None:
    hns = _chain(5)
    hns[0] = HyperNode.parse(
        {
            "metadata": {"name": "hn-0"},
            "spec": {
                "tier": 1,
                "members": [{"type": "HyperNode", "selector": {"exactMatch": {"name": "hn-4"}}}],
            },
        }
    )
    tree = from_hypernodes(hns, [])
    cycles = [w for w in tree.warnings if "cycle" in w]
    assert len(cycles) == 1 and "hn-0" in cycles[0] and "hn-4" in cycles[0]
    assert sum(1 for d in tree.domains.values() if d.parent is None) == 1


def test_long_quantity_strings_are_not_kept_in_the_cache() -> None:
    from translations import quantity

    before = quantity._cached_units.cache_info().currsize
    for i in range(50):
        assert scheduler_units("memory", str(i + 1) + "0" * 5000) == SCHEDULER_UNIT_BOUND
    assert quantity._cached_units.cache_info().currsize == before
    scheduler_units("memory", "12345Ki")
    assert quantity._cached_units.cache_info().currsize <= before + 1
