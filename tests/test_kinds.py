"""One table of kinds: CRD generation, the controller's resources and the admission registry
agree on every kind's group, version, plural, scope and status subresource."""

from __future__ import annotations

from controller import resources
from translations import kinds
from translations.crdgen import CRDS
from webhooks.rules.registry import KINDS, MUTATING_KINDS


def _key(group: str, kind: str) -> tuple[str, str]:
    return (group, kind)


def test_every_crd_is_a_custom_kind_of_the_table() -> None:
    assert [c.api for c in CRDS] == list(kinds.CUSTOM_KINDS)
    for crd in CRDS:
        assert (crd.group, crd.version, crd.kind, crd.plural, crd.scope) == (
            crd.api.group,
            crd.api.version,
            crd.api.kind,
            crd.api.plural,
            crd.api.scope,
        )


def test_every_validated_kind_is_in_the_table_and_agrees() -> None:
    table = {_key(k.group, k.kind): k for k in kinds.ALL_KINDS}
    assert {_key(k.group, k.kind) for k in KINDS} == set(table)
    for entry in KINDS:
        api = table[_key(entry.group, entry.kind)]
        assert (entry.versions[0], entry.resource, entry.namespaced, entry.scope) == (
            api.version,
            api.plural,
            api.namespaced,
            api.scope,
        )
    for mutating in MUTATING_KINDS:
        assert mutating.api in kinds.ALL_KINDS


def test_controller_resources_of_the_table_agree() -> None:
    by_key = {
        _key(r.group, r.kind): r
        for r in vars(resources).values()
        if isinstance(r, resources.Resource) and r.version == kinds_version(r)
    }
    for api in kinds.ALL_KINDS:
        resource = by_key[_key(api.group, api.kind)]
        assert resource == resources.Resource.of(api)
        assert (resource.plural, resource.namespaced, resource.status_subresource) == (
            api.plural,
            api.namespaced,
            api.status_subresource,
        )


def kinds_version(resource: resources.Resource) -> str:
    """The version the table gives the resource's kind ('' when the kind is not in it)."""
    for api in kinds.ALL_KINDS:
        if (api.group, api.kind) == (resource.group, resource.kind):
            return api.version
    return ""
