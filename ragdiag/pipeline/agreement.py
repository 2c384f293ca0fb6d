"""Judge variance: per-item SD of repeated grades and Krippendorff's α (ordinal) via ``krippendorff``.

Repeat agreement uses the first judge's grades as a (repeats × items) reliability matrix; judge
agreement uses each judge's first-repeat grades as a (judges × items) matrix. Missing grades are
NaN (α handles them). α is None when it is undefined (fewer than two raters, or a single grade
value across all items). Expected grades (``--grade-mode logprobs``, not whole numbers) get α at
the interval level on grades rounded to 0.01 (keys ``alpha_*_interval``): ``krippendorff`` builds
value × value matrices, and thousands of distinct floats would not fit in memory.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ragdiag.metrics.judge_reliability import ordinal_alpha

__all__ = ["agreement_summary", "ordinal_alpha"]


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


def _alpha(matrix: np.ndarray) -> tuple[str, float | None]:
    """("ordinal", α) for whole-number grades, ("interval", α) for expected grades."""
    present = matrix[~np.isnan(matrix)]
    if np.all(present == np.round(present)):
        return "ordinal", ordinal_alpha(matrix)
    return "interval", interval_alpha(matrix)


def agreement_summary(grades: np.ndarray, judges: list[str]) -> dict[str, Any]:
    """Mean and max per-item SD over repeats, α between repeats, α between judges (if several)."""
    first = grades[0]  # (repeats, items)
    counts = np.sum(~np.isnan(first), axis=0)
    result: dict[str, Any] = {"repeats": int(first.shape[0]), "judges": judges}
    if first.shape[0] > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sd = np.nanstd(first[:, counts > 1], axis=0, ddof=1)
        result["item_sd_mean"] = float(np.mean(sd)) if sd.size else None
        result["item_sd_max"] = float(np.max(sd)) if sd.size else None
        level, value = _alpha(first)
        result[f"alpha_repeats_{level}"] = value
    if len(judges) > 1:
        level, value = _alpha(grades[:, 0, :])
        result[f"alpha_judges_{level}"] = value
    return result
