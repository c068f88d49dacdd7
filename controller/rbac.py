"""The ClusterRole topobridge needs: exactly the verbs its code uses, per resource.

`USES` is the single declaration; `cluster_role()` renders it. Two tests keep it honest:
a static scan of every `kube.<verb>(RESOURCE, ...)` call in `controller/` must find the
same set (no verb missing, none extra), and the integration tests run the controller
impersonating a ServiceAccount bound to this role, so the API server itself refuses any
call the role does not allow.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import yaml

from controller import resources as r
from controller.kube import Verb

SERVICE_ACCOUNT = "topobridge"
NAMESPACE = "topobridge-system"
ROLE_NAME = "topobridge"

USES: dict[tuple[r.Resource, str | None], frozenset[Verb]] = {
    # informers (list+watch), leader pods and placement
    (r.PODS, None): frozenset({"list", "watch", "get", "delete", "patch"}),
    (r.PODS, "binding"): frozenset({"create"}),
    (r.PODS, "status"): frozenset({"patch"}),
    (r.NODES, None): frozenset({"list", "watch"}),
    (r.PRIORITY_CLASSES, None): frozenset({"list", "watch"}),
    # reporting
    (r.EVENTS, None): frozenset({"create", "patch"}),
    # leader election
    (r.LEASES, None): frozenset({"get", "create", "update"}),
    # Volcano detection
    (r.CRDS, None): frozenset({"get"}),
    (r.DEPLOYMENTS, None): frozenset({"get"}),
    # translations
    (r.LEADERWORKERSETS, None): frozenset({"list", "watch"}),
    (r.LEADERWORKERSETS, "status"): frozenset({"patch"}),
    (r.VOLCANO_PODGROUPS, None): frozenset({"list", "watch", "get", "create", "patch", "delete"}),
    (r.HYPERNODES, None): frozenset({"list", "watch", "create", "patch", "delete"}),
    (r.CLUSTER_NETWORK_TOPOLOGIES, None): frozenset({"list", "watch"}),
    (r.CLUSTER_NETWORK_TOPOLOGIES, "status"): frozenset({"patch"}),
    (r.SIGS_PODGROUPS, None): frozenset({"list", "watch"}),
    # the fallback scheduler's view: gangs of every dialect, disruption budgets
    (r.X_PODGROUPS, None): frozenset({"list", "watch"}),
    (r.PDBS, None): frozenset({"list", "watch"}),
    # the GPU dialect's gangs: Jobs' annotations and parallelism
    (r.JOBS, None): frozenset({"list", "watch"}),
}


def allowed() -> set[tuple[str, str, str]]:
    """(group, resource[/subresource], verb) triples the role grants."""
    return {
        (res.group, f"{res.plural}/{sub}" if sub else res.plural, verb)
        for (res, sub), verbs in USES.items()
        for verb in verbs
    }


def cluster_role(name: str = ROLE_NAME) -> dict[str, Any]:
    """The ClusterRole, one rule per (group, verbs) with its resources, sorted for stable diffs."""
    by_group_verbs: dict[tuple[str, tuple[str, ...]], list[str]] = defaultdict(list)
    for (res, sub), verbs in USES.items():
        by_group_verbs[(res.group, tuple(sorted(verbs)))].append(f"{res.plural}/{sub}" if sub else res.plural)
    rules = [
        {"apiGroups": [group], "resources": sorted(names), "verbs": list(verbs)}
        for (group, verbs), names in sorted(by_group_verbs.items())
    ]
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "topobridge"}},
        "rules": rules,
    }


def cluster_role_binding(
    *, name: str = ROLE_NAME, service_account: str = SERVICE_ACCOUNT, namespace: str = NAMESPACE
) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "topobridge"}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
    }


def render(*, service_account: str = SERVICE_ACCOUNT, namespace: str = NAMESPACE) -> str:
    docs = [cluster_role(), cluster_role_binding(service_account=service_account, namespace=namespace)]
    return "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)
