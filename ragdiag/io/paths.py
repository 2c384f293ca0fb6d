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
