"""Columnar view of graded samples: the few small integers per row that the measures need.

Built once from validated records (local JSON/JSONL or the Hugging Face dataset); everything
downstream (measures, segments, correlations) works on these numpy arrays.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragdiag.data.graded_columns import Labels, ReadAnswers, RowColumns, string_codes
from ragdiag.data.graded_ratings import check_grade_values, rating_matrix_of
from ragdiag.data.schema import check_graded_record, subset_of
from ragdiag.errors import DataError


@dataclass
class GradedSource:
    """Where graded rows came from, recorded in every result's metadata."""

    name: str
    sha256: str | None = None
    simulated_grades: bool = False
    notice: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class GradedTable:
    """One row per graded sample; string columns are integer codes into the ``*_names`` lists.

    ``n`` = positives in the top K (sum of inK), ``in_k`` the 0/1 inK lists zero-padded to the
    largest K (uint8; nDCG is computed from it by :func:`ragdiag.measures.sample.ndcg`), ``grade``
    is float (a mean grade when judged several times).
    """

    query: np.ndarray
    query_names: list[str]
    embedder: np.ndarray
    embedder_names: list[str]
    subset: np.ndarray
    subset_names: list[str]
    Nc: np.ndarray
    Np: np.ndarray
    K: np.ndarray
    n: np.ndarray
    in_k: np.ndarray
    grade: np.ndarray
    source: GradedSource
    skipped_missing_grade: int = 0
    ratings: np.ndarray | None = None  # (rows, R) repeated grades (or judges' grades), NaN where missing
    ratings_source: str | None = None  # "repeats" (grade = their mean) or "judges" (grade = first judge's)
    degenerate: np.ndarray | None = None  # bool per row: its ideal answer is degenerate (reference gate)
    degenerate_kinds: list[str | None] | None = None  # the kind per row (None: usable)
    reference_gate: dict[str, Any] | None = None  # how the gate was applied (patterns, whether the file had texts)
    grade_probs: np.ndarray | None = None  # (rows, 5) digit probabilities p1..p5 (--grade-mode logprobs), NaN rows where absent
    with_missing: GradedTable | None = None  # every row, grade NaN where missing (only when some are)

    def __len__(self) -> int:
        return int(self.K.shape[0])

    @property
    def nn(self) -> np.ndarray:
        """Negatives in the top K: K − n."""
        return self.K - self.n

    def take(self, mask: np.ndarray) -> GradedTable:
        """The rows where ``mask`` is true (codes and names kept)."""
        cols = {name: getattr(self, name)[mask] for name in _ARRAY_COLUMNS}
        kinds = None if self.degenerate_kinds is None else list(itertools.compress(self.degenerate_kinds, mask.tolist()))
        return GradedTable(
            query_names=self.query_names, embedder_names=self.embedder_names, subset_names=self.subset_names,
            source=self.source, skipped_missing_grade=self.skipped_missing_grade,
            ratings=None if self.ratings is None else self.ratings[mask], ratings_source=self.ratings_source, **cols,
            degenerate=None if self.degenerate is None else self.degenerate[mask], degenerate_kinds=kinds,
            reference_gate=self.reference_gate, grade_probs=None if self.grade_probs is None else self.grade_probs[mask],
        )


_ARRAY_COLUMNS = ("query", "embedder", "subset", "Nc", "Np", "K", "n", "in_k", "grade")


def _kept_labels(labels: Labels, keep: np.ndarray) -> Labels:
    """:func:`string_codes` of the strings of the rows where ``keep`` is true, from their codes (the codes are
    ranks into the sorted strings, so the kept ones' distinct codes, in order, are their sorted strings)."""
    distinct, codes = np.unique(labels[0][keep], return_inverse=True)
    return codes.ravel().astype(np.int32), [labels[1][code] for code in distinct.tolist()]


def _validate_slowly(records: list, source_label: str) -> None:
    """Per-record validation: raises DataError naming the first bad record (1-based) and field."""
    for number, record in enumerate(records, start=1):
        check_graded_record(record, source_label, number)


def _all_distinct(*columns: np.ndarray) -> bool:
    """Whether no two rows of the non-negative integer ``columns`` are equal: one mixed-radix int64 key
    per row (first column the most significant), sorted, when the key space fits in 63 bits; else the
    rows sorted by :func:`numpy.lexsort`."""
    spans = [int(column.max()) + 1 for column in columns]
    if min(int(column.min()) for column in columns) >= 0 and math.prod(spans) < 2**63:
        key = np.zeros(len(columns[0]), dtype=np.int64)
        for column, span in zip(columns, spans):
            key = key * span + column
        key.sort()
        return not bool(np.any(key[1:] == key[:-1]))
    keys = np.stack(columns, axis=1)[np.lexsort(columns[::-1])]
    return not bool(np.any(np.all(keys[1:] == keys[:-1], axis=1)))


def check_unique_keys(ids: Labels, embedders: Labels, nc: np.ndarray, np_: np.ndarray, k: np.ndarray,
                      source_label: str) -> None:
    """Refuse two records with the same sample key (id, E, Nc, Np, K), naming both (1-based); ``ids`` and
    ``embedders`` as :func:`string_codes`."""
    if len(k) < 2:
        return
    if _all_distinct(ids[0].astype(np.int64), embedders[0].astype(np.int64), nc.astype(np.int64),
                     np_.astype(np.int64), k.astype(np.int64)):
        return
    keys = list(zip([ids[1][code] for code in ids[0].tolist()], [embedders[1][code] for code in embedders[0].tolist()],
                    nc.tolist(), np_.tolist(), k.tolist()))
    first: dict[tuple, int] = {}
    for number, key in enumerate(keys, start=1):
        if key in first:
            sid, emb, c, p, kk = key
            raise DataError(f"{source_label}: records {first[key]} and {number} are the same sample "
                            f"(id '{sid}', E '{emb}', Nc {c}, Np {p}, K {kk}); remove one")
        first[key] = number


def _columns_fast(records: list) -> dict[str, Any] | None:
    """The columns of well-formed records in a few vectorised passes; None if anything is off
    (the caller then validates record by record to name the problem)."""
    try:
        ids = [r["id"] for r in records]
        embedders = [r["E"] for r in records]
        ints = {name: [r[name] for r in records] for name in ("Nc", "Np", "K")}
        grades = [r["grade"] for r in records]
        in_k = [r["inK"] for r in records]
    except (KeyError, TypeError):
        return None
    if not (_only(ids, str) and _only(embedders, str) and all(_only(col, int) for col in ints.values())
            and _only(in_k, list) and _only(grades, type(None), int, float)):
        return None  # bool is not an integer here, though numpy would take it as one
    int_columns = {name: np.asarray(col) for name, col in ints.items()}
    if any(col.dtype.kind != "i" for col in int_columns.values() if len(col)):
        return None
    if not all(_only(values, int) for values in in_k):
        return None
    lengths = np.fromiter(map(len, in_k), dtype=np.int64, count=len(in_k))
    try:
        flat = np.fromiter(itertools.chain.from_iterable(in_k), dtype=np.int64, count=int(lengths.sum()))
    except OverflowError:
        return None
    if flat.size and (flat.min() < 0 or flat.max() > 1):
        return None
    return _checked_columns(string_codes(ids), string_codes(embedders), int_columns["Nc"], int_columns["Np"],
                            int_columns["K"], np.array(grades, dtype=np.float64), grades.count(None),
                            flat.astype(np.uint8), lengths)


def _only(values: list, *types: type) -> bool:
    """Whether every value is of exactly one of ``types`` (subclasses, such as bool for int, refused)."""
    return set(map(type, values)) <= set(types)


def _checked_columns(ids: Labels, embedders: Labels, nc: np.ndarray, np_: np.ndarray, k: np.ndarray,
                     grade: np.ndarray, nulls: int, flat: np.ndarray, lengths: np.ndarray) -> dict[str, Any] | None:
    """The columns from the fields' values, of the right types (strings as :func:`string_codes`, integer arrays,
    the grades as floats with NaN for the ``nulls`` null ones, the inK values 0/1 one list after the other
    and each list's length), checked; None if a value is off."""
    if not len(k):
        empty = np.zeros(0, dtype=np.int64)
        no_labels: Labels = (np.zeros(0, dtype=np.int32), [])
        return {"Nc": empty, "Np": empty, "K": empty, "grade": np.zeros(0), "in_k": np.zeros((0, 0), dtype=np.uint8),
                "n": empty, "codes": no_labels, "embedder_codes": no_labels}
    if int(np.isnan(grade).sum()) != nulls:
        return None  # a NaN grade is not a missing grade
    nc, np_, k = (column.astype(np.int64) for column in (nc, np_, k))
    if not np.array_equal(lengths, k):
        return None
    if k.min() < 1 or np_.min() < 1 or np.any(k > nc) or np.any(np_ > nc):
        return None
    present = ~np.isnan(grade)
    if np.any(~((grade[present] >= 1) & (grade[present] <= 5))):  # also catches ±inf
        return None
    width = int(k.max())
    in_k = np.zeros((len(k), width), dtype=np.uint8)  # the lists zero-padded to the largest K
    in_k[np.arange(width)[None, :] < k[:, None]] = flat
    n = np.zeros(len(k), dtype=np.int64)
    for column in in_k.T:  # Σ inK, a column at a time (rows are short, columns long)
        n += column
    if np.any(n > np_):
        return None
    return {"Nc": nc, "Np": np_, "K": k, "grade": grade, "in_k": in_k, "n": n, "codes": ids,
            "embedder_codes": embedders}


def ideal_answer_kinds(records: list[dict], gate: Any) -> list[str | None] | None:
    """:func:`ideal_kinds_of` the records' ``id``, ``answer_ideal`` and ``ideal_degenerate`` fields."""
    return ideal_kinds_of(string_codes([r["id"] for r in records]), [r.get("answer_ideal") for r in records],
                          [r.get("ideal_degenerate") for r in records], gate)


def ideal_kinds_of(ids: Labels, answers: Sequence[Any], recorded: list, gate: Any) -> list[str | None] | None:
    """The degenerate kind of each record's ideal answer (``recorded``: ``ideal_degenerate`` as ``grade``
    recorded it, else the gate on ``answers``, judged once per distinct id on its first record's answer);
    None when no record carries an ideal-answer text (e.g. the bundled sample, whose texts are blank): the
    gate cannot apply. ``ids``: :func:`string_codes` of the records' ids."""
    if not any(isinstance(text, str) and text.strip() for text in answers):
        return None
    id_codes = ids[0]
    first = np.unique(id_codes, return_index=True)[1].tolist()  # each id's first record, ids in code order
    texts = [answers[row] if isinstance(answers[row], str) else None for row in first]
    judged = np.array(gate.classify(texts, [None] * len(texts)), dtype=object)  # kind per id code
    if recorded.count(None) == len(recorded):
        return judged[id_codes].tolist()
    return [kind if isinstance(kind, str) else judged[code] for kind, code in zip(recorded, id_codes.tolist())]


def read_grade_probs(values: list, source_label: str) -> np.ndarray | None:
    """The ``grade_probs`` of each record (``values``, None where absent) as a (rows, 5) array (NaN rows
    where absent), None when no record has them. Each must be 5 finite probabilities ≥ 0 summing to 1
    (±1e-6); else the record is named."""
    if values.count(None) == len(values):
        return None
    out = np.full((len(values), 5), np.nan)
    for number, probs in enumerate(values, start=1):
        if probs is None:
            continue
        ok = (isinstance(probs, list) and len(probs) == 5
              and all(type(p) in (int, float) and math.isfinite(p) and p >= 0 for p in probs)
              and abs(sum(probs) - 1.0) <= 1e-6)
        if not ok:
            raise DataError.at(source_label, number, "grade_probs",
                               f"{probs!r} is not 5 probabilities (grades 1..5, each ≥ 0, summing to 1)")
        out[number - 1] = probs
    return out


_OPTIONAL_FIELDS = ("grades", "judges", "grade_probs", "answer_ideal", "ideal_degenerate")


def build_graded_table(records: Iterable[dict], source_label: str, source: GradedSource, gate: Any = None) -> GradedTable:
    """Validate every record (naming file, 1-based record number and field), refuse duplicate
    sample keys, and build the columns.

    Rows whose grade is null are skipped and counted in ``skipped_missing_grade``. With ``gate`` (a
    :class:`ragdiag.data.reference_gate.ReferenceGate`) each row is marked in ``degenerate`` when its
    ideal answer is degenerate, and such rows are kept even with a null grade (grade skipped them), so
    that ``correlate`` can count them per segment before leaving them out.
    """
    records = records if isinstance(records, list) else list(records)
    cols = _columns_fast(records)
    if cols is None:
        _validate_slowly(records, source_label)
        raise DataError(f"{source_label}: records do not follow the samples_graded schema")
    optional = {name: [r.get(name) for r in records] for name in _OPTIONAL_FIELDS}
    return _graded_table(cols, optional, source_label, source, gate)


def graded_table_from_columns(columns: RowColumns, source_label: str, source: GradedSource, gate: Any = None
                              ) -> GradedTable | None:
    """:func:`build_graded_table` of rows decoded by :func:`ragdiag.data.graded_rows.decode_graded_rows`
    (the same table, built from their :func:`ragdiag.data.graded_columns.row_columns` without a dict per
    record); None when a check fails (the caller then builds from the parsed records, which names the record)."""
    if columns.ints is None or columns.in_k is None:
        return None
    cols = _checked_columns(columns.ids, columns.embedders, columns.ints["Nc"], columns.ints["Np"],
                            columns.ints["K"], columns.grade, columns.nulls, *columns.in_k)
    if cols is None:
        return None
    optional: dict[str, Any] = {name: [None] * columns.rows if values is None else values
                                for name, values in columns.optional.items()}
    optional["answer_ideal"] = ReadAnswers(columns.answers, columns.rows)
    return _graded_table(cols, optional, source_label, source, gate)


def _graded_table(cols: dict[str, Any], optional: dict[str, Any], source_label: str, source: GradedSource,
                  gate: Any) -> GradedTable:
    """The table of checked columns and the optional fields' values (one list per field, None where absent)."""
    check_unique_keys(cols["codes"], cols["embedder_codes"], cols["Nc"], cols["Np"], cols["K"], source_label)
    check_grade_values(optional["grades"], source_label)
    probs = read_grade_probs(optional["grade_probs"], source_label)
    kinds = (ideal_kinds_of(cols["codes"], optional["answer_ideal"], optional["ideal_degenerate"], gate)
             if gate is not None else None)
    flagged = (np.fromiter(map(operator.is_not, kinds, itertools.repeat(None)), dtype=bool, count=len(kinds))
               if kinds is not None else np.zeros(len(cols["K"]), bool))
    keep = ~np.isnan(cols["grade"]) | flagged
    table = _table(optional, cols, keep, flagged, source, gate, kinds, probs)
    if not keep.all():
        table.with_missing = _table(optional, cols, np.ones(len(keep), dtype=bool), flagged, source, gate, kinds, probs)
    return table


def _table(optional: dict[str, Any], cols: dict[str, Any], keep: np.ndarray, flagged: np.ndarray,
           source: GradedSource, gate: Any, kinds: list[str | None] | None, probs: np.ndarray | None) -> GradedTable:
    """The table of the rows where ``keep`` is true (``flagged``: the rows whose ideal answer the gate found
    degenerate). ``skipped_missing_grade`` counts the rows without a grade whose ideal answer is not
    degenerate (those the gate flagged are kept, marked, for correlate)."""
    every = bool(keep.all())

    def kept(column: np.ndarray) -> np.ndarray:
        return column if every else column[keep]

    k, n = kept(cols["K"]), kept(cols["n"])
    if every:
        (query, query_names), (embedder, embedder_names) = cols["codes"], cols["embedder_codes"]
    else:
        (query, query_names), (embedder, embedder_names) = (_kept_labels(cols[name], keep)
                                                            for name in ("codes", "embedder_codes"))
    subset, subset_names = string_codes([subset_of(q) for q in query_names])
    ratings, ratings_source = rating_matrix_of(optional["grades"], optional["judges"], keep)
    return GradedTable(
        ratings=ratings, ratings_source=ratings_source,
        query=query, query_names=query_names,
        embedder=embedder, embedder_names=embedder_names,
        subset=subset[query] if len(query) else subset, subset_names=subset_names,
        Nc=kept(cols["Nc"]), Np=kept(cols["Np"]), K=k, n=n, in_k=kept(cols["in_k"]), grade=kept(cols["grade"]),
        source=source, skipped_missing_grade=int((np.isnan(cols["grade"]) & ~flagged).sum()),
        degenerate=kept(flagged) if gate is not None else None,
        degenerate_kinds=(None if kinds is None else list(kinds) if every
                          else list(itertools.compress(kinds, keep.tolist()))),
        reference_gate=None if gate is None else {**gate.describe(), "applied": kinds is not None},
        grade_probs=None if probs is None else kept(probs),
    )
