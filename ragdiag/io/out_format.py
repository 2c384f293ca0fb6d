"""One rule for every result ``--out``: ``--format`` when given, else the file's suffix picks the
format (``.json`` → JSON, ``.csv`` → CSV, ``.txt`` / ``.md`` → the text table), else JSON (a
file without a known suffix is read by programs more often than by people)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ragdiag.errors import RagdiagError

SUFFIX_FORMATS = {".json": "json", ".csv": "csv", ".txt": "table", ".md": "table"}
DEFAULT_FILE_FORMAT = "json"


def out_format(out: Path, fmt: str | None, available: tuple[str, ...] = ("table", "json", "csv"),
               flag: str = "--out") -> str:
    """The format written to ``out``: ``fmt`` (an explicit ``--format``), else by suffix, else JSON;
    a suffix naming a format this command cannot write is refused before any work."""
    if fmt is not None:
        return fmt
    chosen = SUFFIX_FORMATS.get(Path(out).suffix.lower(), DEFAULT_FILE_FORMAT)
    if chosen not in available:
        names = {"table": ".txt/.md", "json": ".json", "csv": ".csv"}
        raise RagdiagError(f"{flag} {out}: this command writes no {chosen.upper() if chosen != 'table' else 'table'} "
                           f"file; use {' or '.join(names[f] for f in available)} (or --format)")
    return chosen


def screen_format(fmt: str | None, out: Path | None = None, quiet: bool = False) -> str | None:
    """What the terminal shows: the ``--format`` asked (the table by default), with or without
    ``--out`` — writing a file never hides the result; nothing under ``--quiet`` with ``--out``."""
    if out is not None and quiet:
        return None
    return fmt or "table"


def wrote_line(out: Path) -> str:
    """The one line every command prints (on stderr) for the result file it wrote."""
    return f"wrote {out}"


def write_result(out: Path, fmt: str | None, texts: Mapping[str, Callable[[], str]],
                 inputs: Iterable[Path | None] = (), flag: str = "--out") -> str:
    """Write a command's result to ``out`` in the format :func:`out_format` picks among the ones
    ``texts`` can render (``{"json": …, "csv": …, "table": …}``, each called only when chosen),
    through the atomic writer that refuses to overwrite an input; returns the format written."""
    from ragdiag.io.writer import write_text

    kind = out_format(out, fmt, tuple(texts), flag)
    write_text(out, texts[kind](), inputs=[p for p in inputs if p is not None])
    return kind
