"""Kubernetes resource quantities (`500m`, `32Gi`, `1e3`) as exact numbers.

The scheduler compares requests in integer units: CPU in millicores, everything else in
whole units rounded up, as kube-scheduler does.

Bound: the API server accepts quantities of any size (`cpu: 10P` is 10^19 millicores, past
int64), while kube-scheduler, and the placer's numpy arrays, count in int64. Scheduler units
therefore saturate at `SCHEDULER_UNIT_BOUND` = 2^45 (35,184,372,088,832: 32 TiB of memory in
bytes, about 35 billion cores in millicores); a pod's summed request and a node's allocatable
saturate at the same bound. Values below it stay exact. 2^63 / 2^45 = 262,144 saturated values
add up without overflow: more than every pod (150,000) and node (5,000) Kubernetes supports in
one cluster, so no sum the placer forms (a node's used room, a domain's free room, a gang's
demand) can overflow. Saturation means "at least this much": a saturated request fits only a
node whose free room is saturated too (an empty saturated node), and a node with more than the
bound schedules as if it had exactly the bound.

Parsing is linear in the text: the pattern below has no two quantifiers that can split the
same digits between them (a 16,000-digit string that fails at its last character used to
take seconds), and no digit string is converted to an int beyond a fixed length.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal

from translations.errors import InvalidSpecError, render_value

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
_QUANTITY = re.compile(
    r"^([+-]?+(?:[0-9]++(?:\.[0-9]*+)?+|\.[0-9]++))(?:([eE][+-]?+[0-9]++)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?+$"
)
"""Possessive quantifiers: once a run of digits is read it is never split again, so a failing
match costs one pass. ASCII digits only, as Kubernetes reads them."""

SCHEDULER_UNIT_BOUND = 2**45
"""Scheduler units saturate here (see the module docstring)."""
_BOUND = Decimal(SCHEDULER_UNIT_BOUND)
_MAX_EXPONENT_DIGITS = 7
"""An exponent of more digits is beyond what Decimal can hold (Go refuses past int32)."""
_TINY_EXPONENT = 100_000

Quantity = str | int | float
"""A quantity as JSON gives it. The string comes first: most quantities are strings, and
pydantic's union tries the members in order until one matches exactly, so a string then
costs one check instead of three failed ones (a third of a container's parse)."""


def parse_quantity(value: Quantity, *, field: str = "quantity") -> Decimal:
    """Exact value of a quantity; raises InvalidSpecError naming `field` when malformed."""
    if isinstance(value, bool):
        raise InvalidSpecError(
            field, value, f"Invalid value: {render_value(value)}: must be a quantity string or number"
        )
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidSpecError(
                field, value, f"Invalid value: {render_value(value)}: must be a finite number"
            )
        return Decimal(str(value))
    if not isinstance(value, str):
        raise InvalidSpecError(
            field, value, f"Invalid value: {render_value(value)}: must be a quantity string or number"
        )
    m = _QUANTITY.match(value.strip())
    if not m or value != value.strip():
        raise InvalidSpecError(
            field,
            value,
            f"Invalid value: {render_value(value)}: quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        )
    number, exponent, suffix = m.groups()
    try:
        base = Decimal(number)
        if exponent:
            return base * (Decimal(10) ** _exponent(exponent[1:]))
        return base * _SUFFIX[suffix or ""]
    except ArithmeticError:  # decimal.Overflow
        raise InvalidSpecError(field, value, f"Invalid value: {render_value(value)}: out of range") from None


def _exponent(text: str) -> int:
    """`[+-]digits` as an int without converting a long digit string. Exponents past 10^7 read
    as 10^7 (Decimal then overflows: out of range); negative ones stop at -10^5, a tiny
    positive fraction that still rounds up to one unit, as Kubernetes rounds up below a nano."""
    digits = text.lstrip("+-").lstrip("0") or "0"
    exp = int(digits) if len(digits) <= _MAX_EXPONENT_DIGITS else 10**_MAX_EXPONENT_DIGITS
    return -min(exp, _TINY_EXPONENT) if text.startswith("-") else exp


def to_scheduler_units(resource: str, value: Quantity, *, field: str = "quantity") -> int:
    """Integer units the placer compares: millicores for cpu, rounded-up units otherwise."""
    try:
        return scheduler_units(resource, value)
    except InvalidSpecError as exc:
        raise InvalidSpecError(field, value, exc.detail) from None


def scheduler_units(resource: str, value: Quantity) -> int:
    """`to_scheduler_units` for a caller that names the field itself when the value is bad
    (its InvalidSpecError says `quantity`): one call fewer per quantity."""
    if isinstance(value, str) and len(value) > _CACHED_LENGTH:
        return _units(resource, value)
    return _cached_units(resource, value)


_CACHED_LENGTH = 64
"""Longer quantity strings are not cached: 4,096 of them could otherwise pin gigabytes."""


def _units(resource: str, value: Quantity) -> int:
    exact = parse_quantity(value)
    if resource == "cpu":
        exact = exact * 1000
    return saturate(math.ceil(exact)) if -_BOUND < exact < _BOUND else saturate(int(exact.copy_sign(_BOUND)))


# Every scheduling cycle recomputes each pod's requests, and a cluster uses a handful of
# distinct quantity strings; `typed` keeps True apart from 1 and 1.0 apart from 1.
_cached_units = functools.lru_cache(maxsize=4096, typed=True)(_units)


def saturate(units: int) -> int:
    """`units` clamped to [-SCHEDULER_UNIT_BOUND, SCHEDULER_UNIT_BOUND]: what any sum of scheduler
    units (a pod's containers, its overhead) is brought back to."""
    return max(-SCHEDULER_UNIT_BOUND, min(SCHEDULER_UNIT_BOUND, units))


_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_UP = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"))
_DECIMAL_DOWN = ((-3, "m"), (-6, "u"), (-9, "n"))


def is_binary(value: Quantity) -> bool:
    """True when a quantity is written with a power-of-two suffix (Kubernetes' BinarySI)."""
    return isinstance(value, str) and value.endswith(_BINARY_SUFFIXES)


def format_quantity(value: Decimal, *, binary: bool = False) -> str:
    """The canonical string Kubernetes prints for `value` (e.g. `8`, `500m`, `128Gi`, `2k`).

    BinarySI applies only to whole numbers of at least 1024 that a power of 1024 divides;
    anything else is printed in DecimalSI, as apimachinery's Quantity.String does.
    Fractions below a nano are rounded up, like the apiserver.
    """
    sign = "-" if value < 0 else ""
    v = abs(value)
    if binary and v == v.to_integral_value() and v >= 1024:
        n, i = int(v), 0
        while i < len(_BINARY_SUFFIXES) and n % 1024 == 0:
            n //= 1024
            i += 1
        return f"{sign}{_digits(n)}{_BINARY_SUFFIXES[i - 1] if i else ''}"
    if v == v.to_integral_value():
        n = int(v)
        for exp, suffix in _DECIMAL_UP:
            if n and n % (10**exp) == 0:
                return f"{sign}{_digits(n // 10**exp)}{suffix}"
        return f"{sign}{_digits(n)}"
    for exp, suffix in _DECIMAL_DOWN:
        scaled = v * (Decimal(10) ** -exp)
        if scaled == scaled.to_integral_value() or exp == -9:
            return f"{sign}{math.ceil(scaled)}{suffix}"
    raise AssertionError("unreachable")  # pragma: no cover


def _digits(n: int) -> str:
    """`str(n)`, also past the 4,300 digits `str()` refuses with a ValueError (a quantity of
    `1e4301` is one the API server stores): Decimal prints any number of them."""
    return str(n) if n < _STR_DIGITS_SAFE else format(Decimal(n), "f")


_STR_DIGITS_SAFE = 10**4000


def from_scheduler_units(resource: str, units: int, *, binary: bool = False) -> str:
    """Inverse of to_scheduler_units: millicores back to cores for cpu, then canonical form."""
    value = Decimal(units) / 1000 if resource == "cpu" else Decimal(units)
    return format_quantity(value, binary=binary)
