"""Scalars the Kubernetes API server accepts, drawn to sit on its edges.

Every strategy here produces only what kube-apiserver (or a CRD schema in `crds/`) would
store: names follow DNS-1123, label keys and values the label syntax, quantities the
quantity grammar. Within those rules they are hostile: long digit runs (past the 4,300
digits Python's `int()` accepts), 253-character names, quantities far beyond int64 in
scheduler units, and CRD quantity strings built to make a backtracking regular expression
work quadratically.
"""

from __future__ import annotations

from hypothesis import strategies as st

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

HUGE_DIGITS = "9" * 4301
"""One digit more than Python's default `sys.int_info.default_max_str_digits` allows `int()`."""
HUGE_ZERO_PERCENT = "0" * 4400 + "50%"
"""`IsValidPercent` (`^[0-9]+%$`) accepts it; it means 50%."""
STALLING_QUANTITY = "1" * 16000 + "e1.5"
"""Matches the CRD quantity pattern (decimal exponents are allowed there) but is no Kubernetes
quantity: refusing it must not take a backtracking regular expression quadratic time."""

_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
_LABEL_CHARS = _ALNUM + "ABCDEFGHIJKLMNOPQRSTUVWXYZ-_."


@st.composite
def dns_labels(draw: st.DrawFn, max_size: int = 63) -> str:
    """`[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most `max_size` characters."""
    shape = draw(st.sampled_from(["short", "digits", "long", "mixed"]))
    if shape == "short":
        return draw(st.sampled_from(["a", "x", "n1", "node-2", "node-10", "node-02", "0", "g-1", "g-01"]))
    if shape == "digits":
        return draw(st.text("0123456789", min_size=1, max_size=max_size))
    if shape == "long":
        return "a" + "-" * (max_size - 2) + "9" if max_size >= 2 else "a"
    body = draw(st.text(_ALNUM + "-", max_size=max_size - 2))
    first = draw(st.sampled_from(_ALNUM))
    last = draw(st.sampled_from(_ALNUM))
    return (first + body + last)[:max_size] if max_size > 1 else first


@st.composite
def dns_subdomains(draw: st.DrawFn, max_size: int = 253) -> str:
    """DNS-1123 subdomains: dot-joined labels, at most `max_size` characters."""
    shape = draw(st.sampled_from(["label", "dotted", "digits", "longest"]))
    if shape == "label":
        return draw(dns_labels(min(63, max_size)))
    if shape == "digits":  # the longest digit run a name can carry
        return "n" + "9" * (max_size - 1)
    if shape == "longest":
        parts = ["a" * 63] * 3 + ["b" * (max_size - 3 * 64)]
        return ".".join(parts)[:max_size]
    labels = draw(st.lists(dns_labels(20), min_size=2, max_size=6))
    out = ".".join(labels)
    return out[:max_size].rstrip(".-") or "a"


def names() -> st.SearchStrategy[str]:
    """Object names (DNS-1123 subdomains), ordinary ones often, so names collide."""
    return st.one_of(
        st.sampled_from(["node-1", "node-2", "node-10", "train", "g-1", "g-01", "default", "0"]),
        dns_subdomains(),
    )


@st.composite
def label_names(draw: st.DrawFn) -> str:
    """The name part of a label key: `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, <= 63."""
    body = draw(st.text(_LABEL_CHARS, max_size=61))
    return draw(st.sampled_from(_ALNUM)) + body + draw(st.sampled_from(_ALNUM)) if body else "k"


@st.composite
def label_keys(draw: st.DrawFn) -> str:
    """Label (and annotation) keys: an optional DNS-subdomain prefix and a name."""
    known = [
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "network.topology.nvidia.com/spine",
        "network.topology.nvidia.com/block",
        "app",
    ]
    if draw(st.booleans()):
        return draw(st.sampled_from(known))
    name = draw(label_names())
    if draw(st.booleans()):
        return f"{draw(dns_subdomains(200))}/{name}"
    return name


@st.composite
def label_values(draw: st.DrawFn) -> str:
    """Label values: empty, or `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]` up to 63."""
    shape = draw(st.sampled_from(["empty", "short", "digits", "any"]))
    if shape == "empty":
        return ""
    if shape == "short":
        return draw(st.sampled_from(["a", "s0", "s1", "b-2", "b-10", "true", "false", "1"]))
    if shape == "digits":
        return draw(st.text("0123456789", min_size=1, max_size=63))
    return draw(label_names())


def annotation_values(max_size: int = 64) -> st.SearchStrategy[str]:
    """Annotation values: any text (the API server limits only the total, 256 KiB), with the
    digit runs and Unicode digits (`²`, `٣`) that a careless `int()` trips on."""
    return st.one_of(
        st.text(max_size=max_size),
        st.sampled_from(["", "1", "0", "-1", "²", "٣", "1²", "00050", HUGE_DIGITS, "x" + HUGE_DIGITS]),
    )


SMALL_QUANTITIES = ("0", "1", "2", "100m", "500m", "1Gi", "32Gi", "8", "1k", "2.5", "1e3")
HUGE_QUANTITIES = (
    "10P",
    "5Ei",
    "8Ei",
    "999E",
    "1e18",
    "1e30",
    "9223372036854775807",
    "9223372036854775808",
    "123456789012345678901234567890",
    "1" + "0" * 60,
    "100000000000000000000000000000Ei",
)


def pod_quantities() -> st.SearchStrategy[str]:
    """Quantities in a Pod or Node as the API server stores them: small ones and absurd ones
    it still accepts (it caps neither digits nor magnitude)."""
    return st.one_of(
        st.sampled_from(SMALL_QUANTITIES),
        st.sampled_from(HUGE_QUANTITIES),
        st.integers(0, 10**40).map(str),
        st.builds(
            lambda n, s: f"{n}{s}", st.integers(0, 10**6), st.sampled_from(["m", "k", "Ki", "Mi", "P", "Ei"])
        ),
    )


def crd_quantities() -> st.SearchStrategy[str | int]:
    """Values a CRD's int-or-string quantity field (`minResources`) accepts: anything the
    schema's pattern matches, which allows decimal exponents Kubernetes itself refuses."""
    return st.one_of(
        pod_quantities(),
        st.integers(0, INT64_MAX),
        st.sampled_from(["1e1.5", "-1", "+1", ".5", "1.", STALLING_QUANTITY, "1" * 5000]),
    )


def timestamps() -> st.SearchStrategy[str]:
    return st.sampled_from(["2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z", "1970-01-01T00:00:00Z"])
