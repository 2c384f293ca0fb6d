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
from typing import TypedDict

import numpy as np

from ragdiag.metrics.judge_reliability import (
    interval_alpha,
    ordinal_alpha,
    repeat_alpha,
)

__all__ = ["agreement_summary", "interval_alpha", "ordinal_alpha"]


def _alpha(matrix: np.ndarray) -> tuple[str, float | None]:
    """("ordinal", α) for whole-number grades, ("interval", α) for expected grades; ``matrix`` is raters × items."""
    return repeat_alpha(matrix.T)


class Agreement(TypedDict, total=False):
    """The summary's ``agreement`` block; α is ordinal for whole grades, interval for expected grades."""

    repeats: int
    judges: list[str]
    item_sd_mean: float | None
    item_sd_max: float | None
    alpha_repeats_ordinal: float | None
    alpha_repeats_interval: float | None
    alpha_judges_ordinal: float | None
    alpha_judges_interval: float | None


def agreement_summary(grades: np.ndarray, judges: list[str]) -> Agreement:
    """Mean and max per-item SD over repeats, α between repeats, α between judges (if several)."""
    first = grades[0]  # (repeats, items)
    counts = np.sum(~np.isnan(first), axis=0)
    result = Agreement(repeats=int(first.shape[0]), judges=judges)
    if first.shape[0] > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sd = np.nanstd(first[:, counts > 1], axis=0, ddof=1)
        result["item_sd_mean"] = float(np.mean(sd)) if sd.size else None
        result["item_sd_max"] = float(np.max(sd)) if sd.size else None
        level, value = _alpha(first)
        if level == "ordinal":
            result["alpha_repeats_ordinal"] = value
        else:
            result["alpha_repeats_interval"] = value
    if len(judges) > 1:
        level, value = _alpha(grades[:, 0, :])
        if level == "ordinal":
            result["alpha_judges_ordinal"] = value
        else:
            result["alpha_judges_interval"] = value
    return result
