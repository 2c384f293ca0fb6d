"""The answers file of ``ragdiag generate`` (JSON lines: one ``meta`` line, ``ideal`` and ``topK`` rows),
read and checked whole before ``grade`` spends a call on it. In a ``pipeline`` run the rows come from the
generate stage in memory instead (:meth:`AnswersFile.from_rows`): the same checks, no file read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.answers.generation import Row
from ragdiag.data.schema import check_graded_record, graded_key
from ragdiag.errors import DataError
from ragdiag.io.jsonl import read_jsonl_lines


@dataclass
class AnswersFile:
    """The meta block, the ideal answer of each id (None when generation failed) and the top-K rows."""

    meta: dict[str, Any] = field(default_factory=dict)
    ideal: dict[str, str | None] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)

    @classmethod
    def from_rows(cls, meta: dict[str, Any], rows: list[Row], source: Path) -> AnswersFile:
        """The rows a generate stage just wrote to ``source`` (meta line first), checked as :func:`read_answers`
        checks the file (line numbers as in the file)."""
        return _collect(((line, row) for line, row in enumerate([{"kind": "meta", "meta": meta}, *rows], start=1)),
                        source)


def _line_error(path: Path, line: int, field: str | None, problem: str) -> DataError:
    return DataError.at(f"{path}: line {line}", None, field, problem)


def _check_answer_row(row: Row, path: Path, line: int) -> None:
    """A row of ``ragdiag generate``'s answers file, checked before any call is spent on it."""
    if not isinstance(row.get("id"), str) or not row["id"]:
        raise _line_error(path, line, "id", "missing or not a non-empty string")
    if not isinstance(row.get("q"), str):
        raise _line_error(path, line, "q", f"the question must be a string, got {type(row.get('q')).__name__}")
    answer = row.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise _line_error(path, line, "answer", f"must be a string or null, got {type(answer).__name__}")
    if row["kind"] == "ideal":
        return
    check_graded_record({**row, "grade": None}, f"{path}: line {line}", None)  # type: ignore[arg-type]  # id, E, Nc, Np, K, inK
    rank = row.get("rank")
    if not isinstance(rank, list) or len(rank) != row["K"]:
        raise _line_error(path, line, "rank", f"must list the top K = {row['K']} candidate indices")
    if any(type(i) is not int or not 0 <= i < row["Nc"] for i in rank) or len(set(rank)) != len(rank):
        raise _line_error(path, line, "rank", f"items must be distinct candidate indices 0..{row['Nc'] - 1}")
    if row["inK"] != [1 if i < row["Np"] else 0 for i in rank]:
        raise _line_error(path, line, "inK", "does not match rank (1 exactly where the index is below Np)")
    for name in ("P", "R"):
        value = row.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _line_error(path, line, name, f"expected a finite number, got {value!r}")


def read_answers(path: Path) -> AnswersFile:
    """The answers file of ``ragdiag generate``: its meta, ideal answers by id, and top-K rows.

    The whole file is validated first (line numbers 1-based): kinds, types, top-K invariants,
    duplicated ideal or top-K rows (both lines named). A table (CSV, TSV, a JSON list, Parquet) is
    one error saying what it looks like and what reads it.
    """
    _refuse_table(path)
    return _collect(read_jsonl_lines(path), path)


def _refuse_table(path: Path) -> None:
    """A CSV, TSV, JSON list or Parquet file is not an answers file: say what it looks like and what to do."""
    from ragdiag.data.own_inputs import content_format
    from ragdiag.data.records import read_records
    from ragdiag.io.files import existing_file

    fmt = content_format(existing_file(path))
    if fmt not in ("json", "csv", "tsv", "parquet"):
        return
    looks = read_records(path, fmt).looks_like()
    raise DataError(f"{path}: this looks like {looks}, not the answers file of `ragdiag generate` (JSON lines: a "
                    "meta line, then ideal and topK rows with the passages each answer saw); write one with "
                    "`ragdiag generate` or `ragdiag import ragas|deepeval|traces`, or give answers you already "
                    "have per query to `ragdiag triage --answers-from`")


def _collect(lines: Iterable[tuple[int, Any]], path: Path) -> AnswersFile:
    meta: dict[str, Any] = {}
    ideal: dict[str, str | None] = {}
    ideal_line: dict[str, int] = {}
    topk_line: dict[tuple[str, str, int, int, int], int] = {}
    rows = []
    for line, row in lines:
        kind = row.get("kind") if isinstance(row, dict) else None
        if kind == "meta":
            meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
            continue
        if kind not in ("ideal", "topK"):
            raise _line_error(path, line, "kind", f"expected meta, ideal or topK, got {kind!r}")
        _check_answer_row(row, path, line)
        if kind == "ideal":
            if row["id"] in ideal_line:
                raise _line_error(path, line, "id", f"a second ideal row for '{row['id']}' (first on line "
                                  f"{ideal_line[row['id']]})")
            ideal_line[row["id"]] = line
            ideal[row["id"]] = row.get("answer")
        else:
            key = graded_key(row)
            if key in topk_line:
                raise _line_error(path, line, None, f"the same top-K row as line {topk_line[key]} (id '{key[0]}', "
                                  f"E '{key[1]}', Nc {key[2]}, Np {key[3]}, K {key[4]})")
            topk_line[key] = line
            rows.append(row)
    if not rows:
        raise DataError(f"{path}: no topK rows to grade")
    return AnswersFile(meta, ideal, rows)
