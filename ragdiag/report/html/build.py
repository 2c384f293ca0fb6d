"""Assemble the report: collect and classify inputs, render one section each, wrap them in the page."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from ragdiag import __version__
from ragdiag.report.html.inputs import collect
from ragdiag.report.html.page import Section, page
from ragdiag.report.html.sections import render

ORDER = ("compare", "triage", "correlate", "calibrate", "evaluate", "dynamic-k", "clq", "robustness", "sweep", "probe-names",
         "probe-names-queries", "probe-noise", "corpus-run", "llm-run", "graded", "plot")


def build_report(paths: list[Path], title: str = "ragdiag report") -> tuple[str, list[Section], list[str]]:
    """The HTML text, its sections (in reading order: verdicts first, plots last) and notes on skipped files."""
    inputs, notes = collect(paths)
    inputs.sort(key=lambda item: ORDER.index(item.kind))
    sections = [render(item) for item in inputs]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    subtitle = f"{len(sections)} results from {', '.join(str(p) for p in paths)} · ragdiag {__version__} · {stamp}"
    return page(title, subtitle, sections), sections, notes
