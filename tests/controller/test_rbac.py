"""The generated ClusterRole grants exactly the verbs the controller's code uses.

A static scan of `controller/` finds every API call on a named resource (generic verbs, the
informers it starts or its reconcilers declare, the scheduler's informers over its table of
kinds through `served_resources`, the pod helpers, condition upserts) and must equal the role's rules:
a missing verb would be refused at run time, an extra one is a privilege nobody needs.
(The integration tests add the dynamic check: replicas impersonate the role's
ServiceAccount, so the API server itself refuses anything the role lacks.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

from controller import rbac, resources
from controller.resources import Resource
from translations.kinds import SCHEDULER_KINDS

ROOT = Path(__file__).resolve().parents[2] / "controller"
VERB_OF = {
    "get": "get",
    "list": "list",
    "watch": "watch",
    "create": "create",
    "replace": "update",
    "merge_patch": "patch",
    "strategic_patch": "patch",
    "apply": "patch",
    "delete": "delete",
}
CONSTANTS = {name: value for name, value in vars(resources).items() if isinstance(value, Resource)}
VERSION_CHOICES = {
    name: value
    for name, value in vars(resources).items()
    if isinstance(value, tuple) and value and all(isinstance(v, Resource) for v in value)
}
"""Tuples like PDB_VERSIONS: `first_served(...)` picks the version one informer then watches."""


def _resource(node: ast.AST | None) -> Resource | None:
    if isinstance(node, ast.Name):
        return CONSTANTS.get(node.id)
    if isinstance(node, ast.Attribute):
        return CONSTANTS.get(node.attr)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "at_version":
        return _resource(node.args[0]) if node.args else None  # a rule names no version
    return None


def _subresource(call: ast.Call, res: Resource) -> list[str | None]:
    for kw in call.keywords:
        if kw.arg == "subresource":
            if isinstance(kw.value, ast.Constant):
                return [kw.value.value]
            # computed (e.g. "status" if res.status_subresource else None): what it resolves to
            return ["status" if res.status_subresource else None]
    return [None]


def _key(res: Resource, sub: str | None, verb: str) -> tuple[str, str, str]:
    return (res.group, f"{res.plural}/{sub}" if sub else res.plural, verb)


Key = tuple[str, str, str]


def _read(res: Resource) -> list[Key]:
    return [_key(res, None, "list"), _key(res, None, "watch")]


def _declared_watches(node: ast.AST) -> list[Key]:
    """A reconciler's declared informers (`watches: dict = {...}`): the manager lists and
    watches each."""
    if not (
        isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == "watches"
        and isinstance(node.value, ast.Dict)
    ):
        return []
    return [key for value in node.value.values if (res := _resource(value)) is not None for key in _read(res)]


def _informer_uses(name: str, args: list[ast.expr]) -> list[Key] | None:
    """The list/watch an informer-making call implies (None: the call makes none)."""
    if (name in ("of", "informer_of") and args and (res := _resource(args[0])) is not None) or (
        name == "Informer" and len(args) > 1 and (res := _resource(args[1])) is not None
    ):
        return _read(res)
    if name == "first_served" and args and isinstance(args[0], ast.Name) and args[0].id in VERSION_CHOICES:
        return [key for res in VERSION_CHOICES[args[0].id] for key in _read(res)]
    if name == "served_resources":
        # Its result is what the scheduler's informers watch (`GangScheduler.attach`): one
        # version of each kind of the scheduler's table, whichever the cluster serves.
        return [key for read in SCHEDULER_KINDS for res in resources.versions_of(read) for key in _read(res)]
    return None


def _call_uses(node: ast.Call) -> list[Key]:
    """The (group, resource, verb) triples one call uses."""
    fn, args = node.func, node.args
    name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
    if name in VERB_OF and args and (res := _resource(args[0])) is not None:
        return [_key(res, sub, VERB_OF[name]) for sub in _subresource(node, res)]
    informed = _informer_uses(name, args)
    if informed is not None:
        return informed
    if name == "upsert_condition" and len(args) > 1 and (res := _resource(args[1])) is not None:
        return [_key(res, "status" if res.status_subresource else None, "patch")]
    if name == "bind" and isinstance(fn, ast.Attribute):
        return [_key(resources.PODS, "binding", "create")]
    if name in ("patch_pod_status", "set_pod_condition") and isinstance(fn, ast.Attribute):
        return [_key(resources.PODS, "status", "patch")]
    return []


def scan() -> dict[Key, list[str]]:
    """(group, resource, verb) -> where in the code it is used."""
    found: dict[Key, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent)
        if rel.parts[1] == "placer" or path.name == "kube.py":
            continue  # the pure engine makes no calls; kube.py defines the verbs
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            uses = _declared_watches(node) + (_call_uses(node) if isinstance(node, ast.Call) else [])
            for key in uses:
                found.setdefault(key, []).append(f"{rel}:{getattr(node, 'lineno', 0)}")
    return found


def test_scan_finds_calls() -> None:
    used = scan()
    assert ("", "pods/binding", "create") in used
    assert ("coordination.k8s.io", "leases", "update") in used
    assert ("scheduling.volcano.sh", "podgroups", "patch") in used


def test_role_grants_exactly_what_the_code_uses() -> None:
    used = scan()
    granted = rbac.allowed()
    missing = {k: v for k, v in used.items() if k not in granted}
    extra = granted - set(used)
    assert not missing, f"the code calls verbs the ClusterRole does not grant: {missing}"
    assert not extra, f"the ClusterRole grants verbs no code uses: {sorted(extra)}"


def test_rendered_role_is_valid_rbac() -> None:
    role, binding, lease_role, lease_binding = yaml.safe_load_all(rbac.render())
    assert role["kind"] == "ClusterRole" and binding["roleRef"]["name"] == role["metadata"]["name"]
    assert lease_role["kind"] == "Role" and lease_binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": lease_role["metadata"]["name"],
    }
    assert lease_role["metadata"]["namespace"] == lease_binding["metadata"]["namespace"] == "kube-system"

    def granted(rules: list[dict[str, object]]) -> set[tuple[str, str, str]]:
        return {
            (group, res, verb)
            for rule in rules
            for group in rule["apiGroups"]  # type: ignore[attr-defined]
            for res in rule["resources"]  # type: ignore[attr-defined]
            for verb in rule["verbs"]  # type: ignore[attr-defined]
        }

    cluster, namespaced = granted(role["rules"]), granted(lease_role["rules"])
    assert cluster | namespaced == rbac.allowed()
    assert namespaced == {("coordination.k8s.io", "leases", v) for v in ("get", "create", "update")}
    rules = [*role["rules"], *lease_role["rules"]]
    assert all("*" not in r["verbs"] and "*" not in r["resources"] for r in rules), "no wildcards"
    named = {
        r["resources"][0]: (r["resourceNames"], r["verbs"]) for r in role["rules"] if "resourceNames" in r
    }
    assert named == {
        "deployments": (["volcano-scheduler"], ["get"]),
        "leases": (["koord-scheduler"], ["get"]),
    }, "other schedulers' objects only by name, only get: the hand-off's default rules"
    assert not [r for r in role["rules"] if r["resources"] == ["leases"] and "resourceNames" not in r]
