"""Names, namespaces, apiVersion and kind are checked as the API server checks them, in
`validate`, `translate` and `simulate`; a key given twice in a YAML mapping is an error naming
both lines."""

from __future__ import annotations

import io

import pytest

from topobridge import cmd_simulate, cmd_translate, cmd_validate
from topobridge.inputs import UnreadableError, load_objects
from translations._base import DNS1123_SUBDOMAIN_MESSAGE
from translations.envelope import DNS1123_LABEL_MESSAGE, envelope_problems, name_problems
from translations.errors import InvalidSpecError

SUBDOMAIN = DNS1123_SUBDOMAIN_MESSAGE


def _texts(problems: list[InvalidSpecError]) -> list[str]:
    return [f"{p.field_path}: {p.detail}" for p in problems]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-c"}}, [], id="node-ok"),
        pytest.param(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "nodeC"}},
            [f'metadata.name: Invalid value: "nodeC": {SUBDOMAIN}'],
            id="node-upper-case",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "NS1"}},
            [f'metadata.namespace: Invalid value: "NS1": {DNS1123_LABEL_MESSAGE}'],
            id="namespace-upper-case",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a.b", "namespace": "x.y"}},
            [f'metadata.namespace: Invalid value: "x.y": {DNS1123_LABEL_MESSAGE}'],
            id="pod-name-subdomain-namespace-label",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team.a"}},
            [f'metadata.name: Invalid value: "team.a": {DNS1123_LABEL_MESSAGE}'],
            id="namespace-name-is-a-label",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n" * 64}},
            [f'metadata.name: Invalid value: "{"n" * 64}": must be no more than 63 characters'],
            id="namespace-name-too-long",
        ),
        pytest.param(
            {
                "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"namespace": "d"},
            },
            ["metadata.name: Required value: name or generateName is required"],
            id="sigs-podgroup-nameless",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "p-"}},
            [],
            id="generate-name-is-enough",
        ),
        pytest.param(
            {"kind": "HyperNode", "metadata": {"name": "s0"}},
            ["apiVersion: Required value"],
            id="hypernode-no-api-version",
        ),
        pytest.param(
            {"apiVersion": "v1", "metadata": {"name": 7}},
            ["kind: Required value", "metadata.name: Invalid value: 7: must be of type string"],
            id="no-kind-number-name",
        ),
        pytest.param([1], ["<root>: Invalid value: [1]: must be of type object"], id="not-an-object"),
    ],
)
def test_envelope_problems(obj: object, expected: list[str]) -> None:
    assert _texts(envelope_problems(obj)) == expected


def test_translate_needs_a_name_not_a_generate_name() -> None:
    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "p-"}}
    assert _texts(name_problems(raw, require_name=True)) == [
        "metadata.name: Required value: name is required"
    ]


NAMELESS_PG = "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {namespace: d}\nspec: {minMember: 2}\n"
NO_API_HN = (
    "kind: HyperNode\nmetadata: {name: s0}\n"
    "spec: {tier: 1, members: [{type: Node, selector: {exactMatch: {name: node-0}}}]}\n"
)
UPPER_NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: nodeC}\n"
UPPER_NS_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: NS1}\nspec: {containers: [{name: c}]}\n"
)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        pytest.param(
            NAMELESS_PG,
            "error: PodGroup d/(no name): metadata.name: Required value: name or generateName is required",
            id="nameless-podgroup",
        ),
        pytest.param(
            NO_API_HN, "error: HyperNode s0: apiVersion: Required value", id="hypernode-without-apiversion"
        ),
        pytest.param(UPPER_NODE, 'error: Node nodeC: metadata.name: Invalid value: "nodeC"', id="node-name"),
        pytest.param(
            UPPER_NS_POD, 'error: Pod NS1/p: metadata.namespace: Invalid value: "NS1"', id="pod-namespace"
        ),
    ],
)
def test_validate_refuses_what_the_api_server_refuses(text: str, error: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = cmd_validate.run(["-"], cluster_state=None, out=out, err=err, stdin=io.StringIO(text))
    assert code == cmd_validate.EXIT_INVALID
    assert err.getvalue().startswith(error)
    assert out.getvalue().startswith("invalid ")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        pytest.param(NAMELESS_PG, "metadata.name: Required value: name is required", id="nameless-podgroup"),
        pytest.param(
            NO_API_HN, "HyperNode s0: apiVersion: Required value", id="hypernode-without-apiversion"
        ),
        pytest.param(UPPER_NODE, 'Node nodeC: metadata.name: Invalid value: "nodeC"', id="node-name"),
    ],
)
def test_translate_refuses_what_the_api_server_refuses(text: str, error: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = cmd_translate.run(["-"], out=out, err=err, stdin=io.StringIO(text))
    assert code == cmd_translate.EXIT_UNTRANSLATABLE
    assert error in err.getvalue()
    assert out.getvalue() == ""


@pytest.mark.parametrize(
    ("text", "field"),
    [
        pytest.param(UPPER_NODE, 'metadata.name: Invalid value: "nodeC"', id="node-name"),
        pytest.param(UPPER_NS_POD, 'metadata.namespace: Invalid value: "NS1"', id="pod-namespace"),
    ],
)
def test_simulate_scenario_refuses_bad_names(text: str, field: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = cmd_simulate.run(cmd_simulate.Source("-"), out=out, err=err, stdin=io.StringIO(text))
    assert code == cmd_simulate.EXIT_UNREADABLE
    assert field in err.getvalue()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels:\n    x: '1'\n    x: '2'\n",
            'standard input:7:5: not valid YAML: found duplicate key "x" (first at line 6)',
            id="label-twice",
        ),
        pytest.param(
            '{"apiVersion": "v1", "kind": "Pod",\n "metadata": {"name": "a", "name": "b"}}\n',
            'standard input:2:28: not valid YAML: found duplicate key "name" (first at line 2)',
            id="json-key-twice",
        ),
    ],
)
def test_duplicate_yaml_key_names_the_lines(text: str, message: str) -> None:
    with pytest.raises(UnreadableError) as exc:
        list(load_objects("-", io.StringIO(text)))
    assert str(exc.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "managedFields": [{"fieldsV1": '
            + '{"f:a": ' * 1_025
            + "{}"
            + "}" * 1_025
            + "}]}}",
            "standard input: metadata.managedFields[0].fieldsV1: Invalid value: "
            "JSON nested 1030 levels deep, more than the 512 levels allowed",
            id="json-past-orjson",
        ),
        pytest.param(
            '{"kind": "Pod", "metadata": {"name": "a", "annotations": ' + "[" * 600 + "]" * 600 + "}}",
            "standard input: metadata.annotations: Invalid value: "
            "JSON nested 602 levels deep, more than the 512 levels allowed",
            id="json-within-orjson",
        ),
        pytest.param(
            "[" * 5_000,
            "standard input: JSON nested 5000 levels deep, more than the 512 levels allowed",
            id="json-unclosed",
        ),
        pytest.param(
            "kind: Pod\nmetadata: " + "[" * 5_000 + "]" * 5_000,
            "standard input: not readable YAML: nested deeper than it can be read",
            id="yaml-flow",
        ),
    ],
)
def test_a_text_nested_too_deeply_is_an_error_naming_where(text: str, message: str) -> None:
    """The readers recursed once per level: Python's JSON reader and PyYAML raised
    RecursionError out of every command reading a file and out of the ui's what-if."""
    with pytest.raises(UnreadableError) as exc:
        list(load_objects("-", io.StringIO(text)))
    assert str(exc.value) == message


def test_merge_keys_may_be_overridden() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels: &l {x: '1'}\n  annotations:\n    <<: *l\n    x: '2'\n"
    (obj,) = [loc.obj for loc in load_objects("-", io.StringIO(text))]
    assert obj["metadata"]["annotations"] == {"x": "2"}
