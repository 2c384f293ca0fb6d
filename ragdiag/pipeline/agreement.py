"""Judge variance: per-item SD of repeated grades and Krippendorff's α (ordinal) via ``krippendorff``.

Repeat agreement uses the first judge's grades as a (repeats × items) reliability matrix; judge
agreement uses each judge's first-repeat grades as a (judges × items) matrix. Missing grades are
NaN (α handles them). α is None when it is undefined (fewer than two raters, or a single grade
value across all items).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ragdiag.metrics.judge_reliability import ordinal_alpha

__all__ = ["agreement_summary", "ordinal_alpha"]


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
        result["alpha_repeats_ordinal"] = ordinal_alpha(first)
    if len(judges) > 1:
        result["alpha_judges_ordinal"] = ordinal_alpha(grades[:, 0, :])
    return result
