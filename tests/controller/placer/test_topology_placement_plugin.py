"""kube-scheduler's tables for the placement plugins, as rows of topobridge's
(`controller.placer.plugins.topology_placement`), each named `kube:<file>:<TestFunction>/<case>`:

* `pkg/scheduler/framework/plugins/topologyaware/topology_placement_test.go`
  TestGeneratePlacements, the PodGroup cases (8). Not ported: its 9 "for cpg ..." cases, which
  collect the bound members over a CompositePodGroup's subtree: topobridge does not place
  composite groups (their member groups wait, saying so).
* `pkg/scheduler/framework/plugins/noderesources/placement_bin_packing_test.go`
  TestPlacementBinPackingScore (7) and TestPlacementBinPackingScore_Strategies MostAllocated
  and LeastAllocated (2). Not ported: the three RequestedToCapacityRatio strategies and
  TestPlacementBinPackingArgsValidation (4): topobridge takes no scheduler configuration.
* `pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count_test.go`
  TestScorePlacement (4) and TestNormalizePlacementScore (5).

Quantities are kube's, in topobridge's scheduler units (millicores, bytes, counts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from controller.placer.plugins.topology_placement import (
    WHOLE_CLUSTER,
    PlacementGenerateError,
    Strategy,
    bin_packing,
    generate_placements,
    normalize_pods_count,
    pods_count,
)

TP = "kube:topology_placement_test.go:TestGeneratePlacements"
BP = "kube:placement_bin_packing_test.go:TestPlacementBinPackingScore"
BPS = "kube:placement_bin_packing_test.go:TestPlacementBinPackingScore_Strategies"
PC = "kube:podgroup_pods_count_test.go"

Labels = Mapping[str, Mapping[str, str]]


def labelled(spec: str) -> dict[str, dict[str, str]]:
    """Nodes from `name` or `name:key=value` words."""
    out: dict[str, dict[str, str]] = {}
    for word in spec.split():
        name, _, label = word.partition(":")
        out[name] = dict([label.split("=")]) if label else {}
    return out


SIX = "node0:topology2=d1 node1:topology2=d4 node2:topology1=d1 node3:topology1=d2 node4:topology1=d1 node5:topology1=d3"
GENERATE = [
    pytest.param(
        None,
        "node1 node2:foo=bar",
        "node3",
        [],
        {WHOLE_CLUSTER: ["node1", "node2"]},
        id=f"{TP}/without constraint returns placement matching all nodes",
    ),
    pytest.param(
        "topology1",
        SIX,
        "",
        [],
        {"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]},
        id=f"{TP}/with topology key constraint, returns placement for each topology domain",
    ),
    pytest.param("topology3", SIX, "", [], {}, id=f"{TP}/without matching topology label, returns empty"),
    pytest.param(
        "topology",
        "node0:topology=d2 node1:topology=d1",
        "node2:topology=d1 node3:topology=d1",
        ["node2", "node3"],
        {"d1": ["node1"]},
        id=f"{TP}/with pods already scheduled in a single domain, returns that domain",
    ),
    pytest.param(
        "topology",
        "node0:topology=d2",
        "node2:topology=d1 node3:topology=d1",
        ["node2", "node3"],
        {},
        id=f"{TP}/with pods already scheduled in a single domain not present in current placement, "
        "returns empty",
    ),
    pytest.param(
        "topology",
        "node0:topology=d2 node1:topology=d1",
        "node2:topology=d0 node3:topology=d1",
        ["node2", "node3"],
        PlacementGenerateError,
        id=f"{TP}/with pods already scheduled in conflicting domains, returns error",
    ),
    pytest.param(
        "topology",
        "node0:topology=d2 node1:topology=d1",
        "node2:topology=d1 node3:topology=d1",
        ["node2", "node4"],
        PlacementGenerateError,
        id=f"{TP}/with already scheduled pod on node outside of snapshot, returns error",
    ),
    pytest.param(
        "topology",
        "node1:topology=d2",
        "node2:foo=bar",
        ["node2"],
        PlacementGenerateError,
        id=f"{TP}/with already scheduled pod on node without topology label, returns error",
    ),
]


@pytest.mark.parametrize(("key", "placement", "others", "scheduled", "want"), GENERATE)
def test_generate_placements(
    key: str | None, placement: str, others: str, scheduled: list[str], want: object
) -> None:
    mine, rest = labelled(placement), labelled(others)
    known = {**mine, **rest}
    domain_of = None if key is None else (lambda n: known[n].get(key))

    def call() -> dict[str, list[str]]:
        return dict(generate_placements(list(mine), domain_of, scheduled, known.__contains__))

    if want is PlacementGenerateError:
        with pytest.raises(PlacementGenerateError):
            call()
    else:
        assert call() == want


def cm(cpu: int, mem: int, gpu: int | None = None) -> dict[str, int]:
    out = {"cpu": cpu, "memory": mem}
    if gpu is not None:
        out["nvidia.com/gpu"] = gpu
    return out


CM = (("cpu", 1), ("memory", 1))
CM41 = (("cpu", 4), ("memory", 1))
CMG = (("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 1))
FOO, BAR = cm(1000, 0), cm(2000, 2000)
BIN_PACKING = [
    pytest.param(
        [cm(5000, 5000)] * 2, [{}, {}], [FOO, BAR], CM, 25, id=f"{BP}/Computes score based on total requests"
    ),
    pytest.param(
        [cm(5000, 5000)] * 2, [{}, {}], [FOO, BAR], CM41, 28, id=f"{BP}/Computes score using weights"
    ),
    pytest.param(
        [cm(5000, 5000)] * 2, [{}, {}], [FOO, BAR], CM41, 28, id=f"{BP}/Handles multiple pods per node"
    ),
    pytest.param(
        [cm(5000, 5000)] * 2,
        [{}, {}],
        [FOO, BAR],
        CM,
        25,
        id=f"{BP}/Does not include nodes from outside of placement",
    ),
    pytest.param(
        [cm(5000, 5000)] * 2,
        [cm(1000, 0), {}],
        [FOO, BAR],
        CM,
        30,
        id=f"{BP}/Includes pre-existing pods from outside of pod group",
    ),
    pytest.param(
        [cm(5000, 5000, 5)] * 2,
        [cm(1000, 0, 0), {}],
        [cm(1000, 0, 0), cm(1000, 2000, 1)],
        CMG,
        20,
        id=f"{BP}/Includes scalar resources if any pod in pod group has nonzero requests",
    ),
    pytest.param(
        [cm(5000, 5000, 5)] * 2,
        [cm(1000, 0, 1), {}],
        [cm(1000, 0, 0), cm(1000, 2000, 0)],
        CMG,
        25,
        id=f"{BP}/Does not include scalar resources if all pods in pod group have zero requests",
    ),
]


@pytest.mark.parametrize(("alloc", "used", "proposed", "resources", "want"), BIN_PACKING)
def test_bin_packing_score(
    alloc: Sequence[Mapping[str, int]],
    used: Sequence[Mapping[str, int]],
    proposed: Sequence[Mapping[str, int]],
    resources: Sequence[tuple[str, int]],
    want: int,
) -> None:
    assert bin_packing(alloc, used, proposed, resources=resources) == want


@pytest.mark.parametrize(
    ("strategy", "want"),
    [
        pytest.param(Strategy.LEAST_ALLOCATED, 70, id=f"{BPS}/LeastAllocated"),
        pytest.param(Strategy.MOST_ALLOCATED, 30, id=f"{BPS}/MostAllocated"),
    ],
)
def test_bin_packing_strategies(strategy: Strategy, want: int) -> None:
    alloc = [cm(100, 100), cm(200, 200), cm(300, 300)]
    assert bin_packing(alloc, [{}, {}, {}], [cm(100, 0), cm(200, 60)], strategy=strategy) == want


@pytest.mark.parametrize(
    ("scheduled", "want"),
    [
        pytest.param(3, 5, id=f"{PC}:TestScorePlacement/existing assigned and assumed pods"),
        pytest.param(1, 3, id=f"{PC}:TestScorePlacement/no assumed pods"),
        pytest.param(1, 3, id=f"{PC}:TestScorePlacement/no assigned pods"),
        pytest.param(0, 2, id=f"{PC}:TestScorePlacement/no assigned pods, no assumed pods"),
    ],
)
def test_pods_count(scheduled: int, want: int) -> None:
    """Two proposed assignments beside the group's assigned and assumed (bound) members."""
    assert pods_count(scheduled, 2) == want


N = f"{PC}:TestNormalizePlacementScore"


@pytest.mark.parametrize(
    ("scores", "want"),
    [
        pytest.param([10, 50, 110], [9, 45, 100], id=f"{N}/distinct scores"),
        pytest.param([50, 50], [100, 100], id=f"{N}/equal scores"),
        pytest.param([50], [100], id=f"{N}/single score"),
        pytest.param(
            [11, 100, 101, 102],
            [10, 98, 99, 100],
            id=f"{N}/some minimal score that is far from a group of scores located closely",
        ),
        pytest.param(
            [0, 0],
            "no pods from pod group are assigned to any of the candidate placements",
            id=f"{N}/zero scores",
        ),
    ],
)
def test_normalize_pods_count(scores: list[int], want: object) -> None:
    if isinstance(want, str):
        with pytest.raises(ValueError, match=want):
            normalize_pods_count(scores)
    else:
        assert normalize_pods_count(scores) == want


def test_counts() -> None:
    assert (len(GENERATE), len(BIN_PACKING)) == (8, 7)
