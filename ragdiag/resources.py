"""Locate the bundled data folders (``probes/``, ``prompts/``, ``fixtures/``).

In a source checkout (editable install) they sit at the repository root; in an installed wheel
they are packaged under ``ragdiag/_data/`` (hatch force-include). Code never resolves them
relative to the current directory.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED_FOLDERS = ("probes", "prompts", "fixtures")


def resource_path(folder: str, *parts: str) -> Path:
    """Path of ``folder/parts...`` among the bundled data folders, wheel or checkout."""
    if folder not in BUNDLED_FOLDERS:
        raise ValueError(f"unknown bundled folder {folder!r}; expected one of {BUNDLED_FOLDERS}")
    for root in (_PACKAGE_DIR / "_data", _PACKAGE_DIR.parent):
        candidate = root / folder
        if candidate.is_dir():
            return candidate.joinpath(*parts)
    raise FileNotFoundError(f"bundled folder '{folder}' not found next to {_PACKAGE_DIR}")
