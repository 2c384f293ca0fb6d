"""JSON records and JSON lines read with line numbers: every error names the file and the line."""

from __future__ import annotations

import gc
import gzip
import json
import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragdiag.errors import DataError
from ragdiag.io.files import existing_file
from ragdiag.io.text_input import check_utf8, decode_utf8, too_deep


@contextmanager
def no_cyclic_gc():
    """Pause the cyclic garbage collector while parsing: millions of new containers would
    otherwise trigger repeated full collections (about 40% of the parse time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_json_records(path: Path) -> list[Any]:
    """Records of a JSON list file or a JSONL file (``.gz`` allowed); errors name file and line."""
    return parse_json_records(read_json_bytes(path), existing_file(path))


def read_json_bytes(path: Path, checked: bool = True) -> bytes:
    """The bytes of a JSON or JSONL file (``.gz`` decompressed), checked to be UTF-8 (``checked=False``:
    for a parser that checks them itself)."""
    path = existing_file(path)
    try:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except (OSError, EOFError, gzip.BadGzipFile) as err:
        raise DataError(f"{path}: cannot read: {err}") from None
    if checked:
        check_utf8(path, data)
    return data


def map_json_bytes(path: Path) -> bytes | mmap.mmap:
    """The bytes of a JSON or JSONL file for a parser that checks them itself: mapped read-only (no copy:
    the parser reads the page cache; the mapping lives as long as an object refers to it), a ``.gz``
    file's decompressed bytes, or an empty file's ``b""``."""
    path = existing_file(path)
    if path.suffix == ".gz":
        return read_json_bytes(path, checked=False)
    try:
        with open(path, "rb") as handle:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except ValueError:  # an empty file cannot be mapped
        return b""
    except OSError as err:
        raise DataError(f"{path}: cannot read: {err}") from None


def parse_json_records(data: bytes, path: Path) -> list[Any]:
    """Records of a JSON list or JSON lines (the bytes of ``path``); errors name file and line."""
    import orjson

    with no_cyclic_gc():
        stripped = data.lstrip()
        if stripped.startswith(b"["):
            try:
                return orjson.loads(data)
            except orjson.JSONDecodeError as err:
                raise DataError(f"{path}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
        records = [record for _, record in parse_jsonl(data, path)]
        if not records and stripped:
            raise DataError(f"{path}: expected a JSON list or JSON lines")
        return records


def read_jsonl_lines(path: Path) -> list[tuple[int, Any]]:
    """(line number, record) of a JSON-lines file, 1-based, blank lines skipped; errors name the line."""

    path = existing_file(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise DataError(f"{path}: cannot read: {err}") from None
    check_utf8(path, data)
    with no_cyclic_gc():
        return parse_jsonl(data, path)


def parse_jsonl(data: bytes, source: str | Path) -> list[tuple[int, Any]]:
    """(line number, record) of JSON-lines bytes, 1-based, blank lines skipped; a line that is not
    JSON is one error naming ``source``, the line and the column."""
    import orjson

    out = []
    for line_no, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((line_no, orjson.loads(line)))
        except orjson.JSONDecodeError as err:
            raise DataError(f"{source}: malformed JSON on line {line_no}, column {err.colno}: {err.msg}") from None
    return out


def read_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its newline) of every non-blank line of a UTF-8 text file
    (a byte-order mark dropped), split on universal newlines (\\n, \\r\\n, \\r) as text-mode ``open``
    does; a missing file, a folder or bad UTF-8 is one error naming the file."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found" if not path.exists() else f"{path}: not a regular file")
    text = decode_utf8(path, path.read_bytes())
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    for number, line in enumerate(text.split("\n"), start=1):
        if line and not line.isspace():
            yield number, line


def json_line(line: str | bytes, source: str | Path, number: int, lenient: bool = False) -> Any:
    """One JSON-lines record; a line that is not JSON is one error naming ``source``, the line and the
    column. ``lenient``: what orjson refuses is tried with the standard parser (NaN, integers beyond
    64 bits kept exact), as run files always were."""
    import orjson

    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as err:
        if lenient:
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                pass
            except RecursionError:
                raise too_deep(source, number) from None
        raise DataError(f"{source}: malformed JSON on line {number}, column {err.colno}: {err.msg}") from None


def read_jsonl_objects(path: Path | str, lenient: bool = False) -> list[tuple[int, dict]]:
    """(line number, object) of a JSON-lines file whose every record must be a JSON object
    (:func:`read_lines`, :func:`json_line`)."""
    rows = []
    with no_cyclic_gc():
        for number, line in read_lines(path):
            record = json_line(line, path, number, lenient)
            if not isinstance(record, dict):
                raise DataError(f"{path}: line {number}: expected a JSON object, got {type(record).__name__}")
            rows.append((number, record))
    return rows
