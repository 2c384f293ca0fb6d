"""Bring your own data: a table of per-query metrics and an answer grade (CSV, JSONL, JSON, Parquet).

Any export works — ragdiag, ranx, ir_measures, Ragas, DeepEval — as long as each row carries a grade
column and the metric columns named on the command line. Rows where the grade or a metric is
missing (empty cell, null, NaN) are skipped and counted; a value that is not a number is an error
naming the file, row and column.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from ragdiag.errors import DataError, RagdiagError
from ragdiag.extras import require
from ragdiag.io.files import file_sha256
from ragdiag.io.jsonl import read_jsonl_lines
from ragdiag.io.parquet_input import parquet_rows
from ragdiag.io.text_input import check_utf8, csv_rows

SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet")


@dataclass
class MetricTable:
    """Rows with a grade, the metric columns, an optional group and an optional id per row."""

    source: str
    sha256: str
    grade: np.ndarray  # (n,) float64
    measures: dict[str, np.ndarray]  # column → (n,) float64
    group: np.ndarray  # (n,) str; "all" without a group column
    ids: np.ndarray | None  # (n,) str, the unit a bootstrap resamples
    skipped: int  # rows left out for a missing grade or metric
    simulated_grades: bool = False  # the bundled sample's graded file (simulated grades)

    def __len__(self) -> int:
        return len(self.grade)


SUFFIX_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "json", ".parquet": "parquet"}


def table_format(path: Path) -> str:
    """The format of a per-query table: ``--table-format`` (the active reading's), else its suffix, else
    its content (:func:`ragdiag.data.own_inputs.content_format`); content that is no table is refused saying
    what it looks like."""
    from ragdiag.data.own_inputs import content_format
    from ragdiag.io.fields import current_reading

    given = current_reading().format_of("table")
    if given is not None:
        if given not in SUFFIX_FORMATS.values():
            raise RagdiagError(f"--table-format {given}: a per-query table is csv, tsv, jsonl, json or parquet")
        return given
    suffix = path.suffix.lower()
    if suffix in SUFFIX_FORMATS:
        return SUFFIX_FORMATS[suffix]
    sniffed = content_format(path)  # no table suffix: the content decides
    if sniffed not in SUFFIX_FORMATS.values():
        raise RagdiagError(f"{path}: unknown table format '{suffix}', and its content is no table (not JSON, no tab or "
                           f"comma on its first line): expected {', '.join(SUFFIXES)} (or --table-format "
                           "csv|tsv|jsonl|json|parquet)")
    return sniffed


def _shape_note(path: Path, fmt: str) -> str:
    """``; this looks like CSV with columns …: read it with `--table-format csv``` for a table read as
    ``fmt`` whose content is another table format (empty when it is not)."""
    from ragdiag.data.own_inputs import content_format
    from ragdiag.data.records import read_records

    actual = content_format(path)
    if actual == fmt or actual not in SUFFIX_FORMATS.values():
        return ""
    try:
        looks = read_records(path, actual).looks_like()
    except RagdiagError:
        return ""
    return f"; this looks like {looks}: read it with `--table-format {actual}`"


def _rows(path: Path, fmt: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, row) of a table file: where is ``line N`` (CSV/TSV, JSON lines: 1-based line of the
    file) or ``record N`` (JSON list, Parquet: 1-based position). ``fmt``: :func:`table_format`."""
    fmt = fmt or table_format(path)
    if fmt in ("csv", "tsv"):
        for number, row in csv_rows(path, delimiter="\t" if fmt == "tsv" else ","):
            yield f"line {number}", row
    elif fmt == "jsonl":
        try:
            for number, row in read_jsonl_lines(path):
                yield f"line {number}", row
        except DataError as err:
            note = _shape_note(path, fmt)
            if not note:
                raise
            raise DataError(f"{err}{note}") from None
    elif fmt == "json":
        data = path.read_bytes()
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError as err:
            check_utf8(path, data)
            raise DataError.at(str(path), None, None, f"not valid JSON ({err}){_shape_note(path, fmt)}") from None
        if not isinstance(parsed, list):
            raise DataError.at(str(path), None, None, "expected a JSON list of row objects")
        yield from ((f"record {index}", row) for index, row in enumerate(parsed, start=1))
    else:
        require("pyarrow")  # the install hint of ragdiag.extras when it is missing
        yield from ((f"record {index}", row) for index, row in enumerate(parquet_rows(path), start=1))


def _at(source: str, where: str, column: str | None, problem: str) -> DataError:
    """``<source>: <where>: field '<column>': <problem>`` (where: ``line N`` or ``record N``)."""
    return DataError(": ".join([source, where, *([f"field '{column}'"] if column is not None else []), problem]))


def _number(value: Any, source: str, where: str, column: str) -> float | None:
    """A float, or None for a missing value (None, '', NaN)."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "nan", "NaN", "null", "None")):
        return None
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise _at(source, where, column, f"not a number: {str(value)[:40]!r}") from None
    return None if math.isnan(number) else number


def load_metric_table(path: Path, grade_col: str, measure_cols: list[str], group_col: str | None = None,
                      id_col: str | None = None) -> MetricTable:
    """Read ``path`` and keep the grade, metric, group and id columns of every complete row."""
    path = Path(path)
    if not path.is_file():
        raise RagdiagError(f"{path}: no such file")
    if not measure_cols:
        raise RagdiagError("no metric columns given: name at least one, e.g. ndcg@10,recall@10")
    if table_format(path) == "parquet":
        from ragdiag.data.metric_parquet import read_metric_parquet

        return MetricTable(source=str(path), sha256=file_sha256(path), simulated_grades=_is_bundled_sample(path),
                           **read_metric_parquet(path, grade_col, measure_cols, group_col, id_col))
    source = str(path)
    wanted = [grade_col, *measure_cols, *(c for c in (group_col, id_col) if c)]
    grades: list[float] = []
    values: dict[str, list[float]] = {c: [] for c in measure_cols}
    groups: list[str] = []
    ids: list[str] = []
    skipped = 0
    seen_any = False
    for where, row in _rows(path):
        if not isinstance(row, dict):
            raise _at(source, where, None, "expected an object with named columns")
        if not seen_any:
            missing = [c for c in wanted if c not in row]
            if missing:
                raise _at(source, where, missing[0], f"no such column; columns present: "
                          f"{', '.join(map(str, row))[:300]}")
            seen_any = True
        for column in wanted:
            if column not in row:
                raise _at(source, where, column, "missing")
        grade = _number(row[grade_col], source, where, grade_col)
        numbers = [_number(row[c], source, where, c) for c in measure_cols]
        present = [v for v in numbers if v is not None]
        if grade is None or len(present) < len(numbers):
            skipped += 1
            continue
        grades.append(grade)
        for column, number in zip(measure_cols, present):
            values[column].append(number)
        groups.append(str(row[group_col]) if group_col else "all")
        if id_col:
            ids.append(str(row[id_col]))
    if not grades:
        raise RagdiagError(f"{source}: no row has a grade and every metric ({', '.join(wanted[:1 + len(measure_cols)])})")
    return MetricTable(
        source=source, sha256=file_sha256(path), grade=np.asarray(grades, dtype=np.float64),
        measures={c: np.asarray(v, dtype=np.float64) for c, v in values.items()},
        group=np.asarray(groups, dtype=object), ids=np.asarray(ids, dtype=object) if id_col else None,
        skipped=skipped, simulated_grades=_is_bundled_sample(path),
    )


def _is_bundled_sample(path: Path) -> bool:
    """A copy of the bundled retrieval-response sample, whose grades are simulated: its ``meta.json``
    (beside the file) says ``"simulated_grades": true``."""
    meta = path.parent / "meta.json"
    try:
        return meta.is_file() and bool(orjson.loads(meta.read_bytes()).get("simulated_grades")) and \
            path.name == "samples_graded.json"
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return False


def table_rows(path: Path):
    """The rows of a CSV, TSV, JSONL, JSON-list or Parquet table as dicts (no validation)."""
    return (row for _, row in _rows(Path(path)))
