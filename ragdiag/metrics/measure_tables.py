"""Reduce a segment's rows to distinct measure tuples, and evaluate a measure on them.

Each measure is a function of a few integers per row (docs/methods.md#2-per-sample-measures), the columns its
registry entry ``reads``: F of (n, K, Np), E of (n, K, S), T, T′ and P of (n, K), R of (n, Np), nDCG of the
inK pattern (its float value).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragdiag.data.codes import DENSE_MAX, dense_codes
from ragdiag.data.graded_table import GradedTable
from ragdiag.measures import sample as measures
from ragdiag.measures.registry import CORRELATE
from ragdiag.metrics.correlation import TiedGroups, round_significant
from ragdiag.metrics.segments import sibling_positives

MAX_GRADE_CLASSES = 401  # grades with more distinct values (expected grades of a large file) are rounded
GRADE_STEP_DECIMALS = 2  # ... to 0.01, at most 401 classes on [1, 5]


def grade_classes(grade: np.ndarray, rounded: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(class values, class of each element) of ``grade`` (any shape, flattened). The correlation
    tables hold tuples × grade classes, so memory grows with the number of classes: grades with more
    than MAX_GRADE_CLASSES distinct values (``--grade-mode logprobs`` expected grades) are rounded to
    0.01 first — ties only between grades closer than 0.01, for the rank correlations (Spearman,
    Kendall); Pearson reads the grades as given (:meth:`DistinctTable.grade_moments`); whole grades and means of repeats
    (≤ 13 classes for 3 repeats) are used as they are. ``rounded`` forces the choice (bootstrap
    replicates follow the segment's observed grades)."""
    if rounded is None:
        rounded = grades_rounded(grade)
    values, of = np.unique(np.round(grade, GRADE_STEP_DECIMALS) if rounded else grade, return_inverse=True)
    return values, of.ravel()


def grades_rounded(grade: np.ndarray) -> bool:
    """Whether :func:`grade_classes` rounds ``grade`` (a segment's observed grades)."""
    return np.unique(grade).size > MAX_GRADE_CLASSES


@dataclass
class RowColumns:
    """The per-row integers a correlate measure ``reads`` (the registry names them): ``n`` positives in the top
    K, ``k`` = K, ``np_`` = Np, ``s`` = positives in the top x·K (−1 where the x·K sibling is absent), ``ndcg``
    the nDCG of the row's inK pattern."""

    n: np.ndarray
    k: np.ndarray
    np_: np.ndarray
    s: np.ndarray
    ndcg: np.ndarray

    def rows(self, mask: np.ndarray) -> RowColumns:
        return RowColumns(self.n[mask], self.k[mask], self.np_[mask], self.s[mask], self.ndcg[mask])


def row_columns(table: GradedTable, names: Sequence[str], xk: float) -> RowColumns:
    """The columns of ``table``; ``s`` and ``ndcg`` are computed only when a measure of ``names`` reads them."""
    reads = {column for name in names for column in CORRELATE[name].reads}
    s = sibling_positives(table, xk) if "s" in reads else np.full(len(table), -1)
    ndcg = measures.ndcg(table.in_k, table.K, table.n) if "ndcg" in reads else np.zeros(len(table))
    return RowColumns(table.n, table.K, table.Np, s, ndcg)


def record_columns(records: Sequence[Mapping[str, Any]], names: Sequence[str]) -> RowColumns:
    """The columns of graded records as a graded file holds them (``inK``, ``K``, ``Np``), for measures that do
    not read ``s`` (no x·K sibling is looked up: ``s`` is −1); ``ndcg`` only when a measure of ``names`` reads it."""
    reads = {column for name in names for column in CORRELATE[name].reads}
    if "s" in reads:
        raise ValueError(f"{', '.join(n for n in names if 's' in CORRELATE[n].reads)}: needs the x·K sibling rows")
    k = np.array([record["K"] for record in records], dtype=np.int64)
    np_ = np.array([record["Np"] for record in records], dtype=np.int64)
    width = max((len(record["inK"]) for record in records), default=0)
    in_k = np.zeros((len(records), width), dtype=np.int64)
    for row, record in enumerate(records):
        in_k[row, :len(record["inK"])] = record["inK"]
    n = in_k.sum(axis=1)
    ndcg = measures.ndcg(in_k, k, n) if "ndcg" in reads else np.zeros(len(records))
    return RowColumns(n, k, np_, np.full(len(records), -1), ndcg)


def defined_rows(measure: str, cols: RowColumns) -> np.ndarray:
    """The rows where every column the measure reads is defined (``s`` needs the x·K sibling)."""
    if "s" in CORRELATE[measure].reads:
        return cols.s >= 0
    return np.ones(len(cols.n), dtype=bool)


def reads_sibling(names: Sequence[str]) -> bool:
    """Whether a measure of ``names`` reads ``s`` (so rows without the x·K sibling are left out of it)."""
    return any("s" in CORRELATE[name].reads for name in names)


_KEY_SHIFTS = (42, 21, 0)  # up to three small integers (< 2**21) packed into one int64, first the most significant


def tuple_keys(measure: str, cols: RowColumns) -> np.ndarray:
    """One comparable key per row such that rows with equal keys have equal measure values: the columns the
    measure reads, packed in their order (a float column, ``ndcg``, is its own key)."""
    reads = CORRELATE[measure].reads
    if len(reads) == 1:
        return getattr(cols, reads[0])
    key = np.zeros(len(cols.n), dtype=np.int64)
    for column, shift in zip(reads, _KEY_SHIFTS):
        key |= getattr(cols, column).astype(np.int64) << shift
    return key


def tuple_codes(measure: str, cols: RowColumns) -> tuple[np.ndarray, np.ndarray]:
    """(the code of each row's tuple, one row of each tuple): tuples numbered in the order of
    :func:`tuple_keys`. Small non-negative integer columns are coded in linear time through one
    mixed-radix key (:func:`ragdiag.data.codes.dense_codes`; the same lexicographic order), else by sorting
    the keys."""
    columns = [getattr(cols, column) for column in CORRELATE[measure].reads]
    integers = all(column.dtype.kind in "iu" for column in columns) and len(cols.n) > 0
    spans = [int(column.max()) + 1 for column in columns] if integers else []
    if integers and min(int(column.min()) for column in columns) >= 0 and math.prod(spans) <= DENSE_MAX:
        key = np.zeros(len(cols.n), dtype=np.int64)
        for column, span in zip(columns, spans):
            key = key * span + column
        _, code = dense_codes(key)
        rep = np.zeros(int(code.max()) + 1, dtype=np.int64)
        rep[code] = np.arange(len(code))  # any row of a tuple stands for it (their columns are equal)
        return code, rep
    _, rep, code = np.unique(tuple_keys(measure, cols), return_index=True, return_inverse=True)
    return code.ravel(), rep


def evaluate(measure: str, cols: RowColumns, alphas: np.ndarray) -> np.ndarray:
    """Measure values, shape (A, rows) for α measures (one row per α), (1, rows) otherwise: the registry's
    implementation on the float64 columns the measure reads (and the α grid as a column)."""
    found = CORRELATE[measure]
    args = [getattr(cols, column).astype(np.float64) for column in found.reads]
    if found.over_alpha:
        return found.compute()(*args, alphas[:, None])
    return found.compute()(*args)[None, :]


@dataclass
class DistinctTable:
    """A segment-measure reduced to d distinct tuples × m grade classes."""

    values: np.ndarray  # (A, d)
    groups: TiedGroups
    counts: np.ndarray  # (d, m)
    grades: np.ndarray  # (m,)
    tuple_of_row: np.ndarray  # (rows,)
    grade_of_row: np.ndarray  # (rows,)
    row_grade: np.ndarray | None = None  # (rows,) the grades as given, kept when the classes are rounded

    def grade_moments(self, row_weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """Per tuple the sum of the grades as given, and the sum of their squares, for Pearson on the
        unrounded grades (``row_weights`` (B, rows): one pair per bootstrap replicate); None when
        the classes are the grades themselves (not rounded)."""
        if self.row_grade is None:
            return None
        d = self.counts.shape[0]
        if row_weights is None:
            return np.bincount(self.tuple_of_row, weights=self.row_grade, minlength=d), np.sum(self.row_grade ** 2)
        batch = row_weights.shape[0]
        cells = (np.arange(batch)[:, None] * d + self.tuple_of_row[None]).ravel()
        sums = np.bincount(cells, weights=(row_weights * self.row_grade[None]).ravel(), minlength=batch * d)
        return sums.reshape(batch, d), row_weights @ (self.row_grade ** 2)

    @property
    def rows(self) -> int:
        return int(self.tuple_of_row.shape[0])

    def weighted_counts(self, row_weights: np.ndarray) -> np.ndarray:
        """(B, d, m) tables, each row counted ``row_weights[b]`` times in table b (bootstrap)."""
        d, m = self.counts.shape
        batch = row_weights.shape[0]
        cells = np.arange(batch)[:, None] * (d * m) + (self.tuple_of_row * m + self.grade_of_row)[None]
        return np.bincount(cells.ravel(), weights=row_weights.ravel(), minlength=batch * d * m).reshape(batch, d, m)


@dataclass
class GradeClasses:
    """The grade classes of a segment's rows (:func:`grade_classes`): the class values (m,), the class of
    each row, and the grades as given when the classes are rounded (for Pearson), else None."""

    values: np.ndarray
    of_row: np.ndarray
    row_grade: np.ndarray | None

    @classmethod
    def of(cls, grade: np.ndarray) -> GradeClasses:
        """:func:`grade_classes` of ``grade`` with one sort when the grades are not rounded."""
        values, of = np.unique(grade, return_inverse=True)
        if values.size <= MAX_GRADE_CLASSES:
            return cls(values, of.ravel(), None)
        return cls(*grade_classes(grade, rounded=True), np.asarray(grade, dtype=np.float64).ravel())


@dataclass
class MeasureTuples:
    """A measure's distinct tuples over all the rows where it is defined, evaluated once: ``values``
    (A, D), one column per tuple at every α (rounded to 12 significant digits with exact ties), and the
    tuple of each row (``code_of_row``, −1 where the measure is undefined). A measure's value for a
    tuple depends on that tuple alone (the registry's implementations are elementwise), so a segment's
    values are columns of these; the tie structures (:class:`TiedGroups`) are kept per set of columns,
    shared by the segments with the same distinct tuples (e.g. the same ratio segment of several embedders)."""

    values: np.ndarray
    code_of_row: np.ndarray
    groups: dict[bytes, TiedGroups]

    @classmethod
    def of(cls, measure: str, cols: RowColumns, alphas: np.ndarray, exact_ties: bool = True,
           defined_only: bool = True) -> MeasureTuples:
        """The tuples of the rows of ``cols`` where ``measure`` is defined (:func:`defined_rows`), or of
        every row (``defined_only=False``: the caller chose the rows)."""
        rows = np.flatnonzero(defined_rows(measure, cols)) if defined_only else np.arange(len(cols.n))
        defined = cols.rows(rows)
        code, rep = tuple_codes(measure, defined)
        values = evaluate(measure, defined.rows(rep), alphas)
        code_of_row = np.full(len(cols.n), -1, dtype=np.int64)
        code_of_row[rows] = code
        return cls(round_significant(values, 12) if exact_ties else values, code_of_row, {})

    def table(self, rows: np.ndarray, classes: GradeClasses) -> DistinctTable:
        """The :class:`DistinctTable` of ``rows`` (where the measure is defined) with their grade classes."""
        distinct, tuple_of_row = dense_codes(self.code_of_row[rows])
        values = self.values.take(distinct, axis=1)  # C order, as einsum summed before
        key = distinct.tobytes()
        if key not in self.groups:
            self.groups[key] = TiedGroups.of(values)
        d, m = len(distinct), len(classes.values)
        counts = np.bincount(tuple_of_row * m + classes.of_row, minlength=d * m).reshape(d, m).astype(np.float64)
        return DistinctTable(values, self.groups[key], counts, classes.values, tuple_of_row, classes.of_row,
                             classes.row_grade)


def distinct_table(measure: str, cols: RowColumns, grade: np.ndarray, alphas: np.ndarray,
                   exact_ties: bool = True) -> DistinctTable:
    """Distinct tuples of the rows, their values at every α, and the tuple × grade counts.

    ``exact_ties`` (the default) rounds values to 12 significant digits before grouping, so values
    equal in real arithmetic (1/3 vs 3/9 after multiplying by α) tie; ``False`` (``--float-ties``)
    ranks the float64 bits as the paper's code does, float-noise ties included.
    """
    return MeasureTuples.of(measure, cols, alphas, exact_ties, defined_only=False).table(np.arange(len(cols.n)), GradeClasses.of(grade))
