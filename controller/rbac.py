"""The RBAC topobridge needs: exactly the verbs its code uses, per resource, each as narrow
as the code allows.

`USES` is the single declaration of what is used: the fallback scheduler's list/watch of every
kind of its table (`SCHEDULER_READS`, derived from `translations.kinds.SCHEDULER_KINDS`, as its
informers are) and the other calls; `NARROWED` says where a use is granted less than
cluster-wide:
* its own leader-election Lease lives in one namespace (the release's), so get/create/update
  on Leases is a Role there (`lease_role`); cluster-wide it may only `get` the Leases the
  scheduler hand-off watches (koord-scheduler's), by name;
* Deployments are read only to see whether volcano-scheduler is ready: by name only.
The names are those of the hand-off's default rules (`controller.handoff.default_rules`); the
chart adds the ones its `args.handoff` and `args.volcano-deployment` name.
`cluster_role()` and `lease_role()` render them. Two tests keep it honest:
a static scan of every `kube.<verb>(RESOURCE, ...)` call in `controller/` (and of
`served_resources(...)`, whose result the scheduler's informers watch) must find the same set
(no verb missing, none extra), and the integration tests run the controller
impersonating a ServiceAccount bound to these roles, so the API server itself refuses any
call they do not allow.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import yaml

from controller import resources as r
from controller.kube import Verb
from translations.kinds import SCHEDULER_KINDS

SERVICE_ACCOUNT = "topobridge"
NAMESPACE = "topobridge-system"
ROLE_NAME = "topobridge"

Use = tuple[r.Resource, str | None]

READ: frozenset[Verb] = frozenset({"list", "watch"})
SCHEDULER_READS: dict[Use, frozenset[Verb]] = {
    (r.versions_of(read)[0], None): READ for read in SCHEDULER_KINDS
}
"""The fallback scheduler's informers: every kind of its table (`translations.kinds.
SCHEDULER_KINDS`), whichever version `resources.served_resources` picks (a rule names no
version)."""

_OTHER_USES: dict[Use, frozenset[Verb]] = {
    # leader pods and placement
    (r.PODS, None): frozenset({"list", "watch", "get", "delete", "patch"}),
    (r.PODS, "binding"): frozenset({"create"}),
    (r.PODS, "status"): frozenset({"patch"}),
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
    # Kubernetes' own PodGroups: kube-scheduler's conditions
    (r.K8S_PODGROUPS, "status"): frozenset({"patch"}),
}
USES: dict[Use, frozenset[Verb]] = {
    use: SCHEDULER_READS.get(use, frozenset()) | _OTHER_USES.get(use, frozenset())
    for use in {**SCHEDULER_READS, **_OTHER_USES}
}


@dataclass(frozen=True)
class Narrowed:
    """A use granted less than cluster-wide."""

    in_lease_namespace: frozenset[Verb] = frozenset()
    """Verbs granted by the Role in the lease namespace."""
    by_name: frozenset[Verb] = frozenset()
    """Verbs granted cluster-wide on `names` only."""
    names: tuple[str, ...] = ()


def _handoff_names(kind: str) -> tuple[str, ...]:
    from controller.handoff import default_rules

    return tuple(sorted({rule.name for rule in default_rules() if rule.kind == kind}))


NARROWED: dict[Use, Narrowed] = {
    (r.LEASES, None): Narrowed(
        in_lease_namespace=frozenset({"get", "create", "update"}),
        by_name=frozenset({"get"}),
        names=_handoff_names("lease"),
    ),
    (r.DEPLOYMENTS, None): Narrowed(by_name=frozenset({"get"}), names=_handoff_names("deployment")),
}


def allowed() -> set[tuple[str, str, str]]:
    """(group, resource[/subresource], verb) triples the role grants."""
    return {
        (res.group, f"{res.plural}/{sub}" if sub else res.plural, verb)
        for (res, sub), verbs in USES.items()
        for verb in verbs
    }


def _rules(grants: list[tuple[Use, frozenset[Verb], tuple[str, ...]]]) -> list[dict[str, Any]]:
    """One rule per (group, verbs, names) with its resources, sorted for stable diffs."""
    grouped: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[str]] = defaultdict(list)
    for (res, sub), granted, names in grants:
        if granted:
            key = (res.group, tuple(sorted(granted)), names)
            grouped[key].append(f"{res.plural}/{sub}" if sub else res.plural)
    rules = []
    for (group, verb_list, names), resources in sorted(grouped.items()):
        rule: dict[str, Any] = {"apiGroups": [group], "resources": sorted(resources)}
        if names:
            rule["resourceNames"] = list(names)
        rule["verbs"] = list(verb_list)
        rules.append(rule)
    return rules


def cluster_rules() -> list[dict[str, Any]]:
    """The ClusterRole's rules: every use cluster-wide, but the narrowed ones by name only."""
    grants: list[tuple[Use, frozenset[Verb], tuple[str, ...]]] = []
    for use, verbs in USES.items():
        narrowed = NARROWED.get(use)
        if narrowed is None:
            grants.append((use, verbs, ()))
        else:
            grants.append((use, narrowed.by_name, narrowed.names))
    return _rules(grants)


def namespaced_rules() -> list[dict[str, Any]]:
    """The lease namespace's Role rules."""
    return _rules([(use, n.in_lease_namespace, ()) for use, n in NARROWED.items()])


def cluster_role(name: str = ROLE_NAME) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "topobridge"}},
        "rules": cluster_rules(),
    }


def lease_role(*, namespace: str, name: str = ROLE_NAME) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/name": "topobridge"},
        },
        "rules": namespaced_rules(),
    }


def lease_role_binding(
    *,
    namespace: str,
    name: str = ROLE_NAME,
    service_account: str = SERVICE_ACCOUNT,
    sa_namespace: str = NAMESPACE,
) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/name": "topobridge"},
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": sa_namespace}],
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


def render(
    *,
    service_account: str = SERVICE_ACCOUNT,
    namespace: str = NAMESPACE,
    lease_namespace: str = "kube-system",
) -> str:
    """ClusterRole + binding, and the Role + binding in the lease namespace (`--print-rbac`)."""
    docs = [
        cluster_role(),
        cluster_role_binding(service_account=service_account, namespace=namespace),
        lease_role(namespace=lease_namespace),
        lease_role_binding(
            namespace=lease_namespace, service_account=service_account, sa_namespace=namespace
        ),
    ]
    return "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)
