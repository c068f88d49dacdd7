"""What a translation did with each part of its source: carried over, defaulted, refused.

Every translation returns one `TranslationReport` beside its output, so nothing is lost
silently: a field the target cannot hold is either a `refused` line (harmless to drop, such
as a timeout the target has no field for) or a typed error (it would change placement).
The CLI prints the lines to stderr; the controller turns them into conditions and Events.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["carried over", "defaulted", "refused"]


@dataclass(frozen=True, slots=True)
class ReportLine:
    outcome: Outcome
    text: str


@dataclass
class TranslationReport:
    """The lines of one translation, in the order they were decided."""

    subject: str
    """The source object, e.g. `LeaderWorkerSet default/llm`."""
    target: str
    """The dialect translated into, e.g. `Volcano`."""
    lines: list[ReportLine] = field(default_factory=list)

    def carry(self, text: str) -> None:
        self.lines.append(ReportLine("carried over", text))

    def default(self, text: str) -> None:
        self.lines.append(ReportLine("defaulted", text))

    def refuse(self, text: str) -> None:
        self.lines.append(ReportLine("refused", text))

    def extend(self, other: TranslationReport) -> None:
        self.lines.extend(other.lines)

    def of(self, outcome: Outcome) -> list[str]:
        return [line.text for line in self.lines if line.outcome == outcome]

    @property
    def carried(self) -> list[str]:
        return self.of("carried over")

    @property
    def defaulted(self) -> list[str]:
        return self.of("defaulted")

    @property
    def refused(self) -> list[str]:
        return self.of("refused")

    def render(self) -> Iterator[str]:
        """`<subject> -> <target>: <outcome>: <text>`, one line each."""
        for line in self.lines:
            yield f"{self.subject} -> {self.target}: {line.outcome}: {line.text}"


def render_all(reports: Iterable[TranslationReport]) -> list[str]:
    return [text for report in reports for text in report.render()]


def inline(fields: Mapping[str, Any]) -> str:
    """`{mode: hard, highestTierAllowed: 2}`: a mapping as a report shows it, unset fields left out
    (never a Python repr: no quotes, no None)."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in fields.items() if v is not None) + "}"
