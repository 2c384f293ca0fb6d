"""``ragdiag report RESULT... --out report.html``: read and classify the result files, render one
section each (:mod:`ragdiag.report.html.build`) and write the self-contained page."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ragdiag.report.html.page import Section


@dataclass
class ReportRequest:
    inputs: list[Path]
    out: Path
    title: str = "ragdiag report"


@dataclass
class ReportResult:
    """The page's sections (in reading order) and the notes on the files left out."""

    out: Path
    sections: list[Section]
    notes: list[str] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        """The section kinds in the order they first appear."""
        return list(dict.fromkeys(s.kind for s in self.sections))


def run(request: ReportRequest) -> ReportResult:
    from ragdiag.io.writer import guard_outputs, write_text
    from ragdiag.report.html.build import build_report

    guard_outputs([request.out], request.inputs)
    html, sections, notes = build_report(request.inputs, request.title)
    write_text(request.out, html, inputs=request.inputs)
    return ReportResult(request.out, sections, notes)
