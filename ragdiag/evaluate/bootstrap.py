"""Bootstrap over queries, batched, with one set of replicates shared by every column.

Each replicate draws n queries with replacement (numpy ``default_rng(seed)``), stored as a count
matrix C (replicates × n). For a column of per-query values v with NaN where the metric is
undefined, the replicate mean is Σ_q C[b, q]·v_q·d_q / Σ_q C[b, q]·d_q (d_q = 1 where defined): the
macro mean over the defined queries of the resample. All columns — metrics of every run, paired
differences, stage indicators — use the same draws, so a difference column *is* the paired
bootstrap (Efron & Tibshirani 1993, ch. 6; paired over queries as in Sakai 2006).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Summary:
    """Macro mean over the defined queries, its 95% percentile interval and the defined count."""

    value: float | None
    ci: tuple[float, float] | None
    n_defined: int


def _resample_counts(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    draws = rng.integers(0, n, size=(size, n))
    flat = (draws + (np.arange(size) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)


def bootstrap_means(values: np.ndarray, replicates: int, seed: int, batch: int = 250) -> np.ndarray:
    """Replicate means, shape ``(replicates, M)``, for ``values`` of shape ``(n_queries, M)``.

    NaN marks an undefined value; a replicate with no defined query for a column gives NaN.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[0]
    defined = (~np.isnan(values)).astype(np.float64)
    filled = np.nan_to_num(values, nan=0.0)
    rng = np.random.default_rng(seed)
    out = np.empty((replicates, values.shape[1]))
    for start in range(0, replicates, batch):
        size = min(batch, replicates - start)
        counts = _resample_counts(rng, n, size)
        num, den = counts @ filled, counts @ defined
        with np.errstate(divide="ignore", invalid="ignore"):
            out[start:start + size] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def summarise(values: np.ndarray, replicates: int, seed: int) -> list[Summary]:
    """One :class:`Summary` per column of ``values`` (n_queries × M); no interval when replicates = 0."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    defined = ~np.isnan(values)
    n_defined = defined.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(n_defined > 0, np.nansum(values, axis=0) / np.maximum(n_defined, 1), np.nan)
    if replicates > 0 and values.shape[0] > 0:
        reps = bootstrap_means(values, replicates, seed)
        tail = (1.0 - CONFIDENCE) / 2 * 100
        all_nan = np.isnan(reps).all(axis=0)
        safe = np.where(all_nan[None, :], 0.0, reps)
        low, high = np.nanpercentile(safe, [tail, 100 - tail], axis=0)
    else:
        all_nan = np.ones(values.shape[1], dtype=bool)
        low = high = np.zeros(values.shape[1])
    out = []
    for j in range(values.shape[1]):
        if n_defined[j] == 0:
            out.append(Summary(None, None, 0))
            continue
        ci = None if all_nan[j] else (float(low[j]), float(high[j]))
        out.append(Summary(float(means[j]), ci, int(n_defined[j])))
    return out


def paired_shares(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None, int]:
    """(share of queries where b > a, share where b < a, queries where both are defined)."""
    both = ~np.isnan(a) & ~np.isnan(b)
    n = int(both.sum())
    if n == 0:
        return None, None, 0
    diff = b[both] - a[both]
    return float((diff > 0).mean()), float((diff < 0).mean()), n
