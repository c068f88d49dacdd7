"""Parsed models made smaller for a cache that holds a large cluster's objects.

A pydantic model carries, beside its fields, the set of names it was given and a dict of the
unknown fields it kept: at 325,000 pods of five models each, about a fifth of what the pods
take, though nearly every pod's are alike (the same names given, no unknown field). `compact`
walks a parsed object and has each of its models share one read-only set per distinct set of
names, and one read-only empty dict when it kept nothing unknown, and interns the text values
of its string maps (labels, resource quantities), which repeat from pod to pod.

A model compacted already is passed over with everything under it: models are replaced, never
changed, so a part shared by the model stored before (a pod's metadata and containers, when a
bind replaces only its spec; the parsed template every pod of a Job shares) is walked once, not
once per pod or per update. (A model assigned to in place gets its own set back
(`KubeModel.__setattr__`) and is compacted again when reached from a model not compacted yet;
reached only through compacted ones, it keeps its own: that costs memory, never a reading.)

Nothing a reader sees changes: the shared set and dict are a `set` and a `dict` (dumps,
`model_fields_set` and equality read them as before), a copy of a model gets its own
(`copy.copy`, `model_copy`), and `KubeModel.__setattr__` gives a model its own before an
assignment records a name; anything else that tried to change a shared one raises instead of
changing every model sharing it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, NoReturn

from translations._base import KubeModel


class SharedNames(set[str]):
    """The names given to every model that shares it; read-only (see the module docstring)."""

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("the names of a compacted model are shared; copy the model to change it")

    add = discard = remove = pop = clear = update = _refuse
    difference_update = intersection_update = symmetric_difference_update = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[type[set[str]], tuple[list[str]]]:
        return set, (list(self),)


class SharedEmpty(dict[str, Any]):
    """The unknown fields of every model that kept none; read-only, always empty."""

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("the unknown fields of a compacted model are shared; copy the model to change it")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _refuse
    __ior__ = _refuse

    def __copy__(self) -> dict[str, Any]:
        return {}

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {}

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[()]]:
        return dict, ()


_PLAIN = frozenset({type(None), str, int, bool, float})
_NAMES: dict[frozenset[str], SharedNames] = {}
"""One shared set per distinct set of names (a few dozen in a cluster)."""
_EMPTY = SharedEmpty()


def compact(obj: KubeModel) -> None:
    """Share `obj`'s and its sub-models' bookkeeping and intern its string maps' values, in
    place (see the module docstring); a model already compacted, and all under it, is left as
    it is."""
    todo: list[KubeModel] = [obj]
    while todo:
        model = todo.pop()
        if type(model.__pydantic_fields_set__) is SharedNames:
            continue  # compacted, and what it holds with it
        _share(model)
        for value in model.__dict__.values():
            kind = type(value)
            if kind in _PLAIN:  # most fields: unset, or a scalar
                continue
            if kind is dict:
                _intern_values(value)
            elif kind is list:
                todo.extend(_models(value))
            elif isinstance(value, KubeModel):
                todo.append(value)


def compact_own(*models: KubeModel) -> None:
    """Share each of `models`' own bookkeeping, and nothing under it: for models replaced
    from compacted ones whose every other part is the compacted one's (a pod bound, and its
    spec: its node is a string), where `compact` would walk each field to find just that."""
    for model in models:
        if type(model.__pydantic_fields_set__) is not SharedNames:
            _share(model)


def _share(model: KubeModel) -> None:
    names = model.__pydantic_fields_set__
    if type(names) is set:
        shared = _NAMES.get(frozenset(names))
        if shared is None:
            shared = _NAMES.setdefault(frozenset(names), SharedNames(names))
        object.__setattr__(model, "__pydantic_fields_set__", shared)
    extra = model.__pydantic_extra__
    if type(extra) is dict and not extra:
        object.__setattr__(model, "__pydantic_extra__", _EMPTY)


def _models(items: Iterable[object]) -> Iterable[KubeModel]:
    return (x for x in items if isinstance(x, KubeModel))


def _intern_values(mapping: dict[Any, Any]) -> None:
    """Text values interned in place (same keys, same order, equal values)."""
    for key, value in mapping.items():
        if type(value) is str and len(value) <= _INTERNED_LENGTH:
            mapping[key] = sys.intern(value)


_INTERNED_LENGTH = 64
"""Longer values (annotations' JSON, say) are rarely shared; they are left as they are."""
