"""The checks of a batch folder's state read back from disk: ``batches.json`` and the index files.

``batches.json`` is ``{"base_url", "cache_dir", "entries": [...]}``; each entry is the dict
:meth:`ragdiag.llm.batch.BatchFolder.add` writes (``file``, ``index``, ``mode``, ``requests``,
``bytes``, ``input_file_id``, ``batch_id``, ``status``, ``collected``, ``counts``, ``failures``
once some failed, and ``seen``, the custom_ids of an output collected in parts so far). An index file holds one ``{"custom_id", "request"}`` line per
request, ``request`` being the cache-key request (``model``, ``messages``, ``params``, ...). A
tampered or truncated file is refused with one line naming it, the entry or line, and the field,
before anything is sent or cached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragdiag.errors import DataError
from ragdiag.llm.batch_files import BATCH_MODES

_STR = (str,)
_OPTIONAL_STR = (str, type(None))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _bare_name(value: Any) -> bool:
    """A file name inside the folder: no folder part, not ``.`` or ``..`` (a tampered name cannot reach
    a file outside the batch folder)."""
    return isinstance(value, str) and value not in ("", ".", "..") and Path(value).name == value and "\\" not in value


def _entry_problem(entry: Any) -> tuple[str | None, str] | None:
    """(field, problem) of the first thing wrong with one entry, or None."""
    if not isinstance(entry, dict):
        return None, f"expected an object, got {type(entry).__name__}"
    for name in ("file", "index"):
        if not _bare_name(entry.get(name)):
            return name, f"expected a file name inside the folder, got {entry.get(name)!r}"
    if "failures" in entry and not _bare_name(entry["failures"]):
        return "failures", f"expected a file name inside the folder, got {entry['failures']!r}"
    if entry.get("mode") not in BATCH_MODES:
        return "mode", f"expected one of {', '.join(BATCH_MODES)}, got {entry.get('mode')!r}"
    for name in ("requests", "bytes"):
        if not _is_int(entry.get(name)):
            return name, f"expected a whole number >= 0, got {entry.get(name)!r}"
    for name, types in (("input_file_id", _OPTIONAL_STR), ("batch_id", _OPTIONAL_STR), ("status", _STR)):
        if name not in entry or not isinstance(entry[name], types):
            return name, f"expected {'a string' if types is _STR else 'a string or null'}, got {entry.get(name)!r}"
    if not isinstance(entry.get("collected"), bool):
        return "collected", f"expected true or false, got {entry.get('collected')!r}"
    if entry.get("counts") is not None and not isinstance(entry["counts"], dict):
        return "counts", f"expected an object or null, got {entry['counts']!r}"
    if "seen" in entry and not (isinstance(entry["seen"], list) and all(isinstance(k, str) for k in entry["seen"])):
        return "seen", "expected a list of custom_ids (the parts of an output already collected)"
    return None


def check_state(data: Any, state: Path) -> tuple[str | None, str | None, list[dict[str, Any]]]:
    """(base_url, cache_dir, entries) of a parsed ``batches.json``; :class:`DataError` naming the file,
    the entry (1-based) and the field when something is not as written."""
    if not isinstance(data, dict):
        raise DataError(f"{state}: expected a JSON object with 'entries', got {type(data).__name__}")
    for name in ("base_url", "cache_dir"):
        if not isinstance(data.get(name), _OPTIONAL_STR):
            raise DataError.at(str(state), None, name, f"expected a string or null, got {data.get(name)!r}")
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise DataError.at(str(state), None, "entries", f"expected a list, got {entries!r}")
    for number, entry in enumerate(entries, 1):
        problem = _entry_problem(entry)
        if problem is not None:
            field, text = problem
            raise DataError.at(f"{state}: entry {number}", None, field, text)
    return data.get("base_url"), data.get("cache_dir"), entries


def check_index_row(row: Any, path: Path, line: int) -> tuple[str, dict[str, Any]]:
    """(custom_id, request) of one index line, checked: the request must hold what a batch request line
    and the cache need (``model`` a string, ``messages`` a list, ``params`` an object)."""
    where = f"{path}: line {line}"
    if not isinstance(row, dict):
        raise DataError(f"{where}: expected an object with 'custom_id' and 'request'")
    if not isinstance(row.get("custom_id"), str) or not row["custom_id"]:
        raise DataError.at(where, None, "custom_id", "missing or not a string")
    request = row.get("request")
    if not isinstance(request, dict):
        raise DataError.at(where, None, "request", "missing or not an object (the cache-key request)")
    for name, kind, label in (("model", str, "a string"), ("messages", list, "a list"), ("params", dict, "an object")):
        if not isinstance(request.get(name), kind):
            raise DataError.at(where, None, f"request.{name}", f"expected {label}, got {request.get(name)!r}")
    return row["custom_id"], request
