"""Per-query labels beside the metric values: the cluster of each query (``--cluster-col``,
``--cluster-by doc``) and the order queries arrived in (``--order-col``), read by query id."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ragdiag.errors import DataError, RagdiagError

SOURCE_DOC_KEYS = ("source_doc", "doc_id")  # where a generated question names the document it came from


def _by_id(path: Path, id_col: str, column: str, flag: str) -> dict[str, Any]:
    from ragdiag.data.metric_table import table_rows

    found: dict[str, Any] = {}
    for index, row in enumerate(table_rows(path)):
        if not isinstance(row, dict):
            raise DataError.at(str(path), index, None, "expected an object with named columns")
        if column not in row:
            raise DataError.at(str(path), index, column, f"no such column ({flag}); columns: {', '.join(map(str, row))[:200]}")
        value = row[column]
        if value is None or (isinstance(value, str) and not value.strip()):
            raise DataError.at(str(path), index, column, f"missing value ({flag} needs one for every query)")
        found[str(row.get(id_col))] = value
    return found


def column_labels(path: Path, id_col: str, column: str, ids: list[str]) -> list[str]:
    """``--cluster-col``: the column's value for each query of ``ids``, as text."""
    values = _by_id(path, id_col, column, "--cluster-col")
    return [str(values[q]) for q in ids]


def column_order(path: Path, id_col: str, column: str, ids: list[str]) -> list[float]:
    """``--order-col``: a number per query (a time stamp, an arrival index) that orders the replay."""
    values = _by_id(path, id_col, column, "--order-col")
    out = []
    for q in ids:
        value = values[q]
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise DataError(f"{path}: query {q!r}: --order-col {column}: not a number: {str(value)[:40]!r}") from None
        if isinstance(value, bool) or not math.isfinite(number):
            raise DataError(f"{path}: query {q!r}: --order-col {column}: {value!r} is not a finite number")
        out.append(number)
    return out


def source_documents(path: Path, ids: list[str]) -> list[str]:
    """``--cluster-by doc`` with ``--queries``: the document each question was generated from
    (``metadata.source_doc`` of a BEIR queries.jsonl, as ``ragdiag testset`` writes it)."""
    from ragdiag.io.jsonl import read_json_records

    docs: dict[str, str] = {}
    for index, record in enumerate(read_json_records(path)):
        if not isinstance(record, dict) or "_id" not in record:
            raise DataError.at(str(path), index, "_id", "expected a BEIR query object with _id")
        found = record.get("metadata")
        metadata: dict[str, Any] = found if isinstance(found, dict) else {}
        doc = next((metadata[k] for k in SOURCE_DOC_KEYS if metadata.get(k) not in (None, "")), None)
        if doc is None:
            raise DataError.at(str(path), index, "metadata.source_doc",
                               "no source document: --cluster-by doc needs questions that name theirs "
                               "(as `ragdiag testset` writes them); else give --cluster-col")
        docs[str(record["_id"])] = str(doc)
    missing = [q for q in ids if q not in docs]
    if missing:
        raise RagdiagError(f"--queries {path}: no question {missing[0]!r} (and {len(missing) - 1} more compared queries)"
                           if len(missing) > 1 else f"--queries {path}: no question {missing[0]!r}")
    return [docs[q] for q in ids]
