"""Columnar view of graded samples: the few small integers per row that the measures need.

Built once from validated records (local JSON/JSONL or the Hugging Face dataset); everything
downstream (measures, segments, correlations) works on these numpy arrays.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragdiag.data.graded_ratings import check_grade_lists, rating_matrix
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
        kinds = None if self.degenerate_kinds is None else [k for k, m in zip(self.degenerate_kinds, mask) if m]
        return GradedTable(
            query_names=self.query_names, embedder_names=self.embedder_names, subset_names=self.subset_names,
            source=self.source, skipped_missing_grade=self.skipped_missing_grade,
            ratings=None if self.ratings is None else self.ratings[mask], ratings_source=self.ratings_source, **cols,
            degenerate=None if self.degenerate is None else self.degenerate[mask], degenerate_kinds=kinds,
            reference_gate=self.reference_gate, grade_probs=None if self.grade_probs is None else self.grade_probs[mask],
        )


_ARRAY_COLUMNS = ("query", "embedder", "subset", "Nc", "Np", "K", "n", "in_k", "grade")


def _codes(values: list[str]) -> tuple[np.ndarray, list[str]]:
    names, codes = np.unique(np.asarray(values, dtype=object).astype(str), return_inverse=True)
    return codes.astype(np.int32), [str(x) for x in names]


def _validate_slowly(records: list, source_label: str) -> None:
    """Per-record validation: raises DataError naming the first bad record (1-based) and field."""
    for number, record in enumerate(records, start=1):
        check_graded_record(record, source_label, number)


def check_unique_keys(ids: list[str], embedders: list[str], nc: np.ndarray, np_: np.ndarray, k: np.ndarray,
                      source_label: str) -> None:
    """Refuse two records with the same sample key (id, E, Nc, Np, K), naming both (1-based)."""
    keys = list(zip(ids, embedders, nc.tolist(), np_.tolist(), k.tolist()))
    if len(set(keys)) == len(keys):
        return
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
    if not records:
        empty = np.zeros(0, dtype=np.int64)
        return {"ids": [], "embedders": [], "Nc": empty, "Np": empty, "K": empty, "grade": np.zeros(0),
                "flat": np.zeros(0), "n": empty}
    try:
        ids = [r["id"] for r in records]
        embedders = [r["E"] for r in records]
        ints = {name: [r[name] for r in records] for name in ("Nc", "Np", "K")}
        grades = [r["grade"] for r in records]
        in_k = [r["inK"] for r in records]
    except (KeyError, TypeError):
        return None
    if not all(type(x) is str for x in ids) or not all(type(x) is str for x in embedders):
        return None
    if not all(type(x) is int for col in ints.values() for x in col) or not all(type(x) is list for x in in_k):
        return None  # bool is not an integer here, though numpy would take it as one
    int_columns = {name: np.asarray(col) for name, col in ints.items()}
    if any(col.dtype.kind != "i" for col in int_columns.values()):
        return None
    if not all(g is None or type(g) in (int, float) for g in grades) or any(g != g for g in grades if g is not None):
        return None  # a NaN grade is not a missing grade
    k = int_columns["K"].astype(np.int64)
    lengths = np.fromiter(map(len, in_k), dtype=np.int64, count=len(in_k))
    if not np.array_equal(lengths, k):
        return None
    items = list(itertools.chain.from_iterable(in_k))
    if not all(type(x) is int for x in items):
        return None
    flat = np.asarray(items) if items else np.zeros(0, dtype=np.int64)
    if flat.dtype.kind != "i" or (flat.size and (flat.min() < 0 or flat.max() > 1)):
        return None
    nc = int_columns["Nc"].astype(np.int64)
    if len(k) and (k.min() < 1 or int_columns["Np"].min() < 1 or np.any(k > nc) or np.any(int_columns["Np"] > nc)):
        return None
    grade = np.asarray([np.nan if g is None else g for g in grades], dtype=np.float64)
    present = ~np.isnan(grade)
    if np.any(~((grade[present] >= 1) & (grade[present] <= 5))):  # also catches ±inf
        return None
    np_ = int_columns["Np"].astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(k) else np.zeros(0, dtype=np.int64)
    n = np.add.reduceat(flat, starts) if flat.size else np.zeros(len(k), dtype=np.int64)
    n = np.where(lengths > 0, n, 0)
    if np.any(n > np_):
        return None
    return {"ids": ids, "embedders": embedders, "Nc": nc, "Np": np_, "K": k,
            "grade": grade, "flat": flat.astype(np.uint8), "n": n}


def ideal_answer_kinds(records: list[dict], gate: Any) -> list[str | None] | None:
    """The degenerate kind of each record's ideal answer (``ideal_degenerate`` as ``grade`` recorded it,
    else the gate on ``answer_ideal``, judged once per distinct id); None when no record carries an
    ideal-answer text (e.g. the bundled sample, whose texts are blank): the gate cannot apply."""
    if not any(isinstance(r.get("answer_ideal"), str) and r["answer_ideal"].strip() for r in records):
        return None
    by_id: dict[str, str | None] = {}
    for r in records:
        text = r.get("answer_ideal")
        by_id.setdefault(r["id"], text if isinstance(text, str) else None)
    ids = list(by_id)
    judged = dict(zip(ids, gate.classify([by_id[i] for i in ids], [None] * len(ids))))
    return [r["ideal_degenerate"] if isinstance(r.get("ideal_degenerate"), str) else judged[r["id"]] for r in records]


def read_grade_probs(records: list[dict], source_label: str) -> np.ndarray | None:
    """The ``grade_probs`` of each record as a (rows, 5) array (NaN rows where absent), None when no record
    has them. Each must be 5 finite probabilities ≥ 0 summing to 1 (±1e-6); else the record is named."""
    if not any(r.get("grade_probs") is not None for r in records):
        return None
    out = np.full((len(records), 5), np.nan)
    for number, record in enumerate(records, start=1):
        probs = record.get("grade_probs")
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
    check_unique_keys(cols["ids"], cols["embedders"], cols["Nc"], cols["Np"], cols["K"], source_label)
    check_grade_lists(records, source_label)
    probs = read_grade_probs(records, source_label)
    kinds = ideal_answer_kinds(records, gate) if gate is not None else None
    flagged = np.array([k is not None for k in kinds], dtype=bool) if kinds is not None else np.zeros(len(records), bool)
    keep = ~np.isnan(cols["grade"]) | flagged
    k_all = cols["K"]
    width = int(k_all.max()) if len(k_all) else 0
    in_k = np.zeros((len(k_all), width), dtype=np.uint8)
    in_k[np.arange(width)[None, :] < k_all[:, None]] = cols["flat"]
    table = _table(records, cols, in_k, keep, source, gate, kinds, probs)
    if not keep.all():
        table.with_missing = _table(records, cols, in_k, np.ones(len(keep), dtype=bool), source, gate, kinds, probs)
    return table


def _table(records: list, cols: dict[str, Any], in_k: np.ndarray, keep: np.ndarray, source: GradedSource, gate: Any,
           kinds: list[str | None] | None, probs: np.ndarray | None) -> GradedTable:
    """The table of the rows where ``keep`` is true. ``skipped_missing_grade`` counts the rows without a
    grade whose ideal answer is not degenerate (those the gate flagged are kept, marked, for correlate)."""
    flagged = np.array([k is not None for k in kinds], dtype=bool) if kinds is not None else np.zeros(len(keep), bool)
    k_all = cols["K"]
    ids = [x for x, kept in zip(cols["ids"], keep) if kept]
    embedders = [x for x, kept in zip(cols["embedders"], keep) if kept]
    k, n = k_all[keep], cols["n"][keep]
    query, query_names = _codes(ids)
    embedder, embedder_names = _codes(embedders)
    subset, subset_names = _codes([subset_of(q) for q in query_names])
    ratings, ratings_source = rating_matrix(records, keep)
    return GradedTable(
        ratings=ratings, ratings_source=ratings_source,
        query=query, query_names=query_names,
        embedder=embedder, embedder_names=embedder_names,
        subset=subset[query] if len(query) else subset, subset_names=subset_names,
        Nc=cols["Nc"][keep], Np=cols["Np"][keep], K=k, n=n,
        in_k=in_k[keep], grade=cols["grade"][keep],
        source=source, skipped_missing_grade=int((np.isnan(cols["grade"]) & ~flagged).sum()),
        degenerate=flagged[keep] if gate is not None else None,
        degenerate_kinds=[k for k, kept in zip(kinds, keep) if kept] if kinds is not None else None,
        reference_gate=None if gate is None else {**gate.describe(), "applied": kinds is not None},
        grade_probs=None if probs is None else probs[keep],
    )
