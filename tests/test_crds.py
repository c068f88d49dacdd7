"""The generated CRDs: committed files current, schemas structural, upstream names kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from topobridge.cmd_crds import stale_files, write_all
from translations import crdgen
from translations._base import KubeModel, TypedObject
from translations.crdgen import CRDS, SchemaNotStructuralError, custom_resource_definition, openapi_schema

REPO = Path(__file__).resolve().parent.parent
CRDS_DIR = REPO / "crds"


def test_committed_crds_match_the_models() -> None:
    stale = stale_files(CRDS_DIR)
    assert not stale, f"crds/ is out of date for {stale}: run `topobridge crds` and commit the result"


def test_no_stray_files_in_crds_dir() -> None:
    expected = {crd.filename for crd in CRDS}
    present = {p.name for p in CRDS_DIR.glob("*.yaml")}
    assert present == expected


def test_check_reports_a_hand_edited_file(tmp_path: Path) -> None:
    write_all(tmp_path)
    assert stale_files(tmp_path) == []
    victim = tmp_path / CRDS[0].filename
    victim.write_text(victim.read_text().replace("type: integer", "type: number", 1))
    assert stale_files(tmp_path) == [CRDS[0].filename]


def test_every_file_says_it_is_generated_and_how() -> None:
    for crd in CRDS:
        head = (CRDS_DIR / crd.filename).read_text().splitlines()[:2]
        assert head[0].startswith("# Generated from ")
        assert head[1] == "# Regenerate with: topobridge crds"


def _walk(node: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    out = [(path, node)]
    for name, sub in (node.get("properties") or {}).items():
        out += _walk(sub, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        out += _walk(node["items"], f"{path}[*]")
    if isinstance(node.get("additionalProperties"), dict):
        out += _walk(node["additionalProperties"], f"{path}{{*}}")
    return out


@pytest.mark.parametrize("crd", CRDS, ids=lambda c: c.name)
def test_schema_is_structural(crd: crdgen.CrdDefinition) -> None:
    schema = openapi_schema(crd.model)
    for path, node in _walk(schema):
        typed = (
            "type" in node
            or node.get("x-kubernetes-int-or-string")
            or node.get("x-kubernetes-preserve-unknown-fields")
        )
        assert typed, f"{crd.name}: {path} has no type"
        assert "$ref" not in node and "const" not in node and "title" not in node, path
        if "anyOf" in node:
            # The only junctor structural schemas allow here, and only beside int-or-string.
            assert node.get("x-kubernetes-int-or-string"), path
        if node.get("type") == "integer":
            assert node.get("format") in ("int32", "int64"), path
    assert schema["properties"]["metadata"] == {"type": "object"}


@pytest.mark.parametrize("crd", CRDS, ids=lambda c: c.name)
def test_every_property_has_a_description(crd: crdgen.CrdDefinition) -> None:
    schema = openapi_schema(crd.model)
    missing = [
        f"{path}.{name}"
        for path, node in _walk(schema)
        for name, sub in (node.get("properties") or {}).items()
        if not sub.get("description") and not (path == "" and name == "metadata")
    ]
    assert not missing, f"{crd.name}: properties without a description (add a field docstring): {missing}"


def _node(crd_kind: type[TypedObject], dotted: str) -> dict[str, Any]:
    node = openapi_schema(crd_kind)
    for part in dotted.split("."):
        node = node["items"] if part == "[*]" else node["properties"][part]
    return node


@pytest.mark.parametrize(
    ("model", "path", "expected"),
    [
        pytest.param(
            crdgen.volcano.PodGroup,
            "spec.networkTopology.mode",
            {"type": "string", "enum": ["hard", "soft"], "default": "hard"},
            id="volcano-mode-enum-default",
        ),
        pytest.param(
            crdgen.volcano.PodGroup,
            "spec.minMember",
            {"type": "integer", "format": "int32", "minimum": 0},
            id="minMember",
        ),
        pytest.param(
            crdgen.volcano.PodGroup,
            "spec.subGroupPolicy.[*].subGroupSize",
            {"type": "integer", "format": "int32", "default": 1, "minimum": 1},
            id="subGroupSize",
        ),
        pytest.param(
            crdgen.volcano.PodGroup,
            "spec.queue",
            {"type": "string", "default": "default", "maxLength": 253},
            id="queue-default",
        ),
        pytest.param(
            crdgen.lws.LeaderWorkerSet,
            "spec.replicas",
            {"type": "integer", "format": "int32", "default": 1, "minimum": 0},
            id="lws-replicas",
        ),
        pytest.param(
            crdgen.lws.LeaderWorkerSet,
            "spec.networkTopology.mode",
            {"type": "string", "enum": ["hard", "soft"]},
            id="lws-networkTopology",
        ),
        pytest.param(
            crdgen.lws.LeaderWorkerSet,
            "spec.leaderWorkerTemplate.workerTemplate",
            {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            id="pod-template-opaque",
        ),
        pytest.param(
            crdgen.lws.LeaderWorkerSet,
            "spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge",
            {"x-kubernetes-int-or-string": True, "default": 0},
            id="int-or-string",
        ),
        pytest.param(
            crdgen.volcano.HyperNode,
            "spec.members.[*].type",
            {"type": "string", "enum": ["Node", "HyperNode"]},
            id="member-type",
        ),
        pytest.param(
            crdgen.volcano.HyperNode, "spec.members", {"type": "array", "minItems": 1}, id="members-min"
        ),
        pytest.param(
            crdgen.schedplugins.XPodGroup,
            "spec.minMember",
            {"type": "integer", "format": "int32", "minimum": 1},
            id="x-minMember",
        ),
    ],
)
def test_schema_carries_upstream_constraints(
    model: type[TypedObject], path: str, expected: dict[str, Any]
) -> None:
    node = _node(model, path)
    assert {k: node.get(k) for k in expected} == expected
    assert node["description"]


def test_quantities_are_int_or_string_with_the_quantity_grammar() -> None:
    node = _node(crdgen.volcano.PodGroup, "spec.minResources")["additionalProperties"]
    assert node["x-kubernetes-int-or-string"] is True
    assert "type" not in node
    import re

    pattern = re.compile(node["pattern"])
    for good in ("1", "500m", "32Gi", "1e3", "0.5", "+1.5E-3"):
        assert pattern.match(good), good
    for bad in ("1.5.5", "Gi", "ten", "1Gib", ""):
        assert not pattern.match(bad), bad


def test_python_defaults_do_not_leak_into_the_schema() -> None:
    # `= None` and default_factory keep parse->dump lossless; the API server must not fill them in.
    spec = _node(crdgen.volcano.HyperNode, "spec")
    assert all("default" not in sub for sub in spec["properties"].values())
    assert "default" not in _node(crdgen.volcano.PodGroup, "spec.networkTopology.highestTierAllowed")


def test_required_fields_follow_the_models() -> None:
    assert _node(crdgen.volcano.HyperNode, "spec")["required"] == [
        "tier"
    ]  # members: minItems 1 but optional, as upstream
    assert _node(crdgen.lws.LeaderWorkerSet, "spec.leaderWorkerTemplate")["required"] == ["workerTemplate"]
    assert _node(crdgen.koordinator.ClusterNetworkTopology, "spec")["required"] == ["networkTopologySpec"]


@pytest.mark.parametrize(
    ("name", "short_names", "scope", "subresources", "columns"),
    [
        ("leaderworkersets.leaderworkerset.x-k8s.io", ["lws"], "Namespaced", {"status", "scale"},
         ["Ready", "Desired", "Up-to-date", "Age"]),
        ("podgroups.scheduling.volcano.sh", ["pg", "podgroup-v1beta1"], "Namespaced", set(),
         ["STATUS", "minMember", "RUNNINGS", "AGE", "QUEUE"]),
        ("hypernodes.topology.volcano.sh", ["hn"], "Cluster", {"status"},
         ["Tier", "TierName", "NodeCount", "Age"]),
        ("clusternetworktopologies.scheduling.koordinator.sh", None, "Cluster", {"status"}, []),
        ("podgroups.scheduling.sigs.k8s.io", None, "Namespaced", set(), []),
        ("podgroups.scheduling.x-k8s.io", ["pg", "pgs"], "Namespaced", {"status"},
         ["Phase", "MinMember", "Running", "Succeeded", "Failed", "Age"]),
    ],
)  # fmt: skip
def test_names_scope_and_subresources_match_upstream(
    name: str, short_names: list[str] | None, scope: str, subresources: set[str], columns: list[str]
) -> None:
    docs = {
        d["metadata"]["name"]: d for d in (yaml.safe_load((CRDS_DIR / c.filename).read_text()) for c in CRDS)
    }
    crd = docs[name]
    assert crd["spec"]["names"].get("shortNames") == short_names
    assert crd["spec"]["scope"] == scope
    (version,) = crd["spec"]["versions"]
    assert set(version.get("subresources", {})) == subresources
    assert [c["name"] for c in version.get("additionalPrinterColumns", [])] == columns


def test_protected_groups_carry_the_approval_annotation() -> None:
    for crd in CRDS:
        doc = custom_resource_definition(crd)
        if crd.group.endswith(".k8s.io"):
            assert doc["metadata"]["annotations"]["api-approved.kubernetes.io"].startswith("https://")


def test_a_union_without_structural_form_is_refused() -> None:
    class Odd(KubeModel):
        """Has a field no structural schema can describe."""

        value: int | bool | None = None
        """Either."""

    class OddObject(TypedObject):
        """Envelope."""

        spec: Odd
        """Spec."""

    with pytest.raises(SchemaNotStructuralError, match=r"spec\.value: union"):
        openapi_schema(OddObject)
