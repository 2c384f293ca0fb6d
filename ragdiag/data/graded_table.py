"""Columnar view of graded samples: the few small integers per row that the measures need.

Built once from validated records (local JSON/JSONL or the Hugging Face dataset); everything
downstream (measures, segments, correlations) works on these numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from ragdiag.data.schema import check_graded_record, subset_of


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

    ``n`` = positives in the top K (sum of inK), ``ndcg`` = DCG(inK)/DCG(n ones) (METHODS §2),
    ``grade`` is float (a mean grade when judged several times).
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
    ndcg: np.ndarray
    grade: np.ndarray
    source: GradedSource
    skipped_missing_grade: int = 0

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


_ARRAY_COLUMNS = ("query", "embedder", "subset", "Nc", "Np", "K", "n", "ndcg", "grade")


def ndcg_of_rows(in_k: np.ndarray, k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """nDCG per row from a zero-padded inK matrix: DCG(inK) / DCG(n ones), 0 when n = 0.

    DCG(v) = Σ_i v_i / log2(i + 2), summed left to right (the order a per-sample loop uses).
    """
    width = in_k.shape[1]
    discount = 1.0 / np.log2(np.arange(width) + 2.0)
    dcg = np.cumsum(in_k * discount, axis=1)[np.arange(len(k)), np.maximum(k - 1, 0)] if width else np.zeros(len(k))
    ideal_by_n = np.concatenate([[0.0], np.cumsum(discount)])
    ideal = ideal_by_n[n]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, dcg / np.where(n > 0, ideal, 1.0), 0.0)


def _codes(values: list[str]) -> tuple[np.ndarray, list[str]]:
    names, codes = np.unique(np.asarray(values, dtype=object).astype(str), return_inverse=True)
    return codes.astype(np.int32), [str(x) for x in names]


def build_graded_table(records: Iterable[dict], source_label: str, source: GradedSource) -> GradedTable:
    """Validate every record (naming file, record index and field) and build the columns.

    Rows whose grade is null are skipped and counted in ``skipped_missing_grade``.
    """
    ids: list[str] = []
    embedders: list[str] = []
    nc: list[int] = []
    np_: list[int] = []
    ks: list[int] = []
    grades: list[float] = []
    in_k_rows: list[list[int]] = []
    skipped = 0
    for index, record in enumerate(records):
        check_graded_record(record, source_label, index)
        if record["grade"] is None:
            skipped += 1
            continue
        ids.append(record["id"])
        embedders.append(record["E"])
        nc.append(record["Nc"])
        np_.append(record["Np"])
        ks.append(record["K"])
        grades.append(float(record["grade"]))
        in_k_rows.append(record["inK"])
    k = np.asarray(ks, dtype=np.int64)
    width = int(k.max()) if len(k) else 0
    in_k = np.zeros((len(k), width), dtype=np.float64)
    if len(k):
        flat = np.fromiter((v for row in in_k_rows for v in row), dtype=np.float64, count=int(k.sum()))
        in_k[np.arange(width)[None, :] < k[:, None]] = flat
    n = in_k.sum(axis=1).astype(np.int64)
    query, query_names = _codes(ids)
    embedder, embedder_names = _codes(embedders)
    subset, subset_names = _codes([subset_of(q) for q in query_names])
    return GradedTable(
        query=query, query_names=query_names,
        embedder=embedder, embedder_names=embedder_names,
        subset=subset[query], subset_names=subset_names,
        Nc=np.asarray(nc, dtype=np.int64), Np=np.asarray(np_, dtype=np.int64), K=k, n=n,
        ndcg=ndcg_of_rows(in_k, k, n), grade=np.asarray(grades, dtype=np.float64),
        source=source, skipped_missing_grade=skipped,
    )
