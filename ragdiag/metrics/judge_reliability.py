"""How reliable the judge's grade is, and correlations corrected for its noise.

* One-way random-effects intraclass correlation (Shrout & Fleiss 1979, case 1) from the one-way
  ANOVA mean squares of an (items × ratings) matrix, items = graded rows, ratings = repeats:
  MSB = Σ cᵢ (ȳᵢ − ȳ)² / (n − 1), MSW = Σᵢⱼ (yᵢⱼ − ȳᵢ)² / (N − n), cᵢ ratings of item i, N = Σ cᵢ;
  ICC(1,1) = (MSB − MSW) / (MSB + (k₀ − 1) MSW), k₀ = (N − Σ cᵢ² / N) / (n − 1) (= k when balanced);
  ICC(1,k) = k ICC(1,1) / (1 + (k − 1) ICC(1,1)) with k = N / n, the Spearman–Brown step, which
  equals (MSB − MSW) / MSB when every item has k ratings. Missing ratings are NaN. Items can be
  weighted (bootstrap multiplicities), which equals repeating them.
* Spearman's (1904) correction for attenuation: the measure is computed exactly (reliability 1), so
  r* = r / √rel, capped to [−1, 1]; undefined when rel ≤ 0. Exact for Pearson r; for rank
  correlations an approximation.
* Krippendorff's α, the reliability of one rating: ordinal (``krippendorff`` package) for whole-number
  grades, interval in closed form (:func:`interval_alpha`) for expected grades (``--grade-mode
  logprobs``), where the package's value × value arrays would not fit in memory.
"""

from __future__ import annotations

import warnings

import numpy as np


def icc_oneway(ratings: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """ICC(1,1) and ICC(1,k) of ``ratings`` (..., items, R) with NaN for missing, items weighted by
    ``weights`` (..., items); NaN where undefined (fewer than 2 items, no repeat, no spread)."""
    ratings = np.asarray(ratings, dtype=np.float64)
    present = ~np.isnan(ratings)
    count = present.sum(axis=-1).astype(np.float64)
    w = np.ones(ratings.shape[:-1]) if weights is None else np.asarray(weights, dtype=np.float64)
    w = np.where(count > 0, w, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        item_mean = np.nansum(ratings, axis=-1) / count
        within = np.nansum((ratings - item_mean[..., None]) ** 2, axis=-1)
        item_mean = np.where(count > 0, item_mean, 0.0)
        items = w.sum(axis=-1)
        total = (w * count).sum(axis=-1)
        grand = (w * count * item_mean).sum(axis=-1) / total
        msb = (w * count * (item_mean - grand[..., None]) ** 2).sum(axis=-1) / (items - 1)
        msw = (w * np.where(count > 0, within, 0.0)).sum(axis=-1) / (total - items)
        k0 = (total - (w * count**2).sum(axis=-1) / total) / (items - 1)
        icc1 = (msb - msw) / (msb + (k0 - 1) * msw)
        k = total / items
        icck = k * icc1 / (1 + (k - 1) * icc1)
    undefined = (items < 2) | (total - items <= 0) | ~np.isfinite(icc1) | (msb <= 0)
    return np.where(undefined, np.nan, icc1), np.where(undefined, np.nan, icck)


def grade_reliability(ratings: np.ndarray, source: str, weights: np.ndarray | None = None) -> np.ndarray:
    """The reliability of the grade that is correlated: ICC(1,k) when it is the mean of k repeats,
    ICC(1,1) when it is one judge's grade and the ratings are several judges'."""
    icc1, icck = icc_oneway(ratings, weights)
    return icck if source == "repeats" else icc1


def corrected(r: np.ndarray | float, reliability: np.ndarray | float) -> np.ndarray:
    """Spearman's correction r / √reliability, capped to [−1, 1]; NaN where reliability ≤ 0 or NaN."""
    r, reliability = np.asarray(r, dtype=np.float64), np.asarray(reliability, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = r / np.sqrt(np.where(reliability > 0, reliability, np.nan))
    return np.clip(value, -1.0, 1.0)


def ordinal_alpha(matrix: np.ndarray) -> float | None:
    """Krippendorff's α, ordinal level, for a (raters × items) matrix with NaN for missing; None when
    undefined (fewer than two raters, or a single grade value)."""
    import krippendorff

    if matrix.shape[0] < 2 or np.unique(matrix[~np.isnan(matrix)]).size < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    return None if np.isnan(value) else float(value)


def interval_alpha(matrix: np.ndarray) -> float | None:
    """Krippendorff's α, interval metric δ² = (a − b)², in closed form (Krippendorff 2011, "Computing
    Krippendorff's Alpha-Reliability", §C): α = 1 − D_o / D_e with, over the n values of units rated
    at least twice (m_u values in unit u),
    D_o = (1/n) Σ_u Σ_{i≠j∈u} (v_i − v_j)² / (m_u − 1) and D_e = Σ_{i≠j} (v_i − v_j)² / (n (n − 1)),
    using Σ_{i≠j} (v_i − v_j)² = 2 m Σ v² − 2 (Σ v)². Equal to ``krippendorff.alpha(level="interval")``
    (tested), in O(values) memory where the package builds units × values × values arrays."""
    if matrix.shape[0] < 2:
        return None
    present = ~np.isnan(matrix)
    counts = present.sum(axis=0)
    pairable = counts >= 2
    values = np.where(present, matrix, 0.0)[:, pairable]
    m = counts[pairable].astype(np.float64)
    n = m.sum()
    if n < 2 or np.unique(values[present[:, pairable]]).size < 2:
        return None
    sums, squares = values.sum(axis=0), (values ** 2).sum(axis=0)
    observed = np.sum((2 * m * squares - 2 * sums ** 2) / (m - 1)) / n
    expected = (2 * n * squares.sum() - 2 * sums.sum() ** 2) / (n * (n - 1))
    return float(1 - observed / expected)


def repeat_alpha(ratings: np.ndarray) -> tuple[str, float | None]:
    """("ordinal", α) for whole-number grades, ("interval", α) for expected grades; ``ratings`` is
    (items × raters) with NaN for missing."""
    present = ratings[~np.isnan(ratings)]
    if np.all(present == np.round(present)):
        return "ordinal", ordinal_alpha(ratings.T)
    return "interval", interval_alpha(ratings.T)


def _finite(value: float | np.ndarray) -> float | None:
    return float(value) if np.isfinite(value) else None


def reliability_summary(ratings: np.ndarray, source: str) -> dict:
    """The judge's reliability over all rows: ICC(1,1), ICC(1,k), Krippendorff's α and the one used.
    Expected grades get ``alpha_interval`` (``alpha_ordinal`` None): α at the ordinal level needs whole grades."""
    import importlib.util

    icc1, icck = icc_oneway(ratings)
    count = (~np.isnan(ratings)).sum(axis=1)
    present = ratings[~np.isnan(ratings)]
    expected = not np.all(present == np.round(present))
    has_alpha = expected or importlib.util.find_spec("krippendorff") is not None  # core installs correct without it
    level, alpha = repeat_alpha(ratings) if has_alpha else ("ordinal", None)
    summary = {"source": source, "ratings_per_row": float(count[count > 0].mean()) if np.any(count > 0) else 0.0,
               "icc_1_1": _finite(icc1), "icc_1_k": _finite(icck),
               "alpha_ordinal": alpha if level == "ordinal" else None,
               "used": "icc_1_k" if source == "repeats" else "icc_1_1",
               "reliability": _finite(icck if source == "repeats" else icc1)}
    if level == "interval":
        summary["alpha_interval"] = alpha
    if not has_alpha:
        from ragdiag.extras import install_command

        summary["alpha_note"] = f"Krippendorff's α needs the krippendorff package: {install_command('calibrate')}"
    return summary
