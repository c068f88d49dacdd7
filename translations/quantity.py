"""Kubernetes resource quantities (`500m`, `32Gi`, `1e3`) as exact numbers.

The scheduler compares requests in integer units: CPU in millicores, everything else in
whole units rounded up, as kube-scheduler does.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

from translations.errors import InvalidSpecError

_SUFFIX: dict[str, Decimal] = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$")

Quantity = int | float | str


def parse_quantity(value: Quantity, *, field: str = "quantity") -> Decimal:
    """Exact value of a quantity; raises InvalidSpecError naming `field` when malformed."""
    if isinstance(value, bool):
        raise InvalidSpecError(field, value, f'Invalid value: {value!r}: quantities must match the regular expression "{_QUANTITY.pattern}"')
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidSpecError(field, value, f"Invalid value: {value!r}: must be a finite number")
        return Decimal(str(value))
    if not isinstance(value, str):
        raise InvalidSpecError(field, value, f"Invalid value: {value!r}: must be a quantity string or number")
    m = _QUANTITY.match(value.strip())
    if not m or value != value.strip():
        raise InvalidSpecError(
            field, value, f'Invalid value: "{value}": quantities must match the regular expression '
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    number, exponent, suffix = m.groups()
    try:
        base = Decimal(number)
        if exponent:
            return base * (Decimal(10) ** int(exponent[1:]))
        return base * _SUFFIX[suffix or ""]
    except (InvalidOperation, OverflowError):
        raise InvalidSpecError(field, value, f'Invalid value: "{value}": out of range') from None


def to_scheduler_units(resource: str, value: Quantity, *, field: str = "quantity") -> int:
    """Integer units the placer compares: millicores for cpu, rounded-up units otherwise."""
    exact = parse_quantity(value, field=field)
    if resource == "cpu":
        exact = exact * 1000
    return int(math.ceil(exact))
