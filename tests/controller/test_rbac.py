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


def scan() -> dict[tuple[str, str, str], list[str]]:
    """(group, resource, verb) -> where in the code it is used."""
    found: dict[tuple[str, str, str], list[str]] = {}

    def add(key: tuple[str, str, str], where: str) -> None:
        found.setdefault(key, []).append(where)

    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent)
        if rel.parts[1] == "placer" or path.name == "kube.py":
            continue  # the pure engine makes no calls; kube.py defines the verbs
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == "watches"
                and isinstance(node.value, ast.Dict)
            ):
                # A reconciler's declared informers: the manager lists and watches each.
                for value in node.value.values:
                    if (res := _resource(value)) is not None:
                        add(_key(res, None, "list"), f"{rel}:{node.lineno}")
                        add(_key(res, None, "watch"), f"{rel}:{node.lineno}")
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            where = f"{rel}:{node.lineno}"
            args = node.args
            if name in VERB_OF and args and (res := _resource(args[0])) is not None:
                for sub in _subresource(node, res):
                    add(_key(res, sub, VERB_OF[name]), where)
            elif (name in ("of", "informer_of") and args and (res := _resource(args[0])) is not None) or (
                name == "Informer" and len(args) > 1 and (res := _resource(args[1])) is not None
            ):
                add(_key(res, None, "list"), where)
                add(_key(res, None, "watch"), where)
            elif (
                name == "first_served"
                and args
                and isinstance(args[0], ast.Name)
                and args[0].id in VERSION_CHOICES
            ):
                for res in VERSION_CHOICES[args[0].id]:
                    add(_key(res, None, "list"), where)
                    add(_key(res, None, "watch"), where)
            elif name == "served_resources":
                # Its result is what the scheduler's informers watch (`GangScheduler.attach`): one
                # version of each kind of the scheduler's table, whichever the cluster serves.
                for read in SCHEDULER_KINDS:
                    for res in resources.versions_of(read):
                        add(_key(res, None, "list"), where)
                        add(_key(res, None, "watch"), where)
            elif name == "upsert_condition" and len(args) > 1 and (res := _resource(args[1])) is not None:
                add(_key(res, "status" if res.status_subresource else None, "patch"), where)
            elif name == "bind" and isinstance(fn, ast.Attribute):
                add(_key(resources.PODS, "binding", "create"), where)
            elif name in ("patch_pod_status", "set_pod_condition") and isinstance(fn, ast.Attribute):
                add(_key(resources.PODS, "status", "patch"), where)
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
