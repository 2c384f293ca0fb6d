"""Reading a ``.parquet`` input so that a file that is not Parquet, or is truncated, is one line.

A Parquet file starts and ends with the 4-byte magic ``PAR1`` and holds its footer length in the
8 bytes before the final magic (Apache Parquet format specification, "File format"). The magic is
checked before pyarrow opens the file, and pyarrow's own errors (a truncated or corrupt footer,
a bad page) become a :class:`~ragdiag.errors.DataError` naming the file. pyarrow is imported on use.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ragdiag.errors import DataError, RagdiagError

MAGIC = b"PAR1"


def check_parquet_magic(path: Path) -> None:
    """Refuse a file without the Parquet magic at both ends (not Parquet, or cut short)."""
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as handle:
        head = handle.read(4)
        handle.seek(max(size - 4, 0))
        tail = handle.read(4)
    if head != MAGIC:
        raise DataError(f"{path}: not a Parquet file (it does not start with the Parquet magic bytes PAR1)")
    if size < 12 or tail != MAGIC:
        raise DataError(f"{path}: truncated Parquet file ({size} bytes; it does not end with the magic bytes PAR1)")


def check_unique_columns(path: Path, names: list[str]) -> None:
    """Refuse a table that repeats a column name (pyarrow could read only one of the copies)."""
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise DataError(f"{path}: the table repeats the column name(s) {', '.join(map(repr, repeated))}; "
                        "only one could be read — rename or drop the copies")


def read_parquet(path: Path):
    """The ``pyarrow.Table`` of ``path``, after :func:`check_parquet_magic`; every pyarrow error,
    and a repeated column name, is one line naming the file."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise RagdiagError(f"{path}: reading Parquet needs pyarrow, the 'parquet' extra "
                           "(or export the table as CSV/JSONL)") from None
    check_parquet_magic(path)
    try:
        check_unique_columns(path, pq.read_schema(path).names)
        return pq.read_table(path)
    except (pa.ArrowException, OSError, ValueError) as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise DataError(f"{path}: corrupt or truncated Parquet file ({first[:200]})") from None


def parquet_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a Parquet file as dicts (see :func:`read_parquet`)."""
    return read_parquet(path).to_pylist()
