"""The hostile-object generator (`tests/strategies/`) stays within what the API server accepts:
custom objects pass the schemas in `crds/`, names are DNS-1123, an object's identity appears
once per cluster, and the ordinary gang is untouched by the hostile objects beside it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import objects as gen
from tests.strategies.primitives import STALLING_QUANTITY

CRDS = Path(__file__).resolve().parents[1] / "crds"
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
FAST = settings(
    max_examples=40, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


def _schema(file: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / file).read_text())
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


@pytest.mark.parametrize(
    ("strategy", "file"),
    [
        pytest.param(gen.volcano_podgroups(), "scheduling.volcano.sh_podgroups.yaml", id="volcano-podgroup"),
        pytest.param(gen.leader_worker_sets(), "leaderworkerset.x-k8s.io_leaderworkersets.yaml", id="lws"),
        pytest.param(
            gen.cluster_network_topologies(),
            "scheduling.koordinator.sh_clusternetworktopologies.yaml",
            id="cluster-network-topology",
        ),
        pytest.param(
            gen.hypernode_sets(("node-1", "node-2")).flatmap(st.sampled_from),
            "topology.volcano.sh_hypernodes.yaml",
            id="hypernode",
        ),
    ],
)
def test_custom_objects_pass_their_crd_schema(strategy: st.SearchStrategy[Any], file: str) -> None:
    validator = jsonschema.Draft7Validator(_schema(file))

    @FAST
    @given(strategy)
    def check(obj: dict[str, Any]) -> None:
        errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(obj)]
        assert errors == []

    check()


@pytest.mark.parametrize(
    "file", ["scheduling.sigs.k8s.io_podgroups.yaml", "scheduling.x-k8s.io_podgroups.yaml"], ids=["sigs", "x"]
)
def test_coscheduling_podgroups_pass_their_crd_schema(file: str) -> None:
    group = file.split("_")[0]
    validator = jsonschema.Draft7Validator(_schema(file))

    @FAST
    @given(gen.coscheduling_podgroups().filter(lambda o: o["apiVersion"].startswith(group)))
    def check(obj: dict[str, Any]) -> None:
        assert [e.message[:200] for e in validator.iter_errors(obj)] == []

    check()


def test_the_stalling_quantity_is_one_the_crd_pattern_accepts() -> None:
    pattern = _schema("scheduling.volcano.sh_podgroups.yaml")["properties"]["spec"]["properties"][
        "minResources"
    ]["additionalProperties"]["pattern"]
    assert re.fullmatch(pattern, STALLING_QUANTITY)


@FAST
@given(gen.hostile_clusters(max_pods=6), gen.ordinary_gangs())
def test_clusters_are_valid_and_leave_the_ordinary_gang_alone(
    cluster: list[dict[str, Any]], ordinary: gen.OrdinaryGang
) -> None:
    idents = [gen.identity(o) for o in cluster]
    assert len(idents) == len(set(idents))
    for obj in cluster:
        meta = obj["metadata"]
        assert len(meta["name"]) <= 253 and DNS1123_SUBDOMAIN.match(meta["name"]), meta["name"]
        assert meta.get("namespace") != gen.ORDINARY_NAMESPACE
        if obj["kind"] == "Pod":
            assert obj["spec"].get("nodeName") not in ordinary.nodes
            assert all(t.get("key") != gen.ORDINARY_TAINT["key"] for t in obj["spec"].get("tolerations", []))
            for c in obj["spec"]["containers"]:
                res = c["resources"]
                for name, limit in res.get("limits", {}).items():
                    assert res["requests"][name] == limit  # a limit equal to its request: never below
    assert {gen.identity(o)[3] for o in ordinary.objects if o["kind"] == "Node"} == set(ordinary.nodes)
