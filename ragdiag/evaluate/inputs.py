"""Inputs of ``ragdiag evaluate``: graded qrels, runs aligned to the judged queries, graded answers.

* Qrels (BEIR TSV with or without header, or TREC) are read by :func:`ragdiag.data.qrels_runs.read_qrels`.
  Grades must be 1–5; a file whose grades are all 0/1 is binary and is read as 1 → grade 5
  (relevant), 0 → grade 1 (judged, not relevant).
* Runs (``run.jsonl`` or TREC) are read by :func:`ragdiag.data.qrels_runs.read_run_ids`. The evaluated
  queries are the judged ones; every judged query must be in every run (a missing query would
  otherwise silently score 0 or vanish from the mean); run queries without judgements are skipped
  and counted.
* Answers (``samples_graded`` JSON from ``ragdiag grade``): a record's ``id`` is the query id of the
  run and its ``K`` the cut-off; its ``E`` names the run it belongs to (the run's name, i.e. the file
  name without extension); a file with one ``E`` and a single run applies to that run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

import numpy as np
import orjson

from ragdiag.data.qrels_runs import read_qrels, read_run_ids
from ragdiag.errors import DataError, RagdiagError
from ragdiag.metrics.graded_utility import N_GRADE_COLUMNS, PADDING, UNJUDGED


@dataclass
class GradedQrels:
    """query → {doc: grade 1–5}, in file order, and whether the file was binary."""

    grades: dict[str, dict[str, int]]
    binary: bool
    source: str

    @property
    def query_ids(self) -> list[str]:
        return list(self.grades)

    def pool_counts(self) -> np.ndarray:
        """n_g per query, shape (Q, 6)."""
        return pool_counts(list(self.grades.values()))


@dataclass
class AlignedRun:
    """One run restricted to the judged queries: ranked doc ids and their grades (Q, depth)."""

    name: str
    source: str
    ids: dict[str, list[str]]
    ranked: np.ndarray
    depth: int
    skipped_queries: int
    extra: dict = field(default_factory=dict)


def grade_matrix(rankings: Sequence[Sequence[str]], pools: Sequence[dict[str, int]]) -> np.ndarray:
    """(Q, depth) int8: the grade of each ranked doc in its query's pool, 0 when unjudged, −1 padding."""
    depth = max((len(r) for r in rankings), default=0)
    ranked = np.full((len(rankings), max(depth, 1)), PADDING, dtype=np.int8)
    for row, (docs, grades) in enumerate(zip(rankings, pools)):
        if docs:
            ranked[row, : len(docs)] = list(map(grades.get, docs, repeat(UNJUDGED, len(docs))))
    return ranked


def pool_counts(pools: Sequence[dict[str, int]]) -> np.ndarray:
    """n_g per query, shape (Q, 6): column g counts the pool's passages of grade g."""
    counts = np.zeros((len(pools), N_GRADE_COLUMNS), dtype=np.int64)
    for row, docs in enumerate(pools):
        for grade in docs.values():
            counts[row, grade] += 1
    return counts


def load_graded_qrels(path: str | Path) -> GradedQrels:
    """Read qrels and check the grades (1–5, or binary 0/1 read as 1 and 5)."""
    raw = read_qrels(path)
    values = {g for docs in raw.values() for g in docs.values()}
    binary = values <= {0, 1}
    if binary:
        grades = {q: {d: 5 if g == 1 else 1 for d, g in docs.items()} for q, docs in raw.items()}
        return GradedQrels(grades, True, str(path))
    for query_id, docs in raw.items():
        for doc_id, grade in docs.items():
            if not 1 <= grade <= 5:
                raise DataError(
                    f"{path}: query '{query_id}' document '{doc_id}': grade {grade} is outside 1–5 "
                    "(graded qrels need 1–5; binary qrels need only 0 and 1)"
                )
    return GradedQrels(raw, False, str(path))


def run_name(path: str | Path, taken: Sequence[str]) -> str:
    """The run's name: its file name without extension, made unique with ``#2``, ``#3`` …"""
    base = Path(path).name
    for suffix in (".jsonl", ".json", ".trec", ".txt", ".run", ".tsv"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}#{n}"
    return name


def align_run(path: str | Path, qrels: GradedQrels, taken: Sequence[str] = ()) -> AlignedRun:
    """Read a run and build its grade matrix over the judged queries (0 unjudged, −1 padding)."""
    return align_ids(read_run_ids(path), path, qrels, taken)


def align_ids(run: dict[str, list[str]], path: str | Path, qrels: GradedQrels, taken: Sequence[str] = ()) -> AlignedRun:
    """The grade matrix of ``run`` (query id → ranked doc ids, as read from ``path``) over the judged queries."""
    judged = qrels.query_ids
    missing = [q for q in judged if q not in run]
    if len(missing) == len(judged):
        raise DataError(f"{path}: none of the {len(judged)} judged queries of {qrels.source} is in this run "
                        f"(run query ids look like '{next(iter(run))}', qrels like '{judged[0]}')")
    if missing:
        raise DataError(f"{path}: {len(missing)} of the {len(judged)} judged queries of {qrels.source} are not in this run "
                        f"(first: '{missing[0]}'); rank every judged query or evaluate with qrels of the ranked queries only")
    ids = {q: run[q] for q in judged}
    ranked = grade_matrix([ids[q] for q in judged], [qrels.grades[q] for q in judged])
    depth = max((len(v) for v in ids.values()), default=0)
    skipped = sum(1 for q in run if q not in qrels.grades)
    return AlignedRun(run_name(path, taken), str(path), ids, ranked, depth, skipped)


@dataclass
class Answers:
    """The graded answers as columns: query id, configuration ``E``, cut-off ``K``, grade (NaN if null)."""

    ids: np.ndarray  # (n,) str objects
    configs: np.ndarray  # (n,) str objects
    k: np.ndarray  # (n,) int64
    grade: np.ndarray  # (n,) float64

    def __len__(self) -> int:
        return int(self.k.shape[0])


def load_answers(path: str | Path) -> Answers:
    """The graded records (``id``, ``E``, ``K``, ``grade``) of a ``ragdiag grade`` output: a JSON list,
    or a Parquet file (``*.parquet``) read columnar through pyarrow."""
    if Path(path).suffix.lower() == ".parquet":
        return _parquet_answers(Path(path))
    source = str(path)
    try:
        data = orjson.loads(Path(path).read_bytes())
    except FileNotFoundError:
        raise DataError(f"{source}: file not found") from None
    except OSError as err:
        raise DataError(f"{source}: cannot read ({err.strerror})") from None
    except orjson.JSONDecodeError as err:
        raise DataError(f"{source}: not valid JSON ({err})") from None
    if isinstance(data, dict) and isinstance(data.get("samples"), list):
        data = data["samples"]
    if not isinstance(data, list):
        raise DataError(f"{source}: expected a JSON list of graded records")
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise DataError.at(source, index, None, "expected a JSON object")
        for name in ("id", "E", "K"):
            if name not in record:
                raise DataError.at(source, index, name, "missing")
        if isinstance(record["K"], bool) or not isinstance(record["K"], int):
            raise DataError.at(source, index, "K", "expected an integer cut-off")
        grade = record.get("grade")
        if grade is not None and (isinstance(grade, bool) or not isinstance(grade, (int, float)) or not 1 <= grade <= 5):
            raise DataError.at(source, index, "grade", f"{grade!r} is not a grade between 1 and 5")
    return Answers(np.asarray([str(r["id"]) for r in data], dtype=object),
                   np.asarray([str(r["E"]) for r in data], dtype=object),
                   np.asarray([r["K"] for r in data], dtype=np.int64),
                   np.asarray([np.nan if r.get("grade") is None else float(r["grade"]) for r in data], dtype=np.float64))


def _parquet_answers(path: Path) -> Answers:
    """The answers of a Parquet graded table: columns ``id``, ``E`` (any type, read as text), ``K``
    (integer), ``grade`` (number, null when missing), without a Python object per row for K and grade."""
    from ragdiag.data.graded_parquet import parquet_columns

    table = parquet_columns(path, ("id", "E", "K", "grade"))
    import pyarrow as pa
    import pyarrow.types as pt

    source = str(path)
    k_col, grade_col = table.column("K"), table.column("grade")
    if not pt.is_integer(k_col.type):
        raise DataError.at(source, None, "K", f"has type {k_col.type}, expected an integer cut-off")
    if k_col.null_count:
        raise DataError.at(source, int(np.argmax(k_col.is_null().to_numpy())), "K", "missing (null)")
    if not (pt.is_integer(grade_col.type) or pt.is_floating(grade_col.type)):
        raise DataError.at(source, None, "grade", f"has type {grade_col.type}, expected a number")
    grade = np.asarray(grade_col.cast(pa.float64()).to_numpy(), dtype=np.float64)
    bad = ~np.isnan(grade) & ~((grade >= 1) & (grade <= 5))
    bad |= np.isnan(grade) & ~np.asarray(grade_col.is_null().to_numpy())  # NaN is not a missing grade
    if bad.any():
        index = int(np.argmax(bad))
        raise DataError.at(source, index, "grade", f"{float(grade[index])!r} is not a grade between 1 and 5")

    def text(name: str) -> np.ndarray:
        column = table.column(name)
        if column.null_count:
            raise DataError.at(source, int(np.argmax(column.is_null().to_numpy())), name, "missing (null)")
        return np.asarray(column.cast(pa.string()).to_numpy(zero_copy_only=False), dtype=object)

    return Answers(text("id"), text("E"), np.asarray(k_col.to_numpy(), dtype=np.int64), grade)


def answer_grades(answers: Answers, run: AlignedRun, n_runs: int, query_ids: Sequence[str],
                  k: int, source: str) -> tuple[np.ndarray, int] | None:
    """Answer grade per judged query for ``run`` at cut-off ``k`` (NaN where none), and how many
    records matched; None when the file holds no answers for this run."""
    configs = set(np.unique(answers.configs).tolist()) if len(answers) else set()
    if run.name in configs:
        mine = answers.configs == run.name
    elif len(configs) == 1 and n_runs == 1:
        mine = np.ones(len(answers), dtype=bool)
    else:
        return None
    position = {q: i for i, q in enumerate(query_ids)}
    grades = np.full(len(query_ids), np.nan)
    picked = np.flatnonzero(mine & (answers.k == k))
    rows = np.fromiter((position.get(q, -1) for q in answers.ids[picked]), dtype=np.int64, count=len(picked))
    picked, rows = picked[rows >= 0], rows[rows >= 0]
    distinct, counts = np.unique(rows, return_counts=True)
    if (counts > 1).any():
        twice = picked[np.flatnonzero(rows == distinct[np.argmax(counts > 1)])[1]]
        raise RagdiagError(f"{source}: two answers for query '{answers.ids[twice]}' at K = {k} in configuration "
                           f"'{answers.configs[twice]}'")
    present = ~np.isnan(answers.grade[picked])
    grades[rows[present]] = answers.grade[picked][present]
    return grades, len(distinct)
