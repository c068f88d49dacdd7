"""The short form of a verdict: what conditions and Events carry, bounded at any cluster size.

The engine's message is the one `explain` and `simulate -o json` print whole. In Koordinator's
wording it lists every domain of the gang's tier (`topology topologyNode <domain>: <slots>`,
one entry per NVLink domain: 60k characters at 10,000 nodes), and a condition cut at 4,096
would lose the part that matters, the preemption clause and the best place per tier. Users'
tools read conditions and Events, so those get this form instead, as kube-scheduler aggregates
its "0/N nodes are available: 3 Insufficient cpu, ..." per reason:

* a listing of more than `LISTED` domains becomes their count, the most any of them offers and
  the best few by name (`1250 domains offer at most 7 of 16 slots (nvl-12: 7, nvl-3: 6, ...)`);
* everything else (the counts per filter reason, the preemption clause) stays as it was;
* the whole is capped at `LIMIT` characters, a last guard that cuts at a clause boundary and
  says so.

`preempting_message` puts first, before the short message, what a preempting gang's plan takes
and why those pods (`PreemptionPlan.describe`): the PodGroup's `Preempting` condition.

`volcano_message` adds Volcano's own head, `<pending>/<members> tasks in gang unschedulable: `,
as its gang plugin writes it on the PodGroup's Unschedulable condition.
"""

from __future__ import annotations

import re

from translations.topology import natural_key

LISTED = 3
"""Domains a short listing names by name."""
LIMIT = 1024
"""The most characters a short message has (the PodGroup's brief comes on top of it): an
Event's note is at most 1 KiB, and a gang member's message quotes its first member's whole
(Koordinator's wording, about 600 characters for the seed's gang)."""
BRIEF_LIMIT = 240
"""The most characters of `explain`'s brief (the best domain per tier, the tier limit)."""

_ENTRY = r"topology topologyNode [^:;,]+: \d+"
_LISTING = re.compile(rf"{_ENTRY}(?:;{_ENTRY})*")
_ONE = re.compile(r"topology topologyNode (?P<name>[^:;,]+): (?P<slots>\d+)")
_SLOTS = re.compile(r"desiredOfferSlot: (\d+)")


def short_message(message: str) -> str:
    """`message` with its per-domain listing summarised and its length bounded (module doc)."""
    wanted = _SLOTS.search(message)
    out = _LISTING.sub(lambda m: _summary(m.group(0), wanted.group(1) if wanted else None), message)
    return cap(out, LIMIT)


def _summary(listing: str, wanted: str | None) -> str:
    entries = [(m["name"], int(m["slots"])) for m in _ONE.finditer(listing)]
    if len(entries) <= LISTED:
        return listing
    best = sorted(entries, key=lambda e: (-e[1], natural_key(e[0])))
    named = ", ".join(f"{name}: {slots}" for name, slots in best[:LISTED])
    of = f" of {wanted} slots" if wanted else " slots"
    return f"{len(entries)} domains offer at most {best[0][1]}{of} ({named}, ...)"


def cap(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters; else its longest prefix that ends a clause
    (`; `, `, ` or `. `) within the limit, closed by a note that the rest is in `explain`."""
    if len(text) <= limit:
        return text
    note = " ... (whole: topobridge explain)"
    room = text[: limit - len(note)]
    cut = max(room.rfind("; "), room.rfind(", "), room.rfind(". "))
    return (room[:cut] if cut > limit // 2 else room) + note


def with_brief(message: str, brief: str) -> str:
    """The short message, and `explain`'s brief in brackets when there is one."""
    short = short_message(message)
    return f"{short} [{cap(brief, BRIEF_LIMIT)}]" if brief else short


def preempting_message(message: str, clause: str) -> str:
    """A preempting gang's condition: what its plan takes and why (`PreemptionPlan.describe`),
    first, so the cap never cuts it, then the attempt's short message."""
    return cap(f"{clause}. {short_message(message)}", LIMIT)


def volcano_message(pending: int, members: int, message: str) -> str:
    """Volcano's gang plugin's wording for an Unschedulable PodGroup."""
    return f"{pending}/{members} tasks in gang unschedulable: {message}"
