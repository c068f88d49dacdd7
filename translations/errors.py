"""Errors raised by pure code.

* TopobridgeError
  + InvalidSpecError        a user's object is malformed (.field_path, .value)
    - NotExpressibleError   valid, but the target dialect cannot say it (.target)
  + ScenarioError           an input file could not be read as Kubernetes objects
"""

from __future__ import annotations

from typing import Any


class TopobridgeError(Exception):
    """Base class of every error topobridge raises on purpose."""


class InvalidSpecError(TopobridgeError):
    """An object cannot be used as given; the message names the field and the value."""

    def __init__(self, field_path: str, value: Any, detail: str) -> None:
        self.field_path = field_path
        self.value = value
        self.detail = detail
        super().__init__(f"{field_path}: {detail}")


class NotExpressibleError(InvalidSpecError):
    """The source is valid but the target dialect has no way to express it."""

    def __init__(self, field_path: str, value: Any, detail: str, *, target: str) -> None:
        self.target = target
        super().__init__(field_path, value, f"not expressible in {target}: {detail}")


class ScenarioError(TopobridgeError):
    """An input document is not a Kubernetes object or list of them."""
