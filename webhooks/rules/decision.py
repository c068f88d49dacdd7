"""What a rule says about one object: allowed or denied, why, and what the user should know."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from webhooks.rules.fielderrors import FieldError, aggregate


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict of a rule.

    Denied exactly when there are errors. Warnings travel either way (they reach `kubectl`
    through AdmissionResponse.warnings). `patch` is a JSON patch for mutating use; the
    validating rules leave it None.
    """

    errors: tuple[FieldError, ...] = ()
    warnings: tuple[str, ...] = ()
    patch: list[dict[str, Any]] | None = field(default=None, compare=False)

    @property
    def allowed(self) -> bool:
        return not self.errors

    @property
    def message(self) -> str:
        """The denial message: every error, aggregated like apimachinery does ('' when allowed)."""
        return aggregate(self.errors) if self.errors else ""

    @classmethod
    def of(cls, errors: Iterable[FieldError] = (), warnings: Iterable[str] = ()) -> Decision:
        if not errors and not warnings:  # empty lists or tuples: the common verdict, made once
            return ALLOW
        found, said = tuple(errors), tuple(dict.fromkeys(warnings))
        return cls(found, said) if found or said else ALLOW

    def merged(self, other: Decision) -> Decision:
        """Both verdicts as one (the patches are dropped: only validating rules merge)."""
        if other is ALLOW and self.patch is None:  # the common case: one dialect had nothing to say
            return self
        if self is ALLOW and other.patch is None:
            return other
        return Decision.of((*self.errors, *other.errors), (*self.warnings, *other.warnings))


ALLOW = Decision()
