"""Reading text inputs (JSON lines, CSV, TSV) so that a bad byte or an oversized cell is one line.

- Invalid UTF-8: ``FILE: line L: not UTF-8 text (byte offset B: invalid start byte)``; B counts
  from the start of the file (0-based, like ``cmp`` and hex editors), L from 1.
- JSON nested deeper than the parser allows: ``FILE: line L: JSON nested too deeply``.
- CSV/TSV: the header must not repeat a column name (one of the two would be read silently); a cell
  may hold up to :data:`CSV_FIELD_CAP` characters (Python's default limit, 128 KiB, is raised: a
  long answer in a Ragas CSV is realistic), a longer one is refused naming the line.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragdiag.errors import DataError

CSV_FIELD_CAP = 16 * 1024 * 1024  # characters in one CSV cell


def utf8_error(path: Path | str, data: bytes, err: UnicodeDecodeError) -> DataError:
    """The one-line error for ``err`` raised while decoding ``data`` (the bytes of ``path``)."""
    line = data.count(b"\n", 0, err.start) + 1
    return DataError(f"{path}: line {line}: not UTF-8 text (byte offset {err.start}: {err.reason}); "
                     "re-save the file as UTF-8")


def decode_utf8(path: Path | str, data: bytes) -> str:
    """``data`` decoded as UTF-8 (a leading byte-order mark dropped), or :func:`utf8_error`."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise utf8_error(path, data, err) from None


def check_utf8(path: Path | str, data: bytes) -> None:
    """Raise :func:`utf8_error` when ``data`` is not UTF-8 (for readers that parse the bytes themselves)."""
    decode_utf8(path, data)


def too_deep(path: Path | str, line: int | None) -> DataError:
    """The one-line error for JSON nested beyond the parser's recursion limit."""
    where = f": line {line}" if line is not None else ""
    return DataError(f"{path}{where}: JSON nested too deeply to read (more than the parser's depth limit)")


def csv_rows(path: Path, delimiter: str = ",") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number of the row's first line, row as a dict) of a CSV/TSV file with a header line.

    Rows with more cells than the header keep the extra cells under the key None, rows with fewer
    get None, as :class:`csv.DictReader` does."""
    text = decode_utf8(path, Path(path).read_bytes())
    if csv.field_size_limit() < CSV_FIELD_CAP:
        csv.field_size_limit(CSV_FIELD_CAP)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    start = 1  # the first line of the row being read
    try:
        header = reader.fieldnames or []
        repeated = sorted(name for name, count in Counter(header).items() if count > 1)
        if repeated:
            raise DataError(f"{path}: line 1: the header repeats the column name(s) {', '.join(map(repr, repeated))}; "
                            "only one could be read — rename or drop the copies")
        start = reader.line_num + 1
        for row in reader:
            yield start, row
            start = reader.line_num + 1
    except csv.Error as err:
        if "field larger than field limit" in str(err):
            raise DataError(f"{path}: line {start}: a cell is longer than {CSV_FIELD_CAP:,} characters "
                            "(ragdiag's cap on one CSV cell); shorten it or export the table as JSON lines") from None
        raise DataError(f"{path}: line {start}: not a valid CSV row ({err})") from None
