"""Writing a ``ragdiag correlate`` report to a file: the format from ``--format``, else the suffix,
through the one atomic writer, never over an input."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ragdiag.io.out_format import out_format
from ragdiag.io.writer import PathLike, guard_outputs, write_text
from ragdiag.report.correlate_report import render_text

FORMATS = ("table", "json", "csv")


def output_format(out: Path, fmt: str | None) -> str:
    """The format written to ``out``: an explicit ``--format``, else by suffix (:mod:`ragdiag.io.out_format`)."""
    return out_format(out, fmt)


def write_correlation(report: dict, out: PathLike, fmt: str | None, inputs: Iterable[PathLike | None] = ()) -> Path:
    """Write ``report`` to ``out`` (table text, JSON or CSV) atomically; refuses an ``out`` that is an input."""
    out = Path(out)
    inputs = list(inputs)
    guard_outputs([out], inputs)
    return write_text(out, render_text(report, output_format(out, fmt)), inputs=inputs)
