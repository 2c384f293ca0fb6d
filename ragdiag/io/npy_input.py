"""Reading a ``.npy`` input without trusting its header: the shape it claims is checked against the
file's size before any memory is allocated, and only plain real numbers are accepted.

The NPY format (numpy ``numpy.lib.format``, "NPY format" specification) is a magic string, a
version, a header (dtype, order, shape) and then exactly prod(shape) · itemsize data bytes. A
header claiming 58 TiB in a 1 kB file would make ``np.load`` try to allocate them; here it is one
line naming the file. Object arrays (pickles) are never loaded; complex values are refused.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ragdiag.errors import DataError


def _header(path: Path, handle) -> tuple[tuple[int, ...], np.dtype, int]:
    fmt = np.lib.format
    try:
        version = fmt.read_magic(handle)
        if version == (1, 0):
            shape, _, dtype = fmt.read_array_header_1_0(handle)
        elif version in ((2, 0), (3, 0)):
            shape, _, dtype = fmt.read_array_header_2_0(handle)
        else:
            raise ValueError(f"unknown NPY format version {version}")
    except (ValueError, OSError, SyntaxError) as err:
        raise DataError(f"{path}: not a .npy array ({str(err).splitlines()[0][:200]})") from None
    return tuple(int(n) for n in shape), dtype, handle.tell()


def read_npy(path: Path, what: str = "vectors") -> np.ndarray:
    """The array of ``path``: header read first; shape checked against the file size; object
    (pickled) and complex dtypes refused; every refusal one line naming the file."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{what} {path}: file not found" if not path.exists() else f"{what} {path}: not a regular file")
    size = path.stat().st_size
    with open(path, "rb") as handle:
        shape, dtype, offset = _header(path, handle)
    if dtype.hasobject:
        raise DataError(f"{what} {path}: holds Python objects (dtype {dtype}), which are never unpickled; "
                        "save plain numbers (np.save of a float array)")
    if dtype.kind == "c":
        raise DataError(f"{what} {path}: complex-valued vectors (dtype {dtype}); give real numbers (e.g. float32)")
    if dtype.kind not in "biuf":
        raise DataError(f"{what} {path}: vectors must be real numbers, got dtype {dtype}")
    expected = math.prod(shape) * dtype.itemsize
    if expected != size - offset:
        raise DataError(f"{what} {path}: the header claims shape {shape} of {dtype} ({expected:,} bytes) but the file "
                        f"holds {size - offset:,} data bytes; the file is truncated or not what it says")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError) as err:
        raise DataError(f"{what} {path}: not a readable .npy array ({str(err).splitlines()[0][:200]})") from None
