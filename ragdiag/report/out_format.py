"""The one ``--out`` rule: the suffix picks the format (.json, .csv, else the text table);
``--format`` given on the command line overrides it."""

from __future__ import annotations

from pathlib import Path

SUFFIX_FORMATS = {".json": "json", ".csv": "csv"}


def format_for(out: Path, given: str | None) -> str:
    """``given`` when the user named a format, else the one ``out``'s suffix stands for ('table' for text)."""
    if given is not None:
        return given
    return SUFFIX_FORMATS.get(out.suffix.lower(), "table")
