"""Input and output paths checked before any work starts, each error naming its flag (issue 9).

The library writers check again when they write (``ragdiag.io.writer``); checking here first
means a bad ``--out``/``--plot``/``--out-dir`` costs no embedding, no index build, no LLM call.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from ragdiag.errors import RagdiagError
from ragdiag.io.writer import check_output_dir, check_output_path, guard_outputs

PLOT_SUFFIXES = (".png",)  # every plot writer saves PNG

Paths = Mapping[str, Optional[Path]]


def check_paths(*, inputs: Paths | None = None, outputs: Paths | None = None, plots: Paths | None = None,
                folders: Paths | None = None) -> None:
    """Refuse, naming the flag: a plot with an unknown image suffix; an output that is a folder,
    a device or unwritable; a folder option that is an existing file; an output that is an input
    (same path, symlink or hard link) or that another output also names."""
    inputs, outputs, plots, folders = inputs or {}, outputs or {}, plots or {}, folders or {}
    for flag, path in plots.items():
        if path is not None and path.suffix.lower() not in PLOT_SUFFIXES:
            raise RagdiagError(f"{flag} {path}: unknown image type '{path.suffix}'; plots are written as PNG, use a .png name")
    files = {flag: path for flag, path in {**outputs, **plots}.items() if path is not None}
    for flag, path in files.items():
        check_output_path(path, what=flag)
    for flag, path in folders.items():
        if path is not None:
            check_output_dir(path, what=flag)
    sources = [path for path in inputs.values() if path is not None]
    for flag, path in files.items():
        try:
            guard_outputs([path], sources)
        except RagdiagError as err:
            raise RagdiagError(f"{flag}: {err}") from None
    try:
        guard_outputs(files.values())
    except RagdiagError as err:
        raise RagdiagError(f"{' / '.join(files)}: {err}") from None


def not_found(flag: str, path: Path, data_env: str | None = None) -> str:
    """``--corpus X: not found``, naming an environment variable the path was meant to hold: one
    left unexpanded (``$RAGDIAG_DATA/scifact`` in quotes) or one the shell expanded to nothing
    (``/scifact`` when ``data_env``, e.g. ``$RAGDIAG_DATA``, is unset)."""
    import os
    import re

    text = str(path)
    message = f"{flag} {text}: not found"
    unexpanded = [name for name in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", text)]
    unset = [name for name in unexpanded if not os.environ.get(name)]
    if unset:
        return f"{message} (${unset[0]} is not set)"
    if unexpanded:
        return f"{message} (${unexpanded[0]} was not expanded: give the path without quotes)"
    if data_env and not os.environ.get(data_env) and Path(text).is_absolute() and len(Path(text).parts) == 2:
        return f"{message} (${data_env} is not set: did the path start with ${data_env}/?)"
    return message
