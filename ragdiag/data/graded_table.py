"""Columnar view of graded samples: the few small integers per row that the measures need.

Built once from validated records (local JSON/JSONL or the Hugging Face dataset); everything
downstream (measures, segments, correlations) works on these numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import itertools

import numpy as np

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
    largest K (uint8; nDCG is computed from it by :func:`ragdiag.metrics.measures.ndcg`), ``grade``
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
    with_missing: GradedTable | None = None  # every row, grade NaN where missing (only when some are)

    def __len__(self) -> int:
        return int(self.K.shape[0])

    @property
    def nn(self) -> np.ndarray:
        """Negatives in the top K: K − n."""
        return self.K - self.n

    def take(self, mask: np.ndarray) -> "GradedTable":
        """The rows where ``mask`` is true (codes and names kept)."""
        cols = {name: getattr(self, name)[mask] for name in _ARRAY_COLUMNS}
        return GradedTable(
            query_names=self.query_names, embedder_names=self.embedder_names, subset_names=self.subset_names,
            source=self.source, skipped_missing_grade=self.skipped_missing_grade, **cols,
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


def build_graded_table(records: Iterable[dict], source_label: str, source: GradedSource) -> GradedTable:
    """Validate every record (naming file, 1-based record number and field), refuse duplicate
    sample keys, and build the columns.

    Rows whose grade is null are skipped and counted in ``skipped_missing_grade``.
    """
    records = records if isinstance(records, list) else list(records)
    cols = _columns_fast(records)
    if cols is None:
        _validate_slowly(records, source_label)
        raise DataError(f"{source_label}: records do not follow the samples_graded schema")
    check_unique_keys(cols["ids"], cols["embedders"], cols["Nc"], cols["Np"], cols["K"], source_label)
    keep = ~np.isnan(cols["grade"])
    k_all = cols["K"]
    width = int(k_all.max()) if len(k_all) else 0
    in_k = np.zeros((len(k_all), width), dtype=np.uint8)
    in_k[np.arange(width)[None, :] < k_all[:, None]] = cols["flat"]
    table = _table(cols, in_k, keep, source)
    if not keep.all():
        table.with_missing = _table(cols, in_k, np.ones(len(keep), dtype=bool), source)
    return table


def _table(cols: dict[str, Any], in_k: np.ndarray, keep: np.ndarray, source: GradedSource) -> GradedTable:
    """The table of the rows where ``keep`` is true (``skipped_missing_grade`` counts rows without a grade)."""
    k_all = cols["K"]
    ids = [x for x, kept in zip(cols["ids"], keep) if kept]
    embedders = [x for x, kept in zip(cols["embedders"], keep) if kept]
    k, n = k_all[keep], cols["n"][keep]
    query, query_names = _codes(ids)
    embedder, embedder_names = _codes(embedders)
    subset, subset_names = _codes([subset_of(q) for q in query_names])
    return GradedTable(
        query=query, query_names=query_names,
        embedder=embedder, embedder_names=embedder_names,
        subset=subset[query] if len(query) else subset, subset_names=subset_names,
        Nc=cols["Nc"][keep], Np=cols["Np"][keep], K=k, n=n,
        in_k=in_k[keep], grade=cols["grade"][keep],
        source=source, skipped_missing_grade=int(np.isnan(cols["grade"]).sum()),
    )
