"""The one way ragdiag writes a file: atomically, never over an input.

Every output goes to a temporary file in the destination folder, is flushed and fsynced, and is
renamed into place (``os.replace``), so a crash or a full disk never leaves a half-written file
under the final name. Before anything is written, :func:`guard_outputs` refuses an output that
resolves (realpath or same inode) to an input of the same command, two outputs that coincide, a
directory, or an existing path that is not a regular file (``/dev/full``, a FIFO).
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdiag.errors import RagdiagError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PathLike = str | os.PathLike[str]


class OutputError(RagdiagError):
    """An output path that cannot or must not be written."""


def _same_file(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _inside(path: Path, folder: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(folder))
        return True
    except ValueError:
        return False


def probe_writable(folder: Path, what: str, target: Path) -> None:
    """Create and remove a probe file in ``folder``: ``os.access`` reads permission bits only (always
    true for root) and knows nothing of read-only or virtual filesystems (``/proc``, ``/sys``), whose
    refusal would otherwise come at the first write, after the paid calls."""
    try:
        fd, name = tempfile.mkstemp(prefix=".ragdiag-probe-", dir=folder)
        os.close(fd)
        os.unlink(name)
    except OSError as err:
        raise OutputError(f"{what} {target}: folder {folder} is not writable (creating a probe file there failed: "
                          f"{err.strerror or err})") from None


def check_output_path(path: PathLike, what: str = "output") -> Path:
    """Refuse a path that is a directory or an existing non-regular file; its parent must not be a file."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{what} {path} is a directory; give a file name")
    if path.exists() and not path.is_file():
        raise OutputError(f"{what} {path} exists and is not a regular file; give a file name")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise OutputError(f"{what} {path}: {parent} is a file, not a folder")
            if not os.access(parent, os.W_OK):
                raise OutputError(f"{what} {path}: folder {parent} is not writable")
            probe_writable(parent, what, path)
            break
    return path


def check_output_dir(path: PathLike, what: str = "output folder") -> Path:
    """Refuse an existing path that is not a folder (``--out-dir``, ``--cache-dir``, an index folder),
    and a folder where no file can be created (:func:`probe_writable` on it, or on its nearest
    existing parent when it is still to be made)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{what} {path} exists and is not a folder")
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None:
        if not existing.is_dir():
            raise OutputError(f"{what} {path}: {existing} is a file, not a folder")
        probe_writable(existing, what, path)
    return path


def guard_outputs(outputs: Iterable[PathLike | None], inputs: Iterable[PathLike | None] = ()) -> None:
    """Refuse, before any work, an output that is an input, lies inside an input folder, or repeats
    another output. ``None`` entries (options not given) are skipped."""
    outs = [Path(p) for p in outputs if p is not None]
    ins = [Path(p) for p in inputs if p is not None]
    for out in outs:
        for src in ins:
            if _same_file(out, src):
                raise OutputError(f"output {out} would overwrite the input {src}; choose another output path")
            if src.is_dir() and _inside(out, src) and not out.is_dir():
                raise OutputError(f"output {out} lies inside the input folder {src}: it would overwrite the input "
                                  "or be read as part of it; choose another output path")
    for i, a in enumerate(outs):
        for b in outs[i + 1 :]:
            if _same_file(a, b):
                raise OutputError(f"two outputs resolve to the same file {a}; give each its own path")


def sidecar_path(out: PathLike, kind: str = "manifest") -> Path:
    """``graded.json`` → ``graded.json.manifest.json``: named from the whole output name, so two
    outputs never share a sidecar and a sidecar never equals its output."""
    out = Path(out)
    return out.with_name(f"{out.name}.{kind}.json")


def _final_mode(path: Path) -> int:
    """An existing file keeps its mode; a new one gets 0666 less the umask, like ``open(path, "w")``
    (``mkstemp`` creates its temporary file 0600)."""
    if path.exists():
        return path.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _os_error(path: Path, err: OSError) -> OutputError:
    reason = "no space left on the device" if err.errno == errno.ENOSPC else (err.strerror or str(err))
    return OutputError(f"cannot write {path}: {reason}")


@contextmanager
def atomic_path(path: PathLike, *, inputs: Iterable[PathLike | None] = (), what: str = "output") -> Iterator[Path]:
    """Yield a temporary path beside ``path`` for a library that writes by file name (faiss,
    matplotlib, sqlite); on success it is renamed onto ``path``, on failure removed."""
    path = check_output_path(path, what)
    guard_outputs([path], inputs)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp" + path.suffix, dir=path.parent)
        os.close(fd)
    except OSError as err:
        raise _os_error(path, err) from None
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, _final_mode(path))
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise _os_error(path, err) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(path: PathLike, data: bytes, *, inputs: Iterable[PathLike | None] = (), what: str = "output") -> Path:
    """Write ``data`` to ``path`` atomically (see module doc)."""
    with atomic_path(path, inputs=inputs, what=what) as tmp, open(tmp, "wb") as handle:
        handle.write(data)
    return Path(path)


def write_text(path: PathLike, text: str, *, inputs: Iterable[PathLike | None] = (), what: str = "output") -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return write_bytes(path, text.encode("utf-8"), inputs=inputs, what=what)


def write_json(path: PathLike, data: Any, *, inputs: Iterable[PathLike | None] = (), indent: int | None = 1) -> Path:
    """Write ``data`` as JSON (UTF-8, trailing newline) atomically."""
    return write_text(path, json.dumps(data, ensure_ascii=False, indent=indent) + "\n", inputs=inputs)


def write_jsonl(path: PathLike, rows: Iterable[dict[str, Any]], *, inputs: Iterable[PathLike | None] = ()) -> Path:
    """Write one JSON object a line atomically (the rows are streamed into the temporary file)."""
    with atomic_path(path, inputs=inputs) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return Path(path)


def write_parquet(path: PathLike, table: Any, *, inputs: Iterable[PathLike | None] = ()) -> Path:
    """Write a ``pyarrow.Table`` as one Parquet file atomically (pyarrow writes by file name)."""
    import pyarrow.parquet as pq

    with atomic_path(path, inputs=inputs) as tmp:
        pq.write_table(table, tmp)
    return Path(path)


def write_figure(path: PathLike, fig: Figure, *, inputs: Iterable[PathLike | None] = (), what: str = "output") -> Path:
    """Write ``fig`` to ``path`` atomically as PNG (:func:`ragdiag.io.figures.save_png`: the figure's
    own dpi, mathtext off, the same bytes the HTML report embeds), refusing to overwrite an input;
    the figure is closed, written or not."""
    from ragdiag.io.figures import close_figure, save_png

    try:
        with atomic_path(path, inputs=inputs, what=what) as tmp:
            save_png(fig, str(tmp))
    finally:
        close_figure(fig)
    return Path(path)
