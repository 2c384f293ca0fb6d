"""The two sides of a comparison, paired by query id: runs scored against qrels (any metric of the
evaluate registry at any K, through evaluate's own per-query computation), graded files (the
per-query mean grade, and its repeats), or per-query tables (CSV/TSV/JSONL/JSON/Parquet, the files
``correlate --table`` reads).

Every problem is one :class:`~ragdiag.errors.RagdiagError` line naming the file, record and field.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import DataError, RagdiagError
from ragdiag.measures.registry import COMPARE_DEFAULT, EVALUATE, parse_metrics_at

MIN_QUERIES = 5
DEFAULT_RUN_METRICS = ",".join(map(str, COMPARE_DEFAULT))  # ndcg@10,ra_nwg@10,recall@20
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")


@dataclass
class Side:
    """One file's per-query values: ``matrix[i, j]`` = metric ``columns[j]`` of query ``ids[i]``, and
    query id → repeated grades."""

    source: str
    ids: list[str]
    columns: list[str]
    matrix: np.ndarray
    repeats: dict[str, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.row = {q: i for i, q in enumerate(self.ids)}


@dataclass
class Paired:
    """Both sides on the queries they share (rows in ``ids`` order), one column per metric.
    A value may be NaN only for a run metric undefined on a query (e.g. N-Recall5 with no grade 5)."""

    kind: str  # "runs", "graded" or "table"
    ids: list[str]
    metrics: list[str]
    base: np.ndarray  # (n, m)
    new: np.ndarray | None  # (n, m); None for --plan on one run
    lower_is_better: list[bool]
    dropped: dict[str, int]
    base_repeats: list[list[float]] | None = None
    new_repeats: list[list[float]] | None = None
    clusters: list[str] | None = None  # --cluster-col / --cluster-by: each query's group, in ``ids`` order


def lower_is_better(metric: str) -> bool:
    """A registry metric (``harm@10``) where lower is better; any other name: higher is better."""
    return EVALUATE.lower_is_better(metric)


def parse_run_metrics(text: str) -> list[tuple[str, int]]:
    """``ndcg@10,ra_nwg@10`` → [(ndcg, 10), (ra_nwg, 10)]: evaluate metrics, each with its K (the registry's parser)."""
    return parse_metrics_at(text)


def _finite(value: Any, source: str, index: int, column: str) -> float:
    """A finite number, else a one-line error naming the record and field (missing, NaN, text)."""
    if isinstance(value, bool):
        raise DataError.at(source, index, column, f"{str(value).lower()} is not a number")
    if value is None or (isinstance(value, str) and not value.strip()):
        raise DataError.at(source, index, column, "missing value")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DataError.at(source, index, column, f"not a number: {str(value)[:40]!r}") from None
    if not math.isfinite(number):
        raise DataError.at(source, index, column, f"{value!r} is not a finite number (NaN and ±inf are refused)")
    return number


def _scalar(row: dict, key: str, source: str, index: int) -> Any:
    """A configuration field (E, K) of a graded row: a number, text or null, else a one-line error."""
    value = row.get(key)
    if value is not None and not isinstance(value, (str, int, float)):
        raise DataError.at(source, index, key, f"expected a number or text, got {type(value).__name__}")
    return value


def read_graded(path: Path) -> Side:
    """A graded file: one row per query (``id``, ``grade``; ``grades`` = the judge's repeats), one
    configuration (E, K). The per-query value is the mean of the repeats (else ``grade``)."""
    from ragdiag.io.jsonl import read_json_records

    source = str(path)
    records = read_json_records(path)
    configs: dict[tuple, int] = {}
    values: dict[str, float] = {}
    repeats: dict[str, list[float]] = {}
    for index, row in enumerate(records):
        if not isinstance(row, dict) or "id" not in row:
            raise DataError.at(source, index, "id", "missing (a graded row needs id and grade)")
        query = str(row["id"])
        if query in values:
            raise DataError.at(source, index, "id", f"query {query!r} appears twice; compare one row per query")
        configs.setdefault((_scalar(row, "E", source, index), _scalar(row, "K", source, index)), index)
        grades = row.get("grades")
        if isinstance(grades, list) and grades:
            repeats[query] = [_finite(g, source, index, "grades") for g in grades]
            values[query] = float(np.mean(repeats[query]))
        else:
            values[query] = _finite(row.get("grade"), source, index, "grade")
    if len(configs) > 1:
        shown = ", ".join(f"E={e} K={k}" for e, k in list(configs)[:3])
        raise DataError(f"{source}: holds {len(configs)} configurations ({shown}, …); compare one configuration "
                        "(E, K) per file")
    return Side(source, list(values), ["grade"], np.array(list(values.values()))[:, None], repeats)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _as_numbers(column: Sequence[Any]) -> np.ndarray | None:
    """The column as floats when every cell is a number (int or float, never bool) or numeric text,
    else None (the fast path of :func:`_metric_columns` and :func:`_matrix`)."""
    kinds = set(map(type, column))
    if not (kinds <= {int, float} or kinds == {str}):
        return None
    try:
        return np.asarray(column, dtype=np.float64)
    except ValueError:
        return None


def _metric_columns(source: str, names: list[str], columns: list[Sequence[Any]]) -> dict[str, np.ndarray | None]:
    """The default metric columns: every column whose cells, on every row, are numbers or missing (a
    missing cell is then refused by :func:`_finite`), with at least one number. A column of text is
    not a metric; a column mixing numbers and other values is an error naming both records. Each
    name maps to its values when all were numbers (converted once), else None."""
    found: dict[str, np.ndarray | None] = {}
    for j, (name, column) in enumerate(zip(names, columns)):
        values = _as_numbers(column)
        if values is None:
            number = other = None
            for index, value in enumerate(column):
                if _missing(value):
                    continue
                if _is_number(value):
                    number = index if number is None else number
                elif other is None:
                    other = index
                if number is not None and other is not None:
                    raise DataError.at(source, other, name, f"{column[other]!r} in a column of numbers (record {number} "
                                       f"holds {column[number]!r}); fix the value, or name the metric columns with --metrics")
            if number is None:
                continue
        if not name.strip():
            raise DataError.at(source, None, None, f"column {j + 1} holds numbers but has no name in the header")
        found[name] = values
    return found


def _unique_ids(source: str, id_col: str, ids: list[str]) -> list[str]:
    """The query ids, each once; the first repeated one is an error naming its record."""
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for index, query in enumerate(ids):
            if query in seen:
                raise DataError.at(source, index, id_col, f"query {query!r} appears twice")
            seen.add(query)
    return ids


def read_table(path: Path, id_col: str, columns: list[str] | None) -> Side:
    """A per-query table: ``id_col`` and the metric columns (all numeric columns when none are named).
    Every row and every column is checked: a column only some rows hold is missing on the others."""
    from ragdiag.data.metric_table import table_format, table_rows

    source = str(path)
    fmt = table_format(path)  # --table-format, the suffix, else the content
    if fmt in ("csv", "tsv"):
        return _read_delimited(path, id_col, columns, fmt == "tsv")
    rows = []
    for index, row in enumerate(table_rows(path)):
        if not isinstance(row, dict):
            raise DataError.at(source, index, None, "expected an object with named columns")
        if index == 0:
            id_col = id_column(id_col, list(row))
        if id_col not in row:
            raise DataError.at(source, index, id_col, f"no such column (--id-col); columns: {', '.join(map(str, row))[:200]}")
        rows.append(row)
    if not rows:
        raise DataError(f"{source}: no rows")
    header = list(dict.fromkeys(c for row in rows for c in row if c != id_col))
    wanted, known = columns, {}
    if wanted is None:
        known = _metric_columns(source, header, [[row.get(c) for row in rows] for c in header])
        wanted = list(known)
        if not wanted:
            raise DataError.at(source, 0, None, "no numeric metric column besides the id column")
    absent = [c for c in wanted if c not in header]
    if absent:
        raise DataError.at(source, 0, absent[0], "no such column (a metric absent from this side)")
    ids = _unique_ids(source, id_col, [str(row[id_col]) for row in rows])
    return Side(source, ids, list(wanted), _matrix(source, wanted, [[row.get(c) for row in rows] for c in wanted], known))


def id_column(id_col: str, columns: list[str]) -> str:
    """The query-id column: ``id_col``; when that is the default ``query_id`` and the table lacks it, the
    first of the common names present (``query-id``, ``qid``, ``question_id``: :data:`ragdiag.io.fields.COMMON_NAMES`)."""
    from ragdiag.io.fields import COMMON_NAMES

    if id_col in columns or id_col != "query_id":
        return id_col
    return next((name for name in COMMON_NAMES["query_id"] if name in columns), id_col)


def _read_delimited(path: Path, id_col: str, columns: list[str] | None, tabs: bool = False) -> Side:
    """A CSV/TSV table read as lists (``csv.reader``), the columns picked by their header position:
    the same checks and messages as :func:`read_table`, without a dict per row; every row must have
    the header's width, and no two header cells may share a name."""
    import csv
    import io

    from ragdiag.io.text_input import decode_utf8

    source = str(path)
    reader = csv.reader(io.StringIO(decode_utf8(path, path.read_bytes())), delimiter="\t" if tabs else ",")
    header = next(reader, None)
    if not header:
        raise DataError(f"{source}: no rows")
    twice = [c for i, c in enumerate(header) if c in header[:i]]
    if twice:
        where = [str(i + 1) for i, c in enumerate(header) if c == twice[0]]
        raise DataError.at(source, None, twice[0], f"the header names this column twice (columns {', '.join(where)}); "
                           "rename one")
    id_col = id_column(id_col, header)
    if id_col not in header:
        raise DataError.at(source, 0, id_col, f"no such column (--id-col); columns: {', '.join(header)[:200]}")
    rows = [row for row in reader if row]  # a blank line is no row
    if not rows:
        raise DataError(f"{source}: no rows")
    widths = set(map(len, rows))
    if widths != {len(header)}:
        index = next(i for i, row in enumerate(rows) if len(row) != len(header))
        raise DataError.at(source, index, None, f"{len(rows[index])} cells where the header has {len(header)}")
    cells = list(zip(*rows))
    key = header.index(id_col)
    known: dict[str, np.ndarray | None] = {}
    if columns is None:
        others = [i for i in range(len(header)) if i != key]
        known = _metric_columns(source, [header[i] for i in others], [cells[i] for i in others])
        columns = list(known)
        if not columns:
            raise DataError.at(source, 0, None, "no numeric metric column besides the id column")
    absent = [c for c in columns if c not in header]
    if absent:
        raise DataError.at(source, 0, absent[0], "no such column (a metric absent from this side)")
    ids = _unique_ids(source, id_col, list(cells[key]))
    return Side(source, ids, list(columns), _matrix(source, columns, [cells[header.index(c)] for c in columns], known))


def _matrix(source: str, names: list[str], columns: list[Sequence[Any]],
            known: dict[str, np.ndarray | None] | None = None) -> np.ndarray:
    """The metric columns as an (n, m) float matrix, each converted at once (:func:`_as_numbers`, or
    ``known`` values already converted); a cell that is missing, text, NaN, ±inf or true/false, on any
    row, is named by :func:`_finite`."""
    out = np.empty((len(columns[0]) if columns else 0, len(columns)))
    for j, (name, column) in enumerate(zip(names, columns)):
        values = (known or {}).get(name)
        values = _as_numbers(column) if values is None else values
        if values is None or not np.isfinite(values).all():
            for index, value in enumerate(column):
                _finite(value, source, index, name)
            raise DataError(f"{source}: column {name!r}: a value that is not a number")  # unreachable: _finite refused one
        out[:, j] = values
    return out


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def sniff(path: Path) -> str:
    """'graded' for a JSON/JSONL list of rows with id and grade, 'run' for a run.jsonl or TREC run, else 'table'."""
    from ragdiag.io.fields import current_reading

    if path.suffix.lower() in TABLE_SUFFIXES or current_reading().format_of("table") is not None:
        return "table"
    from ragdiag.io.jsonl import read_json_records

    try:
        records = read_json_records(path)
    except RagdiagError:
        with path.open("rb") as handle:
            words = handle.readline(4096).split()
        return "run" if len(words) == 6 and words[1] in (b"Q0", b"0") else "table"
    first = records[0] if isinstance(records, list) and records else None
    if isinstance(first, dict) and "query_id" in first and "ids" in first:
        return "run"
    return "graded" if isinstance(first, dict) and "id" in first and ("grade" in first or "grades" in first) else "table"


def read_runs(base: Path, new: Path | None, qrels_path: Path, metrics: list[tuple[str, int]]) -> tuple[dict[str, Side], list[str], list[str]]:
    """Per-query metric values of each run on the judged queries it ranks (evaluate's computation)."""
    from ragdiag.data.qrels_runs import read_run_ids
    from ragdiag.evaluate.evaluation import EvaluateParams, run_values
    from ragdiag.evaluate.inputs import GradedQrels, align_run, load_graded_qrels

    qrels = load_graded_qrels(qrels_path)
    ks = tuple(sorted({k for _, k in metrics}))
    names = tuple(dict.fromkeys(m for m, _ in metrics))
    params = EvaluateParams(ks=ks, pool_depth=max(100, max(ks)), metrics=names, bootstrap=0)
    sides, ranked_sets = {}, []
    for path in (base, new):
        if path is None:
            continue
        ranked = set(read_run_ids(path))
        judged = [q for q in qrels.query_ids if q in ranked]
        if not judged:
            raise DataError(f"{path}: none of the {len(qrels.query_ids)} judged queries of {qrels_path} is in this run")
        ranked_sets.append(ranked)
        subset = GradedQrels({q: qrels.grades[q] for q in judged}, qrels.binary, qrels.source)
        aligned = align_run(path, subset)
        per_metric = run_values(aligned, subset, subset.pool_counts(), params)
        names_at = [f"{m}@{k}" for m, k in metrics]
        sides[str(path)] = Side(str(path), judged, names_at,
                                np.stack([per_metric[key] for key in metrics], axis=1).astype(np.float64))
    return sides, [f"{m}@{k}" for m, k in metrics], qrels.query_ids


def _shown(query: str) -> str:
    """A query id in an error line: as it is, or quoted with its escapes when it holds a control character."""
    return query if query.isprintable() else repr(query)


def pair(base: Side, new: Side | None, metrics: list[str], allow_missing: bool, kind: str,
         order: list[str] | None = None) -> Paired:
    """Pair the sides by query id: one side only is an error (first few ids and the counts) unless
    ``allow_missing``; fewer than 5 shared queries is an error."""
    ids = list(order or base.ids)
    dropped = {"base_only": 0, "new_only": 0}
    if new is not None:
        base_only = [q for q in ids if q in base.row and q not in new.row]
        new_only = [q for q in (order or new.ids) if q in new.row and q not in base.row]
        if (base_only or new_only) and not allow_missing:
            raise RagdiagError(
                f"the query sets differ: {len(base_only)} only in {base.source}"
                + (f" (first: {', '.join(map(_shown, base_only[:3]))})" if base_only else "")
                + f", {len(new_only)} only in {new.source}"
                + (f" (first: {', '.join(map(_shown, new_only[:3]))})" if new_only else "")
                + "; --allow-missing drops them (and counts them)")
        dropped = {"base_only": len(base_only), "new_only": len(new_only)}
        ids = [q for q in ids if q in base.row and q in new.row]
    else:
        ids = [q for q in ids if q in base.row]
    if len(ids) < MIN_QUERIES:
        raise RagdiagError(f"{len(ids)} paired queries between {base.source}"
                           + (f" and {new.source}" if new else "") + f"; compare needs at least {MIN_QUERIES}")
    for side in (base, new):
        if side is None:
            continue
        absent = [m for m in metrics if m not in side.columns]
        if absent:
            raise RagdiagError(f"{side.source}: metric '{absent[0]}' is absent (it has {', '.join(side.columns)[:200]})")

    def matrix(side: Side) -> np.ndarray:
        rows = np.fromiter((side.row[q] for q in ids), dtype=np.int64, count=len(ids))
        return side.matrix[np.ix_(rows, np.asarray([side.columns.index(m) for m in metrics]))]

    def reps(side: Side | None) -> list[list[float]] | None:
        if side is None or not side.repeats:
            return None
        return [side.repeats.get(q, [float(side.matrix[side.row[q], 0])]) for q in ids]

    return Paired(kind, ids, metrics, matrix(base), None if new is None else matrix(new),
                  [lower_is_better(m) for m in metrics], dropped, reps(base), reps(new))


def read_pair(base: Path, new: Path | None, qrels: Path | None, metrics: str | None, id_col: str,
              allow_missing: bool) -> Paired:
    """Read and pair both inputs: runs with ``qrels``, else graded files or per-query tables."""
    if qrels is not None:
        parsed = parse_run_metrics(metrics or DEFAULT_RUN_METRICS)
        run_sides, names, order = read_runs(base, new, qrels, parsed)
        return pair(run_sides[str(base)], run_sides.get(str(new)) if new else None, names, allow_missing, "runs", order)
    kinds = {sniff(path) for path in (base, new) if path is not None}
    if "run" in kinds:
        raise RagdiagError(f"{base if sniff(base) == 'run' else new}: a run file; give --qrels to score the runs")
    if len(kinds) > 1:
        raise RagdiagError(f"--base {base} and --new {new} are not the same kind of file (a graded file and a table)")
    columns = [c.strip() for c in metrics.split(",") if c.strip()] if metrics else None
    if kinds == {"graded"}:
        if columns and columns != ["grade"]:
            raise RagdiagError("--metrics: a graded file has one metric, grade")
        return pair(read_graded(base), read_graded(new) if new else None, ["grade"], allow_missing, "graded")
    base_side = read_table(base, id_col, columns)
    new_side = read_table(new, id_col, columns) if new else None
    names = columns or base_side.columns
    return pair(base_side, new_side, names, allow_missing, "table")
