"""Which queries ``ragdiag triage`` looks at when the user names them: ``--ids`` (a comma list) or
``--from-compare deltas.jsonl`` (compare's ``--per-query`` file: the queries whose Δ on its first
metric is negative, most regressed first)."""

from __future__ import annotations

import math
from pathlib import Path

from ragdiag.errors import DataError, RagdiagError


def parse_ids(text: str) -> list[str]:
    """``q1,q2`` → ``["q1", "q2"]`` (blanks dropped, order kept, a repeated id refused)."""
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids:
        raise RagdiagError("--ids: no query id given (a comma list, e.g. --ids q05,q53)")
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise RagdiagError(f"--ids: '{repeated[0]}' is given twice")
    return ids


def regressed_ids(path: Path) -> tuple[list[str], str]:
    """The regressed query ids of compare's per-query file (Δ < 0 on its first metric, most negative
    first) and that metric's name."""
    from ragdiag.io.jsonl import read_jsonl_lines

    rows = read_jsonl_lines(Path(path))
    if not rows:
        raise DataError(f"--from-compare {path}: empty (expected compare's --per-query file)")
    first = rows[0][1]
    metric = next((k for k in first if k != "query_id" and ":" not in k), None) if isinstance(first, dict) else None
    if metric is None or "query_id" not in first:
        raise DataError(f"--from-compare {path}: line {rows[0][0]}: not compare's --per-query file (expected "
                        "query_id and a Δ column such as ndcg@10)")
    deltas = []
    for line, row in rows:
        value = row.get(metric) if isinstance(row, dict) else None
        if not isinstance(row, dict) or "query_id" not in row:
            raise DataError(f"--from-compare {path}: line {line}: field 'query_id' missing")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value < 0:
            deltas.append((value, str(row["query_id"])))
    if not deltas:
        raise DataError(f"--from-compare {path}: no query regressed on {metric} (every Δ ≥ 0): nothing to triage")
    return [qid for _, qid in sorted(deltas)], metric
