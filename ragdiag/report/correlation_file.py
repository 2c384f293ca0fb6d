"""Writing a ``ragdiag correlate`` report to a file: the format from ``--format`` or the suffix,
through the one atomic writer, never over an input."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ragdiag.io.writer import PathLike, guard_outputs, write_text
from ragdiag.report.correlate_report import render_text

FORMATS = ("table", "json", "csv")


def output_format(out: Path, fmt: str) -> str:
    """The format written to ``out``: ``fmt``, except that ``table`` follows a .json/.csv suffix."""
    if fmt == "table" and out.suffix in (".json", ".csv"):
        return out.suffix[1:]
    return fmt


def write_correlation(report: dict, out: PathLike, fmt: str, inputs: Iterable[PathLike | None] = ()) -> Path:
    """Write ``report`` to ``out`` (table text, JSON or CSV) atomically; refuses an ``out`` that is an input."""
    out = Path(out)
    inputs = list(inputs)
    guard_outputs([out], inputs)
    return write_text(out, render_text(report, output_format(out, fmt)), inputs=inputs)
