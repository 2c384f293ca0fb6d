"""Bootstrap intervals over queries for average recall and Robustness-δ@K (note 002's open item).

Percentile bootstrap (Efron & Tibshirani 1993, ch. 13): draw B resamples of the query indices with
replacement from ``numpy.random.default_rng(seed)``, recompute the statistic on each, and report the
2.5th and 97.5th percentiles of the B replicates. Average recall and every Robustness-δ@K of one
operating point share the same resamples, so their intervals are computed on the same replicate
query sets. Robustness-δ@K is the mean of the indicator 1[R_i ≥ δ], so each replicate is a mean.
"""

from __future__ import annotations

import numpy as np

from ragdiag.metrics.analysis import percentile_interval

DEFAULT_BOOTSTRAP = 1000
_TOL = 1e-12  # as robustness_at_k: a recall within 1e-12 below δ reaches it
_CHUNK = 200


def resample_indices(n_queries: int, n_boot: int, seed: int) -> np.ndarray:
    """(B, n) query indices drawn with replacement; the same (n, B, seed) gives the same draws."""
    return np.random.default_rng(seed).integers(0, n_queries, size=(n_boot, n_queries))


def replicate_means(values: np.ndarray, resamples: np.ndarray) -> np.ndarray:
    """(B, …) mean of ``values`` (queries on axis 0) over each resample, in chunks of resamples."""
    return np.concatenate([values[part].mean(axis=1) for part in np.array_split(resamples, max(1, len(resamples) // _CHUNK))])


def recall_replicates(recalls: np.ndarray, deltas: tuple[float, ...], resamples: np.ndarray) -> np.ndarray:
    """(B, 1 + len(deltas)) replicates of [average recall, Robustness-δ@K for each δ]."""
    recalls = np.asarray(recalls, dtype=np.float64)
    columns = np.column_stack([recalls, *[(recalls >= d - _TOL).astype(np.float64) for d in deltas]])
    return replicate_means(columns, resamples)


def recall_intervals(recalls: np.ndarray, deltas: tuple[float, ...], n_boot: int, seed: int) -> dict:
    """``{"recall_mean_ci": [lo, hi], "robustness_ci": {"0.1": [lo, hi], …}}``: 95% percentile
    intervals from ``n_boot`` resamples of the queries (seeded)."""
    reps = recall_replicates(recalls, deltas, resample_indices(len(recalls), n_boot, seed))
    return {"recall_mean_ci": percentile_interval(reps[:, 0]),
            "robustness_ci": {f"{d:g}": percentile_interval(reps[:, 1 + i]) for i, d in enumerate(deltas)}}
