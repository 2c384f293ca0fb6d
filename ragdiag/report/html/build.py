"""Assemble the report from the inputs the command read: one section each, wrapped in the page."""

from __future__ import annotations

from datetime import UTC, datetime

from ragdiag import __version__
from ragdiag.report.html.inputs import Input
from ragdiag.report.html.page import Section, page
from ragdiag.report.html.sections import render

ORDER = ("compare", "triage", "correlate", "calibrate", "evaluate", "dynamic-k", "clq", "robustness", "sweep", "probe-names",
         "probe-names-queries", "probe-noise", "corpus-run", "llm-run", "graded", "plot")


def build_page(inputs: list[Input], sources: list[str], title: str = "ragdiag report") -> tuple[str, list[Section]]:
    """The HTML text and its sections, in reading order (verdicts first, plots last); ``sources``:
    the paths the inputs were given as (named under the title)."""
    inputs = sorted(inputs, key=lambda item: ORDER.index(item.kind))
    sections = [render(item) for item in inputs]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    noun = "result" if len(sections) == 1 else "results"
    subtitle = f"{len(sections)} {noun} from {', '.join(sources)} · ragdiag {__version__} · {stamp}"
    return page(title, subtitle, sections), sections
