"""Grade distribution per segment (paper 003, §3.1 and Figures 2–4, 19–20).

Per embedder and subset, rows are binned by K/Np rounded to one decimal (``ratio``, as the paper's
segments) or by K; in each bin the share of each grade 1–5 is reported, so every column sums to 1.
Bins with fewer than ``min_samples`` rows are left out, as the paper keeps only subsets of at
least 300 samples. A mean grade (several judgements) is binned to the nearest integer grade,
halves rounded up (2.5 → 3).
"""

from __future__ import annotations

import numpy as np

from ragdiag.data.graded_table import GradedTable
from ragdiag.errors import RagdiagError
from ragdiag.results.correlate import GRADES, GradeDistribution, GradePanel

BINNINGS = ("ratio", "K")


def integer_grades(grade: np.ndarray) -> np.ndarray:
    """Nearest integer grade, halves up, clipped to 1–5."""
    return np.clip(np.floor(np.asarray(grade, dtype=np.float64) + 0.5), 1, 5).astype(np.int64)


def bin_values(table: GradedTable, by: str) -> np.ndarray:
    """Per row: round(K/Np, 1) with Python's rounding (as the ratio segments), or K."""
    if by not in BINNINGS:
        raise RagdiagError(f"unknown grade binning '{by}': choose ratio or K")
    if by == "K":
        return table.K.astype(np.float64)
    pairs, inverse = np.unique(np.stack([table.K, table.Np], axis=1), axis=0, return_inverse=True)
    ratio_of_pair = np.array([round(int(k) / int(np_), 1) for k, np_ in pairs])
    return ratio_of_pair[inverse.ravel()]


def grade_distribution(table: GradedTable, by: str = "ratio", min_samples: int = 1) -> GradeDistribution:
    """Counts of each grade per bin, per embedder and subset; bins under ``min_samples`` rows dropped."""
    values = bin_values(table, by)
    grades = integer_grades(table.grade)
    panels = []
    for e, embedder in enumerate(table.embedder_names):
        for s, subset in enumerate(table.subset_names):
            rows = (table.embedder == e) & (table.subset == s)
            if not rows.any():
                continue
            bins, bin_of = np.unique(values[rows], return_inverse=True)
            counts = np.zeros((len(GRADES), len(bins)), dtype=np.int64)
            np.add.at(counts, (grades[rows] - 1, bin_of.ravel()), 1)
            totals = counts.sum(axis=0)
            keep = totals >= min_samples
            dropped = {f"{b:g}": int(t) for b, t in zip(bins[~keep], totals[~keep])}
            if keep.any():
                panels.append(GradePanel(embedder, subset, [float(b) for b in bins[keep]],
                                         counts[:, keep].tolist(), dropped))
    if not panels:
        raise RagdiagError(f"no {by} bin has at least {min_samples} graded rows for the grade distribution; "
                           f"lower --min-samples")
    return GradeDistribution(by, min_samples, panels)
